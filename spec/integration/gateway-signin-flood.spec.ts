/**
 * A sign-in flood does not starve the node (README, Authentication): 20 connections guessing wrong
 * Basic passwords at a real gateway while a valid user keeps calling. Every guess used to be a bcrypt
 * comparison on the event loop (a valid user's p50 went from 2 ms to 4 s); now comparisons run in a
 * worker, failures are throttled per address and per user (429 with Retry-After, no comparison), and
 * the valid user's cached credentials are answered at once. What is checked here is behaviour (every
 * valid request answered 200, the guessers refused 429 with Retry-After, comparisons bounded by the
 * limits); the latency ratio is bench/auth-flood.ts's.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { FAILURES_PER_ADDRESS } from '../../actors/auth/sign-in-throttle.js';
import type { RunningGateway } from './gateway-harness.js';
import { startGateway } from './gateway-harness.js';
import { tempDir } from '../temp.js';

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('gateway: a guessing flood of wrong Basic passwords', function () {
  this.timeout(60_000);
  let gw: RunningGateway | undefined;
  after(async () => {
    await gw?.stop();
  });

  it('20 connections guessing: the valid user is answered 200 throughout, the guessers get 429 with Retry-After, bcrypt runs at most the limit', async () => {
    const dir = tempDir('hn-flood-');
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('alice', 'right-password')}\n`);
    gw = await startGateway({ Users: users });
    const status = (): Record<string, unknown> => gw!.node.services.find((s) => s.kind === 'gateway')!.running.status();
    const valid = async (): Promise<number> => {
      const res = await request(`${gw!.base}/t/op`, {
        method: 'POST',
        body: '{}',
        headers: { authorization: basic('alice', 'right-password') },
      });
      await res.body.dump();
      return res.statusCode;
    };
    expect(await valid()).to.equal(200);
    const guessAgent = new Agent({ connections: 20 });
    let guessing = true;
    const seen = new Map<number, number>();
    const retryAfter = new Set<string>();
    const guessers = Array.from({ length: 20 }, async (_, i) => {
      for (let n = 0; guessing && n < 10_000; n++) {
        const res = await request(`${gw!.base}/t/op`, {
          method: 'POST',
          body: '{}',
          dispatcher: guessAgent,
          headers: { authorization: basic('alice', `guess-${i}-${n}`) },
        });
        await res.body.dump();
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 429) retryAfter.add(String(res.headers['retry-after']));
      }
    });
    const answers: number[] = [];
    const end = Date.now() + 3_000;
    while (Date.now() < end) answers.push(await valid());
    guessing = false;
    await Promise.all(guessers);
    await guessAgent.close();
    expect(answers.length, 'the valid user was served throughout').to.be.greaterThan(20);
    expect(new Set(answers)).to.deep.equal(new Set([200]));
    expect(seen.get(429) ?? 0, JSON.stringify([...seen])).to.be.greaterThan(100);
    expect(
      [...retryAfter].every((v) => Number(v) >= 1 && Number(v) <= 60),
      [...retryAfter].join(','),
    ).to.equal(true);
    // at most the address's limit reached bcrypt (plus the valid user's one), the rest refused at once
    expect(status().signInVerifications as number).to.be.at.most(FAILURES_PER_ADDRESS + 1 + 20);
    expect(status().throttled as number).to.be.greaterThan(100);
    expect(gw.logs()).to.match(
      /sign-in attempts refused \(429\) after too many failures: the last from \S+ for user 'alice'/,
    );
  });
});
