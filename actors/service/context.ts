/**
 * The contract between the node and a service implementation (docs/ARCHITECTURE.md, Layers): a
 * service declares its parameter table and its start once with `defineService`; the node compiles
 * the configuration through the definition (so each service's config keeps its own type), spawns a
 * supervisor actor for the instance and hands it this context. The service spawns its actors under
 * that supervisor and returns a handle the node drains at shutdown.
 */
import type { ServiceInfo } from '../../config/registry.js';
import type { Compiled, Layer } from '../../config/resolve.js';
import type { Journal } from '../../supervisors/journal.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import type { HiveClient } from '../hive/client.js';
import type { Delivery } from '../hive/transport.js';
import type { Logger } from '../observe/logger.js';
import type { ScopeTrace } from '../observe/trace-scope.js';
import type { ReadinessView } from './readiness.js';

/** What the node gives every service instance, whatever its kind. */
export interface NodeFacilities {
  /** Instance name (NAME, or `<kind>-<n>`). */
  readonly name: string;
  readonly runtime: Runtime;
  /** The service's supervisor actor: spawn the service's actors under it. */
  readonly supervisor: ActorRef<never>;
  readonly hive: HiveClient;
  readonly log: Logger;
  readonly journal: Journal;
  /** Channel to listen on: INPUTCHANNEL, else NAME, else the kind's default. */
  readonly inputChannel: string;
  /** Records each answered message (requests and latency per service). */
  readonly record: (code: number, seconds: number) => void;
  /** Whether every service of the node has started (a health check answers 503 until then). */
  readonly readiness: ReadinessView;
  /** The node's services started so far, with what each declares of its requests (the gateway's OpenAPI document). */
  readonly siblings?: () => ReadonlyArray<SiblingService>;
  /**
   * On a reload (docs/ARCHITECTURE.md, Reloading a node): the running instance of the same NAME this
   * one replaces, still serving. A kind that can take over what it holds (the gateway its listening
   * socket) reads the predecessor's `handOver`; any other ignores it.
   */
  readonly predecessor?: RunningService;
}

/**
 * What a service declares of the requests it takes (README, OpenAPI): the Data fields it reads
 * (the SQL service's placeholders) and the controls it understands (the queue's), so a front door
 * can describe its routes without knowing the kind.
 */
export interface RequestShape {
  readonly fields: ReadonlyArray<{ readonly name: string; readonly required: boolean; readonly description: string }>;
  readonly controls: ReadonlyArray<{
    readonly name: string;
    readonly description: string;
    readonly values?: readonly string[];
  }>;
}

/** A service of the same node as another sees it. */
export interface SiblingService {
  readonly kind: string;
  readonly name: string;
  /** Its input channel ('' for services that do not listen). */
  readonly channel: string;
  readonly describe?: () => RequestShape;
}

/** A service's start context: the node's facilities and the service's own compiled configuration. */
export interface ServiceContext<C> extends NodeFacilities {
  readonly info: ServiceInfo;
  readonly config: C;
  /** Parameters the user set (not defaults). */
  readonly explicit: ReadonlySet<string>;
}

/** A started service. */
export interface RunningService {
  /** Stops taking new work and waits until in-flight work is done or the deadline passes. */
  drain(deadlineMs: number): Promise<void>;
  /** Live figures for the status page. */
  status(): Record<string, unknown>;
  /** What the service declares of its requests (RequestShape), when it declares anything. */
  describe?(): RequestShape;
  /**
   * Resolves when the service can serve, when that comes after its start: a queue on JetStream standing
   * by is ready once a node of the hive serves it. The node is ready (health 200) once every service is.
   */
  readonly ready?: Promise<void>;
  /**
   * What a successor of the same kind may take over on a reload (the gateway's listening socket);
   * opaque to the node, which only passes it on as the successor's `predecessor`.
   */
  readonly handOver?: unknown;
  /**
   * A reload that fails after this instance took over its predecessor's `handOver` gives it back
   * before draining this one, so the predecessor serves on as it did and this drain leaves it alone.
   */
  giveBack?(): void;
}

/** The common parameters (README, Services) the node reads from every compiled configuration. */
export interface CommonValues {
  readonly NAME: string;
  readonly SERVERHOST: string;
  readonly SERVERAUTH: string;
  readonly SERVERCA: string;
  readonly SERVERCERT: string;
  readonly SERVERKEY: string;
  readonly LOGLEVEL: string;
  readonly LOGFORMAT: string;
  readonly LOGSENSITIVE: boolean;
  readonly INPUTCHANNEL?: string;
}

