/**
 * Outbound webhooks (README, The HTTP client, Signed webhooks out): `Signing: "scheme:secret"` signs
 * every request the HTTP client sends, over the exact body it sends, as the receiver's scheme
 * expects (../net/webhook-signing.ts: `standard`, `github`, `stripe`). Two secrets separated by `,`
 * sign with both during a rotation (the first is the current one). A secret is written inline
 * (the parameter is masked in logs) or as `file://<path>`, a file re-read when it changes, as the
 * gateway's Webhooks read theirs.
 */
import { randomUUID } from 'node:crypto';
import { ConfigError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import { WatchedFile } from '../net/watched-file.js';
import type { SigningScheme } from '../net/webhook-signing.js';
import { SIGNING_SCHEMES, secretKey, signatureHeaders } from '../net/webhook-signing.js';

const SIGNING_FORM =
  "scheme:secret[,secret] (scheme: standard, github or stripe; a secret inline or file://<path>; standard's is whsec_<base64>)";

/** A key that is read once (inline) or from a file watched for changes. */
interface KeySource {
  get(): Buffer;
}

export class Signer {
  constructor(
    readonly scheme: SigningScheme,
    private readonly keys: readonly KeySource[],
  ) {}

  /**
   * Adds the scheme's signature headers for `body` (an absent body signs the empty string),
   * replacing any of the same name. `webhook-id` is the message's control of that name when it has
   * one — a queue entry that carries it keeps one id through its retries, so the receiver can
   * recognise a repeat — else a new `msg_<uuid>`.
   */
  sign(headers: Record<string, string[]>, body: string | undefined, control: ValueMap, now = Date.now()): void {
    const given = control['webhook-id']?.[0]?.trim();
    const id = given && /^[\x21-\x7e]{1,200}$/.test(given) ? given : `msg_${randomUUID().replaceAll('-', '')}`;
    const signed = signatureHeaders(
      this.scheme,
      this.keys.map((k) => k.get()),
      body ?? '',
      id,
      Math.floor(now / 1000),
    );
    for (const name of Object.keys(headers)) if (Object.hasOwn(signed, name.toLowerCase())) delete headers[name];
    for (const [name, value] of Object.entries(signed)) headers[name] = [value];
  }
}

/** The Signer of a Signing text, or undefined for ''; a value it cannot use stops the start naming what is wrong. */
export function signerOf(text: string, onReloadError: (line: string) => void): Signer | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const colon = t.indexOf(':');
  const scheme = (colon < 0 ? t : t.slice(0, colon)).trim().toLowerCase();
  if (!(SIGNING_SCHEMES as readonly string[]).includes(scheme))
    throw new ConfigError(`Signing: '${scheme.slice(0, 40)}' is not a signing scheme; expected ${SIGNING_FORM}`);
  const secrets = (colon < 0 ? '' : t.slice(colon + 1))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (secrets.length === 0) throw new ConfigError(`Signing: '${scheme}' names no secret; expected ${SIGNING_FORM}`);
  if (secrets.length > 2)
    throw new ConfigError(
      `Signing: ${secrets.length} secrets given; at most two, the current one and the one being rotated out (${SIGNING_FORM})`,
    );
  const keys = secrets.map((s, i): KeySource => {
    const which = i === 0 ? 'first secret' : 'second secret';
    if (s.startsWith('file://')) {
      return new WatchedFile(
        s.slice('file://'.length),
        (content, file) => {
          try {
            return secretKey(scheme, content);
          } catch (e) {
            throw new ConfigError(`Signing: secret file '${file}': ${(e as Error).message}`);
          }
        },
        { param: 'Signing', kind: 'secret file', onReloadError },
      );
    }
    try {
      const key = secretKey(scheme, s);
      return { get: () => key };
    } catch (e) {
      throw new ConfigError(`Signing: the ${which}: ${(e as Error).message}`);
    }
  });
  return new Signer(scheme as SigningScheme, keys);
}
