"""How a run's processes start and are watched: one frozen, validated value from the
command line (``podscale.frontend.commands.gridargs.launch_options``) down to the launchers
(:func:`podscale.launch.runner.execute_arms`, ``run_local``, ``run_external``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podscale.core import defaults
from podscale.core.errors import UsageError

if TYPE_CHECKING:
    from podscale.launch.chips import Chips

LAUNCHERS = ("local", "mpirun", "srun", "ray")


@dataclass(frozen=True)
class LaunchOptions:
    """``launcher`` (local processes, mpirun, srun or a Ray cluster's actors) and its own
    ``launcher_args``;
    ``simulate_cpu``: hosts simulated on CPU devices (gloo collectives); ``case_timeout``:
    seconds without progress before the run stops; ``port``: the coordinator's on
    127.0.0.1 (0: any free one); ``trace_dir``: where profiler traces go (None: no traced
    pass); ``hlo``: process 0 saves each case's optimized HLO (replay); ``program``:
    ``module:function`` every process runs instead of cases (the seed); ``chips``: this
    machine's accelerator chips the local processes measure (None: simulated CPU hosts, or
    a cluster's own devices), ``note``: what the platform's choice says once
    (:func:`podscale.launch.chips.choose`); ``own_devices``: a profiled program's
    simulated hosts keep the CPU device count it asks for itself (no
    ``--devices-per-host``)."""

    launcher: str = "local"
    launcher_args: tuple[str, ...] = ()
    simulate_cpu: bool = True
    case_timeout: float = defaults.CASE_TIMEOUT
    port: int = 0
    trace_dir: str | None = None
    hlo: bool = False
    program: str | None = None
    chips: Chips | None = None
    note: str | None = None
    own_devices: bool = False

    @property
    def platform(self) -> str:
        """cpu (simulated hosts), tpu or gpu (this machine's chips), or auto (a cluster's)."""
        return "cpu" if self.simulate_cpu else self.chips.platform if self.chips else "auto"

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
        if self.launcher == "ray":  # the driver's own words, checked before it starts
            from podscale.launch.raydriver import parse

            for own, says in (("--processes", "--hosts"), ("--home", "--out")):
                if own in self.launcher_args:
                    raise UsageError(f"--launcher-args: {own} is podscale's ({says})")
            parse([*self.launcher_args, "--processes", "1", "--", "worker"])
        if self.chips is not None and (self.simulate_cpu or self.launcher != "local"):
            raise UsageError("a machine's own chips are measured by local processes only")


DEFAULT = LaunchOptions()  # local processes, simulated CPU hosts, the default timeout
