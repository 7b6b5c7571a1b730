"""The AgentMon daemon: its IPC wire protocol, a blocking client and an asyncio server.

``protocol`` and ``client`` are on the hook path and import only the standard
library; ``server`` is for the long-running process.
"""
