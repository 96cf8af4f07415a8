/**
 * A reload of a syslog receiver (README, Changing a running node): a changed receiver parameter
 * re-opens its port — the old receiver stops, finishes the messages it took (each handed over before
 * it is acknowledged) and closes, then the new one opens the same port. A RELP sender (hivenode's
 * own, as rsyslog's omrelp does) resends what was not acknowledged: nothing sent while messages flow
 * through the reload is lost.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { ServicePlan } from '../../node/node-plan.js';
import { HiveNode } from '../../node/node.js';
import { freePort } from '../adapters/ports.js';
import { recorded } from './queue/helpers.js';
import { tempDir } from '../temp.js';
import { sleep, until } from '../support/wait.js';

const MESSAGES = 400;
const CONCURRENCY = 8;

describe('reload of a syslog receiver', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2_000);
    node = undefined;
  });

  it(`a changed receiver parameter re-opens its RELP port while ${MESSAGES} messages flow: every message arrives (RELP resends what was not acknowledged)`, async () => {
    const dir = tempDir('hn-reload-syslog-');
    const record = join(dir, 'record.jsonl');
    const port = await freePort();
    const plans = (operation: string): ServicePlan[] =>
      [
        [
          ['NAME', 'recorder'],
          ['RecordFile', record],
        ],
        [
          ['NAME', 'rx'],
          ['IP', '127.0.0.1'],
          ['RELP', 'true'],
          ['RELPPort', String(port)],
          ['OUTPUTCHANNEL', 'recorder'],
          ['Operation', operation],
        ],
        [
          ['NAME', 'tx'],
          ['RemoteIP', '127.0.0.1'],
          ['RemotePort', String(port)],
          ['SendRELP', 'true'],
        ],
      ].map((values, i) => ({
        kind: i === 0 ? 'echo' : 'syslog',
        layers: [{ source: `n.yaml services[${i}]`, values: values as Array<[string, string]> }],
        where: `n.yaml services[${i}]`,
      }));
    node = await HiveNode.start({
      services: plans('before'),
      logStream: new PassThrough(),
      source: { file: 'n.yaml', hash: 'a'.repeat(64) },
    });
    let next = 0;
    const codes: number[] = [];
    const senders = Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const n = next++;
        codes.push((await node!.hive.call('tx', makeMessage({ Data: mapOf({ info: [`m-${n}`] }) }), 30_000)).Code);
        await sleep(2);
      }
    });
    await until(() => next >= MESSAGES / 4, 20_000);
    const outcome = await node.reload(plans('after'), 'SIGHUP', 'b'.repeat(64));
    expect(outcome).to.include({ applied: true, summary: 'changed rx (Operation)' });
    const reloadedAt = next;
    await Promise.all(senders);
    expect(reloadedAt, 'the reload came while messages flowed').to.be.lessThan(MESSAGES);
    expect(codes.filter((c) => c !== 200)).to.deep.equal([]);
    await until(
      () => new Set(recorded(record).map((r) => JSON.stringify(r.message.Data))).size >= MESSAGES,
      20_000,
    ).catch(() => undefined);
    const got = recorded(record);
    const texts = got
      .map(
        (r) =>
          Object.values(r.message.Data)
            .flat()
            .find((v) => /m-\d+/.test(v)) ?? '',
      )
      .map((v) => /m-\d+/.exec(v)![0]);
    const missing = Array.from({ length: MESSAGES }, (_, i) => `m-${i}`).filter((m) => !texts.includes(m));
    expect(missing, `${missing.length} messages lost`).to.deep.equal([]);
    // the new receiver's parameter is applied to what it takes
    expect(got.at(-1)!.message.Operation).to.equal('after');
    expect(got[0]!.message.Operation).to.equal('before');
  });
});
