/**
 * Syslog receive rate: UDP datagrams offered at fixed rates to (a) the syslog service (receive →
 * parse → emit to a listening service on the embedded hive) and (b) a raw node:dgram receiver that
 * only counts, in the same run; prints the share received by each and the ratio (targets: >= 0.8 of
 * raw, zero loss at 20,000 msg/s); each share is the median of BENCH_ROUNDS interleaved rounds. Then
 * the TCP rate (octet-counted RFC 5424 frames on one connection) against a private rsyslogd (imtcp →
 * omfile) in the same run, interleaved. The datagrams are sent from a worker thread
 * (support/udp-offer.ts: sent from the receivers' own thread, the sends took most of it).
 */
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { frameOctetCounted } from '../actors/syslog/format.js';
import { HiveNode } from '../node/node.js';
import { interleaved, interleavedAll, report } from './lib.js';
import { haveRsyslogd, startBenchRsyslog } from './support/rsyslog.js';
import { UdpOfferer } from './support/udp-offer.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RATES = (process.env.BENCH_RATES ?? '1000,20000,50000').split(',').map(Number);
const TCP_FRAMES = Number(process.env.BENCH_TCP_FRAMES ?? 100_000);
const line =
  '<134>1 2024-03-15T11:22:33.123Z web01 nginx 4242 ACCESS [meta@1 ip="10.0.0.1"] GET /index.html 200 1234 "-" "curl/8.0"';
const payload = Buffer.from(line);

