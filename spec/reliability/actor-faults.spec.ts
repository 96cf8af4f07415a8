/**
 * Actor faults: with HIVENODE_FAULT_INJECTION=1, a message carrying `fault_inject: ['throw']` (or
 * 'reject') crashes the service actor that receives it. For every service kind that takes hive
 * messages, the faulted message must be answered 500, the journal must show the crash and the
 * supervisor's restart, and the normal requests sent at the same time must all succeed.
 */
import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serveInterceptor } from '../../actors/interceptor/server.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { FAULT_CONTROL, FAULT_INJECTION_ENV, Fault } from '../../supervisors/fault-injection.js';
import { JournalEvent } from '../../supervisors/journal.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from '../integration/helpers.js';
import { tempDir } from '../integration/queue/helpers.js';
import { closedLoop, describeCodes } from './load.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';

const NORMAL_PER_SERVICE = byScale(200, 2_000);
const FAULTS_PER_SERVICE = byScale(3, 6);
const WORKERS_PER_SERVICE = 4;
/** Channel → a normal request's Data. */
const SERVICES: Record<string, Record<string, string[]>> = {
  echo: { x: ['1'] },
  sql: {},
  exec: {},
  web: {},
  logout: { info: ['battery'] },
  q: { n: ['1'] },
};

