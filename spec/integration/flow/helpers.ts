/** Helpers of the flow integration tests: a node with a flow and echo targets on the embedded hive. */
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { Message, Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { tempDir } from '../../temp.js';

export type ServiceEntry = Parameters<typeof startTestNode>[0][number];

/** Nodes started by flowNode and not yet stopped by stopFlowNodes. */
const started: HiveNode[] = [];

/** A node with the services given, a flow named `flow` of `definition` (JSON of an object) on a store in `dir`; stopped by stopFlowNodes. */
export async function flowNode(
  dir: string,
  definition: unknown,
  flowParams: Record<string, string | number | boolean> = {},
  services: ServiceEntry[] = [],
): Promise<{ node: HiveNode; logs: () => string }> {
  const n = await startTestNode([
    ...services,
    {
      service: 'flow',
      NAME: 'flow',
      Definition: typeof definition === 'string' ? definition : JSON.stringify(definition),
      PersistPath: join(dir, 'store'),
      ...flowParams,
    },
  ]);
  started.push(n.node);
  return n;
}

/** A suite's afterEach: stops every node its test started (a test restarting one stops the old one itself; a second stop does nothing). */
export async function stopFlowNodes(): Promise<void> {
  for (const n of started.splice(0)) await n.stop(2000);
}

/** An echo target recording what it got into `<dir>/<name>.jsonl`. */
export const recordingEcho = (
  dir: string,
  name: string,
  extra: Record<string, string | number | boolean> = {},
): ServiceEntry => ({ service: 'echo', NAME: name, RecordFile: join(dir, `${name}.jsonl`), ...extra });

/** Starts a run by a call with `data` (and `control`); answers what the flow answers. */
export function startRun(
  node: HiveNode,
  data: Record<string, string[]> = {},
  control: Record<string, string[]> = {},
  timeoutMs = 10_000,
): Promise<Result> {
  return node.hive.call(
    'flow',
    makeMessage({ Class: 'order', Operation: 'new', Control: mapOf(control), Data: mapOf(data) }),
    timeoutMs,
  );
}

/** A flow command (`command` control plus `control`), Data `data`. */
export function flowCommand(
  node: HiveNode,
  command: string,
  control: Record<string, string[]> = {},
  data: Record<string, string[]> = {},
): Promise<Result> {
  return node.hive.call(
    'flow',
    makeMessage({ Control: mapOf({ command: [command], ...control }), Data: mapOf(data) }),
    10_000,
  );
}

export const flowDir = (): string => tempDir('hn-flow-');

/** What a scripted target got: each message with the time it came. */
export interface Got {
  at: number;
  message: Message;
}

/**
 * A target on `channel` answering each message with the next of `codes` (the last one repeats), and
 * recording what it got: a flaky HTTP API in a test's hands.
 */
export async function scriptedTarget(
  node: HiveNode,
  channel: string,
  codes: number[],
  data: (m: Message) => Record<string, string[]> = (m) => m.Data,
): Promise<Got[]> {
  const got: Got[] = [];
  await node.hive.listen(channel, (d) => {
    d.ack();
    got.push({ at: Date.now(), message: d.message });
    const code = codes[Math.min(got.length - 1, codes.length - 1)]!;
    d.respond({
      Code: code,
      Message: code < 300 ? 'Success' : `scripted ${code}`,
      Data: mapOf(data(d.message)),
      List: [],
    });
  });
  return got;
}
