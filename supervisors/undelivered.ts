/**
 * Messages may carry a function under this symbol; it is called with the error when the actor
 * crashes while handling the message, or when the message cannot be delivered (the actor stopped),
 * so a caller waiting for an answer learns at once instead of at its timeout. `ask` sets it.
 */
export const onUndelivered: unique symbol = Symbol('hivenode.onUndelivered');
