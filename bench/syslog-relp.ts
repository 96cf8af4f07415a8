/**
 * RELP receive into a durable SQLite queue against plain TCP into the same queue, in one run (README,
 * Syslog: reliable delivery): the same RFC 5424 line sent MESSAGES times over one connection each
 * way. Plain TCP (octet counting) is fire-and-forget into the queue; RELP answers each frame once the
 * queue has stored it (an acknowledged hand-over), with a window of 128 frames as rsyslog's omrelp
 * keeps. A round ends when the queue holds every message (TCP) or every frame is answered 200 (RELP:
 * answered means stored). Target: RELP ≥ 0.5 of plain TCP's rate. TCP with TCPAck (each message
 * handed over acknowledged, the connection not read while 128 wait) is measured beside them, with no
 * target: what the backpressure costs. Medians of interleaved rounds;
 * the queue is paused (it stores, delivers nothing) and cleared between rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { frameOctetCounted } from '../actors/syslog/format.js';
import { RelpDecoder, encodeRelpFrame, nextTxnr } from '../actors/syslog/relp-frame.js';
import { ourOffers } from '../actors/syslog/relp-offers.js';
import { HiveNode } from '../node/node.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { fmt, interleavedAll, report } from './lib.js';

const MESSAGES = Number(process.env.BENCH_RELP_MESSAGES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WINDOW = 128;
const line =
  '<134>1 2024-03-15T11:22:33.123Z web01 nginx 4242 ACCESS [meta@1 ip="10.0.0.1"] GET /index.html 200 1234 "-" "curl/8.0"';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sends `n` syslog frames over one RELP session with a window; resolves once every one is answered 200. */
async function relpSend(port: number, n: number): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  const decoder = new RelpDecoder(1 << 20);
  const data = Buffer.from(line);
  let txnr = 1;
  let sent = 0;
  let answered = 0;
  let open = false;
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      socket.cork();
      while (open && sent < n && sent - answered < WINDOW) {
        socket.write(encodeRelpFrame(txnr, 'syslog', data));
        txnr = nextTxnr(txnr);
        sent++;
      }
      socket.uncork();
    };
    socket.on('data', (chunk: Buffer) => {
      for (const f of decoder.push(chunk)) {
        if (!f.data.subarray(0, 3).equals(Buffer.from('200')))
          return reject(new Error(`RELP answer ${f.txnr}: ${f.data.toString()}`));
        if (!open) open = true;
        else answered++;
      }
      if (answered === n) resolve();
      else pump();
    });
    socket.once('error', reject);
    socket.write(encodeRelpFrame(txnr, 'open', ourOffers()));
    txnr = nextTxnr(txnr);
  });
  socket.destroy();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-bench-relp-'));
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'queue',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'q'],
              ['PersistPath', dir],
              ['StartPaused', 'true'],
            ],
          },
        ],
      },
      {
        kind: 'syslog',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'rx'],
              ['IP', '127.0.0.1'],
              ['Port', '0'],
              ['TCP', 'true'],
              ['RELP', 'true'],
              ['RELPPort', '0'],
              ['OUTPUTCHANNEL', 'q'],
              ['Format', 'RFC5424'],
            ],
          },
        ],
      },
      {
        kind: 'syslog',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'rx-ack'],
              ['IP', '127.0.0.1'],
              ['Port', '0'],
              ['TCP', 'true'],
              ['TCPAck', 'true'],
              ['OUTPUTCHANNEL', 'q'],
              ['Format', 'RFC5424'],
            ],
          },
        ],
      },
    ],
  });
  const rx = node.services.find((s) => s.name === 'rx')!.running.status();
  const [tcpPort, relpPort] = [rx.tcpPort as number, rx.relpPort as number];
  const ackPort = node.services.find((s) => s.name === 'rx-ack')!.running.status().tcpPort as number;
  const queueSize = (): number => node.services.find((s) => s.name === 'q')!.running.status().size as number;
  const clear = async (): Promise<void> => {
    const r = await node.hive.call(
      'q',
      makeMessage({ Class: 'queue', Operation: 'action', Control: mapOf({ command: ['clear'] }), Data: mapOf({}) }),
      60_000,
    );
    if (r.Code !== 200) throw new Error(`clear: ${r.Code} ${r.Message}`);
  };

  const tcpRound = (port: number) => async (): Promise<number> => {
    await clear();
    const started = performance.now();
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const frame = frameOctetCounted(line);
    for (let i = 0; i < MESSAGES; i++) if (!sock.write(frame)) await new Promise((r) => sock.once('drain', r));
    while (queueSize() < MESSAGES && performance.now() - started < 120_000) await sleep(2);
    const rate = queueSize() / ((performance.now() - started) / 1000);
    sock.destroy();
    return rate;
  };
  const relpRound = async (): Promise<number> => {
    await clear();
    const started = performance.now();
    await relpSend(relpPort, MESSAGES);
    const rate = MESSAGES / ((performance.now() - started) / 1000);
    if (queueSize() !== MESSAGES)
      throw new Error(`RELP answered ${MESSAGES} frames but the queue holds ${queueSize()}`);
    return rate;
  };

  console.log(
    `${fmt(MESSAGES)} × one ${line.length}-byte RFC 5424 line per round over one connection into a paused SQLite queue; rounds ${ROUNDS} (median), interleaved`,
  );
  const [tcp, relp, acked] = (await interleavedAll(ROUNDS, [tcpRound(tcpPort), relpRound, tcpRound(ackPort)])) as [
    number,
    number,
    number,
  ];
  console.log(
    `plain TCP (octet counting, fire-and-forget): ${fmt(tcp)} msg/s stored; RELP (window ${WINDOW}, answered once stored): ${fmt(relp)} msg/s, ratio ${(relp / tcp).toFixed(2)} (target ≥ 0.5); TCP with TCPAck (window ${WINDOW}): ${fmt(acked)} msg/s, ratio ${(acked / tcp).toFixed(2)}`,
  );
  report({
    figure: `syslog RELP receive into a SQLite queue (window ${WINDOW}, each message answered once stored), one connection`,
    hivenode: relp,
    unit: 'msg/s',
    baseline: 'plain TCP (octet counting) into the same queue, fire-and-forget',
    baselineValue: tcp,
    target: '≥ 0.5',
    met: relp / tcp >= 0.5,
  });
  report({
    figure: `syslog TCP with TCPAck into a SQLite queue (window ${WINDOW}: not read while the queue is behind), one connection`,
    hivenode: acked,
    unit: 'msg/s',
    baseline: 'plain TCP (octet counting) into the same queue, fire-and-forget',
    baselineValue: tcp,
  });
  await node.stop(5_000);
  rmSync(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
