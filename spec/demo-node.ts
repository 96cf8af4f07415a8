/** The demo node file (examples/demo.yaml) started in the test process on free ports, its dashboard on: the gateway on a port chosen before the start, as the HTTP client of the demo calls the gateway by its URL. */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { loadNodeFile } from '../config/node-file.js';
import { plansOf } from '../bin/plans.js';
import { HiveNode } from '../node/node.js';
import { tempDir } from './temp.js';
import { freePort } from './adapters/ports.js';

const ROOT = new URL('../', import.meta.url).pathname;

/** With `access` the console takes the demo file's dashboard Host and Users (else it is read-only). */
export async function startDemo(opts: { access?: boolean } = {}): Promise<HiveNode> {
  const file = loadNodeFile(join(ROOT, 'examples', 'demo.yaml'), {
    HIVENODE_DEMO_PORT: String(await freePort()),
    HIVENODE_DASHBOARD_PORT: '0',
    HIVENODE_SYSLOG_PORT: String(await freePort()),
    HIVENODE_DEMO_DB: join(tempDir('hn-dash-db-'), 'demo.sqlite'),
    HIVENODE_DEMO_SYSLOG_FILE: join(tempDir('hn-dash-syslog-'), 'syslog.jsonl'),
    HIVENODE_DEMO_QUEUE: tempDir('hn-dash-queue-'),
    HIVENODE_DEMO_FLOW: tempDir('hn-dash-flow-'),
  });
  const cwd = process.cwd();
  process.chdir(ROOT);
  try {
    const plans = plansOf(file).map((p) =>
      p.kind === 'queue'
        ? { ...p, layers: [...p.layers, { source: 'test', values: [['PersistPath', ''] as const] }] }
        : p,
    );
    const access =
      opts.access && file.dashboardAccess
        ? {
            dashboardAccess: {
              ...file.dashboardAccess,
              ...(file.dashboardAccess.users ? { users: join(ROOT, file.dashboardAccess.users) } : {}),
            },
          }
        : {};
    return await HiveNode.start({
      services: plans,
      dashboardPort: 0,
      logStream: new PassThrough(),
      name: file.name,
      ...access,
    });
  } finally {
    process.chdir(cwd);
  }
}
