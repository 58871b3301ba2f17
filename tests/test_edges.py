"""The edges a demanding user hits: a run stopped before its first case ended, read by
every reader in every format."""

from __future__ import annotations

import json
import os
import shutil

from tests.conftest import only_run, podscale


def test_a_run_stopped_in_its_first_case_reads_everywhere(tmp_path):
    """Process 1 raises in case 0 (planted): the run keeps no completed case; show (text,
    csv, json) says so and its machine formats still parse; compare refuses it in one line
    naming the run; none is an internal error."""
    res = podscale("run", "psum", "--hosts", "2", "--devices-per-host", "1", "--sizes", "1K",
                   "--rounds", "1", "--iters", "2", "--out", str(tmp_path / "runs"),
                   env={**os.environ, "PODSCALE_FAULT": "raise@1:0"})
    assert res.returncode == 3, res.stderr
    run = only_run(tmp_path / "runs")
    text = podscale("show", str(run))
    assert text.returncode == 0 and "# no case completed" in text.stdout, text.stderr
    for fmt in ("csv", "json"):
        res = podscale("show", str(run), "--format", fmt)
        assert res.returncode == 0, res.stderr
        assert "no case completed (failed)" in res.stderr and "internal" not in res.stderr
    assert json.loads(podscale("show", str(run), "--format", "json").stdout)["cases"] == []
    header = podscale("show", str(run), "--format", "csv").stdout.splitlines()
    assert len(header) == 1 and "time_s" in header[0]
    res = podscale("compare", str(run), str(run))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "has no completed case (failed): nothing to compare" in res.stderr
    # history among runs that completed cases: named as left out, not dropped unsaid
    from podscale.selfbench.historystage import make_history

    folder = tmp_path / "history"
    made = make_history(folder, 2, 2, seed=1)
    shutil.copytree(run, folder / run.name)
    res = podscale("history", str(folder))
    assert res.returncode == 0, res.stderr
    assert f"# left out: {folder / run.name} (no completed case: failed)" in res.stdout
    shutil.rmtree(made[0])  # one run with cases beside it is no history
    res = podscale("history", str(folder))
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1 and \
        "needs 2 or more runs with a completed case; 1 of 2 have none" in res.stderr


def test_judge_and_timing_checked_together_before_anything_launches(tmp_path):
    """ab --judge device of cases timed each alone: refused before a launch, naming both
    options as given; compare's refusal names --judge too."""
    res = podscale("ab", "psum", "--judge", "device", "--timing", "each", "--sizes", "1K",
                   "--hosts", "1", "--out", str(tmp_path / "ab"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--judge device judges a method the cases do not time (--timing each)" in res.stderr
    assert not (tmp_path / "ab").exists()


def test_a_judged_history_names_the_runs_it_leaves_out(tmp_path):
    """history --judge device over 5 runs of which 3 hold device times: the other 2 are
    named as left out; with one run holding it, refused (one run alone is no history)."""
    import pytest

    from podscale.analysis.verdicts import history
    from podscale.core.errors import UsageError
    from podscale.selfbench.historystage import make_history

    paths = make_history(tmp_path, 5, 3, seed=1)
    for path in paths[2:]:
        store = path / "cache" / history.STORE
        data = json.loads(store.read_text())
        at = {c: i for i, c in enumerate(data["columns"])}
        for row in data["rows"]:
            row[at["device_s"]] = row[at["chain_s"]] / 2
        store.write_text(json.dumps(data))
    df, skipped = history.gather([tmp_path], "device")
    assert df["run_id"].nunique() == 3
    assert sorted(skipped) == sorted(f"{p.name} (no device times)"
                                                 for p in paths[:2])
    for path in paths[3:]:
        shutil.rmtree(path)
    with pytest.raises(UsageError, match="needs 2 or more runs that time it; 1 do"):
        history.collect([tmp_path], "device")


def test_trace_checks_what_it_is_given(tmp_path):
    """trace on a folder that is no run, and --traces naming no folder: one line each."""
    res = podscale("trace", str(tmp_path))
    assert res.returncode == 2 and "not a run directory (no run.json)" in res.stderr
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")
    res = podscale("trace", str(run), "--traces", str(tmp_path / "nonexistent"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert f"--traces {tmp_path / 'nonexistent'}: no such folder" in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = podscale("trace", str(run), "--traces", str(empty))  # was ignored without a word
    assert res.returncode == 2 and res.stderr == (
        f"podscale: error: --traces {empty}: no XSpace files (*.xplane.pb) in it: name the "
        "folder --trace-dir wrote, or its copy\n")
