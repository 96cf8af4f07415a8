/**
 * Changing a running node (README, Changing a running node), with real node processes and SIGHUP:
 *
 * - Under a bounded load at 32 connections (POSTs) through the (strict) gateway to an echo service, 10 reloads change
 *   the echo's ReplyCode, add and remove a route and a service, and change the gateway's
 *   ResponseHeaders: no request fails (no socket error, no non-2xx), and each change answers within
 *   1 s of its signal.
 * - A queue with 1,000 waiting entries and a delivery under way: a reload changing its
 *   DefaultRequeueTime (and its target's Delay) loses none and delivers none twice.
 * - Invalid files (bad YAML, an unknown parameter, a template that does not parse, a TLS key that
 *   is not its certificate's) are refused, one line each, and the node serves on as it was.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort } from '../adapters/ports.js';
import { certPath } from '../certs.js';
import { recorded } from '../integration/queue/helpers.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { sleep } from '../support/wait.js';

const RELOADS = 10;
const CONNECTIONS = 32;
const count = (text: string, re: RegExp): number => text.match(new RegExp(re.source, 'g'))?.length ?? 0;

/** Resolves once `ok` holds, polling every 10 ms; rejects after `ms` naming `what`. */
async function within(ms: number, what: string, ok: () => Promise<boolean> | boolean): Promise<number> {
  const began = Date.now();
  for (;;) {
    if (await ok()) return Date.now() - began;
    if (Date.now() - began > ms) throw new Error(`${what} not seen within ${ms} ms`);
    await sleep(10);
  }
}

