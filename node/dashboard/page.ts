/**
 * The dashboard page, rendered with eta (escaping on): the node, each service with its figures, the
 * actor tree with restart counts and last crashes, and the latest supervision journal lines. It
 * refreshes itself every two seconds.
 */
import { Eta } from 'eta';
import { figureTexts } from './figures.js';
import type { NodeStatus } from './status.js';

const eta = new Eta({ autoEscape: true, useWith: false });

const TEMPLATE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>hivenode — <%= it.node.name %></title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5rem;color:#222} h1{font-size:1.3rem} h2{font-size:1.05rem;margin-top:1.5rem}
table{border-collapse:collapse} td,th{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
.num{text-align:right} .bad{color:#b00020;font-weight:600} .ok{color:#1b7f3b} code{font-size:12px}
</style></head><body>
<h1>hivenode <%= it.node.version %> — <%= it.node.name %> (pid <%= it.node.pid %>)</h1>
<p>up <%= it.node.uptimeSeconds %> s · memory <%= Math.round(it.node.rssBytes / 1048576) %> MiB ·
hive <%= it.hive.kind %> <span class="<%= it.hive.connected ? 'ok' : 'bad' %>"><%= it.hive.connected ? 'connected' : 'disconnected' %></span>
· calls <%= it.hive.calls %> · failures <%= it.hive.failures %> · dropped emits <%= it.hive.dropped %></p>
<h2>Services</h2>
<table id="services"><tr><th>service</th><th>kind</th><th>release</th><th>channel</th><th>figures</th></tr>
<% it.services.forEach(function (s) { %><tr data-service="<%= s.name %>"><td><%= s.name %></td><td><%= s.kind %></td><td><%= s.release %></td><td><%= s.channel %></td>
<td class="figures"><% s.figures.forEach(function (f) { %><div><%= f %></div><% }) %></td></tr><% }) %>
</table>
<h2>Actor tree</h2>
<table id="actors"><tr><th>actor</th><th class="num">mailbox</th><th class="num">restarts</th><th>state</th><th>last crash</th></tr>
<% function row(a, depth) { %><tr data-actor="<%= a.path %>"><td style="padding-left:<%= 0.6 + depth * 1.2 %>rem"><%= a.name %></td><td class="num"><%= a.mailbox %></td>
<td class="num restarts<%= a.restarts > 0 ? ' bad' : '' %>"><%= a.restarts %></td><td><%= a.stopped ? 'stopped' : 'running' %></td>
<td><%= a.lastCrash ? a.lastCrash.time + ' ' + a.lastCrash.class + ': ' + a.lastCrash.message : '' %></td></tr>
<% a.children.forEach(function (c) { row(c, depth + 1) }) } it.actors.forEach(function (a) { row(a, 0) }) %>
</table>
<h2>Supervision journal (latest first)</h2>
<table id="journal"><tr><th>time</th><th>event</th><th>actor</th><th>details</th></tr>
<% it.journal.slice().reverse().slice(0, 50).forEach(function (e) { %><tr><td><%= e.time %></td><td><%= e.event %></td><td><%= e.path %></td>
<td><%= e.error ? e.error.class + ': ' + e.error.message : '' %> <%= e.decision ? 'decision ' + e.decision : '' %> <%= e.delayMs !== undefined ? 'after ' + e.delayMs + ' ms' : '' %></td></tr><% }) %>
</table>
<p><a href="/api/status">/api/status</a> · <a href="/metrics">/metrics</a></p>
</body></html>`;

export function renderPage(status: NodeStatus): string {
  return eta.renderString(TEMPLATE, { ...status, services: status.services.map((s) => ({ ...s, figures: figureTexts(s.status) })) });
}
