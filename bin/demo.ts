/**
 * `hivenode demo`: runs examples/demo.yaml on the embedded hive and shows a few calls through it.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { loadNodeFile } from '../config/node-file.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import type { ListenError } from '../protocol/errors.js';
import type { HiveNode } from '../node/node.js';
import { PACKAGE_ROOT } from './package-info.js';
import { exitOnConfigError, runNode } from './run-node.js';
import { plansOf } from './plans.js';

/** The user's name for the demo's state directory: each user of a machine has a demo of their own. */
function userName(): string {
  try {
    return userInfo().username.replace(/[^\w.-]/g, '_') || String(process.getuid?.() ?? 'user');
  } catch {
    // no passwd entry for the uid (some containers)
    return String(process.getuid?.() ?? 'user');
  }
}

/**
 * Where the demo keeps what it writes (the SQLite database, the queue's store, the syslog record), one
 * directory per user, so runs of two users do not share a queue and `--fresh` removes exactly it.
 */
const DEMO_DIR = process.env.HIVENODE_DEMO_DIR ?? join(tmpdir(), `hivenode-demo-${userName()}`);
/** Where the demo's echo service 'syslog-received' records every syslog message the demo receives. */
const DEMO_SYSLOG_FILE = process.env.HIVENODE_DEMO_SYSLOG_FILE ?? join(DEMO_DIR, 'syslog.jsonl');

async function showCalls(node: HiveNode): Promise<void> {
  const show = async (
    title: string,
    channel: string,
    operation: string,
    data: Record<string, string[]>,
  ): Promise<void> => {
    const result = await node.hive.call(
      channel,
      makeMessage({ Class: 'demo', Operation: operation, Data: mapOf(data) }),
      5_000,
    );
    console.log(`\n${title}\n  call '${channel}' ${operation} ${JSON.stringify(data)}\n  → ${JSON.stringify(result)}`);
  };
  await show('An echo service answers with the Data it received:', 'echo', 'call', { greeting: ['hello', 'hive'] });
  await show('A channel nobody listens on answers 404 at once:', 'nobody-here', 'call', {});
  await show('Template storage lists the hive:// templates it serves:', 'DefaultStorageChannel', 'list', {});
  const gateway = node.services.find((s) => s.kind === 'gateway');
  if (gateway) {
    const port = gateway.running.status().port as number;
    const auth = `Basic ${Buffer.from('demo:hivenode-demo').toString('base64')}`;
    const res = await fetch(`http://127.0.0.1:${port}/echo/hello`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: ['world'] }),
    });
    const viaClient = await node.hive.call(
      'web',
      makeMessage({ Data: mapOf({ sent: ['by the HTTP client'] }) }),
      5_000,
    );
    console.log(
      `\nThe HTTP client service sends each message as a request (here to the demo gateway):\n  call 'web' {"sent":["by the HTTP client"]}\n  → Code ${viaClient.Code}, upstream status ${viaClient.Data.status?.[0]}, body ${viaClient.Data.body?.[0]}`,
    );
    console.log(
      `\nThe gateway (strict mode, user demo) turns HTTP into hive calls:\n  curl -u demo:hivenode-demo http://127.0.0.1:${port}/echo/hello -d '{"name":["world"]}'\n  → HTTP ${res.status} ${await res.text()}`,
    );
    const post = curlThrough(port, 'demo:hivenode-demo');
    console.log(
      `\nThe SQL service (embedded SQLite, one instance per statement) behind the same gateway:\n${(await post('/sql/select', { name: ['A%'] })).shown}\n${(await post('/sql/raw', { city: ['%'] })).shown}`,
    );
    await showQueue(post);
    await showFlow(post);
    const viewer = curlThrough(port, 'viewer:viewer-demo');
    console.log(
      `\nAuthorization per route (Access, Groups): user viewer may read, not write:\n${(await viewer('/sql/select', { name: ['A%'] })).shown}\n${(await viewer('/sql/insert', { data_name: ['Eve'], data_city: ['Oslo'] })).shown}`,
    );
  }
  if (node.dashboard) {
    console.log(
      `\nThe operator console (in a browser): http://127.0.0.1:${node.dashboard.port}/ — live charts; /flow the wiring above as a graph; /queues/queue the entries by state (search, replay a dead one with edited Data, purge, pause); /flows/orders the flow's runs, each run's steps as a waterfall (replay a failed one with edited Input, cancel); /journal crashes and actions. Sign in as ops, password hivenode-console, to act.`,
    );
  }
  const syslog = node.services.find((s) => s.kind === 'syslog')?.running.status();
  if (syslog?.udpPort !== undefined) {
    console.log(
      `\nThe syslog receiver (UDP and TCP, RFC 5424 or RFC 3164) records each message it receives in ${DEMO_SYSLOG_FILE}:\n  logger -n 127.0.0.1 -P ${String(syslog.udpPort)} -d "hello"\n  tail -n 1 ${DEMO_SYSLOG_FILE}`,
    );
  }
}

