/**
 * Controls from an HTTP request (README, The REST gateway): headers named in ControlAllowList (or every
 * header with '*' / DevMode), then Data fields starting with ControlPrefix, which override a header
 * of the same control. Credentials never become controls, whatever the allow list says.
 */
import type { IncomingMessage } from 'node:http';
import type { ValueMap } from '../../protocol/message.js';
import { emptyMap, isForbiddenKey } from '../../protocol/message.js';
import { ForbiddenError } from '../../protocol/errors.js';

/** Never passed on: they carry credentials. */
const NEVER = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
/** Transport headers skipped by '*' (they describe the HTTP exchange, not the message). */
const TRANSPORT = new Set([
  'host',
  'connection',
  'content-length',
  'content-type',
  'transfer-encoding',
  'te',
  'upgrade',
  'keep-alive',
  'expect',
  'accept',
  'accept-encoding',
  'accept-language',
  'user-agent',
  'origin',
  'referer',
  'cache-control',
  'pragma',
]);

export interface ControlPolicy {
  allowAll: boolean;
  allowed: ReadonlySet<string>;
  controlPrefix: string;
}

/** Whether a control of this lower-case name passes the policy (a header's or a message's). */
function passes(lower: string, policy: ControlPolicy): boolean {
  if (NEVER.has(lower)) return false;
  return policy.allowed.has(lower) || (policy.allowAll && !TRANSPORT.has(lower));
}

/**
 * Adds the controls of a message's own Control map that the policy allows to `out` (names as
 * written, each value a list); with no allow list none passes.
 */
export function addMessageControls(out: ValueMap, control: ValueMap, policy: ControlPolicy): void {
  if (!policy.allowAll && policy.allowed.size === 0) return;
  const names = Object.keys(control);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const raw = control[name];
    if (raw === undefined || isForbiddenKey(name) || !passes(name.toLowerCase(), policy)) continue;
    out[name] = raw;
  }
}

/**
 * Adds the controls of a request's allowed headers to `out`, after (so over) those already there; a
 * repeated header is one control of several values. Node gives the names in lower case, and builds
 * headersDistinct only when asked: with no allow list (the default) no header can pass, and none is
 * looked at.
 */
export function addHeaderControls(out: ValueMap, req: IncomingMessage, policy: ControlPolicy): void {
  if (!policy.allowAll && policy.allowed.size === 0) return;
  const headers = req.headersDistinct;
  const names = Object.keys(headers);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const values = headers[name];
    if (values === undefined || isForbiddenKey(name) || !passes(name, policy)) continue;
    out[name] = values;
  }
}

/**
 * Moves Data fields starting with the prefix into the controls (prefix stripped), overriding
 * header controls; returns the remaining Data. With an empty prefix nothing moves. A prefixed field
 * is a control by the spec's rule, so ControlAllowList holds it as it holds a header: one it does not
 * name is refused (403 naming it) rather than passed on — an allow list written to restrict controls
 * restricted only headers before.
 */
export function splitPrefixedControls(
  data: ValueMap,
  controls: ValueMap,
  prefix: string,
  policy: ControlPolicy,
): ValueMap {
  if (prefix === '') return data;
  const rest = emptyMap();
  for (const key of Object.keys(data)) {
    if (key.startsWith(prefix) && key.length > prefix.length) {
      const name = key.slice(prefix.length);
      if (NEVER.has(name.toLowerCase()) || isForbiddenKey(name)) continue;
      if (!policy.allowAll && !policy.allowed.has(name.toLowerCase()))
        throw new ForbiddenError(
          `control '${key.slice(0, 100)}' is not allowed: ControlAllowList does not name '${name.slice(0, 100)}'`,
        );
      controls[name] = data[key]!;
    } else {
      rest[key] = data[key]!;
    }
  }
  return rest;
}

/** True when a control is set to 'true' (any case), as Platform-Break is. */
export function controlIsTrue(controls: ValueMap, name: string): boolean {
  return Object.hasOwn(controls, name) && controls[name]?.[0]?.toLowerCase() === 'true';
}