async function main(): Promise<void> {
  const raw = createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  let rawCount = 0;
  raw.on('message', () => rawCount++);
  await new Promise<void>((r) => raw.bind(0, '127.0.0.1', () => r()));
  const rawPort = raw.address().port;
  const sender = new UdpOfferer();
  const offer = (port: number, rate: number): Promise<number> => sender.offer(port, rate, SECONDS, payload);

  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'logs']] }] },
      {
        kind: 'syslog',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'rx'],
              ['IP', '127.0.0.1'],
              ['Port', '0'],
              ['UDP', 'true'],
              ['TCP', 'true'],
              ['OUTPUTCHANNEL', 'logs'],
              ['Format', 'RFC5424'],
            ],
          },
        ],
      },
    ],
  });
  const rx = node.services.find((s) => s.kind === 'syslog')!;
  const status = (): Record<string, unknown> => rx.running.status();
  const udpPort = status().udpPort as number;
  const forwarded = (): number => node.services.find((s) => s.kind === 'echo')!.running.status().handled as number;

  console.log(
    `UDP, ${SECONDS} s per rate and round, one ${payload.length}-byte RFC 5424 line, rounds ${ROUNDS} (median), interleaved`,
  );
  for (const rate of RATES) {
    let lost = 0;
    const rawRound = async (): Promise<number> => {
      rawCount = 0;
      const sent = await offer(rawPort, rate);
      return rawCount / sent;
    };
    const serviceRound = async (): Promise<number> => {
      const before = forwarded();
      const sent = await offer(udpPort, rate);
      await new Promise((r) => setTimeout(r, 500));
      const got = forwarded() - before;
      lost = Math.max(lost, sent - got);
      return got / sent;
    };
    const share = await interleaved(ROUNDS, rawRound, serviceRound);
    console.log(
      `offered ${String(rate).padStart(6)}/s: raw dgram received ${(share.a * 100).toFixed(1)}%, syslog service forwarded ${(share.b * 100).toFixed(1)}% (most lost in a round ${lost}), ratio ${(share.b / share.a).toFixed(2)} (targets: >= 0.80; zero loss at 20,000/s)`,
    );
    const zeroLossTarget =
      rate <= 20_000
        ? { target: '≥ 0.8, zero loss', met: share.b / share.a >= 0.8 && lost === 0 }
        : { target: '≥ 0.8', met: share.b / share.a >= 0.8 };
    report({
      figure: `syslog UDP, ${rate.toLocaleString('en')} msg/s offered: share received, parsed and forwarded`,
      hivenode: share.b * 100,
      unit: '%',
      baseline: 'raw node:dgram receiver (counts only)',
      baselineValue: share.a * 100,
      ...zeroLossTarget,
    });
  }

  // TCP: the same frames over one connection into the syslog service and into a private rsyslogd
  // (imtcp → omfile, its text only), interleaved rounds of TCP_FRAMES each
  const tcpPort = status().tcpPort as number;
  const frame = frameOctetCounted(line);
  // frames written 1,000 to a write: the client shares this process's thread with the service, and
  // 100,000 small writes cost it more than the parsing being measured (rsyslogd runs apart)
  const BATCH = 1_000;
  const batch = Buffer.concat(Array.from({ length: BATCH }, () => frame));
  const sendFrames = async (port: number, n: number): Promise<void> => {
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    for (let i = 0; i < n; i += BATCH) {
      const chunk = n - i >= BATCH ? batch : batch.subarray(0, (n - i) * frame.length);
      if (!sock.write(chunk)) await new Promise((r) => sock.once('drain', r));
    }
    await new Promise<void>((r) => sock.end(r));
  };
  let tcpLost = 0;
  const serviceTcpRound = async (): Promise<number> => {
    const before = forwarded();
    const started = performance.now();
    await sendFrames(tcpPort, TCP_FRAMES);
    while (forwarded() - before < TCP_FRAMES && performance.now() - started < 60_000)
      await new Promise((r) => setTimeout(r, 2));
    const got = forwarded() - before;
    tcpLost = Math.max(tcpLost, TCP_FRAMES - got);
    return got / ((performance.now() - started) / 1000);
  };
  const rsyslog = haveRsyslogd() ? await startBenchRsyslog() : undefined;
  let perLine = 0;
  if (rsyslog) {
    // one message first: the size of the line rsyslogd writes for it
    await sendFrames(rsyslog.port, 1);
    const until = performance.now() + 10_000;
    while (rsyslog.written() === 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
    perLine = rsyslog.written();
  }
  const rsyslogRound = async (): Promise<number> => {
    const before = rsyslog!.written();
    const started = performance.now();
    await sendFrames(rsyslog!.port, TCP_FRAMES);
    while (rsyslog!.written() - before < TCP_FRAMES * perLine && performance.now() - started < 60_000)
      await new Promise((r) => setTimeout(r, 2));
    return (rsyslog!.written() - before) / perLine / ((performance.now() - started) / 1000);
  };
  if (rsyslog && perLine > 0) {
    const r = await interleaved(ROUNDS, serviceTcpRound, rsyslogRound);
    await rsyslog.stop();
    console.log(
      `TCP, ${TCP_FRAMES.toLocaleString('en')} RFC 5424 frames (octet counting) on one connection per round: syslog service ${Math.round(r.a).toLocaleString('en')} msg/s received, parsed and forwarded (most lost in a round ${tcpLost}); rsyslogd imtcp → omfile ${Math.round(r.b).toLocaleString('en')} msg/s written; ratio ${(r.a / r.b).toFixed(2)} (targets: ≥ 100,000 msg/s with zero loss; ≥ 0.5 of rsyslogd)`,
    );
    report({
      figure: 'syslog TCP, RFC 5424, octet counting, one connection: received, parsed and forwarded with zero loss',
      hivenode: r.a,
      unit: 'msg/s',
      target: '≥ 100,000 msg/s, zero loss',
      met: r.a >= 100_000 && tcpLost === 0,
    });
    report({
      figure: 'syslog TCP, RFC 5424, octet counting, one connection: against rsyslogd on this machine',
      hivenode: r.a,
      unit: 'msg/s',
      baseline: 'rsyslogd (imtcp → omfile, message text only)',
      baselineValue: r.b,
      peer: true,
      target: '≥ 0.5',
      met: r.a / r.b >= 0.5,
    });
  } else {
    await rsyslog?.stop();
    const rate = (await interleavedAll(ROUNDS, [serviceTcpRound]))[0]!;
    console.log(
      `TCP, one connection, octet counting: ${Math.round(rate).toLocaleString('en')} msg/s received, parsed and forwarded (rsyslogd is not installed: no comparison)`,
    );
    report({
      figure: 'syslog TCP, RFC 5424, octet counting, one connection: received, parsed and forwarded with zero loss',
      hivenode: rate,
      unit: 'msg/s',
      target: '≥ 100,000 msg/s, zero loss',
      met: rate >= 100_000 && tcpLost === 0,
    });
  }
  raw.close();
  await sender.close();
  await node.stop(2000);
}

await main();
