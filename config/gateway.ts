/** REST gateway parameters, as the service specification lists them (general and output configuration included); README, Parameter reference prints them (and README, The REST gateway says what they do). */
import { GENERAL_PARAMS, OUTPUT_PARAMS } from './common.js';
import { INTERCEPT_PROXY_PARAM } from './interceptor.js';
import type { ParamTable } from './params.js';
import { TLS_PARAMS } from './tls.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const GATEWAY_OWN = [
  { name: 'Port', type: 'int', default: '80', min: 0, max: 65535, description: 'HTTP listening port (HTTPS when TLSCert and TLSKey are set: one port, no plain HTTP beside it).' },
  { name: 'ResponseHeaders', type: 'string', default: '', description: 'Extra response headers, separated by CR LF.' },
  { name: 'DevMode', type: 'bool', default: 'false', description: 'Opens CORS headers and passes all controls.' },
  { name: 'RequestTimeout', type: 'duration', default: '60s', description: 'Timeout of the request to the hive.' },
  { name: 'BasePath', type: 'string', default: '/', description: 'Base path prepended to URLs.' },
  { name: 'HealthcheckPath', type: 'string', default: 'healthcheck', description: 'Path of the health check (GET only).' },
  { name: 'Strict', type: 'bool', default: 'false', description: 'Accept only protocol-message-shaped requests.' },
  { name: 'ControlPrefix', type: 'string', default: '', description: 'Prefix marking control fields inside Data.' },
  { name: 'ControlAllowList', type: 'string', default: '', description: "Controls allowed to pass, separated by comma or semicolon; '*' allows every control (intended for non-production use). Holds headers and ControlPrefix Data fields alike: a prefixed field it does not name is refused with 403." },
  { name: 'InterceptBefore', type: 'string', default: '', description: 'URL of the before mapper; mandatory when Strict is false.' },
  { name: 'InterceptAfter', type: 'string', default: '', description: 'URL of the after mapper; mandatory when Strict is false.' },
  { name: 'DefaultClass', type: 'string', default: 'rest', description: 'Class used when none is set.' },
  { name: 'DefaultOperation', type: 'string', default: 'input', description: 'Operation used when none is set.' },
  { name: 'Routes', type: 'string', default: '', beyondSpec: true, description: "Maps class[/operation] to a channel, for example 'sql/select=sqlsel;queue=q1;cmd=exec1' ('class/*' is the same as 'class', '*' matches any route); the most specific entry wins, unmatched requests go to OUTPUTCHANNEL." },
  { name: 'Users', type: 'string', default: '', beyondSpec: true, description: "Path of an htpasswd-style users file (user:bcrypt-hash per line, written by 'hivenode passwd'); empty means no authentication (warned at start), unless TLSClientAuth is require: then the client certificate's CN is the user." },
  { name: 'Groups', type: 'string', default: '', beyondSpec: true, description: "Path of a groups file in Apache's AuthGroupFile format ('group: user1 user2' per line; 'hivenode passwd --group' adds to it), re-read when it changes; needs Access." },
  { name: 'Access', type: 'string', default: '', beyondSpec: true, description: "Groups allowed per route, for example 'cmd/*=admins;queue=ops,admins;sql/select=readers,ops;*=admins' (patterns as in Routes, '*' also as a group: any authenticated user); an entry may name the commands it grants after its pattern ('queue/*:add=writers'); the most specific entry decides, others get 403, as does a route no entry matches, and a channel or deadletter_slap control naming a channel whose route the user may not use; needs Users (or TLSClientAuth require: the certificate's CN is the user)." },
  { name: 'JWKS', type: 'string', default: '', beyondSpec: true, description: "The identity provider's keys for Bearer tokens (README, Bearer tokens): a 'file://<path>' JWKS (re-read when it changes) or an 'https://' URL fetched at start, cached for the max-age its answer gives (at most 1 h; 5 min without one) and fetched again on a token with an unknown key id (at most once a minute); empty: no Bearer tokens unless JWTSecret is set." },
  { name: 'JWKSCA', type: 'string', default: '', beyondSpec: true, description: "CA certificates (PEM: a path, 'file://<path>' or PEM text) the https:// JWKS server's certificate must chain to; '' trusts the system CAs." },
  { name: 'JWTIssuer', type: 'string', default: '', beyondSpec: true, description: "The 'iss' a Bearer token must carry; '' checks none." },
  { name: 'JWTAudience', type: 'string', default: '', beyondSpec: true, description: "Audiences accepted, comma-separated: a Bearer token's 'aud' must name one of them; '' checks none." },
  { name: 'JWTClockSkew', type: 'duration', default: '60s', beyondSpec: true, description: "Clock difference tolerated when checking a Bearer token's 'exp' and 'nbf'." },
  { name: 'JWTAlgorithms', type: 'string', default: 'RS256,ES256,EdDSA', beyondSpec: true, description: "Signature algorithms a Bearer token may use, comma-separated; HMAC ones (HS256, HS384, HS512) only with JWTSecret; 'none' never." },
  { name: 'JWTSecret', type: 'string', default: '', secret: true, beyondSpec: true, description: "Shared secret of HMAC-signed Bearer tokens (HS256…, when JWTAlgorithms names them); a 'file://<path>' secret reference." },
  { name: 'JWTUserClaim', type: 'string', default: 'sub', beyondSpec: true, description: "The claim holding a Bearer token's user name (Access, logs and traces)." },
  { name: 'JWTGroupsClaim', type: 'string', default: '', beyondSpec: true, description: "The claim holding a Bearer token's groups (a list, or a space-separated string); they feed Access as the groups file does; '' takes no groups from tokens." },
  { name: 'Webhooks', type: 'string', default: '', beyondSpec: true, description: "Routes authenticated by a signature over the body instead of credentials (README, Signed webhooks): 'route=scheme:secret;…' with routes as in Routes (matched on the request path) and schemes github, stripe, shopify, standard (Standard Webhooks; the secret file holds whsec_<base64>) or hmac-sha256:<Header>; the secret a 'file://<path>' reference, several separated by ',' while a secret is rotated. Access does not apply to these routes; their user is 'webhook:<route>'." },
  { name: 'WebhookTolerance', type: 'duration', default: '5m', beyondSpec: true, description: "How far a stripe or standard signature's timestamp may be from now; an older event is refused as a replay (and one seen before within this time is refused too)." },
  { name: 'RateLimits', type: 'string', default: '', beyondSpec: true, description: "Requests allowed per route (README, Rate limits): 'pattern=N/s|N/m[,burst=M][,by=user|ip|route];…' with patterns as in Routes (the most specific wins); token buckets holding burst (default N) refilled at N per second or minute, one per route, user or client address; beyond: 429 with Retry-After. On a NATS hive the gateways of one NAME share their buckets through the hive's KV (the limit holds for the whole hive, within a bounded error)." },
  { name: 'Schemas', type: 'string', default: '', beyondSpec: true, description: "JSON Schemas (2020-12) the Data of a request must match, per route (README, Request validation): 'pattern=file://<schema.json>;…' with patterns as in Routes, matched on the message's route (the most specific wins); read and compiled at start with ajv (a file that cannot be read or does not compile stops it). A request whose Data does not match is answered 400 naming each failing field's path and why, before anything reaches the hive." },
  { name: 'Cors', type: 'string', default: '', beyondSpec: true, description: "Web origins allowed to call routes from a browser (README, CORS): 'pattern=origin1 origin2|*[,credentials];…' with patterns as in Routes, matched on the request path (the most specific wins); preflights (OPTIONS) are answered by the gateway; a request carrying an Origin its route's entry does not name is refused with 403; '*' with credentials is refused at start. DevMode opens every route to every origin instead." },
  { name: 'OpenAPIPath', type: 'string', default: 'openapi.json', beyondSpec: true, description: "Path below BasePath of the OpenAPI 3.1 document of the gateway's routes (README, OpenAPI; GET, strict mode only); '' turns it off. It needs the gateway's authentication like any route, unless OpenAPIPublic is true." },
  { name: 'OpenAPIPublic', type: 'bool', default: 'false', beyondSpec: true, description: 'Serve the OpenAPI document without authentication.' },
  { name: 'MaxBodySize', type: 'int', default: '1048576', min: 0, beyondSpec: true, description: 'Largest accepted request body in bytes; larger bodies are answered 413.' },
  { name: 'MaxInFlight', type: 'int', default: '1024', min: 1, beyondSpec: true, description: 'Requests handled at once; more are answered 503 with Retry-After.' },
  { name: 'ClientTimeout', type: 'duration', default: '30s', beyondSpec: true, description: 'Time a client has to send its headers and body (slow clients are cut off with 408), and over HTTPS to finish its TLS handshake.' },
  INTERCEPT_PROXY_PARAM,
  ...TLS_PARAMS,
] as const satisfies ParamTable;

export const GATEWAY_PARAMS = [...GENERAL_PARAMS, ...OUTPUT_PARAMS, ...GATEWAY_OWN] as const satisfies ParamTable;
