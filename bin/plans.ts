/** Turns a node file or a single-service command line into the node's service plans. */
import type { NodeFile } from '../config/node-file.js';
import type { ServiceKind } from '../config/registry.js';
import { SERVICES } from '../config/registry.js';
import { commandLineLayer, environmentLayer } from '../config/resolve.js';
import type { ServicePlan } from '../node/node.js';

/** Node file: table default < the file's hive section < the service's entry. */
export function plansOf(file: NodeFile): ServicePlan[] {
  return file.services.map((s) => ({ kind: s.kind, layers: [file.hive, s.layer], where: s.where }));
}

/** One service: table default < environment (upper case) < command line. */
export function singleServicePlan(kind: ServiceKind, args: readonly string[], env: NodeJS.ProcessEnv): ServicePlan {
  return { kind, layers: [environmentLayer(env, SERVICES[kind].params), commandLineLayer(args)] };
}
