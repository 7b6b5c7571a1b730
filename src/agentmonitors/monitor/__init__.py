"""MONITOR.md: the model, the parser, discovery and validation."""
