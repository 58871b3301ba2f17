"""A profiled job ends when one of its processes does: a rank that raises or calls
``sys.exit`` before step 5 (``tests/programs/fails.py``), while the others wait for it in
the step's all-reduce, ends the job promptly with the script's exit code, naming the
process and its traceback's last line — under ``podscale profile`` and under mpirun with no
podscale front end, where mpirun is told not to end the job itself (as on TPU VMs or
Kubernetes, nothing else would)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, only_run, podscale

PROGRAM = ROOT / "tests" / "programs" / "fails.py"
HANG_TIMEOUT = 10  # the job must end well before the roll-call would call it a hang


#: far below the front end's --timeout (300 s): a job that ran into it did not end by the
#: failure; how promptly it ended is read from the run's own clock (:func:`_ended_together`)
TIMEOUT_S = 150


def _ended_together(run_dir: Path) -> None:
    """By the run's own clock (every process's end record, on process 0's clock): every
    process ended within the hang timeout of the first to end (the failing one), so the
    job ended by the failure, not by the roll-call or a timeout, however loaded the
    machine was while the processes started."""
    from podscale.analysis.profile.load import load_profile

    ends = load_profile(run_dir).processes["end"]
    assert ends.notna().all(), ends
    assert ends.max() - ends.min() < HANG_TIMEOUT, ends


def _gone(run_dir: Path) -> None:
    """Every process of the run has exited (by the pids its records hold)."""
    pids = [json.loads(p.read_text().splitlines()[0])["pid"]
            for p in (run_dir / "profile").glob("process-*.jsonl")]
    assert pids
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except (FileNotFoundError, IndexError):
            continue
        assert state == "Z", f"process {pid} left running"


@pytest.mark.parametrize("fault,code,line", [
    (["--raise", "1:5"], 1, "ValueError: process 1 cannot go on at step 5"),
    (["--exit", "1:5:3"], 3, "process 1 failed (exit code 3)"),
])
def test_a_failing_rank_ends_the_profiled_job_with_its_code(tmp_path, fault, code, line):
    began = time.monotonic()
    res = podscale("profile", "--hosts", "2", "--hang-timeout", str(HANG_TIMEOUT), "--out",
                   str(tmp_path), str(PROGRAM), *fault, timeout=300)
    took = time.monotonic() - began
    assert res.returncode == code, res.stderr[-3000:] + res.stdout[-2000:]
    assert took < TIMEOUT_S, took  # ended by the failure, not by the front end's timeout
    out = res.stdout + res.stderr
    assert line in out and "process 1 exited with code" in res.stderr
    mine = res.stdout.split("# process 0's output", 1)[1].split("# process 1's output")[0]
    assert "process 0 stops too" in mine and "Traceback" not in mine  # no consequence shown
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    _gone(run_dir)
    _ended_together(run_dir)
    ends = {}
    for path in (run_dir / "profile").glob("process-*.jsonl"):
        records = [json.loads(x) for x in path.read_text().splitlines()]
        end = next(r for r in records if r.get("kind") == "end")
        ends[int(path.stem.split("-")[1])] = end
    assert {p: e["exit_code"] for p, e in ends.items()} == {0: code, 1: code}
    assert ends[0]["error"].startswith("stopped: process 1 failed")


@pytest.mark.cluster
@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI's mpirun not installed")
def test_a_failing_rank_ends_an_mpirun_job_with_no_front_end(tmp_path):
    """mpirun told to leave the job alone when a process exits non-zero
    (orte_abort_on_non_zero_status=0): the others end by themselves, from the failure
    the rank published; the run directory says so."""
    run_dir = tmp_path / "run"
    environ = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
               f"{os.environ['PATH']}", "OMPI_ALLOW_RUN_AS_ROOT": "1",
               "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_oob_tcp_if_include": "lo",
               "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_rmaps_base_oversubscribe": "1",
               "OMPI_MCA_orte_abort_on_non_zero_status": "0"}
    began = time.monotonic()
    res = subprocess.run(["mpirun", "-np", "2", sys.executable, "-m", "podscale", "attach",
                          "--run-dir", str(run_dir), "--hang-timeout", str(HANG_TIMEOUT),
                          str(PROGRAM), "--exit", "1:5:3"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env=environ)
    took = time.monotonic() - began
    assert took < TIMEOUT_S, (took, res.stderr[-2000:])
    assert "podscale: process 1 failed (exit code 3); process 0 stops too" in res.stderr
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "failed" and "process 1 failed" in manifest["error"]
    _gone(run_dir)
    _ended_together(run_dir)


FORKS = ROOT / "tests" / "programs" / "forks.py"


def test_a_killed_front_end_leaves_nothing_and_the_run_reads_abandoned(tmp_path):
    """SIGKILL of ``podscale profile`` while its program's processes each run a ``sleep``
    and a forked child of their own: within 5 s not one of them is left (each process
    takes its group with it), and ``show`` says the run was abandoned."""
    pids = tmp_path / "pids"
    front = subprocess.Popen([sys.executable, "-m", "podscale", "profile", "--hosts", "2",
                              "--hang-timeout", "off", "--out", str(tmp_path / "out"),
                              str(FORKS), str(pids)], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not all(Path(f"{pids}.{p}").exists() for p in (0, 1)):
            assert time.monotonic() < deadline and front.poll() is None
            time.sleep(0.2)
        started = [int(v) for p in (0, 1) for v in Path(f"{pids}.{p}").read_text().split()]
        assert all(_alive(pid) for pid in started)
    finally:
        front.kill()
        front.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in started if _alive(pid)]
    for pid in left:  # what this test started, by id
        os.kill(pid, signal.SIGKILL)
    assert not left, left
    res = podscale("show", str(only_run(tmp_path / "out")))
    assert res.returncode == 0, res.stderr
    head = res.stdout.splitlines()
    assert "(abandoned)" in head[0] and head[1].startswith("# abandoned: its front end"), head


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, reaped by no one yet, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


OWN = ROOT / "tests" / "programs" / "own way.py"


def test_the_programs_own_errors_input_and_name_are_its_own(tmp_path):
    """A second ``initialize()`` fails with JAX's own words and no podscale frame; a
    KeyboardInterrupt the program raises is its failure (exit 130, its traceback), not an
    interrupt of podscale's; piped input reaches process 0; a file name with a space makes
    a run name; a run with no step compared is named with its status."""
    out = tmp_path / "out"
    twice = podscale("profile", "--hosts", "1", "--out", str(out), "--name", "twice",
                     str(OWN), "twice")
    assert twice.returncode == 1, twice.stderr
    shown = twice.stdout
    assert "RuntimeError: distributed.initialize should only be called once." in shown, shown
    assert "podscale/attach" not in shown and "must be called before" not in shown, shown
    assert "- process 0's program exited with code 1: RuntimeError: distributed" in shown
    raised = podscale("profile", "--hosts", "1", "--out", str(out), "--name", "raised",
                      str(OWN), "interrupt")
    assert raised.returncode == 130, raised.stderr
    assert "interrupted by SIGINT" not in raised.stderr + raised.stdout
    assert "raise KeyboardInterrupt\nKeyboardInterrupt" in raised.stdout, raised.stdout
    piped = podscale("profile", "--hosts", "2", "--out", str(out), str(OWN), "stdin",
                     input="hello there\nmore\n")
    assert piped.returncode == 0, piped.stderr
    assert "process 0 read 'hello there'" in piped.stdout
    assert "process 1 read '-'" in piped.stdout
    named = [p.name for p in out.iterdir() if p.name.endswith("-own-way")]
    assert len(named) == 1, list(out.iterdir())
    res = podscale("compare", str(out / named[0]), str(next(out.glob("*-twice"))))
    assert res.returncode == 2 and "run B (" in res.stderr and \
        "failed) has no step to compare" in res.stderr, res.stderr
