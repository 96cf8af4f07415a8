/**
 * The gateway's compiled options: every parameter checked once at start
 * (docs/ARCHITECTURE.md, Configuration). Header injection in ResponseHeaders, a malformed allow
 * list or route, or a missing interceptor in non-strict mode stop the start with exit code 2.
 */
import { interceptorUrl } from '../interceptor/connect.js';
import { validateHeaderValue } from 'node:http';
import type { ConfigOf } from '../../config/params.js';
import type { GATEWAY_PARAMS } from '../../config/gateway.js';
import { splitHeaderLines, splitList } from '../../config/values.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { AccessTable } from './access.js';
import { namedGroups, parseAccess } from './access.js';
import type { RouteTable } from './routes.js';
import { parseRoutes } from './routes.js';
import { TRACEPARENT } from '../observe/trace-context.js';
import type { BearerConfig } from '../auth/bearer-config.js';
import { compileBearer } from '../auth/bearer-config.js';
import type { PatternTable } from './route-patterns.js';
import type { WebhookRule } from './webhooks.js';
import { parseWebhooks } from './webhooks.js';
import type { RateRule } from './rate-limits.js';
import { parseRateLimits } from './rate-limits.js';
import type { SchemaRule } from './schemas.js';
import type { CorsRule } from './cors.js';
import { parseCors } from './cors.js';
import { parseSchemas } from './schemas.js';

export type GatewayConfig = ConfigOf<typeof GATEWAY_PARAMS>;

export interface GatewayOptions {
  port: number;
  /** Base path with a leading and trailing slash: '/', '/api/'. */
  basePath: string;
  /** Full health check path: basePath + HealthcheckPath. */
  healthPath: string;
  strict: boolean;
  devMode: boolean;
  requestTimeoutMs: number;
  clientTimeoutMs: number;
  controlPrefix: string;
  /** Lower-case control names allowed from headers; `all` when '*' or DevMode. */
  allowAll: boolean;
  allowed: ReadonlySet<string>;
  responseHeaders: ReadonlyArray<readonly [string, string]>;
  interceptBefore: string;
  interceptAfter: string;
  /** http(s) interceptors are called through the environment's proxy (else direct). */
  interceptProxy: boolean;
  defaultClass: string;
  defaultOperation: string;
  outputChannel: string;
  routes: RouteTable;
  usersFile: string;
  /** Access when it has entries: every request is then authorized per route (access.ts). */
  access: AccessTable | undefined;
  groupsFile: string;
  maxBodySize: number;
  maxInFlight: number;
  /** Webhooks when it has entries (webhooks.ts). */
  webhooks: PatternTable<WebhookRule> | undefined;
  webhookToleranceMs: number;
  /** RateLimits when it has entries (rate-limits.ts). */
  rateLimits: PatternTable<RateRule> | undefined;
  /** Schemas when it has entries (schemas.ts compiles them at start). */
  schemas: PatternTable<SchemaRule> | undefined;
  /** Full path of the OpenAPI document (basePath + OpenAPIPath); '' when off or not in strict mode. */
  openApiPath: string;
  openApiPublic: boolean;
  /** Cors when it has entries (cors.ts); DevMode, when on, opens every route instead. */
  cors: PatternTable<CorsRule> | undefined;
  /** Bearer tokens, when JWKS or JWTSecret is set (bearer.ts). */
  bearer: BearerConfig | undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The CORS headers DevMode adds (README, The REST gateway). */
const DEV_MODE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Credentials', 'true'],
  ['Access-Control-Allow-Methods', '*'],
  ['Access-Control-Allow-Headers', '*'],
];

