/**
 * What the change-stream adapter specs (PostgreSQL's changes.spec.ts, MariaDB's binlog-changes.spec.ts)
 * share: a node running one stream named `orders-feed` to channel `changes`, a listener that takes the
 * messages (or refuses the next `refuse` of them), and the writes both engines must stream alike.
 */
import { expect } from 'chai';
import type { Message } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness } from './harness.js';
import { sleep, until } from '../../support/wait.js';

export class StreamHarness {
  node: HiveNode | undefined;
  logs: () => string = () => '';
  readonly received: Message[] = [];
  /** How many of the next messages the listener refuses. */
  refuse = 0;
  private name = 'orders-feed';

  constructor(private readonly params: () => Record<string, string | number | boolean>) {}

  /** Starts the node with the stream (the given parameters over the harness's) and listens; waits until it reads unless told not to. */
  async start(extra: Record<string, string | number | boolean> = {}, wait = true): Promise<void> {
    this.name = String(extra.NAME ?? 'orders-feed');
    const started = await startTestNode([
      {
        service: 'sql',
        NAME: this.name,
        SQL_CHANGES: true,
        OUTPUTCHANNEL: 'changes',
        SQL_POLLCLASS: 'cdc',
        ...this.params(),
        ...extra,
      },
    ]);
    this.node = started.node;
    this.logs = started.logs;
    await this.node.hive.listen('changes', (d) => {
      if (this.refuse > 0) {
        this.refuse--;
        throw new Error('not now');
      }
      this.received.push(d.message);
      d.ack();
    });
    if (wait) await until(() => this.status().connected === true, 20_000);
  }

  async stop(): Promise<void> {
    await this.node?.stop(5000);
    this.node = undefined;
  }

  reset(): void {
    this.received.length = 0;
    this.refuse = 0;
  }

  status(): Record<string, unknown> {
    return (this.node?.services.find((x) => x.name === this.name)?.running.status() ?? {}) as Record<string, unknown>;
  }

  /** operation:table:id of every message received. */
  ops(): string[] {
    return this.received.map((m) => `${m.Operation}:${m.Control.table?.[0]}:${m.Data.id?.[0]}`);
  }
}

/**
 * Two interleaved transactions (a: items 10 and orders 11; b: items 20 and 21), b committed first,
 * then one rolled back (items 30), a TRUNCATE of items and an insert after it (items 40). A stream
 * emits b's rows, a's rows, and items 40 — in that order.
 */
export async function writeInterleaved(db: EngineHarness): Promise<void> {
  const a = await db.direct.transaction();
  const b = await db.direct.transaction();
  await db.direct.query("INSERT INTO items VALUES (10, 'a1')", { transaction: a });
  await db.direct.query("INSERT INTO items VALUES (20, 'b1'), (21, 'b2')", { transaction: b });
  await db.direct.query('INSERT INTO orders (id) VALUES (11)', { transaction: a });
  await b.commit();
  await a.commit();
  const r = await db.direct.transaction();
  await db.direct.query("INSERT INTO items VALUES (30, 'gone')", { transaction: r });
  await r.rollback();
  await db.exec('TRUNCATE items');
  await db.exec("INSERT INTO items VALUES (40, 'after')");
}

/**
 * The hive refuses three hand-overs, then the node stops; rows written while it is down and an update
 * come after the next start, and nothing acknowledged before the stop comes again. `items` is the
 * table as the stream names it (public.items, hive.items).
 */
export async function refusedThenResumed(s: StreamHarness, db: EngineHarness, items: string): Promise<void> {
  await s.start();
  s.refuse = 3;
  await db.exec("INSERT INTO items VALUES (50, 'x'), (51, 'y')");
  await until(() => s.received.length >= 2, 20_000);
  expect(s.ops()).to.deep.equal([`insert:${items}:50`, `insert:${items}:51`]);
  expect(s.logs()).to.contain('reading holds at');
  await s.stop();
  // written while no node reads: the server's log keeps them
  await db.exec("INSERT INTO items VALUES (60, 'while down')");
  await db.exec("UPDATE items SET name = 'changed' WHERE id = 50");
  s.received.length = 0;
  await s.start();
  await until(() => s.received.some((m) => m.Operation === 'update'), 10_000);
  expect(s.ops()).to.deep.equal([`insert:${items}:60`, `update:${items}:50`]);
}

