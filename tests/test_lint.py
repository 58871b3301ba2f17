"""Static checks anyone can run: ruff, the import layers (import-linter), the types (mypy),
function length, and the docs site (mkdocs build --strict)."""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, from_installed

BIN = Path(sys.executable).parent


def tool(name: str) -> str | None:
    return shutil.which(name, path=str(BIN)) or shutil.which(name)


@pytest.mark.skipif(tool("ruff") is None, reason="ruff not installed (pip install -e '.[test]')")
def test_ruff_clean():
    res = subprocess.run([tool("ruff"), "check", str(ROOT)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout


def test_import_layers_hold(installed, tmp_path):
    """import-linter's contracts (pyproject.toml) over the installed package, where
    podscale.analysis and podscale.suites sit inside podscale as users get them."""
    res = from_installed(installed, tool("lint-imports"), str(ROOT / "pyproject.toml"),
                         "--no-cache", cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "0 broken" in res.stdout


def test_types_check(installed):
    """mypy over every package of podscale but the built-in workloads ([tool.mypy] files),
    every function annotated."""
    res = subprocess.run([tool("mypy"), "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(installed.parent / "mypy-cache")],
                         capture_output=True, text=True, cwd=installed)
    assert res.returncode == 0, res.stdout[-3000:]


def test_a_misspelt_profile_line_fails_the_type_check(installed, tmp_path):
    """Each kind of profile line is a TypedDict with a Literal kind (#66): mypy fails on a
    misspelt kind, a misspelt field and a missing one at a write site; the reader's kinds
    are exactly the declared ones."""
    from podscale.core.profilelines import DECLARED, kind_of
    from podscale.core.profilerecord import KINDS

    assert sorted(KINDS) == sorted(kind_of(d) for d in DECLARED)
    (tmp_path / "m.py").write_text(
        "from podscale.core.profilerecord import record\n"
        "record({'kind': 'stpe', 'name': 'x'})\n"
        "record({'kind': 'step', 'name': 'x', 'num': 1, 'seqs': [], 'enter': 0.0, 'exit': 1.0})\n"
        "record({'kind': 'end', 'end': 1.0, 'exit_code': 1, 'eror': 'x'})\n"
        "record({'kind': 'silent', 'from': 1.0})\n")
    res = subprocess.run([tool("mypy"), "--follow-imports=silent", "--cache-dir",
                          str(tmp_path / "cache"), str(tmp_path / "m.py")],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "MYPYPATH": str(installed)})
    assert res.returncode == 1 and res.stdout.count("error:") == 3, res.stdout
    assert [f"m.py:{n}" in res.stdout for n in (2, 3, 4, 5)] == [True, False, True, True], \
        res.stdout


def functions(roots: list[Path]) -> Iterator[tuple[Path, ast.FunctionDef]]:
    """Every function (and method) defined in the Python files under ``roots``."""
    for root in roots:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield path, node


def long_functions(roots: list[Path], limit: int = 60) -> list[str]:
    return [f"{path}:{node.lineno} {node.name} ({length} lines)"
            for path, node in functions(roots)
            if (length := node.end_lineno - node.lineno + 1) > limit]


def test_no_function_over_60_lines():
    """Outside the one generator of YAML text (a Kubernetes manifest, kept as one block)."""
    found = long_functions([ROOT / d for d in ("podscale", "analysis", "suites", "examples")])
    assert [f for f in found if " k8s_manifest " not in f] == []


def test_long_function_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n" + "    x = 1\n" * 70)
    assert long_functions([tmp_path], 60) and not long_functions([tmp_path], 80)


def long_modules(roots: list[Path], limit: int = 300) -> list[str]:
    return [f"{path} ({n} lines)" for root in roots for path in sorted(root.rglob("*.py"))
            if (n := len(path.read_text().splitlines())) > limit]


def test_no_module_over_300_lines(tmp_path):
    """The module ceiling: one job each, split by concept (the check fails on a planted
    301-line module)."""
    assert long_modules([ROOT / d for d in ("podscale", "analysis", "suites")]) == []
    (tmp_path / "m.py").write_text("x = 1\n" * 301)
    assert long_modules([tmp_path]) and not long_modules([tmp_path], 301)


def many_parameters(roots: list[Path], limit: int = 10) -> list[str]:
    return [f"{path}:{node.lineno} {node.name} ({count})" for path, node in functions(roots)
            if (count := len(node.args.posonlyargs) + len(node.args.args)
                + len(node.args.kwonlyargs)) > limit]


def test_launchers_take_options_not_long_parameter_lists(tmp_path):
    """No function in podscale/launch, the front end or the attach runtime takes over 10
    parameters (a LaunchOptions, CaptureOptions or Layout travels instead); the check
    fails on one that does."""
    assert many_parameters([ROOT / "podscale" / d for d in ("launch", "frontend",
                                                            "attach")]) == []
    (tmp_path / "m.py").write_text("def f(" + ", ".join(f"a{i}" for i in range(11)) + "):\n"
                                   "    pass\n")
    assert many_parameters([tmp_path]) and not many_parameters([tmp_path], 11)


def argparse_outside(root: Path, allowed: tuple[str, ...]) -> list[str]:
    """Modules under ``root`` but outside ``allowed`` (relative paths) that import
    argparse, and functions there with a parameter annotated as a ``Namespace`` (mypy
    holds every function annotated)."""
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(allowed):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "argparse" for n in names):
                found.append(f"{rel}:{node.lineno} imports argparse")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                found += [f"{rel}:{node.lineno} {node.name}({a.arg})" for a in params
                          if a.annotation is not None
                          and "Namespace" in ast.unparse(a.annotation)]
    return found


def env_names_spelt(roots: list[Path]) -> list[str]:
    """Where a string constant or a keyword argument is one of podscale's environment
    variables (``PODSCALE_...``) outside ``podscale/core/envnames.py``."""
    import re

    name = re.compile(r"^PODSCALE_[A-Z0-9_]+$")
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path.name == "envnames.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                spelt = node.value if isinstance(node, ast.Constant) else \
                    node.arg if isinstance(node, ast.keyword) else None
                if isinstance(spelt, str) and name.match(spelt):
                    found.append(f"{path}:{node.lineno} {spelt}")
    return found


def test_podscale_variables_are_named_once(tmp_path):
    """Every PODSCALE_* variable is spelt in podscale/core/envnames.py only (its table says
    who sets it and what it says); the check fails on a module that spells one."""
    from podscale.core import envnames

    assert env_names_spelt([ROOT / d for d in ("podscale", "analysis", "suites")]) == []
    assert set(envnames.OWNED) <= set(envnames.VARIABLES)
    (tmp_path / "m.py").write_text('import os\nos.environ.get("PODSCALE_DEBUG")\n'
                                   'dict(PODSCALE_FAULT="x")\n')
    assert len(env_names_spelt([tmp_path])) == 2


def frame_attrs(roots: list[Path]) -> list[str]:
    """Where code reads or writes an ``.attrs`` (pandas' experimental DataFrame.attrs)."""
    return [f"{path}:{node.lineno}" for root in roots for path in sorted(root.rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Attribute) and node.attr == "attrs"]


def test_no_facts_ride_in_dataframe_attrs(tmp_path):
    """Facts between the layers travel in result types (the Summary, Fitted, a links
    Sweep, history's Collected), never in ``DataFrame.attrs``, which some pandas
    operations drop silently (#66); the check fails on a planted use."""
    assert frame_attrs([ROOT / d for d in ("podscale", "analysis", "suites")]) == []
    (tmp_path / "m.py").write_text('df.attrs["params"] = ["size"]\nx = df.attrs.get("units")\n')
    assert len(frame_attrs([tmp_path])) == 2


FIT_CHECKS = {"admit", "admit_processes", "admit_device", "check_layouts", "loopback_opens"}


def fit_checks_outside(root: Path) -> list[str]:
    """Calls of a "will it fit" check anywhere but ``podscale/launch/fitting.py`` (and the
    modules that define them)."""
    home = {"fitting.py", "admission.py", "chips.py"}
    return [f"{p.relative_to(root)}:{n.lineno}" for p in sorted(root.rglob("*.py"))
            if not (p.parent.name == "launch" and p.name in home)
            for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.Call)
            and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) in FIT_CHECKS]


