/**
 * Decodes what an OTLP/HTTP exporter sends, in either encoding, for the tests' receivers: protobuf
 * through protobufjs (an implementation hivenode's own writer shares nothing with) against the
 * messages of opentelemetry-proto that hivenode writes, given here as protobufjs reflection JSON with
 * their field numbers and types; JSON as it is. Both come out in OTLP/JSON's shape (ids in hex,
 * 64-bit integers as decimal strings), so a test reads either the same way.
 */
import protobuf from 'protobufjs';

const kv = { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } };
const SCHEMA = {
  nested: {
    AnyValue: {
      oneofs: {
        value: {
          oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'],
        },
      },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        arrayValue: { type: 'ArrayValue', id: 5 },
        kvlistValue: { type: 'KeyValueList', id: 6 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
    KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    KeyValue: kv,
    Resource: {
      fields: {
        attributes: { rule: 'repeated', type: 'KeyValue', id: 1 },
        droppedAttributesCount: { type: 'uint32', id: 2 },
      },
    },
    InstrumentationScope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        traceState: { type: 'string', id: 3 },
        parentSpanId: { type: 'bytes', id: 4 },
        flags: { type: 'fixed32', id: 16 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        droppedAttributesCount: { type: 'uint32', id: 10 },
        status: { type: 'Status', id: 15 },
      },
    },
    ScopeSpans: {
      fields: {
        scope: { type: 'InstrumentationScope', id: 1 },
        spans: { rule: 'repeated', type: 'Span', id: 2 },
        schemaUrl: { type: 'string', id: 3 },
      },
    },
    ResourceSpans: {
      fields: {
        resource: { type: 'Resource', id: 1 },
        scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
        schemaUrl: { type: 'string', id: 3 },
      },
    },
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
  },
};

const request = protobuf.Root.fromJSON(SCHEMA).lookupType('ExportTraceServiceRequest');

export interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number | string;
  arrayValue?: { values?: OtlpAnyValue[] };
}
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  traceState?: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
}
export interface OtlpRequest {
  resourceSpans: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }>;
  }>;
}

const hex = (bytes: Uint8Array | undefined): string | undefined =>
  bytes && bytes.length > 0 ? Buffer.from(bytes).toString('hex') : undefined;

/** An ExportTraceServiceRequest in protobuf, in OTLP/JSON's shape (throws on what is not one). */
export function decodeOtlpProtobuf(body: Uint8Array): OtlpRequest {
  const message = request.decode(body);
  // enums and numbers as numbers, 64-bit integers as decimal strings, bytes left as bytes (made hex below)
  const doc = request.toObject(message, { longs: String, arrays: true, defaults: false, oneofs: false }) as OtlpRequest;
  for (const rs of doc.resourceSpans) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const raw = span as unknown as { traceId?: Uint8Array; spanId?: Uint8Array; parentSpanId?: Uint8Array };
        const parent = hex(raw.parentSpanId);
        Object.assign(span, { traceId: hex(raw.traceId) ?? '', spanId: hex(raw.spanId) ?? '' });
        if (parent === undefined) delete span.parentSpanId;
        else span.parentSpanId = parent;
      }
    }
  }
  return doc;
}

/** An OTLP/HTTP export request's body, by its content type: protobuf or JSON. */
export function decodeOtlp(body: Buffer, contentType: string): OtlpRequest {
  if (contentType.startsWith('application/x-protobuf')) return decodeOtlpProtobuf(body);
  if (contentType.startsWith('application/json')) return JSON.parse(body.toString('utf8')) as OtlpRequest;
  throw new Error(`not an OTLP/HTTP content type: '${contentType}'`);
}
