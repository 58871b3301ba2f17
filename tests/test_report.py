"""Reports and comparisons, from synthetic records and from a real small run."""

import json
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from podscale.analysis import load_run
from podscale.analysis.data.summary import Summary
from podscale.analysis.models.efficiency import scaling
from podscale.analysis.models.stats import describe, median_ci, summarize
from podscale.analysis.render.report import write_report
from podscale.analysis.verdicts.compare import compare
from podscale.core.errors import UsageError
from tests.conftest import ROOT, podscale
from tests.synth import make_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_describe_and_ci():
    x = np.arange(1, 101, dtype=float)
    d = describe(x)
    assert d["median"] == 50.5 and d["iqr"] == pytest.approx(49.5)
    lo, hi = median_ci(x)
    assert lo < 50.5 < hi and hi - lo < 25
    assert median_ci([3.0]) == (3.0, 3.0)


def test_median_ci_exact_coverage():
    from scipy.stats import binom

    from podscale.analysis.models.stats import median_ci_ranks

    assert median_ci_ranks(20) == (5, 14)  # x(6)..x(15), 1-based: coverage 95.9%
    for n in range(6, 200):
        lo, hi = median_ci_ranks(n)
        assert hi == n - 1 - lo  # symmetric
        coverage = 1 - 2 * binom.cdf(lo, n, 0.5)
        assert coverage >= 0.95
        narrower = 1 - 2 * binom.cdf(lo + 1, n, 0.5)  # one order statistic in on each side
        assert narrower < 0.95
    assert median_ci_ranks(5) == (0, 4)  # too few values: the full range


def test_summary_aggregations_and_scaling(tmp_path):
    run = make_run(tmp_path / "a")
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    mx, mn = summarize(samples, cases, "max"), summarize(samples, cases, "min")
    assert (mx["time_s"] >= mn["time_s"]).all()
    two = mx[mx.hosts == 2]
    assert len(two) == len(mx[mx.hosts == 1]) > 0  # every case at both host counts
    assert (two["rank_max_s"] > two["rank_min_s"]).all()  # process 1 is 5% slower
    assert (two["skew_s"] > 0).all()
    eff = scaling(Summary(mx, loaded.params))
    weak = eff[(eff.kind == "weak") & (eff.hosts == 2)]
    # planted: 1.3x slower at 2 hosts
    assert len(weak) > 0 and weak["efficiency"].between(0.6, 0.9).all()
    strong = eff[eff.kind == "strong"]
    assert set(strong["size"]) == {2048, 4096}  # 1024 and 2048 per process at 2 hosts
    with pytest.raises(ValueError):
        summarize(samples, cases, "median")


def test_compare_flags_planted_slowdown(tmp_path):
    a = make_run(tmp_path / "a", seed=1)
    b = make_run(tmp_path / "b", seed=2, slowdown=2.0)
    table, notes = compare(a, b)
    assert (table["verdict"] == "slower").all()
    shift = [n for n in notes if n.startswith("run-wide shift")]
    assert len(shift) == 1 and "median B/A over 48 cases 2.0" in shift[0]
    assert table["ratio"].between(1.8, 2.2).all()  # 3% launch noise per round
    assert (table["ci_lo"] > 1.5).all() and (table["rounds_a"] == 3).all()
    import shutil

    with pytest.raises(UsageError, match="are the same run"):
        compare(a, a)
    same, _ = compare(a, shutil.copytree(a, tmp_path / "a-copy"))
    assert not same["verdict"].isin(["slower", "faster"]).any()
    assert (same["ratio"] == 1.0).all()
    faster, _ = compare(b, a)
    assert (faster["verdict"] == "faster").all()


def test_compare_is_calibrated_against_launch_noise(tmp_path):
    """A/A pairs whose rounds differ by launch effects (5% log-sd, as measured between
    launches here): verdicts from rounds flag <= 5% of cases where per-iteration tests
    flag many; a 1.5x slowdown of one workload is found in >= 90% of its cases; a
    machine too noisy to decide says so."""
    from podscale.selfbench.verdicts import iteration_test_flags

    flagged, old, n = 0, [], 0
    for k in range(6):
        a = make_run(tmp_path / f"a{k}", seed=10 * k, launch_noise=0.05)
        b = make_run(tmp_path / f"b{k}", seed=10 * k + 1, launch_noise=0.05)
        table, _ = compare(a, b)
        flagged += int(table["verdict"].isin(["slower", "faster"]).sum())
        n += len(table)
        old.append(iteration_test_flags(a, b))  # the previous per-iteration method
    assert flagged / n <= 0.05 and np.mean(old) > 0.1, (flagged / n, old)
    a = make_run(tmp_path / "base", seed=99, launch_noise=0.05)
    b = make_run(tmp_path / "slow", seed=98, launch_noise=0.05, slowdown=1.5, only="psum")
    table, _ = compare(a, b)
    psum = table["case_id"].str.startswith("psum@")
    assert (table.loc[psum, "verdict"] == "slower").mean() >= 0.9
    assert not table.loc[~psum, "verdict"].isin(["slower", "faster"]).any()
    noisy, _ = compare(make_run(tmp_path / "n1", seed=5, launch_noise=0.6),
                       make_run(tmp_path / "n2", seed=6, launch_noise=0.6))
    assert (noisy["verdict"] == "noisy").mean() > 0.5
    single, notes = compare(make_run(tmp_path / "s1", rounds=1),
                            make_run(tmp_path / "s2", rounds=1, slowdown=2.0))
    assert (single["verdict"] == "noisy").all() and any("single round" in n for n in notes)


