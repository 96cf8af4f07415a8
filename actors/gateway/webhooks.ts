/**
 * Signed webhooks (`Webhooks`, README, Signed webhooks): SaaS senders (GitHub, Stripe, Shopify, …) sign
 * each body with a shared secret instead of logging in. A route listed here is authenticated by that
 * signature alone: an HMAC-SHA256 over the exact bytes received (never a re-encoding), compared in
 * constant time, with each of the route's secrets (several while one is rotated; each a file re-read
 * when it changes). Stripe's signature also covers a timestamp: one further from now than
 * WebhookTolerance is refused, and so is a signature seen before within that time (a replay); so does
 * Standard Webhooks' (`standard`). What each scheme signs is shared with the HTTP client's Signing
 * (../net/webhook-signing.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ConfigError } from '../../protocol/errors.js';
import { WatchedFile } from '../net/watched-file.js';
import { hmacSha256 as hmac, secretKey, standardSignature } from '../net/webhook-signing.js';
import type { PatternEntry, PatternTable } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';

type WebhookScheme =
  | { kind: 'github' }
  | { kind: 'stripe' }
  | { kind: 'shopify' }
  | { kind: 'standard' }
  | { kind: 'hmac-sha256'; header: string };

export interface WebhookRule {
  scheme: WebhookScheme;
  /** The secret files, the first the current one. */
  files: readonly string[];
}

const FORM =
  'route=scheme:file://<secret>[,file://<secret>…] (scheme: github, stripe, shopify, standard or hmac-sha256:<Header>)';
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Stripe signatures remembered against replays, at most: the oldest go first beyond it. */
const MAX_SEEN = 100_000;

function parseRule(raw: string): WebhookRule {
  let rest: string;
  let scheme: WebhookScheme;
  const lower = raw.toLowerCase();
  if (lower.startsWith('hmac-sha256:')) {
    const after = raw.slice('hmac-sha256:'.length);
    const colon = after.indexOf(':');
    const header = colon < 0 ? '' : after.slice(0, colon).trim();
    if (!HEADER.test(header) || after.trimStart().toLowerCase().startsWith('file://'))
      throw new Error("hmac-sha256 needs the header carrying the signature: 'hmac-sha256:<Header>:file://<secret>'");
    scheme = { kind: 'hmac-sha256', header: header.toLowerCase() };
    rest = after.slice(colon + 1);
  } else {
    const colon = raw.indexOf(':');
    const kind = colon < 0 ? raw : raw.slice(0, colon).trim().toLowerCase();
    if (kind !== 'github' && kind !== 'stripe' && kind !== 'shopify' && kind !== 'standard')
      throw new Error(
        `'${kind.slice(0, 40)}' is not a webhook scheme (github, stripe, shopify, standard or hmac-sha256:<Header>)`,
      );
    scheme = { kind };
    rest = colon < 0 ? '' : raw.slice(colon + 1);
  }
  const files = rest
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  if (files.length === 0) throw new Error('names no secret (file://<path>)');
  const inline = files.find((f) => !f.startsWith('file://') || f.length === 'file://'.length);
  // a secret written into the configuration would show in every copy of it: only references
  if (inline !== undefined)
    throw new Error(
      'the secret must be a file:// reference to a file holding it (a secret written here would be in every copy of the configuration)',
    );
  return { scheme, files: files.map((f) => f.slice('file://'.length)) };
}

/** Parses Webhooks; throws an Error naming the bad entry. */
export function parseWebhooks(text: string): PatternTable<WebhookRule> {
  return parsePatternTable(text, FORM, parseRule);
}

/** The route of a request for Webhooks: the path's first two segments, as strict mode reads them. */
export function pathRoute(subPath: string): [string, string] {
  const parts = subPath
    .split('?')[0]!
    .split('/')
    .filter((p) => p !== '');
  const decode = (p: string | undefined): string => {
    try {
      return decodeURIComponent(p ?? '');
    } catch {
      return p ?? '';
    }
  };
  return [decode(parts[0]), decode(parts[1])];
}

