import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import type { OtlpProtocol } from '../../../config/tracing.js';
import { OtlpBatchExporter } from '../../../actors/observe/otlp-export.js';
import { RecordedSpan } from '../../../actors/observe/recorded-span.js';
import { decodeOtlp } from '../../otlp-decode.js';

const ended = (name: string, attributes: RecordedSpan['attributes'] = {}): RecordedSpan => {
  const span = new RecordedSpan(
    '4bf92f3577b34da6a3ce929d0e0e4736',
    '00f067aa0ba902b7',
    undefined,
    1,
    undefined,
    name,
    SpanKind.SERVER,
    attributes,
    () => undefined,
  );
  span.end();
  return span;
};

const CONTENT_TYPES: Record<OtlpProtocol, string> = {
  'http/protobuf': 'application/x-protobuf',
  'http/json': 'application/json',
};

describe('actors/shared/otlp-export: batches of spans sent over OTLP/HTTP', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    describe(protocol, () => {
      const type = CONTENT_TYPES[protocol];
      it('sends batches with the configured headers; a batch the collector refuses is dropped and counted', async () => {
        const got: Array<{ type: string; auth: string; spans: number }> = [];
        let answer = 200;
        const server = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            const doc = decodeOtlp(Buffer.concat(chunks), String(req.headers['content-type']));
            got.push({
              type: String(req.headers['content-type']),
              auth: String(req.headers['x-token']),
              spans: doc.resourceSpans[0]!.scopeSpans![0]!.spans!.length,
            });
            res.writeHead(answer).end('{}');
          });
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
        const lines: string[] = [];
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
        const exporter = new OtlpBatchExporter({
          url,
          protocol,
          headers: { 'x-token': 'k' },
          resource: { 'service.name': 's' },
          scope: 'hivenode',
          onDropped: (l) => lines.push(l),
        });
        try {
          for (let i = 0; i < 515; i++) exporter.push(ended(`span ${i}`));
          await exporter.flush();
          expect(got).to.deep.equal([
            { type, auth: 'k', spans: 512 },
            { type, auth: 'k', spans: 3 },
          ]);
          answer = 400;
          exporter.push(ended('refused'));
          await exporter.flush();
          expect(exporter.dropped).to.equal(1);
          expect(lines).to.deep.equal([
            `OTLP export to ${url} failed: it answered 400; 1 span(s) of 1 batch(es) dropped (OTEL_EXPORTER_OTLP_ENDPOINT)`,
          ]);
          // a collector failing on: no line more within the minute, the count carried to the next line
          exporter.push(ended('refused again'));
          await exporter.flush();
          expect(lines).to.have.length(1);
        } finally {
          await exporter.shutdown();
          server.close();
        }
      });

      it('a span too big for the room left goes in a batch of its own; one bigger than a batch is dropped and counted', async () => {
        const batches: Array<Array<{ name: string; size: number }>> = [];
        const server = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            const doc = decodeOtlp(Buffer.concat(chunks), String(req.headers['content-type']));
            batches.push(
              doc.resourceSpans[0]!.scopeSpans![0]!.spans!.map((sp) => ({
                name: sp.name,
                size: sp.attributes?.[0]?.value.stringValue?.length ?? 0,
              })),
            );
            res.writeHead(200).end('{}');
          });
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
        const exporter = new OtlpBatchExporter({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
          protocol,
          headers: {},
          resource: { 'service.name': 's' },
          scope: 'hivenode',
        });
        try {
          for (let i = 0; i < 300; i++) exporter.push(ended('small'));
          // fits into an empty batch (1 MiB) but not after the 300 small ones (~17 KB in protobuf, ~84 KB in JSON)
          exporter.push(ended('big', { blob: 'x'.repeat(1_040_000) }));
          exporter.push(ended('huge', { blob: 'y'.repeat(1_100_000) }));
          exporter.push(ended('after', { n: 1 }));
          await exporter.flush();
          // the batches go two at a time: a small one may arrive before the big one sent before it
          const sorted = batches.map((b) => JSON.stringify(b)).sort();
          expect(sorted).to.deep.equal(
            [
              JSON.stringify(Array(300).fill({ name: 'small', size: 0 })),
              JSON.stringify([{ name: 'after', size: 0 }]),
              JSON.stringify([{ name: 'big', size: 1_040_000 }]),
            ].sort(),
          );
          expect(exporter.dropped).to.equal(1);
        } finally {
          await exporter.shutdown();
          server.close();
        }
      });
    });
  }
});
