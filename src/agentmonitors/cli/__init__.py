"""The ``agentmonitors`` command line: thin click commands over the core."""
