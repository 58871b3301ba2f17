"""``--launcher ray`` on a real local Ray cluster (started and stopped by each run): 2
simulated hosts x 2 devices as Ray actors, the same table and exact checks as the local
launcher, the run home through Ray's object store; a failing process and an actor killed
from outside are named, the records so far kept; a cluster too small for the layout is
refused before any actor starts; no Ray process is left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, only_run, podscale
from tests.test_faults import alive, wait_for, worker_pids

pytest.importorskip("ray")

RAY = ["--launcher", "ray", "--platform", "cpu", "--devices-per-host", "2", "--sizes", "4K",
       "--rounds", "1", "--iters", "3", "--warmup", "1"]


def ray_processes() -> list[str]:
    """Ray's own processes on this machine (no other test starts Ray)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines()
            if any(k in line for k in ("raylet", "gcs_server", "ray::"))
            and "<defunct>" not in line]


def test_a_run_on_ray_actors_matches_the_local_table_and_leaves_no_ray_process(tmp_path):
    """Each actor in its own copy of the run folder (``PODSCALE_RAY_SHIP=1``: as on a node
    that does not share it), the plans shipped in and the records home through Ray's
    object store; the other tests run in the shared folder."""
    res = podscale("run", "dot,psum", "--hosts", "2", *RAY, "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_RAY_SHIP": "1"})
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    said = (only_run(tmp_path) / "logs" / "h2xd2" / "ray.log").read_text()
    for i in (0, 1):  # its records file, written in its copy and nowhere else
        assert f"ray: process {i}'s copy of the run folder came home: 1 file(s)" in said, said
    assert "Exact checks         : 4 of 4 cases" in res.stdout, res.stdout
    from podscale.analysis import load_run

    run = load_run(only_run(tmp_path))
    assert set(run.samples["process"]) == {0, 1}
    assert set(run.cases["hosts"]) == {2} and set(run.cases["process"]) == {0, 1}
    assert set(run.cases["wrong"]) == {0} and len(run.cases) == 8  # 4 cases x 2 processes
    wait_for(lambda: not ray_processes(), timeout=10)


def test_a_failing_process_on_ray_is_named_and_its_records_kept(tmp_path):
    res = podscale("run", "dot", "--hosts", "2", *RAY, "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "raise@1:1"})
    assert res.returncode == 3, res.stderr
    assert "(ray): process 1 failed (ray exited with code 1)" in res.stderr, res.stderr
    assert "RuntimeError: injected failure in process 1" in res.stderr, res.stderr
    run = only_run(tmp_path)
    assert list(run.glob("records/*/process-0.jsonl")), list(run.rglob("*"))
    wait_for(lambda: not ray_processes(), timeout=10)


def test_an_actor_killed_from_outside_ends_the_run_named_and_leaves_no_process(tmp_path):
    """Process 1 hangs in its first case; its Ray actor is killed (SIGKILL): the driver
    names it within its poll, the hung worker dies with its actor (its lifeline), and the
    front end says which process, all within the run's own case timeout."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "podscale", "run", "dot", "--hosts", "2", *RAY,
         "--case-timeout", "120", "--out", str(tmp_path)], cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PODSCALE_FAULT": "hang@1:0"})
    try:
        wait_for(lambda: any(tmp_path.iterdir()) and
                 len(worker_pids(only_run(tmp_path))) == 2, timeout=120)
        pids = worker_pids(only_run(tmp_path))
        actor = int(Path(f"/proc/{pids[1]}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert "ray::Host" in Path(f"/proc/{actor}/cmdline").read_text()
        os.kill(actor, signal.SIGKILL)
        killed = time.monotonic()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - killed < 120  # before the case timeout would have said it
    assert proc.returncode == 3, err
    assert "(ray): process 1 failed" in err and "last output: ray: process 1's actor died " \
        "(ActorDiedError" in err, err
    wait_for(lambda: not any(alive(p) for p in pids.values()), timeout=10)
    wait_for(lambda: not ray_processes(), timeout=10)


def test_a_ray_cluster_too_small_for_the_layout_is_refused_before_any_actor(tmp_path):
    """The local cluster has this machine's CPUs; a process a CPU: one process more than
    the CPUs is refused in one line, with the figures, and no worker ever starts."""
    hosts = str((os.cpu_count() or 2) + 1)
    res = podscale("run", "dot", "--hosts", hosts, *RAY, "--out", str(tmp_path))
    assert res.returncode == 2, res.stderr
    assert f"the Ray cluster started here cannot hold {hosts} processes: CPU" in res.stderr
    assert f"(needs {hosts}: 1 per process)" in res.stderr, res.stderr
    assert not worker_pids(only_run(tmp_path))
    wait_for(lambda: not ray_processes(), timeout=10)


def test_a_program_profiled_on_ray_actors_and_a_sigterm_ends_every_one(tmp_path):
    """``profile --launcher ray``: an unmodified training loop under attach on 2 actors;
    SIGTERM to the front end part way ends every process and Ray, the run kept
    (interrupted) and its steps read for both processes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "podscale", "profile", "--launcher", "ray", "--platform",
         "cpu", "--hosts", "2", "--out", str(tmp_path), str(ROOT / "tests" / "programs" /
                                                              "train.py"), "--steps", "100000"],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def stepping() -> bool:
            runs = list(tmp_path.iterdir())
            return bool(runs) and all(
                '"calls"' in p.read_text() for p in (runs[0] / "profile").glob("process-*.jsonl")
            ) and len(list((runs[0] / "profile").glob("process-*.jsonl"))) == 2

        wait_for(stepping, timeout=120)
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    run = only_run(tmp_path)
    shown = podscale("show", str(run))
    assert "(interrupted)" in shown.stdout, shown.stdout + shown.stderr
    table = shown.stdout.split("process  steps", 1)[1].splitlines()[1:3]
    assert [line.split()[0] for line in table] == ["0", "1"], shown.stdout
    wait_for(lambda: not ray_processes(), timeout=10)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(run) not in ps, ps  # no attach of this run left


def test_the_ray_launchers_words_are_checked_before_anything_starts():
    """``--launcher-args`` for ray: an unknown option, a word that is no number, or
    ``--processes`` (which ``--hosts`` says) is one line, before any process or folder."""
    from podscale.core.errors import UsageError
    from podscale.launch.options import LaunchOptions

    for words, said in ((("--cpus", "2"), "unknown option '--cpus' (known: --processes"),
                        (("--cpus-per-process", "lots"), "'lots' is not a number"),
                        (("--processes", "3"), "--processes is podscale's (--hosts)"),
                        (("--home", "/x"), "--home is podscale's (--out)")):
        with pytest.raises(UsageError, match=re.escape(said)):
            LaunchOptions(launcher="ray", launcher_args=words)
    assert LaunchOptions(launcher="ray", launcher_args=("--address", "ray://h:1")).launcher \
        == "ray"
