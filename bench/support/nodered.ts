/**
 * Node-RED (bench/peers) as the peer of the gateway: its own process on a free port, with a flow file
 * of the canonical shape `http in → function → http response` that answers a POSTed JSON body the way
 * the gateway and the raw node:http server do ({Code, Message, Data: <body>, List}). The editor and
 * admin API are off, so Node-RED serves only the flow.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../spec/adapters/ports.js';
import { peerVersion } from './peers.js';

export interface NodeRed {
  url: string;
  /** 'Node-RED 4.1.15', for naming the peer in the figures. */
  name: string;
  /** Its process, whose CPU it costs. */
  pid: number;
  stop(): Promise<void>;
}

const flow = (path: string): unknown[] => [
  { id: 'tab', type: 'tab', label: 'bench' },
  { id: 'in', type: 'http in', z: 'tab', url: path, method: 'post', wires: [['fn']] },
  {
    id: 'fn',
    type: 'function',
    z: 'tab',
    func: "msg.payload = { Code: 200, Message: 'Success', Data: msg.payload, List: [] };\nreturn msg;",
    outputs: 1,
    wires: [['out']],
  },
  { id: 'out', type: 'http response', z: 'tab', statusCode: '200', headers: {}, wires: [] },
];

/** Starts Node-RED serving POST `path`; resolves once the flow answers. */
export async function startNodeRed(script: string, path: string, body: string): Promise<NodeRed> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-bench-nodered-'));
  const port = await freePort();
  writeFileSync(join(dir, 'flows.json'), JSON.stringify(flow(path)));
  const settings = {
    uiHost: '127.0.0.1',
    uiPort: port,
    flowFile: 'flows.json',
    userDir: dir,
    httpAdminRoot: false,
    disableEditor: true,
    credentialSecret: false,
    logging: { console: { level: 'warn' } },
  };
  writeFileSync(join(dir, 'settings.js'), `module.exports = ${JSON.stringify(settings)};\n`);
  const child: ChildProcess = spawn(
    process.execPath,
    [script, '--settings', join(dir, 'settings.js'), '--userDir', dir],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const url = `http://127.0.0.1:${port}${path}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Node-RED exited with ${child.exitCode} before serving the flow`);
    const ok = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error('Node-RED did not serve the flow within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r).kill('SIGTERM'));
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, name: `Node-RED ${peerVersion('node-red')}`, pid: child.pid!, stop };
}
