/** Helpers of the queue integration tests: a node with a queue and echo targets, and record-file readers. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeNodeFile } from '../../reliability/node-process.js';
import { nodeFileStore } from '../queue-store.js';
import { tempDir as makeTempDir } from '../../temp.js';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';

/** A fresh directory for a queue store, removed when the test process exits. */
export const tempDir = (prefix = 'hn-queue-'): string => makeTempDir(prefix);

/** Messages recorded by an echo RecordFile. */
export function recorded(file: string): Array<{
  time: string;
  mode: string;
  channel: string;
  message: { Class: string; Operation: string; Control: Record<string, string[]>; Data: Record<string, string[]> };
}> {
  if (!existsSync(file)) return [];
  // the echo service may be writing while we read: only lines it has finished (ending in a newline) count
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.pop();
  return lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as never);
}

/** Sends a queue command (controls) with Data to the queue channel. */
export function queueCall(
  node: HiveNode,
  control: Record<string, string[]> = {},
  data: Record<string, string[]> = {},
  channel = 'queue',
): Promise<Result> {
  return node.hive.call(
    channel,
    makeMessage({ Class: 'queue', Operation: 'action', Control: mapOf(control), Data: mapOf(data) }),
    10_000,
  );
}

/**
 * The node file of the SIGKILL tests: a recording target, the queue on its store in `dir` (on
 * JetStream when the suite runs there: queue-store.ts) and a strict gateway allowing `controls`.
 */
export async function killableQueueNode(dir: string, controls: string): Promise<string> {
  const on = await nodeFileStore(join(dir, 'store'));
  return writeNodeFile(
    dir,
    'node',
    [
      `{service: echo, NAME: target, RecordFile: "${join(dir, 'target.jsonl')}"}`,
      `{service: queue, NAME: queue, ${on.store}, DefaultChannel: target}`,
      `{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: queue, ControlAllowList: "${controls}"}`,
    ],
    on.hive,
  );
}
