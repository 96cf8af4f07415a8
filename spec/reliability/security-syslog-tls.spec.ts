/**
 * Security of syslog over TLS and of the receiver's AllowFrom, through real sockets: wrong, expired
 * and missing certificates refused both ways (the receiver facing clients, the sender facing
 * servers), plain text on the TLS port, and sources outside AllowFrom over UDP, TCP and TLS.
 * Expected: nothing refused is delivered, every refusal is counted, each reason is logged once (not
 * once per attempt), the sender keeps what it could not send, and every listener keeps serving.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../node/node.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { freePort } from '../adapters/ports.js';
import { certPath } from '../certs.js';
import { startTestNode } from '../integration/helpers.js';
import { recorded, tempDir } from '../integration/queue/helpers.js';
import { status, tcpFrom, tlsFiles, tlsSend, tlsSyslogServer, udpFrom } from '../integration/syslog-tls-peers.js';
import type { TlsSyslogServer } from '../integration/syslog-tls-peers.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep, until } from '../support/wait.js';

const ATTEMPTS = byScale(5, 50);
const PLAIN_CONNECTIONS = byScale(20, 500);
const REFUSED_SOURCES = byScale(3, 20);
const SENDER_SECONDS = byScale(3, 20);
const LINE = '<13>Nov 24 10:00:01 host app: refused\n';
const plan = (load: string, faults: string) => ({ suite: 'security', load, faults });
const countOf = (text: string, re: RegExp): number => text.match(re)?.length ?? 0;

describe('reliability: security of syslog over TLS and AllowFrom', function () {
  let node: HiveNode | undefined;
  let peer: TlsSyslogServer | undefined;
  afterEach(async () => {
    await Promise.all([node?.stop(2000), peer?.close()]);
    [node, peer] = [undefined, undefined];
  });

  reliabilityTest(
    'receiver with TLSClientAuth require: clients with a certificate of another CA, an expired one or none are refused, counted, logged once per reason',
    plan(
      `${ATTEMPTS} TLS connections per bad certificate (other CA, expired, none), then one with a valid client certificate`,
      'wrong CA, expired and missing client certificates',
    ),
    60_000,
    async (figures) => {
      const record = join(tempDir('hn-sec-syslog-'), 'r.jsonl');
      let logs: () => string;
      ({ node, logs } = await startTestNode([
        { service: 'echo', NAME: 'logs', RecordFile: record },
        {
          service: 'syslog',
          NAME: 'rx',
          IP: '127.0.0.1',
          Port: 0,
          ...tlsFiles,
          TLSCA: certPath('ca.pem'),
          TLSClientAuth: 'require',
          OUTPUTCHANNEL: 'logs',
        },
      ]));
      const port = status(node, 'rx').tlsPort as number;
      const bad = [
        ['other CA', { cert: 'other-client.pem', key: 'other-client.key' }],
        ['expired', { cert: 'client-expired.pem', key: 'client-expired.key' }],
        ['none', {}],
      ] as const;
      for (const [, cert] of bad)
        for (let i = 0; i < ATTEMPTS; i++) await tlsSend(port, LINE, { ...cert, lingerMs: 50 });
      expect(
        await tlsSend(port, '<13>Nov 24 10:00:01 host app: alice\n', {
          cert: 'client-alice.pem',
          key: 'client-alice.key',
        }),
      ).to.deep.equal({ connected: true });
      await until(
        () => recorded(record).length === 1 && status(node!, 'rx').tlsRefused === bad.length * ATTEMPTS,
        10_000,
      );
      await sleep(200);
      const refusedLines = countOf(logs(), /syslog TLS handshake from .* refused/g);
      Object.assign(figures, {
        attempts: bad.length * ATTEMPTS,
        tlsRefused: status(node, 'rx').tlsRefused as number,
        delivered: recorded(record).length,
        warnings: refusedLines,
      });
      expect(recorded(record).map((r) => r.message.Data.message![0])).to.deep.equal(['alice']);
      expect(refusedLines, 'one warning per distinct reason').to.be.within(1, bad.length);
    },
  );

  reliabilityTest(
    'sender with SendTLS: a server of another CA, an expired server certificate, a server requiring a client certificate — nothing sent, kept, counted, logged once each',
    plan(
      `2 messages per sender, ${SENDER_SECONDS} s of reconnecting with backoff`,
      'server certificate of an untrusted CA; expired server certificate; server requiring a client certificate the sender has not',
    ),
    60_000,
    async (figures) => {
      const servers = {
        other: await tlsSyslogServer({ cert: 'other-server.pem', key: 'other-server.key' }),
        expired: await tlsSyslogServer({ cert: 'server-expired.pem', key: 'server-expired.key' }),
        mtls: await tlsSyslogServer({ requireClientCert: true }),
      };
      let logs: () => string;
      try {
        ({ node, logs } = await startTestNode(
          Object.entries(servers).map(([name, s]) => ({
            service: 'syslog' as const,
            NAME: name,
            RemoteIP: '127.0.0.1',
            RemotePort: s.port,
            SendTLS: true,
            RemoteCA: certPath('ca.pem'),
          })),
        ));
        for (const name of Object.keys(servers))
          await node.hive.call(name, makeMessage({ Data: mapOf({ info: ['one', 'two'] }) }), 5000);
        await sleep(SENDER_SECONDS * 1000);
        for (const [name, s] of Object.entries(servers)) {
          const st = status(node, name);
          figures[`${name}Failures`] = st.sendFailures as number;
          figures[`${name}Buffered`] = st.sendBuffered as number;
          figures[`${name}Delivered`] = s.frames.length;
          expect(s.frames, name).to.deep.equal([]);
          expect(st, name).to.deep.include({ sent: 0, sendBuffered: 2 });
          expect(st.sendFailures as number, name).to.be.at.least(2);
        }
        figures.warnings = countOf(logs(), /syslog sender cannot connect/g);
        expect(figures.warnings, 'one warning per sender').to.equal(3);
      } finally {
        for (const s of Object.values(servers)) await s.close();
      }
    },
  );

  reliabilityTest(
    'plain text on the TLS receiver port: each connection closed and counted, the listener keeps serving TLS',
    plan(
      `${PLAIN_CONNECTIONS} plain-text TCP connections sending a syslog line, then one TLS client`,
      'plain text instead of a TLS handshake',
    ),
    60_000,
    async (figures) => {
      const record = join(tempDir('hn-sec-syslog-'), 'r.jsonl');
      ({ node } = await startTestNode([
        { service: 'echo', NAME: 'logs', RecordFile: record },
        { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', Port: 0, ...tlsFiles, OUTPUTCHANNEL: 'logs' },
      ]));
      const port = status(node, 'rx').tlsPort as number;
      // all at once: on a loaded machine the receiver closes the last of them seconds after they connected
      const ends = await Promise.all(
        Array.from({ length: PLAIN_CONNECTIONS }, () => tcpFrom('127.0.0.1', port, LINE, 10_000)),
      );
      expect(await tlsSend(port, '<13>Nov 24 10:00:01 host app: after\n')).to.deep.equal({ connected: true });
      await until(() => recorded(record).length === 1 && status(node!, 'rx').tlsRefused === PLAIN_CONNECTIONS, 10_000);
      Object.assign(figures, {
        plainConnections: PLAIN_CONNECTIONS,
        closedByReceiver: ends.filter((e) => e === 'closed by peer').length,
        tlsRefused: status(node, 'rx').tlsRefused as number,
        delivered: recorded(record).length,
        openConnections: status(node, 'rx').connections as number,
      });
      expect(figures.closedByReceiver).to.equal(PLAIN_CONNECTIONS);
    },
  );

  reliabilityTest(
    'AllowFrom 127.0.0.1: UDP, TCP and TLS from other loopback addresses dropped, counted per source; the allowed source delivered',
    plan(
      `from each of ${REFUSED_SOURCES} addresses 127.0.0.2… : ${ATTEMPTS} UDP datagrams, ${ATTEMPTS} TCP and ${ATTEMPTS} TLS connections; the same from 127.0.0.1`,
      'sources outside AllowFrom',
    ),
    60_000,
    async (figures) => {
      const record = join(tempDir('hn-sec-syslog-'), 'r.jsonl');
      const [plainPort, tlsPort] = [await freePort(), await freePort()];
      ({ node } = await startTestNode([
        { service: 'echo', NAME: 'logs', RecordFile: record },
        {
          service: 'syslog',
          NAME: 'plain',
          IP: '127.0.0.1',
          Port: plainPort,
          UDP: true,
          TCP: true,
          AllowFrom: '127.0.0.1',
          OUTPUTCHANNEL: 'logs',
        },
        {
          service: 'syslog',
          NAME: 'tls',
          IP: '127.0.0.1',
          Port: tlsPort,
          ...tlsFiles,
          AllowFrom: '127.0.0.1/32',
          OUTPUTCHANNEL: 'logs',
        },
      ]));
      const sources = Array.from({ length: REFUSED_SOURCES }, (_, i) => `127.0.0.${i + 2}`);
      let tlsConnected = 0;
      for (const from of [...sources, '127.0.0.1']) {
        for (let i = 0; i < ATTEMPTS; i++) {
          await udpFrom(from, plainPort, `<13>Nov 24 10:00:01 host app: udp ${from}`);
          await tcpFrom(from, plainPort, `<13>Nov 24 10:00:01 host app: tcp ${from}\n`);
          if (
            (
              await tlsSend(tlsPort, `<13>Nov 24 10:00:01 host app: tls ${from}\n`, {
                localAddress: from,
                lingerMs: 20,
              })
            ).connected &&
            from !== '127.0.0.1'
          )
            tlsConnected++;
        }
      }
      const allowed = 3 * ATTEMPTS;
      await until(() => recorded(record).length >= allowed, 10_000);
      await sleep(200);
      const plain = status(node, 'plain');
      const tls = status(node, 'tls');
      const delivered = recorded(record).map((r) => r.message.Data.message![0]!);
      Object.assign(figures, {
        refusedSources: REFUSED_SOURCES,
        notAllowedUdpTcp: plain.notAllowed as number,
        notAllowedTls: tls.notAllowed as number,
        tlsHandshakesFromRefused: tlsConnected,
        deliveredAllowed: delivered.length,
        deliveredRefused: delivered.filter((m) => !m.endsWith(' 127.0.0.1')).length,
      });
      expect(delivered.every((m) => m.endsWith(' 127.0.0.1'))).to.equal(true);
      expect(delivered).to.have.length(allowed);
      expect(plain.notAllowed).to.equal(2 * ATTEMPTS * REFUSED_SOURCES);
      expect(tls).to.deep.include({ notAllowed: ATTEMPTS * REFUSED_SOURCES, tlsRefused: 0 });
      expect(tlsConnected, 'refused before the handshake').to.equal(0);
      const perSource = plain.notAllowedFrom as Record<string, number>;
      for (const from of sources) expect(perSource[from], from).to.equal(2 * ATTEMPTS);
    },
  );
});
