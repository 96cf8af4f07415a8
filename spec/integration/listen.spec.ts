import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { ListenError } from '../../protocol/errors.js';
import { listenFailure, listenOn } from '../../actors/net/listen.js';
import { startTestNode } from './helpers.js';

function holdTcp(host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => resolve(s));
  });
}

describe('listeners that cannot open', function () {
  this.timeout(20_000);

  it('a syslog receiver whose TCP port is taken fails with a ListenError and releases the UDP port it had bound', async () => {
    const held = await holdTcp('127.0.0.1');
    const port = (held.address() as { port: number }).port;
    try {
      let error: unknown;
      await startTestNode([
        { service: 'syslog', NAME: 'logs', IP: '127.0.0.1', Port: port, UDP: true, TCP: true },
      ]).then(
        ({ node }) => node.stop(1_000),
        (e: unknown) => (error = e),
      );
      expect(error).to.be.instanceOf(ListenError);
      expect((error as ListenError).target).to.deep.equal({
        service: 'syslog',
        instance: 'logs',
        parameter: 'Port',
        value: port,
      });
      expect((error as ListenError).message).to.equal(
        `syslog 'logs' cannot start: Port ${port} is already in use over TCP (EADDRINUSE); choose a free Port or stop the program that holds it`,
      );
      // the UDP socket of the failed start is closed: the port can be bound again
      const udp = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, '127.0.0.1', () => resolve());
      });
      udp.close();
    } finally {
      held.close();
    }
  });

  it('a port out of range (thrown by listen() at once) is a ListenError too', async () => {
    const server = createServer();
    const error = await listenOn(server, { service: 'dashboard', port: 70000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ListenError);
    expect((error as ListenError).message).to.match(/^dashboard cannot start: Port 70000 cannot be opened: /);
  });

  it('names a privileged port and an address that is not of this host', () => {
    // the tests may run as root, where binding port 80 succeeds: the errno is given, the mapping is what is tested
    const denied = listenFailure(
      Object.assign(new Error('listen EACCES: permission denied 0.0.0.0:80'), { code: 'EACCES' }),
      { service: 'gateway', instance: 'gw', port: 80 },
    );
    expect(denied.message).to.equal(
      "gateway 'gw' cannot start: Port 80 needs privileges: ports below 1024 are reserved to root (EACCES); choose a Port from 1024 up",
    );
    const foreign = listenFailure(Object.assign(new Error('listen EADDRNOTAVAIL'), { code: 'EADDRNOTAVAIL' }), {
      service: 'interceptor',
      port: 8081,
      host: '192.0.2.1',
    });
    expect(foreign.target).to.deep.equal({ service: 'interceptor', parameter: 'IP', value: '192.0.2.1' });
    expect(foreign.withHint('try 127.0.0.1').message).to.equal(
      'interceptor cannot start: IP 192.0.2.1 is not an address of this host (EADDRNOTAVAIL); try 127.0.0.1',
    );
  });
});
