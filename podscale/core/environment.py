"""Launcher-side environment metadata for the run manifest (device kind and counts come
from each worker's env record)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path

from podscale.core import envnames

SOURCE_ROOT = Path(__file__).resolve().parents[2]
#: variables podscale's launchers and workers set for every process (an A/B arm, or a
#: user, cannot change them)
OWNED_ENV = envnames.OWNED


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(SOURCE_ROOT), *args], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        if dist == "podscale":  # a checkout run without an install: its own version
            from podscale.core.version import __version__

            return __version__
        return None


def environment() -> dict:
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "versions": {d: _version(d) for d in ("podscale", "jax", "jaxlib", "numpy", "pandas",
                                               "libtpu")},
        **_cpu(),
    }


def _cpu() -> dict[str, str]:
    """The CPU's model and frequency governor, where this machine lets them be read: what
    decides a CPU simulation's timings besides its core count."""
    out = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name") and ":" in line:
                    out["cpu_model"] = " ".join(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                  encoding="utf-8") as fh:
            out["cpu_governor"] = fh.read().strip()
    except OSError:
        pass
    return out


def check_owned_env(env: dict[str, str] | None = None) -> None:
    """podscale's own variables, where set, well formed (one-line UsageError, before any
    process or JAX starts): counts and indices are integers, the index within the count,
    the coordinator ``host:port``."""
    from podscale.core.errors import UsageError

    env = dict(os.environ if env is None else env)

    def count(name: str, least: int) -> int | None:
        text = env.get(name)
        if text is None or text == "":
            return None
        if not (text.isascii() and text.isdigit()) or int(text) < least:
            raise UsageError(f"bad {name}={text!r}: want an integer >= {least}")
        return int(text)

    processes = count(envnames.NUM_PROCESSES, 1)
    index = count(envnames.PROCESS_ID, 0)
    if env.get(envnames.CPU_DEVICES) != envnames.PROGRAMS_OWN:  # else the program's own
        count(envnames.CPU_DEVICES, 1)
    if processes is not None and index is not None and index >= processes:
        raise UsageError(f"bad PODSCALE_PROCESS_ID={index}: want 0..{processes - 1} "
                         f"(PODSCALE_NUM_PROCESSES={processes})")
    init_timeout(0, env)  # a bad one is refused here, not in every worker
    coordinator = env.get(envnames.COORDINATOR)
    if coordinator:
        host, _, port = coordinator.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UsageError(f"bad PODSCALE_COORDINATOR={coordinator!r}: want HOST:PORT")
        if processes is None or index is None:
            raise UsageError("PODSCALE_COORDINATOR needs PODSCALE_NUM_PROCESSES and "
                             "PODSCALE_PROCESS_ID set too")


#: the longest join ``PODSCALE_INIT_TIMEOUT`` may ask for: a job whose processes have not
#: all come after a day is not coming
INIT_TIMEOUT_MAX = 86_400


def init_timeout(default: int, env: dict[str, str] | None = None) -> int:
    """``PODSCALE_INIT_TIMEOUT``: the seconds ``jax.distributed.initialize`` waits for every
    process (``default`` where unset), one reading for the workers and the supervisor: a
    number > 0 and at most a day, a fraction rounded up to the whole seconds JAX takes;
    anything else (``abc``, ``nan``, ``0``, ``-1``, ``1e9``) a one-line UsageError."""
    import math

    from podscale.core.errors import UsageError

    text = (os.environ if env is None else env).get(envnames.INIT_TIMEOUT, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= INIT_TIMEOUT_MAX:  # NaN fails too
        raise UsageError(f"bad {envnames.INIT_TIMEOUT}={text!r}: want the seconds the join "
                         f"waits for every process, a number > 0 and at most "
                         f"{INIT_TIMEOUT_MAX:,} (fractions round up to whole seconds)")
    return math.ceil(value)
