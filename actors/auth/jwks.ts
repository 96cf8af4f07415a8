/**
 * The identity provider's signing keys for Bearer tokens (`JWKS`, README, Bearer tokens): a `file://`
 * JWKS re-read when it changes (actors/net/watched-file.ts), or an `https://` URL fetched at start and
 * kept for the max-age its answer gives (Cache-Control; 5 min without one, between 2 s and 1 h). A token
 * naming a key id the set lacks is the sign of a rotation at the provider: the set is fetched again at
 * once, but at most once a minute, so tokens with invented key ids cannot make the gateway hammer the
 * provider. A failed refetch keeps the keys held before (a provider briefly down locks no one out).
 */
import { request } from 'node:https';
import type { JSONWebKeySet } from 'jose';
import { createLocalJWKSet } from 'jose';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { WatchedFile } from '../net/watched-file.js';

type KeyGetter = ReturnType<typeof createLocalJWKSet>;

const DEFAULT_MAX_AGE_MS = 5 * 60_000;
const MAX_MAX_AGE_MS = 60 * 60_000;
const MIN_MAX_AGE_MS = 2_000;
/** Refetches caused by an unknown key id: at most one per this period. */
const UNKNOWN_KID_REFETCH_MS = 60_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_JWKS_BYTES = 1 << 20;

export interface KeySource {
  /** The key set to verify with now (an expired https:// cache is fetched again first). */
  keys(): Promise<KeyGetter>;
  /**
   * A token named a key the set lacks: true when the set was fetched again (verify once more), false
   * when refetching is not allowed yet or the source is a file (re-read on change anyway).
   */
  refetchForUnknownKey(): Promise<boolean>;
  /** Fetches made of an https:// set since start (the gateway's figure `jwksFetches`). */
  readonly fetches: number;
}

/** Parses JWKS text: a JSON object with a `keys` array; throws naming the source. */
function parseJwks(text: string, source: string): KeyGetter {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`JWKS: ${source} is not JSON: ${describeError(e)}`);
  }
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { keys?: unknown }).keys))
    throw new ConfigError(`JWKS: ${source} is not a JSON Web Key Set (an object with a "keys" array)`);
  try {
    return createLocalJWKSet(value as JSONWebKeySet);
  } catch (e) {
    throw new ConfigError(`JWKS: ${source}: ${describeError(e)}`);
  }
}

/** How long an answer with this Cache-Control header is kept, in ms: its max-age within the bounds above. */
function maxAgeOf(cacheControl: string | undefined): number {
  const cc = cacheControl ?? '';
  // a provider asking for no caching still gets its keys fetched at most every MIN_MAX_AGE_MS, never per request
  if (/(?:^|,)\s*no-(?:store|cache)\b/i.test(cc)) return MIN_MAX_AGE_MS;
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cc);
  if (!m) return DEFAULT_MAX_AGE_MS;
  return Math.max(MIN_MAX_AGE_MS, Math.min(Number(m[1]) * 1000, MAX_MAX_AGE_MS));
}

function fetchText(url: string, ca: string | undefined): Promise<{ text: string; cacheControl: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', headers: { accept: 'application/json' }, timeout: FETCH_TIMEOUT_MS, ...(ca ? { ca } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_JWKS_BYTES) req.destroy(new Error(`the answer is larger than ${MAX_JWKS_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode ?? '?'}`));
          else resolve({ text: Buffer.concat(chunks).toString('utf8'), cacheControl: res.headers['cache-control'] });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
}

class RemoteKeys implements KeySource {
  fetches = 0;
  private expires = 0;
  private lastUnknownRefetch = -Infinity;
  private pending: Promise<void> | undefined;

  private constructor(
    private readonly url: string,
    private readonly ca: string | undefined,
    private current: KeyGetter,
    private readonly onError: (line: string) => void,
  ) {}

  static async open(url: string, ca: string | undefined, onError: (line: string) => void): Promise<RemoteKeys> {
    const keys = new RemoteKeys(url, ca, undefined as unknown as KeyGetter, onError);
    try {
      await keys.fetch();
    } catch (e) {
      throw new ConfigError(
        `JWKS: cannot fetch the key set from ${url}: ${describeError(e)}; check the URL (and JWKSCA for a private CA), or use a file:// JWKS`,
      );
    }
    return keys;
  }

  private async fetch(): Promise<void> {
    this.fetches++;
    const got = await fetchText(this.url, this.ca);
    this.current = parseJwks(got.text, this.url);
    this.expires = Date.now() + maxAgeOf(got.cacheControl);
  }

  /** One fetch at a time: concurrent requests share it; a failure is logged and the old keys kept. */
  private refresh(): Promise<void> {
    this.pending ??= this.fetch()
      .catch((e: unknown) =>
        this.onError(
          `JWKS: cannot fetch the key set from ${this.url}: ${describeError(e)}; the keys fetched before stay in use`,
        ),
      )
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  async keys(): Promise<KeyGetter> {
    if (Date.now() >= this.expires) {
      // keep failed fetches from repeating per request: the next try waits a minimum period
      this.expires = Date.now() + Math.min(DEFAULT_MAX_AGE_MS, UNKNOWN_KID_REFETCH_MS);
      await this.refresh();
    }
    return this.current;
  }

  async refetchForUnknownKey(): Promise<boolean> {
    const now = Date.now();
    if (this.pending) {
      await this.pending;
      return true;
    }
    if (now - this.lastUnknownRefetch < UNKNOWN_KID_REFETCH_MS) return false;
    this.lastUnknownRefetch = now;
    const before = this.current;
    await this.refresh();
    return this.current !== before;
  }
}

/** Opens `JWKS`: a file:// set or an https:// URL (fetched now: a failure stops the start). */
export async function openKeySource(
  jwks: string,
  ca: string | undefined,
  onError: (line: string) => void,
): Promise<KeySource> {
  if (jwks.startsWith('file://')) {
    const file = new WatchedFile(jwks.slice('file://'.length), (text, f) => parseJwks(text, `file '${f}'`), {
      param: 'JWKS',
      kind: 'JWKS file',
      onReloadError: onError,
    });
    return { keys: () => Promise.resolve(file.get()), refetchForUnknownKey: () => Promise.resolve(false), fetches: 0 };
  }
  return RemoteKeys.open(jwks, ca, onError);
}
