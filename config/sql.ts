/** SQL service parameters, as the service specification lists them; README, Parameter reference prints them (and README, The SQL service says what they do). */
import { GENERAL_PARAMS, INPUT_PARAMS, OUTPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const SQL_OWN = [
  { name: 'SQL_ENGINE', type: 'enum', default: 'sqlite', values: ['postgres', 'mysql', 'mariadb', 'mssql', 'oracle', 'sqlite'], beyondSpec: true, description: 'Database engine family (the spec releases one service per engine); sqlite is the embedded default, SQL_DATABASE is its file.' },
  { name: 'SQL_SERVER', type: 'string', default: '', description: 'Database host or IP.' },
  // the spec's default (3306) is MySQL's; each engine's usual port is its default (sqlite has none)
  { name: 'SQL_PORT', type: 'int', default: '3306', defaultBy: { param: 'SQL_ENGINE', values: { postgres: '5432', mysql: '3306', mariadb: '3306', mssql: '1433', oracle: '1521' } }, min: 1, max: 65535, description: 'Database port.' },
  { name: 'SQL_PROTOCOL', type: 'string', default: 'tcp', description: 'Connection protocol.' },
  { name: 'SQL_DATABASE', type: 'string', default: '', description: 'Existing database name.' },
  { name: 'SQL_USERNAME', type: 'string', default: '', description: 'Database user.' },
  { name: 'SQL_PASSWORD', type: 'string', default: '', secret: true, description: "Password of SQL_USERNAME; may be a 'file://<path>' secret reference." },
  { name: 'SQL_STATEMENT', type: 'string', default: '', ctrl: true, description: 'One of SELECT, INSERT, UPDATE, DELETE (and UPSERT beyond the spec: insert, or update where SQL_KEYCOLUMNS match).' },
  { name: 'SQL_TABLE', type: 'string', default: '', ctrl: true, description: 'Target table (SELECT, INSERT, UPDATE, DELETE).' },
  { name: 'SQL_COLUMNS', type: 'string', default: '', ctrl: true, description: "Comma-separated column list; '*' is used when empty (SELECT, INSERT, UPDATE)." },
  { name: 'SQL_JOIN', type: 'string', default: '', ctrl: true, description: 'Join clause text combining rows of several tables (SELECT).' },
  { name: 'SQL_WHERE', type: 'string', default: '', ctrl: true, description: 'Filter clause with placeholders written {{ name }}, each replaced by the Data parameter of that name (SELECT, UPDATE, DELETE).' },
  { name: 'SQL_VALUEPARAMS', type: 'string', default: '', ctrl: true, description: 'Comma-separated names of Data parameters supplying the values, in the same order as SQL_COLUMNS (INSERT, UPDATE).' },
  { name: 'SQL_KEYCOLUMNS', type: 'string', default: '', beyondSpec: true, description: 'UPSERT: comma-separated columns of SQL_COLUMNS that identify a row (a primary key or unique constraint); where a row with that key exists its other columns are updated, else the row is inserted.' },
  { name: 'SQL_BATCH', type: 'bool', default: 'false', beyondSpec: true, description: 'INSERT and UPSERT: each SQL_VALUEPARAMS field carries N values and N rows are written (row i takes value i of each field) in one transaction, all or none; the answer is affected N. Fields of unequal length are answered 400.' },
  { name: 'SQL_ROWCODES', type: 'bool', default: 'false', beyondSpec: true, description: "SQL_BATCH: a row the database refuses fails alone. The rows go in as few statements as before; only when those fail for a row's values (a 400) are the rows written again one by one in one transaction, each in its own savepoint. The answer carries Data codes (one per row: 200, or the refused row's Code) and messages, Code 207 when a row was refused: the shape a queue's batch reads (README, Batches)." },
  { name: 'SQL_MAXBATCH', type: 'int', default: '10000', min: 1, max: 1000000, beyondSpec: true, description: 'Most rows one SQL_BATCH message may carry; more is answered 413.' },
  { name: 'SQL_GROUPBY', type: 'string', default: '', ctrl: true, description: 'GROUP BY column list (SELECT; declared out of scope by the spec, implemented safely).' },
  { name: 'SQL_HAVING', type: 'string', default: '', ctrl: true, description: 'HAVING clause with {{ name }} placeholders (SELECT; declared out of scope by the spec, implemented safely).' },
  { name: 'SQL_ORDERBY', type: 'string', default: '', ctrl: true, description: 'ORDER BY column list with optional ASC/DESC (SELECT; declared out of scope by the spec, implemented safely).' },
  { name: 'SQL_LIMIT', type: 'string', default: '', ctrl: true, description: 'Row limit (SELECT; declared out of scope by the spec, implemented safely).' },
  { name: 'SQL_OFFSET', type: 'string', default: '', ctrl: true, description: 'Rows to skip (SELECT; declared out of scope by the spec, implemented safely).' },
  { name: 'SQL_RAWMODE', type: 'bool', default: 'false', description: 'Enables raw queries only.' },
  { name: 'SQL_RAWACTION', type: 'enum', default: 'exec', values: ['exec', 'query'], ctrl: true, description: "Either 'exec' or 'query'." },
  { name: 'SQL_RAWVALUE', type: 'string', default: '', ctrl: true, description: 'Raw SQL text, with {{ name }} placeholders.' },
  { name: 'SQL_RAWTRANSACTION', type: 'bool', default: 'false', beyondSpec: true, description: "Raw mode: SQL_RAWVALUE may hold several statements separated by ';' (at most 100), run in order in one transaction, all or nothing; the answer has 'affected' per statement and the rows of the last statement that returns rows. SQL_TIMEOUT covers the whole transaction." },
  { name: 'SQL_POLLMODE', type: 'bool', default: 'false', description: 'Enables poll mode. Requires a SELECT configuration.' },
  { name: 'SQL_POLLINTERVAL', type: 'duration', default: '5m', description: "Interval between polls; duration string such as '20s'." },
  { name: 'SQL_POLLCLASS', type: 'string', default: 'sql', description: 'Class of the emitted message.' },
  { name: 'SQL_POLLOPERATION', type: 'string', default: 'poll', description: 'Operation of the emitted message.' },
  { name: 'SQL_POOLSIZE', type: 'int', default: '10', min: 1, max: 1000, beyondSpec: true, description: 'Most database connections held open at once.' },
  { name: 'SQL_TIMEOUT', type: 'duration', default: '30s', beyondSpec: true, description: 'Longest run of one statement, cancelled by the server where the engine offers it (SQLite: interrupted); then the answer is 504. 0 = no limit.' },
  { name: 'SQL_ACQUIRETIMEOUT', type: 'duration', default: '10s', beyondSpec: true, description: 'Longest wait for a free pooled connection; then the answer is 503.' },
  { name: 'SQL_ALLOWCLAUSECTRL', type: 'bool', default: 'false', beyondSpec: true, description: 'Lets controls replace clause text (SQL_JOIN, SQL_WHERE, SQL_HAVING, SQL_RAWVALUE); when false such a control is answered 403. Identifier controls need only their _CTRL.' },
  { name: 'SQL_ALLOWEDTABLES', type: 'string', default: '', beyondSpec: true, description: "Tables a SQL_TABLE_CTRL override may name besides SQL_TABLE, comma-separated, written as the override writes them (schema.table or table); others are answered 403. Catalog tables (sqlite_*, pg_catalog, information_schema, mysql, sys, …) never, even if listed." },
  { name: 'SQL_ALLOWEDCOLUMNS', type: 'string', default: '', beyondSpec: true, description: "Columns that SQL_COLUMNS_CTRL, SQL_GROUPBY_CTRL and SQL_ORDERBY_CTRL overrides may name besides those of SQL_COLUMNS, SQL_GROUPBY and SQL_ORDERBY, comma-separated; '*' = every column of an allowed table, as when SQL_COLUMNS is empty or '*'. Others are answered 403." },
  { name: 'SQL_TRACKCOLUMN', type: 'string', default: '', beyondSpec: true, description: "Poller: emit only rows whose value in this column is greater than the last one emitted (ordered by it); each batch carries the control idempotency-key 'sql-poll:<NAME>:<column>:<its last value>', so a queue keeps one copy of a batch sent again after a crash or takeover." },
  { name: 'SQL_STATEFILE', type: 'string', default: '', beyondSpec: true, description: "Poller: file remembering the last SQL_TRACKCOLUMN value across restarts ('' = memory only). Change stream on MariaDB/MySQL (SQL_CHANGES): the file keeping the binlog position past the last acknowledged transaction (required there)." },
  { name: 'SQL_POLLLEASE', type: 'duration', default: '10s', beyondSpec: true, description: "Poller (and SQL_CHANGES reader) on a NATS hive: the pollers of one NAME elect one active poller with a lease of this length in a JetStream KV bucket (renewed every third of it; a dead holder is replaced within two lease periods) and keep the last SQL_TRACKCOLUMN value (a MariaDB change stream: its binlog position) there; '0' polls on every node. Not used on the embedded hive." },
  { name: 'SQL_CHANGES', type: 'bool', default: 'false', beyondSpec: true, description: "Change stream (PostgreSQL: logical replication with pgoutput; MariaDB/MySQL: the row-based binlog): every committed insert, update and delete of the tables in SQL_TABLE (comma-separated) becomes one message to OUTPUTCHANNEL (Class SQL_POLLCLASS, Operation insert/update/delete), handed over acknowledged in commit order; the position (PostgreSQL: the replication slot; MariaDB: SQL_STATEFILE) advances only past what the hive acknowledged. Needs wal_level=logical and the REPLICATION privilege (PostgreSQL), log_bin, binlog_format=ROW and the REPLICATION SLAVE and BINLOG MONITOR privileges (MariaDB). README, Change streams." },
  { name: 'SQL_CHANGESNAPSHOT', type: 'bool', default: 'false', beyondSpec: true, description: "SQL_CHANGES: when the stream is new (no slot yet; MariaDB: no position kept), first emit the rows the tables hold as Operation read, read in one consistent view that matches the stream's start (PostgreSQL: the slot's exported snapshot; MariaDB: a consistent read at its binlog position); a node that dies during it takes it again." },
  { name: 'SQL_CHANGESLOT', type: 'string', default: '', beyondSpec: true, description: "SQL_CHANGES: the PostgreSQL logical replication slot (pgoutput) that keeps the stream's position, created when missing; '' = hivenode_<NAME> (lower case, other characters as _). A slot no service reads keeps WAL forever: remove it with 'hivenode changes drop <NAME>'." },
  { name: 'SQL_CHANGEPUBLICATION', type: 'string', default: '', beyondSpec: true, description: "SQL_CHANGES: the PostgreSQL publication of the SQL_TABLE tables, created when missing (FOR TABLE …); '' = hivenode_<NAME>." },
  { name: 'SQL_INITFILE', type: 'string', default: '', beyondSpec: true, description: 'A .sql file run statement by statement at start (and again after a restart): write it idempotently, e.g. CREATE TABLE IF NOT EXISTS.' },
] as const satisfies ParamTable;

export const SQL_PARAMS = [
  ...GENERAL_PARAMS,
  ...INPUT_PARAMS,
  ...OUTPUT_PARAMS,
  ...SQL_OWN,
] as const satisfies ParamTable;
