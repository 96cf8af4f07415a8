import { expect } from 'chai';
import { healthOf } from '../../../actors/gateway/health.js';
import { Readiness } from '../../../actors/service/readiness.js';

describe('node readiness', () => {
  it('is ready only once every planned service has started, whatever the order', () => {
    const r = new Readiness(['gw', 'sql', 'q']);
    expect(r.ready).to.equal(false);
    expect(r.pending()).to.deep.equal(['gw', 'sql', 'q']);
    r.started('gw');
    expect(r.pending()).to.deep.equal(['sql', 'q']);
    r.started('q');
    expect(r.ready).to.equal(false);
    expect(r.pending()).to.deep.equal(['sql']);
    r.started('sql');
    expect(r.ready).to.equal(true);
    expect(r.pending()).to.deep.equal([]);
  });

  it('refuses a service it was not told about, or one started twice', () => {
    const r = new Readiness(['gw']);
    expect(() => r.started('other')).to.throw("service 'other' is not one the node is starting");
    r.started('gw');
    expect(() => r.started('gw')).to.throw("service 'gw' is not one the node is starting");
  });

  it('whenReady resolves when the last service has started, not before (at once for a node of none)', async () => {
    const r = new Readiness(['gw', 'sql']);
    let resolved = false;
    void r.whenReady().then(() => (resolved = true));
    r.started('gw');
    await Promise.resolve();
    expect(resolved).to.equal(false);
    r.started('sql');
    await r.whenReady();
    expect(resolved).to.equal(true);
    await new Readiness([]).whenReady();
  });

  it('a node of one service is ready once that service has started', () => {
    const r = new Readiness(['gateway-1']);
    r.started('gateway-1');
    expect(r.ready).to.equal(true);
  });
});

describe('gateway health answer', () => {
  const ready = new Readiness([]);
  const starting = new Readiness(['gw', 'q']);
  starting.started('gw');

  it('200 ok when connected, not draining and every service started', () => {
    expect(healthOf({ hiveConnected: true, draining: false, readiness: ready })).to.deep.equal({
      code: 200,
      body: { status: 'ok', hive: 'connected' },
    });
  });

  it('503 starting, naming the services still starting', () => {
    expect(healthOf({ hiveConnected: true, draining: false, readiness: starting })).to.deep.equal({
      code: 503,
      body: { status: 'starting', hive: 'connected', starting: ['q'] },
    });
  });

  it('503 unavailable when the hive is down or the gateway drains, before readiness is considered', () => {
    expect(healthOf({ hiveConnected: false, draining: false, readiness: starting })).to.deep.equal({
      code: 503,
      body: { status: 'unavailable', hive: 'disconnected' },
    });
    expect(healthOf({ hiveConnected: true, draining: true, readiness: ready })).to.deep.equal({
      code: 503,
      body: { status: 'unavailable', hive: 'connected' },
    });
  });
});
