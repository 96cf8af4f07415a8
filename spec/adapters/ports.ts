/** Free ports on 127.0.0.1 for private test servers, and waiting for one to listen (shared by the adapter test helpers). */
import type { ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { sleep } from '../support/wait.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once `what` accepts TCP connections on host:port (127.0.0.1); fails after `ms`, or at once when `child` has exited. */
export async function waitForPort(
  port: number,
  ms: number,
  what: string,
  child?: ChildProcess,
  host = '127.0.0.1',
): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before listening`);
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, host);
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`${what} did not listen on ${port} within ${ms} ms`);
    await sleep(50);
  }
}
