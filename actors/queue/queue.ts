/**
 * The queue service (README, The queue): a durable queue actor with delivery, retry-scheduler and
 * dead-letter siblings under the service supervisor, a SQLite store in PersistPath/<NAME>, and
 * template fan-out through the Go-template queue dialect.
 */
import { join } from 'node:path';
import { channelGate } from '../../config/allowed-channels.js';
import { templateBudget } from '../../config/common.js';
import { QUEUE_PARAMS } from '../../config/queue.js';
import type { QueueConfig } from './command-parser.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { RequestShape, RunningService, ServiceContext } from '../service/context.js';
import { COMMAND_ALIASES } from '../../protocol/commands.js';
import { defineService } from '../service/context.js';
import { serveActor } from '../service/serve.js';
import type { ActorRef, ParentRef } from '../../supervisors/runtime.js';
import type { HiveClient } from '../hive/client.js';
import { resolveTemplateSource } from '../hive/template-source.js';
import { spawnDeadLetter } from './dead-letter.js';
import { spawnDelivery } from './delivery.js';
import type { FanOut, QueueMsg, QueueStats } from './queue-actor.js';
import { spawnQueueActor } from './queue-actor.js';
import { spawnRetryScheduler } from './retry.js';
import type { QueueStore } from './store.js';
import { MemoryStore } from './memory-store.js';
import { SqliteStore, storeRecovery } from './sqlite-store.js';
import { FanOutTemplate } from './fan-out.js';
import { startRetentionSweeps } from './retention.js';
import { groupLimitsOf } from './groups.js';
import type { GroupLimits } from './groups.js';
import type { HeldEntries, HeldService } from './queue-holder.js';
import { holdShared } from './queue-holder.js';
import type { StateCounts } from './state-counts.js';
import { durationParamProblem } from './control-ranges.js';
import type { BreakerOptions, BreakerView } from './breaker.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { BreakerState, Breakers } from './breaker.js';
import { breakerOptionsOf } from './breaker-request.js';
import { defaultRequeueSchedule } from './requeue-schedule.js';
import { JournalEvent } from '../../supervisors/journal.js';
import type { BatchSettings } from './batches.js';
import { batchSettingsOf } from './batches.js';
import { batching } from './batch-delivery.js';

/** What the start-time checks compiled, which the start then uses. */
interface CheckedQueue {
  template: FanOutTemplate | undefined;
  groups: GroupLimits | undefined;
  breaker: Omit<BreakerOptions, 'changed'>;
  batches: BatchSettings | undefined;
}

/**
 * The queue's start-time checks: its durations, group limits, Breaker and retry schedule, and its
 * Template parsed when it is inline or a file (a hive:// template may live in a storage service that
 * starts later, so it is fetched on first use). `hivenode check` and a reload run it alone; the start
 * uses what it compiled.
 */
async function check(config: QueueConfig, name: string, hive?: HiveClient): Promise<CheckedQueue> {
  const tooLong = durationParamProblem(config);
  if (tooLong) throw new ConfigError(tooLong);
  const groups = groupLimitsOf(config);
  const breaker = breakerOptionsOf(config);
  const batches = batchSettingsOf(config);
  try {
    defaultRequeueSchedule(config.DefaultRequeueSchedule);
  } catch (e) {
    throw new ConfigError(describeError(e));
  }
  if (!config.Template || config.Template.startsWith('hive://'))
    return { template: undefined, groups, breaker, batches };
  try {
    return { template: await loadTemplate(config, name, hive), groups, breaker, batches };
  } catch (e) {
    throw new ConfigError(`Template: ${describeError(e)}`);
  }
}

async function loadTemplate(config: QueueConfig, name: string, hive?: HiveClient): Promise<FanOutTemplate> {
  const text = await resolveTemplateSource(config.Template, {
    ...(hive ? { hive } : {}),
    templateChannel: config.TemplateChannel,
  });
  return new FanOutTemplate(text, `queue ${name}`, templateBudget(config));
}

