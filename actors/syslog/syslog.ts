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
import { hostname } from 'node:os';
import type { ValueMap } from '../../protocol/message.js';
import { emptyMap, success } from '../../protocol/message.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { handleAsync, serve } from '../service/serve.js';
import { ServerTls } from '../net/server-tls.js';
import type { Logger } from '../observe/logger.js';
import { AllowList } from './allow-from.js';
import type { InputFormatName } from './decode.js';
import type { RunningReceiver } from './receiver.js';
import { startReceiver } from './receiver.js';
import { SendTls } from './send-tls.js';
import { RelpSender } from './relp-sender.js';
import { SyslogSender, formatLines } from './sender.js';
import { SourceRate } from './source-rate.js';

type SyslogConfig = ConfigOf<typeof SYSLOG_PARAMS>;

/** The receiver's TLS: TLS true needs TLSCert and TLSKey, and TLS files without TLS true are refused as ambiguous. */
function receiverTls(c: SyslogConfig, where: string, log?: Logger): ServerTls | undefined {
  const tls = ServerTls.fromConfig(c, where, log);
  if (c.TLS && !tls)
    throw new ConfigError(
      `${where}: TLS true needs TLSCert and TLSKey (the receiver's certificate and key, PEM; 'make certs' makes test ones)`,
    );
  if (!c.TLS && tls) {
    tls.close();
    throw new ConfigError(
      `${where}: TLSCert and TLSKey are given but TLS is false: set TLS true to receive over TLS on Port, or remove them`,
    );
  }
  return tls;
}

/**
 * The syslog service's start-time checks: what it is to do, its limits, and the receiver's TLS files
 * read and matched. The start runs them first; `hivenode check` and a reload run them alone.
 */
function check(c: SyslogConfig): {
  allow: AllowList | undefined;
  sourceRate: SourceRate | undefined;
  receiving: boolean;
} {
  const receiving = c.UDP || c.TCP || c.TLS || c.RELP;
  if (!c.RemoteIP && !receiving)
    throw new ConfigError('the syslog service needs RemoteIP (to send) and/or UDP, TCP, TLS or RELP true (to receive)');
  if (c.RemoteIP && !c.SendTCP && !c.SendUDP && !c.SendTLS && !c.SendRELP)
    throw new ConfigError('RemoteIP is set but none of SendTCP, SendUDP, SendTLS and SendRELP is true');
  if (c.SendRELP && !c.RemoteIP)
    throw new ConfigError('SendRELP is true but RemoteIP is not set: give the RELP server (rsyslog imrelp) to send to');
  if (c.SendTLS && c.SendFraming === 'lf' && !c.SendRELP)
    throw new ConfigError("SendFraming 'lf' cannot be used with SendTLS: syslog over TLS is octet-counted (RFC 5425)");
  if (c.RELP && (c.TCP || c.TLS) && c.RELPPort === c.Port && c.Port !== 0)
    throw new ConfigError(
      `RELPPort ${c.RELPPort} is also Port, where the ${c.TLS ? 'TLS' : 'TCP'} receiver listens: give RELP a port of its own`,
    );
  if (c.TCPAck && !c.TCP && !c.TLS)
    throw new ConfigError(
      'TCPAck acknowledges what the TCP or TLS receiver reads, but TCP and TLS are false (RELP acknowledges always; UDP cannot)',
    );
  const allow = AllowList.parse(c.AllowFrom);
  if (allow && !receiving)
    throw new ConfigError('AllowFrom limits the receiver, but UDP, TCP, TLS and RELP are all false');
  const sourceRate = SourceRate.parse(c.SourceRate);
  if (sourceRate && !receiving)
    throw new ConfigError('SourceRate limits the receiver, but UDP, TCP, TLS and RELP are all false');
  return { allow, sourceRate, receiving };
}