def test_the_fit_checks_are_made_in_one_place(tmp_path):
    """Whether a run's processes fit (memory, chips, loopback) is decided in
    ``podscale/launch/fitting.py``, which each command calls once (#66); the check finds a
    planted call elsewhere."""
    assert fit_checks_outside(ROOT / "podscale") == []
    (tmp_path / "m.py").write_text("from podscale.launch import admission\n"
                                   "admission.admit([], force=True)\n")
    assert fit_checks_outside(tmp_path) == ["m.py:2"]


def test_argparse_stops_in_the_commands(tmp_path):
    """The command line's parsed options become values in ``frontend/commands/`` (and the
    parser in ``cli.py``): no other module imports argparse or takes a Namespace, so
    every command's logic is callable from Python with named arguments. The check fails
    on a module that does."""
    allowed = ("frontend/commands/", "frontend/cli.py")
    assert argparse_outside(ROOT / "podscale", allowed) == []
    (tmp_path / "m.py").write_text("import argparse\n\n\n"
                                   "def f(args: argparse.Namespace):\n    pass\n")
    assert len(argparse_outside(tmp_path, allowed)) == 2


def direct_writes(roots: list[Path]) -> list[str]:
    """Where a module calls ``print`` or writes ``sys.stdout``/``sys.stderr`` itself instead
    of :func:`podscale.core.lines.say` (which writes each line whole)."""
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call):
                    continue
                called = ast.unparse(node.func)
                if called == "print" or called in ("sys.stdout.write", "sys.stderr.write"):
                    found.append(f"{path}:{node.lineno} {called}")
    return found


