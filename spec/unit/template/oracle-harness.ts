/**
 * Runs conformance cases against the engine the way spec/template-oracle/main.go runs them
 * against Go: same test functions, same parse order, same execution entry point.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Template, TemplateError, Param, FuncError } from '../../../template/index.js';
import type { FuncMap } from '../../../template/index.js';
import type { OracleCase } from '../../template-oracle/cases/types.js';

export interface Expected {
  output: string;
  error?: string;
  source?: string;
}

export interface Actual {
  output: string;
  error?: string;
}

const dir = join(dirname(fileURLToPath(import.meta.url)), '../../template-oracle');

export function loadCases(): OracleCase[] {
  return JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as OracleCase[];
}

export function loadExpected(): Record<string, Expected> {
  return JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, Expected>;
}

/** The functions main.go registers, with the same Go signatures. */
export const TEST_FUNCS: FuncMap = {
  upper: { fn: (s: string) => s.toUpperCase(), params: [Param.String] },
  add: { fn: (a: number, b: number) => a + b, params: [Param.Int, Param.Int] },
  fail: {
    fn: () => {
      throw new FuncError('boom');
    },
    params: [],
  },
  seq: { fn: (n: number) => Array.from({ length: n }, (_, i) => i), params: [Param.Int] },
  list: { fn: (...args: unknown[]) => args, params: [], variadic: Param.Any },
  yes: { fn: (b: boolean) => String(b), params: [Param.Bool] },
};

export function runCase(c: OracleCase): Actual {
  const t = new Template('t', {
    funcs: TEST_FUNCS,
    ...(c.delims ? { delims: c.delims } : {}),
    ...(c.missingkey ? { missingkey: c.missingkey } : {}),
  });
  try {
    for (const text of [...(c.pre ?? []), c.template]) t.parse(text);
  } catch (e) {
    if (e instanceof TemplateError) return { output: '', error: e.message };
    throw e;
  }
  try {
    const data = c.data === undefined ? null : c.data;
    const output = c.exec !== undefined ? t.executeTemplate(c.exec, data) : t.execute(data);
    return { output };
  } catch (e) {
    if (e instanceof TemplateError) return { output: e.output, error: e.message };
    throw e;
  }
}
