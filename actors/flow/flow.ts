/**
 * The flow service (README, Flows): a message on its input channel starts a durable run of the
 * Definition's steps; the runs live in a queue store (SQLite in PersistPath/<NAME>, or with Store
 * jetstream the queue's JetStream store, held by one node of the NAME as a queue is), and the queue's
 * commands operate on them. The definition is read and checked at start: an invalid one stops the
 * node with one line naming the step.
 */
import { join } from 'node:path';
import { templateBudget } from '../../config/common.js';
import { FLOW_PARAMS } from '../../config/flow.js';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { channelGate } from '../../config/allowed-channels.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { resolveTemplateSource } from '../hive/template-source.js';
import type { HiveClient } from '../hive/client.js';
import { MemoryStore } from '../queue/memory-store.js';
import { SqliteStore, storeRecovery } from '../queue/sqlite-store.js';
import type { QueueStore } from '../queue/store.js';
import type { HeldEntries, HeldService } from '../queue/queue-holder.js';
import { holdShared } from '../queue/queue-holder.js';
import type { ChannelGate } from '../../config/allowed-channels.js';
import type { ParentRef } from '../../supervisors/runtime.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { serveActor } from '../service/serve.js';
import type { FlowDefinition } from './definition.js';
import type { FlowCore, FlowStats } from './flow-core.js';
import { stateCounts } from './flow-commands.js';
import { spawnFlowActor } from './flow-actor.js';
import type { FlowMsg } from './flow-messages.js';
import { literalSends, parseDefinition } from './graph.js';
import { publishFlowSends } from './sends.js';

type FlowConfig = ConfigOf<typeof FLOW_PARAMS>;

/**
 * The flow's start-time checks: its Definition read and checked (a hive:// one is
 * fetched at start). `hivenode check` and a reload run it alone; the start uses the definition it read.
 */
async function check(config: FlowConfig, hive?: HiveClient): Promise<FlowDefinition | undefined> {
  if (!hive && config.Definition.startsWith('hive://')) return undefined;
  try {
    const text = await resolveTemplateSource(config.Definition, {
      ...(hive ? { hive } : {}),
      templateChannel: config.TemplateChannel,
    });
    return parseDefinition(text, templateBudget(config));
  } catch (e) {
    throw new ConfigError(`Definition: ${describeError(e)}`);
  }
}

async function start(ctx: ServiceContext<FlowConfig>): Promise<RunningService> {
  const config = ctx.config;
  const def = (await check(config, ctx.hive))!;
  // AllowedChannels' default: the definition's literal channels plus INPUTCHANNEL and OUTPUTCHANNEL
  const gate = channelGate(config.AllowedChannels, [...def.literalChannels, ctx.inputChannel, config.OUTPUTCHANNEL]);
  publishFlowSends(config.Definition, literalSends(def));
  const flow: FlowSetup = { def, gate };

  // runs live where queue entries live: on JetStream, one node of the NAME holds the flow (queue-holder.ts)
  if (config.Store === 'jetstream') {
    if (ctx.explicit.has('StoreRecovery'))
      ctx.log.warn('StoreRecovery is not used with Store jetstream: it is for the SQLite store in PersistPath');
    return holdShared(ctx, 'flow', (parent, store, held) => runFlow(ctx, parent, store, { ...flow, held }));
  }
  // opened after everything that can refuse the start by itself, so a refused start holds no store lock
  let store: QueueStore;
  if (config.PersistPath === '') {
    ctx.log.warn('PersistPath is empty: flow runs are kept in memory only and are lost when the process stops');
    store = new MemoryStore();
  } else
    store = await SqliteStore.open(
      join(config.PersistPath, ctx.name),
      ctx.log,
      0,
      storeRecovery(ctx, config.StoreRecovery, 'flow'),
    );
  return (await runFlow(ctx, ctx.supervisor, store, flow)).service;
}

/** What a flow runs with beside its store: its checked definition and channel gate, and on JetStream the runs held back. */
interface FlowSetup {
  def: FlowDefinition;
  gate: ChannelGate;
  held?: HeldEntries | undefined;
}

/**
 * Spawns the flow actor under `parent` on an open store and serves the flow's channel; draining
 * lets the steps under way end and closes the store. The keys of the runs sending are the holder's
 * report on JetStream.
 */
async function runFlow(
  ctx: ServiceContext<FlowConfig>,
  parent: ParentRef,
  store: QueueStore,
  { def, gate, held }: FlowSetup,
): Promise<HeldService> {
  const config = ctx.config;
  const stats: FlowStats = { started: 0, succeeded: 0, failed: 0, cancelled: 0, stepsSent: 0, retried: 0 };
  if (held)
    ctx.log.info(
      `flow: ${held.keys.length} run(s) the previous holder had a step under way for wait until ${new Date(held.until).toISOString()} (AckWait) before sending it again`,
    );
  let core: FlowCore | undefined;
  const actor = spawnFlowActor(
    ctx.runtime,
    parent,
    {
      name: ctx.name,
      runtime: ctx.runtime,
      hive: ctx.hive,
      log: ctx.log,
      store,
      def,
      gate,
      maxRuns: config.MaxRuns,
      defaultTimeoutMs: config.DefaultTimeout,
      answerWithinMs: config.AnswerWithin,
      runRetentionMs: config.RunRetention,
      dedupWindowMs: config.DedupWindow,
      pageHorizonMs: config.PageHorizon,
      stats,
      held,
    },
    (c) => (core = c),
  );
  // RunRetention and DedupWindow are kept by a sweep every tenth of the shorter (1 s to 1 min)
  const every = Math.min(
    60_000,
    Math.max(1000, Math.min(config.RunRetention || Infinity, config.DedupWindow || Infinity) / 10),
  );
  const sweeps = setInterval(() => ctx.runtime.tell(actor, { type: 'sweep' }), every);
  sweeps.unref();
  const close = async (deadlineMs: number): Promise<void> => {
    const until = Date.now() + deadlineMs;
    clearInterval(sweeps);
    // the store's load ends before it is closed, so the actor never reads a closed store
    await ctx.runtime
      .ask<FlowMsg, void>(actor, (reply) => ({ type: 'flush', reply }), Math.max(1, deadlineMs))
      .catch(() => undefined);
    // steps under way end and their Results are written (within the deadline); no step starts meanwhile
    if (core) core.draining = true;
    while (core && !core.idle && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    core?.stop();
    await store.close();
  };
  const service = await serveActor(ctx, actor, {
    close,
    status: () => ({
      ...stats,
      steps: def.steps.length,
      durable: store.durable,
      ...(core ? { states: stateCounts(core), parked: core.parked.count } : {}),
    }),
  });
  ctx.log.info(
    `flow listening on channel '${ctx.inputChannel}' with ${def.steps.length} steps${store.where ? `, store ${store.where}` : ''}`,
  );
  return { service, inFlight: { [Symbol.iterator]: () => core?.inFlight() ?? [][Symbol.iterator]() } };
}

export const flowService = defineService(
  SERVICES.flow,
  compilerFor('flow', FLOW_PARAMS),
  start,
  async (config) => void (await check(config)),
);
