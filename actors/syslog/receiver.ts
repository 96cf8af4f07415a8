/**
 * The syslog receiver: UDP and/or a stream listener (TCP, or TLS per RFC 5425) on IP:Port. Every
 * datagram or frame is decoded and emitted to OUTPUTCHANNEL with the configured Class and Operation.
 * Counters: received, invalid (not decodable, or not of the expected Format), dropped (the hive had
 * no listener), notAllowed (datagrams and connections from sources outside AllowFrom, also counted
 * per source in notAllowedFrom), tlsRefused (TLS handshakes that failed). Invalid input never stops
 * it: a bad stream closes only its own connection.
 */
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import type { HiveClient } from '../hive/client.js';
import type { ListenAt } from '../net/listen.js';
import { bindOn, listenOn } from '../net/listen.js';
import type { Logger } from '../observe/logger.js';
import type { ServerTls } from '../net/server-tls.js';
import { Code, isRetryableCode, isSuccessCode } from '../../protocol/codes.js';
import type { Message } from '../../protocol/message.js';
import { makeMessage } from '../../protocol/message.js';
import { putMessageHop } from '../observe/trace-message.js';
import { beginHop } from '../observe/tracing.js';
import type { AllowList } from './allow-from.js';
import { sourceAddress } from './allow-from.js';
import type { DecodeOptions } from './decode.js';
import { decodeSyslog } from './decode.js';
import type { HandoverAttempt, WindowCounters } from './handover-window.js';
import type { RelpCounters } from './relp-session.js';
import { serveRelp } from './relp-session.js';
import type { TcpAckCounters } from './tcp-ack.js';
import { serveTcpAck } from './tcp-ack.js';
import { EmitBacklog } from './emit-backlog.js';
import { SourceCounts } from './source-counts.js';
import type { SourceRate } from './source-rate.js';
import type { StreamCounters, StreamListener } from './stream-listener.js';
import { streamListener } from './stream-listener.js';

export interface ReceiverOptions {
  /** The service instance, named in a start error. */
  name: string;
  ip: string;
  port: number;
  udp: boolean;
  /** A stream listener: plain TCP, or TLS when `tls` is given. */
  tcp: boolean;
  tls?: ServerTls;
  /** AllowFrom; undefined accepts every source. */
  allow?: AllowList;
  format: DecodeOptions['format'];
  decodeCEF: boolean;
  cls: string;
  operation: string;
  channel: string;
  maxMessageBytes: number;
  maxConnections: number;
  /** A RELP listener on its own port (TLS too when `tls` is given), with its window of frames in flight per connection. */
  relp?: { port: number; window: number };
  /** SourceRate: per-source limits (dropped over UDP and TCP, delayed over RELP and TCPAck). */
  sourceRate?: SourceRate;
  /** TCPAck: the stream listener hands each message over acknowledged, at most `window` per connection at once. */
  tcpAck?: { window: number };
}

interface ReceiverCounters extends StreamCounters {
  dropped: number;
  notAllowed: number;
}

export interface RunningReceiver {
  counters: ReceiverCounters;
  /** Sources refused by AllowFrom with their counts: the most refused ones, the rest as 'other'. */
  notAllowedFrom(): Record<string, number>;
  /** SourceRate's counts, when it is set: rateLimited (dropped), rateLimitedFrom (per source), rateDelayed (RELP, TCPAck). */
  rateFigures(): Record<string, number | Record<string, number>>;
  /** The acknowledged hand-overs' counters: RELP's and TCPAck's, when they are on. */
  ackCounters(): Record<string, number>;
  udpPort?: number;
  tcpPort?: number;
  relpPort?: number;
  close(): Promise<void>;
}

