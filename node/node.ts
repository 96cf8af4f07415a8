/**
 * A node: one process running any number of service instances on one hive
 * (docs/ARCHITECTURE.md, Layers). The node actor is the root supervisor; under it sit the hive
 * bridge and one supervisor per service instance. A service whose actors exhaust their restarts is
 * stopped (and its callers get 503), while every other service keeps serving.
 */
import { HiveClient } from '../actors/hive/client.js';
import { spawnBridge } from '../actors/hive/bridge.js';
import { MemoryTransport } from '../actors/hive/memory.js';
import type { HiveTransport } from '../actors/hive/transport.js';
import { CHANNEL_RULE, isValidChannel } from '../actors/hive/transport.js';
import type { ServiceKind } from '../config/registry.js';
import type { Layer } from '../config/resolve.js';
import type { HiveAccessValues } from '../config/hive-access.js';
import { hiveAccess } from '../config/hive-access.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import { importModule } from '../protocol/import-module.js';
import { Journal } from '../supervisors/journal.js';
import { NodeMetrics } from './dashboard/metrics.js';
import type { RunningConsole } from './console/server.js';
import { HiveRoster, rosterService } from './hive-roster.js';
import { SentCounts } from './sent-counts.js';
import type { DashboardAccess } from '../config/node-file.js';
import type { NodeStatus } from './dashboard/status.js';
import { actorTree } from './dashboard/status.js';
import type { Logger } from '../actors/observe/logger.js';
import { createLogger, maskSensitive } from '../actors/observe/logger.js';
import { currentScope } from '../actors/observe/trace-scope.js';
import type { TracingHandle } from '../actors/observe/tracing.js';
import { flushTracing, startTracing } from '../actors/observe/tracing.js';
import type { TracingSettings } from '../config/tracing.js';
import type { ActorRef } from '../supervisors/runtime.js';
import { ActorRuntime, installProcessGuards } from '../supervisors/runtime.js';
import type { Runtime } from '../supervisors/runtime.js';
import { Readiness } from '../actors/service/readiness.js';
import type { CompiledService, RunningService } from '../actors/service/context.js';
import { SERVICE_DEFINITIONS } from '../actors/index.js';

/** One service instance to run: its kind and its configuration layers (earliest first). */
export interface ServicePlan {
  kind: ServiceKind;
  layers: Layer[];
}

export interface NodeOptions {
  services: ServicePlan[];
  /** Where log lines go (standard output by default). */
  logStream?: NodeJS.WritableStream;
  /** The node's name (dashboard, `hivenode status`, NATS connection name); by default the name of its one service, else 'node'. */
  name?: string;
  /** Serve the dashboard — the operator console, its JSON API (/api/...) and /metrics — on this port. */
  dashboardPort?: number;
  /** The console's address (default 127.0.0.1) and users file (without one it is read-only). */
  dashboardAccess?: DashboardAccess;
  /** Package version shown on the dashboard. */
  version?: string;
  /**
   * The process's tracing (config/tracing.ts), set before the services start and shut down (its
   * batch exported) when the node stops; when absent, the tracing already set stays as it is.
   */
  tracing?: TracingSettings;
}

/** A running service instance as the node keeps it. */
export interface NodeService {
  kind: ServiceKind;
  name: string;
  release: string;
  channel: string;
  /** Its compiled parameters, for the console's flow. */
  config: Readonly<Record<string, unknown>>;
  running: RunningService;
}

const ACTOR_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** The transport SERVERHOST names: embedded (empty or 'embedded') or NATS ('nats://', 'tls://'), reached with the access the other SERVER* parameters give. */
export async function transportFor(values: HiveAccessValues & { readonly SERVERHOST: string }, name: string, log: Logger): Promise<HiveTransport> {
  const host = values.SERVERHOST.trim();
  if (host === '' || host.toLowerCase() === 'embedded') return new MemoryTransport();
  if (host.split(',').every((h) => /^(nats|tls):\/\/[^\s/]+$/i.test(h.trim()))) {
    // the NATS client is loaded only by a node that uses it (a tenth of a CPU second at start)
    const { NatsTransport } = await importModule(import.meta.url, '../actors/hive/nats.js', () => import('../actors/hive/nats.js'));
    return new NatsTransport({ servers: host, access: hiveAccess(values), name, log });
  }
  throw new ConfigError(`SERVERHOST '${host}' is not accepted; expected empty, 'embedded', 'nats://host:port' or 'tls://host:port'`);
}

export class HiveNode {
  readonly services: NodeService[] = [];
  readonly metrics = new NodeMetrics();
  readonly startedAt = new Date();
  dashboard: RunningConsole | undefined;
  /** This node's entry among every node of a NATS hive (hive-roster.ts), which the console shows. */
  roster: HiveRoster | undefined;
  private stopping: Promise<void> | undefined;
  private name = 'node';
  private version = '';
  private tracing: TracingHandle | undefined;

