/** The one-line message for a command line that yargs refuses (bin/hivenode.ts). */
import { SERVICES, isServiceKind } from '../config/registry.js';

/** The commands bin/hivenode.ts registers with yargs (a test keeps this list and `--help` identical). */
export const COMMANDS = [
  'run',
  'demo',
  'interceptor',
  'passwd',
  'send',
  'template',
  'flow',
  'queue',
  'changes',
  'status',
  'params',
  'check',
  'reload',
] as const;

/** What a command without its positional argument needs, said with an example. */
const MISSING_ARGUMENT: Readonly<Record<string, string>> = {
  run: 'hivenode run needs a node file (YAML or JSON): hivenode run node.yaml',
  check: 'hivenode check needs a node file (YAML or JSON): hivenode check node.yaml',
  passwd: 'hivenode passwd needs a user name: hivenode passwd alice --file users.htpasswd',
  send: 'hivenode send needs a channel: hivenode send echo --data \'{"name":["world"]}\'',
  template: 'hivenode template needs an action (render, put, get, list, delete): hivenode template render file.tmpl',
};

/**
 * One line for a command line yargs refuses, instead of the whole help before the reason: a first
 * word that is neither a command nor a service is named as such, with the lists to choose from.
 */
export function usageError(argv: readonly string[], reason: string): string {
  const first = argv[0];
  if (
    first !== undefined &&
    !first.startsWith('-') &&
    !isServiceKind(first) &&
    !(COMMANDS as readonly string[]).includes(first)
  ) {
    return `hivenode: '${first}' is neither a service (${Object.keys(SERVICES).join(', ')}) nor a command (${COMMANDS.join(', ')}); run 'hivenode --help' for usage`;
  }
  const command = first !== undefined && (COMMANDS as readonly string[]).includes(first) ? ` ${first}` : '';
  const missing = MISSING_ARGUMENT[first ?? ''];
  // yargs names the count it wanted ("got 0, need at least 1"); a newcomer needs what to give instead
  if (missing !== undefined && /^Not enough non-option arguments/.test(reason)) return `hivenode: ${missing}`;
  return `hivenode: ${reason.replace(/:\s*\n\s*/g, ': ').replace(/\s*\n\s*/g, '; ')}; run 'hivenode${command} --help' for usage`;
}
