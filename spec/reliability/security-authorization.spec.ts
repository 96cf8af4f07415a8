/**
 * Security: the authorization matrix, with figures. A real gateway on the embedded hive with the
 * example Access table of the authorization issue (spec/integration/access-matrix.ts) is asked every
 * user × route cell, plus every route without credentials, over several rounds with requests in
 * parallel; every answer must be the table's (200, 403, or 401 without credentials). The figures
 * are the cells checked, the mismatches (0 to pass), the request rate through the gateway and the
 * rate of the authorization decision on its own (in-process, the part the gateway adds per request).
 */
import { expect } from 'chai';
import { request } from 'undici';
import { Authorizer, parseAccess } from '../../actors/gateway/access.js';
import { parseGroups } from '../../actors/auth/groups.js';
import { ACCESS, GROUPS_FILE, MATRIX, PASSWORD, basic, cells, writeMatrixFiles } from '../integration/access-matrix.js';
import type { RunningGateway } from '../integration/gateway-harness.js';
import { startGateway } from '../integration/gateway-harness.js';
import { tempDir } from '../temp.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';

const ROUNDS = byScale(5, 100);
const PARALLEL = 16;
const DECISIONS = byScale(200_000, 5_000_000);

/** Runs `jobs` with at most `parallel` at once. */
async function inParallel<T>(jobs: Array<() => Promise<T>>, parallel: number): Promise<T[]> {
  const results: T[] = new Array<T>(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

describe('reliability: security — authorization per route', function () {
  let gw: RunningGateway | undefined;
  after(async () => {
    await gw?.stop();
  });

  reliabilityTest(
    `authorization matrix: ${Object.keys(MATRIX).length} routes × 4 users of the example Access table and every route without credentials, ${ROUNDS} rounds, answers exactly as the table says`,
    {
      suite: 'security',
      load: `${ROUNDS} rounds of ${cells().length + Object.keys(MATRIX).length} requests, ${PARALLEL} in parallel, through a strict gateway (Users, Groups, Access '${ACCESS}'); ${DECISIONS.toLocaleString('en')} in-process decisions`,
      faults:
        'users outside the route’s groups (403), a user in no group, admins on a route whose most specific entry omits them, requests without credentials (401)',
    },
    byScale(60_000, 300_000),
    async (figures) => {
      const files = await writeMatrixFiles(tempDir('hn-sec-authz-'));
      gw = await startGateway({ Users: files.users, Groups: files.groups, Access: ACCESS, MaxInFlight: 4 * PARALLEL });
      const base = gw.base;
      type Job = { what: string; want: number; send: () => Promise<number> };
      const ask = (route: string, headers: Record<string, string>) => async (): Promise<number> => {
        const res = await request(`${base}/${route}`, {
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json', ...headers },
        });
        await res.body.dump();
        return res.statusCode;
      };
      const round: Job[] = [
        ...cells().map(([route, user, want]) => ({
          what: `${user} × ${route}`,
          want,
          send: ask(route, { authorization: basic(user, PASSWORD) }),
        })),
        ...Object.keys(MATRIX).map((route) => ({ what: `no credentials × ${route}`, want: 401, send: ask(route, {}) })),
      ];
      const jobs = Array.from({ length: ROUNDS }, () => round).flat();
      const began = performance.now();
      const statuses = await inParallel(
        jobs.map((j) => j.send),
        PARALLEL,
      );
      const seconds = (performance.now() - began) / 1000;
      const mismatches = jobs.flatMap((j, i) =>
        statuses[i] === j.want ? [] : [`${j.what}: ${statuses[i]}, the table says ${j.want}`],
      );
      figures['cells checked'] = jobs.length;
      figures['cells per round (user × route + no credentials)'] = `${cells().length} + ${Object.keys(MATRIX).length}`;
      figures.mismatches = mismatches.length;
      figures['403 answered'] = statuses.filter((s) => s === 403).length;
      figures['requests/s through the gateway'] = Math.round(jobs.length / seconds);

      // the decision alone: the cost the check adds to a request; each decision checked against the table too
      const groups = parseGroups(GROUPS_FILE, 'groups');
      const authorizer = new Authorizer(parseAccess(ACCESS), { get: () => groups });
      const table = cells().map(
        ([route, user, want]) => [user, ...route.split('/'), want === 200] as [string, string, string, boolean],
      );
      let wrongDecisions = 0;
      const t0 = performance.now();
      for (let i = 0; i < DECISIONS; i++) {
        const [user, cls, op, allowed] = table[i % table.length]!;
        if (authorizer.decide(user, cls, op).allowed !== allowed) wrongDecisions++;
      }
      figures['authorization decisions/s (in-process)'] = Math.round(DECISIONS / ((performance.now() - t0) / 1000));
      figures['in-process decisions unlike the table'] = wrongDecisions;
      expect(wrongDecisions).to.equal(0);
      expect(mismatches.slice(0, 10)).to.deep.equal([]);
    },
  );
});