  private constructor(
    readonly hive: HiveClient,
    readonly runtime: Runtime,
    readonly journal: Journal,
    readonly log: Logger,
    /** Which services are still starting; every service's context holds its read-only view. */
    readonly readiness: Readiness,
    /** What each service sent on each channel (each service's hive counts its sends). */
    readonly sent: SentCounts,
  ) {}

  /** Compiles every service configuration first (so one bad parameter starts nothing), then starts them in order. */
  static async start(opts: NodeOptions): Promise<HiveNode> {
    const compiled = opts.services.map((plan, i) => {
      const service = SERVICE_DEFINITIONS[plan.kind].compile(plan.layers);
      const name = service.common.NAME || `${plan.kind}-${i + 1}`;
      if (!ACTOR_NAME.test(name)) throw new ConfigError(`NAME '${name}' is not valid: use 1 to 100 of A-Z a-z 0-9 _ . -`);
      return { service, name };
    });
    const names = new Set<string>();
    for (const s of compiled) {
      if (names.has(s.name)) throw new ConfigError(`two services are named '${s.name}'; give each a distinct NAME`);
      names.add(s.name);
    }
    const nodeName = opts.name ?? (compiled.length === 1 ? compiled[0]!.name : 'node');
    const hosts = new Set(compiled.map((s) => s.service.common.SERVERHOST.trim().toLowerCase().replace(/^embedded$/, '')));
    if (hosts.size > 1) throw new ConfigError(`the services of one node must share one hive, but SERVERHOST differs: ${[...hosts].map((h) => h || 'embedded').join(', ')}`);
    const first = compiled[0]?.service.common;
    const secrets = compiled.flatMap((s) => s.service.secrets);
    const log = createLogger({ level: first?.LOGLEVEL, format: first?.LOGFORMAT, sensitive: first?.LOGSENSITIVE, secrets, ...(opts.logStream ? { stream: opts.logStream } : {}) });
    const tracing = opts.tracing ? await startTracing(opts.tracing, { onExportFailed: (line) => log.warn(line) }) : undefined;
    const transport = await transportFor(first ?? { SERVERHOST: '', SERVERAUTH: '', SERVERCA: '', SERVERCERT: '', SERVERKEY: '' }, `hivenode ${nodeName} ${process.pid}`, log);
    await transport.connect();

    const journal = new Journal(1000, { mask: first?.LOGSENSITIVE ? (t) => t : (t) => maskSensitive(t, secrets), traceOf: () => currentScope()?.traceId });
    journal.addSink((e) => {
      const level = e.event === 'crash' || e.event === 'unhandled-rejection' || e.event === 'escalation' ? 'warn' : 'debug';
      log[level](`supervision ${e.event} ${e.path}`, { supervision: e });
    });
    installProcessGuards(journal);
    const runtime = new ActorRuntime(journal, nodeName);
    const nodeActor = runtime.spawn<undefined, never>(runtime.root, {
      name: 'node',
      init: () => undefined,
      receive: (s) => s,
      // a service supervisor that escalates is restarted a few times, then stopped: the node lives on
      childPolicy: { initialMs: 100, factor: 2, maxMs: 10_000, maxRestarts: 5, withinMs: 60_000, onExhausted: 'stop' },
    });
    const bridge = spawnBridge(runtime, nodeActor, transport);
    const hive = new HiveClient(runtime, bridge, transport);
    const node = new HiveNode(hive, runtime, journal, log, new Readiness(compiled.map((s) => s.name)), new SentCounts(runtime, bridge, transport));
    node.name = nodeName;
    node.version = opts.version ?? '';
    node.tracing = tracing;
    node.metrics.attach({
      hive: () => ({ ...hive.stats() }),
      services: () => node.services.map((s) => ({ kind: s.kind, name: s.name, status: s.running.status() })),
      restarts: () => runtime.actorInfos().map((a) => ({ path: a.path, ...journal.totalsOf(a.path) })),
    });

    // every kind's implementation is imported now, so each is read and compiled while the services
    // before it start; they still start one after another, in the file's order
    for (const s of compiled) void s.service.preload();
    try {
      for (const s of compiled) await node.startService(s.service, s.name, nodeActor, secrets, opts.logStream);
      if (opts.dashboardPort !== undefined) {
        const access = opts.dashboardAccess ?? {};
        // loaded here: a node without a dashboard port never loads the console (elkjs, its pages)
        const { startConsole } = await importModule(import.meta.url, './console/server.js', () => import('./console/server.js'));
        node.dashboard = await startConsole(
          { status: () => node.status(), nodes: () => node.roster?.nodes() ?? [], actorTotals: () => runtime.actorInfos().map((a) => ({ path: a.path, stopped: a.stopped, ...journal.totalsOf(a.path) })), services: () => node.services.map((s) => ({ kind: s.kind, name: s.name, channel: s.channel, config: s.config, status: () => s.running.status() })), sent: (service) => node.sent.of(service), metrics: node.metrics, hive, journal, log },
          { port: opts.dashboardPort, ...access, nodeName, version: node.version },
        );
        const host = access.host ?? '127.0.0.1';
        log.info(`dashboard on http://${host.includes(':') ? `[${host}]` : host}:${node.dashboard.port}/ (the console: ${access.users ? 'actions for the users of dashboard.Users' : 'read-only, no dashboard.Users'}; JSON at /api/..., Prometheus at /metrics)`);
      }
      node.roster = new HiveRoster(hive, () => ({ name: nodeName, startedAt: node.startedAt.toISOString(), ...(node.dashboard ? { consolePort: node.dashboard.port } : {}), services: node.services.map((s) => rosterService({ ...s, status: () => s.running.status() }, node.sent.of(s.name))) }), log);
      node.roster.start();
    } catch (e) {
      await node.stop(2_000);
      throw e;
    }
    return node;
  }

