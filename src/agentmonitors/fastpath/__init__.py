"""The fast path's stand-ins (placeholder)."""
