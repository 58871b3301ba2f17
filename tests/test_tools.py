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
    assert [f["case"].split("@")[0] for f in figures] == ["dot", "stream", "stream", "psum"]
    for f in figures:
        assert f["wrong"] == 0 and f["checked"] > 0 and f["time_us"] > 0
        assert 0.1 < f["harness_ratio"] < 10  # the same op, timed two ways
        assert f["pct_hbm"] is None  # no documented HBM peak for a CPU: N/A, not a guess
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert all(len(r["podscale_s"]) == 10 and len(r["minimal_s"]) == 10 for r in records)
    assert list((out / "trace").rglob("*.xplane.pb"))
    assert (out / "figures.png").stat().st_size > 1000 and (out / "summary.md").exists()
    # a one-process training loop profiled under podscale attach, from the same copy
    profile = (out / "profile.txt").read_text()
    assert "step step (70 steps)" in profile and "# captured steps 10-12" in profile
