"""Messages that point at the cause: the user's exception (not JAX's traceback footer),
the launcher's own refusal, the time a join really took, a path that is a file, a
workload's own ValueError, a run with no case to fit."""

import os
import subprocess

from podscale.launch.cluster import LauncherProcess
from podscale.launch.exits import last_line, never_joined
from podscale.startup.runtime import join_failed
from tests.conftest import ROOT, only_run, podscale

JAX_FOOTER = """  File "/tmp/w.py", line 94, in loss
    raise ValueError("my loss is broken: shapes do not line up")
ValueError: my loss is broken: shapes do not line up
--------------------
For simplicity, JAX has removed its internal frames from the traceback of the following \
exception. Set JAX_TRACEBACK_FILTERING=off to include these.
"""


def test_last_output_is_the_users_exception_not_the_jax_footer(tmp_path):
    log = tmp_path / "process-0.log"
    log.write_text(JAX_FOOTER)
    assert last_line(log) == "ValueError: my loss is broken: shapes do not line up"


def test_the_launchers_own_refusal_is_the_last_output(tmp_path):
    log = tmp_path / "mpirun.log"
    log.write_text("# mpirun -np 2 --tag-output --nosuchflag python -m podscale.worker p\n"
                   'mpirun: Error: unknown option "--nosuchflag"\n'
                   "Type 'mpirun --help' for usage.\n")
    proc = LauncherProcess(0, subprocess.Popen(["true"]), log)
    proc.popen.wait()
    assert proc.culprit() == ("mpirun", 'mpirun: Error: unknown option "--nosuchflag"')
    records = [tmp_path / f"h2xd{d}" / f"process-{i}.jsonl" for d in (1, 2) for i in (0, 1)]
    records[1].parent.mkdir()
    records[1].write_text("")  # process 1 joined (its first layout's records)
    assert never_joined(records) == [0]


def test_a_join_that_failed_fast_says_how_fast():
    fast = str(join_failed(1, "127.0.0.1:1234", 120, RuntimeError("UNAVAILABLE: refused"),
                           1.7))
    assert "after 1.7s (of a 120s timeout): UNAVAILABLE: refused" in fast
    assert "within 120s" in str(join_failed(1, "h:1", 120, RuntimeError("x"), 120.2))


def test_worker_run_dir_that_is_a_file(tmp_path):
    path = tmp_path / "file"
    path.write_text("")
    res = podscale("worker", "psum", "--run-dir", str(path), "--platform", "cpu")
    assert res.returncode == 2 and f"--run-dir {path} is a file" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_a_workloads_valueerror_is_its_refusal(tmp_path):
    source = tmp_path / "w.py"
    source.write_text(
        "from podscale import Param\nfrom podscale.suites.psum import Psum\n\n\n"
        "class Picky(Psum):\n    name = 'picky'\n\n"
        "    def check_case(self, case):\n"
        "        if case.p['size'] > 4096:\n"
        "            raise ValueError('size above 4096 is not supported by picky')\n\n\n"
        "picky = Picky()\n")
    res = podscale("run", f"{source}:picky", "--sizes", "8K", "--out", str(tmp_path / "o"))
    assert res.returncode == 2, res.stderr
    assert "picky: case picky@1/" in res.stderr and "size above 4096" in res.stderr
    assert "internal error" not in res.stderr and not (tmp_path / "o").exists()


def test_fit_of_a_run_where_no_case_completed(tmp_path):
    res = podscale("run", "psum", "--hosts", "1", "--devices-per-host", "1", "--sizes", "4K",
                   "--rounds", "1", "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "raise@0:0"})
    assert res.returncode != 0
    fit = podscale("fit", str(only_run(tmp_path)))
    assert fit.returncode == 2 and "no case completed in this run (failed)" in fit.stderr


def test_seed_admission_on_measured_memory(tmp_path):
    res = podscale("seed", "--hosts", "1000", "--out", str(tmp_path))
    assert res.returncode == 2 and "450 MB per seed process, measured" in res.stderr
    assert not any(tmp_path.iterdir())


def test_profile_admission_before_any_process(tmp_path):
    """``profile`` is refused by the same one check as run and seed
    (podscale/launch/fitting.py), before any folder or process."""
    res = podscale("profile", "--hosts", "1000", "--out", str(tmp_path / "o"),
                   str(ROOT / "tests" / "programs" / "train.py"))
    assert res.returncode == 2, res.stderr
    assert "1000 processes would need about" in res.stderr and \
        "350 MB per process before the program's own arrays" in res.stderr
    assert not (tmp_path / "o").exists()


def test_ab_says_what_the_worker_overrides_and_when_it_is_aa():
    from podscale.frontend.ab import arm_notes

    notes = arm_notes({}, {"JAX_PLATFORMS": "nosuch"}, cpu=True)
    assert notes[0].startswith("arm B: JAX_PLATFORMS=nosuch has no effect: with --platform "
                               "cpu the worker sets jax_platforms=cpu")
    assert "an A/A run" in notes[-1]
    assert arm_notes({}, {"XLA_FLAGS": "--xla_cpu_enable_fast_min_max=false"}, cpu=True) == []
    assert arm_notes({}, {"JAX_PLATFORMS": "cuda"}, cpu=False) == []
    assert arm_notes({"X": "1"}, {"X": "1"}, cpu=False) == [
        "the arms run the same environment: an A/A run (any verdict other than 'same' is a "
        "false alarm)"]
