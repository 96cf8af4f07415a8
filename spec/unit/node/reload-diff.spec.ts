import { expect } from 'chai';
import { compilePlans } from '../../../node/node-plan.js';
import type { ServicePlan } from '../../../node/node-plan.js';
import { describeDiff, diffServices, refusal } from '../../../node/reload-diff.js';
import type { RunningEntry } from '../../../node/reload-diff.js';

const plan = (
  kind: ServicePlan['kind'],
  values: Record<string, string>,
  hive: Record<string, string> = {},
): ServicePlan => ({
  kind,
  layers: [
    { source: 'n.yaml hive', values: Object.entries(hive) },
    { source: `n.yaml ${kind}`, values: Object.entries(values) },
  ],
  where: `n.yaml ${String(values.NAME)}`,
});
const running = (plans: ServicePlan[]): RunningEntry[] =>
  compilePlans(plans).map((s) => ({ name: s.name, kind: s.service.info.kind, config: s.service.values }));
const NO_HIVE = { SERVERHOST: '', SERVERAUTH: '', SERVERCA: '', SERVERCERT: '', SERVERKEY: '' };

describe('reload diff (node/reload-diff.ts)', () => {
  const before = [
    plan('echo', { NAME: 'echo', ReplyCode: '200' }),
    plan('echo', { NAME: 'gone' }),
    plan('queue', { NAME: 'q', PersistPath: '/var/q', DefaultChannel: 'echo' }),
  ];

  it('compares services by NAME and names the changed parameters, never their values', () => {
    const next = compilePlans([
      plan('echo', { NAME: 'echo', ReplyCode: '201', Delay: '5' }),
      plan('echo', { NAME: 'new' }),
      plan('queue', { NAME: 'q', PersistPath: '/var/q', DefaultChannel: 'echo' }),
    ]);
    const diff = diffServices(running(before), next);
    expect(diff.added).to.deep.equal(['new']);
    expect(diff.removed).to.deep.equal(['gone']);
    expect(diff.unchanged).to.deep.equal(['q']);
    expect(diff.changed).to.deep.equal([{ name: 'echo', kind: 'echo', params: ['ReplyCode', 'Delay'] }]);
    expect(describeDiff(diff)).to.equal('added new; removed gone; changed echo (ReplyCode, Delay)');
    expect(refusal(running(before), next, diff, NO_HIVE)).to.equal(undefined);
  });

  it('shows a secret parameter by its name alone', () => {
    const a = [plan('gateway', { NAME: 'gw', Strict: 'true', JWTSecret: 'old-secret-value-0123456789abcdef' })];
    const next = compilePlans([
      plan('gateway', { NAME: 'gw', Strict: 'true', JWTSecret: 'new-secret-value-0123456789abcdef' }),
    ]);
    const text = describeDiff(diffServices(running(a), next));
    expect(text).to.equal('changed gw (JWTSecret)');
    expect(text).not.to.include('secret-value');
  });

  it('refuses a queue whose PersistPath moved, saying to move the store first', () => {
    const next = compilePlans([
      plan('echo', { NAME: 'echo', ReplyCode: '200' }),
      plan('echo', { NAME: 'gone' }),
      plan('queue', { NAME: 'q', PersistPath: '/srv/q', DefaultChannel: 'echo' }),
    ]);
    const diff = diffServices(running(before), next);
    expect(refusal(running(before), next, diff, NO_HIVE)).to.match(
      /^queue 'q': PersistPath changed \('\/var\/q' → '\/srv\/q'\).*move the store first/,
    );
  });

  it('refuses a change to an in-memory queue, which a restart of it would empty', () => {
    const mem = [plan('queue', { NAME: 'q', PersistPath: '', DefaultChannel: 'echo' })];
    const next = compilePlans([
      plan('queue', { NAME: 'q', PersistPath: '', DefaultChannel: 'echo', DefaultRequeueTime: '5' }),
    ]);
    expect(refusal(running(mem), next, diffServices(running(mem), next), NO_HIVE)).to.match(
      /keeps its entries in memory \(PersistPath is empty\)/,
    );
  });

  it('refuses a changed hive section in one line', () => {
    const next = compilePlans([plan('echo', { NAME: 'echo' }, { SERVERHOST: 'nats://127.0.0.1:4222' })]);
    const why = refusal(
      running([plan('echo', { NAME: 'echo' })]),
      next,
      diffServices(running([plan('echo', { NAME: 'echo' })]), next),
      NO_HIVE,
    );
    expect(why).to.match(/^the hive section is not reloadable \(SERVERHOST changed/);
    expect(why).not.to.include('\n');
  });

  it('treats a service whose kind changed under the same NAME as changed', () => {
    const next = compilePlans([plan('storage', { NAME: 'echo' })]);
    expect(diffServices(running([plan('echo', { NAME: 'echo' })]), next).changed).to.deep.equal([
      { name: 'echo', kind: 'storage', params: ['service'] },
    ]);
  });
});
