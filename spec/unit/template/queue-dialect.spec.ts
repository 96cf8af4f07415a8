import { expect } from 'chai';
import { renderQueueTemplate, QueueTemplate } from '../../../template/dialects/queue.js';
import { TemplateError } from '../../../template/index.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { Message } from '../../../protocol/message.js';

const request = (): Message =>
  makeMessage({
    Class: 'in',
    Operation: 'op',
    Control: mapOf({ c: ['1'] }),
    Data: mapOf({ file: ['a', 'b'], one: ['x'] }),
  });
const render = (src: string, define = '', req: Message = request()) => renderQueueTemplate(src, define, req);

function failure(f: () => unknown): TemplateError {
  try {
    f();
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('queue dialect', () => {
  it('uses [[ ]] delimiters and dot is the request', () => {
    expect(render('{{.}} [[.Class]]/[[.Operation]] [[index .Data.file 1]] [[.Control.c]]').output).to.equal(
      '{{.}} in/op b [1]',
    );
  });

  it('getValues returns the list, or an empty list for a missing name', () => {
    expect(
      render(
        '[[getValues .Data "file"]] [[len (getValues .Data "nope")]] [[getValues (getRequestData getRequest) "one"]]',
      ).output,
    ).to.equal('[a b] 0 [x]');
    expect(failure(() => render('[[getValues .Class "x"]]')).message).to.match(/getValues: argument is not a map/);
  });

  it('getRequest and getRequestData give the incoming request', () => {
    expect(
      render('[[(getRequest).Class]] [[(getRequestData getRequest).file]] [[eq (getRequest).Operation .Operation]]')
        .output,
    ).to.equal('in [a b] true');
  });

  it('newRequest, newData and newControl are empty; mutators print nothing', () => {
    const r = render(
      '[[$r := newRequest]][[$r.Class]]|[[len $r.Data]]|[[len newData]]|[[len newControl]]|[[setRequestClass $r "c"]]|[[addEntry $r]]',
    );
    expect(r.output).to.equal('|0|0|0||');
    expect(r.entries).to.have.length(1);
  });

  it('setRequestClass, setRequestOperation, setRequestData, setRequestControl', () => {
    const r = render(
      '[[$r := newRequest]][[setRequestClass $r "sql"]][[setRequestOperation $r "select"]]' +
        '[[$d := newData]][[addValue $d "id" "7"]][[setRequestData $r $d]]' +
        '[[$c := newControl]][[addValue $c "channel" "db"]][[setRequestControl $r $c]][[addEntry $r]]',
    );
    const e = r.entries[0] as Message;
    expect(e.Class).to.equal('sql');
    expect(e.Operation).to.equal('select');
    expect({ ...e.Data }).to.deep.equal({ id: ['7'] });
    expect({ ...e.Control }).to.deep.equal({ channel: ['db'] });
    expect(e.Data instanceof Object, 'Object.prototype on the chain').to.equal(false);
    expect(e.Control instanceof Object, 'Object.prototype on the chain').to.equal(false);
    expect(failure(() => render('[[setRequestClass .Data "x"]]')).message).to.match(
      /setRequestClass: argument is not a request/,
    );
    expect(failure(() => render('[[setRequestData newRequest "x"]]')).message).to.match(
      /setRequestData: argument is not a map/,
    );
  });

  it('addValue appends a string, each string of a list, or the text of a scalar', () => {
    const r = render(
      '[[$d := newData]][[addValue $d "k" "s"]][[addValue $d "k" .Data.file]][[addValue $d "n" 42]][[addValue $d "n" 1.5]][[$r := newRequest]][[setRequestData $r $d]][[addEntry $r]]',
    );
    expect({ ...(r.entries[0] as Message).Data }).to.deep.equal({ k: ['s', 'a', 'b'], n: ['42', '1.5'] });
    expect(failure(() => render('[[addValue newData "__proto__" "x"]]')).message).to.match(
      /addValue: key '__proto__' is not allowed/,
    );
    expect(failure(() => render('[[addValue newData "k" .Data]]')).message).to.match(
      /addValue: cannot add a value of this type/,
    );
    expect(failure(() => render('[[addValue newData "k" nil]]')).message).to.match(
      /addValue: cannot add a value of this type/,
    );
  });

  it('addEntry records a copy: later changes do not alter entries already added', () => {
    const r = render(
      '[[$r := newRequest]][[$d := newData]][[setRequestData $r $d]][[addValue $d "v" "1"]][[addEntry $r]][[addValue $d "v" "2"]][[setRequestClass $r "later"]][[addEntry $r]]',
    );
    expect(r.entries.map((e) => [e.Class, [...(e.Data.v ?? [])]])).to.deep.equal([
      ['', ['1']],
      ['later', ['1', '2']],
    ]);
  });

  it("the caller's request is never modified", () => {
    const req = request();
    render('[[setRequestClass getRequest "changed"]][[addValue .Data "file" "c"]]', '', req);
    expect(req.Class).to.equal('in');
    expect(req.Data.file).to.deep.equal(['a', 'b']);
  });

  it('fans out with a define (the typical queue template)', () => {
    const src =
      '[[define "fanout"]][[range $f := getValues .Data "file"]][[$r := newRequest]][[setRequestClass $r "cmd"]][[$d := newData]][[addValue $d "file" $f]][[setRequestData $r $d]][[addEntry $r]][[end]][[end]]';
    const r = render(src, 'fanout');
    expect(r.entries.map((e) => e.Data.file)).to.deep.equal([['a'], ['b']]);
    expect(r.output).to.equal('');
  });

  it('defineName "" runs the main template; an unknown define is a TemplateError naming it', () => {
    expect(render('main[[define "d"]]D[[end]]').output).to.equal('main');
    expect(render('main[[define "d"]]D[[end]]', 'd').output).to.equal('D');
    expect(failure(() => render('main', 'missing')).message).to.equal(
      'template: no template "missing" associated with template "queue"',
    );
  });

  it('print works and errors are TemplateErrors with partial output', () => {
    expect(render('[[print "a" 1]]').output).to.equal('a1');
    const e = failure(() => render('ok [[index .Data.file 5]]'));
    expect(e.output).to.equal('ok ');
    expect(e.message).to.match(/error calling index: index out of range: 5/);
    expect(failure(() => render('[[if]]')).message).to.equal('template: queue:1: missing value for if');
  });

  it('limits the number of entries', () => {
    const t = new QueueTemplate('[[range .Data.file]][[addEntry newRequest]][[addEntry newRequest]][[end]]', {
      maxEntries: 3,
    });
    expect(failure(() => t.render('', request())).message).to.match(/addEntry: more than 3 entries/);
  });

  it('lists its defines and reuses the compiled template', () => {
    const t = new QueueTemplate('[[define "b"]][[end]][[define "a"]][[end]]');
    expect(t.defines()).to.deep.equal(['a', 'b']);
    const src = '[[.Class]]';
    expect(render(src).output).to.equal('in');
    expect(render(src, '', makeMessage({ Class: 'other' })).output).to.equal('other');
  });
});
