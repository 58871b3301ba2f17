"""Will it fit: the one check, made once before any process starts, that a run's processes
fit where they will start (#66: it had been made in four steps that went back and forth
between the front end and the launchers).

On the local launcher every process starts on this machine, so it checks:

- memory: the largest launch's processes and their buffers against what this machine
  has available (:mod:`podscale.launch.admission`, ``--force`` to go on);
- on a machine's own chips: each layout on the chips (:func:`podscale.launch.chips.
  check_layouts`) and each case's buffers in one chip's memory;
- without chips: several processes need a socket on loopback to join.

Under any other launcher the processes start where the launcher places them: Ray's driver
checks its cluster's resources before any actor (:func:`podscale.launch.raydriver.room`);
mpirun, srun, sbatch, Kubernetes and TPU VMs leave it to their own scheduler.

Every refusal is one line (UsageError, exit 2) before any process or run folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from podscale.core.errors import UsageError
from podscale.launch import admission

if TYPE_CHECKING:
    from podscale.core.case import Case, Layout
    from podscale.launch.options import LaunchOptions


def check_cases(cases: Sequence[Case], options: LaunchOptions, *, force: bool = False) -> None:
    """Refuse a grid's cases that would not fit where ``options`` starts them."""
    if options.launcher != "local":
        return
    admission.admit(cases, force=force, on_chips=options.chips is not None)
    layouts = sorted({(c.processes, c.devices_per_host) for c in cases})
    _check_layouts(layouts, options)
    if options.chips is not None:
        admission.admit_device(cases, options.chips.memory, options.chips.kind)


def check_program(layout: Layout, options: LaunchOptions, *, force: bool = False) -> None:
    """Refuse a profiled program's processes that would not fit where ``options`` starts
    them (memory before the program's own arrays, which podscale cannot know; on chips,
    the devices each process is given, which the program may use fewer of)."""
    devices = layout.devices_per_host if options.chips is None else \
        min(layout.devices_per_host, options.chips.count // layout.processes or 1)
    check_processes(layout.processes, devices, options, force=force,
                    process_mb=admission.PROFILED_MB,
                    basis=f"{admission.PROFILED_MB} MB per process before the program's own "
                          "arrays")


def check_processes(processes: int, devices: int, options: LaunchOptions, *,
                    process_mb: float, basis: str, force: bool = False) -> None:
    """Refuse ``processes`` processes of ``devices`` devices each, ``process_mb`` of memory
    each (``basis``: the figure and how it is known), that would not fit where ``options``
    starts them."""
    if options.launcher != "local":
        return
    admission.admit_processes(processes, processes * process_mb, force=force, basis=basis)
    _check_layouts([(processes, devices)], options)


def _check_layouts(layouts: list[tuple[int, int]], options: LaunchOptions) -> None:
    """(processes, devices per process) on this machine's chips, or, without chips,
    several simulated processes only where a socket opens on loopback."""
    from podscale.launch.chips import check_layouts, loopback_opens

    if options.chips is not None:
        check_layouts(options.chips, layouts)
    elif any(p > 1 for p, _ in layouts) and not loopback_opens():
        beside = f" ({options.note})" if options.note else ""
        raise UsageError("simulated hosts join over loopback, and this machine opens no "
                         f"socket: --hosts 1{beside}")
