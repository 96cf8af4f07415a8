-- The order-intake example's table (examples/flows/order-intake.yaml), created at start if missing.
CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, item TEXT NOT NULL);
