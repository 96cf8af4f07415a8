/**
 * A held channel on the NATS hive (actors/hive/transport.ts, ChannelHold): the channel of a queue on
 * JetStream, which one holder serves at a time. Requests that find no listener wait for one until their
 * timeout, then answer 503; a holder known gone has its requests answered 503 at once; a probe tells
 * whether anyone serves, without reaching the listener.
 */
import { expect } from 'chai';
import { NatsTransport } from '../../../actors/hive/nats.js';
import type { Delivery } from '../../../actors/hive/transport.js';
import { hiveAccess } from '../../../config/hive-access.js';
import type { Logger } from '../../../actors/observe/logger.js';
import { makeMessage, mapOf, success } from '../../../protocol/message.js';
import { suiteNatsServer } from './server.js';
import { sleep } from '../../support/wait.js';

const msg = () => makeMessage({ Class: 'test', Operation: 'op', Data: mapOf({ a: ['1'] }) });

describe('NATS hive: a held channel (a queue changing hands)', function () {
  this.timeout(30_000);
  const nats = suiteNatsServer();
  const transports: NatsTransport[] = [];
  const lines: string[] = [];
  const log: Logger = {
    trace() {},
    debug() {},
    info: (m) => lines.push(m),
    warn: (m) => lines.push(m),
    error: (m) => lines.push(m),
    child: () => log,
  };
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });
  const transport = async (): Promise<NatsTransport> => {
    const server = nats();
    const t = new NatsTransport({
      servers: server.url,
      access: hiveAccess({ SERVERAUTH: server.token, SERVERCA: '', SERVERCERT: '', SERVERKEY: '' }),
      name: 'test',
      log,
    });
    await t.connect();
    transports.push(t);
    return t;
  };

  it('a request that finds no listener waits for one and is served by it', async () => {
    const caller = await transport();
    const holder = await transport();
    caller.holdChannel('jq');
    const started = Date.now();
    const answer = caller.callAsync('jq', msg(), 5_000);
    await sleep(400);
    holder.listen('jq', (d) => d.respond(success({ served: ['yes'] })));
    const r = await answer;
    expect(r.Code).to.equal(200);
    expect(r.Data.served).to.deep.equal(['yes']);
    expect(Date.now() - started).to.be.within(400, 2_000);
  });

  it('answers 503 just before the timeout when no listener came; an unheld channel is 404 at once', async () => {
    const caller = await transport();
    const hold = caller.holdChannel('jq');
    const started = Date.now();
    const r = await caller.callAsync('jq', msg(), 800);
    expect(r.Code).to.equal(503);
    expect(r.Message).to.match(/no node serves channel 'jq' yet: the queue there is changing hands/);
    expect(Date.now() - started).to.be.within(500, 800);
    expect((await caller.callAsync('elsewhere', msg(), 5_000)).Code).to.equal(404);
    hold.release();
    const released = Date.now();
    expect((await caller.callAsync('jq', msg(), 5_000)).Code).to.equal(404);
    expect(Date.now() - released).to.be.below(1_000);
  });

  it('answers 503 at once the requests a gone listener had, not those sent after', async () => {
    const caller = await transport();
    const holder = await transport();
    const hold = caller.holdChannel('jq');
    const taken: Delivery[] = [];
    holder.listen('jq', (d) => taken.push(d)); // a holder that never answers: it died with the requests
    await sleep(100);
    const early = caller.callAsync('jq', msg(), 10_000);
    await sleep(100);
    const cut = Date.now();
    await sleep(20);
    const late = caller.callAsync('jq', msg(), 10_000);
    await sleep(100);
    expect(taken).to.have.length(2);
    hold.listenerGone(cut);
    const r = await early;
    expect(r.Code).to.equal(503);
    expect(r.Message).to.match(/stopped while it had this request/);
    taken[1]!.respond(success({ late: ['1'] }));
    expect((await late).Code).to.equal(200);
    expect(lines.join('\n')).to.match(/1 request\(s\) to channel 'jq' answered 503/);
  });

  it('a probe tells whether anyone serves, without reaching the listener', async () => {
    const caller = await transport();
    const holder = await transport();
    const hold = caller.holdChannel('jq');
    expect(await hold.served()).to.equal(false);
    let delivered = 0;
    holder.listen('jq', () => delivered++);
    await sleep(100);
    expect(await hold.served()).to.equal(true);
    expect(delivered).to.equal(0);
  });

  it('a listener that stops (a clean handover) still answers the requests already on their way to it: none waits for its timeout', async () => {
    const caller = await transport();
    const first = await transport();
    const next = await transport();
    caller.holdChannel('jq');
    let handed: Promise<void> | undefined;
    let delivered = 0;
    const sub = first.listen('jq', (d) => {
      // the holder steps down while the burst is arriving: what the server routed to it before is still its own
      if (++delivered === 50)
        handed = Promise.resolve(sub.close()).then(
          () => void next.listen('jq', (n) => n.respond(success({ by: ['next'] }))),
        );
      setImmediate(() => d.respond(success({ by: ['first'] })));
    });
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 2_000 }, () => caller.callAsync('jq', msg(), 5_000)));
    await handed;
    const codes = new Map<number, number>();
    for (const a of answers) codes.set(a.Code, (codes.get(a.Code) ?? 0) + 1);
    expect([...codes.keys()], `answers by Code: ${JSON.stringify([...codes])}`).to.deep.equal([200]);
    expect(
      answers.filter((a) => a.Data.by?.[0] === 'next').length,
      'the next listener served the rest',
    ).to.be.greaterThan(0);
    expect(Date.now() - started, 'no request waited for its timeout').to.be.below(5_000);
  });
});
