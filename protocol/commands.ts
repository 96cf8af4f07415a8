/**
 * The names a `command` control may take and the one command each stands for. The queue accepts
 * several names for a command (`stop` is `pause`, `wipe` clears like `delete`); an authorization that
 * compared the names as written could be walked around by an alias, so the gateway's Access and the
 * queue's parser read them through this one table (README, Authorization per route).
 */

/** Every queue command name → its canonical name. `clear`, `delete` and `wipe` are one command (with a key: one entry; without: all). */
export const COMMAND_ALIASES: Readonly<Record<string, string>> = {
  queue: 'add',
  add: 'add',
  status: 'status',
  clear: 'delete',
  delete: 'delete',
  wipe: 'delete',
  pause: 'pause',
  stop: 'pause',
  unpause: 'resume',
  resume: 'resume',
  start: 'resume',
  list: 'list',
  show: 'list',
  get: 'fetch',
  fetch: 'fetch',
  step: 'step',
  next: 'step',
  one: 'step',
  schedule: 'schedule',
  schedules: 'schedules',
  unschedule: 'unschedule',
  run_schedule: 'run_schedule',
  replay: 'replay',
  purge: 'purge',
  breaker: 'breaker',
};

/** The command a request without a `command` control runs: the queue's DefaultCommand ('queue'), adding an entry. */
export const DEFAULT_COMMAND = 'add';

/** A command name as Access compares it: lower case, an alias turned into its command; other names (a flow's `cancel`) as written. */
export function canonicalCommand(name: string): string {
  const n = name.trim().toLowerCase();
  return Object.hasOwn(COMMAND_ALIASES, n) ? COMMAND_ALIASES[n]! : n;
}
