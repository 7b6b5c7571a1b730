"""agentmonitors: tell AI coding agents when the things they care about change."""