/** One instance's configuration, compiled once; it starts the instance with that configuration. */
export interface CompiledService {
  readonly info: ServiceInfo;
  readonly common: CommonValues;
  /** Values of secret parameters, for masking in logs. */
  readonly secrets: readonly string[];
  /** Every compiled parameter (the console draws the wiring from OUTPUTCHANNEL, DefaultChannel, Routes, …). */
  readonly values: Readonly<Record<string, unknown>>;
  start(facilities: NodeFacilities): Promise<RunningService>;
  /**
   * Imports the kind's implementation ahead of `start`. A node asks this of all its services at once,
   * so each kind's files are read and compiled while the services before it start, not after; a
   * failure is left to `start`, which meets the same import and reports it where it always did.
   */
  preload(): Promise<void>;
  /**
   * The rest of the compile: what the kind checks at start that the parameter table cannot (templates
   * parsed, definitions read, TLS files read and matched), without starting anything or opening a
   * store. `hivenode check` and a reload run it before anything changes; `name` is the instance's.
   */
  check(name: string): Promise<void>;
}

/** A service kind's implementation, as the registry (actors/index.ts) holds it. */
export interface ServiceDefinition {
  readonly info: ServiceInfo;
  /** Compiles the layers against the kind's table; a ConfigError names what is wrong. */
  compile(layers: readonly Layer[]): CompiledService;
}

/** A service kind's definition with its start, typed by its configuration (what `defineService` returns). */
export interface TypedServiceDefinition<C> extends ServiceDefinition {
  start(ctx: ServiceContext<C>): Promise<RunningService>;
  /** The kind's start-time checks alone (CompiledService.check). */
  check?(config: C, name: string): Promise<void> | void;
}

/** One instance's compiled configuration, bound to the start that runs it. */
function bound<C extends CommonValues>(
  info: ServiceInfo,
  c: Compiled<C>,
  start: (ctx: ServiceContext<C>) => Promise<RunningService>,
  check: (config: C, name: string) => Promise<void>,
  load?: () => Promise<unknown>,
): CompiledService {
  return {
    info,
    common: c.values,
    secrets: c.secrets,
    values: c.values as unknown as Readonly<Record<string, unknown>>,
    start: (facilities) => start({ ...facilities, info, config: c.values, explicit: c.explicit }),
    preload: async () => void (await load?.().catch(() => undefined)),
    check: (name) => check(c.values, name),
  };
}

/**
 * A service kind from its configuration compiler and its start. The configuration's type is its
 * table's, checked here against the common parameters, and travels to `start` inside the compiled
 * service: the registry holds every kind alike without erasing it.
 */
export function defineService<C extends CommonValues>(
  info: ServiceInfo,
  compile: (layers: readonly Layer[]) => Compiled<C>,
  start: (ctx: ServiceContext<C>) => Promise<RunningService>,
  check?: (config: C, name: string) => Promise<void> | void,
): TypedServiceDefinition<C> {
  const checked = async (config: C, name: string): Promise<void> => void (await check?.(config, name));
  return {
    info,
    start,
    ...(check ? { check } : {}),
    compile: (layers) => bound(info, compile(layers), start, checked),
  };
}

/**
 * A kind whose implementation is loaded when an instance starts, not before: the configuration is
 * compiled (and refused) from the parameter table alone, and the module with the kind's actors — and
 * the drivers, templates and parsers it imports — loads only for a node that runs the kind. The
 * registry (actors/index.ts) holds every kind this way, so `hivenode --version` or a node of the
 * gateway alone never pays for Sequelize, undici or sqlite3.
 */
export function lazyService<C extends CommonValues>(
  info: ServiceInfo,
  compile: (layers: readonly Layer[]) => Compiled<C>,
  load: () => Promise<TypedServiceDefinition<C>>,
): ServiceDefinition {
  const check = async (config: C, name: string): Promise<void> => void (await (await load()).check?.(config, name));
  return {
    info,
    compile: (layers) => bound(info, compile(layers), async (ctx) => (await load()).start(ctx), check, load),
  };
}

/** The message an actor gets for a hive delivery. */
export interface DeliveryMsg {
  type: 'delivery';
  delivery: Delivery;
  /** The message's trace (docs/ARCHITECTURE.md, Tracing), when it has one. */
  trace?: ScopeTrace | undefined;
}
