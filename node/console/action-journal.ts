/** An operator's action as one line of the supervision journal (README, Console, Safety): who, on which service, what was sent and what it answered. */
import type { Result } from '../../protocol/message.js';
import { JournalEvent } from '../../supervisors/journal.js';
import type { ActionInput } from './queue-commands.js';
import type { ConsoleSources } from './sources.js';

/** Journals an operator's action on a service: who, what with which controls and Data fields, and how it was answered. */
export function journalAction(
  sources: ConsoleSources,
  user: string,
  act: { service: string; action: string; input: ActionInput; result: Result },
): void {
  const { service, action, input, result } = act;
  const controls = Object.entries(input.control)
    .map(([k, v]) => `${k}=${v[0] ?? ''}`)
    .join(' ');
  const data = Object.keys(input.data).length ? ` Data fields ${Object.keys(input.data).join(',')}` : '';
  sources.journal.record({
    event: JournalEvent.Action,
    path: `/node/${service}`,
    user,
    action: `${action}${controls ? ` ${controls}` : ''}${data} → ${result.Code} ${result.Message}`,
  });
}
