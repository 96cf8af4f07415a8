/** True for a promise or any other thenable (an actor handler's or an interceptor function's result). */
export function isThenable<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
