/**
 * Retry schedules: requeue_schedule's waits read (and refused naming the bad step), the attempt that
 * failed picking its wait, a target's Retry-After (Data retry_after) when later, and the cap.
 */
import { expect } from 'chai';
import {
  defaultRequeueSchedule,
  parseRequeueSchedule,
  retryAfterOf,
  retryWaitMs,
} from '../../../actors/queue/requeue-schedule.js';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { EntryState } from '../../../actors/queue/entry.js';
import { BadInputError } from '../../../protocol/errors.js';
import { failure, makeMessage, mapOf } from '../../../protocol/message.js';

const entry = (over: Partial<QueueEntry>): QueueEntry => ({
  key: 'k',
  seq: 1,
  message: makeMessage({}),
  channel: 'c',
  mode: 'call',
  requeueTimerMs: 10_000,
  requeueCount: 3,
  deadLetter: '',
  attempts: 1,
  state: EntryState.Delivering,
  dueAt: 0,
  createdAt: '',
  history: [],
  ...over,
});

describe('queue retry schedules (requeue_schedule, Retry-After)', () => {
  it("reads Svix's schedule", () => {
    expect(parseRequeueSchedule('5s,5m,30m,2h,5h,10h,10h', 'control requeue_schedule')).to.deep.equal([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(parseRequeueSchedule(' 250ms , 1m30s ', 'x')).to.deep.equal([250, 90_000]);
  });

  for (const [text, why] of [
    ['', /control requeue_schedule is empty/],
    ['5s,,5m', /wait 2 '' is not a duration/],
    ['5s,soon', /wait 2 'soon' is not a duration/],
    ['5s,400d', /wait 2 '400d' is longer than a year and a day/],
    [Array(101).fill('1s').join(','), /has 101 waits; at most 100/],
  ] as const) {
    it(`refuses '${text.slice(0, 20)}' with 400 naming the step`, () => {
      expect(() => parseRequeueSchedule(text, 'control requeue_schedule')).to.throw(BadInputError, why);
    });
  }

  it('the attempt that failed picks its wait; a later Retry-After wins, an earlier one does not', () => {
    const e = entry({ requeueSchedule: [5_000, 300_000, 1_800_000], requeueCount: 3 });
    expect(retryWaitMs({ ...e, attempts: 1 }, failure(503, 'x'), false)).to.equal(5_000);
    expect(retryWaitMs({ ...e, attempts: 3 }, failure(503, 'x'), true)).to.equal(1_800_000);
    expect(retryWaitMs({ ...e, attempts: 1 }, failure(429, 'x', mapOf({ retry_after: ['120'] })), false)).to.equal(
      120_000,
    );
    expect(retryWaitMs({ ...e, attempts: 2 }, failure(429, 'x', mapOf({ retry_after: ['120'] })), false)).to.equal(
      300_000,
    );
    // without a schedule: requeue_timer, and Retry-After the same way
    expect(retryWaitMs(entry({}), failure(429, 'x', mapOf({ retry_after: ['60'] })), false)).to.equal(60_000);
    expect(retryWaitMs(entry({}), failure(500, 'x'), false)).to.equal(10_000);
  });

  it('reads retry_after as whole seconds only, and caps what it asks at a year and a day', () => {
    expect(retryAfterOf(failure(429, 'x', mapOf({ retry_after: ['soon'] })))).to.equal(undefined);
    expect(retryAfterOf(failure(429, 'x'))).to.equal(undefined);
    expect(retryWaitMs(entry({}), failure(429, 'x', mapOf({ retry_after: ['9999999999'] })), false)).to.equal(
      366 * 24 * 3600 * 1000,
    );
  });

  it('DefaultRequeueSchedule: empty is none; a bad one names the parameter', () => {
    expect(defaultRequeueSchedule('')).to.equal(undefined);
    expect(defaultRequeueSchedule('1s,2s')).to.deep.equal([1000, 2000]);
    expect(() => defaultRequeueSchedule('1s,x')).to.throw(/^DefaultRequeueSchedule: wait 2 'x'/);
  });
});
