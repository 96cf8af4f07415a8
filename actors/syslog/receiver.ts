/**
 * The syslog receiver: UDP and/or TCP on IP:Port. Every datagram or TCP frame is decoded and emitted
 * to OUTPUTCHANNEL with the configured Class and Operation. Counters: received, invalid (not
 * decodable, or not of the expected Format), dropped (the hive had no listener). Invalid input never
 * stops it: a bad TCP stream closes only its own connection.
 */
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Server, Socket as NetSocket } from 'node:net';
import type { HiveClient } from '../hive/client.js';
import type { ListenAt } from '../shared/listen.js';
import { bindOn, listenOn } from '../shared/listen.js';
import type { Logger } from '../shared/logger.js';
import { makeMessage } from '../../protocol/message.js';
import type { DecodeOptions } from './decode.js';
import { decodeSyslog } from './decode.js';
import { FrameDecoder } from './framing.js';
import { describeError } from '../../protocol/errors.js';

export interface ReceiverOptions {
  /** The service instance, named in a start error. */
  name: string;
  ip: string;
  port: number;
  udp: boolean;
  tcp: boolean;
  format: DecodeOptions['format'];
  decodeCEF: boolean;
  cls: string;
  operation: string;
  channel: string;
  maxMessageBytes: number;
  maxConnections: number;
}

export interface ReceiverCounters {
  received: number;
  invalid: number;
  dropped: number;
  connections: number;
}

export interface RunningReceiver {
  counters: ReceiverCounters;
  udpPort?: number;
  tcpPort?: number;
  close(): Promise<void>;
}

export async function startReceiver(opts: ReceiverOptions, hive: HiveClient, log: Logger): Promise<RunningReceiver> {
  const counters: ReceiverCounters = { received: 0, invalid: 0, dropped: 0, connections: 0 };
  const handle = (bytes: Buffer, remoteAddress: string): void => {
    counters.received++;
    const decoded = decodeSyslog(bytes.length > opts.maxMessageBytes ? bytes.subarray(0, opts.maxMessageBytes) : bytes, { format: opts.format, decodeCEF: opts.decodeCEF, remoteAddress });
    if (!decoded.ok) {
      counters.invalid++;
      return;
    }
    if (!decoded.expected) counters.invalid++;
    void hive.emit(opts.channel, makeMessage({ Class: opts.cls, Operation: opts.operation, Data: decoded.data })).then((delivered) => {
      if (!delivered) counters.dropped++;
    });
  };

  let udp: Socket | undefined;
  let tcp: Server | undefined;
  const result: RunningReceiver = {
    counters,
    close: async () => {
      await Promise.all([
        udp ? new Promise<void>((r) => udp!.close(() => r())) : undefined,
        tcp
          ? new Promise<void>((r) => {
              tcp!.close(() => r());
              for (const s of sockets) s.destroy();
            })
          : undefined,
      ]);
    },
  };
  const sockets = new Set<NetSocket>();
  const at: ListenAt = { service: 'syslog', instance: opts.name, port: opts.port, host: opts.ip };
  if (opts.udp) {
    udp = createSocket({ type: opts.ip.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 4 * 1024 * 1024 });
    udp.on('message', (msg, rinfo) => handle(msg, rinfo.address));
    await bindOn(udp, { ...at, protocol: 'UDP' });
    // after the bind: a bind failure is the start error alone, not also a warning
    udp.on('error', (e) => log.warn(`syslog UDP receiver: ${e.message}`));
    result.udpPort = udp.address().port;
  }
  if (opts.tcp) {
    tcp = createServer((socket) => {
      counters.connections++;
      sockets.add(socket);
      const decoder = new FrameDecoder(opts.maxMessageBytes);
      const remote = socket.remoteAddress ?? '';
      socket.on('data', (chunk: Buffer) => {
        try {
          for (const frame of decoder.push(chunk)) handle(frame, remote);
        } catch (e) {
          counters.invalid++;
          log.warn(`syslog TCP frame from ${remote} refused (${describeError(e)}); connection closed`);
          socket.destroy();
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        counters.connections--;
        sockets.delete(socket);
      });
    });
    tcp.maxConnections = opts.maxConnections;
    try {
      await listenOn(tcp, { ...at, port: opts.port === 0 && result.udpPort ? result.udpPort : opts.port, protocol: 'TCP' });
    } catch (e) {
      // the UDP socket is bound already: release it, or a failed start would keep holding the port
      await result.close();
      throw e;
    }
    const address = tcp.address();
    if (address && typeof address === 'object') result.tcpPort = address.port;
  }
  return result;
}
