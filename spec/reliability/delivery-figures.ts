/**
 * What the partition and pause tests require of the queue once the load stopped: every acknowledged
 * entry delivered (waited for up to two minutes), no 404, nothing left unacknowledged after its
 * retries, fewer than 1 % of the entries delivered twice. The figures go into the test's record.
 */
import { expect } from 'chai';
import type { Figures } from './record.js';
import type { NetnsHive } from './netns-hive.js';
import type { SteadyEnqueues } from './steady-enqueues.js';
import { sleep } from '../support/wait.js';

export interface DeliveryOutcome {
  missing: string[];
  twice: number;
  acknowledged: number;
}

/** Waits for the acknowledged entries to be delivered and records the answers, the missing and the doubled. */
export async function deliveryFigures(
  hive: NetnsHive,
  load: SteadyEnqueues,
  figures: Figures,
  waitMs = 120_000,
): Promise<DeliveryOutcome> {
  const until = Date.now() + waitMs;
  let missing: string[] = [];
  for (;;) {
    const got = new Set(hive.delivered());
    missing = load.acknowledged.filter((item) => !got.has(item));
    if (missing.length === 0 || Date.now() > until) break;
    await sleep(500);
  }
  const all = hive.delivered();
  const twice = all.length - new Set(all).size;
  figures['entries acknowledged'] = load.acknowledged.length;
  for (const [status, count] of [...load.statuses].sort((a, b) => a[0] - b[0]))
    figures[`answers ${status || 'lost (no answer)'}`] = count;
  figures['enqueues never acknowledged'] = load.failed.length;
  figures['acknowledged entries missing'] = missing.length;
  figures['entries delivered twice'] = twice;
  figures['delivered twice (%)'] = Number(((100 * twice) / Math.max(1, load.acknowledged.length)).toFixed(2));
  return { missing, twice, acknowledged: load.acknowledged.length };
}

/** The requirements: nothing acknowledged lost, no 404 (nor any refusal but 503 and 504), every entry acknowledged in the end, duplicates < 1 %. */
export function expectDelivered(load: SteadyEnqueues, outcome: DeliveryOutcome): void {
  expect(load.statuses.get(404) ?? 0, 'enqueues answered 404').to.equal(0);
  // 503 and 504 say "try again"; any other refusal (a 500) would leave a client not knowing what to do
  const other = [...load.statuses].filter(([status]) => ![0, 200, 503, 504].includes(status));
  expect(other, 'answers other than 200, 503 and 504 (status, count)').to.deep.equal([]);
  expect(load.failed.slice(0, 10), 'enqueues never acknowledged').to.deep.equal([]);
  expect(outcome.missing.slice(0, 10), 'acknowledged entries never delivered').to.deep.equal([]);
  expect(outcome.twice / Math.max(1, outcome.acknowledged), 'share of entries delivered twice').to.be.below(0.01);
}
