/**
 * What each service sent on each channel (node/sent-counts.ts), which the flow's arrows and the
 * roster entries carry, and each service's sends from its configuration (node/wiring.ts).
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { rosterService } from '../../../node/hive-roster.js';
import { HiveNode } from '../../../node/node.js';
import { sendsOf } from '../../../node/wiring.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { until } from '../../support/wait.js';

describe('sent counts: each service counts what it sends, per channel', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it("counts a queue's deliveries and dead letters on their channels, and nothing for what others send to it", async () => {
    node = await HiveNode.start({
      name: 'counts',
      logStream: new PassThrough(),
      services: [
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'target']] }] },
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'dlq']] }] },
        {
          kind: 'queue',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'q'],
                ['PersistPath', ''],
                ['DefaultChannel', 'target'],
                ['DefaultDeadLetterSlap', 'dlq'],
                ['DefaultRequeueCount', '0'],
                ['AllowedChannels', 'target,dlq,nobody'],
              ],
            },
          ],
        },
      ],
    });
    for (let i = 0; i < 5; i++) await node.hive.call('q', makeMessage({ Data: mapOf({ n: [String(i)] }) }), 2000);
    await node.hive.call('q', makeMessage({ Control: mapOf({ channel: ['nobody'] }) }), 2000);
    const q = (): Record<string, number> =>
      Object.fromEntries([...node!.sent.of('q')].map(([channel, c]) => [channel, c.n]));
    await until(() => q().dlq === 1 && q().target === 5);
    expect(q()).to.deep.equal({ target: 5, nobody: 1, dlq: 1 });
    expect(
      [...node.sent.of('target')],
      'the echo service sent nothing: what reaches it is counted by its senders',
    ).to.deep.equal([]);
    const config = node.services.find((s) => s.name === 'q')!;
    expect(config.running.status(), 'in: 6 added; out: 5 delivered and 1 died').to.include({
      added: 6,
      delivered: 5,
      died: 1,
    });
    expect(rosterService({ ...config, status: () => config.running.status() }, node.sent.of('q')).sends).to.deep.equal([
      { channel: 'target', label: 'delivers', sent: 5 },
      { channel: 'dlq', label: 'dead letters', countedBy: 'died', sent: 1 },
    ]);
  });

  it("a gateway counts the requests no route matched (unrouted): OUTPUTCHANNEL's arrow, apart from a route to the same channel", async () => {
    node = await HiveNode.start({
      name: 'counts',
      logStream: new PassThrough(),
      services: [
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'target']] }] },
        {
          kind: 'gateway',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'gw'],
                ['Port', '0'],
                ['Strict', 'true'],
                ['Routes', 'echo=target'],
                ['OUTPUTCHANNEL', 'target'],
              ],
            },
          ],
        },
      ],
    });
    const gw = node.services.find((s) => s.name === 'gw')!;
    const url = `http://127.0.0.1:${String(gw.running.status().port)}`;
    for (const path of ['/echo/a', '/echo/b', '/other/c'])
      expect(
        (await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
          .status,
        path,
      ).to.equal(200);
    expect(gw.running.status()).to.include({ accepted: 3, unrouted: 1 });
    expect(rosterService({ ...gw, status: () => gw.running.status() }, node.sent.of('gw')).sends).to.deep.equal([
      { channel: 'target', label: 'echo', sent: 2 },
      { channel: 'target', label: 'no route matched', countedBy: 'unrouted', sent: 1 },
    ]);
  });

  it('sends from the configuration: one send per channel with the labels of every setting naming it', () => {
    expect(
      sendsOf('gateway', { Routes: 'a=one;b=two;c/*=one', OUTPUTCHANNEL: 'two' }),
      "what no route matched is an arrow of its own, not a label beside route b's",
    ).to.deep.equal([
      { channel: 'one', label: 'a, c/*' },
      { channel: 'two', label: 'b' },
      { channel: 'two', label: 'no route matched', countedBy: 'unrouted' },
    ]);
    expect(sendsOf('queue', { DefaultChannel: 'x', DefaultDeadLetterSlap: '' })).to.deep.equal([
      { channel: 'x', label: 'delivers' },
    ]);
    expect(sendsOf('syslog', { OUTPUTCHANNEL: 'logs', UDP: false, TCP: false, TLS: false })).to.deep.equal([]);
    expect(sendsOf('syslog', { OUTPUTCHANNEL: 'logs', UDP: true })).to.deep.equal([
      { channel: 'logs', label: 'messages' },
    ]);
    expect(sendsOf('syslog', { OUTPUTCHANNEL: 'logs', RELP: true })).to.deep.equal([
      { channel: 'logs', label: 'messages' },
    ]);
    expect(
      sendsOf('sql', { OUTPUTCHANNEL: 'rows', SQL_POLLMODE: true, Template: 'hive://t', TemplateChannel: 'store' }),
    ).to.deep.equal([
      { channel: 'rows', label: 'polled rows' },
      { channel: 'store', label: 'templates', secondary: true },
    ]);
  });
});
