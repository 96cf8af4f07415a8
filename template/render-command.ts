/**
 * The body of the CLI's template command: renders a template file in one of the three dialects and
 * returns the text to print (plain: the output; exec: the command and arguments it would run;
 * queue: the entries it would create). Nothing is executed or queued.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Template } from './template.js';
import { readTemplateFile } from './template-file.js';
import { TemplateError, TemplatePhase } from './errors.js';
import { execFuncNames, renderExecTemplate } from './dialects/exec.js';
import { queueFuncNames, renderQueueTemplate } from './dialects/queue.js';
import { makeMessage, validateMessage, validateValueMap } from '../protocol/message.js';
import type { Message } from '../protocol/message.js';
import { TEMPLATE_LIMIT_NAMES } from '../config/common.js';
import { assertNever } from '../protocol/never.js';
import { describeError } from '../protocol/errors.js';

export const Dialect = {
  /** Plain Go text/template, {{ }} by default. */
  Plain: 'plain',
  /** Queue fan-out templates, [[ ]] by default. */
  Queue: 'queue',
  /** Exec command templates, {{ }} by default. */
  Exec: 'exec',
} as const;
export type Dialect = (typeof Dialect)[keyof typeof Dialect];

export interface RenderFileOptions {
  dialect: Dialect;
  /** Template file. */
  file: string;
  /** Delimiters overriding the dialect's. */
  delims?: [string, string];
  /** JSON data file: any value (plain), name → list of strings (exec), a message or its Data (queue). */
  dataFile?: string;
  /** Define to run: plain and queue; default the main template. */
  define?: string;
}

const SIMPLE = /^[\w./:@%+=,-]+$/;

/** A command word shown bare when unambiguous, JSON-quoted otherwise. */
function showWord(s: string): string {
  return SIMPLE.test(s) ? s : JSON.stringify(s);
}

async function readData(file: string | undefined): Promise<unknown> {
  if (file === undefined) return undefined;
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new TemplateError(`data file ${file} is not valid JSON: ${describeError(e)}`, TemplatePhase.Exec, '', e);
  }
}

/** A queue request from data: a full message when it has a Data object, else the Data itself. */
function queueRequest(data: unknown): Message {
  if (data === undefined || data === null) return makeMessage();
  if (typeof data === 'object' && !Array.isArray(data)) {
    const d = (data as Record<string, unknown>).Data;
    if (typeof d === 'object' && d !== null && !Array.isArray(d)) return validateMessage(data, 'data file');
  }
  return makeMessage({ Data: validateValueMap(data, 'data file') });
}

/**
 * An error naming a function another dialect defines gets that dialect as a hint: without --dialect a
 * template of the exec service read `function "setCmd" not defined`, which says nothing of where it is.
 */
function withDialectHint(e: unknown, dialect: Dialect): unknown {
  if (!(e instanceof TemplateError)) return e;
  const fn = /function "([^"]+)" not defined/.exec(e.message)?.[1];
  if (fn === undefined) return e;
  const owner =
    dialect !== Dialect.Exec && execFuncNames().includes(fn)
      ? Dialect.Exec
      : dialect !== Dialect.Queue && queueFuncNames().includes(fn)
        ? Dialect.Queue
        : undefined;
  if (owner === undefined) return e;
  return new TemplateError(
    `${e.message} in the ${dialect} dialect: ${fn} is a function of the ${owner} dialect (--dialect ${owner})`,
    e.phase,
    e.output,
    e,
  );
}

export async function renderTemplateFile(opts: RenderFileOptions): Promise<string> {
  try {
    return await renderIn(opts);
  } catch (e) {
    throw withDialectHint(e, opts.dialect);
  }
}

async function renderIn(opts: RenderFileOptions): Promise<string> {
  const source = await readTemplateFile(opts.file);
  const data = await readData(opts.dataFile);
  // the dry run renders under the services' default budget and names their parameters
  const shared = { limitNames: TEMPLATE_LIMIT_NAMES, ...(opts.delims === undefined ? {} : { delims: opts.delims }) };
  switch (opts.dialect) {
    case Dialect.Plain: {
      const t = new Template(basename(opts.file), shared).parse(source);
      const value = data === undefined ? null : data;
      return opts.define === undefined || opts.define === '' ? t.execute(value) : t.executeTemplate(opts.define, value);
    }
    case Dialect.Exec: {
      const r = renderExecTemplate(source, validateValueMap(data ?? {}, 'data file'), {
        name: basename(opts.file),
        ...shared,
      });
      const command = r.command === undefined ? '(none: the template did not call setCmd)' : showWord(r.command);
      return `command: ${command}\nargs: ${JSON.stringify(r.args)}\n`;
    }
    case Dialect.Queue: {
      const r = renderQueueTemplate(source, opts.define ?? '', queueRequest(data), {
        name: basename(opts.file),
        ...shared,
      });
      const lines = [`entries: ${r.entries.length}`];
      for (const e of r.entries)
        lines.push(JSON.stringify({ Class: e.Class, Operation: e.Operation, Control: e.Control, Data: e.Data }));
      return lines.join('\n') + '\n';
    }
    default:
      return assertNever(opts.dialect, 'dialect');
  }
}
