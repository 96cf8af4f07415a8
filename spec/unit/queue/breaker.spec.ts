/**
 * Circuit breakers per target channel: the Breaker expressions read at start (and refused naming
 * what is wrong), the window's counting (errors and a latency percentile over the last window),
 * holding entries while open, half-open probes one at a time, closing and re-opening, and the
 * operator's open and close. Time is passed in where it decides; the timer that half-opens is the
 * one real wait (a few ms).
 */
import { expect } from 'chai';
import { parseBreaker } from '../../../actors/queue/breaker-rules.js';
import { breakerOptionsOf, parseBreakerCommand } from '../../../actors/queue/breaker-request.js';
import type { BreakerState, BreakerView } from '../../../actors/queue/breaker.js';
import { Breakers, isTargetError } from '../../../actors/queue/breaker.js';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { EntryState } from '../../../actors/queue/entry.js';
import { MinHeap } from '../../../actors/queue/heap.js';
import { BadInputError, ConfigError } from '../../../protocol/errors.js';
import type { Result } from '../../../protocol/message.js';
import { failure, makeMessage, success } from '../../../protocol/message.js';
import { sleep } from '../../support/wait.js';

const T = 1_000_000_000;
const ok: Result = success({}, []);
const err503: Result = failure(503, 'down');

describe('queue Breaker expressions', () => {
  it('reads errors and latency rules with their windows and min', () => {
    const [errors, latency] = parseBreaker('errors>50%/30s,min=20; latency.p99>2s/30s');
    expect(errors).to.include({ metric: 'errors', fraction: 0.5, windowMs: 30_000, min: 20 });
    expect(latency).to.include({ metric: 'latency', slowerThanMs: 2000, windowMs: 30_000, min: 10 });
    expect(latency!.fraction).to.be.closeTo(0.01, 1e-9);
    expect(parseBreaker('latency.p999>250ms/1m')[0]!.fraction).to.be.closeTo(0.001, 1e-9);
    expect(parseBreaker('')).to.deep.equal([]);
  });

  for (const [text, why] of [
    ['errors>50/30s', /gives errors as '50'/],
    ['errors>50%/30', /window '30' without a unit/],
    ['errors>150%/30s', /share from 0% to 99%/],
    ['latency.p99>2/30s', /latency bound '2' without a unit/],
    ['errors>50%/30s,min=0', /min=0/],
    ['errors>50%/10ms', /shorter than 100ms/],
    ['errors>50%/2d', /longer than 24h/],
    ['failures>5%/1m', /'failures>5%\/1m' is not an expression/],
  ] as const) {
    it(`refuses '${text}' at start, naming it`, () => {
      const e = (() => {
        try {
          breakerOptionsOf({
            Breaker: `latency.p90>1s/1m;${text}`,
            BreakerOpenFor: 30_000,
            BreakerProbes: 3,
            DisableAfter: 0,
          });
        } catch (x) {
          return x;
        }
        return undefined;
      })();
      expect(e).to.be.instanceOf(ConfigError);
      expect((e as Error).message)
        .to.match(/^Breaker: /)
        .and.match(why)
        .and.match(/expected expressions separated by ';'/);
    });
  }

  it('refuses a BreakerOpenFor of 0 or beyond a timer', () => {
    expect(() => breakerOptionsOf({ Breaker: '', BreakerOpenFor: 0, BreakerProbes: 1, DisableAfter: 0 })).to.throw(
      ConfigError,
      /BreakerOpenFor is 0/,
    );
    expect(() =>
      breakerOptionsOf({ Breaker: '', BreakerOpenFor: 30 * 86_400_000, BreakerProbes: 1, DisableAfter: 0 }),
    ).to.throw(ConfigError, /at most 24d/);
  });

  it('reads the breaker command: status by default, open and close, a bad action or empty channel is 400', () => {
    expect(parseBreakerCommand({})).to.deep.equal({ type: 'breaker', action: 'status' });
    expect(parseBreakerCommand({ breaker: ['OPEN'], channel: ['hooks'] })).to.deep.equal({
      type: 'breaker',
      action: 'open',
      channel: 'hooks',
    });
    expect(() => parseBreakerCommand({ breaker: ['reset'] })).to.throw(
      BadInputError,
      /control breaker is 'reset'; use one of open, close, status/,
    );
    expect(() => parseBreakerCommand({ breaker: ['close'], channel: [''] })).to.throw(
      BadInputError,
      /control channel is empty/,
    );
  });

  it('counts 5xx, 408, 425, 429 against the target, not its answers about an entry (400, 404, 422)', () => {
    for (const code of [500, 502, 503, 504, 408, 425, 429])
      expect(isTargetError(failure(code, 'x')), String(code)).to.equal(true);
    for (const code of [200, 400, 404, 409, 422])
      expect(isTargetError(code === 200 ? ok : failure(code, 'x')), String(code)).to.equal(false);
  });
});

