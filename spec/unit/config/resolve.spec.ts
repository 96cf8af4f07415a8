import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUE_PARAMS } from '../../../config/queue.js';
import { SQL_PARAMS } from '../../../config/sql.js';
import { GATEWAY_PARAMS } from '../../../config/gateway.js';
import { EXEC_PARAMS } from '../../../config/exec.js';
import { ECHO_PARAMS } from '../../../config/echo.js';
import { checkTable } from '../../../config/params.js';
import { commandLineLayer, compileConfig, environmentLayer } from '../../../config/resolve.js';
import { parseDuration } from '../../../config/values.js';
import { ConfigError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';

describe('config/resolve', () => {
  it('applies the spec defaults exactly', () => {
    const q = compileConfig('queue', QUEUE_PARAMS, []).values;
    expect(q.TemplateChannel).to.equal('DefaultStorageChannel');
    expect(q.DefaultChannel).to.equal('main');
    expect(q.DefaultCommand).to.equal('queue');
    expect(q.DefaultMode).to.equal('call');
    expect(q.DefaultTemplateDefine).to.equal('');
    expect(q.DefaultDeadLetterSlap).to.equal('');
    expect(q.PersistPath).to.equal(join(tmpdir(), 'platform_queue'));
    expect(q.DefaultRequeueTime).to.equal(30);
    expect(q.DefaultRequeueCount).to.equal(3);
    expect(q.StartPaused).to.equal(false);
    expect(q.OUTPUTCHANNEL).to.equal('main');
    const s = compileConfig('sql', SQL_PARAMS, []).values;
    expect(s.SQL_PORT).to.equal(3306);
    expect(s.SQL_PROTOCOL).to.equal('tcp');
    expect(s.SQL_RAWACTION).to.equal('exec');
    expect(s.SQL_POLLINTERVAL).to.equal(300_000);
    expect(s.SQL_POLLCLASS).to.equal('sql');
    expect(s.SQL_POLLOPERATION).to.equal('poll');
    expect(s.SQL_WHERE_CTRL).to.equal('');
    expect(s.SQL_STATEMENT_CTRL).to.equal('');
    const g = compileConfig('gateway', GATEWAY_PARAMS, []).values;
    expect(g.Port).to.equal(80);
    expect(g.RequestTimeout).to.equal(60_000);
    expect(g.BasePath).to.equal('/');
    expect(g.HealthcheckPath).to.equal('healthcheck');
    expect(g.DefaultClass).to.equal('rest');
    expect(g.DefaultOperation).to.equal('input');
  });

  it('takes environment, then command line, names case-insensitive', () => {
    const env = environmentLayer({ DEFAULTCHANNEL: 'from-env', DEFAULTREQUEUECOUNT: '5', PATH: '/bin' }, QUEUE_PARAMS);
    const cli = commandLineLayer(['-defaultchannel=from-cli', '--StartPaused', '-DefaultRequeueTime', '12']);
    const c = compileConfig('queue', QUEUE_PARAMS, [env, cli]);
    expect(c.values.DefaultChannel).to.equal('from-cli');
    expect(c.values.DefaultRequeueCount).to.equal(5);
    expect(c.values.DefaultRequeueTime).to.equal(12);
    expect(c.values.StartPaused).to.equal(true);
    expect([...c.explicit].sort()).to.deep.equal([
      'DefaultChannel',
      'DefaultRequeueCount',
      'DefaultRequeueTime',
      'StartPaused',
    ]);
  });

  it('names the parameter, its source and the accepted values', () => {
    expect(() => compileConfig('echo', ECHO_PARAMS, [commandLineLayer(['-Nonsense=1'])])).to.throw(
      ConfigError,
      "unknown parameter 'Nonsense' (command line) for service echo",
    );
    expect(() => compileConfig('queue', QUEUE_PARAMS, [commandLineLayer(['-DefaultMode=later'])])).to.throw(
      ConfigError,
      "DefaultMode (command line): 'later' is not accepted; expected one of call, execute",
    );
    expect(() =>
      compileConfig('gateway', GATEWAY_PARAMS, [
        { source: 'node.yaml services[0]', values: [['RequestTimeout', 'soon']] },
      ]),
    ).to.throw(ConfigError, 'RequestTimeout (node.yaml services[0])');
    expect(() => compileConfig('gateway', GATEWAY_PARAMS, [commandLineLayer(['-Port=70000'])])).to.throw(
      ConfigError,
      'above the maximum 65535',
    );
    expect(() => compileConfig('exec', EXEC_PARAMS, [])).to.throw(ConfigError, 'Template is mandatory');
    expect(() => commandLineLayer(['stray'])).to.throw(ConfigError, "unexpected argument 'stray'");
  });

  it('a bare flag is true for a boolean and refused for any other type (it never becomes the text "true")', () => {
    expect(compileConfig('queue', QUEUE_PARAMS, [commandLineLayer(['-StartPaused'])]).values.StartPaused).to.equal(
      true,
    );
    expect(
      compileConfig('queue', QUEUE_PARAMS, [commandLineLayer(['-StartPaused', '-AutoPause=false'])]).values.StartPaused,
    ).to.equal(true);
    for (const [args, name] of [
      [['-NAME'], 'NAME'],
      [['-RecordFile', '-NAME=e'], 'RecordFile'],
      [['--replycode'], 'ReplyCode'],
    ] as const) {
      expect(() => compileConfig('echo', ECHO_PARAMS, [commandLineLayer(args)]), args.join(' ')).to.throw(
        ConfigError,
        `parameter ${name} needs a value (command line)`,
      );
    }
    // a value that looks like an option is still an option, not the value
    expect(() => compileConfig('echo', ECHO_PARAMS, [commandLineLayer(['-NAME', '-ReplyCode=201'])])).to.throw(
      ConfigError,
      'parameter NAME needs a value',
    );
    expect(compileConfig('echo', ECHO_PARAMS, [commandLineLayer(['-NAME', 'e1'])]).values.NAME).to.equal('e1');
  });

  it("defaults SQL_PORT to the engine's usual port, from the table", () => {
    const port = (engine: string, extra: [string, string][] = []) =>
      compileConfig('sql', SQL_PARAMS, [{ source: 'test', values: [['SQL_ENGINE', engine], ...extra] }]).values
        .SQL_PORT;
    expect(['postgres', 'mysql', 'mariadb', 'mssql', 'oracle'].map((e) => port(e))).to.deep.equal([
      5432, 3306, 3306, 1433, 1521,
    ]);
    expect(port('postgres', [['SQL_PORT', '6543']])).to.equal(6543);
    expect(port('MSSQL', [['SQL_PORT', '3306']])).to.equal(3306);
  });

  it('refuses a table whose defaultBy does not follow an earlier enum by its values', () => {
    const engine = { name: 'E', type: 'enum', default: 'a', values: ['a', 'b'], description: '' } as const;
    const port = (values: Record<string, string>, param = 'E') =>
      ({ name: 'P', type: 'int', default: '1', defaultBy: { param, values }, description: '' }) as const;
    expect(() => checkTable('t', [engine, port({ a: '2' })])).to.not.throw();
    expect(() => checkTable('t', [port({ a: '2' }), engine])).to.throw(/not an earlier enum/);
    expect(() => checkTable('t', [engine, port({ c: '2' })])).to.throw(/'c', which is not one of its values/);
  });

  it('reads file:// secrets, trimmed, and lists them for masking', () => {
    const dir = tempDir('hn-secret-');
    writeFileSync(join(dir, 'pw'), 's3cret-value\n');
    const c = compileConfig('sql', SQL_PARAMS, [commandLineLayer([`-SQL_PASSWORD=file://${join(dir, 'pw')}`])]);
    expect(c.values.SQL_PASSWORD).to.equal('s3cret-value');
    expect(c.secrets).to.deep.equal(['s3cret-value']);
    expect(() => compileConfig('sql', SQL_PARAMS, [commandLineLayer(['-SQL_PASSWORD=file:///nope/none'])])).to.throw(
      ConfigError,
      "SQL_PASSWORD (command line): cannot read secret file '/nope/none': ENOENT",
    );
  });

  it('parses durations', () => {
    expect(parseDuration('250ms')).to.equal(250);
    expect(parseDuration('20s')).to.equal(20_000);
    expect(parseDuration('5m')).to.equal(300_000);
    expect(parseDuration('1h')).to.equal(3_600_000);
    expect(parseDuration('1m30s')).to.equal(90_000);
    expect(parseDuration('30d')).to.equal(30 * 86_400_000);
    expect(parseDuration('1d12h')).to.equal(36 * 3_600_000);
    expect(parseDuration('30')).to.equal(30_000);
    expect(parseDuration('30', 'ms')).to.equal(30);
    expect(() => parseDuration('5 minutes')).to.throw('is not a duration');
  });
});
