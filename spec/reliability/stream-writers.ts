/**
 * Who wrote a queue's stream (docs/ARCHITECTURE.md, The queue on JetStream): the records of its log
 * topic, read from the servers, must form one chain — each appended after the record before it (the
 * position its Hivenode-After header names, actors/hive/nats-log.ts). A record appended after an older
 * position was written by a node that had not seen its predecessor: a second writer. The fence is what
 * refuses such a write; here it becomes visible to a test.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { AFTER_HEADER } from '../../actors/hive/nats-log.js';
import { sharedNameWord } from '../../actors/hive/transport.js';
import type { NatsCluster } from '../adapters/nats/cluster.js';

/** A record that does not follow the one before it in the stream. */
export interface Break {
  seq: number;
  /** The position its writer appended it after. */
  after: number;
  /** The position of the record before it in the stream. */
  previous: number;
}

export interface StreamWriters {
  /** Records of the log topic still in the stream. */
  records: number;
  /**
   * Records appended after an older position than the record before them: their writer had not seen
   * that record — a second writer, which the fence exists to refuse.
   */
  breaks: Break[];
  /**
   * Records appended after a newer position than the record before them: their writer had been told a
   * record was stored there that this copy of the stream does not hold — the servers lost an
   * acknowledged write (or moved the records after it), not a second writer.
   */
  gaps: Break[];
}

/** Reads the log topic of queue `name`'s stream from `cluster` and checks that it is one chain. */
export async function streamWriters(cluster: NatsCluster, name: string): Promise<StreamWriters> {
  const word = sharedNameWord(name);
  const stream = `HIVENODE_LOG_queue_${word}`;
  const subject = `hivenode.log.queue_${word}.log`;
  const nc = await connect({ servers: cluster.servers.map((s) => s.url), token: cluster.token });
  try {
    const jsm = await jetstreamManager(nc);
    const end = (await jsm.streams.info(stream)).state.last_seq;
    const result: StreamWriters = { records: 0, breaks: [], gaps: [] };
    let previous: number | undefined;
    for (let next = 1; next <= end;) {
      const m = await jsm.streams.getMessage(stream, { seq: next, next_by_subj: subject } as never).catch(() => null);
      if (!m || m.seq > end) break;
      const after = Number(m.header?.get(AFTER_HEADER) ?? NaN);
      // the first record still there follows records purged by a compaction: nothing to compare with
      if (previous !== undefined && after < previous) result.breaks.push({ seq: m.seq, after, previous });
      else if (previous !== undefined && after > previous) result.gaps.push({ seq: m.seq, after, previous });
      previous = m.seq;
      result.records++;
      next = m.seq + 1;
    }
    return result;
  } finally {
    await nc.close();
  }
}
