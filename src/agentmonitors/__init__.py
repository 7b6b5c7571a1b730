"""agentmonitors: tell AI coding agents when the things they care about change."""

__version__ = "0.1.0"