async function start(ctx: ServiceContext<SyslogConfig>): Promise<RunningService> {
  const c = ctx.config;
  const where = `syslog '${ctx.name}'`;
  const { allow, sourceRate, receiving } = check(c);
  const sendTls = SendTls.fromConfig(c, ctx.log);
  const tls = receiverTls(c, where, ctx.log);
  let receiver: RunningReceiver | undefined;
  if (receiving) {
    const relp = c.RELP ? { port: c.RELPPort, window: c.RELPWindow } : undefined;
    const tcpAck = c.TCPAck ? { window: c.RELPWindow } : undefined;
    receiver = await startReceiver(
      {
        name: ctx.name,
        ip: c.IP,
        port: c.Port,
        udp: c.UDP,
        tcp: c.TCP || c.TLS,
        tls,
        allow,
        format: c.Format as InputFormatName,
        decodeCEF: c.DecodeCEF,
        cls: c.Class,
        operation: c.Operation,
        channel: c.OUTPUTCHANNEL,
        maxMessageBytes: c.MaxMessageBytes,
        maxConnections: c.MaxConnections,
        relp,
        tcpAck,
        sourceRate,
      },
      ctx.hive,
      ctx.log,
    );
    const streamName = `${tls ? `TLS${tls.clientAuth === 'none' ? '' : ` (client certificates: ${tls.clientAuth})`}` : 'TCP'}${c.TCPAck ? ' (TCPAck)' : ''}`;
    const limit = `${allow ? `, from ${allow.entries.join(', ')} only` : ''}${sourceRate ? `, at most ${sourceRate.rules.map((r) => `${r.perSecond}/s per source in ${r.cidr}`).join(', ')}` : ''}`;
    const relpText =
      receiver.relpPort !== undefined
        ? ` RELP${tls ? ' over TLS' : ''} ${receiver.relpPort} (window ${c.RELPWindow})`
        : '';
    ctx.log.info(
      `syslog receiver on ${c.IP}${receiver.udpPort !== undefined ? ` UDP ${receiver.udpPort}` : ''}${receiver.tcpPort !== undefined ? ` ${streamName} ${receiver.tcpPort}` : ''}${relpText}${limit}, forwarding to '${c.OUTPUTCHANNEL}'${relpText ? ' (RELP: acknowledged hand-over)' : ''}`,
    );
  }
  // after the receiver: a receiver that cannot listen leaves no sender reconnecting behind it
  const format = { tag: c.SendTag, json: c.SendJSON, format: c.SendFormat as 'RFC3164' | 'RFC5424' };
  const relpSender =
    c.RemoteIP && c.SendRELP
      ? new RelpSender(
          {
            host: c.RemoteIP,
            port: c.RemotePort,
            tls: sendTls,
            window: c.RELPWindow,
            buffer: c.SendBuffer,
            maxDataBytes: c.MaxMessageBytes,
          },
          ctx.log,
        )
      : undefined;
  const sender =
    c.RemoteIP && !relpSender
      ? new SyslogSender(
          {
            host: c.RemoteIP,
            port: c.RemotePort,
            tcp: c.SendTCP || c.SendTLS,
            tls: sendTls,
            ...format,
            framing: c.SendFraming as 'octet-counting' | 'lf',
            buffer: c.SendBuffer,
          },
          ctx.log,
        )
      : undefined;
  const sent = sender?.counters ?? relpSender?.counters;
  const figures = (): Record<string, unknown> => ({
    ...(receiver
      ? {
          ...receiver.counters,
          ...receiver.ackCounters(),
          ...receiver.rateFigures(),
          ...(allow ? { notAllowedFrom: receiver.notAllowedFrom() } : {}),
          udpPort: receiver.udpPort,
          [tls ? 'tlsPort' : 'tcpPort']: receiver.tcpPort,
          relpPort: receiver.relpPort,
        }
      : {}),
    ...(sent
      ? {
          sent: sent.sent,
          sendDropped: sent.dropped,
          sendBuffered: sent.buffered,
          sendFailures: sent.failures,
          sendError: sent.error,
        }
      : {}),
    ...(relpSender ? { sendResent: relpSender.counters.resent, sendRefused: relpSender.counters.refused } : {}),
  });
  const close = async (): Promise<void> => {
    await Promise.all([sender?.close(), relpSender?.close(), receiver?.close()]);
  };
  // a receiver alone listens on no channel
  if (!sender && !relpSender) return { drain: close, status: figures };
  const host = hostname();
  // the RELP sender answers once the server acknowledged every message of the request
  const send = (data: ValueMap): Promise<number> =>
    relpSender ? relpSender.send(formatLines(data, format, host)) : sender!.send(data);
  const running = await serve(ctx, {
    worker: 'sender',
    handle: handleAsync((message) => send(message.Data).then(() => success(emptyMap(), null))),
    close,
    status: figures,
  });
  const over = c.SendRELP
    ? `RELP${c.SendTLS ? ' over TLS' : ''} (window ${c.RELPWindow})`
    : c.SendTCP || c.SendTLS
      ? c.SendTLS
        ? 'TLS'
        : 'TCP'
      : 'UDP';
  ctx.log.info(`syslog sender on channel '${ctx.inputChannel}' to ${c.RemoteIP}:${c.RemotePort} over ${over}`);
  return running;
}

export const syslogService = defineService(SERVICES.syslog, compilerFor('syslog', SYSLOG_PARAMS), start, (c, name) => {
  check(c);
  receiverTls(c, `syslog '${name}'`)?.close();
});
