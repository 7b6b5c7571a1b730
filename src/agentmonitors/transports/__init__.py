"""Transports: how a delivery reaches the agent (Claude Code hooks, the MCP channel)."""