/** A POST through the demo gateway: the answer's Data, and the curl line with its answer to show. */
type GatewayPost = (
  path: string,
  body: Record<string, string[]>,
) => Promise<{ data: Record<string, string[]>; shown: string }>;

function curlThrough(port: number, credentials: string): GatewayPost {
  const auth = `Basic ${Buffer.from(credentials).toString('base64')}`;
  return async (path, body) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    const data = (JSON.parse(text) as { Data?: Record<string, string[]> }).Data ?? {};
    return {
      data,
      shown: `  curl -u ${credentials} http://127.0.0.1:${port}${path} -d '${JSON.stringify(body)}'\n  → HTTP ${r.status} ${text}`,
    };
  };
}

/**
 * The queue's operations through the gateway (controls as `_`-prefixed Data fields): a deduplicated
 * enqueue, a delayed one, a dead entry listed by reason and replayed to another channel, a cron
 * schedule, and the per-state counts. The demo's store outlives a run, so its idempotency key and
 * schedule name are this run's own, and the schedule is removed again.
 */
async function showQueue(post: GatewayPost): Promise<void> {
  const run = Date.now().toString(36);
  const shown: string[] = [];
  const call = async (body: Record<string, string[]>): Promise<Record<string, string[]>> => {
    const r = await post('/queue/action', body);
    shown.push(r.shown);
    return r.data;
  };
  await call({ '_idempotency-key': [`order-${run}`], item: ['once'] });
  await call({ '_idempotency-key': [`order-${run}`], item: ['once'] });
  await call({ _delay: ['2s'], item: ['later'] });
  const dead = await call({ _channel: ['nobody-here'], _requeue_count: ['0'], item: ['lost'] });
  // a channel nobody listens on answers 404 at once; wait (at most 3 s) until the entry is dead
  for (
    let tries = 0;
    tries < 30 &&
    (await post('/queue/action', { _command: ['fetch'], _key: dead.keys ?? [] })).data.state?.[0] !== 'dead';
    tries++
  )
    await new Promise((r) => setTimeout(r, 100));
  // a channel outside the queue's AllowedChannels (examples/demo.yaml) is refused whoever asks: 403, nothing stored
  await call({ _channel: ['exec'], item: ['not for exec'] });
  await call({ _command: ['list'], _state: ['dead'], _groupby: ['deadletter_reason'] });
  await call({ _command: ['replay'], _key: dead.keys ?? [], _channel: ['echo'], item: ['found'] });
  await call({ _command: ['schedule'], _schedule_name: [`tick-${run}`], _cron: ['*/10 * * * * *'], item: ['tick'] });
  await call({ _command: ['unschedule'], _schedule_name: [`tick-${run}`] });
  await call({ _command: ['status'] });
  console.log(
    `\nThe durable queue: an idempotency key sent twice makes one entry, a delayed entry, a dead entry (no listener) listed by reason and replayed to echo, a channel outside AllowedChannels refused, a cron schedule, per-state counts:\n${shown.join('\n')}`,
  );
}

