import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { HiveNode } from '../../node/node.js';
import { DEFAULT_TRACING } from '../../config/tracing.js';
import { startTracing, stopTracing } from '../../actors/observe/tracing.js';
import { parseTraceparent } from '../../actors/observe/trace-context.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { tempDir } from '../temp.js';
import { startTestNode } from './helpers.js';
import { recorded } from './queue/helpers.js';
import { fromReadable } from './tracing-scenario.js';
import { until } from '../support/wait.js';

const PARENT = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
const traceparent = `00-${PARENT.traceId}-${PARENT.spanId}-01`;

describe('tracing: the spans exec, SQL and syslog make of their work', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  let exporter: InMemorySpanExporter;
  let dir: string;
  beforeEach(async () => {
    dir = tempDir('hn-trace-svc-');
    exporter = new InMemorySpanExporter();
    await startTracing({ ...DEFAULT_TRACING }, { exporter });
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await stopTracing();
  });
  const spansOf = (service: string) => fromReadable(exporter.getFinishedSpans()).filter((s) => s.service === service);
  const call = (channel: string, data: Record<string, string[]>) =>
    node!.hive.call(
      channel,
      makeMessage({ Control: mapOf({ traceparent: [traceparent] }), Data: mapOf(data) }),
      10_000,
    );

  for (const sensitive of [false, true]) {
    it(`exec: the span names the command, ${sensitive ? 'and its arguments with LOGSENSITIVE=true' : 'not its arguments'}`, async () => {
      ({ node } = await startTestNode([
        {
          service: 'exec',
          NAME: 'cmd',
          Template: '{{ setCmd "echo" }}{{ addArg (index .Data.word 0) }}',
          LOGSENSITIVE: sensitive,
        },
      ]));
      const r = await call('cmd', { word: ['hunter2'] });
      expect(r.Code).to.equal(200);
      await until(() => spansOf('cmd').length === 1);
      const [span] = spansOf('cmd');
      expect(span).to.include({ traceId: PARENT.traceId, parentSpanId: PARENT.spanId });
      expect(span!.attributes['process.executable.name']).to.equal('echo');
      if (sensitive) expect(span!.attributes['process.command_args']).to.equal('["hunter2"]');
      else expect(JSON.stringify(span!.attributes)).to.not.contain('hunter2');
    });
  }

  it('SQL: the span names the statement kind and table, never the values', async () => {
    const init = join(dir, 'init.sql');
    writeFileSync(init, 'CREATE TABLE IF NOT EXISTS people (name TEXT);\n');
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'db',
        SQL_DATABASE: join(dir, 'db.sqlite'),
        SQL_INITFILE: init,
        SQL_STATEMENT: 'INSERT',
        SQL_TABLE: 'people',
        SQL_COLUMNS: 'name',
        SQL_VALUEPARAMS: 'name',
      },
    ]));
    const r = await call('db', { name: ['Alice Secretname'] });
    expect(r.Code, r.Message).to.equal(200);
    await until(() => spansOf('db').length === 1);
    const [span] = spansOf('db');
    expect(span).to.include({ traceId: PARENT.traceId, parentSpanId: PARENT.spanId });
    expect(span!.attributes).to.include({
      'db.operation.name': 'INSERT',
      'db.collection.name': 'people',
      'hivenode.code': 200,
    });
    expect(JSON.stringify(span!.attributes)).to.not.contain('Secretname');
  });

  it('syslog receiver: a new trace per received message, its traceparent in the forwarded message, the receiver of that message its child', async () => {
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: join(dir, 'sink.jsonl') },
      { service: 'syslog', NAME: 'logs', IP: '127.0.0.1', Port: 0, UDP: true, OUTPUTCHANNEL: 'sink' },
    ]));
    const port = node.services.find((s) => s.name === 'logs')!.running.status().udpPort as number;
    const socket = createSocket('udp4');
    for (const text of ['<13>Nov 24 10:00:00 host app: one', '<13>Nov 24 10:00:01 host app: two'])
      await new Promise<void>((r) => socket.send(text, port, '127.0.0.1', () => r()));
    socket.close();
    await until(() => recorded(join(dir, 'sink.jsonl')).length === 2 && spansOf('sink').length === 2);
    const forwarded = recorded(join(dir, 'sink.jsonl')).map((r) =>
      parseTraceparent(r.message.Control.traceparent?.[0])!,
    );
    expect(forwarded[0]!.traceId, 'one trace per message').to.not.equal(forwarded[1]!.traceId);
    const received = spansOf('logs');
    expect(received.map((s) => s.traceId).sort()).to.deep.equal(forwarded.map((f) => f.traceId).sort());
    for (const f of forwarded) {
      const receive = received.find((s) => s.traceId === f.traceId)!;
      expect(receive.parentSpanId, 'the receiver starts the trace').to.equal(undefined);
      const sink = spansOf('sink').find((s) => s.traceId === f.traceId)!;
      expect(sink.parentSpanId).to.equal(receive.spanId);
    }
  });
});
