/**
 * The gateway's OpenAPI 3.1 document (`OpenAPIPath`, README, OpenAPI): one POST operation per route
 * a strict-mode gateway knows — the patterns of Routes, Schemas and Webhooks, and the rest
 * (`/{class}/{operation}` to OUTPUTCHANNEL) when no `*` route covers it — so API consumers generate
 * clients from what the gateway really does. A route's request body is its Schemas schema; without
 * one, what the service behind its channel on this node declares (RequestShape: the SQL service's
 * placeholders, the queue's controls), else any Data. Responses are the Result shape under every
 * Code the route can answer; security schemes follow the authentication configured (Basic, Bearer,
 * client certificates, and each webhook route's signature header).
 */
import type { RequestShape, SiblingService } from '../service/context.js';
import type { GatewayOptions } from './options.js';
import type { RequestSchemas } from './schemas.js';
import type { TlsClientAuth } from '../../config/tls.js';
import type { WebhookRule } from './webhooks.js';

export interface OpenApiInput {
  opts: GatewayOptions;
  /** The gateway's NAME and release, for info. */
  name: string;
  release: string;
  basic: boolean;
  bearer: boolean;
  clientAuth: TlsClientAuth;
  schemas: RequestSchemas | undefined;
  siblings: ReadonlyArray<SiblingService>;
}

type Json = Record<string, unknown>;

const NAME_PATTERN = '^[A-Za-z0-9_.-]+$';
const DATA: Json = {
  type: 'object',
  description: 'Data: each field a list of strings',
  additionalProperties: { type: 'array', items: { type: 'string' } },
};
const RESULT: Json = {
  type: 'object',
  required: ['Code', 'Message', 'Data', 'List'],
  properties: {
    Code: { type: 'integer', description: 'the HTTP status' },
    Message: { type: 'string', description: "'Success', or what went wrong" },
    Data: { $ref: '#/components/schemas/Data' },
    List: { type: ['array', 'null'] },
  },
};

/** The Codes every route may answer besides 200, and what each means (docs/ARCHITECTURE.md, Codes and errors). */
const CODES: ReadonlyArray<readonly [number, string]> = [
  [400, 'bad input (the field named)'],
  [401, 'credentials missing or wrong, or a webhook signature refused'],
  [403, 'the user may not use the route, a control or a channel'],
  [404, 'no service listens on the channel'],
  [413, 'the body is over MaxBodySize'],
  [429, 'over the rate limit, or the service is busy (Retry-After)'],
  [500, 'the service failed'],
  [502, 'the upstream failed'],
  [503, 'unavailable: starting, draining, disconnected (Retry-After)'],
  [504, 'no answer within RequestTimeout'],
];

const RATE_HEADERS: Json = {
  RateLimit: { description: 'tokens remaining and seconds until the bucket is full', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'quota per window', schema: { type: 'string' } },
};

/** A route pattern as paths and operation ids use it: [class or undefined for any, operation or undefined for any]. */
function split(pattern: string): [string | undefined, string | undefined] {
  if (pattern === '*') return [undefined, undefined];
  const [cls, op] = pattern.split('/') as [string, string | undefined];
  return [cls, op === undefined || op === '*' ? undefined : op];
}

/** The routes the document has an operation for, each once (class and operation without case). */
function routesOf(opts: GatewayOptions): Array<[string | undefined, string | undefined]> {
  const patterns = [
    ...opts.routes.entries.map((e) => e.pattern),
    ...(opts.schemas?.entries.map((e) => e.pattern) ?? []),
    ...(opts.webhooks?.entries.map((e) => e.pattern) ?? []),
  ];
  const seen = new Map<string, [string | undefined, string | undefined]>();
  for (const p of patterns) {
    const route = split(p);
    seen.set(`${route[0]?.toLowerCase() ?? '*'}/${route[1]?.toLowerCase() ?? '*'}`, route);
  }
  // with OUTPUTCHANNEL set every path reaches a channel: the rest is a route of its own
  if (opts.outputChannel !== '' && !seen.has('*/*')) seen.set('*/*', [undefined, undefined]);
  return [...seen.values()];
}

const webhookHeader = (rule: WebhookRule): string => {
  switch (rule.scheme.kind) {
    case 'github':
      return 'X-Hub-Signature-256';
    case 'stripe':
      return 'Stripe-Signature';
    case 'shopify':
      return 'X-Shopify-Hmac-Sha256';
    case 'standard':
      return 'webhook-signature';
    case 'hmac-sha256':
      return rule.scheme.header;
  }
};

const schemeName = (pattern: string): string => `webhook_${pattern.replace(/[^A-Za-z0-9_.-]/g, '_')}`;

/** The request body of a route without a schema: the fields and controls its service declares, else any Data. */
function declaredBody(shape: RequestShape | undefined, opts: GatewayOptions): Json {
  if (!shape) return { $ref: '#/components/schemas/Data' };
  const properties: Json = {};
  for (const f of shape.fields)
    properties[f.name] = { type: 'array', items: { type: 'string' }, description: f.description };
  // controls travel as prefixed Data fields only when ControlPrefix is set and the allow list lets them through
  if (opts.controlPrefix !== '') {
    for (const c of shape.controls) {
      if (!opts.allowAll && !opts.allowed.has(c.name.toLowerCase())) continue;
      properties[`${opts.controlPrefix}${c.name}`] = {
        type: 'array',
        maxItems: 1,
        items: { type: 'string', ...(c.values ? { enum: [...c.values] } : {}) },
        description: `control '${c.name}': ${c.description}`,
      };
    }
  }
  const required = shape.fields.filter((f) => f.required).map((f) => f.name);
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: { type: 'array', items: { type: 'string' } },
  };
}

