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
                   "--sizes", "4K,16K,64K", "--iters", "5", "--warmup", "1", "--out", str(out))
    assert res.returncode == 0, res.stderr + res.stdout
    return only_run(out)


#: fixtures that start real multi-process runs: a test using one is ``slow``
RUN_FIXTURES = {"small_run", "user_run", "collective_run", "installed"}


def pytest_collection_modifyitems(items) -> None:
    """Mark a test ``slow`` when it starts real worker processes (it calls the CLI, or uses
    a fixture that does) unless its module already says ``cluster`` or ``asv``: ``make
    quick`` runs the rest in seconds; ``make test`` runs everything."""
    import inspect

    for item in items:
        if item.get_closest_marker("cluster") or item.get_closest_marker("asv"):
            continue
        try:
            source = inspect.getsource(item.function)
        except (OSError, TypeError):
            source = ""
        if "podscale(" in source or "execute(" in source or "subprocess" in source \
                or RUN_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Path:
    """podscale as a user gets it: a wheel built from this checkout, installed (no
    dependencies: they are this environment's) into a folder outside the repository."""
    import shutil
    import zipfile

    work = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                          "--no-build-isolation", "-w", str(work / "dist"), str(ROOT)],
                         capture_output=True, text=True, cwd=work)
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' in-tree scratch
    assert res.returncode == 0, res.stderr
    (wheel,) = (work / "dist").glob("podscale-*.whl")
    target = work / "site"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--target", str(target), str(wheel)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    (target / "WHEEL_NAMES").write_text("\n".join(zipfile.ZipFile(wheel).namelist()))
    return target


def from_installed(target: Path, *args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    """Run a command with the installed package first on the path, outside the repo."""
    import os

    env = {**os.environ, "PYTHONPATH": str(target)}
    return subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=kw.pop("timeout", 600), **kw)
