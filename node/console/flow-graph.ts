/**
 * The hive's wiring as a graph, read from the running configuration of this node and from what the
 * other nodes of a NATS hive publish (hive-roster.ts): every service's sends (node/wiring.ts:
 * gateway routes and OUTPUTCHANNEL, each queue's DefaultChannel and dead-letter target, OUTPUTCHANNEL
 * of the syslog receiver and the SQL poller, templates fetched over the hive), the HTTP client's
 * upstream, HTTP, syslog, poll timers and change streams' logs as sources. An edge ends at the service that listens on its
 * channel — on this node if one does, else on the other nodes that do — or at a channel box when no
 * service of the hive does. Each edge names its sender, so its label shows what that sender sent.
 */
import type { RosterEntry } from '../hive-roster.js';
import { idOf } from '../hive-roster.js';
import { sendsOf, syslogReceives } from '../wiring.js';
import type { CountedFigure, Sender } from './history.js';
import { REQUESTS_FIGURE } from './history.js';
import type { ConsoleService } from './sources.js';

type FlowNodeKind = 'service' | 'remote' | 'source' | 'external' | 'channel';

export interface FlowNode {
  id: string;
  kind: FlowNodeKind;
  label: string;
  /** The second line: the service kind (and node, for another node's service), or what a source is. */
  detail: string;
  /** The service of this node a box stands for (to colour it by health and link to it). */
  service?: string;
  /** The other node a 'remote' box runs on. */
  node?: string;
}

export interface FlowEdge {
  id: string;
  from: string;
  to: string;
  label: string;
  /** The hive channel the edge carries, if any. */
  channel?: string;
  /** Who sends along the edge (its live rate is what that service sent on the channel). */
  sender?: Sender;
  /** A call for templates rather than work (drawn dashed). */
  secondary?: boolean;
  /** An edge from a source or to an outside server: its rate is how fast this figure of the service's status grows. */
  counted?: CountedFigure;
}

export interface FlowGraph {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v)).trim();

/** Where a URL points without what could be secret in it (user, password, path, query). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'a URL';
  }
}

/** The box id of another node's service. */
const remoteId = (node: RosterEntry, service: string): string => `remote:${idOf(node)}:${service}`;

