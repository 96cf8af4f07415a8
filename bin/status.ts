/** `hivenode status`: the dashboard's /api/status as text, and the --dashboard-port option of service commands. */
import { parseDashboardPort } from '../config/node-file.js';
import type { NodeStatus } from '../node/dashboard/status.js';
import { treeLines } from '../node/dashboard/status.js';
import { figureTexts } from '../node/dashboard/figures.js';
import { describeError } from '../protocol/errors.js';

export async function runStatus(url: string): Promise<void> {
  let status: NodeStatus;
  try {
    const res = await fetch(new URL('/api/status', url));
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    status = (await res.json()) as NodeStatus;
  } catch (e) {
    console.error(
      `hivenode: cannot read ${url}/api/status: ${describeError(e)} (is the node running with a dashboard port?)`,
    );
    process.exitCode = 1;
    return;
  }
  const n = status.node;
  console.log(
    `hivenode ${n.version} — ${n.name} (pid ${n.pid}), up ${n.uptimeSeconds} s, ${Math.round(n.rssBytes / 1048576)} MiB`,
  );
  if (status.source)
    console.log(
      `node file ${status.source.file} sha256 ${status.source.hash.slice(0, 16)}, applied ${status.source.appliedAt}${status.source.reloads ? ` (${status.source.reloads} reload${status.source.reloads === 1 ? '' : 's'})` : ''}`,
    );
  console.log(
    `hive ${String(status.hive.kind)} ${status.hive.connected ? 'connected' : 'DISCONNECTED'}, calls ${String(status.hive.calls)}, failures ${String(status.hive.failures)}`,
  );
  console.log('\nservices');
  for (const s of status.services) {
    const figures = figureTexts(s.status).join(' · ');
    console.log(
      `  ${s.name.padEnd(16)} ${s.kind.padEnd(10)} ${s.release.padEnd(7)} ${s.channel ? `channel ${s.channel}  ` : ''}${figures}`,
    );
  }
  console.log('\nactors');
  for (const line of treeLines(status.actors, 1)) console.log(line);
  const recent = status.journal.filter((e) => e.event !== 'start').slice(-10);
  if (recent.length) {
    console.log('\nlatest supervision events');
    for (const e of recent)
      console.log(
        `  ${e.time} ${e.event} ${e.path}${e.error ? ` ${e.error.class}: ${e.error.message}` : ''}${e.decision ? ` → ${e.decision}` : ''}${e.user ? ` by ${e.user}` : ''}${e.action ? ` ${e.action}` : ''}`,
      );
  }
}

/** Removes `--dashboard-port N` / `--dashboard-port=N` from spec-style service arguments; ConfigError without a port. */
export function takeDashboardPort(args: string[]): { rest: string[]; dashboardPort?: number } {
  const rest: string[] = [];
  let dashboardPort: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--dashboard-port(?:=(.*))?$/s.exec(a);
    if (!m) {
      rest.push(a);
      continue;
    }
    const next = args[i + 1];
    const text = m[1] ?? (next === undefined || next.startsWith('-') ? undefined : args[++i]);
    dashboardPort = parseDashboardPort(text, '--dashboard-port');
  }
  return dashboardPort === undefined ? { rest } : { rest, dashboardPort };
}
