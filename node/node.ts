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
import type { HiveAccessValues } from '../config/hive-access.js';
import { hiveAccess } from '../config/hive-access.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import { importModule } from '../protocol/import-module.js';
import { Journal, JournalEvent } from '../supervisors/journal.js';
import { NodeMetrics } from './dashboard/metrics.js';
import type { RunningConsole } from './console/server.js';
import type { ConsoleConfig } from './console/sources.js';
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
import type { PlannedService, ServicePlan } from './node-plan.js';
import { compileNode, compilePlans } from './node-plan.js';
import { HIVE_PARAMS, describeDiff, diffServices, refusal, swapsInPlace } from './reload-diff.js';
import type { ReloadDiff } from './reload-diff.js';

export type { ServicePlan } from './node-plan.js';

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
  /** The node file it runs and its text's hash, for status and reloads (bin/reload.ts). */
  source?: { file: string; hash: string };
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
  /** Its compiled configuration: what a failed reload starts again (a queue swapped in place). */
  compiled: CompiledService;
  /** Its supervisor actor, stopped when a reload replaces or removes it. */
  supervisor: ActorRef<never>;
}

/** What the node runs from, as status shows it: the node file's hash and when it was last applied. */
export interface NodeSource {
  file: string;
  hash: string;
  appliedAt: string;
  reloads: number;
}

/** What a reload did: applied (with its diff) or refused (with the reason, one line per error). */
export type ReloadOutcome = { applied: true; diff: ReloadDiff; summary: string } | { applied: false; reason: string };

/** How long a reload lets a replaced or removed service finish what it had accepted. */
const RELOAD_DRAIN_MS = 10_000;

/** The transport SERVERHOST names: embedded (empty or 'embedded') or NATS ('nats://', 'tls://'), reached with the access the other SERVER* parameters give. */
export async function transportFor(
  values: HiveAccessValues & { readonly SERVERHOST: string },
  name: string,
  log: Logger,
): Promise<HiveTransport> {
  const host = values.SERVERHOST.trim();
  if (host === '' || host.toLowerCase() === 'embedded') return new MemoryTransport();
  if (host.split(',').every((h) => /^(nats|tls):\/\/[^\s/]+$/i.test(h.trim()))) {
    // the NATS client is loaded only by a node that uses it (a tenth of a CPU second at start)
    const { NatsTransport } = await importModule(
      import.meta.url,
      '../actors/hive/nats.js',
      () => import('../actors/hive/nats.js'),
    );
    return new NatsTransport({ servers: host, access: hiveAccess(values), name, log });
  }
  throw new ConfigError(
    `SERVERHOST '${host}' is not accepted; expected empty, 'embedded', 'nats://host:port' or 'tls://host:port'`,
  );
}

export class HiveNode {
  readonly services: NodeService[] = [];
  readonly metrics = new NodeMetrics();
  readonly startedAt = new Date();
  dashboard: RunningConsole | undefined;
  /** This node's entry among every node of a NATS hive (hive-roster.ts), which the console shows. */
  roster: HiveRoster | undefined;
  /** The node file's reloads (node-file-control.ts), which the console's Config page drives; set once the node runs from a file. */
  fileControl: ConsoleConfig | undefined;
  private stopping: Promise<void> | undefined;
  private name = 'node';
  private version = '';
  private tracing: TracingHandle | undefined;
  private nodeActor!: ActorRef<never>;
  private secrets: string[] = [];
  private logStream: NodeJS.WritableStream | undefined;
  /** The hive section's values the node started with: a reload may not change them. */
  private hiveValues: Record<string, unknown> = {};
  /** The node file and when it was last applied (undefined for a node not run from a file). */
  source: NodeSource | undefined;
  /** Reloads run one after another: a signal during a reload waits for it. */
  private reloading: Promise<unknown> = Promise.resolve();

