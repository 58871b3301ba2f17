"""The package as users install it: one top-level package, the public API, and a
non-editable install outside the repository that lists workloads and writes a report."""

import re
import sys

from tests.conftest import ROOT, from_installed


def test_wheel_holds_one_top_level_package(installed):
    names = (installed / "WHEEL_NAMES").read_text().splitlines()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"podscale"}, top
    for module in ("podscale/analysis/run.py", "podscale/suites/psum.py",
                   "podscale/suites/study.toml", "podscale/protocol/collective.py"):
        assert module in names
    assert not any(n.startswith(("analysis/", "suites/", "tests/")) for n in names)


def test_installed_package_lists_workloads_and_writes_a_report(installed, tmp_path):
    """Outside the checkout, the installed copy (not the repository) is what runs."""
    where = from_installed(installed, sys.executable, "-c",
                           "import podscale, podscale.analysis, podscale.suites; "
                           "print(podscale.__file__, podscale.analysis.__file__, "
                           "podscale.suites.__file__)", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert all(p.startswith(str(installed)) for p in where.stdout.split()), where.stdout
    listed = from_installed(installed, sys.executable, "-m", "podscale", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for name in ("dot@", "psum@", "all_reduce@", "stream@"):
        assert name in listed.stdout
    assert "source podscale.suites.psum:psum" in listed.stdout
    make = ("from pathlib import Path; from podscale.selfbench.synthetic import make_run; "
            "make_run(Path('run'))")
    made = from_installed(installed, sys.executable, "-c", make, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    report = from_installed(installed, sys.executable, "-m", "podscale", "report", "run",
                            cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "run" / "report" / "index.html").read_text()
    assert "Findings" in html and "<img" in html


def test_public_api_is_what_workloads_use():
    import podscale

    for name in ("Workload", "Param", "Expected", "Work", "Step", "Context", "Mapped",
                 "Collective", "normals", "cast", "exact", "gather_processes", "seed_for",
                 "UNIT_ROUNDOFF", "gamma", "sum_bound", "UsageError", "Run", "load_run",
                 "summarize"):
        assert getattr(podscale, name) is not None, name
    assert set(podscale.__all__) >= {"Collective", "Run", "load_run"}
    private = re.compile(r"^\s*(from|import) podscale\.(core|protocol|worker|startup|launch)", re.M)
    for path in [*(ROOT / "suites").glob("*.py"), *(ROOT / "examples").glob("*.py")]:
        assert not private.search(path.read_text()), path
    assert private.search("import numpy\nfrom podscale.core.workload import Param\n")


def test_a_worker_import_of_podscale_is_light():
    """``import podscale`` (every workload file does) loads neither pandas nor JAX."""
    import subprocess

    code = ("import sys, podscale; podscale.Workload; "
            "print(sorted(m for m in ('pandas', 'jax', 'scipy', 'podscale.analysis') "
            "if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


def test_api_page_names_every_public_name():
    """docs/api.md lists every name in podscale.__all__ (and each resolves)."""
    import podscale

    text = (ROOT / "docs" / "api.md").read_text()
    listed = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)", text))
    assert not set(podscale.__all__) - listed, sorted(set(podscale.__all__) - listed)
    for name in podscale.__all__:
        assert getattr(podscale, name) is not None, name
    assert "summarize" in listed and "not_a_name" not in listed


def test_every_performance_figure_names_its_stage_and_commit():
    """Each row of docs/performance.md's main table names the bench-self stage that
    measures it (or says it was a one-off) and the commit it was measured at."""
    from podscale.selfbench import STAGE_NAMES

    text = (ROOT / "docs" / "performance.md").read_text()
    table = text.split("| what | figure | target | measured by, at |\n|---|---|---|---|\n")[1]
    rows = [r for r in table.split("\n\n")[0].splitlines() if r.startswith("| ")]
    assert len(rows) >= 10
    for row in rows:
        last = row.rstrip(" |").rsplit("|", 1)[-1]
        stage = re.search(r"`--only ([a-z-]+)`", last)
        assert (stage and stage[1] in STAGE_NAMES) or "one-off" in last, row[:80]
        assert re.search(r"\b[0-9a-f]{7,}\b", last), row[:80]


def test_the_version_is_the_changelogs():
    """``podscale.__version__`` (which pyproject.toml reads) is the changelog's newest
    release, or a development release after it while an Unreleased section leads."""
    import re

    from packaging.version import Version

    import podscale

    heads = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    released = next(Version(h) for h in heads if h != "Unreleased")
    mine = Version(podscale.__version__)
    if heads[0] == "Unreleased":
        assert mine.is_devrelease and mine > released, (mine, released)
    else:
        assert mine == released, (mine, released)
