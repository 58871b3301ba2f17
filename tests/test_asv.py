"""Real asv: check, a quick run in this environment, and runs across two commits of a
throwaway copy of the project in asv-made virtualenvs, then compare and publish."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.asvresults import load_asv
from tests.conftest import ROOT, podscale

ASV = [sys.executable, "-m", "asv"]


def asv(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """asv as a user runs it; track_* cases in one podscale launch each (users get 5)."""
    env = {**os.environ, "PODSCALE_ASV_TRACK_ROUNDS": "1"}
    res = subprocess.run([*ASV, *args], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, env=env)
    assert res.returncode == 0, f"asv {' '.join(args)} failed:\n{res.stdout}\n{res.stderr}"
    return res


def config(tmp: Path, repo: Path) -> Path:
    """The project's asv.conf.json with everything asv writes redirected into ``tmp``."""
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(repo), benchmark_dir=str(repo / "benchmarks"),
                env_dir=str(tmp / "env"), results_dir=str(tmp / "results"),
                html_dir=str(tmp / "html"))
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(conf))
    return path


def test_asv_check():
    asv("check", "--python=same", cwd=ROOT)


def test_asv_quick_run_same_python(tmp_path, small_run):
    conf = config(tmp_path, ROOT)
    asv("machine", "--yes", "--machine", "podscale-ci", "--config", str(conf), cwd=tmp_path)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    args = ["run", "--python=same", "--quick", "--machine", "podscale-ci", "--config", str(conf)]
    if head:
        args += ["--set-commit-hash", head]
    res = asv(*args, cwd=tmp_path)
    assert "failed" not in res.stdout.lower(), res.stdout
    for name in ("TimeDot.time_dot", "TimePsum.time_psum", "TrackMultiHost.track_psum_busbw",
                 "TrackCollectives.track_busbw", "TrackCollectiveFits.track_beta"):
        assert name in res.stdout
    if not head:
        pytest.skip("not a git checkout: results are not saved without a commit hash")
    df = load_asv(tmp_path / "results")
    track = df[df.benchmark.str.endswith("track_psum_time")]
    assert len(track) == 4 and (track.value > 0).all() and set(track.unit) == {"seconds"}
    assert len(df[df.benchmark.str.endswith("time_dot")]) == 18
    busbw = df[df.benchmark.str.endswith("TrackCollectives.track_busbw")]
    assert len(busbw) == 6 * 3 and (busbw.value > 0).all() and set(busbw.unit) == {"GB/s"}
    beta = df[df.benchmark.str.endswith("TrackCollectiveFits.track_beta")]
    assert len(beta) == 6 and (beta.value > 0).all() and set(beta.unit) == {"GB/s"}
    out = tmp_path / "rep"
    res = podscale("report", str(small_run), "--asv", str(tmp_path / "results"), "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "asv history across commits" in (out / "index.html").read_text()


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_asv_across_two_commits_in_virtualenvs(tmp_path):
    repo = tmp_path / "repo"
    files = _git("ls-files", "-co", "--exclude-standard", cwd=ROOT).splitlines()
    for f in files:
        if (ROOT / f).is_file():
            (repo / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, repo / f)
    _git("init", "-q", "-b", "main", cwd=repo)
    ident = ["-c", "user.email=ci@podscale.invalid", "-c", "user.name=ci"]
    _git(*ident, "add", "-A", cwd=repo)
    _git(*ident, "commit", "-qm", "first", cwd=repo)
    first = _git("rev-parse", "HEAD", cwd=repo)
    with (repo / "README.md").open("a") as fh:
        fh.write("\nA second commit for asv.\n")
    _git(*ident, "commit", "-qam", "second", cwd=repo)
    second = _git("rev-parse", "HEAD", cwd=repo)
    (tmp_path / "hashes.txt").write_text(f"{first}\n{second}\n")
    conf = str(config(tmp_path, repo))
    asv("machine", "--yes", "--machine", "podscale-ci", "--config", conf, cwd=tmp_path)
    res = asv("run", "--quick", "--machine", "podscale-ci", "--config", conf,
              "--bench", "TimePsum", "--show-stderr", f"HASHFILE:{tmp_path / 'hashes.txt'}",
              cwd=tmp_path, timeout=1500)
    assert "failed" not in res.stdout.lower(), res.stdout
    df = load_asv(tmp_path / "results")
    assert set(df["commit"]) == {first, second}
    assert df["env"].str.startswith("virtualenv").all()
    assert df["value"].notna().all() and len(df) == 2 * 18
    cmp = asv("compare", "--machine", "podscale-ci", "--config", conf, first, second,
              cwd=tmp_path)
    assert "time_psum" in cmp.stdout
    asv("publish", "--config", conf, cwd=tmp_path)
    assert (tmp_path / "html" / "index.html").exists()
