/** The flow actor's messages (docs/ARCHITECTURE.md, Conventions: one union per actor). */
import type { Result } from '../../protocol/message.js';
import type { DeliveryMsg } from '../service/context.js';

/** What a run does once its write is durable: its next step, its callers' answers, or wait for its timer. */
/** One element of a fan ended: which, its Result, its attempts, when it was sent and how long it took. */
export interface FanElementEnded {
  index: number;
  result: Result;
  attempts: number;
  at: number;
  ms: number;
}

export type AfterStore = 'advance' | 'ended' | 'none';

export type FlowMsg =
  /** A message on the input channel: a start or a command. */
  | DeliveryMsg
  /** A run's write committed (`token` tells it from a later write of the same run). */
  | { type: 'stored'; key: string; token: number; then: AfterStore }
  | { type: 'store-failed'; key: string; token: number; then: AfterStore; error: unknown }
  /** One attempt of a step ended with `result`. */
  | { type: 'step-done'; key: string; token: number; result: Result; at: number; ms: number }
  /** One element of a map (or branch of a parallel) ended, after `attempts` attempts. */
  | ({ type: 'fan-done'; key: string; token: number } & FanElementEnded)
  /** A waiting run's time came (a wait step, a retry's pause). */
  | { type: 'due'; key: string }
  /** Runs parked in the store come near their time: the horizon moves on (parked-runs.ts). */
  | { type: 'page-in' }
  /** RunRetention and DedupWindow. */
  | { type: 'sweep' }
  /** Answered once the store is loaded and every message before it handled (a drain waits for it). */
  | { type: 'flush'; reply: () => void };
