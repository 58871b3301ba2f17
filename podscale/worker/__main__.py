"""``python -m podscale.worker PLAN.json``."""

from podscale.startup import ledger

ledger.mark("worker")  # the interpreter is up: everything before this is its start

from podscale.startup.lifeline import hold  # noqa: E402
from podscale.worker.preflight import plant_env  # noqa: E402

hold()  # before JAX starts: a worker never outlives the front end that started it
plant_env()

from podscale.worker.main import entry  # noqa: E402

entry()
