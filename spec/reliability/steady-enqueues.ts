/**
 * Enqueues at a steady pace whatever happens to the hive (an open loop: one every `everyMs`, not waiting
 * for answers), each entry sent with its own idempotency key and sent again — to whichever gateway
 * `via` names then — until it is answered 200: after a 503 once its Retry-After has passed, after a
 * 504 or a lost connection at once (the key makes a second add of an entry that was stored a no-op).
 * Every answer's status is counted; a 404 is the one that says "nobody serves this", which a queue
 * changing hands must never answer.
 */
import { Agent, request } from 'undici';
import { sleep } from '../support/wait.js';

export interface SteadyEnqueues {
  /** Items answered 200, in the order acknowledged. */
  readonly acknowledged: string[];
  /** Items still not acknowledged when their deadline passed. */
  readonly failed: string[];
  /** Answers by status (0: no answer, the connection failed or timed out). */
  readonly statuses: Map<number, number>;
  /** When each acknowledged item was first sent and when it was acknowledged (ms since the epoch). */
  readonly served: Array<{ sent: number; answered: number }>;
  /** Stops sending new items and waits for those under way (once; a second call waits for the first). */
  stop(): Promise<void>;
}

/** Starts enqueuing items `<prefix>-1`, `<prefix>-2`… through the gateway URL `via()` names at each try. */
export function steadyEnqueues(opts: {
  prefix: string;
  everyMs: number;
  via: () => string;
  giveUpMs?: number;
}): SteadyEnqueues {
  const agent = new Agent({
    connections: 256,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
    connect: { timeout: 5_000 },
  });
  const acknowledged: string[] = [];
  const failed: string[] = [];
  const statuses = new Map<number, number>();
  const served: Array<{ sent: number; answered: number }> = [];
  const giveUp = opts.giveUpMs ?? 180_000;
  const one = async (item: string): Promise<void> => {
    const began = Date.now();
    while (Date.now() - began < giveUp) {
      let status = 0;
      let retryAfter = 0;
      try {
        const res = await request(opts.via(), {
          method: 'POST',
          headers: { 'idempotency-key': item },
          body: JSON.stringify({ item: [item] }),
          dispatcher: agent,
        });
        await res.body.dump();
        status = res.statusCode;
        retryAfter = Number(res.headers['retry-after'] ?? 0);
      } catch {
        status = 0;
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) {
        acknowledged.push(item);
        served.push({ sent: began, answered: Date.now() });
        return;
      }
      await sleep(status === 503 ? 1000 * (retryAfter || 1) : 200);
    }
    failed.push(item);
  };
  let running = true;
  let stopping: Promise<void> | undefined;
  const underWay: Promise<void>[] = [];
  const pacing = (async () => {
    for (let k = 1; running; k++) {
      underWay.push(one(`${opts.prefix}-${k}`));
      await sleep(opts.everyMs);
    }
  })();
  return {
    acknowledged,
    failed,
    statuses,
    served,
    stop() {
      running = false;
      stopping ??= (async () => {
        await pacing;
        await Promise.all(underWay);
        await agent.close();
      })();
      return stopping;
    },
  };
}

/** From `at` until the first acknowledgement of an item sent after it: how long nobody served the queue. */
export function unservedFor(served: SteadyEnqueues['served'], at: number): number {
  return Math.min(...served.filter((x) => x.sent > at).map((x) => x.answered)) - at;
}
