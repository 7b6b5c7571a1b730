"""Getting events to sessions: projection, claims, rendering."""
