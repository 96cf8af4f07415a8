/** Shared helpers of integration tests: start nodes on the embedded hive with quiet logs. */
import { PassThrough } from 'node:stream';
import type { ServiceKind } from '../../config/registry.js';
import { HiveNode } from '../../node/node.js';
import { untilHeld, withQueueStore } from './queue-store.js';

/** Starts a node from service entries written like a node file's, logging into a buffer. */
export async function startTestNode(services: Array<{ service: ServiceKind } & Record<string, string | number | boolean>>): Promise<{ node: HiveNode; logs: () => string }> {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  services = await withQueueStore(services);
  const node = await HiveNode.start({
    logStream: stream,
    services: services.map(({ service, ...rest }, i) => ({
      kind: service,
      layers: [{ source: `test services[${i}]`, values: Object.entries(rest).map(([k, v]) => [k, String(v)] as const) }],
    })),
  });
  for (const s of node.services) if (s.kind === 'queue' || s.kind === 'flow') await untilHeld(() => s.running.status());
  return { node, logs: () => chunks.join('') };
}

/** Waits until `cond` holds (a condition that reads asynchronously is awaited: a Promise is never taken for true). */
export const until = async (cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};