export type WebhookOutcome = { ok: true } | { ok: false; reason: string };

/** Whether `given` equals one of the MACs, in constant time for equal lengths. */
function matchesAny(given: Buffer | undefined, macs: Buffer[]): boolean {
  if (!given || given.length !== 32) return false;
  let ok = false;
  for (const mac of macs) ok = timingSafeEqual(mac, given) || ok;
  return ok;
}

const hex = (text: string): Buffer | undefined =>
  /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : undefined;
const base64 = (text: string): Buffer | undefined =>
  /^[A-Za-z0-9+/]{43}=$|^[A-Za-z0-9_-]{43}$/.test(text)
    ? Buffer.from(text, /[_-]/.test(text) ? 'base64url' : 'base64')
    : undefined;

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v.trim() : undefined;
}

/** One Webhooks entry at run time: its secrets' latest versions, and the Stripe signatures seen. */
export class Webhook {
  private readonly secrets: WatchedFile<Buffer>[];
  private readonly seen = new Map<string, number>();

  constructor(
    readonly route: string,
    private readonly rule: WebhookRule,
    private readonly toleranceMs: number,
    onReloadError: (line: string) => void,
  ) {
    this.secrets = rule.files.map(
      (f) =>
        new WatchedFile(
          f,
          (text, file) => {
            if (text.trim() === '')
              throw new ConfigError(`Webhooks: secret file '${file}' of route '${route}' is empty`);
            try {
              return secretKey(rule.scheme.kind, text);
            } catch (e) {
              throw new ConfigError(`Webhooks: secret file '${file}' of route '${route}': ${(e as Error).message}`);
            }
          },
          { param: 'Webhooks', kind: `secret file of route '${route}'`, onReloadError },
        ),
    );
  }

  private keys(): Buffer[] {
    return this.secrets.map((s) => s.get());
  }

  /** Checks the request's signature over `body`, the bytes exactly as received. */
  verify(req: IncomingMessage, body: Buffer, now = Date.now()): WebhookOutcome {
    const { scheme } = this.rule;
    switch (scheme.kind) {
      case 'github': {
        const h = headerOf(req, 'x-hub-signature-256');
        if (h === undefined) return { ok: false, reason: 'the X-Hub-Signature-256 header is missing' };
        const given = h.startsWith('sha256=') ? hex(h.slice('sha256='.length)) : undefined;
        return this.outcome(
          matchesAny(
            given,
            this.keys().map((k) => hmac(k, body)),
          ),
          'X-Hub-Signature-256',
        );
      }
      case 'shopify': {
        const h = headerOf(req, 'x-shopify-hmac-sha256');
        if (h === undefined) return { ok: false, reason: 'the X-Shopify-Hmac-Sha256 header is missing' };
        return this.outcome(
          matchesAny(
            base64(h),
            this.keys().map((k) => hmac(k, body)),
          ),
          'X-Shopify-Hmac-Sha256',
        );
      }
      case 'hmac-sha256': {
        const h = headerOf(req, scheme.header);
        if (h === undefined) return { ok: false, reason: `the ${scheme.header} header is missing` };
        const text = h.replace(/^sha256=/i, '');
        return this.outcome(
          matchesAny(
            hex(text) ?? base64(text),
            this.keys().map((k) => hmac(k, body)),
          ),
          scheme.header,
        );
      }
      case 'stripe':
        return this.verifyStripe(req, body, now);
      case 'standard':
        return this.verifyStandard(req, body, now);
    }
  }

  /** Standard Webhooks: `webhook-signature` `v1,<base64>` (several, space-separated) over `<webhook-id>.<webhook-timestamp>.<body>`. */
  private verifyStandard(req: IncomingMessage, body: Buffer, now: number): WebhookOutcome {
    const id = headerOf(req, 'webhook-id');
    const t = headerOf(req, 'webhook-timestamp');
    const h = headerOf(req, 'webhook-signature');
    if (id === undefined || id === '' || h === undefined)
      return { ok: false, reason: 'the webhook-id or webhook-signature header is missing' };
    if (t === undefined || !/^\d{1,12}$/.test(t))
      return { ok: false, reason: 'the webhook-timestamp header is missing or not unix seconds' };
    const macs = this.keys().map((k) => Buffer.from(standardSignature(k, id, Number(t), body), 'base64'));
    const match = h.split(' ').find((sig) => sig.startsWith('v1,') && matchesAny(base64(sig.slice(3)), macs));
    if (match === undefined) return this.outcome(false, 'webhook-signature');
    return this.fresh(`${t}:${match.slice(3)}`, Number(t) * 1000, now, 'webhook-timestamp', 'webhook');
  }

