/**
 * Request validation per route (`Schemas`, README, Request validation): a JSON Schema (2020-12) per
 * route pattern, read and compiled once at start with ajv (a file that cannot be read, is not JSON or
 * does not compile stops the start), then applied to the Data of every request of its routes before
 * anything reaches the hive. A request that does not match is answered 400 naming each failing
 * field by its JSON Pointer and why (`/order/0: must match pattern "^[0-9]+$"`), so a client fixes
 * its body without reading the schema. Data is what a message carries (name → list of strings), so a
 * schema describes an object whose values are lists of strings.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { PatternEntry, PatternTable } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';

export interface SchemaRule {
  /** The schema file's path (the `file://` prefix removed). */
  readonly file: string;
}

const FORM = 'pattern=file://<schema.json>';
/** Problems listed in one 400 at most: a body wrong everywhere would otherwise make an answer as large as its schema. */
const MAX_LISTED = 20;

function parseRule(raw: string): SchemaRule {
  const file = raw.startsWith('file://') ? raw.slice('file://'.length) : raw;
  if (file === '') throw new Error('names no schema file (file://<schema.json>)');
  return { file };
}

/** Parses Schemas; throws an Error naming the bad entry. */
export function parseSchemas(text: string): PatternTable<SchemaRule> {
  return parsePatternTable(text, FORM, parseRule);
}

/** RFC 6901: a property name as a JSON Pointer segment. */
const pointerSegment = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * One ajv error as a client reads it: the failing field's path and why. A missing or unexpected
 * property is named by its own path (ajv reports it at its parent's).
 */
function describeProblem(e: ErrorObject): string {
  const at = e.instancePath;
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return `${at}/${pointerSegment(String(params.missingProperty))}: is required`;
  if (e.keyword === 'additionalProperties')
    return `${at}/${pointerSegment(String(params.additionalProperty))}: is not allowed`;
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues))
    return `${at || '/'}: must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return `${at || '/'}: ${e.message ?? e.keyword}`;
}

export interface SchemaRefusal {
  /** The entry's pattern. */
  route: string;
  /** Each failing field and why, at most MAX_LISTED. */
  problems: string[];
  /** How many more there were. */
  more: number;
}

interface Compiled {
  readonly validate: ValidateFunction;
  /** The schema as read (the OpenAPI document carries it as the request body's). */
  readonly schema: Record<string, unknown>;
}

/** The compiled schemas of a gateway; a file named by several entries is compiled once. */
export class RequestSchemas {
  private readonly byEntry = new Map<PatternEntry<SchemaRule>, Compiled>();

  constructor(private readonly table: PatternTable<SchemaRule>) {
    // allErrors: a client learns every wrong field at once, not one per attempt; strict: a typo in a
    // keyword ('minLenght') or an unknown format stops the start rather than checking nothing
    const ajv = new Ajv2020({
      allErrors: true,
      strict: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
    });
    formats.default(ajv);
    const byFile = new Map<string, Compiled>();
    for (const entry of table.entries) {
      const { file } = entry.value;
      let compiled = byFile.get(file);
      if (!compiled) {
        compiled = compileFile(ajv, file, entry.pattern);
        byFile.set(file, compiled);
      }
      this.byEntry.set(entry, compiled);
    }
  }

  /** The schema that applies to the route, as read; undefined when no entry matches it. */
  schemaFor(cls: string, operation: string): Record<string, unknown> | undefined {
    const entry = this.table.match(cls, operation);
    return entry ? this.byEntry.get(entry)!.schema : undefined;
  }

  /** Checks a message's Data against its route's schema: undefined when it matches (or no schema applies). */
  check(cls: string, operation: string, data: unknown): SchemaRefusal | undefined {
    const entry = this.table.match(cls, operation);
    if (!entry) return undefined;
    const { validate } = this.byEntry.get(entry)!;
    if (validate(data)) return undefined;
    const all = [...new Set((validate.errors ?? []).map(describeProblem))];
    return { route: entry.pattern, problems: all.slice(0, MAX_LISTED), more: Math.max(0, all.length - MAX_LISTED) };
  }
}

/** Reads and compiles one schema file; each failure is a one-line ConfigError naming the file, the entry and the fix. */
function compileFile(ajv: Ajv2020, file: string, pattern: string): Compiled {
  const where = `Schemas: schema file '${file}' (entry '${pattern}')`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `${where} cannot be read: ${oneLine(describeError(e))}; write it or correct the path (relative paths are from the working directory)`,
    );
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${where} is not JSON: ${oneLine(describeError(e))}`);
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new ConfigError(`${where} is not a JSON Schema (an object)`);
  const declared = (schema as Record<string, unknown>).$schema;
  if (declared !== undefined && declared !== 'https://json-schema.org/draft/2020-12/schema') {
    throw new ConfigError(
      `${where} declares $schema '${oneLine(String(declared)).slice(0, 100)}': only JSON Schema 2020-12 is understood; write "https://json-schema.org/draft/2020-12/schema" or leave $schema out`,
    );
  }
  try {
    return { validate: ajv.compile(schema), schema: schema as Record<string, unknown> };
  } catch (e) {
    throw new ConfigError(`${where} does not compile: ${oneLine(describeError(e))}`);
  }
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
