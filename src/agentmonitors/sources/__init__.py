"""Observation sources: one module per bundled source, plus the registry."""
