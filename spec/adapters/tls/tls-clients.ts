/**
 * Real TLS clients for the gateway's HTTPS tests: curl and `openssl s_client` run as child processes
 * (asynchronously: the gateway under test may answer on this process's event loop), Node's own https
 * client for loads, and a fresh server certificate signed by the test CA (a renewal, for reloads).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { certPath, certText } from '../../certs.js';
import { tempDir } from '../../temp.js';

export interface Run {
  /** The exit code (curl's 0 = success, 35 = handshake failed, 52 = empty reply, 56 = receive failure). */
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { encoding: 'utf8', timeout: 15_000 }, (err, stdout, stderr) => {
      const code =
        err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1;
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

/** curl against https://localhost:<port><path> (resolved to 127.0.0.1, trusting the test CA), verbose; `url` replaces the address. */
export function curl(
  port: number,
  path: string,
  args: string[] = [],
  url = `https://localhost:${port}${path}`,
): Promise<Run> {
  return run('curl', [
    '-sS',
    '-v',
    '--max-time',
    '10',
    '--cacert',
    certPath('ca.pem'),
    '--resolve',
    `localhost:${port}:127.0.0.1`,
    ...args,
    url,
  ]);
}

/** curl's arguments for a client certificate of the test certificates ('client-alice', 'client-expired', 'other-client' ...). */
export const clientCert = (name: string): string[] => [
  '--cert',
  certPath(`${name}.pem`),
  '--key',
  certPath(`${name}.key`),
];

/** curl's arguments for a JSON POST. */
export const postJson = (body: string): string[] => ['-H', 'content-type: application/json', '--data-binary', body];

/** `openssl s_client` against 127.0.0.1:<port> with the given options; stdin closed at once. */
export function sClient(port: number, args: string[]): Promise<Run> {
  return run('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...args]);
}

/** The serial number of the certificate a new TLS connection to the port is shown (upper-case hex). */
export function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', servername: 'localhost', ca: certText('ca.pem') }, () => {
      const serial = socket.getPeerCertificate().serialNumber.toUpperCase();
      socket.end();
      resolve(serial);
    });
    socket.once('error', reject);
  });
}

/**
 * A renewed server certificate (CN localhost, SAN localhost and 127.0.0.1) and its key, signed by the
 * test CA, written to `<dir>/renewed.pem|key`; returns their paths and the certificate's serial.
 */
export async function renewedServerPair(): Promise<{ cert: string; key: string; serial: string }> {
  const dir = tempDir('hn-renewed-');
  const [cert, key, csr, ext] = ['renewed.pem', 'renewed.key', 'renewed.csr', 'renewed.ext'].map((f) =>
    join(dir, f),
  ) as [string, string, string, string];
  writeFileSync(
    ext,
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n',
  );
  const steps: Array<[string, string[]]> = [
    [
      'openssl',
      [
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-sha256',
        '-keyout',
        key,
        '-out',
        csr,
        '-subj',
        '/CN=localhost',
      ],
    ],
    [
      'openssl',
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        certPath('ca.pem'),
        '-CAkey',
        certPath('ca.key'),
        '-CAcreateserial',
        '-CAserial',
        join(dir, 'ca.srl'),
        '-days',
        '30',
        '-sha256',
        '-extfile',
        ext,
        '-out',
        cert,
      ],
    ],
  ];
  for (const [command, args] of steps) {
    const r = await run(command, args);
    if (r.code !== 0) throw new Error(`${command} ${args[0]} failed: ${r.stderr}`);
  }
  const serial = await run('openssl', ['x509', '-in', cert, '-noout', '-serial']);
  return {
    cert,
    key,
    serial: serial.stdout
      .trim()
      .replace(/^serial=/, '')
      .toUpperCase(),
  };
}

/** Puts a file in place the way a renewal tool does: written beside it, then renamed over it. */
export function replaceFile(from: string, to: string): void {
  copyFileSync(from, `${to}.new`);
  renameSync(`${to}.new`, to);
}

/** One HTTPS POST from Node (agent: keep-alive pool, or false for a new connection); its status and body. */
export function httpsPost(
  port: number,
  path: string,
  body: string,
  agent: Agent | false,
  extra: { cert?: string; key?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        servername: 'localhost',
        ca: certText('ca.pem'),
        agent,
        headers: { 'content-type': 'application/json' },
        ...extra,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
