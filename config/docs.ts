/**
 * Renders the parameter tables for `hivenode params` and for the README reference, which a test keeps
 * identical to this output (so the docs can never drift from the tables).
 */
import type { ParamSpec } from './params.js';
import { expandCtrl } from './params.js';
import type { ServiceInfo } from './registry.js';

function shownDefault(p: ParamSpec): string {
  if (p.defaultBy) return `per ${p.defaultBy.param}`;
  if (p.default === undefined) return 'none';
  return `'${p.default}'`;
}

function notes(p: ParamSpec, info: ServiceInfo): string {
  const n: string[] = [];
  if (p.mandatory) n.push('mandatory');
  if (p.secret) n.push('secret, file:// allowed');
  if (p.watchedFile) n.push('re-read when the file changes');
  if (p.beyondSpec) n.push('beyond the spec');
  if (p.defaultBy) n.push(defaultsByText(p.defaultBy, info));
  if (p.name === 'INPUTCHANNEL' && info.defaultInputChannel) n.push(`fallback '${info.defaultInputChannel}'`);
  return n.length ? ` (${n.join('; ')})` : '';
}

/** "default per SQL_ENGINE: postgres '5432', …; not used by sqlite" (the values without a default). */
function defaultsByText(by: NonNullable<ParamSpec['defaultBy']>, info: ServiceInfo): string {
  const all = info.params.find((q) => q.name === by.param)?.values ?? [];
  const unused = all.filter((v) => by.values[v] === undefined);
  const given = Object.entries(by.values).map(([v, d]) => `${v} '${d}'`);
  return `default per ${by.param}: ${given.join(', ')}${unused.length ? `; not used by ${unused.join(', ')}` : ''}`;
}

/** Plain-text table of one service for the terminal. */
export function renderParamsText(info: ServiceInfo): string {
  const rows = expandCtrl(info.params);
  const w = Math.max(...rows.map((p) => p.name.length));
  const dw = Math.max(...rows.map((p) => shownDefault(p).length));
  const lines = [`${info.kind} ${info.release} — ${info.summary}`, ''];
  for (const p of rows)
    lines.push(
      `  ${p.name.padEnd(w)}  ${shownDefault(p).padEnd(dw)}  ${p.type.padEnd(8)}  ${p.description}${notes(p, info)}`,
    );
  return lines.join('\n');
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** Markdown section of one service for the README. */
export function renderParamsMarkdown(info: ServiceInfo): string {
  const lines = [
    `### ${info.kind} (${info.release})`,
    '',
    info.summary,
    '',
    '| Parameter | Default | Type | Description |',
    '|---|---|---|---|',
  ];
  for (const p of expandCtrl(info.params)) {
    lines.push(
      `| ${p.name} | ${escapeCell(shownDefault(p))} | ${p.type} | ${escapeCell(p.description + notes(p, info))} |`,
    );
  }
  return lines.join('\n');
}
