"""How a run's processes start and are watched: one frozen, validated value from the
command line (``podscale.frontend.commands.gridargs.launch_options``) down to the launchers
(:func:`podscale.launch.runner.execute_arms`, ``run_local``, ``run_external``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from podscale.core import defaults
from podscale.core.errors import UsageError

LAUNCHERS = ("local", "mpirun", "srun")


@dataclass(frozen=True)
class LaunchOptions:
    """``launcher`` (local processes, mpirun or srun) and its own ``launcher_args``;
    ``simulate_cpu``: hosts simulated on CPU devices (gloo collectives); ``case_timeout``:
    seconds without progress before the run stops; ``port``: the coordinator's on
    127.0.0.1 (0: any free one); ``trace_dir``: where profiler traces go (None: no traced
    pass); ``hlo``: process 0 saves each case's optimized HLO (replay); ``program``:
    ``module:function`` every process runs instead of cases (the seed)."""

    launcher: str = "local"
    launcher_args: tuple[str, ...] = ()
    simulate_cpu: bool = True
    case_timeout: float = defaults.CASE_TIMEOUT
    port: int = 0
    trace_dir: str | None = None
    hlo: bool = False
    program: str | None = None

    def __post_init__(self) -> None:
        if self.launcher not in LAUNCHERS:
            raise UsageError(f"unknown launcher {self.launcher!r} (known: "
                             f"{', '.join(LAUNCHERS)})")
        if not math.isfinite(self.case_timeout) or self.case_timeout <= 0:
            raise UsageError(f"--case-timeout must be a finite number of seconds > 0, got "
                             f"{self.case_timeout:g}")
        if not 0 <= self.port < 65536:
            raise UsageError(f"bad --coordinator-port {self.port}")
        object.__setattr__(self, "launcher_args", tuple(self.launcher_args))


DEFAULT = LaunchOptions()  # local processes, simulated CPU hosts, the default timeout
