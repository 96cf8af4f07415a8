/** Helpers of the Config page tests: a node run from a node file (in this process), with its console and a users file. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { passwdLine } from '../../../actors/auth/authenticate.js';
import { HiveNode } from '../../../node/node.js';
import { NodeFileControl, readNodeFile } from '../../../node/node-file-control.js';
import { plansOf } from '../../../node/node-plan.js';
import { tempDir } from '../../temp.js';
import { OPERATOR, basicHeader, csrfOf } from './helpers.js';

/** The secret of the file's httpclient (Headers is a secret parameter): it must never be shown. */
export const SECRET = 'Authorization: Bearer very-secret-1';

/** The node file: an echo (its ReplyCode as given) and an HTTP client whose Headers hold SECRET. */
export function nodeText(replyCode = 200, extra = ''): string {
  return `# the console test's node
services:
  - {service: echo, NAME: echo, ReplyCode: ${replyCode}}${extra}
  - service: httpclient
    NAME: client
    URL: http://127.0.0.1:9/x
    InterceptBefore: http://127.0.0.1:9/i
    Headers: "${SECRET}"
`;
}

export interface FileNode {
  node: HiveNode;
  base: string;
  file: string;
  dir: string;
}

/** Starts a node from `<dir>/node.yaml` (nodeText) as `hivenode run` does, with the console (read-only when asked). */
export async function startFileNode(opts: { readOnly?: boolean; text?: string } = {}): Promise<FileNode> {
  const dir = tempDir('hn-config-');
  const file = join(dir, 'node.yaml');
  const users = join(dir, 'users');
  writeFileSync(users, `${await passwdLine(OPERATOR.user, OPERATOR.password, 4)}\n`);
  writeFileSync(file, opts.text ?? nodeText());
  const read = readNodeFile(file);
  const node = await HiveNode.start({
    name: 'config-test',
    services: plansOf(read.file),
    source: { file, hash: read.hash },
    dashboardPort: 0,
    dashboardAccess: opts.readOnly ? {} : { users },
    logStream: new PassThrough(),
  });
  node.fileControl = new NodeFileControl(node, file, read);
  return { node, base: `http://127.0.0.1:${node.dashboard!.port}`, file, dir };
}

export interface Answer {
  status: number;
  json: Record<string, unknown> & { Message?: string; reason?: string; summary?: string; applied?: boolean };
}

/** POST /api/config/<action> as a script with an operator's credentials and the CSRF token (or `headers` instead). */
export async function configPost(
  base: string,
  action: string,
  body: unknown,
  headers?: Record<string, string>,
): Promise<Answer> {
  const h = headers ?? { ...(await operatorHeaders(base)) };
  const res = await fetch(`${base}/api/config/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...h },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Answer['json'] };
}

export async function operatorHeaders(base: string): Promise<Record<string, string>> {
  const { cookie, token } = await csrfOf(base);
  return { cookie, 'x-csrf-token': token, authorization: basicHeader() };
}
