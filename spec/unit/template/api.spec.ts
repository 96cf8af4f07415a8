import { expect } from 'chai';
import {
  Template,
  TemplateError,
  TemplatePhase,
  Param,
  FuncError,
  TypedNumber,
  NumberType,
} from '../../../template/index.js';
import { HiveError } from '../../../protocol/errors.js';

/** The TemplateError a call throws. */
function failure(f: () => unknown): TemplateError {
  try {
    f();
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw new Error(`expected a TemplateError, got ${String(e)}`);
  }
  throw new Error('expected a TemplateError, nothing was thrown');
}

const run = (text: string, data?: unknown): string => new Template('t').parse(text).execute(data);

describe('template API', () => {
  it('parses once and executes many times with different data', () => {
    const t = new Template('greet').parse('Hello {{.Name}}!');
    expect(t.execute({ Name: 'a' })).to.equal('Hello a!');
    expect(t.execute({ Name: 'b' })).to.equal('Hello b!');
    expect(t.name).to.equal('greet');
  });

  it('parse is callable repeatedly: defines are added and replaced like Go', () => {
    const t = new Template('t').parse(
      '{{define "a"}}A1{{end}}{{define "b"}}B{{end}}main:{{template "a"}}{{template "b"}}',
    );
    expect(t.execute()).to.equal('main:A1B');
    t.parse('{{define "a"}}A2{{end}}');
    expect(t.execute()).to.equal('main:A2B', 'the main body is kept when the new text only has defines');
    t.parse('{{define "a"}}{{end}}');
    expect(t.execute()).to.equal('main:A2B', 'an empty define does not replace');
    t.parse('new main {{template "a"}}');
    expect(t.execute()).to.equal('new main A2');
  });

  it('executeTemplate, lookup, templateNames and definedTemplates', () => {
    const t = new Template('root').parse('{{define "x"}}X{{.}}{{end}}{{define "y"}}Y{{end}}R');
    expect(t.executeTemplate('x', 1)).to.equal('X1');
    expect(t.lookup('y')?.execute()).to.equal('Y');
    expect(t.lookup('nope')).to.equal(undefined);
    expect(t.templateNames()).to.deep.equal(['root', 'x', 'y']);
    expect(t.definedTemplates()).to.equal('; defined templates are: "root", "x", "y"');
    expect(new Template('e').definedTemplates()).to.equal('');
    const e = failure(() => t.executeTemplate('zz', null));
    expect(e.message).to.equal('template: no template "zz" associated with template "root"');
  });

  it('executing a template that was never parsed fails like Go', () => {
    expect(failure(() => new Template('t').execute()).message).to.equal(
      'template: t: "t" is an incomplete or empty template',
    );
  });

  it('TemplateError carries phase, partial output, and Code 400', () => {
    const p = failure(() => new Template('t').parse('{{if}}'));
    expect(p.phase).to.equal(TemplatePhase.Parse);
    expect(p.message).to.equal('template: t:1: missing value for if');
    expect(p).to.be.instanceOf(HiveError);
    expect(p.code).to.equal(400);
    expect(p.name).to.equal('TemplateError');
    const x = failure(() => run('before {{.A.B.C}} after', { A: 5 }));
    expect(x.phase).to.equal(TemplatePhase.Exec);
    expect(x.output).to.equal('before ');
    expect(x.message).to.equal(
      'template: t:1:11: executing "t" at <.A.B.C>: can\'t evaluate field B in type interface {}',
    );
  });

  it('custom delimiters, and values containing delimiters are never expanded again', () => {
    const t = new Template('t', { delims: ['[[', ']]'] }).parse('[[.X]] {{.X}}');
    expect(t.execute({ X: '[[.Y]]{{.Y}}', Y: 'no' })).to.equal('[[.Y]]{{.Y}} {{.X}}');
    expect(new Template('t').delims('<%', '%>').parse('<%.%>').execute('{{.}}')).to.equal('{{.}}');
  });

  it('functions: FuncSpec with Go-typed parameters, plain JS functions, FuncError', () => {
    const t = new Template('t', {
      funcs: {
        twice: { fn: (n: number) => n * 2, params: [Param.Int] },
        join: (...parts: unknown[]) => parts.join('+'),
        first: (a: unknown) => a,
        bad: {
          fn: () => {
            throw new FuncError('nope');
          },
          params: [],
        },
      },
    });
    expect(t.parse('{{twice 21}} {{join 1 2 3}} {{first "x" "extra"}}').execute()).to.equal('42 1+2+3 x');
    expect(failure(() => t.parse('{{twice "a"}}').execute()).message).to.equal(
      'template: t:1:8: executing "t" at <"a">: expected integer; found "a"',
    );
    expect(failure(() => t.parse('{{first}}').execute()).message).to.match(
      /wrong number of args for first: want at least 1 got 0/,
    );
    expect(failure(() => t.parse('{{bad}}').execute()).message).to.equal(
      'template: t:1:2: executing "t" at <bad>: error calling bad: nope',
    );
    expect(failure(() => t.parse('{{nosuch}}')).message).to.equal('template: t:1: function "nosuch" not defined');
    expect(failure(() => new Template('t').funcs({ 'bad name': () => 1 })).message).to.match(/not a valid identifier/);
  });

  it('user functions replace builtins of the same name', () => {
    expect(new Template('t', { funcs: { len: () => 'mine' } }).parse('{{len "abc"}}').execute()).to.equal('mine');
  });

  it('missingkey option', () => {
    const tpl = '{{.A}}|{{.A.B}}';
    expect(new Template('t', { missingkey: 'default' }).parse(tpl).execute({})).to.equal('<no value>|<no value>');
    expect(new Template('t', { missingkey: 'zero' }).parse('{{.A}}').execute({})).to.equal('<no value>');
    expect(failure(() => new Template('t', { missingkey: 'error' }).parse(tpl).execute({})).message).to.equal(
      'template: t:1:2: executing "t" at <.A>: map has no entry for key "A"',
    );
    expect(failure(() => new Template('t', { missingkey: 'bogus' as 'zero' })).message).to.equal(
      'template: unrecognized option: missingkey=bogus',
    );
  });

  it('JS values: Maps, bigint, TypedNumber, whole and fractional numbers, null and undefined', () => {
    expect(
      run('{{.m.k}} {{index .m "k"}} {{range $k, $v := .m}}{{$k}}{{$v}}{{end}}', {
        m: new Map([
          ['k', 1],
          ['a', 2],
        ]),
      }),
    ).to.equal('1 1 a2k1');
    expect(run('{{.}} {{printf "%T" .}}', 12345678901234567890n)).to.equal('12345678901234567890 int');
    expect(run('{{.}} {{printf "%T" .}}', new TypedNumber(NumberType.Float64, 2))).to.equal('2 float64');
    expect(run('{{printf "%T %T %T" .a .b .c}}', { a: 2, b: 2.5, c: 1e300 })).to.equal('int float64 float64');
    expect(run('{{.}}', null)).to.equal('<no value>');
    expect(run('{{.}}', undefined)).to.equal('<no value>');
    expect(run('{{.a}}|{{print .a}}', { a: undefined })).to.equal('<no value>|<nil>');
  });
});