/** Builds the document; the same input gives the same document. */
export function openApiDocument(input: OpenApiInput): Json {
  const { opts } = input;
  const securitySchemes: Json = {};
  const security: Array<Record<string, string[]>> = [];
  if (input.basic) {
    securitySchemes.basic = {
      type: 'http',
      scheme: 'basic',
      description: "a user of the Users file ('hivenode passwd')",
    };
    security.push({ basic: [] });
  }
  if (input.bearer) {
    securitySchemes.bearer = {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'an access token of the identity provider (JWKS)',
    };
    security.push({ bearer: [] });
  }
  if (input.clientAuth !== 'none') {
    securitySchemes.mutualTLS = {
      type: 'mutualTLS',
      description: "a client certificate the gateway's CA signed; its CN is the user",
    };
    security.push({ mutualTLS: [] });
  }
  const paths: Record<string, Json> = {};
  const usedIds = new Set<string>();
  const components: Json = { schemas: { Result: RESULT, Data: DATA } };
  const responses: Json = {};
  for (const [code, description] of CODES)
    responses[String(code)] = {
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Result' } } },
    };
  components.responses = Object.fromEntries(Object.entries(responses).map(([code, r]) => [`Code${code}`, r]));

  for (const [cls, op] of routesOf(opts)) {
    const path = `/${cls ?? '{class}'}/${op ?? '{operation}'}`;
    const parameters: Json[] = [];
    if (cls === undefined)
      parameters.push({ name: 'class', in: 'path', required: true, schema: { type: 'string', pattern: NAME_PATTERN } });
    if (op === undefined)
      parameters.push({
        name: 'operation',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: NAME_PATTERN },
      });
    // a header control the allow list names may come with any request
    for (const name of [...opts.allowed].filter((n) => n !== '*').sort())
      parameters.push({
        name,
        in: 'header',
        required: false,
        schema: { type: 'string' },
        description: `control '${name}' (ControlAllowList)`,
      });
    const matchCls = cls ?? '*';
    const matchOp = op ?? '*';
    const channel = opts.routes.channelFor(matchCls, matchOp, opts.outputChannel);
    const target = input.siblings.find((s) => s.channel === channel && s.channel !== '');
    const schema = input.schemas?.schemaFor(matchCls, matchOp);
    const hook = opts.webhooks?.match(matchCls, matchOp);
    const limited = opts.rateLimits?.match(matchCls, matchOp);
    const id = uniqueId(`${cls ?? 'any'}_${op ?? 'any'}`, usedIds);
    const ok: Json = {
      description: 'Success',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Result' } } },
      ...(limited ? { headers: RATE_HEADERS } : {}),
    };
    const answers: Json = { '200': ok };
    for (const [code] of CODES) {
      if (code === 401 && !hook && security.length === 0) continue;
      if (code === 403 && !hook && !opts.access && !opts.cors) continue;
      answers[String(code)] =
        code === 429 && limited
          ? { $ref: '#/components/responses/Code429', description: 'over the rate limit (Retry-After, RateLimit)' }
          : { $ref: `#/components/responses/Code${code}` };
    }
    const operation: Json = {
      operationId: id,
      summary: `${cls ?? '<class>'}/${op ?? '<operation>'} → channel '${channel}'${target ? ` (${target.kind} service '${target.name}')` : ''}`,
      description: [
        schema
          ? "The request body must match the route's schema (Schemas): a body that does not is answered 400 naming each failing field."
          : target?.describe
            ? `The fields and controls the ${target.kind} service declares.`
            : 'Any Data (each field a list of strings).',
        "A message-shaped body ({Class, Operation, Data, Control}) is accepted too; the path's class and operation win.",
        limited
          ? `Rate limited (RateLimits entry '${limited.pattern}': ${limited.value.limit}/${limited.value.windowS === 1 ? 's' : 'm'}, by ${limited.value.by}).`
          : '',
      ]
        .filter((l) => l !== '')
        .join(' '),
      ...(parameters.length > 0 ? { parameters } : {}),
      requestBody: {
        required: false,
        content: { 'application/json': { schema: schema ?? declaredBody(target?.describe?.(), opts) } },
      },
      responses: answers,
    };
    if (hook) {
      const scheme = schemeName(hook.pattern);
      securitySchemes[scheme] = {
        type: 'apiKey',
        in: 'header',
        name: webhookHeader(hook.value),
        description: `the ${hook.value.scheme.kind} signature (HMAC-SHA256) of the body (Webhooks entry '${hook.pattern}')`,
      };
      operation.security = [{ [scheme]: [] }];
    }
    paths[path] = { post: operation };
  }
  if (Object.keys(securitySchemes).length > 0) components.securitySchemes = securitySchemes;
  const server = opts.basePath === '/' ? '/' : opts.basePath.replace(/\/$/, '');
  return {
    openapi: '3.1.0',
    info: {
      title: `hivenode gateway ${input.name}`,
      version: input.release,
      description:
        "Every request becomes a hive message; the Result's Code is the HTTP status and the body is the Result JSON (README, The REST gateway).",
    },
    servers: [{ url: server }],
    ...(security.length > 0 ? { security } : {}),
    paths,
    components,
  };
}

function uniqueId(base: string, used: Set<string>): string {
  const clean = base.replace(/[^A-Za-z0-9_.-]/g, '_');
  let id = clean;
  for (let n = 2; used.has(id.toLowerCase()); n++) id = `${clean}_${n}`;
  used.add(id.toLowerCase());
  return id;
}
