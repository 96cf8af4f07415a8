/**
 * UDP load for the syslog bench: datagrams offered at a fixed rate from a worker thread, so the
 * receivers under test have their event loop to themselves, as wrk runs beside the HTTP benches as
 * a child. When the bench sent from its own thread, the sends were most of that thread's work
 * (--cpu-prof of a 50,000 msg/s run: dgram's doSend 29% of the samples, the syslog service's whole
 * receive path 18%): the share the service forwarded then measured what the sends left it, and
 * swung with the machine's load (37% to 86% in runs of one commit) while the raw receiver, counting
 * only, kept 100%. The same sender serves both receivers, so the offered load is the same for each.
 * This file is both sides: imported, it starts a worker running itself.
 */
import { createSocket } from 'node:dgram';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';

interface Offer {
  port: number;
  rate: number;
  seconds: number;
  payload: Uint8Array;
}

/** Sends `rate` datagrams per second for `seconds`, in 1 ms slices; returns how many were sent. */
async function send({ port, rate, seconds, payload }: Offer): Promise<number> {
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
  // the last datagrams reach the receiver before the count is read
  await new Promise((r) => setTimeout(r, 300));
  sock.close();
  return sent;
}

if (!isMainThread) {
  const port = parentPort!;
  port.on('message', (offer: Offer) => void send(offer).then((sent) => port.postMessage(sent)));
}

/** A sender thread; one offer at a time. */
export class UdpOfferer {
  private readonly worker = new Worker(new URL(import.meta.url));

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
      this.worker.postMessage({ port, rate, seconds, payload } satisfies Offer);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
