/**
 * The node's wiring as a graph, read from the running configuration: the gateway's routes (and
 * OUTPUTCHANNEL for what no route matches), each queue's DefaultChannel and dead-letter target,
 * OUTPUTCHANNEL of the syslog receiver and the SQL poller, the HTTP client's upstream, templates
 * fetched over the hive; HTTP, syslog and poll timers as sources. An edge ends at the service that
 * listens on its channel, or at a channel box when no service of this node does.
 */
import { parseRoutes } from '../../actors/gateway/routes.js';
import type { ConsoleService } from './sources.js';

export type FlowNodeKind = 'service' | 'source' | 'external' | 'channel';

export interface FlowNode {
  id: string;
  kind: FlowNodeKind;
  label: string;
  /** The second line: the service kind, or what a source is. */
  detail: string;
  /** The service a node stands for (to colour it by health and link to it). */
  service?: string;
}

export interface FlowEdge {
  id: string;
  from: string;
  to: string;
  label: string;
  /** The hive channel the edge carries, if any (its live rate is the rate arriving on it). */
  channel?: string;
  /** A call for templates rather than work (drawn dashed). */
  secondary?: boolean;
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

export function buildFlow(services: readonly ConsoleService[]): FlowGraph {
  const nodes = new Map<string, FlowNode>();
  const edges: FlowEdge[] = [];
  const listeners = new Map<string, string[]>();
  for (const s of services) {
    nodes.set(`svc:${s.name}`, { id: `svc:${s.name}`, kind: 'service', label: s.name, detail: s.kind, service: s.name });
    if (s.channel) listeners.set(s.channel, [...(listeners.get(s.channel) ?? []), s.name]);
  }
  const add = (node: FlowNode): string => {
    if (!nodes.has(node.id)) nodes.set(node.id, node);
    return node.id;
  };
  /** Edges from `from` to whatever takes `channel` here. */
  const toChannel = (from: string, channel: string, label: string, secondary = false): void => {
    if (!channel) return;
    const targets = listeners.get(channel)?.map((n) => `svc:${n}`) ?? [add({ id: `ch:${channel}`, kind: 'channel', label: channel, detail: 'no listener on this node' })];
    for (const to of targets) edges.push({ id: `e${edges.length}`, from, to, label, channel, ...(secondary ? { secondary } : {}) });
  };
  const fromSource = (node: FlowNode, to: string, label: string): void => {
    edges.push({ id: `e${edges.length}`, from: add(node), to, label });
  };

  for (const s of services) {
    const id = `svc:${s.name}`;
    const c = s.config;
    const status = s.status();
    switch (s.kind) {
      case 'gateway': {
        fromSource({ id: `src:http:${s.name}`, kind: 'source', label: `HTTP :${text(status.port ?? c.Port)}`, detail: 'clients' }, id, 'requests');
        for (const r of parseRoutes(text(c.Routes)).entries) toChannel(id, r.value, r.pattern);
        toChannel(id, text(c.OUTPUTCHANNEL), 'no route matched');
        break;
      }
      case 'queue':
        toChannel(id, text(c.DefaultChannel), 'delivers');
        toChannel(id, text(c.DefaultDeadLetterSlap), 'dead letters');
        break;
      case 'syslog':
        if (c.UDP === true || c.TCP === true || c.TLS === true) {
          const over = [c.UDP === true ? 'UDP' : '', c.TCP === true ? 'TCP' : '', c.TLS === true ? 'TLS' : ''].filter(Boolean).join('/');
          fromSource({ id: `src:syslog:${s.name}`, kind: 'source', label: `syslog ${over} :${text(status.udpPort ?? status.tcpPort ?? c.Port)}`, detail: 'senders' }, id, 'received');
          toChannel(id, text(c.OUTPUTCHANNEL), 'messages');
        }
        if (text(c.RemoteIP) && (c.SendUDP === true || c.SendTCP === true || c.SendTLS === true)) {
          edges.push({ id: `e${edges.length}`, from: id, to: add({ id: `ext:syslog:${s.name}`, kind: 'external', label: `${text(c.RemoteIP)}:${text(c.RemotePort)}`, detail: 'syslog server' }), label: 'sends' });
        }
        break;
      case 'sql':
        if (c.SQL_POLLMODE === true) {
          fromSource({ id: `src:poll:${s.name}`, kind: 'source', label: `every ${Math.round(Number(c.SQL_POLLINTERVAL) / 1000)} s`, detail: 'poll timer' }, id, 'polls');
          toChannel(id, text(c.OUTPUTCHANNEL), 'polled rows');
        }
        break;
      case 'httpclient':
        if (text(c.URL)) edges.push({ id: `e${edges.length}`, from: id, to: add({ id: `ext:http:${originOf(text(c.URL))}`, kind: 'external', label: originOf(text(c.URL)), detail: 'HTTP server' }), label: text(c.Method) || 'requests' });
        break;
      default:
        break;
    }
    if (text(c.Template).startsWith('hive://')) toChannel(id, text(c.TemplateChannel), 'templates', true);
  }
  return { nodes: [...nodes.values()], edges };
}
