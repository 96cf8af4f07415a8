/**
 * The trace scenario, shared by the in-process tests (spec/integration/tracing.spec.ts)
 * and the NATS one (spec/adapters/nats/tracing.spec.ts): a request through gateway → queue (first
 * attempt fails, second succeeds) → HTTP client → a real upstream node:http server, and the checks
 * that one trace ties all of it together with the right parents. Spans come from the SDK's
 * in-memory exporter or from a local OTLP/HTTP receiver that decodes what it is sent.
 */
import { expect } from 'chai';
import type { IncomingMessage, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { parseTraceparent } from '../../actors/observe/trace-context.js';
import type { OtlpAnyValue } from '../otlp-decode.js';
import { decodeOtlp } from '../otlp-decode.js';

/** A span as both collectors give it. */
export interface SeenSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  service: string;
  attributes: Record<string, unknown>;
  /** OpenTelemetry status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

/** The names the scenario's services get. */
export const NAMES = { gateway: 'gw', queue: 'jobs', client: 'upstream' } as const;

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

export interface Upstream {
  url: string;
  /** The before interceptor the HTTP client calls (it passes the message's Data on as the body). */
  interceptorUrl: string;
  traceparents: string[];
  /** Each request's tracestate header ('' without one). */
  tracestates: string[];
  interceptorTraceparents: string[];
  close(): Promise<void>;
}

/**
 * The upstream: drops the first request's connection, answers every later one 200, and keeps each request's
 * traceparent; beside it, on /before, the HTTP client's before interceptor, which keeps its own.
 */
export async function startUpstream(): Promise<Upstream> {
  const traceparents: string[] = [];
  const tracestates: string[] = [];
  const interceptorTraceparents: string[] = [];
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      if (req.url === '/before') {
        interceptorTraceparents.push(String(req.headers.traceparent ?? ''));
        const { value } = JSON.parse(body.toString('utf8')) as { value: { Data: unknown } };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: value.Data, status: 'OK', status_code: 200, options: {} }));
        return;
      }
      traceparents.push(String(req.headers.traceparent ?? ''));
      tracestates.push(String(req.headers.tracestate ?? ''));
      // the first attempt fails as a broken upstream does: the connection drops without an answer
      if (traceparents.length === 1) req.socket.destroy();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    interceptorUrl: `http://127.0.0.1:${port}/before`,
    traceparents,
    tracestates,
    interceptorTraceparents,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const valueOf = (v: OtlpAnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue;

/** Spans of one OTLP/HTTP export request, protobuf or JSON by its content type (ids in hex). */
export function decodeExport(body: Buffer, contentType: string): { spans: SeenSpan[]; serviceNames: string[] } {
  const doc = decodeOtlp(body, contentType);
  const spans: SeenSpan[] = [];
  const serviceNames: string[] = [];
  for (const rs of doc.resourceSpans ?? []) {
    const name = rs.resource?.attributes?.find((a) => a.key === 'service.name');
    if (name) serviceNames.push(String(valueOf(name.value)));
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes = Object.fromEntries((s.attributes ?? []).map((a) => [a.key, valueOf(a.value)]));
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          service: String(attributes['hivenode.service'] ?? ''),
          attributes,
          status: s.status?.code ?? 0,
        });
      }
    }
  }
  return { spans, serviceNames };
}

/**
 * A local OTLP/HTTP receiver: POST /v1/traces in protobuf or JSON (the content types it got are
 * kept); anything else is answered 415 and counted.
 */
export async function startOtlpReceiver(): Promise<{
  endpoint: string;
  spans: SeenSpan[];
  serviceNames: Set<string>;
  contentTypes: Set<string>;
  refused: string[];
  close(): Promise<void>;
}> {
  const spans: SeenSpan[] = [];
  const contentTypes = new Set<string>();
  const serviceNames = new Set<string>();
  const refused: string[] = [];
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      const type = String(req.headers['content-type'] ?? '');
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !(type === 'application/x-protobuf' || type === 'application/json')
      ) {
        refused.push(`${req.method} ${req.url} ${type}`);
        res.writeHead(415).end();
        return;
      }
      contentTypes.add(type);
      const decoded = decodeExport(body, type);
      spans.push(...decoded.spans);
      for (const n of decoded.serviceNames) serviceNames.add(n);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await listen(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    serviceNames,
    contentTypes,
    refused,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The in-memory exporter's spans in the same shape. */
export function fromReadable(spans: readonly ReadableSpan[]): SeenSpan[] {
  return spans.map((s) => ({
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    name: s.name,
    service: String(s.attributes['hivenode.service'] ?? ''),
    attributes: { ...s.attributes },
    status: s.status.code,
  }));
}

/** The node-file entries of the scenario (the gateway and queue; the HTTP client apart, so it can run elsewhere). */
export function frontServices(storeDir: string): Array<Record<string, string | number | boolean>> {
  return [
    {
      service: 'gateway',
      NAME: NAMES.gateway,
      Port: 0,
      Strict: true,
      OUTPUTCHANNEL: NAMES.queue,
      ControlAllowList: 'channel,requeue_timer,requeue_count',
    },
    { service: 'queue', NAME: NAMES.queue, AllowedChannels: NAMES.client, PersistPath: storeDir },
  ];
}

export function clientService(
  upstream: Upstream,
  logFormat: 'TEXT' | 'JSON',
): Record<string, string | number | boolean> {
  return {
    service: 'httpclient',
    NAME: NAMES.client,
    URL: upstream.url,
    InterceptBefore: upstream.interceptorUrl,
    LOGFORMAT: logFormat,
  };
}

/** The request: one queue entry for the HTTP client, retried at once after a failure. */
export async function sendRequest(
  gatewayPort: number,
  traceparent?: string,
  tracestate?: string,
): Promise<{ status: number; traceparent: string }> {
  const res = await fetch(`http://127.0.0.1:${gatewayPort}/jobs/add`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(traceparent ? { traceparent } : {}),
      ...(tracestate ? { tracestate } : {}),
    },
    body: JSON.stringify({
      Data: { order: ['17'] },
      Control: { channel: [NAMES.client], requeue_timer: ['0'], requeue_count: ['3'] },
    }),
  });
  await res.text();
  return { status: res.status, traceparent: res.headers.get('traceparent') ?? '' };
}

