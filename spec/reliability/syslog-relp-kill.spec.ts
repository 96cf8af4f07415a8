/**
 * RELP end to end under SIGKILL (README, Syslog: reliable delivery): a private rsyslogd (A) reads
 * numbered messages over imtcp and forwards them with omrelp to a hivenode process, whose RELP
 * receiver hands each to a durable SQLite queue (answering 200 only once it is stored); the queue
 * delivers each to the node's RELP sender, which sends it to a second rsyslogd (B, imrelp → a file)
 * and answers the queue once B acknowledged it. The node is SIGKILLed at random points while messages
 * flow (and restarted on the same store), and rsyslogd B is SIGKILLed and restarted once. Every
 * message must reach B's file; duplicates (RELP resends after a break, queue redeliveries) are
 * counted, never a loss.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { haveRelp, have, startRsyslog } from '../adapters/syslog/peers.js';
import { feedRsyslog, imrelpConfig, numbersIn, omrelpConfig } from '../adapters/syslog/relp-peers.js';
import { freePort, waitForPort } from '../adapters/ports.js';
import { prng } from '../prng.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const MESSAGES = byScale(3_000, 100_000);
const KILLS = byScale(2, 3);
const SEED = 0x5e1f;
const PREFIX = 'relp-msg';

describe('reliability: syslog over RELP under SIGKILL', function () {
  let node: NodeProcess | undefined;
  const rsyslogs: ChildProcess[] = [];
  after(async () => {
    await node?.kill();
    for (const r of rsyslogs) r.kill('SIGKILL');
  });

  reliabilityTest(
    `${MESSAGES} messages rsyslog omrelp → RELP receiver → SQLite queue → RELP sender → rsyslog imrelp, the node SIGKILLed ${KILLS} times and the receiving rsyslogd once: every message arrives, duplicates counted`,
    {
      suite: 'crash loops',
      load: `${MESSAGES} numbered messages written at once into rsyslogd A (imtcp), forwarded by omrelp (window 128) through the node to rsyslogd B (imrelp → omfile)`,
      faults: `${KILLS} × SIGKILL of the node at a random point while messages flow (restart on the same store), 1 × SIGKILL and restart of rsyslogd B`,
    },
    byScale(180_000, 1_200_000),
    async (figures, skip) => {
      requireInstalled(
        have('rsyslogd') && haveRelp(),
        'rsyslogd with its RELP modules is needed (scripts/servers.sh installs rsyslog and rsyslog-relp)',
        skip,
      );
      const rnd = prng(SEED);
      const dir = tempDir('hn-relp-kill-');
      const [dirA, dirB] = [join(dir, 'a'), join(dir, 'b')];
      mkdirSync(dirA);
      mkdirSync(dirB);
      const [inPort, rxPort, bPort] = [await freePort(), await freePort(), await freePort()];
      const file = join(dirB, 'got.log');
      const nodeFile = writeNodeFile(dir, 'node', [
        `{service: syslog, NAME: tx, RemoteIP: 127.0.0.1, RemotePort: ${bPort}, SendRELP: true, SendJSON: true, SendFormat: RFC5424}`,
        `{service: queue, NAME: relp-q, PersistPath: "${join(dir, 'store')}", DefaultChannel: tx, DeliveryConcurrency: 128, DefaultRequeueTime: 2, DefaultRequeueCount: 100000, CallTimeout: 20s}`,
        `{service: syslog, NAME: rx, IP: 127.0.0.1, RELP: true, RELPPort: ${rxPort}, OUTPUTCHANNEL: relp-q}`,
      ]);
      const ready = /syslog receiver on 127\.0\.0\.1 RELP (\d+)/;
      const startB = (): ChildProcess => {
        const b = startRsyslog(dirB, imrelpConfig(bPort, file));
        rsyslogs.push(b);
        return b;
      };
      let b = startB();
      const a = startRsyslog(dirA, omrelpConfig(inPort, rxPort));
      rsyslogs.push(a);
      node = await startNodeProcess(nodeFile, { ready });
      await waitForPort(inPort, 15_000, 'rsyslogd A', a);
      await waitForPort(bPort, 15_000, 'rsyslogd B', b);

      const began = Date.now();
      await feedRsyslog(
        inPort,
        Array.from({ length: MESSAGES }, (_, i) => `<14>Nov 24 08:05:02 host app: ${PREFIX}-${i}`),
      );
      const arrived = (): number => new Set(numbersIn(file, PREFIX)).size;
      let midway = 0;
      for (let k = 0; k < KILLS; k++) {
        // spread the kills over the run: after about (k+1)/(KILLS+2) of the messages arrived, plus a random moment
        const mark = Math.floor((MESSAGES * (k + 1)) / (KILLS + 2));
        const until = Date.now() + byScale(60_000, 300_000);
        while (arrived() < mark && Date.now() < until) await sleep(20);
        await sleep(Math.floor(rnd() * 300));
        if (arrived() < MESSAGES) midway++;
        await node.kill('SIGKILL');
        if (k === 0) {
          // the receiving rsyslogd dies too while the node is down, and comes back before it
          b.kill('SIGKILL');
          await new Promise((r) => b.once('exit', r));
          b = startB();
          await waitForPort(bPort, 15_000, 'rsyslogd B', b);
        }
        node = await startNodeProcess(nodeFile, { ready });
      }
      figures['node kills that hit messages on their way'] = midway;
      expect(midway, 'kills while messages flowed').to.equal(KILLS);

      const deadline = Date.now() + byScale(120_000, 900_000);
      while (arrived() < MESSAGES && Date.now() < deadline) await sleep(100);
      figures['seconds until every message arrived'] = Math.round((Date.now() - began) / 100) / 10;
      const numbers = numbersIn(file, PREFIX);
      const unique = new Set(numbers);
      figures['messages'] = MESSAGES;
      figures['arrived (distinct)'] = unique.size;
      figures['duplicates'] = numbers.length - unique.size;
      const missing = Array.from({ length: MESSAGES }, (_, i) => i).filter((i) => !unique.has(i));
      figures['missing'] = missing.length;
      expect(missing.slice(0, 20), `${missing.length} missing`).to.deep.equal([]);
    },
  );
});
