/**
 * Bearer tokens (README, Bearer tokens): a JWT from an identity provider, verified by `jose` against
 * the provider's keys (jwks.ts) or, for HMAC algorithms, against JWTSecret, with its issuer, audience,
 * validity times (JWTClockSkew tolerated) and algorithm checked. Its user is the JWTUserClaim claim and
 * its groups the JWTGroupsClaim claim, which feed Access as the groups file does. A refusal's reason is
 * jose's account of what failed: never the token itself, which is a credential.
 */
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

export type BearerOutcome = { ok: true; user: string; groups: ReadonlySet<string> } | { ok: false; reason: string };

const NO_GROUPS: ReadonlySet<string> = new Set();

/** The groups a claim holds: a list of strings or one space-separated string; anything else holds none. */
export function groupsOf(claim: unknown): ReadonlySet<string> {
  if (typeof claim === 'string') return new Set(claim.split(/\s+/).filter((g) => g !== ''));
  if (Array.isArray(claim)) return new Set(claim.filter((g): g is string => typeof g === 'string' && g !== ''));
  return NO_GROUPS;
}

/** Why verification failed, in words fit for a log line and a 401 (jose's messages never quote the token). */
function reasonOf(e: unknown): string {
  if (e instanceof errors.JWTExpired) return 'the token has expired';
  if (e instanceof errors.JWTClaimValidationFailed) return e.claim === 'nbf' ? 'the token is not valid yet' : `the token's "${e.claim}" claim is not accepted (${e.message})`;
  if (e instanceof errors.JOSEAlgNotAllowed) return "the token's signature algorithm is not accepted (JWTAlgorithms)";
  if (e instanceof errors.JWKSNoMatchingKey) return 'the token was signed by a key the JWKS does not hold';
  if (e instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (e instanceof errors.JOSEError) return `the token is not valid: ${e.message}`;
  return `the token is not valid: ${describeError(e)}`;
}

export class BearerAuth {
  constructor(private readonly s: BearerSettings) {}

  /** Verifies a token (the Authorization header after `Bearer `). */
  async check(token: string): Promise<BearerOutcome> {
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (e) {
      if (!(e instanceof errors.JWKSNoMatchingKey) || !(await this.s.keys?.refetchForUnknownKey())) return { ok: false, reason: reasonOf(e) };
      // the provider rotated its keys: one more try against the set just fetched
      try {
        payload = await this.verify(token);
      } catch (again) {
        return { ok: false, reason: reasonOf(again) };
      }
    }
    const user = payload[this.s.userClaim];
    if (typeof user !== 'string' || user === '') return { ok: false, reason: `the token has no "${this.s.userClaim}" claim naming its user (JWTUserClaim)` };
    return { ok: true, user, groups: this.s.groupsClaim === '' ? NO_GROUPS : groupsOf(payload[this.s.groupsClaim]) };
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
