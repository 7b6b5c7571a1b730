"""Why a monitor did or did not reach a session: read-only reports over the runtime and delivery.

Above ``runtime`` and ``delivery``, which it reads and never changes (see
docs/architecture.md).
"""
