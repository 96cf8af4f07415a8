/**
 * The SQL pollers of one NAME on a NATS hive share their work: one active poller,
 * elected with a lease (actors/hive/lease.ts), and one high-water mark (shared-mark.ts), both in the
 * JetStream KV bucket hivenode_pollers. On the embedded hive (one process) nothing is shared.
 */
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { SharedBucket } from '../hive/transport.js';
import { sharedNameWord } from '../hive/transport.js';
import type { ServiceContext } from '../service/context.js';
import type { SqlConfig } from './planner.js';
import type { PollPlans } from './poll-plans.js';
import type { LeaseRole } from '../hive/lease.js';
import { Lease } from '../hive/lease.js';
import { SharedMark } from './shared-mark.js';

/** The bucket the pollers (and change-stream readers) of a NATS hive share: their leases and positions. */
const POLLERS_BUCKET = 'hivenode_pollers';

/**
 * On a NATS hive with SQL_POLLLEASE above 0: the lease the instances of this NAME contend for (the
 * pollers; a change stream's readers, README, Change streams), in the shared bucket. Undefined on the
 * embedded hive (one process: nothing to elect) and with SQL_POLLLEASE 0.
 */
export async function sharedLease(
  ctx: ServiceContext<SqlConfig>,
  role: LeaseRole,
): Promise<{ lease: Lease; bucket: SharedBucket; name: string } | undefined> {
  const c = ctx.config;
  if (c.SQL_POLLLEASE === 0) return undefined;
  const opening = ctx.hive.sharedBucket(POLLERS_BUCKET);
  if (!opening) return undefined;
  const every = role.name === 'poller' ? 'poll on every node' : 'read on every node';
  if (c.SQL_POLLLEASE < 1_000)
    throw new ConfigError(`SQL_POLLLEASE is ${c.SQL_POLLLEASE} ms; give at least 1s (or 0 to ${every})`);
  let bucket: SharedBucket;
  try {
    bucket = await opening;
  } catch (e) {
    throw new ConfigError(
      `SQL_POLLLEASE: the ${role.name}s of one NAME elect one active ${role.name} in the JetStream KV bucket '${POLLERS_BUCKET}', which the NATS hive refused (${describeError(e)}); enable JetStream in the nats-server configuration, or set SQL_POLLLEASE=0 to ${every}`,
    );
  }
  const name = sharedNameWord(ctx.name);
  const lease = new Lease(bucket, `lease.${name}`, c.SQL_POLLLEASE, ctx.log, role);
  await lease.start();
  ctx.log.info(
    `${role.name} lease: ${lease.holds() ? 'active' : 'standing by'} among the ${role.name}s named '${ctx.name}' on the hive (lease ${c.SQL_POLLLEASE} ms, bucket ${POLLERS_BUCKET})`,
  );
  return { lease, bucket, name };
}

/**
 * On a NATS hive with SQL_POLLLEASE above 0: the lease this poller contends for and, with
 * SQL_TRACKCOLUMN, the mark shared with the other pollers of its NAME. Undefined on the embedded
 * hive (one process: nothing to elect) and with SQL_POLLLEASE 0.
 */
export async function sharedPolling(
  ctx: ServiceContext<SqlConfig>,
  plans: PollPlans,
): Promise<{ lease: Lease; mark?: SharedMark } | undefined> {
  const shared = await sharedLease(ctx, { name: 'poller' });
  if (!shared) return undefined;
  const { lease, bucket, name } = shared;
  if (!plans.tracking) return { lease };
  return {
    lease,
    mark: new SharedMark(bucket, `mark.${name}`, plans.tracking.column, plans.tracking.state.current(), ctx.log),
  };
}
