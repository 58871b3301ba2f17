"""Computations kept apart and blame only where processes wait (tests/programs/apart.py,
never edited): a step re-wrapped with ``jax.jit`` at every step is one computation, two
jitted lambdas are two, a prefetching thread's calls are counted apart; a step with no
collective across processes loses no time to a slow process; a process compiling its step
for a batch of its own shape, where no program waits on another process, is no desync."""

from __future__ import annotations

import pytest

from podscale import profile_findings as findings
from podscale.analysis.profile.load import load_profile
from podscale.analysis.profile.summary import summarize_profile
from tests.conftest import ROOT, only_run, podscale

# judged on timing: run after the others, alone on the machine (make test)
pytestmark = pytest.mark.alone

APART = ROOT / "tests" / "programs" / "apart.py"


def _profile(out, options: list[str], *args: str):
    res = podscale("profile", "--hosts", "2", "--out", str(out), *options, str(APART), *args)
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    return summarize_profile(only_run(out))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """Process 1 sleeps 50 ms before each of 20 steps of a step all-reducing over both; a
    capture window asked for beyond the steps the program runs."""
    return _profile(tmp_path_factory.mktemp("shared"), ["--profile-steps", "100:110"],
                    "--slow", "1:0.05")


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The same, each process on its own devices; process 1's batch halves from step 5."""
    return _profile(tmp_path_factory.mktemp("local"), [], "--local", "--slow", "1:0.05",
                    "--shapes", "1:5")


def test_computations_by_function_not_by_name(shared):
    s = shared
    names = s.profile.computations.groupby("process")["name"].apply(sorted).to_dict()
    assert names[0] == names[1] == ["<lambda>@apart.py:41", "<lambda>@apart.py:42", "train"]
    assert s.step == "train" and s.steps == 20
    others = s.others.set_index("name")
    assert list(others.index) == ["<lambda>@apart.py:41"]
    assert others.loc["<lambda>@apart.py:41", "calls_min"] == 20
    # the prefetching thread's calls are counted, not in the timeline
    counted = s.profile.processes["other_threads"]
    assert len(counted) == 2 and all(c["<lambda>@apart.py:42"] > 0 for c in counted), counted
    assert not (s.profile.calls["name"] == "<lambda>@apart.py:42").any()
    said = findings(s)
    assert any(line.startswith("process 1 called <lambda>@apart.py:42 (") for line in said)


def test_a_slow_process_costs_the_job_where_the_others_wait(shared):
    s = shared
    row = s.table.set_index("process").loc[1]
    steady = s.blame[(s.blame["step"] >= 2) & (s.blame["last"] == 1)]  # after compiles
    assert row["straggler"] == "chronic", s.table
    assert 18 * 0.05 * 0.7 < steady["lost"].sum() < 18 * 0.05 * 1.3, s.blame
    g = s.goodput.set_index("process")
    parts = g.drop(columns="wall")
    assert len(g) == 2 and (parts >= -1e-6).all().all(), parts  # the threads kept apart
    assert ((parts.sum(axis=1) - g["wall"]).abs() <= 0.01 * g["wall"]).all()
    assert s.desync is None and s.peers is True


def test_a_window_beyond_the_steps_is_said(shared):
    assert "a capture was skipped on every process: --profile-steps 100:110 never opened: "\
        "the step ran 20 time(s)" in findings(shared)


def test_no_time_lost_where_nobody_waits(local):
    s = local
    assert s.peers is False
    assert len(s.table) == 2 and (s.table["lost"] == 0).all() and (s.table["late"] == 0).all()
    assert s.table["straggler"].eq("").all()
    g = s.goodput.set_index("process")
    assert len(g) == 2 and (g["waiting"] == 0).all() and g.loc[1, "host"] > 20 * 0.05 * 0.7
    said = findings(s)
    # the step is the most repeated work: train (its x @ w), not the eval lambda beside it,
    # though both take microseconds (by busy time, load had decided between them)
    assert s.step == "train"
    assert any(line.startswith("train has no collective across processes")
               for line in said), said


def test_a_program_of_its_own_shape_that_waits_on_nobody_is_no_desync(local):
    """Process 1's batch halves from step 5: its step compiles a program of its own, but
    neither process's program waits on the other (no collective across processes), so no
    collective can pair with the wrong peers: no desync (it had been called one). The same
    difference where a program waits on peers is one (test_profile_analysis)."""
    calls = load_profile(local.profile.run_dir).calls
    first = calls[(calls["process"] == 1) & (calls["name"] == "train")]
    assert first["shapes"].str.contains("64").any()  # the planted shape did differ
    assert local.desync is None
    assert not any("desync" in line for line in findings(local)), findings(local)


def test_a_cut_line_is_said_and_load_run_refuses_a_profiled_run(shared, tmp_path):
    import shutil

    import podscale
    from podscale.core.errors import UsageError

    copy = tmp_path / "cut"
    shutil.copytree(shared.profile.run_dir, copy)
    with (copy / "profile" / "process-1.jsonl").open("a") as f:
        f.write('{"kind": "calls", "rows": [[0, 4')
    said = findings(summarize_profile(copy))
    assert "process 1's record has 1 line(s) cut short (written as the process was killed):"\
        " left out, the rest read" in said, said
    with pytest.raises(UsageError, match="a profiled program's run .* podscale.load_profile"):
        podscale.load_run(copy)
    assert podscale.load_profile(copy).calls.shape == shared.profile.calls.shape


def test_a_ledger_that_cannot_be_right_is_a_defect_not_a_figure(shared):
    """Planted: a straggler table losing more than the job's wall time, and a goodput
    ledger with a negative part (what threads mixed into the steps once gave)."""
    from dataclasses import replace

    wall = float(shared.goodput["wall"].max())
    broken = replace(shared, table=shared.table.assign(lost=[0.0, 2 * wall]),
                     goodput=shared.goodput.assign(unattributed=[-0.161, 0.0]))
    said = [line for line in findings(broken) if line.startswith("defect: ")]
    assert len(said) == 2 and "lost to stragglers in a" in said[0], said
    assert said[1].startswith("defect: process 0's goodput ledger has negative parts "
                              "(unattributed)"), said
    assert not [line for line in findings(shared) if line.startswith("defect: ")]
    from podscale.analysis.render.profiletext import goodput_table

    table = goodput_table(broken)
    assert "defect!" in table and "-161" not in table, table  # never printed as a figure


def test_a_profiled_run_whose_records_are_gone_says_so(shared, tmp_path):
    """profile/ deleted: the manifest still says a profiled program's run; show says its
    records are missing (one line, exit 2), not an empty complete workload run."""
    import shutil

    copy = tmp_path / "gone"
    shutil.copytree(shared.profile.run_dir, copy)
    shutil.rmtree(copy / "profile")
    res = podscale("show", str(copy))
    assert res.returncode == 2 and "no profiled process records" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
