/** Turns a node file or a single-service command line into the node's service plans. */
import type { ServiceKind } from '../config/registry.js';
import { SERVICES } from '../config/registry.js';
import { commandLineLayer, environmentLayer } from '../config/resolve.js';
import type { ServicePlan } from '../node/node.js';

// a node file's plans: node/node-plan.ts (the console's Config page compiles them too)
export { plansOf } from '../node/node-plan.js';

/** One service: table default < environment (upper case) < command line. */
export function singleServicePlan(kind: ServiceKind, args: readonly string[], env: NodeJS.ProcessEnv): ServicePlan {
  return { kind, layers: [environmentLayer(env, SERVICES[kind].params), commandLineLayer(args)] };
}
