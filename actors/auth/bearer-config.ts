/**
 * The Bearer-token parameters (JWKS, JWTIssuer, JWTAudience, JWTClockSkew, JWTAlgorithms, JWTSecret,
 * JWTUserClaim, JWTGroupsClaim) checked once at start (docs/ARCHITECTURE.md, Configuration): each
 * refusal is one line naming the parameter and the way out.
 */
import type { ConfigOf } from '../../config/params.js';
import type { GATEWAY_PARAMS } from '../../config/gateway.js';
import { pem } from '../../config/hive-access.js';
import { splitList } from '../../config/values.js';
import { ConfigError } from '../../protocol/errors.js';

export interface BearerConfig {
  /** `file://…` or `https://…`; '' with JWTSecret alone. */
  jwks: string;
  /** PEM text of JWKSCA. */
  jwksCa: string | undefined;
  issuer: string;
  audience: readonly string[];
  clockSkewS: number;
  algorithms: readonly string[];
  secret: Uint8Array | undefined;
  userClaim: string;
  groupsClaim: string;
}

const PUBLIC_KEY_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'];
/** RFC 7518 3.2: an HMAC key at least as long as the hash output. */
const MIN_SECRET_BYTES = 32;

export function compileBearer(c: ConfigOf<typeof GATEWAY_PARAMS>): BearerConfig | undefined {
  if (c.JWKS === '' && c.JWTSecret === '') {
    const set = (['JWTIssuer', 'JWTAudience', 'JWTGroupsClaim', 'JWKSCA'] as const).filter((p) => c[p] !== '');
    if (set.length > 0)
      throw new ConfigError(
        `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but neither JWKS nor JWTSecret is: Bearer tokens need keys to verify them; set JWKS (file:// or https://) or remove ${set.join(', ')}`,
      );
    return undefined;
  }
  if (c.JWKS !== '' && !/^(file|https):\/\//.test(c.JWKS)) {
    throw new ConfigError(
      `JWKS: '${c.JWKS.slice(0, 100)}' is neither a file:// path nor an https:// URL (keys fetched over plain HTTP could be swapped on the way)`,
    );
  }
  const algorithms = splitList(c.JWTAlgorithms);
  if (algorithms.length === 0)
    throw new ConfigError(
      "JWTAlgorithms names no algorithm; leave it at its default 'RS256,ES256,EdDSA' or name the ones your identity provider signs with",
    );
  for (const a of algorithms) {
    if (a.toLowerCase() === 'none')
      throw new ConfigError("JWTAlgorithms: 'none' (unsigned tokens) is never accepted; remove it");
    if (!PUBLIC_KEY_ALGORITHMS.includes(a) && !HMAC_ALGORITHMS.includes(a))
      throw new ConfigError(
        `JWTAlgorithms: '${a}' is not a JWS algorithm (one of ${[...PUBLIC_KEY_ALGORITHMS, ...HMAC_ALGORITHMS].join(', ')})`,
      );
  }
  const hmac = algorithms.filter((a) => HMAC_ALGORITHMS.includes(a));
  if (hmac.length > 0 && c.JWTSecret === '')
    throw new ConfigError(
      `JWTAlgorithms names ${hmac.join(', ')} but JWTSecret is not set: HMAC tokens are checked with a shared secret only, never with the JWKS's public keys; set JWTSecret or remove them`,
    );
  if (c.JWTSecret !== '' && hmac.length === 0)
    throw new ConfigError(
      'JWTSecret is set but JWTAlgorithms names no HMAC algorithm; add HS256 (or HS384, HS512) to JWTAlgorithms, or remove JWTSecret',
    );
  const secret = c.JWTSecret === '' ? undefined : new TextEncoder().encode(c.JWTSecret);
  if (secret && secret.length < MIN_SECRET_BYTES)
    throw new ConfigError(
      `JWTSecret is ${secret.length} bytes long; HMAC token secrets must have at least ${MIN_SECRET_BYTES} (for example 'openssl rand -base64 48')`,
    );
  if (c.JWKS === '' && algorithms.some((a) => PUBLIC_KEY_ALGORITHMS.includes(a))) {
    throw new ConfigError(
      `JWTAlgorithms names ${algorithms.filter((a) => PUBLIC_KEY_ALGORITHMS.includes(a)).join(', ')} but JWKS is not set: public-key tokens need the provider's keys; set JWKS or name only HMAC algorithms`,
    );
  }
  if (c.JWTUserClaim.trim() === '')
    throw new ConfigError("JWTUserClaim is empty; name the claim holding the user (default 'sub')");
  if (c.JWKSCA !== '' && !c.JWKS.startsWith('https://'))
    throw new ConfigError('JWKSCA is set but JWKS is not an https:// URL; remove JWKSCA');
  return {
    jwks: c.JWKS,
    jwksCa: pem(c.JWKSCA, 'JWKSCA', 'CA file'),
    issuer: c.JWTIssuer,
    audience: splitList(c.JWTAudience),
    clockSkewS: Math.round(c.JWTClockSkew / 1000),
    algorithms,
    secret,
    userClaim: c.JWTUserClaim.trim(),
    groupsClaim: c.JWTGroupsClaim.trim(),
  };
}