  private outcome(ok: boolean, header: string): WebhookOutcome {
    return ok ? { ok: true } : { ok: false, reason: `the ${header} signature does not match the body` };
  }

  /** Stripe-Signature `t=<unix seconds>,v1=<hex>[,v1=…]` over `<t>.<body>`. */
  private verifyStripe(req: IncomingMessage, body: Buffer, now: number): WebhookOutcome {
    const h = headerOf(req, 'stripe-signature');
    if (h === undefined) return { ok: false, reason: 'the Stripe-Signature header is missing' };
    const fields = h.split(',').map((f) => f.trim());
    const t = fields.find((f) => f.startsWith('t='))?.slice(2) ?? '';
    if (!/^\d{1,12}$/.test(t)) return { ok: false, reason: 'the Stripe-Signature header has no timestamp t=' };
    const signed = Buffer.from(`${t}.`, 'utf8');
    const macs = this.keys().map((k) => hmac(k, signed, body));
    const match = fields.filter((f) => f.startsWith('v1=')).find((f) => matchesAny(hex(f.slice(3)), macs));
    if (match === undefined) return this.outcome(false, 'Stripe-Signature');
    return this.fresh(
      `${t}:${match.slice(3).toLowerCase()}`,
      Number(t) * 1000,
      now,
      'Stripe-Signature',
      'Stripe event',
    );
  }

  /** A signature with its time: refused beyond WebhookTolerance, and when seen before within it (a replay). */
  private fresh(key: string, at: number, now: number, header: string, what: string): WebhookOutcome {
    if (Math.abs(now - at) > this.toleranceMs)
      return {
        ok: false,
        reason: `the ${header} timestamp is ${Math.round((now - at) / 1000)} s from now, beyond WebhookTolerance (a replay, or a clock far off)`,
      };
    // within the tolerance a captured request could be sent again: each signature is accepted once
    this.forget(now);
    if (this.seen.has(key)) return { ok: false, reason: `this ${what} signature was received before (a replay)` };
    if (this.seen.size >= MAX_SEEN) this.seen.delete(this.seen.keys().next().value as string);
    this.seen.set(key, at + this.toleranceMs);
    return { ok: true };
  }

  /** Drops the signatures whose timestamps are beyond the tolerance now (they are refused by time anyway). */
  private forget(now: number): void {
    for (const [k, until] of this.seen) {
      if (until >= now) break;
      this.seen.delete(k);
    }
  }
}

/** The webhooks of a gateway: every secret file read now (a missing one stops the start). */
export class Webhooks {
  private readonly byEntry = new Map<PatternEntry<WebhookRule>, Webhook>();

  constructor(
    private readonly table: PatternTable<WebhookRule>,
    toleranceMs: number,
    onReloadError: (line: string) => void,
  ) {
    for (const e of table.entries) this.byEntry.set(e, new Webhook(e.pattern, e.value, toleranceMs, onReloadError));
  }

  /** The webhook whose route the request path names, if any. */
  forPath(subPath: string): Webhook | undefined {
    const [cls, op] = pathRoute(subPath);
    const entry = this.table.match(cls, op);
    return entry ? this.byEntry.get(entry) : undefined;
  }

  /** Whether a message's route belongs to `hook` (an interceptor may not turn a webhook into another route). */
  owns(hook: Webhook, cls: string, operation: string): boolean {
    const entry = this.table.match(cls, operation);
    return entry !== undefined && this.byEntry.get(entry) === hook;
  }
}
