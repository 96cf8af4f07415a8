import { expect } from 'chai';
import { NodeMetrics } from '../../../node/dashboard/metrics.js';

describe('NodeMetrics: service figures', () => {
  it('exports numeric figures, and tables of numbers by key with the key as a label (notAllowedFrom per source)', async () => {
    const m = new NodeMetrics();
    let status: Record<string, unknown> = {
      received: 4,
      notAllowed: 3,
      notAllowedFrom: { '127.0.0.2': 2, other: 1 },
      sendError: 'text is not a figure',
      mixed: { a: 1, b: 'x' },
      empty: {},
    };
    m.attach({ hive: () => ({}), restarts: () => [], services: () => [{ kind: 'syslog', name: 'rx', status }] });
    const text = await m.text();
    expect(text).to.contain('hivenode_service_figure{service="rx",kind="syslog",figure="notAllowed"} 3');
    expect(text).to.contain(
      'hivenode_service_figure_by_key{service="rx",kind="syslog",figure="notAllowedFrom",key="127.0.0.2"} 2',
    );
    expect(text).to.contain(
      'hivenode_service_figure_by_key{service="rx",kind="syslog",figure="notAllowedFrom",key="other"} 1',
    );
    expect(text).to.not.match(/figure="(mixed|empty|sendError)"/);
    // a source no longer named (folded into other) is gone from the next scrape
    status = { notAllowedFrom: { other: 3 } };
    expect(await m.text()).to.not.contain('key="127.0.0.2"');
  });
});
