import { expect } from 'chai';
import { parseNodeFile } from '../../../config/node-file.js';
import { compileConfig } from '../../../config/resolve.js';
import { ECHO_PARAMS } from '../../../config/echo.js';
import { ConfigError } from '../../../protocol/errors.js';

describe('config/node-file', () => {
  it('reads YAML with a hive section and ${VAR} expansion', () => {
    const text =
      'hive:\n  SERVERHOST: embedded\nservices:\n  - service: echo\n    name: e1\n    replycode: ${CODE}\n    Delay: 5\n';
    const f = parseNodeFile(text, 'node.yaml', { CODE: '201' });
    expect(f.services).to.have.length(1);
    expect(f.services[0]?.kind).to.equal('echo');
    const c = compileConfig('echo', ECHO_PARAMS, [f.hive, f.services[0]!.layer]).values;
    expect(c.NAME).to.equal('e1');
    expect(c.ReplyCode).to.equal(201);
    expect(c.Delay).to.equal(5);
    expect(c.SERVERHOST).to.equal('embedded');
  });

  it('reads JSON and does not leak the environment', () => {
    const f = parseNodeFile('{"services":[{"service":"echo"}]}', 'n.json', { REPLYCODE: '500' });
    expect(compileConfig('echo', ECHO_PARAMS, [f.hive, f.services[0]!.layer]).values.ReplyCode).to.equal(200);
  });

  it('explains what is wrong', () => {
    expect(() => parseNodeFile('services:\n  - service: nope\n', 'n.yaml')).to.throw(
      ConfigError,
      "n.yaml services[0]: 'service' must be one of",
    );
    expect(() => parseNodeFile('services: []\n', 'n.yaml')).to.throw(
      ConfigError,
      "'services' must be a non-empty list",
    );
    expect(() => parseNodeFile('servics: []\n', 'n.yaml')).to.throw(ConfigError, "unknown top-level key 'servics'");
    expect(() => parseNodeFile('services:\n  - service: echo\n    x: ${MISSING}\n', 'n.yaml', {})).to.throw(
      ConfigError,
      'environment variable MISSING is not set',
    );
    expect(() => parseNodeFile('services: [', 'n.yaml')).to.throw(ConfigError, 'not valid YAML');
    const f = parseNodeFile('services:\n  - service: echo\n    Bogus: 1\n', 'n.yaml');
    expect(() => compileConfig('echo', ECHO_PARAMS, [f.hive, f.services[0]!.layer])).to.throw(
      ConfigError,
      "unknown parameter 'Bogus' (n.yaml services[0])",
    );
  });

  it('reads the dashboard port', () => {
    expect(parseNodeFile('dashboard: {Port: 9100}\nservices: [{service: echo}]\n', 'n.yaml').dashboardPort).to.equal(
      9100,
    );
    expect(() => parseNodeFile('dashboard: {}\nservices: [{service: echo}]\n', 'n.yaml')).to.throw(
      ConfigError,
      'n.yaml: dashboard.Port needs a value',
    );
    for (const bad of ['70000', '-1', '1.5', 'abc']) {
      expect(() => parseNodeFile(`dashboard: {Port: '${bad}'}\nservices: [{service: echo}]\n`, 'n.yaml'), bad).to.throw(
        ConfigError,
        `dashboard.Port must be a port number from 0 to 65535, got '${bad}'`,
      );
    }
  });

  it('reads the console access: dashboard Host and Users (with variables), and refuses unknown dashboard keys', () => {
    const f = parseNodeFile(
      'dashboard: {Port: 9100, Host: 0.0.0.0, Users: "${U}"}\nservices: [{service: echo}]\n',
      'n.yaml',
      { U: 'ops.htpasswd' },
    );
    expect(f.dashboardAccess).to.deep.equal({ host: '0.0.0.0', users: 'ops.htpasswd' });
    expect(parseNodeFile('dashboard: {Port: 9100}\nservices: [{service: echo}]\n', 'n.yaml').dashboardAccess).to.equal(
      undefined,
    );
    expect(() =>
      parseNodeFile('dashboard: {Port: 9100, Password: x}\nservices: [{service: echo}]\n', 'n.yaml'),
    ).to.throw(ConfigError, "n.yaml: unknown dashboard key 'Password'; expected Port, Host, Users");
    expect(() => parseNodeFile('dashboard: 9100\nservices: [{service: echo}]\n', 'n.yaml')).to.throw(
      ConfigError,
      'n.yaml: dashboard must be an object with Port, Host, Users',
    );
  });

  it('names the node after the file, without its extension', () => {
    expect(parseNodeFile('services: [{service: echo}]\n', '/etc/hivenode/edge-1.yaml').name).to.equal('edge-1');
    expect(parseNodeFile('{"services":[{"service":"echo"}]}', 'n.JSON').name).to.equal('n');
    expect(parseNodeFile('services: [{service: echo}]\n', 'plain').name).to.equal('plain');
  });
});