/** `others`: the other nodes of the hive (none on the embedded hive). */
export function buildFlow(services: readonly ConsoleService[], others: readonly RosterEntry[] = []): FlowGraph {
  const nodes = new Map<string, FlowNode>();
  const edges: FlowEdge[] = [];
  const listeners = new Map<string, string[]>();
  const listen = (channel: string, id: string): void => {
    if (channel) listeners.set(channel, [...(listeners.get(channel) ?? []), id]);
  };
  for (const s of services) {
    nodes.set(`svc:${s.name}`, {
      id: `svc:${s.name}`,
      kind: 'service',
      label: s.name,
      detail: s.kind,
      service: s.name,
    });
    listen(s.channel, `svc:${s.name}`);
  }
  // this node's listeners come first: a channel served here is drawn to this node's service
  const remoteListeners = new Map<string, string[]>();
  for (const n of others) {
    for (const r of n.services) {
      const id = remoteId(n, r.name);
      nodes.set(id, { id, kind: 'remote', label: r.name, detail: `${r.kind} on ${n.name}`, node: n.name });
      if (r.channel) remoteListeners.set(r.channel, [...(remoteListeners.get(r.channel) ?? []), id]);
    }
  }
  const add = (node: FlowNode): string => {
    if (!nodes.has(node.id)) nodes.set(node.id, node);
    return node.id;
  };
  /** Edges from `from` to whatever takes `channel` on the hive. */
  const toChannel = (from: string, sender: Sender, label: string, secondary = false): void => {
    const { channel } = sender;
    const targets = listeners.get(channel) ??
      remoteListeners.get(channel) ?? [
        add({ id: `ch:${channel}`, kind: 'channel', label: channel, detail: 'no listener on this node' }),
      ];
    for (const to of targets)
      edges.push({ id: `e${edges.length}`, from, to, label, channel, sender, ...(secondary ? { secondary } : {}) });
  };
  const fromSource = (node: FlowNode, to: string, label: string, counted: CountedFigure): void => {
    edges.push({ id: `e${edges.length}`, from: add(node), to, label, counted });
  };

  for (const s of services) {
    const id = `svc:${s.name}`;
    const c = s.config;
    const status = s.status();
    switch (s.kind) {
      case 'gateway':
        fromSource(
          {
            id: `src:http:${s.name}`,
            kind: 'source',
            label: `HTTP :${text(status.port ?? c.Port)}`,
            detail: 'clients',
          },
          id,
          'requests',
          { service: s.name, figure: 'accepted' },
        );
        break;
      case 'syslog':
        if (syslogReceives(c)) {
          const over = [c.UDP === true ? 'UDP' : '', c.TCP === true ? 'TCP' : '', c.TLS === true ? 'TLS' : '']
            .filter(Boolean)
            .join('/');
          const relp = c.RELP === true ? `RELP :${text(status.relpPort ?? c.RELPPort)}` : '';
          const label = [over ? `${over} :${text(status.udpPort ?? status.tcpPort ?? c.Port)}` : '', relp]
            .filter(Boolean)
            .join(', ');
          fromSource(
            { id: `src:syslog:${s.name}`, kind: 'source', label: `syslog ${label}`, detail: 'senders' },
            id,
            'received',
            { service: s.name, figure: 'received' },
          );
        }
        if (
          text(c.RemoteIP) &&
          (c.SendUDP === true || c.SendTCP === true || c.SendTLS === true || c.SendRELP === true)
        ) {
          edges.push({
            id: `e${edges.length}`,
            from: id,
            to: add({
              id: `ext:syslog:${s.name}`,
              kind: 'external',
              label: `${text(c.RemoteIP)}:${text(c.RemotePort)}`,
              detail: 'syslog server',
            }),
            label: 'sends',
            counted: { service: s.name, figure: 'sent' },
          });
        }
        break;
      case 'sql':
        if (c.SQL_POLLMODE === true)
          fromSource(
            {
              id: `src:poll:${s.name}`,
              kind: 'source',
              label: `every ${Math.round(Number(c.SQL_POLLINTERVAL) / 1000)} s`,
              detail: 'poll timer',
            },
            id,
            'polls',
            { service: s.name, figure: 'poller.polls' },
          );
        // a change stream's source is the database's change log; its rate is the rows handed over (their lag is in the status and /metrics)
        if (c.SQL_CHANGES === true)
          fromSource(
            {
              id: `src:changes:${s.name}`,
              kind: 'source',
              label: `${c.SQL_ENGINE === 'postgres' ? 'PostgreSQL WAL' : 'binlog'}: ${text(c.SQL_TABLE)}`,
              detail: 'change stream',
            },
            id,
            'changes',
            { service: s.name, figure: 'emitted' },
          );
        break;
      case 'httpclient':
        if (text(c.URL))
          edges.push({
            id: `e${edges.length}`,
            from: id,
            to: add({
              id: `ext:http:${originOf(text(c.URL))}`,
              kind: 'external',
              label: originOf(text(c.URL)),
              detail: 'HTTP server',
            }),
            label: text(c.Method) || 'requests',
            counted: { service: s.name, figure: REQUESTS_FIGURE },
          });
        break;
      default:
        break;
    }
    for (const send of sendsOf(s.kind, c))
      toChannel(
        id,
        { node: '', service: s.name, channel: send.channel, label: send.label },
        send.label,
        send.secondary,
      );
  }
  for (const n of others)
    for (const r of n.services)
      for (const send of r.sends ?? [])
        toChannel(
          remoteId(n, r.name),
          { node: idOf(n), service: r.name, channel: send.channel, label: send.label },
          send.label,
          send.secondary,
        );
  return { nodes: [...nodes.values()], edges };
}

/** What of the other nodes the graph is drawn from (their services and sends, not the counts): the layout is redone when it changes. */
export function wiringSignature(others: readonly RosterEntry[]): string {
  return JSON.stringify(
    others.map((n) => [
      idOf(n),
      n.services.map((s) => [
        s.name,
        s.kind,
        s.channel,
        (s.sends ?? []).map((x) => [x.channel, x.label, x.secondary === true]),
      ]),
    ]),
  );
}
