/**
 * The channels a service sends to by its configuration: the gateway's routes and OUTPUTCHANNEL for
 * what no route matches, a queue's DefaultChannel and dead-letter target, OUTPUTCHANNEL of the
 * syslog receiver and the SQL poller, a flow's steps, templates fetched over the hive. The console draws them as
 * arrows, and the hive roster publishes them so other nodes draw them too. A channel reached by two
 * settings (a route and OUTPUTCHANNEL) is one send with both labels: the hive carries it as one.
 */
import { flowSends } from '../actors/flow/sends.js';
import { parseRoutes } from '../actors/gateway/routes.js';

export interface ChannelSend {
  channel: string;
  /** What it carries: the route pattern, 'delivers', 'dead letters', 'messages', … */
  label: string;
  /** A call for templates rather than work (drawn dashed). */
  secondary?: true;
}

const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v)).trim();

/** Whether a syslog service receives (and so forwards to OUTPUTCHANNEL). */
export const syslogReceives = (c: Readonly<Record<string, unknown>>): boolean => c.UDP === true || c.TCP === true || c.TLS === true || c.RELP === true;

export function sendsOf(kind: string, c: Readonly<Record<string, unknown>>): ChannelSend[] {
  const sends: ChannelSend[] = [];
  const add = (channel: string, label: string, secondary = false): void => {
    if (!channel) return;
    const same = sends.find((s) => s.channel === channel && (s.secondary === true) === secondary);
    if (same) same.label = `${same.label}, ${label}`;
    else sends.push({ channel, label, ...(secondary ? { secondary: true as const } : {}) });
  };
  switch (kind) {
    case 'gateway':
      for (const r of parseRoutes(text(c.Routes)).entries) add(r.value, r.pattern);
      add(text(c.OUTPUTCHANNEL), 'no route matched');
      break;
    case 'queue':
      add(text(c.DefaultChannel), 'delivers');
      add(text(c.DefaultDeadLetterSlap), 'dead letters');
      break;
    case 'syslog':
      if (syslogReceives(c)) add(text(c.OUTPUTCHANNEL), 'messages');
      break;
    case 'sql':
      if (c.SQL_POLLMODE === true) add(text(c.OUTPUTCHANNEL), 'polled rows');
      break;
    case 'flow':
      // each step's channel, labelled with the step (README, Flows), as the running flow published them
      for (const s of flowSends(text(c.Definition))) add(s.channel, s.label);
      if (text(c.Definition).startsWith('hive://')) add(text(c.TemplateChannel), 'definition', true);
      break;
    default:
      break;
  }
  if (text(c.Template).startsWith('hive://')) add(text(c.TemplateChannel), 'templates', true);
  return sends;
}
