/**
 * The channels a service sends to by its configuration: the gateway's routes and OUTPUTCHANNEL for
 * what no route matches, a queue's DefaultChannel and dead-letter target, OUTPUTCHANNEL of the
 * syslog receiver and the SQL poller, a flow's steps, templates fetched over the hive. The console draws them as
 * arrows, and the hive roster publishes them so other nodes draw them too. A channel reached by two
 * settings (two routes) is one send with both labels: the hive carries it as one. A send the service
 * counts itself (countedBy) is never merged: the gateway's OUTPUTCHANNEL (requests no route matched)
 * and a queue's dead letters (entries that died, not each try of their hand-over) are arrows of their
 * own, so their label never sits on the arrow of a route to the same channel.
 */
import { flowSends } from '../actors/flow/sends.js';
import { parseRoutes } from '../actors/gateway/routes.js';

export interface ChannelSend {
  channel: string;
  /** What it carries: the route pattern, 'delivers', 'dead letters', 'messages', … */
  label: string;
  /** A call for templates rather than work (drawn dashed). */
  secondary?: true;
  /**
   * The service's status figure that counts this send, where the hive's count on the channel would
   * say something else: `unrouted` (a gateway's requests no route matched), `died` (a queue's entries
   * that died: the hive counts every try of a hand-over).
   */
  countedBy?: string;
}

const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v)).trim();

/** Whether a syslog service receives (and so forwards to OUTPUTCHANNEL). */
export const syslogReceives = (c: Readonly<Record<string, unknown>>): boolean =>
  c.UDP === true || c.TCP === true || c.TLS === true || c.RELP === true;

export function sendsOf(kind: string, c: Readonly<Record<string, unknown>>): ChannelSend[] {
  const sends: ChannelSend[] = [];
  const add = (channel: string, label: string, secondary = false, countedBy?: string): void => {
    if (!channel) return;
    const same =
      countedBy === undefined
        ? sends.find((s) => s.channel === channel && (s.secondary === true) === secondary && s.countedBy === undefined)
        : undefined;
    if (same) same.label = `${same.label}, ${label}`;
    else
      sends.push({
        channel,
        label,
        ...(secondary ? { secondary: true as const } : {}),
        ...(countedBy === undefined ? {} : { countedBy }),
      });
  };
  switch (kind) {
    case 'gateway':
      for (const r of parseRoutes(text(c.Routes)).entries) add(r.value, r.pattern);
      add(text(c.OUTPUTCHANNEL), 'no route matched', false, 'unrouted');
      break;
    case 'queue':
      add(text(c.DefaultChannel), 'delivers');
      add(text(c.DefaultDeadLetterSlap), 'dead letters', false, 'died');
      break;
    case 'syslog':
      if (syslogReceives(c)) add(text(c.OUTPUTCHANNEL), 'messages');
      break;
    case 'sql':
      if (c.SQL_POLLMODE === true) add(text(c.OUTPUTCHANNEL), 'polled rows');
      if (c.SQL_CHANGES === true) add(text(c.OUTPUTCHANNEL), 'changes');
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

/** A numeric figure at a dotted path of a status ('accepted', 'poller.polls'), if there is one. */
export function figureAt(status: Readonly<Record<string, unknown>>, path: string): number | undefined {
  let v: unknown = status;
  for (const part of path.split('.'))
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[part] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * Each send of a service with how many it has sent since start: a counted send its status figure;
 * any other the hive's count on its channel (`sent`), less what counted sends on the same channel
 * took of it (the gateway's requests no route matched, when OUTPUTCHANNEL is also a route's channel).
 */
export function sendCounts(
  kind: string,
  config: Readonly<Record<string, unknown>>,
  sent: (channel: string) => number,
  status: () => Readonly<Record<string, unknown>>,
): Array<ChannelSend & { sent: number }> {
  const sends = sendsOf(kind, config);
  const figures = sends.some((s) => s.countedBy !== undefined) ? status() : {};
  const counted = sends.map((s) => (s.countedBy === undefined ? undefined : (figureAt(figures, s.countedBy) ?? 0)));
  return sends.map((s, i) => {
    const own = counted[i];
    if (own !== undefined) return { ...s, sent: own };
    const taken = sends.reduce(
      (sum, o, j) =>
        o.channel === s.channel && o.secondary === s.secondary && counted[j] !== undefined ? sum + counted[j]! : sum,
      0,
    );
    return { ...s, sent: Math.max(0, sent(s.channel) - taken) };
  });
}
