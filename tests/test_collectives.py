"""Every collective over any mesh axes, checked element by element, on real processes."""

from __future__ import annotations

import os

import pytest

from podscale.analysis import load_run, summarize
from podscale.analysis.data.summary import Summary
from podscale.core.errors import UsageError
from tests.conftest import only_run, podscale

COLLECTIVES = "all_reduce,all_gather,reduce_scatter,all_to_all,ppermute,broadcast"


@pytest.fixture(scope="module")
def collective_run(tmp_path_factory):
    """One launch per host count: every collective x axes hosts, local, all x 2 sizes on
    2 hosts x 2 devices, in every variant that can express the case."""
    out = tmp_path_factory.mktemp("coll")
    res = podscale("run", "--rounds", "1", COLLECTIVES + ",ragged_all_to_all", "--hosts", "2",
                   "--devices-per-host", "2", "--sizes", "1KiB,4KiB", "--param",
                   "axes=hosts,local,all", "--iters", "2", "--warmup", "0", "--out", str(out))
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    run = load_run(only_run(out))
    return run, run.summary(), res.stdout


def test_ragged_all_to_all_is_a_clear_skip_on_cpu(collective_run):
    run, table, stdout = collective_run
    skipped = run.skipped
    assert len(skipped) == 3 * 2 and all(k.startswith("ragged_all_to_all@1/") for k in skipped)
    assert all("UNIMPLEMENTED" in r and "XLA:CPU" in r for r in skipped.values())
    assert "ragged_all_to_all" not in set(table["workload"])
    assert "# skipped 6 ragged_all_to_all case(s): UNIMPLEMENTED" in stdout  # once


def test_ragged_all_to_all_reference_follows_the_op_semantics():
    """The inputs' offsets and sizes, applied as jax.lax.ragged_all_to_all documents them
    (in numpy: the op does not run on CPU), give the workload's reference."""
    import numpy as np

    from podscale.core.case import Case, Layout, Settings
    from podscale.core.workload import Context
    from podscale.suites.ragged_all_to_all import ragged_all_to_all as wl

    case = Case("ragged_all_to_all", "1", "ragged_all_to_all", "shard_map", "float32",
                Layout(3, 2), (("axes", "all"), ("size", 4 * 43)), Settings())
    wl.validate(case)
    per = [wl.inputs(Context(case, p, 3, [], None)) for p in range(3)]
    x, out, in_off, send, out_off, recv = (np.concatenate(a) for a in zip(*per))
    got = out.astype(np.float64)
    for i in range(6):
        for j in range(6):
            k = send[i, j]
            assert recv[j, i] == k
            got[j, out_off[i, j]:out_off[i, j] + k] = x[i, in_off[i, j]:in_off[i, j] + k]
    value, _ = wl.combine(x.astype(np.float64)[None], case)
    np.testing.assert_array_equal(got, value[0])
    # 43 elements: q=2 units of n(n+1)/2 = 21, one element left unsent
    assert wl.work(case).bytes_per_device == 4 * 2 * 21


def test_every_collective_over_every_axes_is_correct(collective_run):
    run, table, _ = collective_run
    cases = run.cases
    assert set(table["workload"]) == set(COLLECTIVES.split(","))
    assert (cases["wrong"] == 0).all() and (cases["checked"] > 0).all()
    got = table.groupby(["workload", "axes"])["participants"].first().unstack()
    assert (got["hosts"] == 2).all() and (got["local"] == 2).all() and (got["all"] == 4).all()
    # pmap only where it can express the case (all axes); ppermute is shard_map only
    pmap = table[table.variant == "pmap"]
    assert set(pmap["axes"]) == {"all"} and "ppermute" not in set(pmap["workload"])
    assert len(table) == 6 * 3 * 2 + 5 * 2


def test_busbw_against_hand_computed(collective_run):
    _, table, _ = collective_run
    factor = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
              "ppermute": lambda n: 1.0, "broadcast": lambda n: 1.0}
    for r in table.itertuples():
        n = r.participants
        s = r.size * (n if r.workload == "all_gather" else 1)  # S: recv buffer for gather
        assert r.bytes_per_device == s
        assert r.busbw == pytest.approx(s / r.time_s / 1e9 * factor[r.workload](n))


