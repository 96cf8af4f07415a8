/**
 * Running a node from the command line: start, print what runs, drain on SIGTERM/SIGINT and exit 0
 * within 10 s; configuration errors exit 2 with the message.
 */
import type { HiveNode, NodeOptions } from '../node/node.js';
import { ConfigError, ListenError } from '../protocol/errors.js';
import { compileTracing } from '../config/tracing.js';
import { importModule } from '../protocol/import-module.js';
import { PACKAGE_VERSION } from './package-info.js';

const DRAIN_MS = 8_000;
const HARD_EXIT_MS = 10_000;

/** Prints the services of a started node. */
function describeNode(node: HiveNode): string {
  const lines = [
    `hivenode ${PACKAGE_VERSION}: node running ${node.services.length} service(s) on the ${node.hive.kind === 'memory' ? 'embedded' : 'NATS'} hive`,
  ];
  for (const s of node.services) {
    const { port, tls } = s.running.status();
    const where = s.channel
      ? `listens on '${s.channel}'`
      : typeof port === 'number'
        ? `serves ${tls === true ? 'HTTPS' : 'HTTP'} on port ${port}`
        : '';
    lines.push(`  ${s.kind.padEnd(10)} ${s.release.padEnd(7)} ${s.name.padEnd(16)} ${where}`.trimEnd());
  }
  if (node.dashboard)
    lines.push(
      `  console on port ${node.dashboard.port}: pages /, /flow, /queues, /journal, /config (JSON /api/..., Prometheus /metrics)`,
    );
  return lines.join('\n');
}

/** Exits 2 with the message for configuration errors; rethrows anything else. */
export function exitOnConfigError(e: unknown): never {
  if (e instanceof ConfigError) {
    console.error(`hivenode: ${e.message}`);
    process.exit(ConfigError.EXIT_CODE);
  }
  throw e;
}

export interface RunOptions {
  /** Runs once the node has started (the demo's calls). */
  onStarted?: (node: HiveNode) => Promise<void>;
  /** A better hint for a listener that cannot open, where the caller knows where its port came from. */
  listenHint?: (e: ListenError) => string | undefined;
  /** Installs what SIGHUP does (a node run from a file re-reads it: bin/reload.ts); returns its removal. */
  onHangup?: (node: HiveNode) => () => void;
}

/** Starts a node and keeps it running until a signal; resolves with the node once started. */
export async function runNode(opts: NodeOptions, run: RunOptions = {}): Promise<HiveNode> {
  // Signal handlers come first, so a signal during start-up still drains and exits cleanly.
  let node: HiveNode | undefined;
  let signalled: string | undefined;
  // a node of in-process services alone has no open handle: keep the process up until a signal
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const shutdown = (signal: string): void => {
    if (!node) {
      signalled = signal;
      return;
    }
    // printed directly: log lines are written asynchronously and could be cut off by the exit
    console.error(`hivenode: ${signal} received: draining in-flight work`);
    setTimeout(() => {
      console.error('hivenode: drain did not finish in time, exiting');
      process.exit(1);
    }, HARD_EXIT_MS).unref();
    clearInterval(keepAlive);
    node.stop(DRAIN_MS).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  // SIGHUP's default action ends the process at once, without a drain or a word: an operator who sends
  // it (as to nginx or Vector) expects a reload. Until the node runs (and for a service started from
  // the command line, which has no file to re-read) it is said so and the node keeps going.
  const noReload = (): void =>
    console.error(
      `hivenode: SIGHUP received: ${run.onHangup ? 'the node is still starting; send it again once it runs' : 'a service started from the command line has no node file to re-read; run it from a node file (hivenode run <file>) to reload it'}`,
    );
  process.on('SIGHUP', noReload);
  try {
    // imported here: the command line's other commands never load the node and its actors; the
    // standard OTEL_* variables, unless the caller compiled a node file's tracing section with them
    const { HiveNode } = await importModule(import.meta.url, '../node/node.js', () => import('../node/node.js'));
    node = await HiveNode.start({
      version: PACKAGE_VERSION,
      ...opts,
      tracing: opts.tracing ?? compileTracing(process.env),
    });
  } catch (e) {
    const hint = e instanceof ListenError ? run.listenHint?.(e) : undefined;
    exitOnConfigError(hint === undefined ? e : (e as ListenError).withHint(hint));
  }
  if (signalled) {
    shutdown(signalled);
    return node;
  }
  if (run.onHangup) {
    process.off('SIGHUP', noReload);
    const stopReloads = run.onHangup(node);
    process.once('SIGTERM', stopReloads);
    process.once('SIGINT', stopReloads);
  }
  console.log(describeNode(node));
  if (run.onStarted) await run.onStarted(node);
  return node;
}
