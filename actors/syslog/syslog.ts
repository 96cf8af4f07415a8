/**
 * The syslog service (README, The syslog service): a sender for messages arriving on its input channel (when
 * RemoteIP is set; over UDP, TCP or TLS) and/or a receiver (UDP and/or TCP or TLS, limited to the
 * sources of AllowFrom) that forwards what arrives to OUTPUTCHANNEL.
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
import { ServerTls } from '../net/server-tls.js';
import { AllowList } from './allow-from.js';
import type { InputFormatName } from './decode.js';
import type { RunningReceiver } from './receiver.js';
import { startReceiver } from './receiver.js';
import { SendTls } from './send-tls.js';
import { SyslogSender } from './sender.js';

type SyslogConfig = ConfigOf<typeof SYSLOG_PARAMS>;

/** The receiver's TLS: TLS true needs TLSCert and TLSKey, and TLS files without TLS true are refused as ambiguous. */
function receiverTls(c: SyslogConfig, where: string, ctx: ServiceContext<SyslogConfig>): ServerTls | undefined {
  const tls = ServerTls.fromConfig(c, where, ctx.log);
  if (c.TLS && !tls) throw new ConfigError(`${where}: TLS true needs TLSCert and TLSKey (the receiver's certificate and key, PEM; 'make certs' makes test ones)`);
  if (!c.TLS && tls) {
    tls.close();
    throw new ConfigError(`${where}: TLSCert and TLSKey are given but TLS is false: set TLS true to receive over TLS on Port, or remove them`);
  }
  return tls;
}

async function start(ctx: ServiceContext<SyslogConfig>): Promise<RunningService> {
  const c = ctx.config;
  const where = `syslog '${ctx.name}'`;
  if (!c.RemoteIP && !c.UDP && !c.TCP && !c.TLS) throw new ConfigError('the syslog service needs RemoteIP (to send) and/or UDP, TCP or TLS true (to receive)');
  if (c.RemoteIP && !c.SendTCP && !c.SendUDP && !c.SendTLS) throw new ConfigError('RemoteIP is set but none of SendTCP, SendUDP and SendTLS is true');
  if (c.SendTLS && c.SendFraming === 'lf') throw new ConfigError("SendFraming 'lf' cannot be used with SendTLS: syslog over TLS is octet-counted (RFC 5425)");
  const allow = AllowList.parse(c.AllowFrom);
  if (allow && !c.UDP && !c.TCP && !c.TLS) throw new ConfigError('AllowFrom limits the receiver, but UDP, TCP and TLS are all false');
  const sendTls = SendTls.fromConfig(c, ctx.log);
  const tls = receiverTls(c, where, ctx);
  let receiver: RunningReceiver | undefined;
  if (c.UDP || c.TCP || c.TLS) {
    receiver = await startReceiver(
      { name: ctx.name, ip: c.IP, port: c.Port, udp: c.UDP, tcp: c.TCP || c.TLS, tls, allow, format: c.Format as InputFormatName, decodeCEF: c.DecodeCEF, cls: c.Class, operation: c.Operation, channel: c.OUTPUTCHANNEL, maxMessageBytes: c.MaxMessageBytes, maxConnections: c.MaxConnections },
      ctx.hive,
      ctx.log,
    );
    const streamName = tls ? `TLS${tls.clientAuth === 'none' ? '' : ` (client certificates: ${tls.clientAuth})`}` : 'TCP';
    const limit = allow ? `, from ${allow.entries.join(', ')} only` : '';
    ctx.log.info(`syslog receiver on ${c.IP}${receiver.udpPort !== undefined ? ` UDP ${receiver.udpPort}` : ''}${receiver.tcpPort !== undefined ? ` ${streamName} ${receiver.tcpPort}` : ''}${limit}, forwarding to '${c.OUTPUTCHANNEL}'`);
  }
  // after the receiver: a receiver that cannot listen leaves no sender reconnecting behind it
  const sender = c.RemoteIP
    ? new SyslogSender({ host: c.RemoteIP, port: c.RemotePort, tcp: c.SendTCP || c.SendTLS, tls: sendTls, tag: c.SendTag, json: c.SendJSON, format: c.SendFormat as 'RFC3164' | 'RFC5424', framing: c.SendFraming as 'octet-counting' | 'lf', buffer: c.SendBuffer }, ctx.log)
    : undefined;
  const figures = (): Record<string, unknown> => ({
    ...(receiver ? { ...receiver.counters, ...(allow ? { notAllowedFrom: receiver.notAllowedFrom() } : {}), udpPort: receiver.udpPort, [tls ? 'tlsPort' : 'tcpPort']: receiver.tcpPort } : {}),
    ...(sender ? { sent: sender.counters.sent, sendDropped: sender.counters.dropped, sendBuffered: sender.counters.buffered, sendFailures: sender.counters.failures, sendError: sender.counters.error } : {}),
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