  private async startService(service: CompiledService, name: string, nodeActor: ActorRef<never>, secrets: string[], logStream?: NodeJS.WritableStream): Promise<void> {
    const { info, common: v } = service;
    const inputChannel = v.INPUTCHANNEL || v.NAME || info.defaultInputChannel;
    // checked here, not when the bridge subscribes: a bad name is the user's, so one line and exit 2, no stack
    if (info.defaultInputChannel !== '' && !isValidChannel(inputChannel)) {
      throw new ConfigError(`${v.INPUTCHANNEL ? 'INPUTCHANNEL' : 'NAME (the channel when INPUTCHANNEL is not set)'} '${inputChannel.slice(0, 80)}' of service ${info.kind} is not a valid channel: ${CHANNEL_RULE}`);
    }
    const log = createLogger({ level: v.LOGLEVEL, format: v.LOGFORMAT, sensitive: v.LOGSENSITIVE, secrets, ...(logStream ? { stream: logStream } : {}) }).child({ service: name });
    const supervisor = this.runtime.spawn<undefined, never>(nodeActor, {
      name,
      init: () => undefined,
      receive: (s) => s,
      policy: { onExhausted: 'escalate' },
      childPolicy: { initialMs: 50, factor: 2, maxMs: 5_000, maxRestarts: 10, withinMs: 60_000, onExhausted: 'escalate' },
    });
    const running = await service.start({
      name,
      runtime: this.runtime,
      supervisor,
      hive: this.sent.hiveFor(name),
      log,
      journal: this.journal,
      inputChannel,
      record: this.metrics.recorder(name, info.kind),
      readiness: this.readiness,
      siblings: () => this.services.map((s) => ({ kind: s.kind, name: s.name, channel: s.channel, ...(s.running.describe ? { describe: () => s.running.describe!() } : {}) })),
    });
    log.info(`started ${info.kind} ${info.release} as '${name}'`, { release: info.release, hive: this.hive.kind });
    this.services.push({ kind: info.kind, name, release: info.release, channel: info.defaultInputChannel === '' ? '' : inputChannel, config: service.values, running });
    // a service ready only after its start (RunningService.ready) keeps the node 'starting' until then
    if (running.ready) void running.ready.then(() => this.readiness.started(name), (e: unknown) => log.error(`not ready: ${describeError(e)}`));
    else this.readiness.started(name);
  }

  /** Drains every service (newest first, so front doors close before what they call), then stops. */
  stop(deadlineMs = 10_000): Promise<void> {
    this.stopping ??= (async () => {
      const until = Date.now() + deadlineMs;
      for (const s of [...this.services].reverse()) {
        try {
          await s.running.drain(Math.max(0, until - Date.now()));
        } catch (e) {
          this.log.error(`draining ${s.name} failed: ${describeError(e)}`);
        }
      }
      this.roster?.stop();
      await this.dashboard?.close();
      // what the services recorded is exported before the process may exit
      await (this.tracing ? this.tracing.shutdown() : flushTracing()).catch((e: unknown) => this.log.warn(`exporting the last spans failed: ${describeError(e)}`));
      // a NATS connection left open would reconnect forever and keep the process alive
      await this.hive.close().catch((e: unknown) => this.log.warn(`closing the hive failed: ${describeError(e)}`));
      this.runtime.shutdown();
    })();
    return this.stopping;
  }

  /** A snapshot for the dashboard, `/api/status` and `hivenode status`. */
  status(): NodeStatus {
    return {
      node: { name: this.name, pid: process.pid, version: this.version, startedAt: this.startedAt.toISOString(), uptimeSeconds: Math.round((Date.now() - this.startedAt.getTime()) / 1000), rssBytes: process.memoryUsage.rss() },
      hive: { kind: this.hive.kind, connected: this.hive.isConnected(), ...this.hive.stats() },
      services: this.services.map((s) => ({ kind: s.kind, name: s.name, release: s.release, channel: s.channel, status: s.running.status() })),
      actors: actorTree(this.runtime.actorInfos().map((a) => ({ ...a, ...this.journal.totalsOf(a.path) }))),
      journal: this.journal.entries(),
    };
  }
}
