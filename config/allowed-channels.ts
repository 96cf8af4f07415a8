/**
 * AllowedChannels, compiled once (README, Authorization model): the channels a queue's entries or a
 * flow's steps may be delivered to, whatever the caller asked. The gateway checks a redirecting control
 * against the caller's Access; this bound holds for every caller, including those that reach the service
 * over the hive without a gateway. Empty means the service's own defaults (what its configuration names);
 * '*' opens it.
 */
import { splitList } from './values.js';

/** Which channels a service may deliver to: a set, or any ('*'). */
export type ChannelGate = ReadonlySet<string> | 'any';

/** Compiles an AllowedChannels value; `defaults` are the channels its configuration names (used when empty). */
export function channelGate(allowed: string, defaults: readonly string[]): ChannelGate {
  const list = splitList(allowed);
  if (list.includes('*')) return 'any';
  return new Set((list.length > 0 ? list : defaults).filter((c) => c !== ''));
}

/** Whether the gate lets a delivery reach `channel`. */
export function gateAdmits(gate: ChannelGate, channel: string): boolean {
  return gate === 'any' || gate.has(channel);
}
