"""``python -m podscale.worker PLAN.json``."""

from podscale.worker.main import entry

entry()
