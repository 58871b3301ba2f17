"""The platform a run's processes get, decided once, before any process starts: this
machine's chips where JAX can use them, else hosts simulated on the CPU; a simulation
beside chips says so, with the flag or the install that measures them."""

from __future__ import annotations

import os
from dataclasses import dataclass

from podscale.core import envnames, machine
from podscale.core.errors import UsageError
from podscale.launch.chips import Chips, detect, nodes, planted_chips

PLATFORMS = ("auto", "cpu", "tpu", "gpu")


@dataclass(frozen=True)
class Choice:
    """The platform a run's processes get: ``chips`` measured (None: simulated CPU hosts,
    or a cluster's own devices), ``simulate_cpu``, and ``note``, said once before the run
    (a simulation on a machine that has chips)."""

    chips: Chips | None
    simulate_cpu: bool
    note: str | None = None


def choose(requested: str, launcher: str) -> Choice:
    """``--platform`` for ``launcher``: auto takes the chips this machine has, else the CPU
    simulation; cpu simulates (and says so where chips sit beside it); tpu or gpu must be
    found. Chips JAX cannot use (device nodes, no runtime) are said, with the fix, where
    the run simulates, and refuse tpu or gpu. mpirun and srun leave it to the cluster's
    hosts (cpu: simulated there too)."""
    if requested not in PLATFORMS:
        raise UsageError(f"bad --platform {requested!r} (known: {', '.join(PLATFORMS)})")
    if launcher != "local":
        return Choice(None, requested == "cpu")
    here = nodes()
    if requested == "cpu":
        return Choice(None, True, _beside(here))
    if here.runtime is not None and not here.usable:
        if requested != "auto":
            raise UsageError(f"--platform {requested}: {here.unusable()}")
        return Choice(None, True, f"hosts simulated on the CPU: {here.unusable()}")
    chips = detect()
    if requested != "auto" and (chips is None or chips.platform != requested):
        has = chips.describe() if chips else "no accelerator JAX can use"
        raise UsageError(f"--platform {requested}: this machine has {has} (--platform auto "
                         "takes what it has; cpu simulates hosts)")
    return Choice(chips, chips is None)


def _beside(here: machine.Nodes) -> str | None:
    """What ``--platform cpu`` says where chips sit beside the simulation."""
    if here.runtime is None:
        return None
    if not here.usable:
        return f"simulated hosts on the CPU, though {here.unusable()}"
    planted = os.environ.get(envnames.ACCELERATORS)
    chips = planted_chips(planted) if planted else None
    what = chips.describe() if chips else f"{here.platform} chips ({here.where()})"
    return f"simulated hosts on the CPU, though this machine has {what} (--platform auto " \
           "measures it)"




def require(requested: str) -> str:
    """The JAX_PLATFORMS a process asked for ``--platform tpu|gpu`` takes, where this
    machine's device nodes show those chips and their runtime is installed (no device is
    opened: JAX, told to take that platform, fails loudly where it cannot); else a
    one-line UsageError saying what the machine has."""
    here = nodes()
    if here.platform != requested:
        has = f"{here.platform} device nodes ({here.where()})" if here.runtime else \
            "no accelerator device nodes"
        raise UsageError(f"--platform {requested}: this machine has {has}; --platform auto "
                         "takes what JAX finds, cpu simulates")
    if not here.usable:
        raise UsageError(f"--platform {requested}: {here.unusable()}")
    return here.runtime or requested
