/** Figures as people read them: counts with separators, rates and durations with their units, ages. */

export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function perSecond(n: number): string {
  return `${n >= 100 ? count(n) : n >= 10 ? n.toFixed(1) : n.toFixed(2)}/s`;
}

export function seconds(s: number): string {
  if (s < 0.001) return `${(s * 1e6).toFixed(0)} µs`;
  if (s < 1) return `${(s * 1000).toFixed(s < 0.01 ? 2 : 1)} ms`;
  return `${s.toFixed(2)} s`;
}

export function bytes(n: number): string {
  return n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(1)} GiB` : `${Math.round(n / (1 << 20))} MiB`;
}

/** How long ago an RFC 3339 time was: `3 s ago`, `5 min ago`, `2 h ago`, `4 d ago`. */
export function ago(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const s = Math.round((now - t) / 1000);
  if (s < 0) return `in ${ago(new Date(now + (now - t)).toISOString(), now).replace(/ ago$/, '')}`;
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/** A Data or Control map as short text: `item=a, b; customer=acme`. */
export function valuesText(map: Record<string, string[]>, max = 120): string {
  const text = Object.entries(map)
    .map(([k, v]) => `${k}=${v.join(', ')}`)
    .join('; ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
