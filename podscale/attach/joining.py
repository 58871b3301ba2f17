"""What a profiled process learns of the job it joins and its devices: the coordinator
of a one-process job podscale's launcher started, a device count the program asked for
that podscale's replaced, and each device's memory as its runtime reports it."""

from __future__ import annotations

import os
import sys
from typing import Any

from podscale.attach import SUPERVISED
from podscale.core import envnames, lines
from podscale.core.profilelines import DeviceFacts


def alone() -> dict[str, Any] | None:
    """``jax.distributed.initialize``'s arguments for a one-process job podscale's local
    launcher started (``profile --hosts 1``: it names no coordinator): a coordinator of
    this process's own on a free loopback port, so the script's call with no arguments
    joins as on several hosts. None under any other launcher (JAX auto-detects)."""
    if os.environ.get(envnames.NUM_PROCESSES) != "1" or not os.environ.get(SUPERVISED):
        return None
    from podscale.core.ports import listen_port

    try:
        address = f"127.0.0.1:{listen_port()}"
    except OSError:  # no loopback network (a sandbox): JAX's own call decides
        return None
    return {"coordinator_address": address, "coordinator_bind_address": address,
            "num_processes": 1, "process_id": 0}


_SAID: list[int] = []  # the note is said once a process


def said_device_count(devices: int | None = None) -> None:
    """Where podscale's ``--devices-per-host`` replaced the program's own
    ``--xla_force_host_platform_device_count`` (in ``XLA_FLAGS``), say so (``devices``:
    the count the process got, else the one podscale gave)."""
    import re

    forced = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                       os.environ.get("XLA_FLAGS", ""))
    given = os.environ.get(envnames.CPU_DEVICES, "")
    if not given.isdigit() or _SAID:  # none given, the program's own count kept, or said
        return
    devices = int(given) if devices is None else devices
    if forced and int(forced[1]) != devices:
        _SAID.append(devices)
        lines.say(f"podscale: note: --devices-per-host gives each process {devices} CPU "
                  f"device(s); the program's XLA_FLAGS "
                  f"--xla_force_host_platform_device_count={forced[1]} has no effect",
                  err=True)


def device_memory() -> list[dict] | None:
    """Each local device's memory as its runtime reports it (peak and limit in bytes: TPU
    and GPU; None where the platform reports none, as the CPU)."""
    if "jax" not in sys.modules:
        return None
    import jax

    out = []
    try:
        for d in jax.local_devices():
            stats = d.memory_stats() or {}
            if "peak_bytes_in_use" in stats:
                out.append({"device": d.id, "peak_bytes": int(stats["peak_bytes_in_use"]),
                            "limit_bytes": int(stats.get("bytes_limit", 0))})
    except Exception:  # noqa: BLE001 - a backend gone, or one that reports nothing
        return None
    return out or None


def devices() -> DeviceFacts:
    """This process's devices as its record says them: how many, their platform and
    kind, and their peaks (:mod:`podscale.startup.peaks`); {} before JAX is imported."""
    if "jax" not in sys.modules:
        return {}
    import jax

    from podscale.startup.peaks import device_peaks

    try:
        device = jax.local_devices()[0]
    except Exception:  # noqa: BLE001 - no backend: nothing to say
        return {}
    from podscale.startup.runtime import slice_of

    found = slice_of(device).get("slice")  # a multi-slice job's: its TPU's, or the launcher's
    out: DeviceFacts = {"local_devices": jax.local_device_count(), "platform": device.platform,
                        "device_kind": device.device_kind, "peaks": device_peaks()}
    if found is not None:
        out["slice"] = found
    return out


def env_process() -> int:
    """This process's index as its launcher gave it (0 where none did)."""
    from podscale.startup.faults import launcher_rank

    return launcher_rank() or 0


def no_cluster(exc: Exception) -> bool:
    """Whether ``jax.distributed.initialize()``'s failure says it found no cluster (JAX's
    words where its detection finds none, or a TPU VM's metadata server out of reach)."""
    text = str(exc)
    return "coordinator_address should be defined" in text or isinstance(exc, OSError) \
        or "metadata" in text.lower()


def ended_alone(code: int, computed: bool, error: str | None = None) -> None:
    """A process that failed before it joined, where its launcher started several: the
    never-joined hint, where it ``computed`` before (a program that failed at import, or
    never used JAX, keeps its own last error as the last line); and (process 0) the device
    count podscale replaced."""
    from podscale.startup.faults import launcher_size

    size = launcher_size()
    if env_process() == 0:
        said_device_count()
    if not code or size is None or size < 2 or not computed:
        return
    why = f": {error.strip().splitlines()[-1][:120]}" if error and error.strip() else ""
    lines.say(f"podscale: process {env_process()} ended (exit code {code}{why}) before it joined "
              f"the job: each of its {size} processes ran alone until then; a program of "
              "several processes calls jax.distributed.initialize() before its first JAX "
              "computation (or run it as one process: --hosts 1)", err=True)