/** A queue's waiting entries and ready heap as the breakers see them. */
class Fixture {
  readonly entries = new Map<string, QueueEntry>();
  readonly ready = new MinHeap<string>();
  readonly changes: Array<{ channel: string; state: BreakerState; line: string }> = [];
  readonly woken: string[] = [];
  readonly breakers: Breakers;
  private seq = 0;

  readonly alerts: BreakerView[] = [];

  constructor(rules: string, openForMs = 30_000, probes = 2, disableAfterMs = 0) {
    this.breakers = new Breakers({
      rules: parseBreaker(rules),
      openForMs,
      probes,
      changed: (channel, state, line) => this.changes.push({ channel, state, line }),
      disableAfterMs,
      disabled: (v) => this.alerts.push(v),
    });
    this.breakers.setWake((c) => this.woken.push(c));
  }

  add(channel = 'hooks'): QueueEntry {
    const seq = ++this.seq;
    const e: QueueEntry = {
      key: `k${seq}`,
      seq,
      message: makeMessage({}),
      channel,
      mode: 'call',
      requeueTimerMs: 0,
      requeueCount: 3,
      deadLetter: '',
      attempts: 0,
      state: EntryState.Waiting,
      dueAt: 0,
      createdAt: '',
      history: [],
    };
    this.entries.set(e.key, e);
    this.ready.push(seq, e.key);
    return e;
  }

  readonly release = (key: string): boolean => {
    const e = this.entries.get(key);
    if (e?.state !== EntryState.Waiting) return false;
    this.ready.push(e.seq, key);
    return true;
  };

  /** Pops the ready heap as the pump does: the keys admitted (delivered), the others held. */
  pump(): string[] {
    const out: string[] = [];
    for (let key = this.ready.pop(); key !== undefined; key = this.ready.pop()) {
      const e = this.entries.get(key)!;
      if (e.state !== EntryState.Waiting) continue;
      if (!this.breakers.admit(e)) continue;
      e.state = EntryState.Delivering;
      e.attempts++;
      out.push(key);
    }
    return out;
  }

  /** The outcome of a delivered key. */
  outcome(key: string, result: Result, now: number, durationMs = 5): void {
    const e = this.entries.get(key)!;
    this.breakers.record(key, e.channel, { result, durationMs }, this.release, now);
    e.state = result.Code < 300 ? EntryState.Done : EntryState.Waiting;
    if (result.Code >= 300) this.ready.push(e.seq, key);
  }

  state(channel = 'hooks'): string {
    return this.breakers.view(channel)?.state ?? 'none';
  }
}

