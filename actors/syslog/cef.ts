/**
 * CEF (ArcSight Common Event Format): `CEF:Version|Vendor|Product|Version|SignatureID|Name|Severity|Extension`,
 * on its own or inside a syslog message. Header fields unescape `\|` and `\\`; extension values run
 * to the next ` key=` and unescape `\=`, `\\`, `\n`, `\r`.
 */
const HEADER_NAMES = ['version', 'vendor', 'product', 'device_version', 'signature_id', 'name', 'severity'] as const;

/** The decoded fields, or undefined when the text holds no CEF. */
export function decodeCef(text: string): Record<string, string> | undefined {
  const start = text.indexOf('CEF:');
  if (start < 0) return undefined;
  const body = text.slice(start + 4);
  const header: string[] = [];
  let current = '';
  let i = 0;
  for (; i < body.length && header.length < 7; i++) {
    const c = body[i]!;
    if (c === '\\' && (body[i + 1] === '|' || body[i + 1] === '\\')) {
      current += body[++i];
    } else if (c === '|') {
      header.push(current);
      current = '';
    } else current += c;
  }
  if (header.length < 7) return undefined;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  HEADER_NAMES.forEach((n, k) => (out[n] = header[k]!));
  const ext = body.slice(i);
  const keys = [...ext.matchAll(/(?:^|(?<=\s))([A-Za-z0-9_.\-[\]]+)=/g)];
  keys.forEach((m, k) => {
    const valueStart = m.index! + m[0].length;
    const valueEnd = k + 1 < keys.length ? keys[k + 1]!.index! : ext.length;
    const raw = ext.slice(valueStart, valueEnd).replace(/\s+$/, '');
    const key = m[1]!;
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return;
    out[key] = raw.replace(/\\([=\\nr])/g, (_s, e: string) => (e === 'n' ? '\n' : e === 'r' ? '\r' : e));
  });
  return out;
}
