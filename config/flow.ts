/**
 * Flow service parameters (README, Flows): a durable run of named steps per message, kept where the
 * queue keeps its entries (PersistPath, Store), with the queue's commands over its runs.
 */
import { GENERAL_PARAMS, INPUT_PARAMS, OUTPUT_PARAMS, TEMPLATE_BUDGET_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const FLOW_OWN = [
  { name: 'Definition', type: 'string', mandatory: true, beyondSpec: true, description: "The flow's steps, YAML or JSON (README, Flows): 'file://<path>', 'hive://<name>' (from TemplateChannel) or the definition itself; checked at start (hivenode flow check)." },
  { name: 'TemplateChannel', type: 'string', default: 'DefaultStorageChannel', beyondSpec: true, description: "Hive channel a 'hive://' Definition is fetched from." },
  { name: 'Store', type: 'enum', default: 'sqlite', values: ['sqlite', 'jetstream'], beyondSpec: true, description: "Where runs are kept, as a queue's entries: 'sqlite' (a file in PersistPath, one process) or 'jetstream' (a replicated stream of the NATS hive, shared by the flows of this NAME on every node: one node holds the flow, another takes it over and resumes every run at its step; refused on the embedded hive)." },
  { name: 'Replicas', type: 'int', default: '1', min: 1, max: 5, beyondSpec: true, description: "Store jetstream: servers holding a copy of the runs' stream, 1, 3 or 5; a run's write is durable once a majority of them stored it. 3 survives the loss of one machine." },
  { name: 'Durability', type: 'enum', default: '', values: ['replicated', 'fsync', 'journal'], beyondSpec: true, description: "Store jetstream: when a run's write counts as durable, as the queue's (README, Durability of the queue on JetStream). 'replicated': once a majority of the Replicas hold it in memory; 'fsync': once the servers fsynced it (nats-server 2.10 or later with sync_interval: always; refused at start on an older server); 'journal': the holding node also fsyncs it to a journal in PersistPath and publishes it again after a NATS outage, a lost stream leader or its own restart. Empty: 'journal' unless the servers are shown to fsync." },
  { name: 'AckWait', type: 'duration', default: '30s', beyondSpec: true, description: 'Store jetstream: when the node holding the flow dies, the runs it had a step under way for send that step again from the node taking over once this long has passed since it last reported them.' },
  { name: 'PersistPath', type: 'string', default: '<OS temp directory>/platform_flow', beyondSpec: true, description: "Directory of the run store (a subdirectory per NAME); every run's position and kept step Results are fsynced there before its next step starts. Empty: runs are kept in memory only and lost when the process stops. Store jetstream keeps the runs in the hive and here only the journal of Durability journal." },
  { name: 'StoreRecovery', type: 'enum', default: 'refuse', values: ['refuse', 'salvage'], beyondSpec: true, description: "What a start does with a run store that fails to open or its integrity check: 'refuse' stops the start with one line naming the file and the command that recovers it (hivenode flow salvage <dir>); 'salvage' runs that salvage itself (every run that still reads goes into a new store, the damaged file is kept beside it), logs a WARN with the counts, journals it and starts." },
  { name: 'MaxRuns', type: 'int', default: '100', min: 1, max: 100000, beyondSpec: true, description: 'Runs executing a step at once; further runs wait (state waiting) in arrival order. A run in a wait step or between retries holds no place.' },
  { name: 'PageHorizon', type: 'duration', default: '10m', beyondSpec: true, description: "Runs waiting (a wait step, a retry's pause) until later than this from now are held in the SQLite store only, counted, and read into memory as their time comes near or a command names them: memory holds the runs near their next step, not every run waiting; 0 holds every run in memory." },
  { name: 'RunRetention', type: 'duration', default: '7d', beyondSpec: true, description: "How long a finished run (succeeded, failed, cancelled) is kept for status, list, fetch and replay; 0 removes it as it ends." },
  { name: 'DefaultTimeout', type: 'duration', default: '30s', beyondSpec: true, description: 'How long a step waits for its channel to answer (call) or acknowledge (execute) when the step gives no timeout.' },
  { name: 'AnswerWithin', type: 'duration', default: '25s', beyondSpec: true, description: "How long a run started by a call may take before the caller is answered 202 with the run's key (the run goes on); keep it below the callers' own timeouts." },
  { name: 'DedupWindow', type: 'duration', default: '24h', beyondSpec: true, description: "How long a start's idempotency-key control is remembered: a second start with the same key answers the first run's key and starts nothing; 0 turns it off." },
  { name: 'AllowedChannels', type: 'string', default: '', beyondSpec: true, description: "Channels a step may reach, comma-separated, when its channel is a template: empty allows the channels the Definition names literally plus INPUTCHANNEL and OUTPUTCHANNEL; '*' allows any. A step rendering another channel fails with 403 naming it." },
] as const satisfies ParamTable;

export const FLOW_PARAMS = [
  ...GENERAL_PARAMS,
  ...INPUT_PARAMS,
  ...OUTPUT_PARAMS,
  ...FLOW_OWN,
  ...TEMPLATE_BUDGET_PARAMS,
] as const satisfies ParamTable;
