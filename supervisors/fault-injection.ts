/**
 * Fault injection for the reliability battery: a hive message carrying the control
 * `fault_inject: ['throw']` makes the service actor that receives it crash, so supervision (crash,
 * journal line, restart, the caller answered 500) can be exercised on purpose on every service —
 * sql, queue, exec, httpclient, syslog, echo — through the one place every hive delivery reaches an
 * actor (the runtime's receive).
 *
 * It is OFF unless the process was started with HIVENODE_FAULT_INJECTION=1: a production node must
 * never let a client crash its actors. When on, it says so loudly on stderr, once per process.
 */

import { HiveError } from '../protocol/errors.js';

/** The environment variable that enables the hook; read when an actor is spawned. */
export const FAULT_INJECTION_ENV = 'HIVENODE_FAULT_INJECTION';
/** The control naming the fault to inject. */
export const FAULT_CONTROL = 'fault_inject';

/** Faults the hook can inject. */
export const Fault = {
  /** The handler throws synchronously. */
  Throw: 'throw',
  /** The handler returns a rejected promise (the asynchronous crash path). */
  Reject: 'reject',
} as const;
export type Fault = (typeof Fault)[keyof typeof Fault];

/** The crash the hook causes; its name makes injected crashes easy to tell apart in the journal. */
class InjectedFaultError extends HiveError {
  override readonly name = 'InjectedFaultError';
}

/** The receive function of an actor spec (structural, so this file needs nothing of the runtime). */
type Receive<S, M, C> = (state: S, msg: M, ctx: C) => S | Promise<S>;

let announced = false;

/** True when the process environment enables fault injection. */
function faultInjectionEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[FAULT_INJECTION_ENV] === '1';
}

/** The fault a hive delivery asks for, if any (only `{type: 'delivery'}` messages carry controls). */
function requestedFault(msg: unknown): Fault | undefined {
  if (typeof msg !== 'object' || msg === null || (msg as { type?: unknown }).type !== 'delivery') return undefined;
  const control = (msg as { delivery?: { message?: { Control?: Record<string, readonly string[] | undefined> } } })
    .delivery?.message?.Control;
  const wanted = control?.[FAULT_CONTROL]?.[0];
  return wanted === Fault.Throw || wanted === Fault.Reject ? wanted : undefined;
}

/**
 * Wraps an actor's receive so that deliveries asking for a fault crash it; returns `receive` itself
 * when fault injection is off, so a normal node pays nothing and cannot be crashed by a control.
 */
export function withFaultInjection<S, M, C>(
  receive: Receive<S, M, C>,
  env: NodeJS.ProcessEnv = process.env,
): Receive<S, M, C> {
  if (!faultInjectionEnabled(env)) return receive;
  if (!announced) {
    announced = true;
    // stderr on purpose: this must be seen whatever LOGLEVEL or log destination the node uses
    console.error(
      `*** ${FAULT_INJECTION_ENV}=1: FAULT INJECTION IS ON — a message with the control '${FAULT_CONTROL}' crashes the service actor receiving it. Never run a production node like this. ***`,
    );
  }
  return (state, msg, ctx) => {
    const fault = requestedFault(msg);
    if (fault === Fault.Throw) throw new InjectedFaultError(`fault injected by the '${FAULT_CONTROL}' control (throw)`);
    if (fault === Fault.Reject)
      return Promise.reject(new InjectedFaultError(`fault injected by the '${FAULT_CONTROL}' control (reject)`));
    return receive(state, msg, ctx);
  };
}
