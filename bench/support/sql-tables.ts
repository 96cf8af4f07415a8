/** The table the SQL benches read and write, and a SQLite file to hold it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sequelize } from 'sequelize';

/** Creates table kv (id, v) afresh with `rows` rows, v = 'value <id>'; `serial` is the engine's auto-increment key. */
export async function seedKv(direct: Sequelize, serial: string, rows: number): Promise<void> {
  await direct.query('DROP TABLE IF EXISTS kv');
  await direct.query(`CREATE TABLE kv (${serial}, v VARCHAR(40) NOT NULL)`);
  const values = Array.from({ length: rows }, (_, i) => `('value ${i + 1}')`).join(', ');
  await direct.query(`INSERT INTO kv (v) VALUES ${values}`);
}

/** A seeded SQLite file in a temporary directory, a direct Sequelize on it, and the removal of both. */
export async function sqliteKv(
  prefix: string,
  rows: number,
): Promise<{ file: string; direct: Sequelize; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'bench.db');
  const direct = new Sequelize({ dialect: 'sqlite', storage: file, logging: false });
  await seedKv(direct, 'id INTEGER PRIMARY KEY AUTOINCREMENT', rows);
  return { file, direct, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