/** Whether the spans of the whole scenario are in (the second attempt's HTTP client span ended last). */
export function complete(spans: readonly SeenSpan[]): boolean {
  return (
    spans.filter((s) => s.service === NAMES.client).length >= 2 &&
    spans.filter((s) => s.name === `${NAMES.queue} deliver`).length >= 2
  );
}

/**
 * Checks one trace across the response header, every hop's span (parents right), the upstream's
 * received traceparents and the log lines; `parent` is the client's own span when it sent a traceparent.
 */
export function checkOneTrace(opts: {
  header: string;
  spans: readonly SeenSpan[];
  upstream: Upstream;
  logs: string;
  logFormat: 'TEXT' | 'JSON';
  parent?: { traceId: string; spanId: string };
}): void {
  const answered = parseTraceparent(opts.header);
  expect(answered, `traceparent response header '${opts.header}'`).to.not.equal(undefined);
  const traceId = answered!.traceId;
  if (opts.parent) expect(traceId, 'the gateway continues the trace it was sent').to.equal(opts.parent.traceId);
  const ours = opts.spans.filter((s) => (Object.values(NAMES) as string[]).includes(s.service));
  expect(
    ours.map((s) => s.traceId),
    'every span of the scenario is of the one trace',
  ).to.deep.equal(ours.map(() => traceId));

  const gateway = ours.filter((s) => s.service === NAMES.gateway);
  expect(gateway).to.have.length(1);
  expect(gateway[0]!.spanId, 'the response header names the gateway span').to.equal(answered!.spanId);
  expect(gateway[0]!.parentSpanId).to.equal(opts.parent?.spanId);

  const enqueue = ours.filter((s) => s.service === NAMES.queue && s.name !== `${NAMES.queue} deliver`);
  expect(enqueue, 'one span for the queue taking the entry').to.have.length(1);
  expect(enqueue[0]!.parentSpanId).to.equal(gateway[0]!.spanId);

  const attempts = ours
    .filter((s) => s.name === `${NAMES.queue} deliver`)
    .sort((a, b) => Number(a.attributes['hivenode.queue.attempt']) - Number(b.attributes['hivenode.queue.attempt']));
  expect(attempts.map((a) => a.attributes['hivenode.queue.attempt'])).to.deep.equal([1, 2]);
  for (const a of attempts)
    expect(a.parentSpanId, 'each attempt is a child of the span that added the entry').to.equal(enqueue[0]!.spanId);
  expect(attempts.map((a) => a.attributes['hivenode.code'])).to.deep.equal([502, 200]);
  expect(attempts[0]!.status, 'the failed attempt is an error span').to.equal(2);

  const client = ours.filter((s) => s.service === NAMES.client);
  expect(client).to.have.length(2);
  const clientOf = (attempt: SeenSpan): SeenSpan => {
    const found = client.filter((c) => c.parentSpanId === attempt.spanId);
    expect(
      found,
      `one HTTP client span under attempt ${String(attempt.attributes['hivenode.queue.attempt'])}`,
    ).to.have.length(1);
    return found[0]!;
  };
  const calls = attempts.map(clientOf);

  expect(opts.upstream.traceparents).to.have.length(2);
  // the interceptor call of each attempt is made in the same span as the request it prepares
  expect(opts.upstream.interceptorTraceparents, 'the before interceptor is called with the trace').to.deep.equal(
    opts.upstream.traceparents,
  );
  opts.upstream.traceparents.forEach((tp, i) => {
    const p = parseTraceparent(tp);
    expect(p, `upstream request ${i + 1} carries a traceparent ('${tp}')`).to.not.equal(undefined);
    expect(p!.traceId).to.equal(traceId);
    expect(p!.spanId, `upstream request ${i + 1}'s parent is the HTTP client span of attempt ${i + 1}`).to.equal(
      calls[i]!.spanId,
    );
  });

  const failed = opts.logs.split('\n').filter((l) => l.includes('request failed'));
  expect(failed, `the HTTP client's line about the failed attempt in:\n${opts.logs}`).to.have.length(1);
  if (opts.logFormat === 'JSON') expect((JSON.parse(failed[0]!) as { trace_id?: string }).trace_id).to.equal(traceId);
  else expect(failed[0]).to.contain(` trace_id=${traceId}`);
}
