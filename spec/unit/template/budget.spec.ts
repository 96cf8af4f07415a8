import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template, TemplateError, RenderBudgetError, BudgetLimit } from '../../../template/index.js';
import { ExecTemplate } from '../../../template/dialects/exec.js';
import { QueueTemplate } from '../../../template/dialects/queue.js';
import { readTemplateFile } from '../../../template/template-file.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { ValueMap } from '../../../protocol/message.js';
import { Code } from '../../../protocol/codes.js';
import { tempDir } from '../../temp.js';

/** A few thousand items, as a ~15 KB request carries them. */
const ITEMS: ValueMap = mapOf({ items: Array.from({ length: 3000 }, (_, i) => String(i)) });
const LIMIT_NAMES = { chars: 'MaxRenderChars', items: 'MaxRenderItems' };

/**
 * The RenderBudgetError `f` throws, and that it threw it quickly without the heap growing by the
 * gigabytes the render asks for (both bounds are loose: the point is orders of magnitude).
 */
function budgetFailure(f: () => unknown): RenderBudgetError {
  const heapBefore = process.memoryUsage().heapUsed;
  const started = Date.now();
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  const elapsed = Date.now() - started;
  const grown = process.memoryUsage().heapUsed - heapBefore;
  if (!(error instanceof RenderBudgetError))
    throw new Error(`expected a RenderBudgetError, got ${error === undefined ? 'none' : String(error)}`);
  expect(error).to.be.instanceOf(TemplateError);
  expect(error.code).to.equal(Code.TooLarge);
  expect(elapsed, 'ms to fail').to.be.below(10_000);
  expect(grown, 'heap growth in bytes').to.be.below(512 * 1024 * 1024);
  return error;
}

const exec = (source: string, budget: { maxChars?: number; maxItems?: number } = {}): ExecTemplate =>
  new ExecTemplate(source, { env: {}, limitNames: LIMIT_NAMES, ...budget });
const queue = (source: string, budget: { maxChars?: number; maxItems?: number } = {}): QueueTemplate =>
  new QueueTemplate(source, { limitNames: LIMIT_NAMES, ...budget });
const request = makeMessage({ Class: 'in', Operation: 'op', Data: ITEMS.items === undefined ? {} : ITEMS });