describe('reliability: actor faults (fault injection hook)', function () {
  let node: HiveNode | undefined;
  const closers: Array<() => unknown> = [];
  after(async () => {
    await node?.stop(3000);
    for (const close of closers.splice(0)) await close();
  });

  reliabilityTest(
    `every service actor crashed on purpose is restarted while concurrent requests succeed`,
    {
      suite: 'actor faults',
      load: `${Object.keys(SERVICES).length} services (echo, sql, exec, httpclient, syslog sender, queue) × ${NORMAL_PER_SERVICE} normal requests, ${WORKERS_PER_SERVICE} workers each`,
      faults: `${FAULTS_PER_SERVICE} fault_inject messages per service (throw and reject alternating), HIVENODE_FAULT_INJECTION=1`,
    },
    120_000,
    async (figures) => {
      const dir = tempDir('hn-faults-');
      const web = createServer((_req, res) => res.end('{"ok":true}'));
      await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
      const syslogSink = createSocket('udp4');
      await new Promise<void>((r) => syslogSink.bind(0, '127.0.0.1', r));
      // the HTTP client needs an interceptor: a pass-through before mapper
      const mapper = await serveInterceptor(
        (_type, value) => ({ data: (value as { Data: unknown }).Data, status: 'OK', status_code: 200 }),
        0,
      );
      closers.push(
        () => web.close(),
        () => syslogSink.close(),
        () => mapper.close(),
      );

      process.env[FAULT_INJECTION_ENV] = '1';
      try {
        ({ node } = await startTestNode([
          { service: 'echo', NAME: 'echo' },
          {
            service: 'sql',
            NAME: 'sql',
            SQL_DATABASE: join(dir, 'db.sqlite'),
            SQL_RAWMODE: true,
            SQL_RAWACTION: 'query',
            SQL_RAWVALUE: 'SELECT 1 AS one',
          },
          { service: 'exec', NAME: 'exec', Template: '{{setCmd "true"}}' },
          {
            service: 'httpclient',
            NAME: 'web',
            URL: `http://127.0.0.1:${(web.address() as AddressInfo).port}/`,
            Method: 'POST',
            InterceptBefore: `http://127.0.0.1:${mapper.port}/`,
          },
          {
            service: 'syslog',
            NAME: 'logout',
            RemoteIP: '127.0.0.1',
            RemotePort: (syslogSink.address() as AddressInfo).port,
            SendUDP: true,
          },
          { service: 'queue', NAME: 'q', PersistPath: join(dir, 'store'), DefaultChannel: 'echo' },
        ]));
      } finally {
        // only the actors spawned above carry the hook: nothing started later in this process does
        delete process.env[FAULT_INJECTION_ENV];
      }
      const hive = node.hive;
      const results = await Promise.all(
        Object.entries(SERVICES).map(async ([channel, data]) => {
          const faultedCodes: number[] = [];
          const faultMessages: string[] = [];
          // faults go out while the normal load runs, spread over its first half
          const spacing = Math.max(1, Math.floor(NORMAL_PER_SERVICE / 2 / FAULTS_PER_SERVICE));
          const normal = await closedLoop({ workers: WORKERS_PER_SERVICE, total: NORMAL_PER_SERVICE }, async (i) => {
            if (i % spacing === 0 && faultedCodes.length < FAULTS_PER_SERVICE) {
              const fault = faultedCodes.length % 2 === 0 ? Fault.Throw : Fault.Reject;
              faultedCodes.push(0);
              const r = await hive.call(
                channel,
                makeMessage({ Control: mapOf({ [FAULT_CONTROL]: [fault] }), Data: mapOf(data) }),
                10_000,
              );
              faultedCodes[faultedCodes.length - 1] = r.Code;
              faultMessages.push(r.Message);
            }
            return (await hive.call(channel, makeMessage({ Data: mapOf(data) }), 10_000)).Code;
          });
          return { channel, normal, faultedCodes, faultMessages };
        }),
      );

      const journal = node.journal.entries();
      for (const { channel, normal, faultedCodes, faultMessages } of results) {
        const crashes = journal.filter(
          (e) =>
            e.event === JournalEvent.Crash &&
            e.error?.class === 'InjectedFaultError' &&
            e.path.includes(`/${channel}/`),
        );
        const crashedPaths = new Set(crashes.map((e) => e.path));
        const restarts = journal.filter((e) => e.event === JournalEvent.Restart && crashedPaths.has(e.path));
        figures[`${channel}: normal answers`] = describeCodes(normal);
        figures[`${channel}: faulted answers`] = faultedCodes.join(' ');
        figures[`${channel}: crashes / restarts in the journal`] = `${crashes.length} / ${restarts.length}`;
        expect(faultedCodes, `${channel}: faulted messages`).to.deep.equal(Array(FAULTS_PER_SERVICE).fill(500));
        for (const m of faultMessages) expect(m, channel).to.match(/fault injected/);
        expect(crashes.length, `${channel}: injected crashes in the journal`).to.equal(FAULTS_PER_SERVICE);
        expect(restarts.length, `${channel}: restarts in the journal`).to.equal(FAULTS_PER_SERVICE);
        expect(describeCodes(normal), `${channel}: normal requests`).to.equal(`200×${NORMAL_PER_SERVICE}`);
      }
      // the crashed actors are still serving after the battery
      for (const [channel, data] of Object.entries(SERVICES))
        expect((await hive.call(channel, makeMessage({ Data: mapOf(data) }), 10_000)).Code, channel).to.equal(200);
    },
  );

  reliabilityTest(
    'without HIVENODE_FAULT_INJECTION the control is inert: nothing crashes',
    {
      suite: 'actor faults',
      load: '20 echo requests',
      faults: 'fault_inject controls sent to a node started without the variable',
    },
    20_000,
    async (figures) => {
      const plain = await startTestNode([{ service: 'echo', NAME: 'plain' }]);
      try {
        const codes: number[] = [];
        for (let i = 0; i < 20; i++)
          codes.push(
            (
              await plain.node.hive.call(
                'plain',
                makeMessage({ Control: mapOf({ [FAULT_CONTROL]: [i % 2 ? Fault.Throw : Fault.Reject] }) }),
                5_000,
              )
            ).Code,
          );
        const crashes = plain.node.journal.entries().filter((e) => e.event === JournalEvent.Crash).length;
        figures['answers'] = describeCodes(codes.map((code) => ({ sentMs: 0, atMs: 0, code })));
        figures['crashes in the journal'] = crashes;
        expect(codes).to.deep.equal(Array(20).fill(200));
        expect(crashes).to.equal(0);
      } finally {
        await plain.node.stop(2000);
      }
    },
  );
});
