-- Seeds the SQLite database of examples/sql/raw-transaction.yaml (its SQL_INITFILE). It runs at
-- every start, so every statement is idempotent. A balance may not go below 0, and a transfer must
-- name existing accounts: the constraints a raw transaction runs into, all or nothing.
CREATE TABLE IF NOT EXISTS accounts (
  name    TEXT PRIMARY KEY,
  balance INTEGER NOT NULL CHECK (balance >= 0)
);
CREATE TABLE IF NOT EXISTS transfers (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  src    TEXT NOT NULL REFERENCES accounts (name),
  dst    TEXT NOT NULL REFERENCES accounts (name),
  amount INTEGER NOT NULL CHECK (amount > 0)
);
INSERT INTO accounts (name, balance) SELECT 'alice', 100 WHERE NOT EXISTS (SELECT 1 FROM accounts WHERE name = 'alice');
INSERT INTO accounts (name, balance) SELECT 'bob', 20 WHERE NOT EXISTS (SELECT 1 FROM accounts WHERE name = 'bob');