describe('render budget: one budget for everything a render builds', () => {
  it('addArg: thousands of printf-padded arguments stop at the character budget, naming the parameter', () => {
    const t = exec('{{setCmd "echo"}}{{range .Data.items}}{{addArg (printf "%999999d" 1)}}{{end}}');
    const e = budgetFailure(() => t.render(ITEMS));
    expect(e.limit).to.equal(BudgetLimit.Chars);
    expect(e.max).to.equal(16 * 1024 * 1024);
    // the padded string that no longer fits is refused where it is built
    expect(e.message).to.match(
      /^template: exec:1:\d+: executing "exec" at <printf "%999999d" 1>: the render builds more than 16777216 characters \(the limit MaxRenderChars\)$/,
    );
    // strings from the request are charged where addArg keeps them
    const kept = exec('{{range .Data.items}}{{addArg $.Data.big}}{{end}}');
    expect(budgetFailure(() => kept.render({ ...ITEMS, big: ['x'.repeat(10_000)] })).message).to.match(
      /at <addArg \$\.Data\.big>: the render builds more than 16777216 characters/,
    );
  });

  it('addArg counts items too: a list of many empty arguments stops at the item budget', () => {
    const t = exec('{{range .Data.items}}{{addArg ""}}{{end}}', { maxItems: 100 });
    const e = budgetFailure(() => t.render(ITEMS));
    expect(e.limit).to.equal(BudgetLimit.Items);
    expect(e.message).to.match(
      /the render adds more than 100 arguments, values and entries \(the limit MaxRenderItems\)$/,
    );
    expect(t.render(mapOf({ items: Array(99).fill('') })).args).to.have.length(99);
  });

  it('addValue: values padded into a data map stop at the budget', () => {
    const t = queue('[[$d := newData]][[range .Data.items]][[addValue $d "v" (printf "%999999d" 1)]][[end]]');
    expect(budgetFailure(() => t.render('', request)).limit).to.equal(BudgetLimit.Chars);
    const few = queue('[[$d := newData]][[range .Data.items]][[addValue $d "v" .]][[end]]', { maxItems: 1000 });
    expect(budgetFailure(() => few.render('', request)).limit).to.equal(BudgetLimit.Items);
  });

  it('addEntry: each entry is charged with its keys and values, so copying a grown request stops', () => {
    // every entry is a copy of the request: 3000 copies of 3000 values would be 9 million strings
    const copies = queue('[[range .Data.items]][[addEntry getRequest]][[end]]');
    expect(budgetFailure(() => copies.render('', request)).limit).to.equal(BudgetLimit.Items);
    const padded = queue(
      '[[range .Data.items]][[$r := newRequest]][[addValue (getRequestData $r) "v" (printf "%99999d" 1)]][[addEntry $r]][[end]]',
    );
    const e = budgetFailure(() => padded.render('', request));
    expect(e.limit).to.equal(BudgetLimit.Chars);
    expect(e.message).to.match(/the limit MaxRenderChars/);
    // within the budget nothing changes
    expect(
      queue(
        '[[range .Data.items]][[$r := newRequest]][[addValue (getRequestData $r) "v" .]][[addEntry $r]][[end]]',
      ).render('', request).entries,
    ).to.have.length(3000);
  });

  it('printf padding is checked before it is built: one call cannot build gigabytes', () => {
    // a width applies to every element of a list: 3000 elements padded to a million characters each
    const list = exec('{{printf "%999999v" .Data.items}}');
    expect(budgetFailure(() => list.render(ITEMS)).limit).to.equal(BudgetLimit.Chars);
    const verbs = exec('{{printf "' + '%0999999d'.repeat(100) + '" ' + '1 '.repeat(100) + '}}');
    expect(budgetFailure(() => verbs.render(ITEMS)).message).to.match(/at <printf /);
    // a small budget refuses a wide field before padding it
    const small = exec('{{printf "%999999d" 1}}', { maxChars: 1000 });
    expect(budgetFailure(() => small.render(ITEMS)).max).to.equal(1000);
    expect(exec('{{printf "%999d" 1}}', { maxChars: 1000 }).render(ITEMS).output).to.have.length(999);
  });

  it('output is charged to the same budget as what functions keep', () => {
    const t = exec('{{range .Data.items}}{{addArg .}}{{end}}{{range .Data.items}}0123456789{{end}}', {
      maxChars: 30_000,
    });
    // 3000 arguments of up to 4 characters, then 30000 characters of output: together over the budget
    const e = budgetFailure(() => t.render(ITEMS));
    expect(e.message).to.equal(
      'template: exec: the render builds more than 30000 characters (the limit MaxRenderChars)',
    );
    expect(e.output.length).to.be.below(30_000);
    expect(() =>
      new Template('t', { maxChars: 30_000 }).parse('{{range .}}0123456789{{end}}').execute(Array(3000).fill(0)),
    ).not.to.throw();
  });

  it('replace, replaceLine, marshalIndent and set check or charge the budget', () => {
    const big = 'x'.repeat(10_000);
    const replace = exec('{{$s := index .Data.big 0}}{{replace $s "" $s}}');
    expect(budgetFailure(() => replace.render(mapOf({ big: [big] }))).message).to.match(/at <replace \$s "" \$s>/);
    const lines = exec('{{$s := replace (index .Data.big 0) "x" "\\n"}}{{replaceLine $s "" (index .Data.big 0)}}');
    expect(budgetFailure(() => lines.render(mapOf({ big: [big] }))).message).to.match(/at <replaceLine /);
    const set = exec('{{range .Data.items}}{{set . (index $.Data.big 0)}}{{end}}');
    expect(budgetFailure(() => set.render({ ...ITEMS, big: [big] })).message).to.match(
      /at <set \. \(index \$\.Data\.big 0\)>/,
    );
    // setting the same key again gives back what it held
    expect(
      exec('{{range .Data.items}}{{set "k" (printf "%9999d" 1)}}{{end}}', { maxChars: 20_000 }).render(ITEMS).output,
    ).to.equal('');
    const indent = exec('{{marshalIndent (split (printf "%999999s" "") "")}}', { maxChars: 2_000_000 });
    expect(budgetFailure(() => indent.render(ITEMS)).message).to.match(/at <marshalIndent /);
  });

  it('a render over its budget leaves the template usable: the next render starts with a full budget', () => {
    const t = exec('{{range .Data.items}}{{addArg .}}{{end}}', { maxItems: 10 });
    budgetFailure(() => t.render(ITEMS));
    expect(t.render(mapOf({ items: ['a', 'b'] })).args).to.deep.equal(['a', 'b']);
  });
});

describe('template files: only regular files up to the limit are read', () => {
  it('/dev/zero, a directory and a FIFO are refused at once with a clear message', async () => {
    const started = Date.now();
    const zero = await readTemplateFile('/dev/zero').catch((e: unknown) => e as Error);
    expect((zero as Error).message).to.equal("template file '/dev/zero' is a character device, not a regular file");
    const dir = tempDir('hn-tmplfile-');
    const dirError = await readTemplateFile(dir).catch((e: unknown) => e as Error);
    expect((dirError as Error).message).to.equal(`template file '${dir}' is a directory, not a regular file`);
    // opening a FIFO with no writer must not wait for one
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const fifoError = await readTemplateFile(fifo).catch((e: unknown) => e as Error);
    expect((fifoError as Error).message).to.equal(`template file '${fifo}' is a FIFO, not a regular file`);
    expect(Date.now() - started).to.be.below(5000);
  });

  it('a file over the limit is refused (413) and one at the limit is read', async () => {
    const dir = tempDir('hn-tmplfile-');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 't.tmpl');
    writeFileSync(file, 'x'.repeat(101));
    const e = (await readTemplateFile(file, 100).catch((err: unknown) => err)) as { code: number; message: string };
    expect(e.code).to.equal(Code.TooLarge);
    expect(e.message).to.equal(`template file '${file}' is larger than the limit of 100 bytes`);
    writeFileSync(file, 'é'.repeat(50));
    expect(await readTemplateFile(file, 100)).to.equal('é'.repeat(50));
  });
});
