/** HTTP client parameters, as the service specification lists them (general and input configuration included); README, Parameter reference prints them (and README, The HTTP client says what they do). */
import { GENERAL_PARAMS, INPUT_PARAMS } from './common.js';
import { INTERCEPT_PROXY_PARAM } from './interceptor.js';
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const HTTPCLIENT_OWN = [
  { name: 'Method', type: 'string', default: '', description: 'HTTP method of the outgoing request.' },
  { name: 'URL', type: 'string', default: '', description: 'URL of the outgoing request.' },
  { name: 'ContentType', type: 'string', default: 'application/json', description: 'Content type of the request; a Content-Type in Headers overrides it.' },
  { name: 'Headers', type: 'string', default: '', secret: true, description: "Extra headers, separated by CR LF, in the form 'Name: value'." },
  { name: 'InterceptBefore', type: 'string', default: '', description: 'URL of the before mapper.' },
  { name: 'InterceptAfter', type: 'string', default: '', description: 'URL of the after mapper.' },
  { name: 'Timeout', type: 'duration', default: '30s', beyondSpec: true, description: 'Total deadline of one message: interceptors, every redirect and retry (504 when it passes).' },
  { name: 'MaxResponseBytes', type: 'int', default: '10485760', min: 1, beyondSpec: true, description: 'Largest response body read; a larger one fails with 502.' },
  { name: 'MaxRedirects', type: 'int', default: '5', min: 0, max: 20, beyondSpec: true, description: 'Redirects followed; Authorization and Cookie are dropped when a redirect leaves the origin.' },
  { name: 'Retries', type: 'int', default: '2', min: 0, max: 10, beyondSpec: true, description: 'Retries of idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE) after 408, 425, 429, 500, 502, 503, 504, 507 or a connection failure, honouring Retry-After; a retry whose wait would pass Timeout is not made.' },
  { name: 'BlockPrivate', type: 'bool', default: 'false', beyondSpec: true, description: 'Refuse (403) requests and redirects to private, loopback and link-local addresses, checked on the resolved address.' },
  { name: 'BlockNetworks', type: 'string', default: '', beyondSpec: true, description: "Further networks to refuse, as CIDRs separated by commas ('10.1.0.0/16, fd00::/8')." },
  { name: 'CAFile', type: 'string', default: '', beyondSpec: true, description: 'PEM file of the certificate authorities trusted for https (added to the system ones).' },
  {
    name: 'Proxy',
    type: 'string',
    default: '',
    secret: true,
    beyondSpec: true,
    description: "Proxy of every request, 'http(s)://[user:password@]host:port'; overrides HTTP_PROXY, HTTPS_PROXY and NO_PROXY (read, lower case first, when it is empty). https goes through a CONNECT tunnel.",
  },
  INTERCEPT_PROXY_PARAM,
  {
    name: 'Signing',
    type: 'string',
    default: '',
    secret: true,
    beyondSpec: true,
    description: "Signs every request sent, over the body sent, as 'scheme:secret': 'standard' (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature v1,<base64 HMAC-SHA256 of id.timestamp.body>; secret whsec_<base64>), 'github' (X-Hub-Signature-256) or 'stripe' (Stripe-Signature t=…,v1=…). Two secrets separated by ',' sign with both during a rotation (github: with the first). A secret is inline (masked in logs) or file://<path> (re-read when it changes); webhook-id is the message's webhook-id control, else a new msg_<uuid>.",
  },
  { name: 'MaxInFlight', type: 'int', default: '256', min: 1, beyondSpec: true, description: 'Messages handled at once; more are answered 429.' },
] as const satisfies ParamTable;

export const HTTPCLIENT_PARAMS = [...GENERAL_PARAMS, ...INPUT_PARAMS, ...HTTPCLIENT_OWN] as const satisfies ParamTable;
