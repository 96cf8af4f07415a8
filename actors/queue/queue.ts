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
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { serveActor } from '../service/serve.js';
import type { ActorRef, ParentRef } from '../../supervisors/runtime.js';
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
import type { HeldEntries, RunningQueue } from './queue-holder.js';
import { holdSharedQueue } from './queue-holder.js';
import type { StateCounts } from './state-counts.js';
import { durationParamProblem } from './control-ranges.js';

async function start(ctx: ServiceContext<QueueConfig>): Promise<RunningService> {
  const config = ctx.config;
  const tooLong = durationParamProblem(config);
  if (tooLong) throw new ConfigError(tooLong);
  // file:// and inline templates are parsed now, so a broken template stops the start; a hive://
  // template may live in a storage service that starts later, so it is fetched on first use
  let template: FanOutTemplate | undefined;
  const load = async (): Promise<FanOutTemplate> => {
    const text = await resolveTemplateSource(config.Template, { hive: ctx.hive, templateChannel: config.TemplateChannel });
    return new FanOutTemplate(text, `queue ${ctx.name}`, templateBudget(config));
  };
  if (config.Template && !config.Template.startsWith('hive://')) {
    try {
      template = await load();
    } catch (e) {
      throw new ConfigError(`Template: ${describeError(e)}`);
    }
  }
  const fanOut: FanOut | undefined = config.Template
    ? async (request, define) => {
        template ??= await load();
        const { entries, output } = template.render(define, request);
        if (config.DEBUG_TEMPLATE) ctx.log.info(`template '${define}' printed: ${JSON.stringify(output)}`);
        return entries;
      }
    : undefined;

  const groups = groupLimitsOf(config);
  if (config.Store === 'jetstream') {
    if (ctx.explicit.has('StoreRecovery')) ctx.log.warn('StoreRecovery is not used with Store jetstream: it is for the SQLite store in PersistPath');
    return holdSharedQueue(ctx, (parent, store, held) => runQueue(ctx, parent, store, { fanOut, groups, held }));
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
    const running = await runQueue(ctx, ctx.supervisor, store, { fanOut, groups });
    counts.stats = running.stats;
    return running.service;
  }
  store = await SqliteStore.open(join(config.PersistPath, ctx.name), ctx.log, config.MaxStoreBytes, storeRecovery(ctx, config.StoreRecovery, 'queue'));
  return (await runQueue(ctx, ctx.supervisor, store, { fanOut, groups })).service;
}

/** What a queue runs with beside its store. */
interface QueueExtras {
  fanOut: FanOut | undefined;
  groups: GroupLimits | undefined;
  /** Store jetstream: entries the previous holder was delivering, held back until the given time (queue-holder.ts). */
  held?: HeldEntries | undefined;
}

/**
 * Spawns the queue's actors under `parent` on an open store, serves its channel, and gives the
 * running service with its live figures; draining stops serving and closes the store.
 */
async function runQueue(ctx: ServiceContext<QueueConfig>, parent: ParentRef, store: QueueStore, extras: QueueExtras): Promise<RunningQueue> {
  const config = ctx.config;
  const stats: QueueStats = { size: 0, paused: config.StartPaused, added: 0, delivered: 0, retried: 0, deadLettered: 0, died: 0, dropped: 0, deliveringNow: 0, deadKept: 0, doneKept: 0, idempotencyKeys: 0, replaceable: 0 };
  const inFlight = new Set<string>();
  // the siblings and the queue actor refer to each other: the queue ref is read only after spawning
  const queueRef = (): ActorRef<QueueMsg> => queue;
  const delivery = spawnDelivery(ctx.runtime, parent, ctx.hive, config.CallTimeout, queueRef, ctx.name);
  const retry = spawnRetryScheduler(ctx.runtime, parent, queueRef);
  const deadLetter = spawnDeadLetter(ctx.runtime, parent, ctx.hive, { timeoutMs: config.CallTimeout, retries: config.DeadLetterRetries }, ctx.log, queueRef);
  let counts: (() => StateCounts) | undefined;
  const queue = spawnQueueActor(ctx.runtime, parent, { config, gate: channelGate(config.AllowedChannels, [config.DefaultChannel, config.DefaultDeadLetterSlap]), store, log: ctx.log, delivery: () => delivery, retry: () => retry, deadLetter: () => deadLetter, fanOut: extras.fanOut, stats, groups: extras.groups, inFlight, held: extras.held }, (read) => (counts = read));
  const stopSweeps = startRetentionSweeps(ctx.runtime, queue, [config.DeadRetention, config.DoneRetention, config.DedupWindow]);
  /** Lets the store load and the deliveries in flight finish (within the deadline), then closes the store. */
  const stop = async (deadlineMs: number): Promise<void> => {
    const until = Date.now() + deadlineMs;
    stopSweeps();
    // a start that fails right after ours stops us at once: let the store load finish before
    // closing it, so the queue actor never reads a closed store
    await ctx.runtime.ask<QueueMsg, void>(queue, (reply) => ({ type: 'flush', reply }), Math.max(1, deadlineMs)).catch(() => undefined);
    while (stats.deliveringNow > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await store.close();
  };
  // `states`: the entries per state (waiting, scheduled, retrying, dead, done), counted when read
  const service = await serveActor(ctx, queue, { close: stop, status: () => ({ ...stats, status: stats.paused ? 'paused' : 'running', durable: store.durable, ...(counts ? { states: counts() } : {}) }) });
  ctx.log.info(`queue listening on channel '${ctx.inputChannel}', delivering to '${config.DefaultChannel}' by default${store.where ? `, store ${store.where}` : ''}`);
  return { service, stats, inFlight };
}

export const queueService = defineService(SERVICES.queue, compilerFor('queue', QUEUE_PARAMS), start);
