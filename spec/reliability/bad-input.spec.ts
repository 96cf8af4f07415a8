/**
 * Bad input at every door: malformed protocol messages (wrong shapes, prototype keys) over the NATS
 * hive and as HTTP bodies, fuzzed header bytes on raw sockets, and malformed syslog datagrams by the
 * ten thousand. Expected: no crash, clear 4xx answers where there is someone to answer, and every door
 * still serving afterwards. (Parser-level fuzz lives in spec/unit: syslog/fuzz.spec.ts mutates
 * 100,000 lines, template/fuzz.spec.ts runs 10,000 random templates, in every `make test`; the
 * battery's own template fuzz is template-fuzz.spec.ts.)
 */
import { connect } from '@nats-io/transport-node';
import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { request } from 'undici';
import { makeMessage } from '../../protocol/message.js';
import { JournalEvent } from '../../supervisors/journal.js';
import type { HiveNode } from '../../node/node.js';
import type { NatsServer } from '../adapters/nats/server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from '../adapters/nats/server.js';
import { freePort } from '../adapters/ports.js';
import type { RunningGateway } from '../integration/gateway-harness.js';
import { rawExchange, startGateway } from '../integration/gateway-harness.js';
import { startTestNode } from '../integration/helpers.js';
import { prng } from '../prng.js';
import type { BadPayload } from './bad-shapes.js';
import { randomJson, wrongBodies, wrongMessages } from './bad-shapes.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep, until } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const RANDOM_PAYLOADS = byScale(2_000, 20_000);
const RAW_REQUESTS = byScale(300, 3_000);
const SYSLOG_LINES = byScale(10_000, 100_000);

/** Sorts answers into refused-as-required, other 4xx, 200 and anything else (a failure). */
function tally(answers: Array<{ payload: BadPayload; code: number | undefined }>): {
  figures: string;
  wrong: string[];
} {
  const counts: Record<string, number> = {};
  const wrong: string[] = [];
  for (const { payload, code } of answers) {
    counts[String(code)] = (counts[String(code)] ?? 0) + 1;
    const ok = payload.mustRefuse ? code === 400 : code === 200 || (code !== undefined && code >= 400 && code < 500);
    if (!ok) wrong.push(`${code} for ${payload.text.slice(0, 120)}`);
  }
  return {
    figures: Object.entries(counts)
      .map(([c, n]) => `${c}×${n}`)
      .join(' '),
    wrong,
  };
}

const crashesOf = (node: HiveNode): number =>
  node.journal.entries().filter((e) => e.event === JournalEvent.Crash).length;