def test_corrupted_output_of_each_collective_is_caught(tmp_path):
    res = podscale("run", "--rounds", "1",
                   COLLECTIVES, "--hosts", "2", "--devices-per-host", "1", "--sizes",
                   "1KiB", "--variants", "shard_map", "--iters", "1", "--warmup", "0",
                   "--out", str(tmp_path), env={**os.environ, "PODSCALE_FAULT": "corrupt@0:*"})
    assert res.returncode == 4, res.stderr
    run = load_run(only_run(tmp_path))
    cases = run.cases
    wrong = cases.groupby(["workload", "process"])["wrong"].sum().unstack()
    assert (wrong[0] > 0).all() and (wrong[1] == 0).all() and len(wrong) == 6


def test_three_d_mesh_subsets(tmp_path):
    res = podscale("run", "--rounds", "1", "all_to_all,reduce_scatter,all_reduce", "--hosts", "2",
                   "--local-axes", "chip=2,core=2", "--sizes", "1KiB", "--variants",
                   "shard_map", "--param", "axes=hosts+core,core+chip,chip", "--iters", "1",
                   "--warmup", "0", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    run = load_run(only_run(tmp_path))
    samples, cases = run.samples, run.cases
    table = summarize(samples, cases)
    assert (cases["wrong"] == 0).all() and len(table) == 9
    assert set(table["mesh"]) == {"hosts2xchip2xcore2"}
    # one spelling of the layout: the frames', the ledger's and the records' folder
    assert set(table["layout"]) == set(run.ledger["layout"]) == {"h2xd4-chip2xcore2"}
    assert (run.path / "records" / "h2xd4-chip2xcore2").is_dir()
    assert dict(zip(table["axes"], table["participants"])) == {"hosts+core": 4, "core+chip": 4,
                                                              "chip": 2}
    res = podscale("run", "--rounds", "1",
                   "all_reduce", "--hosts", "2", "--param", "axes=hosts+gpu",
                   "--out", str(tmp_path / "bad"))
    assert res.returncode == 2 and "not distinct axes of the mesh hosts,local" in res.stderr


def test_hierarchical_all_reduce_next_to_flat(tmp_path):
    from podscale.analysis.render.report import algorithms, write_report

    res = podscale("run", "--rounds", "1",
                   "all_reduce", "--hosts", "2", "--devices-per-host", "2", "--sizes",
                   "4KiB,8KiB,16KiB", "--param", "algorithm=flat,hierarchical",
                   "--param", "op=sum,max",
                   "--iters", "2", "--warmup", "0", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    run = only_run(tmp_path)
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    assert (cases["wrong"] == 0).all()
    summary = Summary(summarize(samples, cases), loaded.params)
    table = summary.frame
    # pmap cannot express the hierarchical schedule: flat only there
    assert set(table.loc[table.variant == "pmap", "algorithm"]) == {"flat"}
    side = algorithms(summary)
    assert len(side) == 6 and "hierarchical / flat" in side.columns  # shard_map, sum/max x 3
    from podscale.analysis.models.fits import fits, model_times

    fitted = fits(samples, summary)  # one fit per algorithm and op, none merged
    shard = fitted[fitted.variant == "shard_map"]
    assert len(shard) == 4 and set(shard.algorithm) == {"flat", "hierarchical"}
    assert model_times(summary, fitted).notna().sum() == len(table)
    write_report(run)
    assert "Algorithms side by side" in (run / "report" / "index.html").read_text()


@pytest.mark.alone
def test_pair_matrix_names_the_planted_slow_process(tmp_path):
    from podscale.analysis.models.pairs import matrices, outliers

    res = podscale("run", "--rounds", "1",
                   "pairs", "--hosts", "3", "--devices-per-host", "1", "--sizes",
                   "4KiB", "--iters", "5", "--warmup", "1", "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "slow=0.02@1:*"})
    assert res.returncode == 0, res.stderr
    run = load_run(only_run(tmp_path))
    samples, cases = run.samples, run.cases
    table = summarize(samples, cases, prefer=run.prefer)
    assert (cases["wrong"] == 0).all() and len(table) == 6  # every ordered pair
    ((_, m),) = matrices(table, samples)
    assert m.loc[0, 2] < 20_000 and m.loc[0, 1] > 20_000 and m.loc[1, 2] > 20_000
    named = outliers(table, samples)
    assert list(named["outlier"]) == [1]
    # the table's time of a pair is over its two processes, as the matrix's: process 1's
    # planted sleep is not in pair 0 -> 2 (it only looks on)
    assert (~cases["takes_part"]).sum() == 6  # one bystander per pair
    shown = run.summary().assign(src=lambda d: d.src.astype(int), dst=lambda d: d.dst.astype(int))
    for r in shown.itertuples():
        assert abs(r.time_s * 1e6 - m.loc[r.src, r.dst]) <= 0.1, (r.src, r.dst)
    assert shown.set_index(["src", "dst"]).loc[(0, 2), "time_s"] < 0.02


def test_groups_are_the_documented_device_sets():
    """Group index arrays against hand-computed ones: process-major device indices."""
    from podscale.core.case import Case, Layout, Settings
    from podscale.suites.all_reduce import all_reduce as wl

    def case(layout, **p):
        params = {"axes": "all", "group": "all", "op": "sum", "algorithm": "flat",
                  "size": 64, **p}
        return Case("all_reduce", "1", "all_reduce", "shard_map", "float32", layout,
                    tuple(params.items()), Settings())

    h2 = Layout(2, 2)
    assert wl.groups(case(h2)).tolist() == [[0, 1, 2, 3]]
    assert wl.groups(case(h2, group="2")).tolist() == [[0, 1], [2, 3]]  # inside a host
    assert wl.groups(case(h2, group="2:strided")).tolist() == [[0, 2], [1, 3]]
    assert wl.groups(case(h2, axes="hosts")).tolist() == [[0, 2], [1, 3]]
    assert wl.hosts_per_group(case(h2, group="2")) == 1
    assert wl.hosts_per_group(case(h2, group="2:strided")) == 2
    cube = Layout(2, 4, (("chip", 2), ("core", 2)))  # device = 4 host + 2 chip + core
    assert wl.groups(case(cube, axes="hosts+core")).tolist() == [[0, 1, 4, 5], [2, 3, 6, 7]]
    assert wl.groups(case(Layout(4, 2), group="4")).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert wl.hosts_per_group(case(Layout(4, 2), group="4")) == 2
    assert wl.work(case(Layout(4, 2), group="4")).participants == 4
    for bad in ("3", "1", "x", "2:sideways"):
        with pytest.raises(UsageError):
            wl.validate(case(Layout(4, 2), group=bad))


def test_groups_of_a_size_run_at_once_and_are_checked(tmp_path):
    """Every collective in groups of 2 (inside a host) and 2:strided (across hosts) on
    2 x 2; one case's output corrupted on process 1 is caught, the rest are right."""
    res = podscale("run", "--rounds", "1", COLLECTIVES, "--hosts", "2", "--devices-per-host",
                   "2", "--sizes", "1KiB", "--group-sizes", "2,2:strided", "--iters", "1",
                   "--warmup", "0", "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "corrupt@1:0"})
    assert res.returncode == 4, res.stderr + res.stdout[-2000:]
    run = load_run(only_run(tmp_path))
    samples, cases = run.samples, run.cases
    table = summarize(samples, cases)
    assert len(table) == 6 * 2 and set(table.variant) == {"shard_map"}  # pmap: all only
    assert (table.participants == 2).all()
    hosts = dict(zip(table.group, table.hosts_per_group))
    assert hosts == {"2": 1, "2:strided": 2}
    first = cases.iloc[0]["case_id"]
    bad = cases[cases.wrong > 0]
    assert set(bad.case_id) == {first} and set(bad.process) == {1}


def test_references_do_not_copy_per_member():
    """all_gather, broadcast and all_reduce give every member the same data: the reference
    is a view (stride 0 over members), not n copies — at 16 processes x 1 MiB the copies
    took every process past 1.5 GB and the kernel killed one."""
    import numpy as np

    from podscale.core.case import Case, Layout, Settings
    from podscale.suites.all_gather import all_gather
    from podscale.suites.all_reduce import all_reduce
    from podscale.suites.broadcast import broadcast

    x = np.ones((1, 64, 1000))
    for wl, params in ((all_gather, {}), (broadcast, {}), (all_reduce, {"op": "sum"}),
                       (all_reduce, {"op": "max"})):
        case = Case(wl.name, "1", wl.name, "shard_map", "float32", Layout(64, 1),
                    tuple({"axes": "all", "group": "all", "size": 4000, "algorithm": "flat",
                           **params}.items()), Settings())
        value, bound = wl.combine(x, case)
        assert value.shape[-2] == 64 and value.strides[-2] == 0, wl.name
        assert np.broadcast_to(bound, value.shape).strides[-2] == 0, wl.name


def test_slices_are_a_layout_with_dcn_and_ici_axes():
    """Two slices of one host each: the mesh is dcn x hosts x local; dcn runs across the
    slices, ici inside one (every axis but dcn); one slice keeps its old key, and a dcn
    axis there is left out, said."""
    from podscale.core.case import Layout

    two = Layout(4, 2, slices=2)
    assert two.key == "s2xh2xd2" and two.axes == (("dcn", 2), ("hosts", 2), ("local", 2))
    assert [two.slice_of(p) for p in range(4)] == [0, 0, 1, 1]
    assert Layout.from_dict(two.to_dict()) == two and Layout(4, 2).key == "h4xd2"
    assert "slices" not in Layout(4, 2).to_dict()  # old records and keys unchanged
    with pytest.raises(UsageError, match="3 processes do not make 2 slices"):
        Layout(3, 1, slices=2)


def test_a_multi_slice_study_runs_every_axis_records_slices_and_models_more(tmp_path):
    """Every axis of jobs of 1, 2 and 4 slices, checked; each process's slice recorded;
    slice 1's process made three times as slow (a planted stretch) is the slowest slice,
    named; the collectives between slices are a sweep of their own (n over ``dcn``: the
    slice count), predicted at more slices than ran once three slice counts are there."""
    from podscale.analysis.models.scalemodel import scaling_models
    from podscale.analysis.models.skew import relative, slowest_slice
    from podscale.analysis.verdicts.findings import _scaling_models

    res = podscale("run", "--rounds", "1", "all_reduce", "--slices", "1,2,4", "--hosts", "1",
                   "--devices-per-host", "2", "--axes", "dcn,ici,all", "--sizes", "4KiB,64KiB",
                   "--variants", "shard_map", "--iters", "6", "--warmup", "1",
                   "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "stretch=3@1:all_reduce"})
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    run = load_run(only_run(tmp_path))
    t = run.summary()
    got = sorted(set(zip(t["layout"], t["axes"], t["participants"], t["wrong"])))
    assert got == [("h1xd2", "all", 2, 0), ("h1xd2", "ici", 2, 0), ("s2xh1xd2", "all", 4, 0),
                   ("s2xh1xd2", "dcn", 2, 0), ("s2xh1xd2", "ici", 2, 0),
                   ("s4xh1xd2", "all", 8, 0), ("s4xh1xd2", "dcn", 4, 0),
                   ("s4xh1xd2", "ici", 2, 0)], got
    models = scaling_models(run.samples, run.table(), predict_n=(16,), draws=50)
    m = models["models"].set_index(["regime", "axes"])
    assert m.loc[("across slices", "dcn"), "n_values"] == "2,4", m
    assert m.loc[("across slices", "all"), "n_values"] == "4,8", m
    # two slice counts fix no form: no model output, and what to run instead is said
    notes = models["notes"].set_index(["regime", "axes"])
    assert models["predictions"].empty and notes.loc[("across slices", "dcn"), "instead"] \
        == "add a third participant count, e.g. n = 8 (more slices: --slices)", notes
    said = _scaling_models(models)
    assert any(f.startswith("no prediction beyond what ran for ") for f in said), said
    # with a third slice count (here the same points at n = 8, twice as slow) the sweep
    # predicts at more slices than ran, and the Findings say it between slices
    import pandas as pd

    t = t.assign(case_id=t["case_id"].astype(str))
    samples = run.samples.assign(case_id=run.samples["case_id"].astype(str))
    dcn = t[(t["axes"] == "dcn")]
    more = dcn.assign(case_id=dcn["case_id"] + "-x8", participants=8)
    extra = samples[samples["case_id"].isin(dcn["case_id"])].assign(
        case_id=lambda f: f["case_id"] + "-x8", seconds=lambda f: f["seconds"] * 2)
    models = scaling_models(pd.concat([samples, extra]), run.table().of(pd.concat([t, more])),
                            predict_n=(16,), draws=50)
    pred = models["predictions"]
    dcn = pred[(pred["regime"] == "across slices") & (pred["axes"] == "dcn")]
    assert set(dcn["n"]) == {16} and dcn["label"].str.contains("measured n: 2,4,8").all(), pred
    said = [f for f in _scaling_models(models) if f.startswith("model output between")]
    assert said and "all_reduce 64.0 KiB over dcn at 16 slices predicted" in said[0] and \
        said[0].endswith("fitted on 2,4,8 slices"), said
    envs = run.envs[[e.get("layout") == "s2xh1xd2" for e in run.envs["extra"]]]
    assert sorted((int(p), e["slice"]) for p, e in zip(envs["process"], envs["extra"])) == \
        [(0, 0), (1, 1)]
    assert all(e["slice_from"].startswith("MEGASCALE_SLICE_ID") for e in envs["extra"])
    sl = slowest_slice(relative(run.samples, t), t)
    assert sl is not None and (sl["slice"], sl["processes"], sl["cases"]) == (1, [1], 12), sl
    assert sl["relative"] > 1.5, sl
