/**
 * The shared log of the NATS hive (transport.ts SharedLog): one JetStream stream per log, named
 * HIVENODE_LOG_<name>, holding the subjects hivenode.log.<name>.<topic>. Appends are JetStream
 * publishes, acknowledged by the stream's leader once a majority of its replicas stored them (Raft);
 * a fenced append is a publish with an expected last subject sequence. Reads ask the stream for its
 * records one by one; a count goes through a short-lived consumer of its own (its pending count).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { headers } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { randomUUID } from 'node:crypto';
import { ConfigError, StorageFullError, UnavailableError, describeError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';
import type { LogRecord, SharedLog, SharedLogOptions } from './transport.js';
import { LogFencedError } from './transport.js';

/** Records handed to a reader at once. */
const READ_CHUNK = 1_000;
/** A read's consumer goes away by itself this long after its reader stopped asking (a reader that died). */
const READER_IDLE_NS = 60 * 1e9;

const LOG_NAME = /^[A-Za-z0-9_-]{1,200}$/;

function isWrongSequence(e: unknown): boolean {
  return /wrong last sequence|10071/i.test(describeError(e));
}

/**
 * The header each fenced record carries: the position it was appended after. The server checks that
 * position (the expected last subject sequence) and does not keep the check with the record; this
 * header keeps it, so a reader can tell that the records of a topic form one chain, each after the one
 * before it — one writer at a time (spec/reliability/stream-writers.ts reads it).
 */
export const AFTER_HEADER = 'Hivenode-After';

/**
 * TEST ONLY: the partition and pause tests (spec/reliability/pause.spec.ts) set
 * HIVENODE_TEST_BROKEN_NO_FENCING=1 to build the log deliberately broken — appends no longer ask the
 * server to check the position they follow — and show that their test then sees two writers in one
 * stream; nothing else may set it.
 */
const FENCING = process.env.HIVENODE_TEST_BROKEN_NO_FENCING !== '1';

/** How long an append is tried again while the stream has no leader. */
const APPEND_RETRY_MS = 15_000;

/** No leader to answer now (one is being elected, or the server's link is down): worth another try. */
function isElecting(e: unknown): boolean {
  return /no responders|not enabled|timeout|timed out|disconnect|stream.*(unavailable|offline)|10008/i.test(
    describeError(e),
  );
}

/** A read the stream could not answer now is a 503 (UnavailableError): its reader may try again. */
async function answered<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isElecting(e) && !(e instanceof UnavailableError))
      throw new UnavailableError(`${what}: ${describeError(e)}`, { cause: e });
    throw e;
  }
}

/** A get that found no such record answers null, as the client answers it for some servers. */
function notFound(e: unknown): null {
  if (/no message found|10037|not found/i.test(describeError(e))) return null;
  throw e;
}

function isFull(e: unknown): boolean {
  return /maximum bytes|insufficient (storage )?resources|10047|storage limit/i.test(describeError(e));
}

/** The publish options of an append after `after`: the server refuses it unless the topic's last record is there. */
function fenced(after: number): { expect?: { lastSubjectSequence: number }; headers: ReturnType<typeof headers> } {
  const h = headers();
  h.set(AFTER_HEADER, String(after));
  return FENCING ? { expect: { lastSubjectSequence: after }, headers: h } : { headers: h };
}

/**
 * A JetStream cluster that is still electing its meta leader (servers started a moment before the
 * node: examples/three-machines, a restart of every server) times its requests out rather than
 * refusing them: the node waits for it this long, saying so once, before the start fails.
 */
const JETSTREAM_READY_MS = 30_000;