export function compileGatewayOptions(c: GatewayConfig): GatewayOptions {
  let responseHeaders: [string, string][];
  // a line starting with white space would be an HTTP folded continuation line; splitHeaderLines trims
  // it into a header of its own, which is not what its writer meant: refuse it
  const folded = c.ResponseHeaders.split(/\r\n|\n|\\r\\n/).find((l) => /^[ \t]+\S/.test(l));
  if (folded !== undefined)
    throw new ConfigError(
      `ResponseHeaders: line '${folded.trim()}' starts with white space; write each header as 'Name: value' on a line of its own`,
    );
  try {
    responseHeaders = splitHeaderLines(c.ResponseHeaders);
  } catch (e) {
    throw new ConfigError(`ResponseHeaders: ${describeError(e)}`);
  }
  for (const [name, value] of responseHeaders) {
    if (!TOKEN.test(name)) throw new ConfigError(`ResponseHeaders: '${name}' is not a valid header name`);
    // the gateway answers each request with the traceparent of its own trace (trace.ts), unchecked
    // by node:http (respond.ts): a fixed one beside it would name no trace and be a second header
    if (name.toLowerCase() === TRACEPARENT)
      throw new ConfigError(
        `ResponseHeaders: '${name}' is the gateway's own answer (each request's trace, docs/ARCHITECTURE.md, Tracing); remove it from ResponseHeaders`,
      );
    if (/[\r\n\0]/.test(value))
      throw new ConfigError(`ResponseHeaders: the value of '${name}' contains a line break or NUL (header injection)`);
    // any other character node:http refuses (control characters, beyond Latin-1) would throw from
    // setHeader on every request, outside any handler, and take the node down: refuse it here
    try {
      validateHeaderValue(name, value);
    } catch {
      throw new ConfigError(
        `ResponseHeaders: the value of '${name}' has a character HTTP header values may not hold (a control character or one beyond Latin-1)`,
      );
    }
  }
  if (c.DevMode) responseHeaders.push(...DEV_MODE_HEADERS.map(([n, v]) => [n, v] as [string, string]));
  const list = splitList(c.ControlAllowList).map((s) => s.toLowerCase());
  for (const name of list)
    if (name !== '*' && !TOKEN.test(name))
      throw new ConfigError(`ControlAllowList: '${name}' is not a valid header name`);
  if (!c.Strict && (c.InterceptBefore === '' || c.InterceptAfter === '')) {
    throw new ConfigError(
      'InterceptBefore and InterceptAfter are mandatory when Strict is false (README, The REST gateway); set both, or Strict=true',
    );
  }
  // what the start connects to, checked here so `hivenode check` and a reload refuse it too
  if (c.InterceptBefore) interceptorUrl('InterceptBefore', c.InterceptBefore);
  if (c.InterceptAfter) interceptorUrl('InterceptAfter', c.InterceptAfter);
  let routes: RouteTable;
  try {
    routes = parseRoutes(c.Routes);
  } catch (e) {
    throw new ConfigError(`Routes: ${describeError(e)}`);
  }
  const webhooks = parsedParam('Webhooks', () => parseWebhooks(c.Webhooks));
  const rateLimits = parsedParam('RateLimits', () => parseRateLimits(c.RateLimits));
  const schemas = parsedParam('Schemas', () => parseSchemas(c.Schemas));
  const cors = parsedParam('Cors', () => parseCors(c.Cors));
  const bearer = compileBearer(c);
  const access = compileAccess(c, bearer);
  const trimmed = c.BasePath.replace(/^\/+|\/+$/g, '');
  const basePath = trimmed === '' ? '/' : `/${trimmed}/`;
  const health = c.HealthcheckPath.replace(/^\/+/, '');
  const openApi = c.OpenAPIPath.replace(/^\/+/, '');
  if (openApi !== '' && openApi === health)
    throw new ConfigError(
      `OpenAPIPath '${c.OpenAPIPath}' is the health check's path (HealthcheckPath); give it another, or '' to serve no document`,
    );
  return {
    port: c.Port,
    basePath,
    healthPath: `${basePath}${health}`,
    // with interceptors the paths and bodies are theirs: the gateway cannot describe them
    openApiPath: openApi === '' || !c.Strict ? '' : `${basePath}${openApi}`,
    openApiPublic: c.OpenAPIPublic,
    strict: c.Strict,
    devMode: c.DevMode,
    requestTimeoutMs: c.RequestTimeout,
    clientTimeoutMs: c.ClientTimeout,
    controlPrefix: c.ControlPrefix,
    allowAll: c.DevMode || list.includes('*'),
    allowed: new Set(list),
    responseHeaders,
    // validated (and connected) by connectInterceptor at start
    interceptBefore: c.InterceptBefore,
    interceptAfter: c.InterceptAfter,
    interceptProxy: c.InterceptProxy,
    defaultClass: c.DefaultClass,
    defaultOperation: c.DefaultOperation,
    outputChannel: c.OUTPUTCHANNEL,
    routes,
    usersFile: c.Users,
    access,
    groupsFile: c.Groups,
    maxBodySize: c.MaxBodySize,
    maxInFlight: c.MaxInFlight,
    webhooks: webhooks.entries.length === 0 ? undefined : webhooks,
    webhookToleranceMs: c.WebhookTolerance,
    rateLimits: rateLimits.entries.length === 0 ? undefined : rateLimits,
    schemas: schemas.entries.length === 0 ? undefined : schemas,
    cors: cors.entries.length === 0 ? undefined : cors,
    bearer,
  };
}

/** A table parameter parsed: its parse error becomes a ConfigError naming the parameter. */
function parsedParam<T>(param: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new ConfigError(`${param}: ${describeError(e)}`);
  }
}

/** Access parsed and checked against Users and Groups: each refusal is one line naming the parameters and the way out. */
function compileAccess(c: GatewayConfig, bearer: BearerConfig | undefined): AccessTable | undefined {
  let table: AccessTable;
  try {
    table = parseAccess(c.Access);
  } catch (e) {
    throw new ConfigError(`Access: ${describeError(e)}`);
  }
  if (table.entries.length === 0) {
    if (c.Groups !== '')
      throw new ConfigError(
        "Groups is set but Access is not: groups authorize nothing without Access; set Access (for example '*=admins') or remove Groups",
      );
    return undefined;
  }
  // with client certificates required every request has a user (its certificate's CN): no users file needed
  if (c.Users === '' && c.TLSClientAuth !== 'require' && !bearer) {
    throw new ConfigError(
      "Access is set but Users is not: authorization per route needs authenticated users; set Users (write it with 'hivenode passwd'), JWKS (Bearer tokens), require client certificates (TLSClientAuth require), or remove Access",
    );
  }
  const named = namedGroups(table);
  // groups may come from the tokens' groups claim instead of (or besides) a groups file
  if (named.length > 0 && c.Groups === '' && !bearer?.groupsClaim) {
    throw new ConfigError(
      `Access names ${named.map((g) => `'${g}'`).join(', ')} but Groups is not set; set Groups to a groups file ('group: user1 user2' lines), JWTGroupsClaim (groups from Bearer tokens), or allow any authenticated user with '*'`,
    );
  }
  return table;
}
