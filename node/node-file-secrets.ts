/**
 * Secret values of a node file's text (README, Changing a running node: the Config page). The
 * secret parameters are those of the service tables marked `secret` — the ones the logs and the
 * journal mask (SERVERAUTH, SERVERKEY, SQL_PASSWORD, JWTSecret, TLSKey, SendKey, Headers…). The
 * console shows the file with their values replaced by MASK, and an edited text that still holds
 * MASK for one keeps the running file's value of that parameter (the same service by NAME, or the
 * hive section); where the running file has none to keep, it is refused naming where.
 *
 * The text is edited in place (the YAML parser's source ranges; JSON is YAML too), so comments,
 * order and layout stay as the operator wrote them.
 */
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { Pair, Scalar, YAMLMap } from 'yaml';
import type { ServiceKind } from '../config/registry.js';
import { SERVICES, isServiceKind } from '../config/registry.js';
import { ConfigError } from '../protocol/errors.js';

/** What a secret's value is shown as. */
export const SECRET_MASK = '********';

/** A secret parameter's value in the text: where it is written and which parameter it is. */
interface SecretValue {
  /** `hive` or the service's NAME (its kind and position when it has none, as a node names it). */
  owner: string;
  /** The parameter as the table spells it. */
  param: string;
  /** For messages: `node.yaml services[2].SQL_PASSWORD`. */
  where: string;
  scalar: Scalar;
}

const lower = (s: unknown): string => String(s).toLowerCase();

function secretParam(kind: ServiceKind, key: string): string | undefined {
  const spec = SERVICES[kind].params.find((p) => p.name.toLowerCase() === lower(key));
  return spec?.secret ? spec.name : undefined;
}

/** The hive section's secret keys (its parameters are the common ones, the same in every table). */
const hiveSecret = (key: string): string | undefined => secretParam('echo', key);

/** Not a secret itself but where one is: `${VAR}` alone, a `file://` path, or a path to a PEM file. */
function isReference(value: string): boolean {
  const v = value.trim();
  return (
    /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(v) ||
    v.startsWith('file://') ||
    (v.startsWith('/') && !/\s/.test(v) && !v.includes('-----'))
  );
}

function pairsOf(node: unknown): Array<Pair<unknown, unknown>> {
  return isMap(node) ? (node as YAMLMap<unknown, unknown>).items : [];
}

/** Every secret parameter's scalar value in a parsed node file (values that are not scalars are the node file's parser's to refuse). */
function secretValues(text: string, file: string): { values: SecretValue[]; ok: boolean } {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0 || !isMap(doc.contents)) return { values: [], ok: false };
  const values: SecretValue[] = [];
  const top = pairsOf(doc.contents);
  const section = (name: string): unknown => top.find((p) => isScalar(p.key) && lower(p.key.value) === name)?.value;
  for (const p of pairsOf(section('hive'))) {
    const param = isScalar(p.key) ? hiveSecret(String(p.key.value)) : undefined;
    if (param && isScalar(p.value))
      values.push({ owner: 'hive', param, where: `${file} hive.${param}`, scalar: p.value });
  }
  const services = section('services');
  if (isSeq(services)) {
    services.items.forEach((item, i) => {
      const pairs = pairsOf(item);
      const scalarOf = (key: string): string | undefined => {
        const v = pairs.find((p) => isScalar(p.key) && lower(p.key.value) === key)?.value;
        return isScalar(v) && v.value !== null ? String(v.value) : undefined;
      };
      const kind = scalarOf('service');
      if (kind === undefined || !isServiceKind(kind)) return;
      // the name a node gives it (node/node-plan.ts): its NAME, else its kind and position
      const owner = scalarOf('name') || `${kind}-${i + 1}`;
      for (const p of pairs) {
        const param = isScalar(p.key) ? secretParam(kind, String(p.key.value)) : undefined;
        if (param && isScalar(p.value))
          values.push({ owner, param, where: `${file} services[${i}].${param}`, scalar: p.value });
      }
    });
  }
  return { values, ok: true };
}

const textOf = (s: Scalar): string => (s.value === null || s.value === undefined ? '' : String(s.value));

/** Replaces source ranges of `text` (none overlapping), last first so earlier offsets hold. */
function spliced(text: string, edits: Array<{ scalar: Scalar; by: string }>): string {
  let out = text;
  for (const { scalar, by } of [...edits].sort((a, b) => b.scalar.range![0] - a.scalar.range![0])) {
    const [start, end] = scalar.range!;
    const source = out.slice(start, end);
    // a block scalar's range runs to the end of its last line: the line break stays
    out = out.slice(0, start) + by + (/\n+$/.exec(source)?.[0] ?? '') + out.slice(end);
  }
  return out;
}

/** The text with every secret value (not a reference to one) shown as MASK; text that does not parse is shown as it is (it holds nothing the node compiled). */
export function maskSecrets(text: string, file: string): string {
  const { values } = secretValues(text, file);
  const edits = values
    .filter((v) => textOf(v.scalar) !== '' && !isReference(textOf(v.scalar)))
    .map((v) => ({ scalar: v.scalar, by: JSON.stringify(SECRET_MASK) }));
  return spliced(text, edits);
}

/**
 * An edited text with each MASK put back to the running file's value of the same parameter (the
 * same service by NAME, or the hive section), written as a double-quoted string (JSON's quoting,
 * which YAML reads too). A MASK with no running value to keep is refused naming where.
 */
export function unmaskSecrets(edited: string, running: string, file: string): string {
  const { values } = secretValues(edited, file);
  const masked = values.filter((v) => textOf(v.scalar) === SECRET_MASK);
  if (masked.length === 0) return edited;
  const kept = new Map(secretValues(running, file).values.map((v) => [`${v.owner}\n${v.param}`, textOf(v.scalar)]));
  const edits = masked.map((v) => {
    const value = kept.get(`${v.owner}\n${v.param}`);
    if (value === undefined || value === SECRET_MASK) {
      throw new ConfigError(
        `${v.where}: holds the mask ${SECRET_MASK}, but the running file has no ${v.param} ${v.owner === 'hive' ? 'in its hive section' : `for service '${v.owner}'`} to keep: write the value (or a \${VAR} or file:// reference)`,
      );
    }
    return { scalar: v.scalar, by: JSON.stringify(value) };
  });
  return spliced(edited, edits);
}