def test_holm_and_bh_adjustments():
    from podscale.analysis.verdicts.compare import adjust

    ps = np.array([0.01, 0.04, 0.03, 0.2])
    np.testing.assert_allclose(adjust(ps, "holm"), [0.04, 0.09, 0.09, 0.2])
    np.testing.assert_allclose(adjust(ps, "bh"), [0.04, 0.16 / 3, 0.16 / 3, 0.2])


def test_compare_refuses_different_environments(tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", cpu_count=64)
    with pytest.raises(UsageError, match="not comparable.*cpu_count"):
        compare(a, b)
    table, notes = compare(a, b, force=True)
    assert any("cpu_count" in n for n in notes) and len(table)
    res = podscale("compare", str(a), str(b))
    assert res.returncode == 2 and "use --force" in res.stderr
    res = podscale("compare", str(a), str(make_run(tmp_path / "c", slowdown=2)),
                   "--fail-on-regression")
    assert res.returncode == 1 and "slower" in res.stdout
    assert "# fits: alpha and beta of A vs B" in res.stdout
    assert (tmp_path / "c" / "compare-a-fits.csv").exists()


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A synthetic run's report, written by a process of its own that imports the analysis
    side only: (the run, the modules of the measuring side it had imported by the end)."""
    run = make_run(tmp_path_factory.mktemp("synthetic") / "r")
    code = ("import json, sys, podscale.analysis as analysis, podscale.analysis.render.report, "
            "podscale.analysis.data.traces, podscale.analysis.verdicts.compare, "
            "podscale.analysis.render.asvresults, podscale.analysis.render.plots\n"
            f"analysis.render.report.write_report({str(run)!r})\n"
            "print(json.dumps([m for m in sys.modules if m.startswith(('podscale.worker', "
            "'jax', 'podscale.suites', 'podscale.launch'))]))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return run, json.loads(res.stdout.splitlines()[-1])


def test_analysis_never_imports_jax_or_the_measuring_side(synthetic):
    """A report is written without JAX (nor jaxlib), the worker, the launchers or the
    workloads' code."""
    assert synthetic[1] == []


def test_synthetic_report_escapes(synthetic):
    run = synthetic[0]
    html_path, md_path = run / "report" / "index.html", run / "report" / "summary.md"
    text = html_path.read_text()
    assert "<synthetic" not in text and "&lt;synthetic &amp; 'run'&gt;" in text
    assert text.count("data:image/png;base64,") >= 5
    md = md_path.read_text()
    assert "## Workload dot" in md and "## Environment" in md


def test_report_from_real_run_renders_in_chromium(small_run, tmp_path):
    res = podscale("report", str(small_run), "--out", str(tmp_path / "rep"))
    assert res.returncode == 0, res.stderr
    html_path = tmp_path / "rep" / "index.html"
    text = html_path.read_text()
    for section in ("Findings", "Environment", "Workload dot", "Workload psum",
                    "Scaling efficiency vs hosts", "pmap vs shard_map", "Compile times",
                    "Per-process skew", "Ceilings", "Latency-bandwidth fits",
                    "Where the wall time went", "Compiled programs"):
        assert f"<h2>{section}</h2>" in text, section
    assert text.index("<h2>Findings</h2>") < text.index("<h2>") + 1  # the first section
    findings = text.split("<ul class='findings'>")[1].split("</ul>")[0]
    assert "no ceiling applies" in findings and "compile: median" in findings
    assert "N/A: add stream" in text and "<details>" in text  # full tables collapsed
    words = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)  # not the images
    assert not re.search(r"\de[+-]\d", words.split("<h2>How statistics")[0])  # 1.2e+05
    if CHROMIUM is None:
        pytest.skip("chromium not installed (make test installs it)")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tempfile.mkdtemp()}", "--window-size=1280,3000",
         f"--screenshot={shot}", html_path.as_uri()],
        capture_output=True, timeout=120, check=True,
    )
    from matplotlib.image import imread

    img = imread(shot)
    assert img.shape[0] == 3000 and img.shape[1] == 1280
    # plots are in colour: a text-only page would be (near) greyscale
    rgb = img[..., :3]
    colourful = (rgb.max(axis=-1) - rgb.min(axis=-1)) > 0.2
    assert colourful.mean() > 0.001  # a text-only page has ~0 colourful pixels


def test_slow_process_is_named_at_scale(tmp_path):
    """64 processes, process 37 planted 30% slower in every case: the skew matrix, the
    slowest-process table and the Findings name it; the heatmap is one image."""
    from podscale.analysis.models.skew import relative, slowest

    run = make_run(tmp_path / "r", hosts=(64,), dph=(1,), sizes=(1024, 4096), iters=8,
                   rounds=1, process_skew=0, slow_process=(37, 1.3))
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    matrix = relative(samples, summarize(samples, cases))
    assert matrix.shape == (64, 8)  # processes x (dot, psum) x 2 variants x 2 sizes
    top = slowest(matrix)
    assert top.process.iloc[0] == 37 and top.median_relative.iloc[0] > 1.2
    assert top.slowest_in.iloc[0] == 8 and top.median_relative.iloc[1] < 1.1
    html_path, md_path = write_report(run)
    md = md_path.read_text()
    findings = md.split("## Findings")[1].split("##")[0]
    assert "slowest process: 37" in findings
    skew = html_path.read_text().split("<h2>Per-process skew</h2>")[1].split("<h2>")[0]
    assert skew.count("data:image/png;base64,") == 1
