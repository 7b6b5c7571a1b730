"""``python -m agentmonitors``: the same entry point as the console script."""

import sys

from agentmonitors.cli.main import main

sys.exit(main())