def test_worker_and_profiled_processes_write_whole_lines(tmp_path):
    """No module a worker or a profiled process runs (``worker/``, ``attach/``, ``core/``)
    prints for itself: every line goes through ``lines.say``, its text and newline in one
    write (mpirun joined one rank's message to the next's otherwise). The check fails on a
    module that prints."""
    assert direct_writes([ROOT / "podscale" / d for d in ("worker", "attach", "core")]) == []
    (tmp_path / "m.py").write_text('import sys\nprint("x", flush=True)\n'
                                   'sys.stderr.write("y\\n")\n')
    assert len(direct_writes([tmp_path])) == 2


@pytest.mark.skipif(tool("mkdocs") is None, reason="mkdocs not installed")
def test_docs_build_strict(tmp_path):
    res = subprocess.run([tool("mkdocs"), "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()



#: launches per test module (tests, and shared fixtures once; "session": the session's
#: fixtures) as of the budget's last raise; ``make test``'s time is mostly these
LAUNCH_BUDGET: dict[str, int] = {
    "session": 2, "test_apart": 5, "test_asv": 5, "test_chips": 5, "test_cli": 84,
    "test_cluster": 17, "test_collectives": 7, "test_disk": 6, "test_edges": 3, "test_ending": 5,
    "test_faults": 17, "test_fits": 1, "test_history": 2, "test_ledger": 3, "test_links": 1,
    "test_lint": 6, "test_load": 2, "test_messages": 6, "test_methods": 12,
    "test_multiprocess": 5, "test_package": 2, "test_pods": 5, "test_profile": 31,
    "test_programs": 3, "test_replay": 2, "test_report": 3, "test_scalemodel": 1,
    "test_selfbench": 3, "test_setup": 5, "test_tools": 1, "test_traces": 2, "test_training": 14,
    "test_windows": 4, "test_workloads": 6, "test_torus": 1, "test_livefeed": 2,
    "test_export": 3, "test_ray": 5,
}


def _launches(items) -> Counter:
    """Launches per module: each test and fixture that starts processes (its stashed
    keys), a module's fixture once per module and the session's once."""
    from tests.conftest import LAUNCHES

    keys = {(i.module.__name__.rsplit(".", 1)[-1], k) for i in items for k in i.stash[LAUNCHES]}
    per = Counter(m for m, k in keys if not k.startswith("session:"))
    per["session"] = len({k for _, k in keys if k.startswith("session:")})
    return per


def _over(per: Counter) -> dict[str, str]:
    return {m: f"{n} > {LAUNCH_BUDGET.get(m, 0)}" for m, n in sorted(per.items())
            if n > LAUNCH_BUDGET.get(m, 0)}


def _whole_suite(request) -> list:
    from tests.conftest import COLLECTED

    items = request.config.stash.get(COLLECTED, request.session.items)
    if len({i.module.__name__ for i in items}) < len(list((ROOT / "tests").glob("test_*.py"))):
        pytest.skip("counts the whole suite's launches: run with every module collected")
    return items


def test_launches_within_budget(request):
    """What the suite starts, per module, held to a budget, so that a module's new launch
    is a decision: share one (a module- or session-scoped fixture several tests read) or
    raise :data:`LAUNCH_BUDGET`. The slowest tests are in the CI log (``--durations``)."""
    per = _launches(_whole_suite(request))
    assert not _over(per), f"launches beyond the budget (share one, or raise it): {_over(per)}"


def test_launch_budget_can_fail(request):
    """A planted module's launch is over budget; a module fixture several tests read is
    one launch however many read it."""
    from tests.conftest import LAUNCHES

    items = _whole_suite(request)
    assert _over(_launches(items) + Counter({"test_planted": 1})) == {"test_planted": "1 > 0"}
    shared = Counter(k for i in items for k in i.stash[LAUNCHES] if k.startswith("tests."))
    key, readers = shared.most_common(1)[0]
    assert readers > 1 and _launches([i for i in items if key in i.stash[LAUNCHES]])[
        key.split(":")[0].rsplit(".", 1)[-1]] <= readers



PLANTED_CLUSTER_TEST = """
import json, os, time
import pytest

{mark}
def test_job(tmp_path_factory):
    start = time.time()
    time.sleep(1.5)
    with open(os.environ["SPANS"], "a") as f:
        f.write(json.dumps([start, time.time()]) + "\\n")
"""


def _cluster_spans(tmp_path: Path, mark: str) -> list[list[float]]:
    """Two planted modules of one cluster-marked (or not) test each, run by pytest-xdist
    as ``make test`` runs the suite (two workers): each test's start and end."""
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import _one_cluster_job_at_a_time  # noqa: F401\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n  cluster: planted\n")
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(PLANTED_CLUSTER_TEST.format(mark=mark))
    spans = tmp_path / "spans.jsonl"
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-n", "2", "--dist", "loadfile", "--no-loadscope-reorder",
                          str(tmp_path)], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env={**os.environ, "SPANS": str(spans),
                                            "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stdout + res.stderr
    return sorted(json.loads(line) for line in spans.read_text().splitlines())


def test_cluster_tests_run_one_at_a_time_across_xdist_workers(tmp_path):
    """Two modules' cluster-marked tests on two xdist workers (pytest-xdist's own
    ``loadfile``) never overlap: they take one lock across the workers; unmarked, the same
    two do overlap (the check can fail)."""
    (first, second) = _cluster_spans(tmp_path, "@pytest.mark.cluster")
    assert second[0] >= first[1] - 0.05, (first, second)
    (tmp_path / "unmarked").mkdir()
    (first, second) = _cluster_spans(tmp_path / "unmarked", "")
    assert second[0] < first[1], (first, second)


def test_the_workers_take_the_asv_module_first_then_the_largest(request):
    """``make test`` runs pytest-xdist's own ``--dist loadfile`` in the order collected;
    the suite orders it: the asv module first, then the modules with the most tests."""
    from types import SimpleNamespace

    from tests.conftest import in_schedule_order

    assert "--dist loadfile --no-loadscope-reorder" in (ROOT / "Makefile").read_text()

    def item(nodeid: str, asv: bool = False) -> SimpleNamespace:
        return SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda m: asv and m == "asv")

    items = [item("tests/test_table.py::a"), item("tests/test_cli.py::a"),
             item("tests/test_asv.py::x", asv=True), item("tests/test_cli.py::b")]
    assert [i.nodeid for i in in_schedule_order(items)] == [
        "tests/test_asv.py::x", "tests/test_cli.py::a", "tests/test_cli.py::b",
        "tests/test_table.py::a"]


#: what in a test module's source runs a launcher for real: it needs the launcher's
#: program (and skips where it is missing), or starts the single-node Slurm cluster
RUNS_A_LAUNCHER = re.compile(r'which\("(mpirun|srun|sbatch)"\)|\bdef test_\w+\([^)]*\bslurm\b')


def _unmarked_launchers(tests: Path) -> list[str]:
    from tests.conftest import CLUSTER

    sources = {f.name: f.read_text() for f in tests.glob("test_*.py")}
    return sorted(name for name, source in sources.items()
                  if RUNS_A_LAUNCHER.search(source) and CLUSTER not in source)


def test_a_module_that_runs_a_launcher_is_marked_cluster(tmp_path):
    """Jobs under mpirun or srun may meet on one coordinator port: the modules that start
    them are marked ``cluster`` and run one at a time (tests/conftest.py); a module that
    needs mpirun and is unmarked is found."""
    assert _unmarked_launchers(ROOT / "tests") == []
    (tmp_path / "test_planted.py").write_text(
        "import shutil\nimport pytest\n\n\n@pytest.mark.skipif(shutil.which(\"mpirun\") is None,"
        " reason='')\ndef test_x():\n    pass\n")
    (tmp_path / "test_named.py").write_text('ARGS = ["sbatch", "--nodes", "1"]\n')
    assert _unmarked_launchers(tmp_path) == ["test_planted.py"]
