/**
 * The engines the SQL benches run on: SQLite always, PostgreSQL and MariaDB when their binaries are
 * installed (private servers, as spec/adapters/sql starts them). BENCH_ENGINES=sqlite,postgres runs
 * a subset (all three by default).
 */
import { mariadbAvailable, postgresBin } from '../../spec/adapters/sql/servers.js';

export async function onEachEngine<T>(
  targets: { sqlite: () => Promise<T>; postgres: () => Promise<T>; mariadb: () => Promise<T> },
  bench: (target: T) => Promise<void>,
): Promise<void> {
  const engines = new Set((process.env.BENCH_ENGINES ?? 'sqlite,postgres,mariadb').split(',').map((e) => e.trim()));
  if (engines.has('sqlite')) await bench(await targets.sqlite());
  if (!engines.has('postgres')) console.log('PostgreSQL    skipped: not in BENCH_ENGINES');
  else if (postgresBin()) await bench(await targets.postgres());
  else console.log('PostgreSQL    skipped: binaries not installed (scripts/sql-servers.sh installs them)');
  if (!engines.has('mariadb')) console.log('MariaDB       skipped: not in BENCH_ENGINES');
  else if (mariadbAvailable()) await bench(await targets.mariadb());
  else console.log('MariaDB       skipped: binaries not installed (scripts/sql-servers.sh installs them)');
}
