/**
 * CEF, ArcSight Common Event Format:
 * `CEF:Version|Device Vendor|Device Product|Device Version|Signature ID|Name|Severity|Extension`,
 * alone or as the MSG of a syslog message. Header fields unescape `\|` and `\\`. The extension is
 * `key=value` pairs separated by spaces, where a value may itself contain spaces: it runs until the
 * next ` key=` (an unescaped `=` preceded by a key and a space); values unescape `\=`, `\\`, `\n`,
 * `\r`. Any other backslash sequence is kept literally, as the CEF guide asks.
 */
import { emptyRecord } from '../../protocol/message.js';

/** The Data key suffixes of the header, in header order (`cef_version`, `cef_vendor`, …). */
const CEF_HEADER_KEYS = ['version', 'vendor', 'product', 'device_version', 'signature_id', 'name', 'severity'] as const;
type CefHeaderKey = (typeof CEF_HEADER_KEYS)[number];

/** A decoded CEF event. */
export interface CefEvent {
  header: Record<CefHeaderKey, string>;
  /** Extension pairs in the order received; a repeated key appears once per occurrence. */
  extension: Array<[string, string]>;
}

export type CefParse = { ok: true; event: CefEvent } | { ok: false; reason: string };

/** `CEF:` then the version, at the start of the text or after white space (a syslog header before it). */
const CEF_START = /(?:^|\s)CEF:(?=\d)/;
/** An extension key and its `=`: at the start or after white space; keys are letters, digits, `_ . -`. */
const EXT_KEY = /(?<=^|\s)([A-Za-z0-9_.-]+)=/g;

const HEADER_SET: ReadonlySet<string> = new Set(CEF_HEADER_KEYS);

/** The index of `CEF:` in a message, or -1. */
export function findCef(text: string): number {
  const m = CEF_START.exec(text);
  if (!m) return -1;
  return m.index + (m[0].length - 4);
}

function unescapeExtension(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\([=\\nr])/g, (_s, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

function parseExtension(ext: string): Array<[string, string]> {
  const keys = [...ext.matchAll(EXT_KEY)];
  const out: Array<[string, string]> = [];
  keys.forEach((m, k) => {
    const valueStart = m.index + m[0].length;
    const valueEnd = keys[k + 1]?.index ?? ext.length;
    // the spaces before the next key separate pairs; they are not part of the value
    out.push([m[1]!, unescapeExtension(ext.slice(valueStart, valueEnd).trimEnd())]);
  });
  return out;
}

/** Parses text that starts with `CEF:`. */
export function parseCef(text: string): CefParse {
  if (!text.startsWith('CEF:')) return { ok: false, reason: "CEF must start with 'CEF:'" };
  const fields: string[] = [];
  let current = '';
  let i = 4;
  for (; i < text.length && fields.length < 7; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '\\' && (next === '|' || next === '\\')) {
      current += next;
      i++;
    } else if (c === '|') {
      fields.push(current);
      current = '';
    } else current += c;
  }
  // a sender with an empty extension may leave out the last '|'
  if (fields.length === 6 && i >= text.length) fields.push(current);
  if (fields.length < 7) return { ok: false, reason: `CEF header has ${fields.length + 1} of 8 fields` };
  if (!/^\d{1,3}$/.test(fields[0]!))
    return { ok: false, reason: `CEF version '${fields[0]!.slice(0, 20)}' is not a number` };
  const header = emptyRecord<string>() as Record<CefHeaderKey, string>;
  CEF_HEADER_KEYS.forEach((key, k) => (header[key] = fields[k]!));
  return { ok: true, event: { header, extension: parseExtension(text.slice(i)) } };
}

/** The CEF event in a syslog MSG (or a bare line), or undefined when there is none or it is malformed. */
export function decodeCef(message: string): CefEvent | undefined {
  const at = findCef(message);
  if (at < 0) return undefined;
  const parsed = parseCef(message.slice(at));
  return parsed.ok ? parsed.event : undefined;
}

/**
 * The event as `[key, value]` pairs without the `cef_` prefix: the header first, then the extension.
 * An extension key equal to a header key (`name`, `severity`…) is dropped: the header field wins.
 */
export function cefEntries(e: CefEvent): Array<[string, string]> {
  const out: Array<[string, string]> = CEF_HEADER_KEYS.map((k) => [k, e.header[k]]);
  for (const [k, v] of e.extension) if (!HEADER_SET.has(k)) out.push([k, v]);
  return out;
}
