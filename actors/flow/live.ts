/**
 * What a run is doing in this process (never stored: a restart begins each run afresh at its step),
 * and the tokens that tell a write's or a send's report from an earlier one's.
 */

export interface Live {
  /** Answers of `stored` and `step-done` from before this one are stale. */
  token: number;
  sending: boolean;
  queued: boolean;
  timer: NodeJS.Timeout | undefined;
  cancelRequested: boolean;
  /** A map or parallel under way: `fan-done` of an earlier one is stale; elements sending now; the next element to send. */
  fanToken: number;
  fanActive: number;
  fanNext: number;
  /** A new run's first write: its caller (execute) is answered with the key once it is durable. */
  onStored: ((ok: boolean, error?: unknown) => void) | undefined;
}

export function newLive(): Live {
  return {
    token: 0,
    sending: false,
    queued: false,
    timer: undefined,
    cancelRequested: false,
    onStored: undefined,
    fanToken: 0,
    fanActive: 0,
    fanNext: 0,
  };
}

/**
 * Tokens of writes and sends, unique in the process: a report from before an actor restart (an old
 * core's send answering late) never passes for one of the new core's.
 */
let lastToken = 0;

export function nextToken(): number {
  return ++lastToken;
}
