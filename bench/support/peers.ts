/**
 * The bench-only peers of bench/peers (Node-RED, BullMQ, got), installed by scripts/bench.sh with
 * `npm ci --prefix bench/peers` and never a dependency of hivenode. They are loaded at run time through
 * bench/peers/index.mjs, typed here by the little of their API the benches use, so that the project
 * type-checks and each bench still runs (without the peer figures) when they are not installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { pathToFileURL } from 'node:url';
import { REPO } from '../lib.js';

const peersDir = pathToFileURL(`${REPO}/bench/peers/`);

export interface Got {
  post(
    url: string,
    options: { body: string; headers: Record<string, string>; agent: { http: Agent }; retry: { limit: number } },
  ): Promise<{ statusCode: number; body: string }>;
}

export interface RedisConnection {
  host: string;
  port: number;
  maxRetriesPerRequest: null;
}

export interface BullQueue {
  add(name: string, data: unknown, options: { removeOnComplete: boolean; removeOnFail: boolean }): Promise<unknown>;
  close(): Promise<void>;
}

export interface BullWorker {
  on(event: 'completed', listener: (job: { id?: string }) => void): void;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
}

/** One job of a BullMQ flow (FlowProducer.add): a parent, processed once its children completed. */
export interface BullFlowJob {
  name: string;
  queueName: string;
  data?: unknown;
  opts?: { jobId?: string; removeOnComplete?: boolean; removeOnFail?: boolean };
  children?: BullFlowJob[];
}

export interface BullFlowProducer {
  add(flow: BullFlowJob): Promise<unknown>;
  close(): Promise<void>;
}

export interface Peers {
  got: Got;
  FlowProducer: new (options: { connection: RedisConnection }) => BullFlowProducer;
  Queue: new (name: string, options: { connection: RedisConnection }) => BullQueue;
  Worker: new (
    name: string,
    processor: (job: { data: unknown }) => Promise<unknown>,
    options: { connection: RedisConnection; concurrency: number },
  ) => BullWorker;
  /** Path of Node-RED's command-line entry point (red.js). */
  nodeRedScript: string;
}

/** The installed version of a peer package, for naming it in the figures ('' when not installed). */
export function peerVersion(name: string): string {
  const file = new URL(`node_modules/${name}/package.json`, peersDir);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : '';
}

/** The peers, or undefined (with the reason printed) when bench/peers has not been installed. */
export async function loadPeers(): Promise<Peers | undefined> {
  if (!existsSync(new URL('node_modules/', peersDir))) {
    console.log('bench/peers is not installed (npm ci --prefix bench/peers): peer figures skipped');
    return undefined;
  }
  return (await import(new URL('index.mjs', peersDir).href)) as Peers;
}
