/**
 * RFC 5424 STRUCTURED-DATA (§6.3): `[SD-ID *(SP PARAM-NAME="PARAM-VALUE")]`, one or more elements
 * with no space between them. Inside a value `"`, `\` and `]` are escaped with a backslash; a
 * backslash before any other character is kept literally (§6.3.3). An unescaped `]` inside a quoted
 * value is accepted: the quotes make it unambiguous, and real senders (older rsyslog) emit it.
 */

/** One PARAM-NAME="PARAM-VALUE" pair, the value unescaped. */
interface SdParam {
  name: string;
  value: string;
}

/** One SD-ELEMENT. */
export interface SdElement {
  id: string;
  params: SdParam[];
}

export type SdParse = { ok: true; elements: SdElement[]; end: number } | { ok: false; reason: string };

/** SD-NAME: 1..32 printable US-ASCII except `=`, space, `]` and `"`. */
const SD_NAME = /^[\x21\x23-\x3c\x3e-\x5c\x5e-\x7e]{1,32}$/;

/** True for a valid SD-ID or PARAM-NAME. */
function isSdName(s: string): boolean {
  return SD_NAME.test(s);
}

/** Reads an SD-NAME from `pos` up to one of the stop characters. */
function readName(s: string, pos: number): [string, number] {
  let i = pos;
  while (i < s.length && s[i] !== ' ' && s[i] !== '=' && s[i] !== ']' && s[i] !== '"') i++;
  return [s.slice(pos, i), i];
}

/** Reads a quoted PARAM-VALUE whose opening quote is at `pos`; returns the value and the position after the closing quote. */
function readValue(s: string, pos: number): [string, number] | undefined {
  let out = '';
  let i = pos + 1;
  for (;;) {
    const c = s[i];
    if (c === undefined) return undefined;
    if (c === '"') return [out, i + 1];
    if (c === '\\') {
      const next = s[i + 1];
      if (next === '"' || next === '\\' || next === ']') {
        out += next;
        i += 2;
        continue;
      }
    }
    out += c;
    i++;
  }
}

/**
 * Parses one or more SD-ELEMENTs starting at `pos` (which must be `[`). `end` is the position just
 * after the last `]`; what follows is the caller's business (a space and MSG, or nothing).
 */
export function parseStructuredData(s: string, pos: number): SdParse {
  const elements: SdElement[] = [];
  let i = pos;
  if (s[i] !== '[') return { ok: false, reason: "structured data must be '-' or start with '['" };
  while (s[i] === '[') {
    const [id, afterId] = readName(s, i + 1);
    if (!isSdName(id)) return { ok: false, reason: `SD-ID '${id.slice(0, 40)}' is not valid` };
    const params: SdParam[] = [];
    i = afterId;
    for (;;) {
      const c = s[i];
      if (c === ']') {
        i++;
        break;
      }
      if (c !== ' ')
        return {
          ok: false,
          reason: c === undefined ? `SD element '${id}' is not closed` : `unexpected '${c}' in SD element '${id}'`,
        };
      const [name, afterName] = readName(s, i + 1);
      if (!isSdName(name)) return { ok: false, reason: `PARAM-NAME '${name.slice(0, 40)}' in '${id}' is not valid` };
      if (s[afterName] !== '=' || s[afterName + 1] !== '"')
        return { ok: false, reason: `parameter '${name}' in '${id}' needs ="value"` };
      const value = readValue(s, afterName + 1);
      if (!value) return { ok: false, reason: `value of '${name}' in '${id}' is not closed` };
      params.push({ name, value: value[0] });
      i = value[1];
    }
    elements.push({ id, params });
  }
  return { ok: true, elements, end: i };
}

/** A PARAM-VALUE with `"`, `\` and `]` escaped. */
function escapeParamValue(v: string): string {
  return v.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** The STRUCTURED-DATA text of elements, `-` when there are none. Names must be valid SD-NAMEs. */
export function formatStructuredData(elements: readonly SdElement[]): string {
  if (elements.length === 0) return '-';
  return elements
    .map((e) => {
      if (!isSdName(e.id)) throw new RangeError(`SD-ID '${e.id}' is not valid`);
      const params = e.params.map((p) => {
        if (!isSdName(p.name)) throw new RangeError(`PARAM-NAME '${p.name}' is not valid`);
        return ` ${p.name}="${escapeParamValue(p.value)}"`;
      });
      return `[${e.id}${params.join('')}]`;
    })
    .join('');
}
