/**
 * Readiness of a node: which of its services are still starting. The node starts its services one
 * after another, so a front door (the gateway) may already accept connections while a later service
 * is still loading its queue or running its SQL_INITFILE; a health check that answered 'ok' then
 * would send traffic to channels nobody listens on yet (404). A service may also be ready only after
 * its start (RunningService.ready: a queue on JetStream standing by, until a node serves it); the
 * node marks it started then. The node owns one Readiness and hands
 * its read-only view to every service in the service context, instead of a process-wide flag, so two
 * nodes in one process (tests, embedding) never see each other's start.
 */

/** What a service may ask: is every service of its node started, and which are not yet. */
export interface ReadinessView {
  /** True once every service of the node has started. */
  readonly ready: boolean;
  /** Names of the services still starting, in start order (empty once ready). */
  pending(): string[];
  /** Resolves once every service has started (never, when one fails to). */
  whenReady(): Promise<void>;
}

/** The node's side: created with every service name to start, told as each one has started. */
export class Readiness implements ReadinessView {
  private readonly starting: Set<string>;
  private readonly becameReady: Promise<void>;
  private resolveReady!: () => void;

  constructor(names: Iterable<string>) {
    this.starting = new Set(names);
    this.becameReady = new Promise((resolve) => (this.resolveReady = resolve));
    if (this.starting.size === 0) this.resolveReady();
  }

  whenReady(): Promise<void> {
    return this.becameReady;
  }

  get ready(): boolean {
    return this.starting.size === 0;
  }

  pending(): string[] {
    return [...this.starting];
  }

  /** Marks one service started; a name the node never planned is a programming error. */
  started(name: string): void {
    if (!this.starting.delete(name)) throw new Error(`service '${name}' is not one the node is starting`);
    if (this.starting.size === 0) this.resolveReady();
  }
}