async function jetstreamWhenReady(nc: NatsConnection, log: Logger): Promise<JetStreamManager> {
  const until = Date.now() + JETSTREAM_READY_MS;
  let told = false;
  for (;;) {
    try {
      return await jetstreamManager(nc);
    } catch (e) {
      // JetStream off answers at once (no responders); only a timeout may be a cluster still forming
      if (!/timeout/i.test(describeError(e)) || Date.now() > until)
        throw new ConfigError(
          `JetStream is not available on the NATS hive (${describeError(e)}): enable it in the nats-server configuration (jetstream { store_dir: … })`,
        );
      if (!told)
        log.info(
          `JetStream does not answer yet (${describeError(e)}): waiting up to ${JETSTREAM_READY_MS / 1000} s for its servers to elect a leader`,
        );
      told = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export class NatsSharedLog implements SharedLog {
  private readonly stream: string;
  private readonly prefix: string;
  readonly maxRecordBytes: number;

  readonly servers: { version: string; persistMode?: string };
  identity = '';

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    name: string,
    maxPayload: number,
  ) {
    this.stream = `HIVENODE_LOG_${name}`;
    this.prefix = `hivenode.log.${name}.`;
    // the publish carries a few headers beside the record
    this.maxRecordBytes = maxPayload - 1024;
    this.servers = { version: nc.info?.version ?? '0.0.0' };
  }

  onReconnect(listener: () => void): () => void {
    const status = this.nc.status();
    let stopped = false;
    void (async () => {
      for await (const s of status) {
        if (stopped) break;
        if (s.type === 'reconnect') listener();
      }
    })();
    return () => {
      stopped = true;
      (status as { stop?: () => void }).stop?.();
    };
  }

  /**
   * Opens the log's stream, making it when it does not exist. An existing stream with another
   * replication is changed to the one asked for (JetStream moves the copies); a refusal — a single
   * server asked for 3 replicas, JetStream off — is a ConfigError naming the cause.
   */
  static async open(nc: NatsConnection, name: string, options: SharedLogOptions, log: Logger): Promise<NatsSharedLog> {
    if (!LOG_NAME.test(name)) throw new ConfigError(`shared log name '${name}' is not valid: use A-Z a-z 0-9 _ -`);
    const jsm = await jetstreamWhenReady(nc, log);
    const self = new NatsSharedLog(nc, jetstream(nc), jsm, name, nc.info?.max_payload ?? 1024 * 1024);
    const config: Partial<StreamConfig> & { name: string } = {
      name: self.stream,
      subjects: [`${self.prefix}>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: options.replicas,
      discard: DiscardPolicy.New,
      max_bytes: options.maxBytes > 0 ? options.maxBytes : -1,
    };
    const existing = await jsm.streams.info(self.stream).catch(() => undefined);
    try {
      // the stream's creation time tells it apart from one deleted and made again under its name
      if (!existing) self.identity = `${self.stream}@${(await jsm.streams.add(config)).created}`;
      else self.identity = `${self.stream}@${existing.created}`;
      if (
        existing &&
        (existing.config.num_replicas !== options.replicas || existing.config.max_bytes !== config.max_bytes)
      ) {
        log.info(
          `stream ${self.stream}: replicas ${existing.config.num_replicas} → ${options.replicas}, max bytes ${existing.config.max_bytes} → ${config.max_bytes}`,
        );
        await jsm.streams.update(self.stream, {
          ...existing.config,
          num_replicas: options.replicas,
          max_bytes: config.max_bytes,
        });
      }
    } catch (e) {
      const why = describeError(e);
      const hint = /replicas|cluster|insufficient resources|peer/i.test(why)
        ? `; ${options.replicas} replicas need a JetStream cluster of at least ${options.replicas} servers (give Replicas 1 on a single server)`
        : '';
      throw new ConfigError(`JetStream refused the stream ${self.stream} (${why})${hint}`);
    }
    // persist_mode exists from nats-server 2.12: 'async' acknowledges before writing
    const persistMode = (existing?.config as { persist_mode?: string } | undefined)?.persist_mode;
    if (persistMode) self.servers.persistMode = persistMode;
    return self;
  }

  /**
   * While the stream elects a leader (a server of its copies was lost: a few seconds) a publish
   * finds no responder or times out; it is sent again, with the same message id, so a first try that
   * was stored after all is recognised by JetStream as a duplicate and stored once.
   */
  async append(topic: string, data: Uint8Array, after?: number, id?: string): Promise<number> {
    const msgID = id ?? randomUUID();
    const until = Date.now() + APPEND_RETRY_MS;
    for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
      try {
        const ack = await this.js.publish(this.prefix + topic, data, {
          msgID,
          ...(after === undefined ? {} : fenced(after)),
        });
        return ack.seq;
      } catch (e) {
        if (after !== undefined && isWrongSequence(e))
          throw new LogFencedError(`another writer appended to ${topic} after position ${after}`);
        if (isFull(e))
          throw new StorageFullError(`the stream ${this.stream} is full: ${describeError(e)}`, { cause: e });
        if (!isElecting(e) || Date.now() + wait > until)
          throw new UnavailableError(`the stream ${this.stream} did not store the write: ${describeError(e)}`, {
            cause: e,
          });
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** A consumer of the matching records from `from` on, and how many of them there are now. */
  private async reader(pattern: string, from: number | undefined): Promise<{ name: string; pending: number }> {
    const info = await this.jsm.consumers.add(this.stream, {
      ack_policy: AckPolicy.None,
      filter_subject: this.prefix + pattern,
      ...(from !== undefined && from > 1
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }
        : { deliver_policy: DeliverPolicy.All }),
      inactive_threshold: READER_IDLE_NS,
      mem_storage: true,
      // one copy: a replicated consumer is a Raft group of its own, which cannot form while a
      // server of the stream's copies is lost (2.9 waits for it tens of seconds; measured)
      num_replicas: 1,
    });
    return { name: info.name, pending: info.num_pending };
  }

  read(pattern: string, onRecords: (records: LogRecord[]) => void | Promise<void>, from?: number): Promise<void> {
    return answered(`the stream ${this.stream} did not answer a read`, () => this.readAll(pattern, onRecords, from));
  }

  /**
   * Record by record, each asked of the stream's leader by position and topic (the next one matching
   * after the last): no consumer is made, so a read works as soon as the stream has a leader again
   * after a lost server — a consumer had to wait for the lost server tens of seconds on 2.9 (measured).
   * The records are batches of writes, so a log is not many records (the store compacts it).
   */
  private async readAll(
    pattern: string,
    onRecords: (records: LogRecord[]) => void | Promise<void>,
    from?: number,
  ): Promise<void> {
    const end = await this.end();
    let next = Math.max(1, from ?? 1);
    let records: LogRecord[] = [];
    while (next <= end) {
      const m = await this.jsm.streams
        .getMessage(this.stream, { seq: next, next_by_subj: this.prefix + pattern } as never)
        .catch(notFound);
      if (!m || m.seq > end) break;
      records.push({ seq: m.seq, topic: m.subject.slice(this.prefix.length), data: m.data });
      next = m.seq + 1;
      if (records.length === READ_CHUNK) {
        const full = records;
        records = [];
        await onRecords(full);
      }
    }
    if (records.length > 0) await onRecords(records);
  }

  count(pattern: string): Promise<number> {
    return answered(`the stream ${this.stream} did not answer a count`, async () => {
      const { name, pending } = await this.reader(pattern, undefined);
      await this.jsm.consumers.delete(this.stream, name).catch(() => undefined);
      return pending;
    });
  }

  async last(topic: string): Promise<LogRecord | undefined> {
    const m = await answered(`the stream ${this.stream} did not answer a read`, () =>
      this.jsm.streams.getMessage(this.stream, { last_by_subj: this.prefix + topic }).catch(notFound),
    );
    return m ? { seq: m.seq, topic, data: m.data } : undefined;
  }

  end(): Promise<number> {
    return answered(
      `the stream ${this.stream} did not answer`,
      async () => (await this.jsm.streams.info(this.stream)).state.last_seq,
    );
  }

  async purge(pattern: string, before?: number): Promise<number> {
    const r = await this.jsm.streams.purge(
      this.stream,
      before === undefined ? { filter: this.prefix + pattern } : { filter: this.prefix + pattern, seq: before },
    );
    return r.purged;
  }
}
