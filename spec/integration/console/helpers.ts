/** Helpers of the console tests: a node with a queue, an echo target that records, and a users file; requests with the console's checks. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { passwdLine } from '../../../actors/auth/authenticate.js';
import { HiveNode } from '../../../node/node.js';
import { tempDir } from '../../temp.js';

export const OPERATOR = { user: 'ops', password: 'ops-secret' };
export const basicHeader = (user = OPERATOR.user, password = OPERATOR.password): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export interface ConsoleNode {
  node: HiveNode;
  base: string;
  /** The RecordFile of the echo service 'recorder', the queue's default target. */
  record: string;
}

/**
 * A node: echo 'recorder' (RecordFile), queue 'jobs' delivering to it (no retries, done entries kept
 * an hour), and the console with a users file holding OPERATOR unless `readOnly`; `queue` adds or
 * overrides parameters of the queue.
 */
export async function startConsoleNode(
  opts: { readOnly?: boolean; host?: string; hosts?: string; keepDone?: boolean; queue?: Array<[string, string]> } = {},
): Promise<ConsoleNode> {
  const dir = tempDir('hn-console-');
  const record = join(dir, 'record.jsonl');
  const users = join(dir, 'users');
  writeFileSync(users, `${await passwdLine(OPERATOR.user, OPERATOR.password, 4)}\n`);
  const node = await HiveNode.start({
    name: 'console-test',
    services: [
      {
        kind: 'echo',
        layers: [
          {
            source: 'test',
            values: [
              ['NAME', 'recorder'],
              ['RecordFile', record],
            ],
          },
        ],
      },
      {
        kind: 'queue',
        layers: [
          {
            source: 'test',
            values: [
              ['NAME', 'jobs'],
              ['PersistPath', join(dir, 'store')],
              ['DefaultChannel', 'recorder'],
              ['AllowedChannels', 'recorder,nobody-here,nobody-either'],
              ['DefaultRequeueCount', '0'],
              ['DefaultRequeueTime', '1'],
              ['DoneRetention', opts.keepDone === false ? '0' : '1h'],
              ...(opts.queue ?? []),
            ],
          },
        ],
      },
    ],
    dashboardPort: 0,
    dashboardAccess: {
      ...(opts.readOnly ? {} : { users }),
      ...(opts.host ? { host: opts.host } : {}),
      ...(opts.hosts ? { hosts: opts.hosts } : {}),
    },
    logStream: new PassThrough(),
  });
  return { node, base: `http://127.0.0.1:${node.dashboard!.port}`, record };
}

/** The CSRF cookie and token a script gets from GET /api/csrf. */
export async function csrfOf(base: string): Promise<{ cookie: string; token: string }> {
  const res = await fetch(`${base}/api/csrf`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { token } = (await res.json()) as { token: string };
  return { cookie, token };
}

/** POST /api/queues/jobs/<action> as a script: JSON body, with what `with` gives (credentials, origin, CSRF). */
export async function postAction(
  base: string,
  action: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  json: { Code: number; Message: string; Data?: Record<string, string[]> };
  headers: Headers;
}> {
  const res = await fetch(`${base}/api/queues/jobs/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as never, headers: res.headers };
}
