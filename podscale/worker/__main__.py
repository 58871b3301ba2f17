"""``python -m podscale.worker PLAN.json``."""

from podscale.worker.lifeline import hold
from podscale.worker.preflight import plant_env

hold()  # before JAX starts: a worker never outlives the front end that started it
plant_env()

from podscale.worker.main import entry  # noqa: E402

entry()
