"""Shared fixtures: small real multi-process runs, made once per session."""

from __future__ import annotations

import os
import re
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


def unwrap(text: str) -> str:
    """Output with its wrapped comment lines (``#   ...``) joined back onto the line they
    continue (:func:`podscale.core.lines.commented`)."""
    return re.sub(r"\n#   ", " ", text)


def only_run(out: Path) -> Path:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


def shared_once(tmp_path_factory, name: str, make) -> Path:
    """``make(a new folder)``'s path, made once in the whole session: under pytest-xdist
    the first worker to ask makes it while the others wait for it (a file lock in the
    session's folder) and read the path it left; where making fails, the next to ask
    tries again. What it makes is read, never changed, by the tests that share it."""
    import fcntl

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return make(tmp_path_factory.mktemp(name))
    session = session_folder(tmp_path_factory)
    made = session / f"{name}.path"
    with open(session / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made.exists():
            return Path(made.read_text())
        path = make(tmp_path_factory.mktemp(name))
        made.write_text(str(path))
        return path


def _small_run(out: Path) -> Path:
    res = podscale("run", "dot,psum", "--rounds", "2", "--hosts", "1,2", "--devices-per-host", "2",
                   "--sizes", "4K,16K,64K", "--iters", "5", "--warmup", "1", "--out", str(out))
    assert res.returncode == 0, res.stderr + res.stdout
    return only_run(out)


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """A real 2-process x 2-device run of both suites and both variants, in 2 rounds (one
    for the whole session: :func:`shared_once`)."""
    return shared_once(tmp_path_factory, "runs", _small_run)


#: a test that starts a job under a launcher (mpirun, srun, sbatch) says so with
#: ``pytest.mark.cluster``: JAX puts such a job's coordinator on a port from its job id,
#: in one 4096-port range for both launchers, so two at once may meet on one port (a
#: process 0 of one job joining the other's coordinator: "tried to connect with a
#: different incarnation"); the marked tests take one lock across the xdist workers, one
#: at a time (``tests/test_lint.py`` finds a module that runs a launcher unmarked)
CLUSTER = "pytest.mark.cluster"


@pytest.fixture(autouse=True)
def _one_cluster_job_at_a_time(request, tmp_path_factory):
    """A test marked ``cluster`` holds the session's cluster lock (a file lock in the
    session's folder, which every xdist worker shares) while it runs."""
    if request.node.get_closest_marker("cluster") is None:
        yield
        return
    import fcntl

    with open(cluster_lock(tmp_path_factory), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def cluster_lock(tmp_path_factory) -> Path:
    """The session's cluster lock file."""
    return session_folder(tmp_path_factory) / "cluster.lock"


def session_folder(tmp_path_factory) -> Path:
    """The folder every xdist worker of the session shares (the workers' folders are in
    it); without xdist, the session's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def in_schedule_order(items: list) -> list:
    """The tests in the order the xdist workers take their modules (``make test`` runs
    ``--dist loadfile --no-loadscope-reorder``: the order collected is the order taken):
    the asv module first (its runs in virtualenvs across two commits are the longest
    single unit, ~90 s; begun last, it ended the session ~20 s after the other workers
    had), then the modules with the most tests first; a module's tests as collected."""
    groups: dict[str, list] = {}
    for item in items:
        groups.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def first(group: str) -> tuple[bool, int]:
        return (not any(i.get_closest_marker("asv") for i in groups[group]),
                -len(groups[group]))

    return [item for group in sorted(groups, key=first) for item in groups[group]]


#: what in a test's (or a fixture's) source starts processes
STARTS = ("podscale(", "execute(", "subprocess", "run_local(")


def _starts_processes(fn, names: dict, depth: int = 2) -> bool:
    """Whether ``fn``'s source starts processes, or names (calls, or hands on to be
    called) a function of ``names`` (its module's globals) that does, ``depth`` deep."""
    import inspect
    import re

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    if any(s in source for s in STARTS):
        return True
    called = [f for n, f in names.items() if inspect.isfunction(f) and f is not fn
              and (f"{n}(" in source or re.search(rf"[(,]\s*{re.escape(n)}\s*[,)]", source))]
    return depth > 0 and any(_starts_processes(f, vars(inspect.getmodule(f) or fn),
                                               depth - 1) for f in called)


#: per test, what in it starts processes: the test itself (its node id) and each fixture of
#: ours that does, once per its scope (a module's fixture once per module, a session's once)
LAUNCHES = pytest.StashKey[frozenset]()


#: every test collected, before ``-m`` deselects any (make test runs the ``alone`` tests
#: in a second session: the launch budget still counts the whole suite's)
COLLECTED = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Mark a test ``slow`` when it starts real processes: its own source, or that of any
    fixture it uses (directly or through others), calls the CLI or a launcher; unless its
    module already says ``cluster`` or ``asv``. ``make quick`` runs the rest, and there
    (``PODSCALE_QUICK=1``) any process start fails the test: the marking is checked.
    (Which worker runs a test: pytest-xdist's ``loadfile``, in :func:`in_schedule_order`.)"""
    config.stash[COLLECTED] = list(items)
    for item in items:
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        names = vars(item.module)
        starters = {(d.scope, d.func) for ds in defs.values() for d in ds  # ours, not pytest's
                    if d.func.__module__.startswith("tests") and d.argname[0] != "_"
                    and _starts_processes(d.func, vars(sys.modules[d.func.__module__]))}
        once = {"module": item.module.__name__, "session": "session"}
        item.stash[LAUNCHES] = frozenset(
            {f"{once.get(scope, item.nodeid)}:{f.__qualname__}" for scope, f in starters}
            | ({item.nodeid} if _starts_processes(item.function, names) else set()))
        if item.get_closest_marker("cluster") or item.get_closest_marker("asv"):
            continue
        if item.stash[LAUNCHES]:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = in_schedule_order(items)


@pytest.fixture(autouse=True)
def _quick_starts_nothing(monkeypatch):
    """Under ``make quick`` no test may start a process (a test that does is unmarked)."""
    if os.environ.get("PODSCALE_QUICK") != "1":
        return

    real = subprocess.Popen.__init__

    def refuse(self, args, *a, **k):
        if Path(str(args[0] if isinstance(args, (list, tuple)) else args).split()[0]
                ).name == "git":  # the environment metadata: no worker
            return real(self, args, *a, **k)
        raise AssertionError(f"make quick starts no process, but this test ran {args!r}: "
                             "it must be marked slow (tests/conftest.py STARTS)")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Path:
    """podscale as a user gets it: a wheel built from this checkout, installed (no
    dependencies: they are this environment's) into a folder outside the repository (one
    for the whole session: :func:`shared_once`)."""
    return shared_once(tmp_path_factory, "wheel", _install)


def _install(work: Path) -> Path:
    import shutil
    import zipfile

    source = work / "source"  # a copy of the working tree: building never touches it
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                          "--no-build-isolation", "-w", str(work / "dist"), str(source)],
                         capture_output=True, text=True, cwd=work)
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


def xprof_opens(xplanes: list[Path]) -> dict:
    """What XProf's own converters make of one session's traces (one per process): the
    overview page's task count over all of them, and per process the trace viewer's
    events, the op profile and the framework op stats, parsed (a tool that cannot read a
    trace returns nothing, or JSON that does not parse). The tools cache what they derive
    beside the traces: they read copies, and the session stays as the run left it."""
    import json
    import shutil
    import tempfile

    from xprof.convert import raw_to_tool_data as xprof

    from podscale.analysis.data.traces import _quiet_stderr

    def tool(paths: list[Path], name: str):
        with _quiet_stderr():
            data, _ = xprof.xspace_to_tool_data([str(p) for p in paths], name, {})
        return json.loads(data)

    with tempfile.TemporaryDirectory(prefix="xprof-") as session:
        copies = [Path(shutil.copy2(p, Path(session) / p.name)) for p in xplanes]
        overview = tool(copies, "overview_page")
        run_env = next(t["p"] for t in overview if "task_count" in t.get("p", {}))
        return {"tasks": int(run_env["task_count"].split()[0]),
                "events": [len(tool([p], "trace_viewer@")["traceEvents"]) for p in copies],
                "op_profile": [sorted(tool([p], "op_profile")) for p in copies],
                "framework_op_stats": [len(tool([p], "framework_op_stats")) for p in copies]}


def stamps(xplane: Path) -> list[dict]:
    """The ``podscale_session`` stamps a trace holds (their arguments)."""
    from jax.profiler import ProfileData

    return [dict(ev.stats) for plane in ProfileData.from_file(str(xplane)).planes
            for line in plane.lines for ev in line.events if ev.name == "podscale_session"]
