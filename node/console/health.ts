/**
 * A service's health in one word, for the flow's colours and the live page: `stopped` (its
 * supervisor stopped after its restarts ran out: its callers get 503), `restarting` (restarts within the last 15 minutes), `failing`
 * (5xx answers in the latest 10 s: the service or what it depends on failed; a 4xx refuses the
 * caller's input and says nothing against the service), else `ok`.
 */
import type { LiveHistory } from './history.js';
import type { ConsoleSources } from './sources.js';

type Health = 'ok' | 'warn' | 'bad';

export interface ServiceHealth {
  health: Health;
  /** The word shown: ok, failing 1.2/s, restarting (3 in 15 min), stopped. */
  text: string;
}

export function servicesHealth(sources: ConsoleSources, history: LiveHistory): Map<string, ServiceHealth> {
  // a service is stopped when its supervisor (/node/<name>) is: a child that ended its work and
  // stopped normally says nothing about the service
  const stopped = new Set<string>();
  for (const a of sources.actorTotals())
    if (a.stopped && a.path.split('/').length === 3) stopped.add(a.path.split('/')[2] ?? '');
  const restarts = new Map(history.series().restarts.map((r) => [r.name, r.values.reduce((x, y) => x + y, 0)]));
  const out = new Map<string, ServiceHealth>();
  for (const s of sources.services()) {
    const latest = history.latest(s.name);
    const n = restarts.get(s.name) ?? 0;
    if (stopped.has(s.name)) out.set(s.name, { health: 'bad', text: 'stopped' });
    else if (n > 0) out.set(s.name, { health: 'warn', text: `restarting (${n} in 15 min)` });
    else if (latest && latest.failures > 0)
      out.set(s.name, { health: 'warn', text: `failing ${latest.failures.toFixed(2)}/s` });
    else out.set(s.name, { health: 'ok', text: 'ok' });
  }
  return out;
}
