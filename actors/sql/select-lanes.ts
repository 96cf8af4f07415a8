/**
 * The statement path's SELECTs (driver-direct.ts) on a few connections held from Sequelize's pool —
 * "lanes" — each taking the next SELECT before the answer to the last has come, instead of one
 * acquire and release of the pool a SELECT. The driver decides what "before" means: node-postgres
 * writes them at once (pipelining, pg-pipeline.ts); mysql2 keeps them in the connection's queue and
 * writes the next as soon as the answer to the last is read, with no trip through the pool.
 *
 * A lane is taken from the pool only when every lane held has `depth` SELECTs in flight or is
 * stalled, and goes back to the pool as soon as nothing is in flight on it; transactions and every
 * other statement keep a connection to themselves, as before. A stalled lane (no answer for
 * STALL_MS: a slow SELECT at its head) takes no more, so only the SELECTs given it in those first
 * milliseconds wait for the slow one; the next take a connection from the pool — which, when every
 * connection it may lend is held, waits for one as any statement does (503 after SQL_ACQUIRETIMEOUT).
 */

export type LaneDone = (e: Error | null, result?: unknown) => void;

interface LanePool {
  getConnection(options: { type: string }): Promise<unknown>;
  releaseConnection(connection: unknown): void;
}

/** What a driver does with a lane's connection. */
export interface LaneDriver<C> {
  /** SELECTs in flight on a lane before a further connection is taken. */
  depth: number;
  /** The connection was taken from the pool for SELECTs. */
  taken(client: C): void;
  /** The connection goes back to the pool. */
  givenBack(client: C): void;
  /** Runs one SELECT on the connection; `done` exactly once. */
  run(client: C, text: string, values: unknown[], done: LaneDone): void;
}

/** A lane whose head SELECT has been running this long takes no more (it may be a slow one). */
const STALL_MS = 20;

interface Waiting {
  text: string;
  values: unknown[];
  done: LaneDone;
}

class Lane<C> {
  client: C | undefined;
  inFlight = 0;
  /** When the lane last made progress (a SELECT answered, or the first one sent). */
  since = 0;
  /** SELECTs given while the connection is being taken from the pool. */
  waiting: Waiting[] = [];
  release: NodeJS.Immediate | undefined;
}

export class SelectLanes<C> {
  private readonly lanes: Array<Lane<C>> = [];

  constructor(
    private readonly pool: LanePool,
    private readonly maxLanes: number,
    private readonly driver: LaneDriver<C>,
  ) {}

  select(text: string, values: unknown[], done: LaneDone): void {
    const lane = this.laneFor();
    lane.inFlight++;
    if (lane.client !== undefined) this.send(lane, text, values, done);
    else lane.waiting.push({ text, values, done });
  }

  /** Gives back the connections held with nothing in flight (the database is closing). */
  forget(): void {
    for (const lane of [...this.lanes]) if (lane.inFlight === 0) this.giveBack(lane);
  }

  /** The least busy lane that is not stalled while under depth (deeper when the pool lends no more), else one more from the pool. */
  private laneFor(): Lane<C> {
    const now = performance.now();
    let best: Lane<C> | undefined;
    for (const lane of this.lanes) {
      if (lane.client !== undefined && lane.inFlight > 0 && now - lane.since > STALL_MS) continue;
      if (best === undefined || lane.inFlight < best.inFlight) best = lane;
    }
    if (best && (best.inFlight < this.driver.depth || this.lanes.length >= this.maxLanes)) return this.keep(best);
    return this.open();
  }

  private keep(lane: Lane<C>): Lane<C> {
    if (lane.release) {
      clearImmediate(lane.release);
      lane.release = undefined;
    }
    return lane;
  }

  private open(): Lane<C> {
    const lane = new Lane<C>();
    this.lanes.push(lane);
    (this.pool.getConnection({ type: 'SELECT' }) as Promise<C>).then(
      (client) => {
        this.driver.taken(client);
        lane.client = client;
        const waiting = lane.waiting;
        lane.waiting = [];
        for (const w of waiting) this.send(lane, w.text, w.values, w.done);
        if (lane.inFlight === 0) this.idle(lane);
      },
      (e: unknown) => {
        this.drop(lane);
        const waiting = lane.waiting;
        lane.waiting = [];
        for (const w of waiting) w.done(e as Error);
      },
    );
    return lane;
  }

  private send(lane: Lane<C>, text: string, values: unknown[], done: LaneDone): void {
    if (lane.inFlight === 1) lane.since = performance.now();
    this.driver.run(lane.client!, text, values, (e, result) => {
      lane.since = performance.now();
      if (--lane.inFlight === 0) this.idle(lane);
      done(e, result);
    });
  }

  /** Nothing in flight: the connection goes back once this turn's SELECTs have had their chance to follow. */
  private idle(lane: Lane<C>): void {
    lane.release ??= setImmediate(() => {
      lane.release = undefined;
      if (lane.inFlight === 0) this.giveBack(lane);
    });
  }

  private giveBack(lane: Lane<C>): void {
    if (lane.release) clearImmediate(lane.release);
    lane.release = undefined;
    this.drop(lane);
    const client = lane.client;
    if (client === undefined) return;
    this.driver.givenBack(client);
    this.pool.releaseConnection(client);
  }

  private drop(lane: Lane<C>): void {
    const i = this.lanes.indexOf(lane);
    if (i >= 0) this.lanes.splice(i, 1);
  }
}
