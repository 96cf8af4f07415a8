/**
 * The HTTP client's direct connection pool, an undici Agent made at the first request rather than at
 * start: creating it opens nothing, so the service serves the same from its start, but a node whose
 * HTTP client has not yet sent a request has not loaded undici (a seventh of a node's start-up time
 * and about 15 MiB of its memory). The first request pays the load once, synchronously.
 */
import type { Agent, Dispatcher } from 'undici';
import { loadUndici } from '../net/load-undici.js';

/** What an exchange asks of a pool: one request, answered as a promise. */
export interface Requester {
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
}

export class LazyAgent implements Requester {
  private agent: Agent | undefined;

  constructor(private readonly options: Agent.Options) {}

  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    this.agent ??= new (loadUndici().Agent)(this.options);
    return this.agent.request(options);
  }

  /** Closes the pool, if a request made one. */
  close(): Promise<void> {
    return this.agent ? this.agent.close() : Promise.resolve();
  }
}
