/**
 * A JSON log line as winston wrote one (logform's json format over safe-stable-stringify), kept when
 * the logger stopped loading winston (logger.ts): object keys sorted, an object that contains itself
 * written "[Circular]" instead of throwing, a bigint as a string, and what JSON.stringify would
 * write for everything else (toJSON honoured; undefined, functions and symbols left out).
 */
export function stableJson(value: unknown): string {
  return part('', { '': value }, []) ?? '';
}

function part(key: string, holder: object, ancestors: object[]): string | undefined {
  let v = (holder as Record<string, unknown>)[key];
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function')
    v = (v as { toJSON(key: string): unknown }).toJSON(key);
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(v.toString());
    case 'object': {
      if (v === null) return 'null';
      if (ancestors.includes(v)) return '"[Circular]"';
      ancestors.push(v);
      const parts: string[] = [];
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) parts.push(part(String(i), v, ancestors) ?? 'null');
      } else {
        const keys = Object.keys(v);
        // a typed array's keys are its indices, in order (safe-stable-stringify does not sort them)
        if (!ArrayBuffer.isView(v)) keys.sort();
        for (const k of keys) {
          const p = part(k, v, ancestors);
          if (p !== undefined) parts.push(`${JSON.stringify(k)}:${p}`);
        }
      }
      ancestors.pop();
      return Array.isArray(v) ? `[${parts.join(',')}]` : `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
}