/** How many ports the system may give UDP before a Port 0 receiver gives up finding one free over TCP too. */
const EPHEMERAL_ATTEMPTS = 10;
/** How long one RELP hand-over may wait for its acknowledgement before it counts as refused (504, tried again). */
const HANDOVER_TIMEOUT_MS = 30_000;
/** Distinct refusal reasons logged as warnings; past that, they are only counted. */
const REASONS_LOGGED = 50;
const portInUse = (e: unknown): boolean =>
  ((e as Error | undefined)?.cause as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';

export async function startReceiver(opts: ReceiverOptions, hive: HiveClient, log: Logger): Promise<RunningReceiver> {
  const counters: ReceiverCounters = {
    received: 0,
    invalid: 0,
    dropped: 0,
    connections: 0,
    notAllowed: 0,
    tlsRefused: 0,
  };
  const refused = new SourceCounts();
  const refuse = (source: string): void => {
    refused.add(source);
    counters.notAllowed = refused.total;
  };
  /** One received message as the hive message to forward, with its trace hop; undefined when it does not decode. */
  const received = (
    bytes: Buffer,
    remoteAddress: string,
  ): { message: Message; hop: ReturnType<typeof beginHop> } | undefined => {
    counters.received++;
    const decoded = decodeSyslog(
      bytes.length > opts.maxMessageBytes ? bytes.subarray(0, opts.maxMessageBytes) : bytes,
      { format: opts.format, decodeCEF: opts.decodeCEF, remoteAddress },
    );
    if (!decoded.ok) {
      counters.invalid++;
      return undefined;
    }
    if (!decoded.expected) counters.invalid++;
    // every received message starts a trace of its own, carried in the forwarded message's Control
    const hop = beginHop(`${opts.name} receive`, opts.name, 'producer', undefined, undefined, {
      start: true,
      attributes: () => ({ 'hivenode.channel': opts.channel, 'client.address': remoteAddress }),
    });
    const message = makeMessage({ Class: opts.cls, Operation: opts.operation, Data: decoded.data });
    putMessageHop(message, hop);
    return { message, hop };
  };
  const limited = new SourceCounts();
  let rateDelayed = 0;
  const backlog = new EmitBacklog();
  const handle = (bytes: Buffer, remoteAddress: string): void => {
    if (opts.sourceRate && !opts.sourceRate.take(remoteAddress)) {
      limited.add(sourceAddress(remoteAddress));
      return;
    }
    const r = received(bytes, remoteAddress);
    if (!r) return;
    const hop = r.hop;
    backlog.sent();
    hive.emitTold(opts.channel, r.message, (delivered) => {
      backlog.passed();
      if (hop) hop.end(delivered ? 200 : 404, delivered ? undefined : 'no listener');
      if (!delivered) counters.dropped++;
    });
  };
  /**
   * A RELP (or TCPAck) message, to be executed on the channel (tried again by its connection's
   * HandoverWindow while it is refused for a reason that may pass): acknowledged only once its
   * listener accepted it — a durable queue once the entry is stored. A string: why the message
   * cannot be handed over at all.
   */
  const prepare = (bytes: Buffer, remoteAddress: string): HandoverAttempt | string => {
    const r = received(bytes, remoteAddress);
    if (!r) return 'not a syslog message (empty)';
    let first = true;
    // over its SourceRate the message waits for its token: RELP and TCPAck promise no drops
    const delay = opts.sourceRate?.reserve(remoteAddress) ?? 0;
    if (delay > 0) rateDelayed++;
    return async () => {
      if (first && delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      const result = await hive.execute(opts.channel, r.message, HANDOVER_TIMEOUT_MS);
      const ok = isSuccessCode(result.Code);
      // the trace shows the first attempt: a refusal that passes is counted in relpRetries / tcpAckRetries
      if (first) r.hop?.end(result.Code, ok ? undefined : result.Message);
      first = false;
      if (ok) return { ok: true };
      return {
        ok: false,
        retry: isRetryableCode(result.Code) || result.Code === Code.NotFound,
        reason: `${result.Code} ${result.Message}`,
      };
    };
  };

  const logged = new Set<string>();
  const warnOnce = (reason: string, line: string): void => {
    if (logged.has(reason) || logged.size >= REASONS_LOGGED) return log.debug(line);
    logged.add(reason);
    log.warn(line);
  };
  const invalid = (): void => void counters.invalid++;
  const relpCounters: RelpCounters = { relpAcknowledged: 0, relpRefused: 0 };
  const relpWindow: WindowCounters = { inFlight: 0, retries: 0 };
  const ackCounters: TcpAckCounters = { tcpAckRefused: 0 };
  const ackWindow: WindowCounters = { inFlight: 0, retries: 0 };
  /** Set by close(): TCPAck hand-overs of closed connections stop. */
  let stopping = false;

  let udp: Socket | undefined;
  let stream: StreamListener | undefined;
  let relp: StreamListener | undefined;
  const result: RunningReceiver = {
    counters,
    notAllowedFrom: () => refused.snapshot(),
    rateFigures: (): Record<string, number | Record<string, number>> =>
      opts.sourceRate ? { rateLimited: limited.total, rateLimitedFrom: limited.snapshot(), rateDelayed } : {},
    ackCounters: () => ({
      ...(opts.relp ? { ...relpCounters, relpInFlight: relpWindow.inFlight, relpRetries: relpWindow.retries } : {}),
      ...(opts.tcpAck && opts.tcp
        ? { ...ackCounters, tcpAckInFlight: ackWindow.inFlight, tcpAckRetries: ackWindow.retries }
        : {}),
    }),
    close: async () => {
      stopping = true;
      await Promise.all([
        udp ? new Promise<void>((r) => udp!.close(() => r())) : undefined,
        stream?.close(),
        relp?.close(),
      ]);
    },
  };
  const at: ListenAt = { service: 'syslog', instance: opts.name, port: opts.port, host: opts.ip };
  const openUdp = async (): Promise<void> => {
    udp = createSocket({ type: opts.ip.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 4 * 1024 * 1024 });
    udp.on('message', (msg, rinfo) => {
      if (opts.allow && !opts.allow.allows(rinfo.address)) refuse(sourceAddress(rinfo.address));
      else handle(msg, rinfo.address);
    });
    await bindOn(udp, { ...at, protocol: 'UDP' });
    // after the bind: a bind failure is the start error alone, not also a warning
    udp.on('error', (e) => log.warn(`syslog UDP receiver: ${e.message}`));
    result.udpPort = udp.address().port;
  };
  if (opts.udp) await openUdp();
  if (opts.tcp) {
    const base = {
      maxMessageBytes: opts.maxMessageBytes,
      maxConnections: opts.maxConnections,
      tls: opts.tls,
      allow: opts.allow,
      refuse,
    };
    const acked = opts.tcpAck
      ? {
          window: opts.tcpAck.window,
          maxMessageBytes: opts.maxMessageBytes,
          prepare,
          counters: ackCounters,
          windowCounters: ackWindow,
          invalid,
          log,
          warnOnce,
          kind: opts.tls ? ('TLS' as const) : ('TCP' as const),
          running: () => !stopping,
        }
      : undefined;
    stream = streamListener(
      acked
        ? { ...base, session: (socket, remote) => serveTcpAck(socket, remote, acked) }
        : { ...base, frame: handle, backlog },
      counters,
      log,
    );
    // Port 0 with both: TCP takes the port the system gave UDP, which a TCP socket (an outgoing
    // connection's end) may hold already; UDP is then bound again elsewhere, a few times
    for (let attempt = 1; ; attempt++) {
      try {
        await listenOn(stream.server, {
          ...at,
          port: opts.port === 0 && result.udpPort ? result.udpPort : opts.port,
          protocol: 'TCP',
        });
        break;
      } catch (e) {
        const again = opts.port === 0 && udp !== undefined && attempt < EPHEMERAL_ATTEMPTS && portInUse(e);
        if (again) {
          await new Promise<void>((r) => udp!.close(() => r()));
          await openUdp();
          continue;
        }
        // the UDP socket is bound already: release it, or a failed start would keep holding the port
        await result.close();
        throw e;
      }
    }
    const address = stream.server.address();
    if (address && typeof address === 'object') result.tcpPort = address.port;
  }
  if (opts.relp) {
    const session = {
      window: opts.relp.window,
      maxDataBytes: opts.maxMessageBytes,
      prepare,
      counters: relpCounters,
      windowCounters: relpWindow,
      invalid,
      log,
      warnOnce,
    };
    relp = streamListener(
      {
        maxMessageBytes: opts.maxMessageBytes,
        maxConnections: opts.maxConnections,
        tls: opts.tls,
        allow: opts.allow,
        refuse,
        session: (socket, remote) => serveRelp(socket, remote, session),
      },
      counters,
      log,
    );
    try {
      await listenOn(relp.server, { ...at, port: opts.relp.port, parameter: 'RELPPort' });
    } catch (e) {
      await result.close();
      throw e;
    }
    const address = relp.server.address();
    if (address && typeof address === 'object') result.relpPort = address.port;
  }
  return result;
}