describe('reliability: reloading a running node', function () {
  let node: NodeProcess | undefined;
  afterEach(async () => {
    await node?.kill('SIGTERM');
    node = undefined;
  });

  reliabilityTest(
    'reload under load: 10 reloads through SIGHUP, 32 connections, no failed request, each change within 1 s',
    {
      suite: 'load',
      load: `${CONNECTIONS} keep-alive connections sending POSTs through the gateway to an echo for the whole run`,
      faults: `${RELOADS} reloads (SIGHUP): echo ReplyCode, a route and a service added and removed, the gateway's ResponseHeaders`,
    },
    120_000,
    async (figures) => {
      const dir = tempDir('hn-reload-load-');
      const port = await freePort();
      const write = (i: number): string =>
        writeNodeFile(dir, 'node', [
          `{service: echo, NAME: echo, ReplyCode: ${200 + (i % 2)}}`,
          ...(i % 2 === 1 ? ['{service: echo, NAME: extra}'] : []),
          `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "${i % 2 === 1 ? 'a=echo;b=extra' : 'a=echo'}", ResponseHeaders: "X-Config: v${i}"}`,
        ]);
      node = await startNodeProcess(write(0));
      const base = `http://127.0.0.1:${port}`;
      const load = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 60_000 });
      const probe = new Agent({ connections: 2 });
      let stop = false;
      let ok = 0;
      const failures: string[] = [];
      const workers = Array.from({ length: CONNECTIONS }, async () => {
        while (!stop) {
          try {
            const res = await request(`${base}/a/x`, { method: 'POST', body: '{}', dispatcher: load });
            await res.body.dump();
            if (res.statusCode >= 200 && res.statusCode < 300) ok++;
            else failures.push(`HTTP ${res.statusCode}`);
          } catch (e) {
            failures.push((e as Error).message);
          }
        }
      });
      const seen: number[] = [];
      try {
        await sleep(300);
        for (let i = 1; i <= RELOADS; i++) {
          write(i);
          const applied = count(node.output(), /reload applied/);
          node.child.kill('SIGHUP');
          seen.push(
            await within(1_000, `reload ${i}`, async () => {
              const a = await request(`${base}/a/x`, { method: 'POST', body: '{}', dispatcher: probe });
              await a.body.dump();
              const b = await request(`${base}/b/x`, { method: 'POST', body: '{}', dispatcher: probe });
              await b.body.dump();
              return (
                a.headers['x-config'] === `v${i}` &&
                a.statusCode === 200 + (i % 2) &&
                (i % 2 === 1 ? b.statusCode === 200 : b.statusCode === 404)
              );
            }),
          );
          await within(5_000, `reload ${i} applied`, () => count(node!.output(), /reload applied/) > applied);
          await sleep(100);
        }
      } finally {
        stop = true;
        await Promise.all(workers);
        await load.close();
        await probe.close();
      }
      figures.requests = ok;
      figures.failed = failures.length;
      figures.slowest_change_ms = Math.max(...seen);
      expect(failures.slice(0, 5), `${failures.length} failed requests`).to.deep.equal([]);
      expect(ok).to.be.greaterThan(1000);
      expect(count(node.output(), /reload applied/)).to.equal(RELOADS);
      expect(node.output()).not.to.match(/reload refused/);
    },
  );

  reliabilityTest(
    'reload of a queue: 1,000 waiting entries and a delivery under way, DefaultRequeueTime changed: none lost, none twice',
    {
      suite: 'load',
      load: '1,000 entries added to a paused queue (SQLite store), one delivered by step to an echo answering after 2 s',
      faults:
        "a reload (SIGHUP) changing the queue's DefaultRequeueTime and the echo's Delay while that delivery is under way",
    },
    120_000,
    async (figures) => {
      const dir = tempDir('hn-reload-queue-');
      const port = await freePort();
      const record = join(dir, 'target.jsonl');
      const write = (requeue: number, delay: number): string =>
        writeNodeFile(dir, 'node', [
          `{service: echo, NAME: target, RecordFile: "${record}", Delay: ${delay}}`,
          `{service: queue, NAME: queue, PersistPath: "${join(dir, 'store')}", DefaultChannel: target, StartPaused: true, DefaultRequeueTime: ${requeue}}`,
          `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "queue=queue", ControlAllowList: "command"}`,
        ]);
      node = await startNodeProcess(write(30, 2000));
      const agent = new Agent({ connections: 16 });
      const post = async (data: Record<string, string[]>, command?: string): Promise<number> => {
        const res = await request(`http://127.0.0.1:${port}/queue/action`, {
          method: 'POST',
          body: JSON.stringify(data),
          headers: { 'content-type': 'application/json', ...(command ? { command } : {}) },
          dispatcher: agent,
        });
        await res.body.dump();
        return res.statusCode;
      };
      try {
        let next = 0;
        const codes: number[] = [];
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (next < 1000) codes.push(await post({ n: [String(next++)] }));
          }),
        );
        expect(codes.filter((c) => c !== 200)).to.deep.equal([]);
        // one delivery under way (the echo answers after 2 s) when the reload comes
        // (a step is answered once its delivery is: not awaited here)
        const stepped = post({}, 'step');
        await within(2_000, 'the stepped delivery', () => recorded(record).length === 1);
        write(5, 0);
        const signalled = Date.now();
        node.child.kill('SIGHUP');
        // the echo records a message when it takes it and answers 2 s later: the delivery is under way
        expect(
          Date.parse(recorded(record)[0]!.time) + 2000,
          'the delivery is under way at the signal',
        ).to.be.greaterThan(signalled);
        await within(10_000, 'the reload', () =>
          /reload applied: .*changed target \(Delay\), queue \(DefaultRequeueTime\)/.test(node!.output()),
        );
        expect(await stepped, 'the stepped delivery, finished by the old queue').to.equal(200);
        // StartPaused: the new instance starts paused, as a restart would
        expect(await post({}, 'resume')).to.equal(200);
        await within(60_000, '1,000 deliveries', () => recorded(record).length >= 1000).catch((e: unknown) => {
          throw new Error(
            `${(e as Error).message}: ${recorded(record).length} delivered; the node printed:\n${node!.output().slice(-3000)}`,
          );
        });
        await sleep(500);
      } finally {
        await agent.close();
      }
      const numbers = recorded(record).map((r) => r.message.Data.n?.[0]);
      figures.delivered = numbers.length;
      figures.distinct = new Set(numbers).size;
      expect(numbers.length, 'deliveries').to.equal(1000);
      expect(new Set(numbers).size, 'distinct entries delivered').to.equal(1000);
      expect(node.output()).not.to.match(/reload refused/);
    },
  );

  reliabilityTest(
    'run --watch: a change of the file is applied without a signal, journalled as asked by watch',
    {
      suite: 'bad input',
      load: 'a gateway and an echo',
      faults: "the node file rewritten (the echo's ReplyCode) while the node runs with --watch",
    },
    30_000,
    async () => {
      const dir = tempDir('hn-reload-watch-');
      const port = await freePort();
      const write = (code: number): string =>
        writeNodeFile(dir, 'node', [
          `{service: echo, NAME: echo, ReplyCode: ${code}}`,
          `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "a=echo"}`,
        ]);
      node = await startNodeProcess(write(200), { args: ['--watch'] });
      await sleep(300);
      write(202);
      await within(5_000, 'the change', async () => {
        const res = await request(`http://127.0.0.1:${port}/a/x`, { method: 'POST', body: '{}' });
        await res.body.dump();
        return res.statusCode === 202;
      });
      expect(node.output()).to.match(/reload applied: .*node\.yaml: changed echo \(ReplyCode\) \(asked by watch\)/);
    },
  );

  reliabilityTest(
    'invalid files are refused, one line each, and the node serves on as it was',
    {
      suite: 'bad input',
      load: 'a gateway and an echo, a request after each refused reload',
      faults:
        'bad YAML, an unknown parameter, an exec template that does not parse, a TLS key that is not its certificate’s',
    },
    60_000,
    async () => {
      const dir = tempDir('hn-reload-bad-');
      const port = await freePort();
      const good = writeNodeFile(dir, 'node', [
        '{service: echo, NAME: echo}',
        `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "a=echo", ResponseHeaders: "X-Config: good"}`,
      ]);
      node = await startNodeProcess(good);
      const bad: Array<[string, string[], RegExp]> = [
        ['bad YAML', ['{service: echo, NAME: echo'], /not valid YAML/],
        [
          'an unknown parameter',
          [
            '{service: echo, NAME: echo, Bogus: 1}',
            `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "a=echo"}`,
          ],
          /unknown parameter 'Bogus' \(node\.yaml services\[0\]\)/,
        ],
        [
          'a template that does not parse',
          [
            '{service: echo, NAME: echo}',
            '{service: exec, NAME: ex, Template: "{{ .Data.x "}',
            `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "a=echo"}`,
          ],
          /services\[1\].*Template/,
        ],
        [
          'a TLS key that does not match',
          [
            '{service: echo, NAME: echo}',
            `{service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "a=echo", TLSCert: "${certPath('server.pem')}", TLSKey: "${certPath('client-alice.key')}"}`,
          ],
          /services\[1\].*TLSKey is not the key of TLSCert/,
        ],
      ];
      for (const [what, services, reason] of bad) {
        const before = count(node.output(), /reload refused/);
        writeNodeFile(dir, 'node', services);
        node.child.kill('SIGHUP');
        await within(5_000, `the refusal of ${what}`, () => count(node!.output(), /reload refused/) > before);
        await sleep(200);
        const lines = node
          .output()
          .split('\n')
          .filter((l) => l.includes('reload refused'));
        expect(lines.length - before, `${what}: one line`).to.equal(1);
        expect(lines.at(-1), what).to.match(reason);
        expect(lines.at(-1), what).to.include(`reload refused: ${good}: `);
        const res = await request(`http://127.0.0.1:${port}/a/x`, { method: 'POST', body: '{}' });
        await res.body.dump();
        expect(res.statusCode, what).to.equal(200);
        expect(res.headers['x-config'], what).to.equal('good');
      }
      expect(node.output()).not.to.match(/reload applied/);
    },
  );
});
