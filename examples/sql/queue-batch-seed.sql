-- The table of examples/sql/queue-batch.yaml (SQL_INITFILE of its SQL service). It runs at every
-- start, so it is idempotent. The CHECK is there to refuse one row of a batch: that row alone fails.
CREATE TABLE IF NOT EXISTS orders (
  id  TEXT PRIMARY KEY,
  qty INTEGER NOT NULL CHECK (qty >= 0)
);
