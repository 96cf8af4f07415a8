/** Queue service parameters, as the service specification lists them (service parameters table); README, Parameter reference prints them (and README, The queue says what they do). */
import {
  GENERAL_PARAMS,
  INPUT_PARAMS,
  OUTPUT_PARAMS,
  TEMPLATE_BUDGET_PARAMS,
  TEMPLATE_DEBUG_PARAMS,
} from './common.js';
import type { ParamTable } from './params.js';

/** Which failed deliveries the queue retries (RetryOn). */
export const RetryOn = {
  /** Every failure, as the spec says (README, The queue). */
  Any: 'any',
  /** Only failures protocol/codes.ts calls retryable; a final answer makes the entry a dead letter at once. */
  Retryable: 'retryable',
} as const;
export type RetryOn = (typeof RetryOn)[keyof typeof RetryOn];

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const QUEUE_OWN = [
  { name: 'TemplateChannel', type: 'string', default: 'DefaultStorageChannel', description: 'Hive channel from which templates are fetched.' },
  { name: 'DefaultChannel', type: 'string', default: 'main', description: 'Channel queued items are sent to.' },
  { name: 'DefaultCommand', type: 'string', default: 'queue', description: 'Command when no command control is given.' },
  { name: 'DefaultMode', type: 'enum', default: 'call', values: ['call', 'execute'], description: 'Mode when no mode control is given.' },
  { name: 'DefaultTemplateDefine', type: 'string', default: '', description: 'Define name when the controls give none.' },
  { name: 'DefaultDeadLetterSlap', type: 'string', default: '', description: 'Dead-letter target; empty means dead entries are not handed on: they stay in the dead set for DeadRetention, then are dropped.' },
  { name: 'AllowedChannels', type: 'string', default: '', beyondSpec: true, description: "Channels an entry may be delivered or handed to as a dead letter, comma-separated, whoever enqueued it: a `channel` or `deadletter_slap` control (or a replay's `channel` edit) naming another is refused with 403 naming it. Empty allows DefaultChannel and DefaultDeadLetterSlap; '*' allows any (the behaviour before this parameter)." },
  { name: 'Store', type: 'enum', default: 'sqlite', values: ['sqlite', 'jetstream'], beyondSpec: true, description: "Where entries are kept: 'sqlite' (a file in PersistPath, one process) or 'jetstream' (a replicated stream of the NATS hive, shared by the queues of this NAME on every node; refused on the embedded hive)." },
  { name: 'Replicas', type: 'int', default: '1', min: 1, max: 5, beyondSpec: true, description: 'Store jetstream: servers holding a copy of the stream, 1, 3 or 5; an enqueue is answered once a majority of them stored it. 3 survives the loss of one machine.' },
  { name: 'Durability', type: 'enum', default: '', values: ['replicated', 'fsync', 'journal'], beyondSpec: true, description: "Store jetstream: when an enqueue is answered. 'replicated': once a majority of the Replicas hold it in memory (a power cut of every server loses what they had not made durable yet: measured on nats-server 2.9.10, records up to 200 s old); 'fsync': once the servers fsynced it (needs nats-server 2.10 or later with sync_interval: always; refused at start on an older server); 'journal': the holding node also fsyncs it to a journal in PersistPath and publishes it again after a NATS outage, a lost stream leader or its own restart. Empty: 'journal' unless the servers are shown to fsync (README, Durability of the queue on JetStream)." },
  { name: 'AckWait', type: 'duration', default: '30s', beyondSpec: true, description: 'Store jetstream: when the node holding the queue dies, the entries it was delivering are delivered again by the node taking over once this long has passed since it last reported them.' },
  { name: 'PersistPath', type: 'string', default: '<OS temp directory>/platform_queue', description: 'Local storage path for persistence; empty means no persistence.' },
  { name: 'DefaultRequeueTime', type: 'int', default: '30', min: 0, max: 31_622_400, description: 'Seconds to wait before a failed entry is retried.' },
  { name: 'DefaultRequeueSchedule', type: 'string', default: '', beyondSpec: true, description: "Waits between attempts, one per retry, separated by commas (5s,5m,30m,2h,5h,10h,10h: Svix's schedule); an entry failing past the last is dead. Used for entries that give none of requeue_schedule, requeue_timer and requeue_count; empty: DefaultRequeueTime and DefaultRequeueCount." },
  { name: 'DefaultRequeueCount', type: 'int', default: '3', min: 0, max: 1_000_000, description: 'Retries after which the entry becomes a dead letter.' },
  { name: 'Template', type: 'string', default: '', description: "Queue template to use: 'file://<path>', 'hive://<name>' or an inline string." },
  { name: 'StartPaused', type: 'bool', default: 'false', description: 'Queue starts paused.' },
  { name: 'AutoPause', type: 'bool', default: 'false', description: 'Queue switches to paused after a completed queue run.' },
  { name: 'Capacity', type: 'int', default: '1000000', min: 1, beyondSpec: true, description: 'Most entries the queue holds; adding beyond it is answered 507.' },
  { name: 'StoreRecovery', type: 'enum', default: 'refuse', values: ['refuse', 'salvage'], beyondSpec: true, description: "What a start does with a SQLite store that fails to open or its integrity check: 'refuse' stops the start with one line naming the file and the command that recovers it (hivenode queue salvage <dir>); 'salvage' runs that salvage itself (every row that still reads goes into a new store, the damaged file is kept beside it), logs a WARN with the counts, journals it and starts." },
  { name: 'MaxStoreBytes', type: 'int', default: '0', min: 0, beyondSpec: true, description: 'Largest size of the store file in bytes (0: no limit); a full store answers 507 and acknowledges nothing.' },
  { name: 'CallTimeout', type: 'duration', default: '30s', beyondSpec: true, description: 'How long a delivery waits for the target channel to answer (call) or acknowledge (execute).' },
  { name: 'DeliveryConcurrency', type: 'int', default: '1', min: 1, max: 1024, beyondSpec: true, description: 'Entries delivered at once (with BatchSize above 1: batches, each one delivery); 1 keeps strict FIFO order of delivery.' },
  { name: 'RequeueBackoff', type: 'enum', default: 'fixed', values: ['fixed', 'exponential'], beyondSpec: true, description: "'fixed' waits requeue_timer between attempts (the spec); 'exponential' doubles it each attempt with +-20% jitter." },
  { name: 'DedupWindow', type: 'duration', default: '24h', beyondSpec: true, description: "How long an enqueue's idempotency-key control is remembered: a second enqueue with the same key within it creates nothing and is answered with the first entry's key; 0 turns deduplication off (the control is then ignored)." },
  { name: 'DeadLetterRetries', type: 'int', default: '10', min: 0, max: 1000, beyondSpec: true, description: "Retries of a dead entry's hand-over to its dead-letter target after the first is refused, waits doubling from 1 s to 60 s (10: about 5 minutes); then the entry stays in the dead set and one line is logged. A replay, purge or delete of the entry ends its hand-over." },
  { name: 'DeadRetention', type: 'duration', default: '30d', beyondSpec: true, description: "How long a dead entry is kept in the dead set (state 'dead': list, fetch, replay, purge) once handed to its dead-letter target, or at once without one (d = 24 h); 0 keeps none (removed after the hand-over, dropped without a target)." },
  { name: 'DoneRetention', type: 'duration', default: '0s', beyondSpec: true, description: "How long a delivered entry is kept with state 'done' and its attempt history (list, fetch, purge); 0 keeps none: a delivered entry is removed at once." },
  { name: 'GroupBy', type: 'string', default: '', beyondSpec: true, description: "Groups entries for GroupConcurrency and GroupRate by an entry attribute (channel, mode, class, operation) or the first value of a Data field (an entry without the field is in group ''); empty turns group limits off. A group at its limit never holds up another group." },
  { name: 'GroupConcurrency', type: 'int', default: '0', min: 0, max: 1024, beyondSpec: true, description: 'Entries of one group (GroupBy) delivered at once; 0 = unlimited. With DeliveryConcurrency 1 each group stays in strict FIFO order.' },
  { name: 'GroupRate', type: 'string', default: '', beyondSpec: true, description: "Deliveries of one group (GroupBy) started per window, as <count>/<window> such as 10/s, 600/1m or 5/10s: a token bucket holding up to <count> (the burst); empty = unlimited." },
  { name: 'Fairness', type: 'enum', default: 'fifo', values: ['fifo', 'weighted'], beyondSpec: true, description: "How the groups of GroupBy share the deliveries: 'fifo' takes the oldest waiting entry of any group free to start; 'weighted' takes the groups round-robin, weighted by GroupWeights, so a flood in one group does not hold up another's few entries (README, Priorities and fairness)." },
  { name: 'GroupWeights', type: 'string', default: '', beyondSpec: true, description: "Fairness weighted: each group's share as <group>=<weight> pairs separated by ';', '*' for every other group (default 1), such as tenant-a=3;*=1: tenant-a gets 3 deliveries for every 1 of another busy group. Weights are whole numbers from 1 to 1000." },
  { name: 'GroupOrder', type: 'enum', default: '', values: ['strict', 'skip-dead'], beyondSpec: true, description: "Order within each group of GroupBy: '' (none beyond GroupConcurrency); 'strict' delivers one entry of a group at a time in arrival order, later entries wait while one retries, and a dead entry holds its group until it is replayed or purged (README, Strict order per group); 'skip-dead' is strict while an entry retries and lets the group go on once it is dead." },
  { name: 'DefaultPriority', type: 'int', default: '0', min: 0, max: 9, beyondSpec: true, description: 'Priority of an entry without the priority control: 0 to 9, higher delivered first; entries of one priority keep their arrival order.' },
  { name: 'PageHorizon', type: 'duration', default: '10m', beyondSpec: true, description: "Entries waiting for a time (retrying, scheduled) due later than this from now are held in the SQLite store only, counted by state, and read into memory as their time comes near or a command needs them: memory holds the entries near delivery, not a whole backlog; 0 holds every entry in memory. Store jetstream always holds every entry in memory." },
  { name: 'Breaker', type: 'string', default: '', beyondSpec: true, description: "Circuit breaker per target channel: expressions over the last window of deliveries to a channel, separated by ';', any of which opens its breaker: errors>50%/30s,min=20 (more than 50% of the deliveries of the last 30 s failed with a 5xx, 408, 425 or 429, once at least min were made; min defaults to 10) or latency.p99>2s/30s (p50 to p999). While open, entries to the channel wait without spending attempts; empty: no breaker opens by itself (the breaker command still opens one)." },
  { name: 'BreakerOpenFor', type: 'duration', default: '30s', beyondSpec: true, description: 'How long an opened breaker stays open before it half-opens and sends probes (one entry at a time); a failed probe opens it again for as long.' },
  { name: 'BreakerProbes', type: 'int', default: '3', min: 1, max: 1000, beyondSpec: true, description: 'Successful probes in a row that close a half-open breaker; its held entries then go out in their FIFO order.' },
  { name: 'DisableAfter', type: 'duration', default: '0s', beyondSpec: true, description: "Failures to a channel without a break for this long (5d: every delivery and probe a 5xx, 408, 425 or 429 since) disable it: its entries wait, kept, until an operator resumes it (command resume with control channel, or the console), and one message goes to AlertChannel; 0 never disables." },
  { name: 'AlertChannel', type: 'string', default: '', beyondSpec: true, description: 'Where the one message about a channel disabled by DisableAfter is sent (execute): any service (syslog, an HTTP client, echo); Data queue, channel, reason, held, failing_since. Empty: the WARN line and the journal only.' },
  { name: 'BatchSize', type: 'int', default: '1', min: 1, max: 10_000, beyondSpec: true, description: "Waiting entries for one channel (and one group, with GroupBy) delivered as one message: Data holds each entry's fields as parallel lists (the shape SQL_BATCH reads), Control keys the entries' keys in order; the target may answer Data codes, one per key, so each entry succeeds, retries or dies alone (README, Batches). 1: no batches." },
  { name: 'BatchWindow', type: 'duration', default: '0s', beyondSpec: true, description: 'BatchSize above 1: how long a batch that is not full waits for more entries before it is delivered anyway, counted from when its first entry could have gone; 0s delivers what is waiting when a delivery can start.' },
  { name: 'RetryOn', type: 'enum', default: RetryOn.Any, values: [RetryOn.Any, RetryOn.Retryable], beyondSpec: true, description: "'any' retries every failed delivery (the spec); 'retryable' retries only Codes 408, 425, 429, 500, 502, 503, 504 and 507, and on a NATS hive a channel nobody serves (404 no listener: its node may be restarting): any other failure (400, 403, 404 from the target or for no listener on the embedded hive, 409, 413, 422, ...) makes the entry a dead letter at once." },
] as const satisfies ParamTable;

export const QUEUE_PARAMS = [
  ...GENERAL_PARAMS,
  ...INPUT_PARAMS,
  ...OUTPUT_PARAMS,
  ...TEMPLATE_DEBUG_PARAMS,
  ...QUEUE_OWN,
  ...TEMPLATE_BUDGET_PARAMS,
] as const satisfies ParamTable;

/** Queue controls of README, The queue with their control-table defaults (used when a control is given without value). */
export const QUEUE_CONTROL_DEFAULTS = {
  command: 'queue',
  channel: 'main',
  mode: 'call',
  template_define: 'default',
  requeue_timer: '10',
  requeue_count: '3',
  deadletter_slap: 'dead_letter',
} as const;
