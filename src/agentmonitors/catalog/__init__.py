"""The monitors a workspace has, checked against the sources that run them.

Above both ``monitor`` (the MONITOR.md model) and ``sources``: validation, the JSON
Schema, scaffolding, the approval ledger and the loaded set of definitions all need
the source registry (see docs/architecture.md).
"""
