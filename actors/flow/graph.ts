/**
 * A definition as a graph of steps (README, Flows): where each step can go, the checks a definition
 * must pass before it runs (every target names a step, every step is reachable, every loop passes a
 * wait, so no run spins through a loop with nothing to hold it), and the text `hivenode flow check`
 * prints.
 */
import type { BudgetOptions } from '../../template/budget.js';
import type { FlowDefinition, Step } from './definition.js';
import { DefinitionError, readDefinition, sendsOf } from './definition.js';
import type { FlowSend } from './sends.js';

/** One edge: the step it leads to and why (for the printed graph). */
interface Edge {
  readonly to: string;
  readonly label: string;
}

/** Where a run goes after `step` when it does not name a step: the next in the list, or the end. */
export function fallThrough(def: FlowDefinition, step: Step): string | undefined {
  if (step.next !== undefined) return step.next;
  if (step.end || step.kind === 'succeed' || step.kind === 'fail') return undefined;
  const i = def.steps.indexOf(step);
  return def.steps[i + 1]?.name;
}

/** Every step `step` can lead to. */
function edgesOf(def: FlowDefinition, step: Step): Edge[] {
  const edges: Edge[] = [];
  if (step.kind === 'choice') {
    for (const b of step.branches) edges.push({ to: b.next, label: `when ${b.when.source}` });
    const other = step.otherwise ?? fallThrough(def, step);
    if (other !== undefined) edges.push({ to: other, label: 'default' });
  } else {
    const next = fallThrough(def, step);
    if (next !== undefined) edges.push({ to: next, label: 'next' });
  }
  for (const c of step.catches)
    edges.push({ to: c.next, label: `catch ${c.codes ? [...c.codes].join(',') : 'any failure'}` });
  return edges;
}

/** Throws a DefinitionError naming the first step whose graph is wrong. */
function checkGraph(def: FlowDefinition): void {
  for (const s of def.steps) {
    for (const e of edgesOf(def, s))
      if (!def.byName.has(e.to))
        throw new DefinitionError(
          `step '${s.name}': ${e.label === 'next' ? 'next' : e.label} names step '${e.to}', which is not in the definition`,
        );
  }
  if (def.onCancel !== undefined && !def.byName.has(def.onCancel))
    throw new DefinitionError(`on_cancel names step '${def.onCancel}', which is not in the definition`);
  const reached = new Set<string>();
  const stack = [def.steps[0]!.name, ...(def.onCancel !== undefined ? [def.onCancel] : [])];
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (reached.has(name)) continue;
    reached.add(name);
    for (const e of edgesOf(def, def.byName.get(name)!)) stack.push(e.to);
  }
  for (const s of def.steps)
    if (!reached.has(s.name))
      throw new DefinitionError(
        `step '${s.name}' is unreachable: no step leads to it (and it is not the first step nor on_cancel)`,
      );
  const loop = loopWithoutWait(def);
  if (loop)
    throw new DefinitionError(
      `step '${loop[0]}': the loop ${[...loop, loop[0]].map((n) => `'${n}'`).join(' → ')} has no wait step: a run would spin through it; add a wait step to the loop`,
    );
}

/** A cycle that passes no wait step (its steps in order), if there is one: a depth-first search over the steps that are not waits. */
function loopWithoutWait(def: FlowDefinition): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const step = def.byName.get(name)!;
    if (step.kind === 'wait') return undefined;
    const seen = state.get(name);
    if (seen === 'done') return undefined;
    if (seen === 'open') return path.slice(path.indexOf(name));
    state.set(name, 'open');
    path.push(name);
    for (const e of edgesOf(def, step)) {
      const loop = visit(e.to);
      if (loop) return loop;
    }
    path.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const s of def.steps) {
    const loop = visit(s.name);
    if (loop) return loop;
  }
  return undefined;
}

/** Reads a definition and checks its graph: what a node's start and `hivenode flow check` run. */
export function parseDefinition(text: string, budget: BudgetOptions = {}): FlowDefinition {
  const def = readDefinition(text, budget);
  checkGraph(def);
  return def;
}

/** What a step does, in a few words (the printed graph). */
function summary(step: Step): string {
  switch (step.kind) {
    case 'call':
    case 'execute':
    case 'emit':
      return `${step.kind} ${step.channel.source}`;
    case 'choice':
      return 'choice';
    case 'succeed':
      return 'succeed';
    case 'fail':
      return `fail ${step.code.source}`;
    case 'map':
      return `map ${step.items.source} (${step.concurrency} at once): ${step.each.kind} ${step.each.channel.source}`;
    case 'parallel':
      return `parallel ${step.branches.map((b) => `${b.name}: ${b.sub.kind} ${b.sub.channel.source}`).join(', ')}`;
    case 'wait':
      return `wait ${step.forMs !== undefined ? `${step.forMs} ms` : step.until ? `until ${step.until.source}` : `for ${step.forText!.source}`}`;
  }
}

/** The steps as a graph in text: one line per step, then an arrow per edge; runs end where no arrow leads on. */
export function graphLines(def: FlowDefinition): string[] {
  const lines: string[] = [];
  for (const s of def.steps) {
    lines.push(
      `${s.name}${s === def.steps[0] ? ' (start)' : ''}${s.name === def.onCancel ? ' (on_cancel)' : ''}: ${summary(s)}${s.retry ? `, retry ${s.retry.count}× ${s.retry.backoff}` : ''}`,
    );
    const edges = edgesOf(def, s);
    for (const e of edges) lines.push(`  --${e.label}--> ${e.to}`);
    if (s.kind === 'fail') lines.push('  --> (run failed)');
    else if (edges.every((e) => e.label.startsWith('catch'))) lines.push('  --> (run succeeded)');
  }
  return lines;
}

/** The channels the definition names literally, each with the step (or sub-step) sending there; template channels left out. */
export function literalSends(def: FlowDefinition): FlowSend[] {
  return sendsOf(def.steps).flatMap((s) =>
    s.channel.isTemplate ? [] : [{ channel: s.channel.source, label: s.name }],
  );
}
