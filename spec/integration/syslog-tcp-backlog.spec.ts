/**
 * The plain-TCP syslog receiver's backlog bound (actors/syslog/emit-backlog.ts): a sender faster than
 * the hive is slowed through TCP's window — the receiver stops reading while too many messages wait
 * for the hive's bridge, and reads again once they have been passed on — and nothing is lost.
 */
import { expect } from 'chai';
import { connect } from 'node:net';
import type { Logger } from '../../actors/observe/logger.js';
import type { HiveClient } from '../../actors/hive/client.js';
import { frameOctetCounted } from '../../actors/syslog/format.js';
import type { RunningReceiver } from '../../actors/syslog/receiver.js';
import { startReceiver } from '../../actors/syslog/receiver.js';
import type { Message } from '../../protocol/message.js';
import { until } from '../support/wait.js';

describe('syslog TCP receiver: a backlog the hive has not taken stops the reading (integration)', function () {
  this.timeout(60_000);
  let receiver: RunningReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('holds back reading while 512 messages wait for the bridge, then takes every frame once they pass', async () => {
    /** A hive whose bridge passes nothing on until told to. */
    const held: Array<() => void> = [];
    const got: string[] = [];
    const hive = {
      emitTold(_channel: string, message: Message, delivered: (d: boolean) => void) {
        held.push(() => {
          got.push(message.Data.message![0]!);
          delivered(true);
        });
      },
    } as unknown as HiveClient;
    const log = { warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as Logger;
    receiver = await startReceiver(
      {
        name: 'rx',
        ip: '127.0.0.1',
        port: 0,
        udp: false,
        tcp: true,
        format: 'RFC5424',
        decodeCEF: false,
        cls: 'syslog',
        operation: 'message',
        channel: 'logs',
        maxMessageBytes: 8192,
        maxConnections: 4,
      },
      hive,
      log,
    );
    const TOTAL = 20_000;
    const frames = Buffer.concat(
      Array.from({ length: TOTAL }, (_, i) =>
        frameOctetCounted(`<134>1 2024-03-15T11:22:33.123Z web01 app - - - message ${i}`),
      ),
    );
    const sock = connect(receiver.tcpPort!, '127.0.0.1');
    sock.on('error', () => undefined);
    sock.write(frames);
    // the receiver reads a chunk or a few, then stops: far fewer than TOTAL are taken while the bridge holds them
    await until(() => receiver!.counters.received >= 512, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    const whileHeld = receiver.counters.received;
    expect(whileHeld, 'read while the backlog is full').to.be.below(4096);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.counters.received, 'no more read while nothing passes').to.equal(whileHeld);
    // the bridge passes everything on as it comes: every frame arrives, in order
    const pass = (): void => {
      for (const f of held.splice(0)) f();
    };
    const timer = setInterval(pass, 5);
    try {
      await until(() => got.length === TOTAL, 30_000);
    } finally {
      clearInterval(timer);
      sock.destroy();
    }
    expect(got[0]).to.equal('message 0');
    expect(got[TOTAL - 1]).to.equal(`message ${TOTAL - 1}`);
    expect(new Set(got).size).to.equal(TOTAL);
    expect(receiver.counters.received).to.equal(TOTAL);
    expect(receiver.counters.dropped).to.equal(0);
  });
});
