/** A flow definition's checks (README, Flows): each error names the step and what is wrong. */
import { expect } from 'chai';
import { graphLines, parseDefinition } from '../../../actors/flow/graph.js';

const refused = (def: unknown): string => {
  try {
    parseDefinition(typeof def === 'string' ? def : JSON.stringify(def));
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the definition was accepted');
};

describe('flow definition checks', () => {
  it('reads YAML and JSON alike', () => {
    const yaml = parseDefinition(
      'steps:\n  - name: a\n    call: db\n    data: {x: "{{.Input.Class}}"}\n  - name: b\n    emit: log\n',
    );
    const json = parseDefinition(
      JSON.stringify({
        steps: [
          { name: 'a', call: 'db', data: { x: '{{.Input.Class}}' } },
          { name: 'b', emit: 'log' },
        ],
      }),
    );
    expect(yaml.steps.map((s) => s.kind)).to.deep.equal(['call', 'emit']);
    expect(json.steps.map((s) => s.name)).to.deep.equal(['a', 'b']);
    expect([...yaml.literalChannels]).to.deep.equal(['db', 'log']);
  });

  it('an unknown step name in next, catch, choice, default or on_cancel is named', () => {
    expect(refused({ steps: [{ name: 'a', call: 'db', next: 'nowhere' }] })).to.equal(
      "step 'a': next names step 'nowhere', which is not in the definition",
    );
    expect(refused({ steps: [{ name: 'a', call: 'db', catch: [{ codes: [502], next: 'undo' }] }] })).to.equal(
      "step 'a': catch 502 names step 'undo', which is not in the definition",
    );
    expect(
      refused({
        steps: [
          { name: 'a', choice: [{ when: 'true', next: 'x' }] },
          { name: 'b', succeed: {} },
        ],
      }),
    ).to.contain("step 'a': when true names step 'x'");
    expect(
      refused({
        steps: [
          { name: 'a', choice: [{ when: 'true', next: 'a2' }], default: 'zz' },
          { name: 'a2', succeed: {} },
        ],
      }),
    ).to.contain("default names step 'zz'");
    expect(refused({ on_cancel: 'undo', steps: [{ name: 'a', call: 'db' }] })).to.equal(
      "on_cancel names step 'undo', which is not in the definition",
    );
  });

  it('an unreachable step is named', () => {
    expect(
      refused({
        steps: [
          { name: 'a', call: 'db', end: true },
          { name: 'orphan', call: 'db' },
        ],
      }),
    ).to.contain("step 'orphan' is unreachable");
    // reached only as a catch target or on_cancel: fine
    expect(() =>
      parseDefinition(
        JSON.stringify({
          on_cancel: 'c',
          steps: [
            { name: 'a', call: 'db', end: true, catch: { next: 'b' } },
            { name: 'b', call: 'db', end: true },
            { name: 'c', call: 'db' },
          ],
        }),
      ),
    ).not.to.throw();
  });

  it('a template that does not parse is named with its step and field', () => {
    expect(refused({ steps: [{ name: 'a', call: 'db', data: { x: '{{ .Input.Data.x ' } }] })).to.match(
      /^step 'a'\.data\.x: template: /,
    );
    expect(refused({ steps: [{ name: 'a', choice: [{ when: '{{ if }}', next: 'a' }] }] })).to.match(
      /^step 'a'\.choice\[0\]\.when: /,
    );
    expect(refused({ steps: [{ name: 'a', call: '{{nosuchfunc 1}}' }] })).to.match(/^step 'a'\.call: .*nosuchfunc/);
  });

  it('a loop with no wait step is refused; a loop through a wait is not', () => {
    expect(
      refused({
        steps: [
          { name: 'poll', call: 'api' },
          { name: 'check', choice: [{ when: '{{eq .Steps.poll.Code 202}}', next: 'poll' }] },
        ],
      }),
    ).to.equal(
      "step 'poll': the loop 'poll' → 'check' → 'poll' has no wait step: a run would spin through it; add a wait step to the loop",
    );
    expect(refused({ steps: [{ name: 'a', call: 'api', next: 'a' }] })).to.contain(
      "the loop 'a' → 'a' has no wait step",
    );
    expect(() =>
      parseDefinition(
        JSON.stringify({
          steps: [
            { name: 'poll', call: 'api' },
            { name: 'check', choice: [{ when: 'x', next: 'pause' }], default: 'done' },
            { name: 'pause', wait: '5s', next: 'poll' },
            { name: 'done', succeed: {} },
          ],
        }),
      ),
    ).not.to.throw();
  });

  it('shape errors name the step: no kind, two kinds, an unknown field, a bad channel, retry and catch fields, duplicate names', () => {
    expect(refused({ steps: [{ name: 'a' }] })).to.contain("step 'a': says no kind");
    expect(refused({ steps: [{ name: 'a', call: 'x', emit: 'y' }] })).to.contain("step 'a': says call and emit");
    expect(refused({ steps: [{ name: 'a', call: 'x', colour: 'red' }] })).to.equal(
      "step 'a': unknown field 'colour' for a call step",
    );
    expect(refused({ steps: [{ name: 'a', call: 'no spaces' }] })).to.contain(
      "step 'a'.call: 'no spaces' is not a channel",
    );
    expect(refused({ steps: [{ name: 'a', call: 'x', retry: { count: 2, backoff: 'sometimes' } }] })).to.contain(
      "step 'a'.retry.backoff",
    );
    expect(refused({ steps: [{ name: 'a', call: 'x', retry: { on: [999] } }] })).to.contain(
      "step 'a'.retry.on: '999' is not a Code",
    );
    expect(refused({ steps: [{ name: 'a', call: 'x', timeout: 'soon' }] })).to.contain("step 'a'.timeout");
    expect(
      refused({
        steps: [
          { name: 'a', call: 'x' },
          { name: 'a', call: 'y' },
        ],
      }),
    ).to.contain("step 'a': the name is used by two steps");
    expect(refused({ steps: [{ name: '9lives', call: 'x' }] })).to.contain(
      "steps[0]: name '9lives' is not a step name",
    );
    expect(refused('steps: [')).to.contain('neither YAML nor JSON');
    expect(refused({ steps: [] })).to.contain('has no steps');
    expect(refused({ steps: [{ name: 'a', call: 'x' }], colour: 1 })).to.contain("unknown field 'colour'");
  });

  it('map and parallel: items required, concurrency bounded, sub-steps checked, branch names unique among steps', () => {
    expect(refused({ steps: [{ name: 'm', map: { call: 'x' } }] })).to.contain("step 'm'.map: items is missing");
    expect(refused({ steps: [{ name: 'm', map: { items: 'a', concurrency: 0, call: 'x' } }] })).to.contain(
      "step 'm'.map.concurrency",
    );
    expect(refused({ steps: [{ name: 'm', map: { items: 'a', call: 'x', next: 'y' } }] })).to.contain(
      "step 'm'.map: unknown field 'next'",
    );
    expect(refused({ steps: [{ name: 'm', map: { items: 'a' } }] })).to.contain(
      "step 'm'.map: give exactly one of call, execute, emit",
    );
    expect(refused({ steps: [{ name: 'p', parallel: { p: { call: 'x' } } }] })).to.contain(
      "branch 'p' is named like another step",
    );
    expect(refused({ steps: [{ name: 'p', parallel: { a: { call: 'x', data: { v: '{{' } } } }] })).to.match(
      /^step 'p'\.parallel\.a\.data\.v: /,
    );
    const def = parseDefinition(
      JSON.stringify({
        steps: [
          { name: 'm', map: { items: '{{json .Input.Data.ids}}', call: 'work' } },
          { name: 'p', parallel: { a: { call: 'x' }, b: { emit: 'y' } } },
        ],
      }),
    );
    expect([...def.literalChannels]).to.deep.equal(['work', 'x', 'y']);
    const m = def.steps[0]!;
    if (m.kind !== 'map') throw new Error('not a map');
    expect(
      m.items.render({ Input: { Class: '', Operation: '', Control: {}, Data: { ids: ['1', '2'] } }, Steps: {} }),
    ).to.equal('["1","2"]');
  });

  it('prints the steps as a graph', () => {
    const def = parseDefinition(
      JSON.stringify({
        steps: [
          { name: 'insert', call: 'sql' },
          {
            name: 'http',
            call: 'api',
            retry: { count: 2, backoff: 'exponential' },
            catch: [{ codes: [502], next: 'undo' }],
          },
          { name: 'log', emit: 'syslog', end: true },
          { name: 'undo', call: 'sql' },
          { name: 'failed', fail: { code: '502' } },
        ],
      }),
    );
    expect(graphLines(def)).to.deep.equal([
      'insert (start): call sql',
      '  --next--> http',
      'http: call api, retry 2× exponential',
      '  --next--> log',
      '  --catch 502--> undo',
      'log: emit syslog',
      '  --> (run succeeded)',
      'undo: call sql',
      '  --next--> failed',
      'failed: fail 502',
      '  --> (run failed)',
    ]);
  });
});