async function startQueue(ctx: ServiceContext<QueueConfig>): Promise<RunningService> {
  const config = ctx.config;
  const checked = await check(config, ctx.name, ctx.hive);
  let template = checked.template;
  const load = (): Promise<FanOutTemplate> => loadTemplate(config, ctx.name, ctx.hive);
  const fanOut: FanOut | undefined = config.Template
    ? async (request, define) => {
        template ??= await load();
        const { entries, output } = template.render(define, request);
        if (config.DEBUG_TEMPLATE) ctx.log.info(`template '${define}' printed: ${JSON.stringify(output)}`);
        return entries;
      }
    : undefined;

  const { groups, breaker, batches } = checked;
  if (config.Store === 'jetstream') {
    if (ctx.explicit.has('StoreRecovery'))
      ctx.log.warn('StoreRecovery is not used with Store jetstream: it is for the SQLite store in PersistPath');
    return holdShared(ctx, 'queue', (parent, store, held) =>
      runQueue(ctx, parent, store, { fanOut, groups, breaker, held, batches }),
    );
  }

  // opened after everything that can refuse the start by itself, so a refused start holds no store lock
  let store: QueueStore;
  if (config.PersistPath === '') {
    ctx.log.warn('PersistPath is empty: queue entries are kept in memory only and are lost when the process stops');
    // the memory store counts its evictions into the queue's figures, which exist once the queue runs
    const counts = { stats: undefined as QueueStats | undefined };
    store = new MemoryStore(config.Capacity, ctx.log, (state) => {
      if (counts.stats) counts.stats[state === 'dead' ? 'deadKept' : 'doneKept']--;
    });
    const running = await runQueue(ctx, ctx.supervisor, store, { fanOut, groups, breaker, batches });
    counts.stats = running.stats;
    return running.service;
  }
  store = await SqliteStore.open(
    join(config.PersistPath, ctx.name),
    ctx.log,
    config.MaxStoreBytes,
    storeRecovery(ctx, config.StoreRecovery, 'queue'),
  );
  return (await runQueue(ctx, ctx.supervisor, store, { fanOut, groups, breaker, batches })).service;
}

/** A queue started on a store: its service, the keys it is delivering (queue-holder.ts) and its live figures. */
interface RunningQueue extends HeldService {
  stats: QueueStats;
  inFlight: Set<string>;
}

/** What a queue runs with beside its store. */
interface QueueExtras {
  fanOut: FanOut | undefined;
  groups: GroupLimits | undefined;
  /** The Breaker parameters, read at start (breaker-commands.ts). */
  breaker: Omit<BreakerOptions, 'changed'>;
  /** Store jetstream: entries the previous holder was delivering, held back until the given time (queue-holder.ts). */
  held?: HeldEntries | undefined;
  batches: BatchSettings | undefined;
}

/**
 * Spawns the queue's actors under `parent` on an open store, serves its channel, and gives the
 * running service with its live figures; draining stops serving and closes the store.
 */
