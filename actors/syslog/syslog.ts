/**
 * The syslog service (spec §2.6, §4.5): a sender for messages arriving on its input channel (when
 * RemoteIP is set) and/or a receiver (UDP and/or TCP) that forwards what arrives to OUTPUTCHANNEL.
 */
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { SYSLOG_PARAMS } from '../../config/syslog.js';
import { ConfigError } from '../../protocol/errors.js';
import { emptyMap, success } from '../../protocol/message.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { handleAsync, serve } from '../service/serve.js';
import type { InputFormatName } from './decode.js';
import type { RunningReceiver } from './receiver.js';
import { startReceiver } from './receiver.js';
import { SyslogSender } from './sender.js';

async function start(ctx: ServiceContext<ConfigOf<typeof SYSLOG_PARAMS>>): Promise<RunningService> {
  const c = ctx.config;
  if (!c.RemoteIP && !c.UDP && !c.TCP) throw new ConfigError('the syslog service needs RemoteIP (to send) and/or UDP or TCP true (to receive)');
  if (c.RemoteIP && !c.SendTCP && !c.SendUDP) throw new ConfigError('RemoteIP is set but neither SendTCP nor SendUDP is true');
  const sender = c.RemoteIP
    ? new SyslogSender({ host: c.RemoteIP, port: c.RemotePort, tcp: c.SendTCP || c.SendTLS, tls: c.SendTLS, tag: c.SendTag, json: c.SendJSON, format: c.SendFormat as 'RFC3164' | 'RFC5424', framing: c.SendFraming as 'octet-counting' | 'lf', buffer: c.SendBuffer }, ctx.log)
    : undefined;
  let receiver: RunningReceiver | undefined;
  if (c.UDP || c.TCP) {
    receiver = await startReceiver(
      { name: ctx.name, ip: c.IP, port: c.Port, udp: c.UDP, tcp: c.TCP, format: c.Format as InputFormatName, decodeCEF: c.DecodeCEF, cls: c.Class, operation: c.Operation, channel: c.OUTPUTCHANNEL, maxMessageBytes: c.MaxMessageBytes, maxConnections: c.MaxConnections },
      ctx.hive,
      ctx.log,
    );
    ctx.log.info(`syslog receiver on ${c.IP}${receiver.udpPort !== undefined ? ` UDP ${receiver.udpPort}` : ''}${receiver.tcpPort !== undefined ? ` TCP ${receiver.tcpPort}` : ''}, forwarding to '${c.OUTPUTCHANNEL}'`);
  }
  const figures = (): Record<string, unknown> => ({
    ...(receiver ? { ...receiver.counters, udpPort: receiver.udpPort, tcpPort: receiver.tcpPort } : {}),
    ...(sender ? { sent: sender.counters.sent, sendDropped: sender.counters.dropped, sendBuffered: sender.counters.buffered } : {}),
  });
  const close = async (): Promise<void> => {
    await Promise.all([sender?.close(), receiver?.close()]);
  };
  // a receiver alone listens on no channel
  if (!sender) return { drain: close, status: figures };
  const running = await serve(ctx, { worker: 'sender', handle: handleAsync((message) => sender.send(message.Data).then(() => success(emptyMap(), null))), close, status: figures });
  ctx.log.info(`syslog sender on channel '${ctx.inputChannel}' to ${c.RemoteIP}:${c.RemotePort} over ${c.SendTCP || c.SendTLS ? (c.SendTLS ? 'TLS' : 'TCP') : 'UDP'}`);
  return running;
}

export const syslogService = defineService(SERVICES.syslog, compilerFor('syslog', SYSLOG_PARAMS), start);
