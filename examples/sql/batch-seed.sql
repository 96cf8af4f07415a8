-- Tables of examples/sql/batch-upsert.yaml (SQL_INITFILE of its first service). It runs at every
-- start, so every statement is idempotent.
CREATE TABLE IF NOT EXISTS readings (
  sensor TEXT NOT NULL,
  at     TEXT NOT NULL,
  value  REAL NOT NULL,
  PRIMARY KEY (sensor, at)
);
CREATE TABLE IF NOT EXISTS stock (
  sku  TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  qty  INTEGER NOT NULL
);
INSERT INTO stock (sku, name, qty) SELECT 'apple', 'Apple', 3 WHERE NOT EXISTS (SELECT 1 FROM stock WHERE sku = 'apple');
