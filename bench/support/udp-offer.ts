/**
 * UDP load for the syslog bench: datagrams offered at a fixed rate from a worker thread, so the
 * receivers under test have their event loop to themselves, as wrk runs beside the HTTP benches as
 * a child. When the bench sent from its own thread, the sends were most of that thread's work
 * (--cpu-prof of a 50,000 msg/s run: dgram's doSend 29% of the samples, the syslog service's whole
 * receive path 18%): the share the service forwarded then measured what the sends left it, and
 * swung with the machine's load (37% to 86% in runs of one commit) while the raw receiver, counting
 * only, kept 100%. The same sender serves both receivers, so the offered load is the same for each.
 */
import { Worker } from 'node:worker_threads';

/**
 * The worker's code: plain JavaScript run with `eval`, so the same worker starts whether the bench
 * runs compiled from dist/bench or as TypeScript under tsx (a worker of a .ts file does not get the
 * tsx hooks on Node 20). It sends `rate` datagrams per second for `seconds`, in 1 ms slices, then
 * waits 300 ms for the last ones to arrive, and answers how many it sent.
 */
const WORKER_SOURCE = `
const { createSocket } = require('node:dgram');
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ port, rate, seconds, payload }) => {
  const sock = createSocket('udp4');
  const total = rate * seconds;
  let sent = 0;
  const started = performance.now();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    while (sent < due) {
      sock.send(payload, port, '127.0.0.1');
      sent++;
    }
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 300));
  sock.close();
  parentPort.postMessage(sent);
});
`;

/** A sender thread; one offer at a time. */
export class UdpOfferer {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });

  /** Offers `rate` datagrams per second of `payload` to 127.0.0.1:`port` for `seconds`; resolves with how many were sent. */
  offer(port: number, rate: number, seconds: number, payload: Uint8Array): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const done = (sent: number): void => {
        this.worker.off('error', failed);
        resolve(sent);
      };
      const failed = (e: Error): void => {
        this.worker.off('message', done);
        reject(e);
      };
      this.worker.once('message', done);
      this.worker.once('error', failed);
      this.worker.postMessage({ port, rate, seconds, payload });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