  readonly hive: HiveClient;
  readonly runtime: Runtime;
  readonly journal: Journal;
  readonly log: Logger;
  /** Which services are still starting; every service's context holds its read-only view. */
  readonly readiness: Readiness;
  /** What each service sent on each channel (each service's hive counts its sends). */
  readonly sent: SentCounts;

  private constructor(parts: Pick<HiveNode, 'hive' | 'runtime' | 'journal' | 'log' | 'readiness' | 'sent'>) {
    ({
      hive: this.hive,
      runtime: this.runtime,
      journal: this.journal,
      log: this.log,
      readiness: this.readiness,
      sent: this.sent,
    } = parts);
  }

  /** Compiles every service configuration first (so one bad parameter starts nothing), then starts them in order. */
  static async start(opts: NodeOptions): Promise<HiveNode> {
    const compiled = compilePlans(opts.services);
    const nodeName = opts.name ?? (compiled.length === 1 ? compiled[0]!.name : 'node');
    const first = compiled[0]?.service.common;
    const secrets = compiled.flatMap((s) => s.service.secrets);
    const log = createLogger({
      level: first?.LOGLEVEL,
      format: first?.LOGFORMAT,
      sensitive: first?.LOGSENSITIVE,
      secrets,
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    });
    const tracing = opts.tracing
      ? await startTracing(opts.tracing, { onExportFailed: (line) => log.warn(line) })
      : undefined;
    const transport = await transportFor(
      first ?? { SERVERHOST: '', SERVERAUTH: '', SERVERCA: '', SERVERCERT: '', SERVERKEY: '' },
      `hivenode ${nodeName} ${process.pid}`,
      log,
    );
    await transport.connect();

    const journal = new Journal(1000, {
      mask: first?.LOGSENSITIVE ? (t) => t : (t) => maskSensitive(t, secrets),
      traceOf: () => currentScope()?.traceId,
    });
    journal.addSink((e) => {
      const level =
        e.event === 'crash' || e.event === 'unhandled-rejection' || e.event === 'escalation' ? 'warn' : 'debug';
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
    const node = new HiveNode({
      hive,
      runtime,
      journal,
      log,
      readiness: new Readiness(compiled.map((s) => s.name)),
      sent: new SentCounts(runtime, bridge, transport),
    });
    node.name = nodeName;
    node.version = opts.version ?? '';
    node.tracing = tracing;
    node.nodeActor = nodeActor;
    node.secrets = secrets;
    node.logStream = opts.logStream;
    node.hiveValues = Object.fromEntries(HIVE_PARAMS.map((k) => [k, first?.[k] ?? '']));
    if (opts.source) node.source = { ...opts.source, appliedAt: node.startedAt.toISOString(), reloads: 0 };
    node.metrics.attach({
      hive: () => ({ ...hive.stats() }),
      services: () => node.services.map((s) => ({ kind: s.kind, name: s.name, status: s.running.status() })),
      restarts: () => runtime.actorInfos().map((a) => ({ path: a.path, ...journal.totalsOf(a.path) })),
    });

    // every kind's implementation is imported now, so each is read and compiled while the services
    // before it start; they still start one after another, in the file's order
    for (const s of compiled) void s.service.preload();
    try {
      for (const s of compiled) node.services.push(await node.startService(s.service, s.name, { initial: true }));
      if (opts.dashboardPort !== undefined) {
        const access = opts.dashboardAccess ?? {};
        // loaded here: a node without a dashboard port never loads the console (elkjs, its pages)
        const { startConsole } = await importModule(
          import.meta.url,
          './console/server.js',
          () => import('./console/server.js'),
        );
        node.dashboard = await startConsole(
          {
            status: () => node.status(),
            nodes: () => node.roster?.nodes() ?? [],
            actorTotals: () =>
              runtime.actorInfos().map((a) => ({ path: a.path, stopped: a.stopped, ...journal.totalsOf(a.path) })),
            services: () =>
              node.services.map((s) => ({
                kind: s.kind,
                name: s.name,
                channel: s.channel,
                config: s.config,
                status: () => s.running.status(),
              })),
            sent: (service) => node.sent.of(service),
            config: () => node.fileControl,
            metrics: node.metrics,
            hive,
            journal,
            log,
          },
          { port: opts.dashboardPort, ...access, nodeName, version: node.version },
        );
        const host = access.host ?? '127.0.0.1';
        log.info(
          `dashboard on http://${host.includes(':') ? `[${host}]` : host}:${node.dashboard.port}/ (the console: ${access.users ? 'actions for the users of dashboard.Users' : 'read-only, no dashboard.Users'}; JSON at /api/..., Prometheus at /metrics)`,
        );
      }
      node.roster = new HiveRoster(
        hive,
        () => ({
          name: nodeName,
          startedAt: node.startedAt.toISOString(),
          ...(node.dashboard ? { consolePort: node.dashboard.port } : {}),
          services: node.services.map((s) =>
            rosterService({ ...s, status: () => s.running.status() }, node.sent.of(s.name)),
          ),
        }),
        log,
      );
      node.roster.start();
    } catch (e) {
      await node.stop(2_000);
      throw e;
    }
    return node;
  }

  private async startService(
    service: CompiledService,
    name: string,
    how: { initial: boolean; predecessor?: NodeService },
  ): Promise<NodeService> {
    const { info, common: v } = service;
    const inputChannel = v.INPUTCHANNEL || v.NAME || info.defaultInputChannel;
    // checked here, not when the bridge subscribes: a bad name is the user's, so one line and exit 2, no stack
    if (info.defaultInputChannel !== '' && !isValidChannel(inputChannel)) {
      throw new ConfigError(
        `${v.INPUTCHANNEL ? 'INPUTCHANNEL' : 'NAME (the channel when INPUTCHANNEL is not set)'} '${inputChannel.slice(0, 80)}' of service ${info.kind} is not a valid channel: ${CHANNEL_RULE}`,
      );
    }
    const log = createLogger({
      level: v.LOGLEVEL,
      format: v.LOGFORMAT,
      sensitive: v.LOGSENSITIVE,
      secrets: this.secrets,
      ...(this.logStream ? { stream: this.logStream } : {}),
    }).child({ service: name });
    const supervisor = this.runtime.spawn<undefined, never>(this.nodeActor, {
      name: this.supervisorName(name),
      init: () => undefined,
      receive: (s) => s,
      policy: { onExhausted: 'escalate' },
      childPolicy: {
        initialMs: 50,
        factor: 2,
        maxMs: 5_000,
        maxRestarts: 10,
        withinMs: 60_000,
        onExhausted: 'escalate',
      },
    });
    let running: RunningService;
    try {
      running = await service.start({
        name,
        runtime: this.runtime,
        supervisor,
        hive: this.sent.hiveFor(name),
        log,
        journal: this.journal,
        inputChannel,
        record: this.metrics.recorder(name, info.kind),
        readiness: this.readiness,
        siblings: () =>
          this.services.map((s) => ({
            kind: s.kind,
            name: s.name,
            channel: s.channel,
            ...(s.running.describe ? { describe: () => s.running.describe!() } : {}),
          })),
        ...(how.predecessor ? { predecessor: how.predecessor.running } : {}),
      });
    } catch (e) {
      // a reload's failed start leaves no supervisor behind (at start the node stops as a whole)
      if (!how.initial) this.runtime.stop(supervisor);
      throw e;
    }
    log.info(`started ${info.kind} ${info.release} as '${name}'`, { release: info.release, hive: this.hive.kind });
    // a service ready only after its start (RunningService.ready) keeps the node 'starting' until then
    if (how.initial) {
      if (running.ready)
        void running.ready.then(
          () => this.readiness.started(name),
          (e: unknown) => log.error(`not ready: ${describeError(e)}`),
        );
      else this.readiness.started(name);
    }
    return {
      kind: info.kind,
      name,
      release: info.release,
      channel: info.defaultInputChannel === '' ? '' : inputChannel,
      config: service.values,
      running,
      compiled: service,
      supervisor,
    };
  }

  /**
   * The supervisor's actor name: the service's NAME, or while an instance of that name still runs
   * beside it during a reload, `NAME.2`, `NAME.3`, … (actor names are unique under the node).
   */
  private supervisorName(name: string): string {
    const taken = new Set(this.runtime.actorInfos().map((a) => a.path));
    const base = `${this.nodeActor.path}/`;
    if (!taken.has(`${base}${name}`)) return name;
    let n = 2;
    while (taken.has(`${base}${name}.${n}`)) n++;
    return `${name}.${n}`;
  }

  /** Drains a service that a reload replaced or removed, then stops its actors. */
  private async retire(s: NodeService, deadlineMs: number): Promise<void> {
    try {
      await s.running.drain(deadlineMs);
    } catch (e) {
      this.log.error(`draining ${s.name} failed: ${describeError(e)}`);
    }
    this.runtime.stop(s.supervisor);
  }

  /**
   * Applies newly compiled plans to the running node (docs/ARCHITECTURE.md, Reloading a node): the
   * whole compile first, and on any error nothing changes. Services are compared by NAME: unchanged
   * ones are left alone; a changed one starts beside the old, which is drained once the new serves
   * (a queue or flow, which holds a store, and a syslog receiver are swapped in place); a removed one is drained and
   * stopped; a new one is started. A failed start undoes what the reload had started. `who` is the
   * signal or the console user, for the journal; `hash` is the new file's.
   */
  reload(plans: readonly ServicePlan[], who: string, hash?: string, label?: string): Promise<ReloadOutcome> {
    const run = this.reloading.then(() => this.applyReload(plans, who, hash, label));
    this.reloading = run.catch(() => undefined);
    return run;
  }

  /** Logs a refused reload (one line per error: "reload refused: <file>: <what and where>") and journals it. */
  refuseReload(reason: string, who: string, label?: string): ReloadOutcome {
    const file = this.source?.file ?? this.name;
    for (const line of reason.split('\n')) this.log.error(`reload refused: ${file}: ${line}`);
    this.journal.record({
      event: JournalEvent.Reload,
      path: this.nodeActor.path,
      user: who,
      action: `refused${label ? ` (${label})` : ''}: ${reason.replace(/\n/g, '; ')}`,
    });
    return { applied: false, reason };
  }

  /** What applying these compiled services would change, and why it would be refused (a dry run: nothing is touched). */
  previewReload(next: readonly PlannedService[]): { diff: ReloadDiff; summary: string; refused?: string } {
    const diff = diffServices(this.services, next);
    const refused = refusal(this.services, next, diff, this.hiveValues);
    return { diff, summary: describeDiff(diff), ...(refused ? { refused } : {}) };
  }

  private async applyReload(
    plans: readonly ServicePlan[],
    who: string,
    hash: string | undefined,
    label: string | undefined,
  ): Promise<ReloadOutcome> {
    const refuse = (reason: string): ReloadOutcome => this.refuseReload(reason, who, label);
    if (this.stopping) return refuse('the node is stopping');
    let next: PlannedService[];
    try {
      next = await compileNode(plans);
    } catch (e) {
      return refuse(describeError(e));
    }
    const diff = diffServices(this.services, next);
    const refused = refusal(this.services, next, diff, this.hiveValues);
    if (refused) return refuse(refused);
    // the loggers and the journal mask by this array: the new file's secrets are masked from now on
    for (const secret of next.flatMap((s) => s.service.secrets))
      if (!this.secrets.includes(secret)) this.secrets.push(secret);

    const byName = new Map(this.services.map((s) => [s.name, s]));
    const changed = new Set(diff.changed.map((c) => c.name));
    const started = new Map<string, NodeService>();
    /** Services stopped in place (a queue's store handed over) whose new instance did not start. */
    const swappedOut: NodeService[] = [];
    const undo = async (): Promise<void> => {
      for (const s of [...started.values()].reverse()) {
        s.running.giveBack?.();
        await this.retire(s, 2_000);
      }
      for (const old of swappedOut) {
        try {
          const again = await this.startService(old.compiled, old.name, { initial: false });
          this.services[this.services.indexOf(old)] = again;
        } catch (e) {
          this.log.error(
            `reload: '${old.name}' could not be started again with its previous configuration: ${describeError(e)}`,
          );
        }
      }
    };
    try {
      // beside the old: what is new, and what changed without holding a store
      for (const s of next) {
        const old = byName.get(s.name);
        if (old && (!changed.has(s.name) || swapsInPlace(old.kind))) continue;
        started.set(
          s.name,
          await this.startService(s.service, s.name, { initial: false, ...(old ? { predecessor: old } : {}) }),
        );
      }
      // in place: the old instance closes its store before the new one opens it
      for (const s of next) {
        const old = byName.get(s.name);
        if (!old || !changed.has(s.name) || !swapsInPlace(old.kind)) continue;
        await this.retire(old, RELOAD_DRAIN_MS);
        swappedOut.push(old);
        started.set(s.name, await this.startService(s.service, s.name, { initial: false }));
        swappedOut.pop();
      }
    } catch (e) {
      await undo();
      return refuse(describeError(e));
    }
    // the new instances serve: the replaced and removed ones finish what they accepted, then stop
    const retired = this.services.filter(
      (s) => (changed.has(s.name) && !swapsInPlace(s.kind)) || diff.removed.includes(s.name),
    );
    this.services.splice(0, this.services.length, ...next.map((s) => started.get(s.name) ?? byName.get(s.name)!));
    await Promise.all(retired.map((s) => this.retire(s, RELOAD_DRAIN_MS)));

    const summary = describeDiff(diff);
    if (this.source)
      this.source = {
        ...this.source,
        ...(hash ? { hash } : {}),
        appliedAt: new Date().toISOString(),
        reloads: this.source.reloads + 1,
      };
    this.log.info(`reload applied: ${this.source?.file ?? this.name}: ${summary} (asked by ${who})`);
    this.journal.record({
      event: JournalEvent.Reload,
      path: this.nodeActor.path,
      user: who,
      action: `applied${label ? ` (${label})` : ''}: ${summary}`,
    });
    return { applied: true, diff, summary };
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
      await (this.tracing ? this.tracing.shutdown() : flushTracing()).catch((e: unknown) =>
        this.log.warn(`exporting the last spans failed: ${describeError(e)}`),
      );
      // a NATS connection left open would reconnect forever and keep the process alive
      await this.hive.close().catch((e: unknown) => this.log.warn(`closing the hive failed: ${describeError(e)}`));
      this.runtime.shutdown();
    })();
    return this.stopping;
  }

  /** A snapshot for the dashboard, `/api/status` and `hivenode status`. */
  status(): NodeStatus {
    return {
      node: {
        name: this.name,
        pid: process.pid,
        version: this.version,
        startedAt: this.startedAt.toISOString(),
        uptimeSeconds: Math.round((Date.now() - this.startedAt.getTime()) / 1000),
        rssBytes: process.memoryUsage.rss(),
      },
      hive: { kind: this.hive.kind, connected: this.hive.isConnected(), ...this.hive.stats() },
      services: this.services.map((s) => ({
        kind: s.kind,
        name: s.name,
        release: s.release,
        channel: s.channel,
        status: s.running.status(),
      })),
      actors: actorTree(this.runtime.actorInfos().map((a) => ({ ...a, ...this.journal.totalsOf(a.path) }))),
      journal: this.journal.entries(),
      ...(this.source ? { source: { ...this.source } } : {}),
    };
  }
}
