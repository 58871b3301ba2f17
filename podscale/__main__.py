"""``python -m podscale``: the command line."""

import sys

from podscale.frontend.cli import main

sys.exit(main())
