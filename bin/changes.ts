/**
 * `hivenode changes drop <NAME> [-SQL_…=…]`: removes the PostgreSQL replication slot a change stream
 * (SQL_CHANGES) of that NAME left behind. A slot nobody reads keeps every WAL segment from its
 * position on, until the server's disk is full (README, Change streams). The database comes from
 * the SQL_* parameters, given as for `hivenode sql` (command line or environment).
 */
import { SQL_PARAMS } from '../config/sql.js';
import { commandLineLayer, compileConfig, environmentLayer } from '../config/resolve.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import { databaseOptions } from '../actors/sql/connection-options.js';
import { changeNames } from '../actors/sql/change-names.js';
import { dropSlot } from '../actors/sql/change-setup.js';
import { exitOnConfigError } from './run-node.js';

const USAGE =
  'hivenode changes drop <NAME> -SQL_ENGINE=postgres -SQL_SERVER=… -SQL_DATABASE=… -SQL_USERNAME=… -SQL_PASSWORD=… [-SQL_CHANGESLOT=…]';

export async function runChanges(argv: readonly string[]): Promise<void> {
  const [action, name, ...rest] = argv;
  let slot: string;
  let options;
  try {
    if (action !== 'drop' || name === undefined || name === '' || name.startsWith('-'))
      throw new ConfigError(`hivenode changes drop needs the NAME of the change stream: ${USAGE}`);
    const { values } = compileConfig('sql', SQL_PARAMS, [
      environmentLayer(process.env, SQL_PARAMS),
      commandLineLayer(rest),
    ]);
    if (values.SQL_ENGINE !== 'postgres')
      throw new ConfigError(
        `hivenode changes drop removes PostgreSQL replication slots; SQL_ENGINE is '${values.SQL_ENGINE}': give -SQL_ENGINE=postgres`,
      );
    slot = changeNames({ ...values, SQL_TABLE: 'unused' }, name).slot;
    options = databaseOptions(values);
  } catch (e) {
    exitOnConfigError(e);
  }
  try {
    const dropped = await dropSlot(options, slot);
    console.log(
      dropped
        ? `dropped replication slot ${slot}`
        : `no replication slot ${slot} in database '${options.database}': nothing to drop`,
    );
  } catch (e) {
    // e.g. 55006 "replication slot … is active": a running change stream still reads it
    console.error(`hivenode: dropping replication slot ${slot} failed: ${describeError(e)}`);
    process.exit(1);
  }
}
