/** Helpers of the flow integration tests: a node with a flow and echo targets on the embedded hive. */
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { tempDir } from '../../temp.js';

export type ServiceEntry = Parameters<typeof startTestNode>[0][number];

/** A node with the services given, a flow named `flow` of `definition` (JSON of an object) on a store in `dir`. */
export async function flowNode(dir: string, definition: unknown, flowParams: Record<string, string | number | boolean> = {}, services: ServiceEntry[] = []): Promise<{ node: HiveNode; logs: () => string }> {
  return startTestNode([...services, { service: 'flow', NAME: 'flow', Definition: typeof definition === 'string' ? definition : JSON.stringify(definition), PersistPath: join(dir, 'store'), ...flowParams }]);
}

/** An echo target recording what it got into `<dir>/<name>.jsonl`. */
export const recordingEcho = (dir: string, name: string, extra: Record<string, string | number | boolean> = {}): ServiceEntry => ({ service: 'echo', NAME: name, RecordFile: join(dir, `${name}.jsonl`), ...extra });

/** Starts a run by a call with `data` (and `control`); answers what the flow answers. */
export function startRun(node: HiveNode, data: Record<string, string[]> = {}, control: Record<string, string[]> = {}, timeoutMs = 10_000): Promise<Result> {
  return node.hive.call('flow', makeMessage({ Class: 'order', Operation: 'new', Control: mapOf(control), Data: mapOf(data) }), timeoutMs);
}

/** A flow command (`command` control plus `control`), Data `data`. */
export function flowCommand(node: HiveNode, command: string, control: Record<string, string[]> = {}, data: Record<string, string[]> = {}): Promise<Result> {
  return node.hive.call('flow', makeMessage({ Control: mapOf({ command: [command], ...control }), Data: mapOf(data) }), 10_000);
}

export const flowDir = (): string => tempDir('hn-flow-');
