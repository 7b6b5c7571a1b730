"""The durable store: one SQLite file per workspace holding events, state and history."""
