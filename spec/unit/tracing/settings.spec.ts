import { expect } from 'chai';
import { loadNodeFile, parseNodeFile } from '../../../config/node-file.js';
import { DEFAULT_TRACING, compileTracing } from '../../../config/tracing.js';
import { ConfigError } from '../../../protocol/errors.js';

const refused = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

describe('config/tracing: the OTEL_* variables and the node file tracing section', () => {
  it('exports nothing and carries trace context when nothing is set', () => {
    expect(compileTracing({})).to.deep.equal(DEFAULT_TRACING);
  });

  it('reads the standard variables: endpoint (+ /v1/traces), traces endpoint as given, service name, sampler and ratio, headers', () => {
    const s = compileTracing({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_SERVICE_NAME: 'shop',
      OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=ops, api-key=a%20b',
    });
    expect(s).to.deep.equal({
      endpoint: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { 'x-team': 'ops', 'api-key': 'a b' },
      serviceName: 'shop',
      sampler: 'parentbased_traceidratio',
      samplerArg: 0.25,
      propagate: true,
    });
    expect(
      compileTracing({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b:2/custom',
      }).endpoint,
    ).to.equal('https://b:2/custom');
  });

  it('encodes in protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL (or its traces variable, which wins, or the section) says http/json; grpc is refused', () => {
    expect(compileTracing({}).protocol).to.equal('http/protobuf');
    expect(compileTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol).to.equal('http/json');
    expect(
      compileTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'HTTP/Protobuf' })
        .protocol,
    ).to.equal('http/protobuf');
    expect(
      compileTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, { protocol: 'http/json' }).protocol,
    ).to.equal('http/json');
    expect(refused(() => compileTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }))).to.equal(
      "OTEL_EXPORTER_OTLP_PROTOCOL 'grpc' is not accepted: hivenode exports OTLP over HTTP only; expected http/protobuf or http/json",
    );
    expect(refused(() => compileTracing({}, { tracesProtocol: 'json' }, 'n.yaml tracing'))).to.equal(
      "n.yaml tracing.tracesProtocol 'json' is not accepted; expected http/protobuf or http/json",
    );
  });

  it('exports nothing with OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none, or no propagation (OTEL_PROPAGATORS=none)', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(compileTracing({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).endpoint).to.equal('');
    expect(compileTracing({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).endpoint).to.equal('');
    const none = compileTracing({ ...endpoint, OTEL_PROPAGATORS: 'none' });
    expect(none).to.include({ endpoint: '', propagate: false });
    expect(compileTracing({ OTEL_PROPAGATORS: 'tracecontext,baggage' }).propagate).to.equal(true);
  });

  it('the node file section wins over the variables, key by key', () => {
    const s = compileTracing(
      { OTEL_SERVICE_NAME: 'from-env', OTEL_TRACES_SAMPLER: 'always_off' },
      { endpoint: 'http://127.0.0.1:4318', serviceName: 'from-file' },
    );
    expect(s).to.include({
      endpoint: 'http://127.0.0.1:4318/v1/traces',
      serviceName: 'from-file',
      sampler: 'always_off',
    });
  });

  it('refuses what it cannot honour, naming where the value came from', () => {
    expect(refused(() => compileTracing({ OTEL_TRACES_SAMPLER: 'sometimes' }))).to.match(
      /OTEL_TRACES_SAMPLER 'sometimes' is not accepted; expected one of always_on/,
    );
    expect(refused(() => compileTracing({ OTEL_TRACES_SAMPLER_ARG: '1.5' }))).to.match(
      /OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got '1.5'/,
    );
    expect(refused(() => compileTracing({}, { samplerArg: 'half' }, 'node.yaml tracing'))).to.match(
      /node.yaml tracing.samplerArg must be a ratio/,
    );
    expect(refused(() => compileTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }))).to.match(
      /OTEL_EXPORTER_OTLP_ENDPOINT 'collector:4318' must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(refused(() => compileTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }))).to.match(/is not a URL/);
    expect(refused(() => compileTracing({ OTEL_PROPAGATORS: 'b3' }))).to.match(
      /OTEL_PROPAGATORS names b3; hivenode carries W3C trace context only/,
    );
    expect(refused(() => compileTracing({ OTEL_TRACES_EXPORTER: 'zipkin' }))).to.match(
      /OTEL_TRACES_EXPORTER 'zipkin' is not accepted; expected otlp or none/,
    );
    expect(refused(() => compileTracing({ OTEL_SDK_DISABLED: 'yes' }))).to.match(
      /OTEL_SDK_DISABLED must be true or false/,
    );
    expect(refused(() => compileTracing({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }))).to.match(
      /OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not name=value/,
    );
    expect(refused(() => compileTracing({ OTEL_EXPORTER_OTLP_HEADERS: 'x=a%0Db' }))).to.match(
      /the value of 'x' contains a line break/,
    );
    expect(refused(() => compileTracing({ OTEL_EXPORTER_OTLP_HEADERS: 'x=caf%C3%A9' }))).to.match(
      /the value of 'x' has a character an HTTP header cannot carry \(printable ASCII only\)/,
    );
  });

  it('examples/tracing.yaml: its tracing section compiles with the collector given', () => {
    const example = new URL('../../../examples/tracing.yaml', import.meta.url).pathname;
    const file = loadNodeFile(example, { OTLP: 'http://127.0.0.1:4318' });
    expect(compileTracing({}, file.tracing, `${file.name} tracing`)).to.deep.equal({
      endpoint: 'http://127.0.0.1:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'orders',
      sampler: 'parentbased_traceidratio',
      samplerArg: 0.25,
      propagate: true,
    });
    expect(file.services.map((s) => s.kind)).to.deep.equal(['gateway', 'queue', 'httpclient']);
  });

  it('a node file tracing section: keys in any letter case, ${VAR} expanded; an unknown key or a non-object is refused', () => {
    const file = parseNodeFile(
      'tracing: {Endpoint: "${COLLECTOR}", SERVICENAME: shop}\nservices: [{service: echo}]\n',
      'n.yaml',
      { COLLECTOR: 'http://127.0.0.1:4318' },
    );
    expect(file.tracing).to.deep.equal({ endpoint: 'http://127.0.0.1:4318', serviceName: 'shop' });
    expect(parseNodeFile('services: [{service: echo}]\n', 'n.yaml', {}).tracing).to.deep.equal({});
    expect(refused(() => parseNodeFile('tracing: {endpont: x}\nservices: [{service: echo}]\n', 'n.yaml', {}))).to.match(
      /n.yaml: unknown tracing key 'endpont'; expected endpoint, tracesEndpoint/,
    );
    expect(refused(() => parseNodeFile('tracing: [1]\nservices: [{service: echo}]\n', 'n.yaml', {}))).to.match(
      /n.yaml: tracing must be an object/,
    );
  });
});
