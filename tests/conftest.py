"""Shared fixtures: small real multi-process runs, made once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def podscale(*args: str, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "podscale", *args],
        capture_output=True, text=True, timeout=timeout, cwd=kw.pop("cwd", ROOT), **kw,
    )


def only_run(out: Path) -> Path:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """A real 2-process x 2-device run of both suites and both variants, in 2 rounds."""
    out = tmp_path_factory.mktemp("runs")
    res = podscale("run", "dot,psum", "--rounds", "2", "--hosts", "1,2", "--devices-per-host", "2",
                   "--sizes", "4K,64K", "--iters", "5", "--warmup", "1", "--out", str(out))
    assert res.returncode == 0, res.stderr + res.stdout
    return only_run(out)