/**
 * The flow `orders` through the gateway: a run sent to the carrier that refuses fails at step ship,
 * is found by `list`, replayed with its Input edited to another carrier, and succeeds from ship on
 * (check is not run again: its kept Result stands).
 */
async function showFlow(post: GatewayPost): Promise<void> {
  const shown: string[] = [];
  const call = async (body: Record<string, string[]>): Promise<Record<string, string[]>> => {
    const r = await post('/flow/run', body);
    shown.push(r.shown);
    return r.data;
  };
  const order = `o-${Date.now().toString(36)}`;
  await call({ order: [order], carrier: ['carrier-down'] });
  const failed = await call({ _command: ['list'], _state: ['failed'], _field: ['order'], _value: [order] });
  const key = failed.objects ?? [];
  await call({ _command: ['replay'], _key: key, carrier: ['echo'] });
  // the replay answers at once; the run goes on from ship (at most 3 s here)
  for (
    let tries = 0;
    tries < 30 && (await post('/flow/run', { _command: ['fetch'], _key: key })).data.state?.[0] !== 'succeeded';
    tries++
  )
    await new Promise((r) => setTimeout(r, 100));
  await call({ _command: ['fetch'], _key: key });
  console.log(
    `\nA flow (steps check → ship, every Result kept): a run whose carrier refuses fails at ship, is listed, replayed with its Input edited and succeeds from ship on:\n${shown.join('\n')}`,
  );
}

/** The variables examples/demo.yaml takes its ports from, and their defaults. */
const PORT_VARIABLES = {
  gateway: ['HIVENODE_DEMO_PORT', '8080'],
  syslog: ['HIVENODE_SYSLOG_PORT', '10514'],
  dashboard: ['HIVENODE_DASHBOARD_PORT', '8099'],
} as const;

/** A demo port that cannot open is fixed through its variable, not by editing the demo's node file. */
function demoPortHint(e: ListenError): string | undefined {
  const variable = Object.hasOwn(PORT_VARIABLES, e.target.service)
    ? PORT_VARIABLES[e.target.service as keyof typeof PORT_VARIABLES][0]
    : undefined;
  if (variable === undefined || e.target.parameter !== 'Port') return undefined;
  return `the demo takes it from ${variable}: run it with a free port, ${variable}=<port> hivenode demo`;
}

export async function runDemo(once: boolean, fresh = false): Promise<void> {
  let file;
  const defaults = Object.fromEntries(Object.values(PORT_VARIABLES));
  // the demo's own directory only: a path given by a variable is the user's to keep
  if (fresh) rmSync(DEMO_DIR, { recursive: true, force: true });
  mkdirSync(DEMO_DIR, { recursive: true, mode: 0o700 });
  try {
    file = loadNodeFile(join(PACKAGE_ROOT, 'examples', 'demo.yaml'), {
      ...defaults,
      HIVENODE_DEMO_DB: join(DEMO_DIR, 'demo.sqlite'),
      HIVENODE_DEMO_SYSLOG_FILE: DEMO_SYSLOG_FILE,
      HIVENODE_DEMO_QUEUE: join(DEMO_DIR, 'queue'),
      HIVENODE_DEMO_FLOW: join(DEMO_DIR, 'flows'),
      ...process.env,
    });
  } catch (e) {
    exitOnConfigError(e);
  }
  console.log(
    `hivenode demo: state in ${DEMO_DIR}${fresh ? ' (started fresh)' : ' (kept between runs; hivenode demo --fresh starts clean)'}`,
  );
  process.chdir(PACKAGE_ROOT);
  const node = await runNode(
    {
      name: file.name,
      services: plansOf(file),
      ...(file.dashboardPort === undefined ? {} : { dashboardPort: file.dashboardPort }),
      ...(file.dashboardAccess === undefined ? {} : { dashboardAccess: file.dashboardAccess }),
    },
    { onStarted: showCalls, listenHint: demoPortHint },
  );
  if (once) {
    await node.stop(5_000);
    process.exit(0);
  }
  console.log('\nThe demo node keeps running; press Ctrl-C to stop it.');
}
