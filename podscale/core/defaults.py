"""The one table of defaults: grid values, measurement settings and run options.

The command line, suite files, the plan and the case model all read them from here, and
``--help`` shows them from here. Grid values are the strings the command line takes.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

#: measurement settings of a case (:class:`podscale.core.case.Settings`)
ITERS: Final = 20
WARMUP: Final = 3
SYNC: Final = "each"
TRACED_ITERS: Final = 3  # with --profile; 0 without it
#: timing methods of every case (podscale.core.timing): one call waited on, a chain of
#: back-to-back calls, each execution's device time from a profiler trace
TIMING: Final = "each,chain,device"
#: elements per device the float check compares on the timed inputs (0: every element);
#: the exact pass compares every element of its own inputs
CHECK_ELEMENTS: Final = 4096
#: independent repetitions (launches) per case; podscale ab needs more to find a 1.5x change
ROUNDS: Final = 3
#: podscale ab: a 1.5x slowdown of cases whose launches vary by a log-sd of 0.5 is found
#: (10 rounds found 83-92% of them on a noisy 2-CPU machine)
AB_ROUNDS: Final = 16
#: what a comparison calls a change: a relative change of at least THRESHOLD whose test is
#: significant at ALPHA (compare, ab, bench-self's verdicts)
THRESHOLD: Final = 0.05
ALPHA: Final = 0.05
#: the grid when neither the command line nor a suite file gives a value
GRID: Final[MappingProxyType[str, Any]] = MappingProxyType({
    "workloads": None, "sizes": None, "hosts": "1,2", "devices_per_host": "1,2", "slices": "1",
    "local_axes": None, "dtypes": "float32", "variants": None, "iters": ITERS,
    "warmup": WARMUP, "sync": SYNC, "timing": TIMING, "traced_iters": TRACED_ITERS,
    "rounds": ROUNDS,
    "check_elements": CHECK_ELEMENTS,
    "params": {}})
#: seconds without progress after which a run is stopped
CASE_TIMEOUT: Final = 300.0
#: seconds ``jax.distributed.initialize`` waits for every process where
#: ``PODSCALE_INIT_TIMEOUT`` does not say: in a job podscale's local launcher started, and
#: in a cluster JAX detects (JAX's own default); the local supervisor allows the longer
JOIN_TIMEOUT_LOCAL: Final = 120
JOIN_TIMEOUT_DETECTED: Final = 300
#: where runs land
OUT: Final = Path("results")
#: podscale seed's reference layout
SEED_HOSTS: Final = 2
SEED_DEVICES_PER_HOST: Final = 4

#: a step is anomalous above max(median + 3·MAD, this x the median) of the steps
#: (ml-goodput-measurement's rule with a floor against scheduling noise on short steps):
#: the anomaly captures' trigger and the profiled run's slow steps
ANOMALY_RATIO: Final = 4.0
