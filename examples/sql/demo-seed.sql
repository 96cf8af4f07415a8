-- Seeds the demo's SQLite database (SQL_INITFILE of the `sqlsel` service in examples/demo.yaml).
-- It runs at every start, so every statement is idempotent.
CREATE TABLE IF NOT EXISTS people (
  id   INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  city TEXT
);
INSERT INTO people (name, city) SELECT 'Ada', 'London' WHERE NOT EXISTS (SELECT 1 FROM people WHERE name = 'Ada');
INSERT INTO people (name, city) SELECT 'Alan', 'Manchester' WHERE NOT EXISTS (SELECT 1 FROM people WHERE name = 'Alan');
INSERT INTO people (name, city) SELECT 'Grace', 'Arlington' WHERE NOT EXISTS (SELECT 1 FROM people WHERE name = 'Grace');
