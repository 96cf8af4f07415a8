/** Shared helpers of integration tests: start nodes on the embedded hive with quiet logs. */
import { PassThrough } from 'node:stream';
import type { ServiceKind } from '../../config/registry.js';
import { HiveNode } from '../../node/node.js';
import { untilHeld, withQueueStore } from './queue-store.js';

/** Starts a node from service entries written like a node file's, logging into a buffer. */
export async function startTestNode(
  services: Array<{ service: ServiceKind } & Record<string, string | number | boolean>>,
): Promise<{ node: HiveNode; logs: () => string }> {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  services = await withQueueStore(services);
  const node = await HiveNode.start({
    logStream: stream,
    services: services.map(({ service, ...rest }, i) => ({
      kind: service,
      layers: [
        { source: `test services[${i}]`, values: Object.entries(rest).map(([k, v]) => [k, String(v)] as const) },
      ],
    })),
  });
  for (const s of node.services) if (s.kind === 'queue' || s.kind === 'flow') await untilHeld(() => s.running.status());
  return { node, logs: () => chunks.join('') };
}