async function runQueue(
  ctx: ServiceContext<QueueConfig>,
  parent: ParentRef,
  store: QueueStore,
  extras: QueueExtras,
): Promise<RunningQueue> {
  const config = ctx.config;
  const stats: QueueStats = {
    size: 0,
    paused: config.StartPaused,
    added: 0,
    delivered: 0,
    retried: 0,
    deadLettered: 0,
    died: 0,
    dropped: 0,
    deliveringNow: 0,
    deadKept: 0,
    doneKept: 0,
    idempotencyKeys: 0,
    replaceable: 0,
    batches: 0,
    batchedEntries: 0,
    batchGathering: 0,
  };
  const inFlight = new Set<string>();
  // the siblings and the queue actor refer to each other: the queue ref is read only after spawning
  const queueRef = (): ActorRef<QueueMsg> => queue;
  const delivery = spawnDelivery(ctx.runtime, parent, ctx.hive, {
    timeoutMs: config.CallTimeout,
    queue: queueRef,
    service: ctx.name,
  });
  const retry = spawnRetryScheduler(ctx.runtime, parent, queueRef);
  const deadLetter = spawnDeadLetter(ctx.runtime, parent, ctx.hive, {
    timeoutMs: config.CallTimeout,
    retries: config.DeadLetterRetries,
    log: ctx.log,
    queue: queueRef,
  });
  let counts: (() => StateCounts) | undefined;
  // every change of a breaker is one log line and one journal event (console /journal?event=breaker)
  const breakers = new Breakers({
    ...extras.breaker,
    changed: (channel, state, line) => {
      const text = `breaker of channel '${channel}' ${line}`;
      if (state === BreakerState.Open) ctx.log.warn(text);
      else ctx.log.info(text);
      ctx.journal.record({ event: JournalEvent.Breaker, path: `/node/${ctx.name}`, action: text });
    },
    disabled: (view) => sendAlert(ctx, view),
  });
  const queue = spawnQueueActor(
    ctx.runtime,
    parent,
    {
      config,
      gate: channelGate(config.AllowedChannels, [config.DefaultChannel, config.DefaultDeadLetterSlap]),
      store,
      log: ctx.log,
      delivery: () => delivery,
      retry: () => retry,
      deadLetter: () => deadLetter,
      fanOut: extras.fanOut,
      stats,
      groups: extras.groups,
      inFlight,
      held: extras.held,
      breakers,
      batches: extras.batches,
      batching: extras.batches && batching,
    },
    (read) => (counts = read),
  );
  const stopSweeps = startRetentionSweeps(ctx.runtime, queue, [
    config.DeadRetention,
    config.DoneRetention,
    config.DedupWindow,
  ]);
  /** Lets the store load and the deliveries in flight finish (within the deadline), then closes the store. */
  const stop = async (deadlineMs: number): Promise<void> => {
    const until = Date.now() + deadlineMs;
    stopSweeps();
    breakers.stop();
    // a start that fails right after ours stops us at once: let the store load finish before
    // closing it, so the queue actor never reads a closed store
    await ctx.runtime
      .ask<QueueMsg, void>(queue, (reply) => ({ type: 'flush', reply }), Math.max(1, deadlineMs))
      .catch(() => undefined);
    while (stats.deliveringNow > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await store.close();
  };
  // `states`: the entries per state (waiting, scheduled, retrying, dead, done), counted when read
  const service = await serveActor(ctx, queue, {
    close: stop,
    status: () => ({
      ...stats,
      status: stats.paused ? 'paused' : 'running',
      durable: store.durable,
      ...(counts ? { states: counts() } : {}),
      ...breakers.figures(),
    }),
  });
  ctx.log.info(
    `queue listening on channel '${ctx.inputChannel}', delivering to '${config.DefaultChannel}' by default${store.where ? `, store ${store.where}` : ''}`,
  );
  return { service, stats, inFlight };
}

/**
 * The one message about a channel DisableAfter disabled, to AlertChannel (any service), acknowledged
 * (execute); a refusal is logged, not retried: the WARN line and the journal event stand anyway.
 */
function sendAlert(ctx: ServiceContext<QueueConfig>, view: BreakerView): void {
  const to = ctx.config.AlertChannel;
  if (to === '') return;
  const data = mapOf({
    queue: [ctx.name],
    channel: [view.channel],
    reason: [view.reason],
    held: [String(view.held)],
    failing_since: [view.failingSince],
    disabled: [view.opened],
  });
  const message = makeMessage({ Class: 'queue', Operation: 'alert', Data: data });
  void ctx.hive.execute(to, message, ctx.config.CallTimeout).then((r) => {
    if (r.Code >= 300)
      ctx.log.error(
        `AlertChannel '${to}' refused the alert that channel '${view.channel}' was disabled: ${r.Code} ${r.Message}`,
      );
  });
}

/** The controls a request to a queue may carry (README, The queue), for a front door's description of its routes. */
const QUEUE_CONTROLS: RequestShape['controls'] = [
  {
    name: 'command',
    description: 'what to do: add an entry (the DefaultCommand), or another command',
    values: Object.keys(COMMAND_ALIASES),
  },
  {
    name: 'channel',
    description: 'the channel the entry is delivered to (else DefaultChannel; within AllowedChannels)',
  },
  { name: 'mode', description: 'delivery: call (a 2xx Code) or execute (acknowledged)', values: ['call', 'execute'] },
  { name: 'requeue_timer', description: 'seconds between delivery attempts' },
  { name: 'requeue_count', description: 'delivery attempts before the entry is dead' },
  {
    name: 'requeue_schedule',
    description: 'the waits before each next attempt (5s,5m,30m,…); past the last the entry is dead',
  },
  { name: 'deadletter_slap', description: 'the channel a dead entry is sent to' },
  { name: 'delay', description: 'a duration to wait before the first delivery' },
  { name: 'idempotency-key', description: 'an add with a key seen within DedupWindow adds nothing' },
  { name: 'template_define', description: 'the template definition that fans the request out' },
  { name: 'schedule_name', description: 'the schedule a schedule command names' },
  { name: 'cron', description: "a schedule's cron expression" },
  { name: 'state', description: 'list, delete or replay: the entries of this state' },
  { name: 'breaker', description: "the breaker command: open, close or status of a channel's circuit breaker" },
];

async function start(ctx: ServiceContext<QueueConfig>): Promise<RunningService> {
  const running = await startQueue(ctx);
  running.describe = () => ({ fields: [], controls: QUEUE_CONTROLS });
  return running;
}

export const queueService = defineService(
  SERVICES.queue,
  compilerFor('queue', QUEUE_PARAMS),
  start,
  async (config, name) => void (await check(config, name)),
);
