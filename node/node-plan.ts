/**
 * A node's compile (docs/ARCHITECTURE.md, Reloading a node): every service's configuration compiled
 * against its table, its name checked, one hive for all, and each kind's start-time checks
 * (templates, definitions, TLS files) run without starting anything. `HiveNode.start`, a reload and
 * `hivenode check` all go through here, so what `check` accepts is what a start and a reload accept.
 */
import { SERVICE_DEFINITIONS } from '../actors/index.js';
import type { CompiledService } from '../actors/service/context.js';
import type { NodeFile } from '../config/node-file.js';
import type { ServiceKind } from '../config/registry.js';
import type { Layer } from '../config/resolve.js';
import { ConfigError, describeError } from '../protocol/errors.js';

/** One service instance to run: its kind and its configuration layers (earliest first). */
export interface ServicePlan {
  kind: ServiceKind;
  layers: Layer[];
  /** Where it is written, for messages: `node.yaml services[2]`. */
  where?: string;
}

/** A service compiled for a start or a reload. */
export interface PlannedService {
  service: CompiledService;
  name: string;
  where: string;
}

/** A node file's plans: table default < the file's hive section < the service's entry. */
export function plansOf(file: NodeFile): ServicePlan[] {
  return file.services.map((s) => ({ kind: s.kind, layers: [file.hive, s.layer], where: s.where }));
}

const ACTOR_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** The hive's key of SERVERHOST: '' for the embedded hive however written. */
export const hiveKey = (host: string): string =>
  host
    .trim()
    .toLowerCase()
    .replace(/^embedded$/, '');

/**
 * Compiles every service's table and checks the names and the hive. With `errors`, every error is
 * collected there (each one line naming where it is written); without, the first one throws.
 */
export function compilePlans(plans: readonly ServicePlan[], errors?: string[]): PlannedService[] {
  const fail = (e: unknown, where: string | undefined): void => {
    // a start stops at the first error, with the message it has always had
    if (!errors) throw e;
    errors.push(withWhere(e, where));
  };
  const compiled: PlannedService[] = [];
  plans.forEach((plan, i) => {
    try {
      const service = SERVICE_DEFINITIONS[plan.kind].compile(plan.layers);
      const name = service.common.NAME || `${plan.kind}-${i + 1}`;
      if (!ACTOR_NAME.test(name))
        throw new ConfigError(`NAME '${name}' is not valid: use 1 to 100 of A-Z a-z 0-9 _ . -`);
      compiled.push({ service, name, where: plan.where ?? '' });
    } catch (e) {
      fail(e, plan.where);
    }
  });
  const names = new Set<string>();
  for (const s of compiled) {
    if (names.has(s.name))
      fail(new ConfigError(`two services are named '${s.name}'; give each a distinct NAME`), s.where);
    names.add(s.name);
  }
  const hosts = new Set(compiled.map((s) => hiveKey(s.service.common.SERVERHOST)));
  if (hosts.size > 1)
    fail(
      new ConfigError(
        `the services of one node must share one hive, but SERVERHOST differs: ${[...hosts].map((h) => h || 'embedded').join(', ')}`,
      ),
      undefined,
    );
  return compiled;
}

/** Runs every compiled service's start-time checks; every failure is one line in `errors` (naming where). */
export async function checkServices(compiled: readonly PlannedService[], errors: string[]): Promise<void> {
  for (const s of compiled) {
    try {
      await s.service.check(s.name);
    } catch (e) {
      errors.push(withWhere(e, s.where));
    }
  }
}

/**
 * The whole compile of a node's plans: throws one ConfigError whose message is every error, one
 * line each (a reload refuses with it; a start stops with it).
 */
export async function compileNode(plans: readonly ServicePlan[]): Promise<PlannedService[]> {
  const errors: string[] = [];
  const compiled = compilePlans(plans, errors);
  await checkServices(compiled, errors);
  if (errors.length > 0) throw new ConfigError(errors.join('\n'));
  return compiled;
}

/** One error as a line that says where it is written (unless it says so already). */
function withWhere(e: unknown, where: string | undefined): string {
  const text = (e instanceof ConfigError ? e.message : describeError(e)).replace(/\s*\n\s*/g, ' ');
  return where && !text.includes(where) ? `${where}: ${text}` : text;
}
