"""Where the wall time went: every launch's phases per process, and a process planted to
start 2 s late named as the join straggler that the others waited for."""

import os

import pytest

from podscale.analysis import load_run
from podscale.analysis.models.ledger import PHASES, launches, sentences, stragglers
from tests.conftest import only_run, podscale


@pytest.mark.alone
def test_late_process_is_named_the_join_straggler(tmp_path):
    res = podscale("run", "psum", "--hosts", "2", "--devices-per-host", "1", "--sizes", "4K",
                   "--variants", "shard_map", "--rounds", "1", "--iters", "3", "--warmup", "1",
                   "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "late=3@1:*"})
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    run = load_run(only_run(tmp_path))
    ledger = run.ledger
    assert sorted(ledger["process"]) == [0, 1]
    per = launches(ledger)
    assert set(per["phase"]) >= {"interpreter", "import", "join", "prepare", "compile",
                                 "warmup", "barrier", "timed", "check", "write"}
    assert set(per["phase"]) <= set(PHASES)
    join = per[per.phase == "join"].iloc[0]
    (lag,) = stragglers(ledger).itertuples()
    # by the run's own clock: process 1 came the planted 3 s late plus however much later
    # than process 0 it had imported JAX (the machine's start skew, whatever the load)
    imported = ledger.set_index("process")["mark.imported"]
    skew = imported[1] - imported[0]
    assert lag.process == 1 and abs(lag.late_s - skew - 3) < 0.3, (lag, skew)
    # and process 0 waited for it inside the join all that time
    assert join.process == 0 and lag.others_waited_s > lag.late_s - 0.3 and \
        join.max_s > lag.late_s - 0.3
    text = "\n".join(sentences(ledger))
    assert "join straggler in h2xd1 round 0: process 1 began joining" in text
    # the timed iterations the ledger counts are the samples' own seconds
    timed = run.samples[run.samples.phase == "timed"].groupby("process")["seconds"].sum()
    by_process = ledger.set_index("process")["phase.timed"]
    assert abs(by_process - timed).max() < 1e-3


def test_memory_names_the_largest_footprint_and_its_phase():
    """podscale's own footprint per launch: the process with the largest peak RSS and the
    phase that raised it (planted: process 1's check phase grew 300 MB)."""
    import pandas as pd

    from podscale.analysis.models.ledger import memory, sentences

    ledger = pd.DataFrame([
        {"process": 0, "layout": "h2xd1", "round": 0, "phase.check": 1.0, "rss.peak": 410.0,
         "rss.prepare": 40.0, "rss.check": 20.0},
        {"process": 1, "layout": "h2xd1", "round": 0, "phase.check": 1.0, "rss.peak": 700.0,
         "rss.prepare": 40.0, "rss.check": 300.0}])
    (row,) = memory(ledger).itertuples()
    assert (row.process, row.peak_mb, row.phase, row.phase_mb) == (1, 700.0, "check", 300.0)
    assert any("peak RSS 700 MB (process 1" in s and "300 MB of it reached in check" in s
               for s in sentences(ledger))
    assert memory(ledger.drop(columns=["rss.peak"])).empty


def test_worker_numpy_buffers_without_huge_pages():
    """A worker turns numpy's huge-page advice off (its host buffers are written once in a
    short-lived process, where the kernel's compaction on first touch costs more than the
    pages save); numpy's default, on Linux, is on."""
    import subprocess
    import sys

    code = ("from numpy._core.multiarray import _get_madvise_hugepage as on\n"
            "before = on()\n"
            "from podscale.startup.runtime import small_pages\n"
            "small_pages()\n"
            "print(before, on())\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out == ["True", "False"]


def test_a_process_start_is_read_to_the_clock_tick():
    """A process's start, as its ledger reads it from /proc, lies between the instant its
    parent started it and its own first line (to the 10 ms tick): the boot time in whole
    seconds that it had been read against put it up to 1 s early (0.96 s here)."""
    import subprocess
    import sys
    import time

    code = ("import time\nfirst = time.time()\n"
            "from podscale.startup.ledger import process_start\n"
            "print(process_start(), first)\n")
    before = time.time()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    start, first = map(float, out)
    assert before - 0.02 <= start <= first + 0.02, (before, start, first)
