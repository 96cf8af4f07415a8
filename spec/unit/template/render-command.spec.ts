import { expect } from 'chai';
import { writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTemplateFile } from '../../../template/render-command.js';
import { TemplateError } from '../../../template/index.js';
import { BadInputError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fx = (name: string): string => join(fixtures, name);

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('renderTemplateFile (CLI template command)', () => {
  let dir: string;
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  before(() => {
    dir = tempDir('render-command-');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('exec: echo shape (quoted literal, first info, all operations)', async () => {
    const text = await renderTemplateFile({ dialect: 'exec', file: fx('echo.tmpl'), dataFile: fx('exec-data.json') });
    expect(text).to.equal('command: echo\nargs: ["hello, world","first info","op1","op 2"]\n');
  });

  it('exec: cp shape (first and second file)', async () => {
    const text = await renderTemplateFile({ dialect: 'exec', file: fx('cp.tmpl'), dataFile: fx('exec-data.json') });
    expect(text).to.equal('command: cp\nargs: ["/tmp/a.txt","/tmp/b dir/b.txt"]\n');
  });

  it('exec: mv shape (all files)', async () => {
    const text = await renderTemplateFile({ dialect: 'exec', file: fx('mv.tmpl'), dataFile: fx('exec-data.json') });
    expect(text).to.equal('command: mv\nargs: ["/tmp/a.txt","/tmp/b dir/b.txt","/tmp/c"]\n');
  });

  it('exec: quotes an ambiguous command and reports a template without setCmd', async () => {
    expect(await renderTemplateFile({ dialect: 'exec', file: file('sp.tmpl', '{{setCmd "my tool"}}') })).to.equal(
      'command: "my tool"\nargs: []\n',
    );
    expect(await renderTemplateFile({ dialect: 'exec', file: file('none.tmpl', 'nothing') })).to.equal(
      'command: (none: the template did not call setCmd)\nargs: []\n',
    );
  });

  it('exec: data must be name -> list of strings', async () => {
    const bad = file('bad.json', '{"file": "not a list"}');
    const e = await rejection(renderTemplateFile({ dialect: 'exec', file: fx('mv.tmpl'), dataFile: bad }));
    expect(e).to.be.instanceOf(BadInputError);
    expect(e.message).to.match(/data file\.file must be a list of strings/);
  });

  it('queue: prints the entry count and each entry as JSON (data as a message)', async () => {
    const text = await renderTemplateFile({
      dialect: 'queue',
      file: fx('fanout.tmpl'),
      dataFile: fx('queue-data.json'),
      define: 'fanout',
    });
    expect(text).to.equal(
      'entries: 2\n{"Class":"cmd","Operation":"exec","Control":{},"Data":{"file":["a.txt"]}}\n{"Class":"cmd","Operation":"exec","Control":{},"Data":{"file":["b.txt"]}}\n',
    );
  });

  it('queue: data may be just the Data map; no data is an empty request', async () => {
    const data = file('d.json', '{"file": ["only.txt"]}');
    const text = await renderTemplateFile({
      dialect: 'queue',
      file: fx('fanout.tmpl'),
      dataFile: data,
      define: 'fanout',
    });
    expect(text).to.equal('entries: 1\n{"Class":"cmd","Operation":"exec","Control":{},"Data":{"file":["only.txt"]}}\n');
    expect(await renderTemplateFile({ dialect: 'queue', file: fx('fanout.tmpl'), define: 'fanout' })).to.equal(
      'entries: 0\n',
    );
  });

  it('queue: an unknown define is a TemplateError naming it', async () => {
    const e = await rejection(renderTemplateFile({ dialect: 'queue', file: fx('fanout.tmpl'), define: 'nope' }));
    expect(e).to.be.instanceOf(TemplateError);
    expect(e.message).to.equal('template: no template "nope" associated with template "fanout.tmpl"');
  });

  it('plain: renders with any JSON data, a define, and custom delimiters', async () => {
    const t = file('plain.tmpl', 'Hi {{.name}}{{define "d"}}D{{.}}{{end}}');
    const data = file('plain.json', '{"name": "you"}');
    expect(await renderTemplateFile({ dialect: 'plain', file: t, dataFile: data })).to.equal('Hi you');
    expect(
      await renderTemplateFile({ dialect: 'plain', file: t, dataFile: file('n.json', '5'), define: 'd' }),
    ).to.equal('D5');
    expect(
      await renderTemplateFile({
        dialect: 'plain',
        file: file('sq.tmpl', '<<.>>'),
        dataFile: data,
        delims: ['<<', '>>'],
      }),
    ).to.equal('map[name:you]');
    expect(await renderTemplateFile({ dialect: 'plain', file: t })).to.equal('Hi <no value>');
  });

  it('a function of another dialect names that dialect: setCmd without --dialect exec, addEntry without --dialect queue', async () => {
    const exec = await rejection(renderTemplateFile({ dialect: 'plain', file: fx('echo.tmpl') }));
    expect(exec).to.be.instanceOf(TemplateError);
    expect(exec.message).to.match(
      /function "setCmd" not defined in the plain dialect: setCmd is a function of the exec dialect \(--dialect exec\)/,
    );
    const queue = await rejection(renderTemplateFile({ dialect: 'exec', file: file('q.tmpl', '{{ addEntry "x" }}') }));
    expect(queue.message).to.contain('is a function of the queue dialect (--dialect queue)');
    // a function no dialect has stays as it was
    const none = await rejection(renderTemplateFile({ dialect: 'plain', file: file('n.tmpl', '{{ noSuchFn }}') }));
    expect(none.message).to.not.contain('dialect');
  });

  it('plain: template errors name the file; bad JSON data is reported', async () => {
    const e = await rejection(renderTemplateFile({ dialect: 'plain', file: file('broken.tmpl', '{{if}}') }));
    expect(e.message).to.equal('template: broken.tmpl:1: missing value for if');
    const j = await rejection(
      renderTemplateFile({ dialect: 'plain', file: fx('mv.tmpl'), dataFile: file('x.json', '{nope') }),
    );
    expect(j).to.be.instanceOf(TemplateError);
    expect(j.message).to.match(/is not valid JSON/);
  });
  it("a template that is not a regular file is refused without reading it; the budget names the services' parameters", async () => {
    const zero = await rejection(renderTemplateFile({ dialect: 'plain', file: '/dev/zero' }));
    expect(zero).to.be.instanceOf(BadInputError);
    expect(zero.message).to.equal("template file '/dev/zero' is a character device, not a regular file");
    expect((await rejection(renderTemplateFile({ dialect: 'exec', file: dir }))).message).to.equal(
      `template file '${dir}' is a directory, not a regular file`,
    );
    const padded = await rejection(
      renderTemplateFile({
        dialect: 'exec',
        file: file('pad.tmpl', '{{range .Data.n}}{{addArg (printf "%999999d" 1)}}{{end}}'),
        dataFile: file('n.json', JSON.stringify({ n: Array(100).fill('x') })),
      }),
    );
    expect(padded.message).to.match(/the render builds more than 16777216 characters \(the limit MaxRenderChars\)$/);
  });
});
