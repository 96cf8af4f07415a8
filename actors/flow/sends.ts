/**
 * The channels each running flow's steps name, by its Definition value: published by the flow service
 * once it has read its definition, read by the console's arrows and the hive roster (node/wiring.ts).
 * A module of its own, importing nothing: a node's start path reaches it through the roster, and must
 * not load the YAML parser and the template engine for it.
 */

/** One channel a flow sends to, labelled with the step sending there. */
export interface FlowSend {
  channel: string;
  label: string;
}

const byDefinition = new Map<string, readonly FlowSend[]>();

/** Called by a flow service at start. */
export function publishFlowSends(definition: string, sends: readonly FlowSend[]): void {
  byDefinition.set(definition, sends);
}

/** The sends of a flow with this Definition running in this process (none when it is not running). */
export function flowSends(definition: string): readonly FlowSend[] {
  return byDefinition.get(definition) ?? [];
}
