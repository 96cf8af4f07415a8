/**
 * HTML built with a tagged template that escapes every interpolated value unless it is already
 * HTML (a nested `html` result, or `raw` for text the console itself produced, such as an SVG).
 * Type-checked and escaping by default: a queue entry's Data or a crash message shows as text,
 * never as markup.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | undefined | null | readonly Part[];

function partText(p: Part): string {
  if (p === undefined || p === null || p === false) return '';
  if (p instanceof Html) return p.text;
  if (Array.isArray(p)) return (p as readonly Part[]).map(partText).join('');
  return escapeHtml(String(p));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  parts.forEach((p, i) => {
    out += partText(p) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup the console produced itself (an SVG it drew): not escaped. */
export function raw(text: string): Html {
  return new Html(text);
}
