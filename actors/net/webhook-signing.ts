/**
 * The HMAC-SHA256 webhook signatures both sides speak (README, Signed webhooks; README, The HTTP
 * client, Signed webhooks out): the gateway's Webhooks verify them on requests coming in, the HTTP
 * client's Signing puts them on requests going out, from one definition of what each scheme signs
 * and how it writes it.
 *
 * - `standard` (Standard Webhooks, standardwebhooks.com): `webhook-id`, `webhook-timestamp` (unix
 *   seconds) and `webhook-signature` `v1,<base64 of HMAC(key, "<id>.<timestamp>.<body>")>`, several
 *   separated by spaces; the secret is `whsec_<base64 of the key>`.
 * - `github`: `X-Hub-Signature-256: sha256=<hex of HMAC(secret, body)>`.
 * - `stripe`: `Stripe-Signature: t=<unix seconds>,v1=<hex of HMAC(secret, "<t>.<body>")>[,v1=…]`.
 */
import { createHmac } from 'node:crypto';

export const hmacSha256 = (secret: Buffer, ...parts: Array<Buffer | string>): Buffer => {
  const h = createHmac('sha256', secret);
  for (const p of parts) h.update(p);
  return h.digest();
};

const WHSEC = 'whsec_';

/** The key a Standard Webhooks secret stands for: the bytes of the base64 after `whsec_`; throws an Error saying what is wrong. */
function standardWebhookKey(text: string): Buffer {
  const t = text.trim();
  if (!t.startsWith(WHSEC))
    throw new Error(`a Standard Webhooks secret starts with '${WHSEC}' followed by the key in base64`);
  const b64 = t.slice(WHSEC.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0)
    throw new Error(`the part after '${WHSEC}' is not base64`);
  const key = Buffer.from(b64, 'base64');
  if (key.length < 16)
    throw new Error(`the key after '${WHSEC}' is ${key.length} bytes; Standard Webhooks keys are 24 to 64 bytes`);
  return key;
}

/** The HMAC key a scheme's secret text stands for: Standard Webhooks decodes `whsec_…`; the others sign with the text's bytes. */
export function secretKey(scheme: string, text: string): Buffer {
  if (scheme === 'standard') return standardWebhookKey(text);
  const key = Buffer.from(text.trim(), 'utf8');
  if (key.length === 0) throw new Error('the secret is empty');
  return key;
}

/** Standard Webhooks' signature of one message with one key (base64, without the `v1,`). */
export function standardSignature(key: Buffer, id: string, timestamp: number, body: Buffer | string): string {
  return hmacSha256(key, `${id}.${timestamp}.`, body).toString('base64');
}

/** The schemes Signing writes. */
export const SIGNING_SCHEMES = ['standard', 'github', 'stripe'] as const;
export type SigningScheme = (typeof SIGNING_SCHEMES)[number];

/**
 * The headers signing `body` with each key (the first the current one). Standard Webhooks and
 * Stripe carry one signature per key, so a receiver holding either secret during a rotation
 * accepts the message; GitHub's header holds one: it is signed with the first key.
 */
export function signatureHeaders(
  scheme: SigningScheme,
  keys: readonly Buffer[],
  body: Buffer | string,
  id: string,
  timestamp: number,
): Record<string, string> {
  switch (scheme) {
    case 'standard':
      return {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': keys.map((k) => `v1,${standardSignature(k, id, timestamp, body)}`).join(' '),
      };
    case 'github':
      return { 'x-hub-signature-256': `sha256=${hmacSha256(keys[0]!, body).toString('hex')}` };
    case 'stripe':
      return {
        'stripe-signature': [
          `t=${timestamp}`,
          ...keys.map((k) => `v1=${hmacSha256(k, `${timestamp}.`, body).toString('hex')}`),
        ].join(','),
      };
  }
}
