"""Launcher-side environment metadata for the run manifest (device kind and counts come
from each worker's env record)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[2]
#: variables podscale's launchers and workers set for every process (an A/B arm, or a
#: user, cannot change them)
OWNED_ENV = ("PODSCALE_CLUSTER", "PODSCALE_COORDINATOR", "PODSCALE_CPU_DEVICES",
             "PODSCALE_NUM_PROCESSES", "PODSCALE_PARENT_PID", "PODSCALE_PROCESS_ID",
             "PODSCALE_PROFILE_SUPERVISED")


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
        "versions": {d: _version(d) for d in ("podscale", "jax", "jaxlib", "numpy", "pandas")},
    }