/** A node stopped while the hive refuses a change: the next start emits it. */
export async function stoppedWhileRefusing(s: StreamHarness, db: EngineHarness, items: string): Promise<void> {
  await s.start();
  s.refuse = 1_000_000;
  await db.exec("INSERT INTO items VALUES (70, 'refused')");
  await until(() => s.logs().includes('reading holds at'), 10_000);
  await s.stop();
  s.refuse = 0;
  await s.start();
  await until(() => s.received.length >= 1, 10_000);
  expect(s.ops()).to.deep.equal([`insert:${items}:70`]);
}

/** The database restarts under a reading stream: the change before and the one after both come; the log says reading resumed. */
export async function databaseRestarted(
  s: StreamHarness,
  db: EngineHarness,
  items: string,
  resumed: RegExp,
): Promise<void> {
  await s.start();
  await db.exec("INSERT INTO items VALUES (80, 'before restart')");
  await until(() => s.received.length >= 1, 10_000);
  await db.server!.stop();
  await db.server!.start();
  await db.exec("INSERT INTO items VALUES (81, 'after restart')");
  await until(() => s.received.length >= 2, 30_000);
  expect(s.ops()).to.deep.equal([`insert:${items}:80`, `insert:${items}:81`]);
  expect(s.logs()).to.match(resumed);
}

/**
 * SQL_CHANGESNAPSHOT on a new stream of `items` holding rows 1-3: they come first as `read`, in the
 * view of the stream's start — a row inserted and one updated while the snapshot is held back (the
 * hive refusing) come after it as changes, and the snapshot shows the old value. A restart takes no
 * second snapshot.
 */
export async function snapshotFirst(
  s: StreamHarness,
  db: EngineHarness,
  items: string,
  extra: Record<string, string | boolean> = {},
): Promise<void> {
  await db.exec('DELETE FROM items');
  await db.exec("INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')");
  const params = { NAME: 'snap-feed', SQL_TABLE: 'items', SQL_CHANGESNAPSHOT: true, ...extra };
  s.refuse = 1_000_000;
  await s.start(params, false);
  await until(() => s.logs().includes('reading holds at'), 20_000);
  await db.exec("INSERT INTO items VALUES (4, 'during')");
  await db.exec("UPDATE items SET name = 'changed' WHERE id = 2");
  s.refuse = 0;
  await until(() => s.received.length >= 5, 20_000);
  const ops = s.ops();
  expect(ops.slice(0, 3).sort()).to.deep.equal([`read:${items}:1`, `read:${items}:2`, `read:${items}:3`]);
  expect(ops.slice(3)).to.deep.equal([`insert:${items}:4`, `update:${items}:2`]);
  const two = s.received.find((m) => m.Operation === 'read' && m.Data.id?.[0] === '2')!;
  expect(two.Data.name).to.deep.equal(['two']);
  expect(two.Control.tx).to.deep.equal(['snapshot']);
  expect(two.Control['idempotency-key']![0]).to.match(
    new RegExp(`^sql-change:hivenode_snap_feed:snapshot:.+:${items.replace('.', '\\.')}:\\d$`),
  );
  expect(s.logs()).to.match(/snapshot of 3 rows of \S+ emitted/);
  await s.stop();
  s.reset();
  await s.start(params);
  await db.exec("INSERT INTO items VALUES (5, 'after')");
  await until(() => s.received.length >= 1, 10_000);
  await sleep(300);
  expect(s.ops()).to.deep.equal([`insert:${items}:5`]);
}
