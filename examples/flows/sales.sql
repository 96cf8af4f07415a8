-- The nightly-report example's table (examples/flows/nightly-report.yaml), created and filled at start if missing.
CREATE TABLE IF NOT EXISTS sales (region TEXT PRIMARY KEY, total INTEGER NOT NULL);
INSERT OR IGNORE INTO sales (region, total) VALUES ('north', 1200), ('south', 950), ('west', 410);
