/** `hivenode flow check <definition>`: checks a flow definition as a node's start does and prints its steps as a graph. */
import { existsSync, readFileSync } from 'node:fs';
import { graphLines, parseDefinition } from '../actors/flow/graph.js';
import { describeError } from '../protocol/errors.js';

/** The definition's text: a file (`file://<path>` or a path), or the definition itself when it is not a file. */
function definitionText(arg: string): string {
  if (arg.startsWith('hive://'))
    throw new Error(`${arg}: a hive:// definition is read from a running hive; check the file you put there`);
  const path = arg.startsWith('file://') ? arg.slice('file://'.length) : arg;
  if (existsSync(path)) return readFileSync(path, 'utf8');
  if (arg.startsWith('file://') || !/[\n{[:]/.test(arg)) throw new Error(`${path}: no such file`);
  return arg;
}

export function runFlowCheck(arg: string): void {
  try {
    const def = parseDefinition(definitionText(arg));
    console.log(
      `${arg.includes('\n') ? 'definition' : arg}: valid, ${def.steps.length} step${def.steps.length === 1 ? '' : 's'}`,
    );
    for (const line of graphLines(def)) console.log(line);
  } catch (e) {
    console.error(`hivenode: ${describeError(e)}`);
    process.exitCode = 1;
  }
}
