import { expect } from 'chai';
import { renderExecTemplate, ExecTemplate } from '../../../template/dialects/exec.js';
import { TemplateError } from '../../../template/index.js';
import { mapOf } from '../../../protocol/message.js';
import type { ValueMap } from '../../../protocol/message.js';

const DATA: ValueMap = mapOf({
  info: ['first info', 'second'],
  operation: ['op1', 'op 2'],
  file: ['/tmp/a', '/tmp/b c'],
  n: ['5'],
});
const out = (src: string, data: ValueMap = DATA, env: Record<string, string> = {}): string =>
  renderExecTemplate(src, data, { env }).output;

function failure(f: () => unknown): TemplateError {
  try {
    f();
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('exec dialect', () => {
  it('setCmd sets the command and addArg appends strings or each element of a list; both return true', () => {
    const r = renderExecTemplate(
      '{{setCmd "echo"}} {{addArg "lit"}} {{addArg (index .Data.info 0)}} {{addArg .Data.operation}} {{addArg 7}}',
      DATA,
    );
    expect(r.command).to.equal('echo');
    expect(r.args).to.deep.equal(['lit', 'first info', 'op1', 'op 2', '7']);
    expect(r.output).to.equal('true true true true true');
  });

  it('no setCmd leaves the command undefined; addArg rejects maps and nil', () => {
    expect(renderExecTemplate('x', DATA).command).to.equal(undefined);
    expect(failure(() => out('{{addArg .Data}}')).message).to.match(/addArg: cannot add a value of this type/);
    expect(failure(() => out('{{addArg nil}}')).message).to.match(/addArg: cannot add a value of this type/);
    expect(failure(() => out('{{setCmd 1}}')).message).to.match(/expected string; found 1/);
  });

  it('limits the number of arguments', () => {
    const t = new ExecTemplate('{{range .Data.file}}{{addArg .}}{{addArg .}}{{end}}', { maxArgs: 3, env: {} });
    expect(failure(() => t.render(DATA)).message).to.match(/addArg: more than 3 arguments/);
  });

  it('plus and minus take Go ints', () => {
    expect(out('{{plus 2 3}} {{minus 2 3}} {{plus (len .Data.file) 1}}')).to.equal('5 -1 3');
    expect(failure(() => out('{{plus (index .Data.n 0) 1}}')).message).to.match(
      /wrong type for value; expected int; got string/,
    );
    expect(failure(() => out('{{plus 1.5 1}}')).message).to.match(/expected integer; found 1.5/);
  });

  it('replace replaces every occurrence (Go strings.ReplaceAll)', () => {
    expect(out('{{replace "a-b-c" "-" "+"}}|{{replace "abc" "" "."}}|{{replace "aaa" "aa" "b"}}')).to.equal(
      'a+b+c|.a.b.c.|ba',
    );
  });

  it('replaceLine replaces each whole line containing the text', () => {
    expect(out('{{replaceLine "one\\ntwo x\\nthree\\nx four" "x" "NEW"}}')).to.equal('one\nNEW\nthree\nNEW');
    expect(out('{{replaceLine "a\\r\\nkey=1\\r\\n" "key" "key=2"}}')).to.equal('a\r\nkey=2\r\n');
  });

  it("replaceLineAndIdent keeps the replaced line's indentation", () => {
    expect(out('{{replaceLineAndIdent "a:\\n    port: 1\\n\\tport: 2\\nport: 3" "port" "port: 9"}}')).to.equal(
      'a:\n    port: 9\n\tport: 9\nport: 9',
    );
  });

  it('noescape returns its argument unchanged', () => {
    expect(out('{{noescape "<a href=\'x\'>&"}}')).to.equal("<a href='x'>&");
  });

  it('marshal is compact JSON like Go json.Marshal (sorted keys, <>& escaped)', () => {
    expect(out('{{marshal .Data.file}}|{{marshal "<&>"}}|{{marshal 1.5}}|{{marshal nil}}|{{marshal true}}')).to.equal(
      '["/tmp/a","/tmp/b c"]|"\\u003c\\u0026\\u003e"|1.5|null|true',
    );
    const data = mapOf({ b: ['2'], a: ['1'] });
    expect(out('{{marshal .Data}}', data)).to.equal('{"a":["1"],"b":["2"]}');
  });

  it('marshalIndent indents with two spaces', () => {
    const data = mapOf({ b: ['2'], a: [] });
    expect(out('{{marshalIndent .Data}}', data)).to.equal('{\n  "a": [],\n  "b": [\n    "2"\n  ]\n}');
  });

  it('after returns the text after the first occurrence, or empty', () => {
    expect(out('{{after "key=value=x" "="}}|{{after "abc" "z"}}|{{after "abc" ""}}')).to.equal('value=x||abc');
  });

  it('tolower and toupper', () => {
    expect(out('{{tolower "AbÇ"}} {{toupper "abç"}}')).to.equal('abç ABÇ');
  });

  it('string formats any value like Go %v', () => {
    expect(out('{{string 5}}|{{string .Data.file}}|{{string 1.5}}|{{string nil}}|{{string true}}')).to.equal(
      '5|[/tmp/a /tmp/b c]|1.5|<nil>|true',
    );
  });

  it('split returns a list (Go strings.Split)', () => {
    expect(
      out('{{split "a,b,,c" ","}}|{{len (split "" ",")}}|{{split "héé" ""}}|{{index (split "k=v" "=") 1}}'),
    ).to.equal('[a b  c]|1|[h é é]|v');
  });

  it('env reads only the injected environment, empty when unset', () => {
    expect(out('{{env "HOME"}}|{{env "MINE"}}|{{env "constructor"}}', DATA, { MINE: 'yes' })).to.equal('|yes|');
    const procDefault = new ExecTemplate('{{env "PATH"}}').render(DATA);
    expect(procDefault.output).to.equal(process.env.PATH ?? '');
  });

  it('set and get use a scratch map private to one render', () => {
    expect(out('{{set "k" "v"}}{{get "k"}}|{{set "n" 2}}{{plus (get "n") 1}}|{{get "missing"}}')).to.equal(
      'v|3|<no value>',
    );
    const t = new ExecTemplate('{{get "k"}}{{set "k" "v"}}', { env: {} });
    expect(t.render(DATA).output).to.equal('<no value>');
    expect(t.render(DATA).output).to.equal('<no value>', 'nothing leaks between renders');
  });

  it('niltoblank gives empty text for nil and the value otherwise', () => {
    expect(out('[{{niltoblank nil}}][{{niltoblank .Data.missing}}][{{niltoblank "e"}}][{{niltoblank 3}}]')).to.equal(
      '[][][e][3]',
    );
  });

  it('standard functions stay available and data is .Data', () => {
    expect(
      out('{{len .Data.file}} {{printf "%q" (index .Data.file 1)}} {{if eq (index .Data.n 0) "5"}}five{{end}}'),
    ).to.equal('2 "/tmp/b c" five');
  });

  it('runs the shapes', () => {
    const echo = renderExecTemplate(
      '{{setCmd "echo"}}{{addArg "a quoted literal"}}{{addArg (index .Data.info 0)}}{{addArg .Data.operation}}',
      DATA,
    );
    expect([echo.command, ...echo.args]).to.deep.equal(['echo', 'a quoted literal', 'first info', 'op1', 'op 2']);
    const cp = renderExecTemplate(
      '{{setCmd "cp"}}{{addArg (index .Data.file 0)}}{{addArg (index .Data.file 1)}}',
      DATA,
    );
    expect([cp.command, ...cp.args]).to.deep.equal(['cp', '/tmp/a', '/tmp/b c']);
    const mv = renderExecTemplate('{{setCmd "mv"}}{{addArg .Data.file}}', DATA);
    expect([mv.command, ...mv.args]).to.deep.equal(['mv', '/tmp/a', '/tmp/b c']);
  });

  it('a shell command line stays one argument (no shell, no expansion)', () => {
    const r = renderExecTemplate(
      '{{setCmd "/bin/sh"}}{{addArg "-c"}}{{addArg (printf "ls %s/*" (index .Data.file 0))}}',
      DATA,
    );
    expect(r.args).to.deep.equal(['-c', 'ls /tmp/a/*']);
  });
});
