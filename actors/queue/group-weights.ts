/**
 * GroupWeights (README, Priorities and fairness): with Fairness weighted each group of GroupBy gets
 * deliveries in proportion to its weight, `tenant-a=3;*=1`. Read once at start; a bad value stops
 * the start naming the parameter (groups.ts, groupLimitsOf).
 */
export const GROUP_WEIGHTS_FORM =
  "<group>=<weight> pairs separated by ';' ('*' for every other group), such as tenant-a=3;*=1, with whole weights from 1 to 1000";

const MAX_WEIGHT = 1000;

export interface GroupWeights {
  /** Weights of the groups named. */
  named: ReadonlyMap<string, number>;
  /** Weight of every other group ('*', else 1). */
  other: number;
}

/** Parses GroupWeights; throws an Error saying which pair is wrong (the caller names the parameter). */
export function parseGroupWeights(text: string): GroupWeights {
  const named = new Map<string, number>();
  let other = 1;
  for (const part of text.split(';')) {
    if (part.trim() === '') continue;
    const eq = part.lastIndexOf('=');
    const name = eq < 0 ? '' : part.slice(0, eq).trim();
    const w = eq < 0 ? '' : part.slice(eq + 1).trim();
    const weight = /^\d{1,4}$/.test(w) ? Number(w) : NaN;
    if (eq < 0 || name === '' || !(weight >= 1 && weight <= MAX_WEIGHT))
      throw new Error(`'${part.trim()}' is not <group>=<weight> with a whole weight from 1 to ${MAX_WEIGHT}`);
    if (name === '*') other = weight;
    else if (named.has(name)) throw new Error(`group '${name}' is weighted twice`);
    else named.set(name, weight);
  }
  return { named, other };
}

/** The weight of one group. */
export function weightOf(weights: GroupWeights, group: string): number {
  return weights.named.get(group) ?? weights.other;
}