describe('reliability: bad input at every door', function () {
  let nats: NatsServer | undefined;
  let node: HiveNode | undefined;
  let gateway: RunningGateway | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    await gateway?.stop();
    await nats?.stop();
    node = gateway = nats = undefined;
  });

  reliabilityTest(
    'malformed messages and prototype keys over the NATS hive are answered 400, the service keeps serving',
    {
      suite: 'bad input',
      load: `${wrongMessages().length} hand-picked wrong shapes + ${RANDOM_PAYLOADS} seeded random JSON payloads as NATS requests`,
      faults: 'wrong types, missing fields, invalid JSON, __proto__/constructor/prototype keys',
    },
    byScale(60_000, 300_000),
    async (figures, skip) => {
      requireInstalled(natsServerAvailable(), NATS_MISSING, skip);
      nats = await natsServer();
      ({ node } = await startTestNode([
        { service: 'echo', NAME: 'echo', SERVERHOST: nats.url, SERVERAUTH: nats.token },
      ]));
      const nc = await connect({ servers: nats.url, token: nats.token });
      try {
        const answers = [];
        for (const payload of [...wrongMessages(), ...randomJson(0xbad, RANDOM_PAYLOADS)]) {
          const reply = await nc.request('hive.echo', new TextEncoder().encode(payload.text), { timeout: 5_000 });
          answers.push({ payload, code: (JSON.parse(new TextDecoder().decode(reply.data)) as { Code: number }).Code });
        }
        const { figures: codes, wrong } = tally(answers);
        figures['answers'] = codes;
        figures['crashes'] = crashesOf(node);
        expect(wrong, 'payloads answered wrongly').to.deep.equal([]);
        expect(crashesOf(node)).to.equal(0);
        expect((await node.hive.call('echo', makeMessage({}), 5_000)).Code, 'still serving').to.equal(200);
      } finally {
        await nc.close();
      }
    },
  );

  reliabilityTest(
    'fuzzed HTTP bodies and header bytes get 4xx (never 5xx, never silence), the gateway keeps serving',
    {
      suite: 'bad input',
      load: `${wrongBodies().length} wrong bodies + ${RANDOM_PAYLOADS} random JSON bodies + ${RAW_REQUESTS} raw requests with random header bytes`,
      faults: 'wrong shapes, prototype keys, invalid JSON, CR/LF/NUL/8-bit bytes in header names and values',
    },
    byScale(90_000, 600_000),
    async (figures) => {
      gateway = await startGateway();
      const bodies = [];
      for (const payload of [...wrongBodies(), ...randomJson(0xb0d7, RANDOM_PAYLOADS)]) {
        const r = await request(`${gateway.base}/fuzz/op`, {
          method: 'POST',
          body: payload.text,
          headers: { 'content-type': 'application/json' },
        });
        await r.body.dump();
        bodies.push({ payload, code: r.statusCode });
      }
      const rnd = prng(0x4ead);
      const byte = (): string => String.fromCharCode(Math.floor(rnd() * 256));
      const headers = [];
      for (let i = 0; i < RAW_REQUESTS; i++) {
        const name = Array.from({ length: 1 + Math.floor(rnd() * 12) }, byte).join('');
        const value = Array.from({ length: Math.floor(rnd() * 40) }, byte).join('');
        const raw = Buffer.from(
          `POST /fuzz/op HTTP/1.1\r\nHost: x\r\n${name}: ${value}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
          'latin1',
        );
        headers.push({
          payload: { text: JSON.stringify(`${name}: ${value}`), mustRefuse: false },
          code: (await rawExchange(gateway.port, raw, 3_000)).status,
        });
      }
      const b = tally(bodies);
      const h = tally(headers);
      figures['body answers'] = b.figures;
      figures['raw header answers'] = h.figures;
      figures['crashes'] = crashesOf(gateway.node);
      expect(b.wrong, 'bodies answered wrongly').to.deep.equal([]);
      expect(h.wrong, 'raw requests answered wrongly').to.deep.equal([]);
      expect(crashesOf(gateway.node)).to.equal(0);
      expect((await fetch(`${gateway.base}/healthcheck`)).status, 'still serving').to.equal(200);
    },
  );

  reliabilityTest(
    `${SYSLOG_LINES} malformed syslog datagrams: no crash, counted, the receiver keeps receiving`,
    {
      suite: 'bad input',
      load: `${SYSLOG_LINES} UDP datagrams of random bytes and damaged syslog headers to a syslog receiver`,
      faults: 'random bytes, bad PRI, truncated headers, NUL and 8-bit bytes',
    },
    byScale(60_000, 300_000),
    async (figures) => {
      const port = await freePort();
      ({ node } = await startTestNode([
        { service: 'echo', NAME: 'logs' },
        { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', Port: port, UDP: true, OUTPUTCHANNEL: 'logs' },
      ]));
      const counters = (): { received: number; invalid: number; dropped: number } =>
        node!.services.find((s) => s.kind === 'syslog')!.running.status() as never;
      const rnd = prng(0x5151);
      const heads = ['<', '<999>', '<13>1 ', '<13>Mar 32 25:61:61 ', '<-1>', '<13>1 9999-99-99T99:99:99Z ', ''];
      const socket = createSocket('udp4');
      for (let i = 0; i < SYSLOG_LINES; i++) {
        const body = Buffer.from(Array.from({ length: Math.floor(rnd() * 200) }, () => Math.floor(rnd() * 256)));
        const line = Buffer.concat([Buffer.from(heads[i % heads.length]!, 'latin1'), body]);
        await new Promise<void>((resolve) => socket.send(line, port, '127.0.0.1', () => resolve()));
        // UDP has no flow control: every 500 datagrams, let the receiver catch up (bounded) so the kernel
        // buffer does not overflow and the test measures the receiver, not the sender's speed
        if (i % 500 === 499)
          await until(() => counters().received + counters().invalid >= i - 500, 2_000).catch(() => undefined);
      }
      // the receiver is done with the flood when its counters stop moving
      let last = -1;
      for (let waited = 0; waited < 30_000 && counters().received + counters().invalid !== last; waited += 300) {
        last = counters().received + counters().invalid;
        await sleep(300);
      }
      const afterFlood = counters();
      await new Promise<void>((resolve) =>
        socket.send(Buffer.from('<13>Mar 15 10:00:00 host app: still listening'), port, '127.0.0.1', () => resolve()),
      );
      await until(() => counters().received > afterFlood.received, 5_000).catch(() => undefined);
      socket.close();
      const final = counters();
      figures['received (decoded) / invalid / dropped'] =
        `${afterFlood.received} / ${afterFlood.invalid} / ${afterFlood.dropped}`;
      figures['datagrams sent'] = SYSLOG_LINES;
      figures['crashes'] = crashesOf(node);
      expect(crashesOf(node)).to.equal(0);
      expect(afterFlood.received + afterFlood.invalid, 'datagrams handled').to.be.at.least(SYSLOG_LINES * 0.9);
      expect(final.received, 'a valid line after the flood is received').to.equal(afterFlood.received + 1);
    },
  );
});
