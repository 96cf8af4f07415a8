/** The console's flow graph draws a running flow's steps as arrows to the channels they name (node/wiring.ts). */
import { expect } from 'chai';
import { buildFlow } from '../../../node/console/flow-graph.js';
import type { ConsoleService } from '../../../node/console/sources.js';
import { sendsOf } from '../../../node/wiring.js';
import type { HiveNode } from '../../../node/node.js';
import { flowDir, flowNode, stopFlowNodes } from './helpers.js';

const definition = JSON.stringify({
  steps: [
    { name: 'insert', call: 'orders' },
    { name: 'ship', call: 'shipping', catch: { next: 'undo' } },
    { name: 'fan', parallel: { audit: { emit: 'log' }, notify: { execute: '{{index .Input.Data.to 0}}' } }, end: true },
    { name: 'undo', call: 'orders' },
  ],
});

describe("console: a flow's steps as arrows", function () {
  this.timeout(20_000);
  let node: HiveNode;
  afterEach(stopFlowNodes);

  it('a running flow publishes each literal channel once, labelled with its steps; a template channel is not drawn', async () => {
    expect(sendsOf('flow', { Definition: definition })).to.deep.equal([]);
    ({ node } = await flowNode(flowDir(), definition));
    expect(sendsOf('flow', { Definition: definition })).to.deep.equal([
      { channel: 'orders', label: 'insert, undo' },
      { channel: 'shipping', label: 'ship' },
      { channel: 'log', label: 'audit' },
    ]);
    expect(sendsOf('flow', { Definition: 'hive://order', TemplateChannel: 'DefaultStorageChannel' })).to.deep.equal([
      { channel: 'DefaultStorageChannel', label: 'definition', secondary: true },
    ]);
    const service = (kind: string, name: string, config: Record<string, unknown> = {}): ConsoleService => ({
      kind,
      name,
      channel: name,
      config,
      status: () => ({}),
    });
    const graph = buildFlow([
      service('flow', 'intake', { Definition: definition }),
      service('sql', 'orders'),
      service('httpclient', 'shipping'),
    ]);
    expect(graph.edges.filter((e) => e.channel).map((e) => `${e.from} -${e.label}-> ${e.to}`)).to.have.members([
      'svc:intake -insert, undo-> svc:orders',
      'svc:intake -ship-> svc:shipping',
      'svc:intake -audit-> ch:log',
    ]);
    expect(node.services.some((s) => s.kind === 'flow')).to.equal(true);
  });
});
