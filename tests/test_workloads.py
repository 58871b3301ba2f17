"""Workloads as the unit of extension: a user's file by path, the example MLP step, the
worker's imports, settings in case identity, and wrong results failing the run."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from podscale.analysis import load_run, summarize
from podscale.analysis.verdicts.compare import compare
from podscale.core.case import Settings
from podscale.core.errors import UsageError
from tests.conftest import ROOT, only_run, podscale
from tests.synth import make_run

# A new collective in one file, outside the repository: all_gather over every mesh axis,
# with its own reference; it also records which modules its worker process imported.
USER_WORKLOAD = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    import numpy as np
    from podscale import Expected, Mapped, Param, Work, cast, gather_elements, normals


    class Gather(Mapped):
        """all_gather of every device's vector"""
        name = "my_gather"
        version = "3"
        collective = "all_gather"
        params = (Param("size", 64, "size"), Param("scale", 1.0, "float"))

        def inputs(self, ctx):
            shape = (ctx.local_devices, ctx.p["size"] // ctx.local_devices)
            return (cast(ctx.p["scale"] * normals(ctx.process, shape), ctx.case.dtype),)

        def body(self, case, axes, x):
            import jax
            return jax.lax.all_gather(x, axes, tiled=True)

        def reference(self, ctx, local):
            m = local[0].shape[-1]
            at = ctx.sample(m)
            everything = gather_elements(local[0], at)  # (devices, k)
            value = np.broadcast_to(everything.reshape(-1), (ctx.local_devices, everything.size))
            where = (np.arange(len(everything))[:, None] * m + at).reshape(-1)
            Path(__file__).with_name(f"modules-{ctx.process}.json").write_text(
                json.dumps(sorted(sys.modules)))
            return Expected(value, np.zeros(1), None if at.size == m else where)

        def work(self, case):
            per_device = case.p["size"] // case.devices_per_host * case.itemsize
            return Work(case.p["size"] * case.itemsize, 0, per_device, case.layout.devices)


    gather = Gather()
''')


@pytest.fixture(scope="module")
def user_run(tmp_path_factory):
    """One real 2-host x 2-device run: the temp-file workload and examples/mlp.py."""
    home = tmp_path_factory.mktemp("elsewhere")
    (home / "mine.py").write_text(USER_WORKLOAD)
    docs = (ROOT / "docs" / "workloads.md").read_text()
    for marker, name in (("A new collective in one file:", "pmax.py"),
                         ("An axis-aware collective in one file:", "pmean.py")):
        example = docs.split(f"{marker}\n\n```python\n", 1)[1].split("```")[0]
        (home / name).write_text(example)
    out = home / "runs"
    res = podscale("run", "--rounds", "1",
                   f"{home / 'mine.py'}:gather,{ROOT}/examples/mlp.py:mlp_step,"
                   f"{home / 'pmax.py'},{home / 'pmean.py'}",
                   "--hosts", "2", "--devices-per-host", "2", "--param", "scale=1,2",
                   "--axes", "hosts,local,all",
                   "--variants", "shard_map,jit", "--sizes", "4K", "--iters", "3", "--warmup", "1",
                   "--out", str(out), cwd=home.parent)
    assert res.returncode == 0, res.stderr + res.stdout
    return home, only_run(out), res.stdout


def test_user_workload_by_path_on_two_hosts(user_run):
    home, run, stdout = user_run
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    table = summarize(samples, cases)
    mine = table[table.workload == "my_gather"]
    assert len(mine) == 2 and set(mine["scale"]) == {1.0, 2.0}  # its own parameter, a column
    assert (mine["version"] == "3").all() and (mine["participants"] == 4).all()
    assert mine["busbw"].notna().all()  # a collective: busbw from its declared kind
    assert (cases["wrong"] == 0).all() and (cases["checked"] > 0).all()
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("# my_gather"))
    assert " scale " in lines[at + 1]  # its own parameter, a column of its own table


def test_docs_collectives_in_one_file(user_run):
    """Both listings of docs/workloads.md run as written: pmax, and pmean over each mesh
    axis (n = 2 over hosts or local, 4 over all), every element checked and right."""
    home, run, _ = user_run
    for name in ("pmax.py", "pmean.py"):
        assert len((home / name).read_text().strip().splitlines()) <= 45
    cases = load_run(run).cases
    pmax = cases[cases.workload == "pmax"]
    assert len(pmax) == 2 and (pmax["wrong"] == 0).all()  # 2 processes, one case
    pmean = cases[cases.workload == "pmean"]
    assert sorted(pmean.groupby("case_id")["participants"].first()) == [2, 2, 4]
    assert len(pmean) == 6 and (pmean["checked"] > 0).all() and (pmean["wrong"] == 0).all()


def test_mlp_step_example_checks_its_gradient(user_run):
    _, run, _ = user_run
    cases = load_run(run).cases
    mlp = cases[cases.workload == "mlp_step"]
    assert set(mlp["process"]) == {0, 1} and (mlp["wrong"] == 0).all()
    n_params = 64 * 128 + 2 * 128 + 1
    # a sample of --check-elements gradient elements on every process, the rest counted
    assert (mlp["checked"] == 4096).all() and (mlp["unsampled"] == n_params - 4096).all()
    assert (mlp["max_error"] < 1).all()  # inside the bound (ratio error / bound)


def test_worker_imports_only_what_it_measures_with(user_run):
    home, _, _ = user_run
    for process in (0, 1):
        modules = set(json.loads((home / f"modules-{process}.json").read_text()))
        assert "jax" in modules and "numpy" in modules  # recorded in a real worker
        heavy = {m.split(".")[0] for m in modules} & {"pandas", "scipy", "matplotlib",
                                                         "seaborn"}
        heavy |= {m for m in modules if m.startswith(("podscale.analysis", "podscale.frontend"))}
        assert not heavy, heavy


def test_wrong_results_fail_the_run_in_every_dtype(tmp_path):
    """A planted corruption of process 1's outputs: every case of every dtype reports
    wrong elements, the run keeps its records and exits 4 naming a case."""
    res = podscale("run", "--rounds", "1",
                   "dot,psum,stream", "--param", "op=read,copy", "--hosts", "2",
                   "--devices-per-host", "1", "--sizes", "1K", "--dtypes",
                   "float32,bfloat16,float16", "--variants", "shard_map",
                   "--iters", "2", "--warmup", "0", "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "corrupt@1:*"})
    assert res.returncode == 4, res.stderr
    assert "wrong output element(s) in 12 case(s)" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    run = load_run(only_run(tmp_path))
    cases = run.cases
    per = cases.groupby(["case_id", "process"])["wrong"].first().unstack("process")
    assert len(per) == 12 and (per[1] > 0).all() and (per[0] == 0).all()


def test_compare_refuses_different_settings(tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", settings=Settings(iters=30, sync="once"))
    with pytest.raises(UsageError, match=r"settings differ \(sync: 'each' vs 'once' in 48"):
        compare(a, b)
    res = podscale("compare", str(a), str(b))
    assert res.returncode == 2 and "use --force" in res.stderr
    table, notes = compare(a, b, force=True)
    assert len(table) == 48 and any("sync" in n for n in notes)


# Two user collectives declaring no exact rule: a psum whose body is 2 ulps low on every
# negative result (its reference, combine, is right), and a pmean (no rule's closed form)
NO_RULE = textwrap.dedent('''
    import numpy as np
    from podscale import Collective, integral, sum_bound


    class SignSkewed(Collective):
        """psum, 2 ulps low where the sum is negative"""
        name = "skewed_sum"
        version = "1"
        collective = "all_reduce"

        def body(self, case, axes, x):
            import jax
            import jax.numpy as jnp
            s = jax.lax.psum(x, axes)
            low = jnp.nextafter(jnp.nextafter(s, -jnp.inf), -jnp.inf)
            return jnp.where(s < 0, low, s)

        def combine(self, x, case):
            total = x.sum(axis=-2, keepdims=True)
            bound = sum_bound(x.shape[-2], case.dtype, np.abs(x).sum(axis=-2, keepdims=True),
                              total, integers=integral(x))
            return np.broadcast_to(total, x.shape), np.broadcast_to(bound, x.shape)


    class Mean(Collective):
        """pmean"""
        name = "user_pmean"
        version = "1"
        collective = "all_reduce"

        def body(self, case, axes, x):
            import jax
            return jax.lax.pmean(x, axes)

        def combine(self, x, case):
            n = x.shape[-2]
            mean = x.sum(axis=-2, keepdims=True) / n
            bound = sum_bound(n, case.dtype, np.abs(x).sum(axis=-2, keepdims=True) / n, mean)
            return np.broadcast_to(mean, x.shape), np.broadcast_to(2 * bound, x.shape)


    skewed_sum, user_pmean = SignSkewed(), Mean()
''')


def test_a_users_collective_is_checked_exactly_without_declaring_a_rule(tmp_path):
    """The exact rule is found from the collective's own reference: the 2-ulp
    sign-dependent error is caught by the exact pass and fails the run; the pmean, which
    follows no rule, is named in the verdict line as checked only within rounding bounds."""
    from podscale.analysis import load_run

    path = tmp_path / "mine.py"
    path.write_text(NO_RULE)
    res = podscale("run", "--rounds", "1", f"{path}:skewed_sum,{path}:user_pmean",
                   "--hosts", "1", "--devices-per-host", "2", "--sizes", "4K", "--iters",
                   "2", "--warmup", "1", "--variants", "shard_map", "--dtypes", "float32",
                   "--out", str(tmp_path / "out"))
    assert res.returncode != 0, res.stdout
    cases = load_run(only_run(tmp_path / "out")).cases.set_index("workload")
    assert cases.loc["skewed_sum", "wrong"] > 0 and cases.loc["skewed_sum", "exact_checked"] > 0
    assert cases.loc["user_pmean", "wrong"] == 0
    assert cases.loc["user_pmean", "exact_checked"] == 0
    verdict = next(line for line in res.stdout.splitlines()
                   if line.startswith("# Out of bounds values"))
    assert verdict.endswith("; 1 case(s) checked only within rounding bounds (user_pmean)"), \
        verdict


def test_a_shaped_matmul_is_one_case_whatever_the_sizes():
    """``-p shape=64x64x64 --sizes 4K,64K``: one product, so one case (it had run twice
    under two size labels), its size the shape's N."""
    res = podscale("run", "matmul", "--hosts", "1", "--devices-per-host", "1", "-p",
                   "shape=64x64x64", "--sizes", "4K,64K", "--variants", "shard_map",
                   "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "# h1xd1: 1 process(es) x 1 device(s), 1 case(s)" in res.stdout, res.stdout
    res = podscale("run", "matmul", "--hosts", "1", "--devices-per-host", "1", "--sizes",
                   "64,128", "--variants", "shard_map", "--dry-run")
    assert "1 device(s), 2 case(s)" in res.stdout, res.stdout  # square: one per size


def test_a_lowered_precision_is_said_and_fails_only_where_highest_was_asked(tmp_path):
    """Planted: float32 inputs rounded to bfloat16 on the device side (PODSCALE_FAULT
    lower), what a TPU does at JAX's default precision. At precision=default the run
    passes and says the case ran lowered (show, the findings); at highest the same is wrong
    results (exit 4); without the fault nothing is lowered."""
    import pandas as pd

    from podscale.analysis.verdicts.coded import findings

    args = ("run", "matmul", "--hosts", "1", "--devices-per-host", "1", "--sizes", "64",
            "--dtypes", "float32", "--variants", "shard_map", "--iters", "2", "--rounds", "1")
    planted = {**os.environ, "PODSCALE_FAULT": "lower@*:*"}
    res = podscale(*args, "--out", str(tmp_path / "d"), env=planted)
    assert res.returncode == 0, res.stderr
    assert "# Lowered precision    : 4096 element(s) in 1 case(s)" in res.stdout, res.stdout
    summary = load_run(only_run(tmp_path / "d")).summary()
    said = findings(summary, pd.DataFrame(), pd.DataFrame(), device=False)
    assert any(s.startswith("lowered precision: 4096 checked") for s in said), said
    res = podscale(*args, "-p", "precision=highest", "--out", str(tmp_path / "h"), env=planted)
    assert res.returncode == 4 and "4096 wrong output element(s)" in res.stderr, res.stderr
    res = podscale(*args, "-p", "precision=highest", "--out", str(tmp_path / "n"))
    assert res.returncode == 0 and "Lowered" not in res.stdout, res.stdout + res.stderr