describe('queue circuit breakers', () => {
  it('opens when more than the share of a full window failed, not before min deliveries', () => {
    const f = new Fixture('errors>50%/10s,min=4');
    for (let i = 0; i < 3; i++) f.add();
    const out = f.pump();
    for (const k of out) f.outcome(k, err503, T);
    // 3 of 3 failed, but the window needs 4
    expect(f.state()).to.equal('closed');
    f.breakers.stop();
  });

  it('opens on errors, holds entries without an attempt, half-opens, probes one at a time, closes and releases in FIFO order', async () => {
    const f = new Fixture('errors>50%/10s,min=4', 20, 2);
    const first = [f.add(), f.add(), f.add(), f.add()];
    expect(f.pump()).to.deep.equal(first.map((e) => e.key));
    f.outcome('k1', ok, T);
    f.outcome('k2', err503, T);
    f.outcome('k3', err503, T);
    expect(f.state()).to.equal('closed'); // 2 of 3, but min 4
    f.outcome('k4', err503, T);
    expect(f.state()).to.equal('open'); // 3 of 4 failed
    expect(f.changes.at(-1)!.line).to.match(
      /opened: errors>50%\/10s,min=4: 3 of 4 deliveries failed; half-opens in 20 ms/,
    );
    // the failed ones and new ones: none goes out, none spends an attempt
    for (let i = 0; i < 3; i++) f.add();
    expect(f.pump()).to.deep.equal([]);
    expect(f.breakers.view('hooks')!.held).to.equal(6);
    expect([...f.entries.values()].filter((e) => e.key !== 'k1').map((e) => e.attempts)).to.deep.equal([
      1, 1, 1, 0, 0, 0,
    ]);
    // its one timer wakes the queue
    await sleep(40);
    expect(f.woken).to.deep.equal(['hooks']);
    f.breakers.halfOpen('hooks', f.release);
    expect(f.state()).to.equal('half-open');
    // the oldest held entry goes out alone
    expect(f.pump()).to.deep.equal(['k2']);
    f.add();
    expect(f.pump()).to.deep.equal([]); // the probe is out: held
    f.outcome('k2', ok, T + 100);
    expect(f.state()).to.equal('half-open');
    expect(f.pump()).to.deep.equal(['k3']); // the next probe, alone
    f.outcome('k3', ok, T + 200);
    expect(f.state()).to.equal('closed');
    expect(f.changes.at(-1)!.line).to.match(/closed after 2 good probe\(s\); 5 held entries released/);
    expect(f.pump()).to.deep.equal(['k4', 'k5', 'k6', 'k7', 'k8']);
    f.breakers.stop();
  });

  it('a failed probe opens it again for BreakerOpenFor', () => {
    const f = new Fixture('errors>50%/10s,min=2', 30_000, 3);
    f.add();
    f.add();
    for (const k of f.pump()) f.outcome(k, err503, T);
    expect(f.state()).to.equal('open');
    f.breakers.halfOpen('hooks', f.release, T + 30_000);
    expect(f.pump()).to.deep.equal(['k1']);
    f.outcome('k1', failure(500, 'still down'), T + 30_010);
    expect(f.state()).to.equal('open');
    expect(f.breakers.view('hooks')!.reason).to.equal('probe failed: 500 still down');
    expect(f.breakers.view('hooks')!.opens).to.equal(2);
    f.breakers.stop();
  });

  it('opens on a latency percentile: more than 1% of the window slower than the bound', () => {
    const f = new Fixture('latency.p99>200ms/10s,min=50');
    for (let i = 0; i < 101; i++) f.add();
    const out = f.pump();
    out.slice(0, 100).forEach((k, i) => f.outcome(k, ok, T, i === 99 ? 500 : 10));
    expect(f.state()).to.equal('closed'); // 1 slow of 100: the 99th percentile is a fast one
    f.outcome(out[100]!, ok, T, 300);
    expect(f.state()).to.equal('open'); // 2 of 101
    f.breakers.stop();
  });

  it('forgets outcomes older than the window', () => {
    const f = new Fixture('errors>50%/10s,min=4');
    for (let i = 0; i < 4; i++) f.add();
    const out = f.pump();
    f.outcome(out[0]!, err503, T);
    f.outcome(out[1]!, err503, T);
    f.outcome(out[2]!, err503, T);
    // 11 s later the three failures are out of the window
    f.outcome(out[3]!, err503, T + 11_000);
    expect(f.state()).to.equal('closed');
    f.breakers.stop();
  });

  it('a breaker opened by command stays open until closed by command, other channels untouched', () => {
    const f = new Fixture('');
    f.breakers.openByCommand('hooks');
    f.add('hooks');
    f.add('other');
    expect(f.pump()).to.deep.equal(['k2']);
    expect(f.breakers.view('hooks')).to.include({
      state: 'open',
      held: 1,
      until: '',
      reason: 'opened by command (stays open until closed)',
    });
    f.breakers.halfOpen('hooks', f.release, Date.now() + 3_600_000); // no timer half-opens it
    expect(f.state()).to.equal('open');
    f.breakers.close('hooks', f.release);
    expect(f.pump()).to.deep.equal(['k1']);
    expect(f.breakers.figures()).to.deep.equal({ breakers: { hooks: 0 }, breakerHeld: { hooks: 0 } });
  });

  it('a held entry deleted or stepped is held no more; a probe deleted while out still answers for its breaker', () => {
    const f = new Fixture('errors>50%/10s,min=1', 30_000, 1);
    f.add();
    for (const k of f.pump()) f.outcome(k, err503, T);
    f.add();
    f.add();
    expect(f.pump()).to.deep.equal([]);
    f.breakers.forget('k2');
    f.entries.delete('k2');
    expect(f.breakers.view('hooks')!.held).to.equal(2);
    f.breakers.halfOpen('hooks', f.release, T + 30_000);
    expect(f.pump()).to.deep.equal(['k1']);
    f.entries.delete('k1');
    f.breakers.record('k1', undefined, { result: ok, durationMs: 3 }, f.release, T + 30_001);
    expect(f.state()).to.equal('closed');
    expect(f.pump()).to.deep.equal(['k3']);
  });

  it('the group gate reads held entries as not waiting, and takes no probe until admit', () => {
    const f = new Fixture('errors>50%/10s,min=1', 30_000, 1);
    f.add();
    for (const k of f.pump()) f.outcome(k, err503, T);
    const e = f.add();
    expect(f.breakers.holds(e)).to.equal(true);
    f.breakers.halfOpen('hooks', f.release, T + 30_000);
    // half-open without a probe out: the gate may read it, and only admit makes it the probe
    const k1 = f.entries.get('k1')!;
    expect(f.breakers.holds(k1)).to.equal(false);
    expect(f.breakers.holds(k1)).to.equal(false);
    expect(f.breakers.admit(k1)).to.equal(true);
    expect(f.breakers.holds(e)).to.equal(true);
    f.breakers.stop();
  });

  it('DisableAfter: failures without a break that long disable the channel once, through open and failed probes; a success ends the run', () => {
    const f = new Fixture('errors>50%/10s,min=1', 30_000, 1, 3_600_000);
    f.add();
    f.outcome(f.pump()[0]!, err503, T);
    expect(f.state()).to.equal('open');
    f.breakers.halfOpen('hooks', f.release, T + 30_000);
    f.outcome(f.pump()[0]!, err503, T + 1_800_000);
    expect(f.state()).to.equal('open'); // half an hour of failures
    f.breakers.halfOpen('hooks', f.release, T + 1_830_000);
    f.outcome(f.pump()[0]!, failure(500, 'still down'), T + 3_600_000);
    expect(f.state()).to.equal('disabled');
    expect(f.alerts).to.have.length(1);
    expect(f.alerts[0]).to.include({
      channel: 'hooks',
      state: 'disabled',
      failingSince: new Date(T).toISOString(),
      reason: 'disabled after 3600 s of failures (DisableAfter), the last 500 still down',
    });
    // no timer half-opens it; entries are held; only resuming (close) lets them out
    f.breakers.halfOpen('hooks', f.release, T + 9_000_000);
    expect(f.pump()).to.deep.equal([]);
    expect(f.breakers.figures().breakers).to.deep.equal({ hooks: 3 });
    f.breakers.close('hooks', f.release);
    expect(f.pump()).to.deep.equal(['k1']);
    expect(f.breakers.view('hooks')!.failingSince).to.equal('');
  });

  it('DisableAfter without Breaker rules: a 2xx or a 400 about the entry ends the run of failures', () => {
    const f = new Fixture('', 30_000, 1, 1000);
    for (let i = 0; i < 3; i++) f.add();
    const [a, b, c] = f.pump();
    f.outcome(a!, err503, T);
    f.outcome(b!, failure(400, 'bad entry'), T + 600);
    f.outcome(c!, err503, T + 1200);
    expect(f.state()).to.equal('closed');
    expect(f.alerts).to.have.length(0);
  });
});
