/**
 * Bearer tokens (README, Bearer tokens): a JWT from an identity provider, verified by `jose` against
 * the provider's keys (jwks.ts) or, for HMAC algorithms, against JWTSecret, with its issuer, audience,
 * validity times (JWTClockSkew tolerated) and algorithm checked. Its user is the JWTUserClaim claim and
 * its groups the JWTGroupsClaim claim, which feed Access as the groups file does. A refusal's reason is
 * jose's account of what failed: never the token itself, which is a credential.
 */
import { createHash } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { errors, jwtVerify } from 'jose';
import { describeError } from '../../protocol/errors.js';
import type { BearerConfig } from './bearer-config.js';
import type { KeySource } from './jwks.js';
import { openKeySource } from './jwks.js';

export interface BearerSettings extends Omit<BearerConfig, 'jwks' | 'jwksCa'> {
  /** The provider's keys (JWKS); none when only JWTSecret is set. */
  keys: KeySource | undefined;
}

export type BearerOutcome =
  { ok: true; user: string; groups: ReadonlySet<string>; exp?: number } | { ok: false; reason: string };

const NO_GROUPS: ReadonlySet<string> = new Set();

/** The groups a claim holds: a list of strings or one space-separated string; anything else holds none. */
function groupsOf(claim: unknown): ReadonlySet<string> {
  if (typeof claim === 'string') return new Set(claim.split(/\s+/).filter((g) => g !== ''));
  if (Array.isArray(claim)) return new Set(claim.filter((g): g is string => typeof g === 'string' && g !== ''));
  return NO_GROUPS;
}

/** Why verification failed, in words fit for a log line and a 401 (jose's messages never quote the token). */
function reasonOf(e: unknown): string {
  if (e instanceof errors.JWTExpired) return 'the token has expired';
  if (e instanceof errors.JWTClaimValidationFailed)
    return e.claim === 'nbf'
      ? 'the token is not valid yet'
      : `the token's "${e.claim}" claim is not accepted (${e.message})`;
  if (e instanceof errors.JOSEAlgNotAllowed) return "the token's signature algorithm is not accepted (JWTAlgorithms)";
  if (e instanceof errors.JWKSNoMatchingKey) return 'the token was signed by a key the JWKS does not hold';
  if (e instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (e instanceof errors.JOSEError) return `the token is not valid: ${e.message}`;
  return `the token is not valid: ${describeError(e)}`;
}

/** Verified tokens kept: a signature check per request would cost more than the rest of it. */
const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX = 10_000;

export class BearerAuth {
  /** Verified tokens by SHA-256 (the token itself is not kept), until their exp (+ skew) or 5 min. */
  private readonly cache = new Map<string, { outcome: BearerOutcome; until: number }>();
  /** The key set the cache was filled from: another one (refetched, file changed) empties it. */
  private cachedFrom: unknown;

  constructor(private readonly s: BearerSettings) {}

  /** Verifies a token (the Authorization header after `Bearer `); a token verified before is answered from the cache. */
  async check(token: string): Promise<BearerOutcome> {
    const keys = this.s.keys ? await this.s.keys.keys() : undefined;
    if (keys !== this.cachedFrom) {
      this.cache.clear();
      this.cachedFrom = keys;
    }
    const digest = createHash('sha256').update(token).digest('base64');
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) return hit.outcome;
    const outcome = await this.verified(token);
    if (outcome.ok && typeof outcome.exp === 'number') {
      if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(digest, {
        outcome,
        until: Math.min(now + CACHE_TTL_MS, (outcome.exp + this.s.clockSkewS) * 1000),
      });
    }
    return outcome;
  }

  private async verified(token: string): Promise<BearerOutcome & { exp?: number }> {
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (e) {
      if (!(e instanceof errors.JWKSNoMatchingKey) || !(await this.s.keys?.refetchForUnknownKey()))
        return { ok: false, reason: reasonOf(e) };
      // the provider rotated its keys: one more try against the set just fetched
      try {
        payload = await this.verify(token);
      } catch (again) {
        return { ok: false, reason: reasonOf(again) };
      }
    }
    const user = payload[this.s.userClaim];
    if (typeof user !== 'string' || user === '')
      return { ok: false, reason: `the token has no "${this.s.userClaim}" claim naming its user (JWTUserClaim)` };
    return {
      ok: true,
      user,
      groups: this.s.groupsClaim === '' ? NO_GROUPS : groupsOf(payload[this.s.groupsClaim]),
      ...(payload.exp === undefined ? {} : { exp: payload.exp }),
    };
  }

  private async verify(token: string): Promise<JWTPayload> {
    const keys = this.s.keys ? await this.s.keys.keys() : undefined;
    const { secret } = this.s;
    // the key follows the token's algorithm, checked against JWTAlgorithms by jose before any key is
    // used: an HMAC token is checked with JWTSecret only, never with a public key taken as an HMAC secret
    const getKey: JWTVerifyGetKey = (header, jws) => {
      if (header.alg?.startsWith('HS')) {
        if (!secret) throw new errors.JOSEAlgNotAllowed('HMAC algorithms need JWTSecret');
        return secret;
      }
      if (!keys) throw new errors.JOSEAlgNotAllowed('no JWKS is set for public-key algorithms');
      return keys(header, jws);
    };
    const { payload } = await jwtVerify(token, getKey, {
      algorithms: [...this.s.algorithms],
      clockTolerance: this.s.clockSkewS,
      // a token without an expiry would be good forever once leaked
      requiredClaims: ['exp'],
      ...(this.s.issuer === '' ? {} : { issuer: this.s.issuer }),
      ...(this.s.audience.length === 0 ? {} : { audience: [...this.s.audience] }),
    });
    return payload;
  }

  /** Fetches of an https:// JWKS since start. */
  get jwksFetches(): number {
    return this.s.keys?.fetches ?? 0;
  }
}

/** The Bearer authenticator of a gateway: an https:// JWKS is fetched now (a failure stops the start). */
export async function openBearer(c: BearerConfig, onError: (line: string) => void): Promise<BearerAuth> {
  const keys = c.jwks === '' ? undefined : await openKeySource(c.jwks, c.jwksCa, onError);
  return new BearerAuth({ ...c, keys });
}
