"""Real asv: check, a quick run in this environment, and runs across two commits of a
throwaway copy of the project in asv-made virtualenvs, then compare and publish."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from podscale.analysis.render.asvresults import load_asv
from podscale.selfbench.asvstage import asv_config as config
from podscale.selfbench.asvstage import two_commit_copy
from tests.conftest import ROOT, podscale

pytestmark = pytest.mark.asv

ASV = [sys.executable, "-m", "asv"]


def asv(*args: str, cwd: Path, timeout: float = 900,
        env: dict | None = None) -> subprocess.CompletedProcess:
    """asv as a user runs it; track_* rounds of one podscale launch each (users get 2)."""
    env = {**os.environ, "PODSCALE_ASV_TRACK_LAUNCHES": "1", **(env or {})}
    res = subprocess.run([*ASV, *args], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, env=env)
    assert res.returncode == 0, f"asv {' '.join(args)} failed:\n{res.stdout}\n{res.stderr}"
    return res


def _head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()


def test_asv_check():
    asv("check", "--python=same", cwd=ROOT)


def test_asv_quick_run_same_python(tmp_path, small_run, two_commits):
    """(``two_commits`` runs meanwhile, in the background.)"""
    conf = config(tmp_path, ROOT)
    asv("machine", "--yes", "--machine", "podscale-ci", "--config", str(conf), cwd=tmp_path)
    head = _head()
    # every benchmark function; of the time_* grids, the smallest size on 1 and 4 devices
    # (asv matches --bench against "name(param, ...)"; each runs in a process of its own)
    # (the exports' series, TrackExported, are not asv's to run)
    args = ["run", "--python=same", "--quick", "--machine", "podscale-ci", "--config", str(conf),
            "--bench", r"time_(dot|psum)\(4096, (1|4),", "--bench", "Track(?!Exported)"]
    if head:
        args += ["--set-commit-hash", head]
    res = asv(*args, cwd=tmp_path)
    assert "failed" not in res.stdout.lower(), res.stdout
    for name in ("TimeDot.time_dot", "TimePsum.time_psum", "TrackMultiHost.track_psum_busbw",
                 "TrackCollectives.track_busbw", "TrackCollectiveFits.track_beta",
                 "TrackSlices.track_busbw"):
        assert name in res.stdout
    if not head:
        pytest.skip("not a git checkout: results are not saved without a commit hash")
    df = load_asv(tmp_path / "results")
    # every series names the platform it measured (this machine has no chips: the CPU)
    assert len(df) and df.params.str.endswith("platform='cpu'").all(), df.params.unique()
    track = df[df.benchmark.str.endswith("track_psum_time")]
    assert len(track) == 4 and (track.value > 0).all() and set(track.unit) == {"seconds"}
    # track_* values reach asv as samples (one per launch), so its statistics apply
    assert (df[df.benchmark.str.contains(".track_")].samples == 1).all()
    dot = df[df.benchmark.str.endswith("time_dot")]
    assert dot.value.notna().sum() == 2 * 2 and (dot.dropna(subset=["value"]).value > 0).all()
    busbw = df[df.benchmark.str.endswith("TrackCollectives.track_busbw")]
    assert len(busbw) == 6 * 3 and (busbw.value > 0).all() and set(busbw.unit) == {"GB/s"}
    # the compiled program rides along: a regression can be tied to a changed program
    ops = df[df.benchmark.str.endswith("TrackCollectives.track_collective_ops")]
    assert len(ops) == 6 * 3 and (ops.value >= 1).all()
    prog = df[df.benchmark.str.endswith("TrackCollectives.track_program")]
    assert len(prog) == 6 * 3 and prog.value.nunique() > 1 and set(prog.unit) == {"fingerprint"}
    beta = df[df.benchmark.str.endswith("TrackCollectiveFits.track_beta")]
    assert len(beta) == 6 and (beta.value > 0).all() and set(beta.unit) == {"GB/s"}
    # a multi-slice job's collectives: a series per axis, between slices and inside one
    sliced = df[df.benchmark.str.endswith("TrackSlices.track_busbw")]
    assert len(sliced) == 2 * 2 and (sliced.value > 0).all(), sliced
    assert set(sliced.params.str.extract(r"axes='(\w+)'")[0]) == {"dcn", "ici"}
    out = tmp_path / "rep"
    res = podscale("report", str(small_run), "--asv", str(tmp_path / "results"), "--out", str(out))
    assert res.returncode == 0, res.stderr
    page = (out / "index.html").read_text()
    assert "asv history across commits" in page and "has one commit so far" in page
    assert "alt='asv history'" not in page


def test_asv_skips_what_the_machines_chips_cannot_hold(tmp_path):
    """On one planted TPU chip, the track benchmarks whose layouts it cannot hold (2 hosts x
    2 devices; slices, which one machine's chips never are) are skipped, n/a, not failed,
    and start no process: asv gives no cache argument where setup_cache returned None."""
    conf = config(tmp_path, ROOT)
    asv("machine", "--yes", "--machine", "podscale-ci", "--config", str(conf), cwd=tmp_path)
    res = asv("run", "--python=same", "--quick", "--machine", "podscale-ci", "--config",
              str(conf), "--bench", "TrackSlices|TrackCollectiveFits.track_beta",
              "--show-stderr", "--set-commit-hash", _head() or "HEAD", cwd=tmp_path,
              env={"PODSCALE_ACCELERATORS": "tpu:TPU v5 lite:1"})
    assert "failed" not in res.stdout.lower() and "Traceback" not in res.stdout, res.stdout
    df = load_asv(tmp_path / "results")
    assert len(df) == 2 * 2 * 2 + 6, df  # every parameter set recorded, n/a, on the tpu
    assert df.value.isna().all() and df.params.str.endswith("platform='tpu'").all(), df


def _two_commits(tmp: Path) -> tuple[Path, str, str, subprocess.CompletedProcess, str]:
    """asv run over two commits of a throwaway copy in asv-made virtualenvs, then compare
    and publish: (folder, first, second, the run's output, the comparison's)."""
    repo = tmp / "repo"
    first, second = two_commit_copy(repo)
    (tmp / "hashes.txt").write_text(f"{first}\n{second}\n")
    conf = str(config(tmp, repo))
    # the environment holds what TimePsum imports: pandas and pympler (for the track_*
    # and mem_* benchmarks, which the quick run and bench-self's asv stage cover) are
    # left out of the matrix, 10 s of installing
    spec = json.loads(Path(conf).read_text())
    for name in ("pandas", "pympler"):
        spec["matrix"]["req"].pop(name)
    Path(conf).write_text(json.dumps(spec))
    res = asv("run", "--quick", "--machine", "podscale-ci", "--config", conf,
              "--bench", r"TimePsum.time_psum\(4096, (1|2), 'shard_map', 'cpu'\)", "--show-stderr",
              f"HASHFILE:{tmp / 'hashes.txt'}", cwd=tmp, timeout=1500)
    cmp = asv("compare", "--machine", "podscale-ci", "--config", conf, first, second,
              cwd=tmp)
    asv("publish", "--config", conf, cwd=tmp)
    return tmp, first, second, res, cmp.stdout


@pytest.fixture(scope="module")
def two_commits(tmp_path_factory):
    """The two-commit asv run, started in the background as the module's first test that
    asks for it begins (it installs virtualenvs, mostly waiting on the disk, while the
    quick run launches podscale); its result, once finished."""
    tmp = tmp_path_factory.mktemp("asv-two-commits")
    asv("machine", "--yes", "--machine", "podscale-ci", "--config",
        str(config(tmp, ROOT)), cwd=tmp)  # before anything reads ~/.asv-machine.json
    pool = ThreadPoolExecutor(1)
    future = pool.submit(_two_commits, tmp)
    yield future
    pool.shutdown(wait=True)


def test_asv_across_two_commits_in_virtualenvs(two_commits):
    tmp, first, second, res, compared = two_commits.result(timeout=1500)
    assert "failed" not in res.stdout.lower(), res.stdout
    df = load_asv(tmp / "results")
    assert set(df["commit"]) == {first, second}
    assert df["env"].str.startswith("virtualenv").all()
    assert df["value"].notna().sum() == 2 * 2  # two commits x the two selected cases
    assert "time_psum" in compared
    assert (tmp / "html" / "index.html").exists()
    _exported_beside(tmp, first, second)
    # podscale's report draws the history of the series that have two commits
    from podscale.analysis.render.asvresults import history_section
    from podscale.analysis.render.sections import Doc

    doc = Doc("asv")
    history_section(tmp / "results")(doc)
    assert sum("alt='asv history'" in h for h in doc.html) == 1, doc.md


def _exported_beside(tmp: Path, first: str, second: str) -> None:
    """A run asv could not launch (``podscale export --format asv``, filed at the two
    commits as machine ``pod``): asv compare reads it, and asv publish draws its series
    beside asv's own."""
    from tests.conftest import _small_run

    run = _small_run(tmp / "runs")
    for commit in (first, second):
        res = podscale("export", str(run), "--format", "asv", "-o", str(tmp / "results"),
                       "--machine", "pod", "--commit", commit)
        assert res.returncode == 0 and "# asv results: " in res.stdout, res.stderr
    conf = str(tmp / "asv.conf.json")
    cmp = asv("compare", "--machine", "pod", "--config", conf, first, second, cwd=tmp)
    assert "exported.TrackExported.track_time" in cmp.stdout, cmp.stdout
    asv("publish", "--config", conf, cwd=tmp)
    graphs = list((tmp / "html" / "graphs").rglob("*exported.TrackExported.track_time*"))
    assert graphs, sorted(p.name for p in (tmp / "html" / "graphs").rglob("*.json"))[:20]