describe('template safety', () => {
  it('never reaches prototypes: __proto__, constructor and prototype read as missing keys', () => {
    expect(run('{{.constructor}}|{{.__proto__}}|{{.toString}}|{{.hasOwnProperty}}', {})).to.equal(
      '<no value>|<no value>|<no value>|<no value>',
    );
    expect(run('{{.constructor.name}}', {})).to.equal('<no value>');
    expect(run('{{index . "constructor"}}|{{index . "__proto__"}}', {})).to.equal('<no value>|<no value>');
    const own = JSON.parse('{"__proto__": "p", "constructor": "c", "prototype": "q", "ok": 1}') as object;
    expect(run('{{.__proto__}}{{.constructor}}{{.prototype}}{{.ok}}', own)).to.equal('<no value><no value><no value>1');
    expect(run('{{range $k, $v := .}}{{$k}}{{end}}', own)).to.equal('ok');
    expect(run('{{len .}}', own)).to.equal('1');
    expect(failure(() => run('{{.length}}', 'abc')).message).to.match(/can't evaluate field length in type string/);
  });

  it('only own properties are visible', () => {
    const proto = { inherited: 'no' };
    const obj = Object.create(proto) as Record<string, unknown>;
    obj.own = 'yes';
    expect(run('{{.own}}|{{.inherited}}', obj)).to.equal('yes|<no value>');
  });

  it('functions in data are neither called nor printed; call refuses them', () => {
    let called = false;
    const data = {
      f: () => {
        called = true;
        return 'ran';
      },
    };
    expect(failure(() => run('{{.f}}', data)).message).to.match(
      /field f is a function; functions in data are not callable/,
    );
    expect(failure(() => run('{{call .f}}', data)).message).to.match(/functions in data are not callable/);
    expect(failure(() => run('{{range .}}{{call .}}{{end}}', [data.f])).message).to.match(
      /calling functions found in data is not allowed/,
    );
    expect(called).to.equal(false);
  });

  it('nothing evaluates JavaScript', () => {
    expect(run('{{"process.exit(1)"}} {{`${1+1}`}}')).to.equal('process.exit(1) ${1+1}');
    expect(failure(() => run('{{process.exit 1}}')).message).to.equal('template: t:1: function "process" not defined');
  });

  it("template recursion stops at the depth limit with Go's message", () => {
    const e = failure(() => run('{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}', 1));
    expect(e.message).to.equal(
      'template: t:1:25: executing "r" at <{{template "r" .}}>: exceeded maximum template depth (1000)',
    );
    const small = new Template('t', { maxDepth: 10 }).parse(
      '{{define "r"}}x{{template "r" .}}{{end}}{{template "r" .}}',
    );
    const e2 = failure(() => small.execute(1));
    expect(e2.message).to.match(/exceeded maximum template depth \(10\)/);
    expect(e2.output).to.equal('x'.repeat(10));
  });

  it('exhausting the JS stack is a TemplateError, not a crash', () => {
    const deep = '{{' + '('.repeat(20000) + '1' + ')'.repeat(20000) + '}}';
    expect(failure(() => run(deep)).message).to.equal('template: t: template is nested too deeply to parse');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(failure(() => run('{{.}}', cyclic)).message).to.equal(
      'template: t: execution nested too deeply (JS stack exhausted)',
    );
  });

  it('output is limited (maxChars, formerly maxOutput) and keeps the partial output', () => {
    for (const opts of [{ maxChars: 100 }, { maxOutput: 100 }]) {
      const t = new Template('t', opts).parse('{{range .}}0123456789{{end}}');
      expect(t.execute(Array(10).fill(0))).to.have.length(100);
      const e = failure(() => t.execute(Array(11).fill(0)));
      expect(e.message).to.equal('template: t: the render builds more than 100 characters (the limit maxChars)');
      expect(e.output).to.have.length(100);
    }
  });

  it('strings built by functions are limited too (no exponential growth before output)', () => {
    const doubling = '{{$x := "0123456789"}}' + '{{$x = printf "%s%s" $x $x}}'.repeat(40) + '{{len $x}}';
    const e = failure(() => new Template('t', { maxChars: 1 << 20 }).parse(doubling).execute());
    expect(e.message).to.match(
      /executing "t" at <printf "%s%s" \$x \$x>: the render builds more than 1048576 characters/,
    );
  });

  it('range iterations and template calls are bounded (maxIterations)', () => {
    const e = failure(() => new Template('t', { maxIterations: 1000 }).parse('{{range 100000000}}{{end}}').execute());
    expect(e.message).to.equal(
      'template: t:1:8: executing "t" at <100000000>: more than 1000 range iterations and template calls in one execution',
    );
    const branching =
      '{{define "r"}}{{if .}}{{template "r" slice . 1}}{{template "r" slice . 1}}{{end}}{{end}}{{template "r" .}}';
    expect(
      failure(() => new Template('t', { maxIterations: 5000 }).parse(branching).execute(Array(40).fill(1))).message,
    ).to.match(/more than 5000 range iterations/);
  });
});
