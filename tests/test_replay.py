"""podscale replay on real multi-process runs: a data-parallel step's gradient all-reduce
and a tensor-parallel matmul's all-gather are found with their bytes and participants,
replayed, and set against the step; collectives it cannot read are listed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd

from podscale.analysis.verdicts.replay import results
from tests.conftest import ROOT, only_run, podscale
from tests.synth import make_run

SMALL = ["--hosts", "2", "--devices-per-host", "2", "--rounds", "1", "--iters", "5",
         "--warmup", "1"]


def test_mlp_gradient_all_reduce_is_found_replayed_and_traced(tmp_path):
    """The gradient all-reduce of mlp_step (f*h + 2h + 1 float32 values, every device of
    2 hosts x 4: replayed in groups of 2, 4 and 8, so predicted at larger n);
    every replayed step planted 120 ms slower (a loaded machine's step took 62 ms; 50 ms had
    fallen under it): the sum exceeds the step and the report
    says the step overlaps its collectives; the trace gives the collective time."""
    eight = [*SMALL[:2], "--devices-per-host", "4", *SMALL[4:]]  # n = 2, 4, 8: predicts
    res = podscale("replay", "examples/mlp.py:mlp_step", *eight, "--profile",
                   "--traced-iters", "2", "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "slow=0.12@*:replay"})
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    run = only_run(tmp_path)
    table = pd.read_csv(run / "replay.csv")
    (row,) = table.itertuples()
    assert (row.kind, row.participants, row.count, row.groups) == ("all_reduce", 8, 1, 1)
    assert row.bytes == (64 * 128 + 2 * 128 + 1) * 4 and row.dtype == "f32"
    assert row.time_s > 0.12  # the planted 120 ms is in every replayed step
    summary = results(run)["steps"].iloc[0]
    assert summary.overlaps and summary.collectives_s > summary.step_s
    # in the traced pass (profiled: slower than the timed steps), the collective time is a
    # part of each traced step, and its overlap with compute no larger than that part
    steps = pd.read_csv(run / "traces" / "steps.csv")
    assert len(steps) == 2 * 2  # processes x traced iterations
    assert ((steps.collective_us > 0) & (steps.collective_us <= steps.wall_us)).all()
    assert ((steps.hidden_us >= 0) & (steps.hidden_us <= steps.collective_us)).all()
    assert 0 < summary.trace_collective_s and \
        0 <= summary.trace_hidden_s <= summary.trace_collective_s
    assert summary.pred_64_s > 0 and summary.lo_64_s <= summary.pred_64_s <= summary.hi_64_s
    report = (run / "report" / "summary.md").read_text()
    assert "## Collective replay" in report and "overlaps its collectives" in report
    assert "in the profiler trace, collectives take" in report
    assert "model output" in report and "replayed collectives" in res.stdout


def test_tensor_parallel_matmul_all_gather(tmp_path):
    res = podscale("replay", "examples/tp_matmul.py", *SMALL, "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    run = only_run(tmp_path)
    (row,) = pd.read_csv(run / "replay.csv").itertuples()
    # x's rows: 256 per process = 128 per device, k = 128 float32: what each device sends
    assert (row.kind, row.participants, row.bytes) == ("all_gather", 4, 128 * 128 * 4)
    steps = results(run)["steps"].iloc[0]
    assert 0 < steps.share and steps.collectives_s == row.time_s
    inventory = pd.read_csv(run / "replay-inventory.csv")
    assert list(inventory.kind) == ["all_gather"]


def test_collectives_it_cannot_read_are_listed(tmp_path):
    """A module with collectives podscale cannot replay or read: listed with why."""
    run = make_run(tmp_path / "r", hosts=(2,), dph=(2,), sizes=(1024,))
    case_id = json.loads(next(run.glob("records/*/process-0.jsonl")).read_text().splitlines()[
        1])["case_id"]
    hlo = run / "hlo" / "h2xd2"
    hlo.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "data" / "module.hlo.txt", hlo / "x.hlo.txt")
    (hlo / "x.json").write_text(json.dumps({"case_id": case_id, "case_devices": [0, 1, 2, 3],
                                            "logical_devices": [0, 1, 2, 3]}))
    table = results(Path(run))["collectives"]
    listed = table.set_index("collective")
    assert "not replayed" in listed.loc["ra", "note"] and "not replayed" in listed.loc["bad",
                                                                                        "note"]
    assert set(listed.index) >= {"ag", "ags", "rs", "ars", "cp"}  # the readable ones too
    assert "unknown trip count" in listed.loc["cp", "note"]


def test_distinct_collectives_and_what_replay_changes():
    """Identical instructions merge (counts add; an unknown count stays unknown); an
    integer dtype is replayed as float32 bytes and a size that does not split into whole
    chunks is rounded up — both flagged."""
    from podscale.analysis.verdicts.replay import specs

    def row(name, kind, dtype, nbytes, count=1, groups=((0, 1, 2, 3),)):
        return {"case_id": "c", "name": name, "kind": kind, "count": count, "dtype": dtype,
                "send_bytes": nbytes, "participants": len(groups[0]),
                "group_list": [list(g) for g in groups], "pairs": [], "op": "sum"}

    inv = pd.DataFrame([row("all-reduce.1", "all_reduce", "f32", 33796),
                        row("all-reduce.2", "all_reduce", "f32", 33796, count=3),
                        row("all-gather.1", "all_gather", "s32", 100, count=None),
                        row("reduce-scatter.1", "reduce_scatter", "f32", 20,
                            groups=((0, 2), (1, 3)))])
    got = {s["params"]["of"]: s for s in specs(inv)}
    merged = got["all-reduce.1+1"]
    assert merged["count"] == 4 and merged["params"]["size"] == 33796 and not merged["rounded"]
    s32 = got["all-gather.1"]
    assert s32["dtype"] == "float32" and s32["rounded"] and s32["count"] is None
    rs = got["reduce-scatter.1"]
    assert rs["params"]["size"] == 24 and rs["rounded"]  # 20 B -> 3 float32 per 2 chunks
    assert rs["params"]["groups"] == "0.2|1.3"


def test_replay_share_has_its_spread_over_rounds_and_warns_on_an_unstable_step():
    """Three rounds whose shares are 66%, 70% and 99% (the issue's figures): the sentence
    gives the range, and a step varying 30% between rounds gets a warning."""
    from podscale.analysis.verdicts.replay import round_shares, sentences

    step = pd.Series([1.0, 1.0, 1.0], index=[0, 1, 2])
    part = pd.DataFrame({"replay_case": ["r1"], "count": [1]})
    rm2 = pd.Series([0.66, 0.70, 0.99],
                    index=pd.MultiIndex.from_tuples([("r1", 0), ("r1", 1), ("r1", 2)]))
    got = round_shares(step, part, rm2)
    assert (got["share_lo"], got["share_hi"], got["share_rounds"]) == (0.66, 0.99, 3)
    assert got["step_cv"] == 0.0
    unstable = round_shares(pd.Series([1.0, 1.6, 0.8], index=[0, 1, 2]), part, rm2)
    assert unstable["step_cv"] > 0.1
    res = {"predict_n": (64,), "steps": pd.DataFrame([
        {"case_id": "c", "step_s": 1.0, "collectives_s": 0.7, "share": 0.7, "overlaps": False,
         "trace_collective_s": float("nan"), "trace_hidden_s": float("nan"),
         "pred_64_s": float("nan"), "lo_64_s": float("nan"), "hi_64_s": float("nan"),
         **unstable}])}
    (line, why) = sentences(res)
    assert "44% to 124% over 3 rounds" in line and "WARNING: the step itself varies 37%" in line
    assert why.startswith("c: no prediction at n=64: a scaling model needs")
