"""The prepared accelerator check, run here on the CPU from a copy of the checkout that is
not installed: it measures, compares with the minimal script, traces and writes a bundle."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_accel_check_on_cpu_from_an_uninstalled_checkout(tmp_path):
    copy = tmp_path / "checkout"
    for part in ("podscale", "analysis", "suites", "tools"):
        shutil.copytree(ROOT / part, copy / part,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy)
    out = tmp_path / "bundle"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODSCALE", "JAX"))}
    res = subprocess.run([sys.executable, str(copy / "tools" / "accel_check.py"), "--out",
                          str(out), "--platform", "cpu", "--iters", "10"], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"podscale from: {copy / 'podscale'}" in res.stdout  # the copy, not an install
    figures = json.loads((out / "figures.json").read_text())
    assert [f["case"].split("@")[0] for f in figures] == ["dot", *["stream"] * 5, "psum",
                                                          *["matmul"] * 3]
    # the matmuls into float32, into bfloat16 (as AMB writes) and int8 into int32
    assert [f["case"].split("/")[2] for f in figures[-3:]] == ["bfloat16", "bfloat16", "int8"]
    assert "out_dtype=input" in figures[-2]["case"]
    ops = [f["case"].split("op=")[1].split("/")[0] for f in figures if "op=" in f["case"]]
    assert ops == ["read", "copy", "scale", "add", "triad"]
    for f in figures:
        assert f["wrong"] == 0 and f["checked"] > 0
        for m in ("each", "chain", "device"):  # the same op, timed both ways per method
            # the same case in the same unit (a unit slip is 1000x); on this CPU a hand
            # loop's device time of a 256K scale once read 330 us beside podscale's 13.6
            assert f[f"podscale_{m}_us"] > 0 and 0.01 < f[f"ratio_{m}"] < 100, (f["case"], m)
        assert f["pct_hbm"] is None  # no documented HBM peak for a CPU: N/A, not a guess
    assert figures[-1]["tflops"] > 0 and figures[-1]["pct_flops"] is None
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    for r in records:  # every raw sample, both ways: each and device per call, 3 chains
        for side in ("podscale_s", "hand_s"):
            assert [len(r[side][m]) for m in ("each", "chain", "device")] == [10, 3, 10]
    assert list((out / "trace").rglob("*.xplane.pb"))
    assert (out / "figures.png").stat().st_size > 1000 and (out / "summary.md").exists()
    # a one-process training loop profiled under podscale attach, from the same copy
    profile = (out / "profile.txt").read_text()
    assert "step step (70 steps)" in profile and "# captured steps 10-12" in profile
