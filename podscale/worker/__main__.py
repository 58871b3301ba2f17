"""``python -m podscale.worker PLAN.json``."""

from podscale.worker.lifeline import hold

hold()  # before JAX starts: a worker never outlives the front end that started it

from podscale.worker.main import entry  # noqa: E402

entry()
