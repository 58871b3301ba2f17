"""Trace parsing: a pure test on a small shipped trace, and a real 2-process --profile run."""

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from podscale.analysis import load_run
from podscale.analysis.data.traces import (
    convert,
    events,
    load_traces,
    merge,
    offset,
    step_table,
    steps,
    stragglers,
)
from tests.conftest import only_run, podscale, stamps, xprof_opens

DATA = Path(__file__).parent / "data" / "small_trace.json"


def test_parser_on_small_trace():
    ev = events(json.loads(DATA.read_text()))
    assert offset(ev, 1010.0) == 1000.0
    table = steps(ev, process=3, offset_us=1000.0)
    assert list(table["step"]) == [0, 1]
    s0, s1 = table.iloc[0], table.iloc[1]
    assert s0.case_id == "psum/pmap/float32/n8/h2xd2" and s0.process == 3
    assert s0.wall_us == 50 and s0.busy_us == 30  # union of [105,115] and [115,135]
    assert s0.collective_us == 20 and s0.host_us == 20 and s0.ops == 3  # 'end:' is not an op
    assert s0.collective_start_us == 1115.0 and s0.start_us == 1100.0
    assert s0.devices == 2 and s0.busy_max_us == 30 and s0.busy_min_us == 4
    assert s1.busy_us == 30 and s1.collective_us == 30  # clipped at the step's end


def test_stragglers_and_merge():
    ev = events(json.loads(DATA.read_text()))
    a, b = steps(ev, 0, 0.0), steps(ev, 1, 7.0)  # process 1 runs 7us later
    table = pd.concat([a.assign(layout="h2xd2"), b.assign(layout="h2xd2")])
    lag = stragglers(table)
    assert list(lag["last_process"]) == [1, 1] and list(lag["lag_us"]) == [7.0, 7.0]
    merged = merge({("h2xd2", 0): (ev, 0.0), ("h2xd2", 1): (ev, 7.0)}, "h2xd2")
    json.dumps(merged)
    names = {e["pid"]: e["args"]["name"] for e in merged["traceEvents"]
             if e["name"] == "process_name"}
    assert names == {1: "process 0", 2: "process 1"}
    first = {pid: min(e["ts"] for e in merged["traceEvents"] if e["pid"] == pid and e["ph"] == "X")
             for pid in names}
    assert first[2] - first[1] == pytest.approx(7.0)


@pytest.fixture(scope="module")
def profiled_run(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("prof")
    res = podscale("run", "--rounds", "1",
                   "dot,psum", "--hosts", "2", "--devices-per-host", "2", "--sizes", "8K",
                   "--variants", "shard_map", "--iters", "4", "--profile", "--traced-iters", "3",
                   "--out", str(out))
    assert res.returncode == 0, res.stderr + res.stdout
    return only_run(out), res.stdout


def test_profiled_run_traces(profiled_run):
    run, stdout = profiled_run
    xplanes = sorted(run.glob("traces/h2xd2/plugins/profile/*/process-*.xplane.pb"))
    assert [p.name for p in xplanes] == ["process-0.xplane.pb", "process-1.xplane.pb"]
    for p in xplanes:  # XProf's own converters read them
        assert convert(p)["traceEvents"]
    # every tool XProf opens a multi-host session with: one task per process
    opened = xprof_opens(xplanes)
    assert opened["tasks"] == 2 and min(opened["events"]) > 0, opened
    assert all("byProgram" in o for o in opened["op_profile"]), opened
    assert min(opened["framework_op_stats"]) > 0, opened
    # each trace stamped with what made it
    import jax

    for i, p in enumerate(xplanes):
        (s,) = stamps(p)
        assert s == {"jax": jax.__version__, "jaxlib": s["jaxlib"], "podscale": s["podscale"],
                     "run": run.name, "process": i}, s
    assert "stragglers" in stdout and "merged timeline" in stdout
    # and the layout's one merged timeline, a Perfetto archive of both processes
    (archive,) = run.glob("traces/timeline-h2xd2.zip")
    with zipfile.ZipFile(archive) as z:
        manifest = json.loads(z.read("perfetto_manifest.json"))["perfetto_manifest"]
        assert sorted(z.namelist()) == ["perfetto_manifest.json", "process-0.json",
                                        "process-1.json"]
    assert manifest["version"] == 1 and len(manifest["files"]) == 2


def test_trace_table_consistent_with_measured(profiled_run):
    run, _ = profiled_run
    table = step_table(load_traces(run))
    assert len(table) == 2 * 2 * 3  # processes x cases x traced iterations
    loaded = load_run(run)
    samples = loaded.samples
    traced = samples[samples.phase == "traced"].set_index(["process", "case_id", "iteration"])
    assert len(traced) == 12 and not (samples.phase == "timed").sum() == 0
    for r in table.itertuples():
        measured = traced.loc[(r.process, r.case_id, r.step), "seconds"] * 1e6
        assert 0.8 * measured <= r.wall_us <= 1.5 * measured + 5000  # annotation encloses clock
        assert 0 < r.busy_us <= r.wall_us + 1e-6
        assert r.host_us == pytest.approx(r.wall_us - r.busy_us)
        # the attribution's invariants (the profile path's words): the parts add up
        assert r.busy_us + r.idle_us == pytest.approx(r.span_us)
        assert r.exposed_us + r.hidden_us == pytest.approx(r.collective_us)
        assert r.compute_us + r.callback_us + r.exposed_us + r.hidden_us + r.idle_us == \
            pytest.approx(r.span_us, abs=1e-3)
    psum = table[table.case_id.str.startswith("psum")]
    assert len(psum) == 2 * 3 and (psum.collective_us > 0).all()  # processes x iterations
    dot = table[table.case_id.str.startswith("dot")]
    assert len(dot) == 2 * 3


def test_a_trace_cut_short_is_said(profiled_run):
    """A trace holding fewer annotated steps than its process timed in the traced pass (a
    step planted missing from process 1's psum) is said, per process and case."""
    from podscale.analysis.data.traces import cut_short

    run, _ = profiled_run
    table = step_table(load_traces(run))
    samples = load_run(run).samples
    assert cut_short(table, samples) == []
    psum = table[(table.process == 1) & table.case_id.str.startswith("psum")]
    assert len(psum) == 3
    said = cut_short(table.drop(index=psum.index[-1]), samples)
    assert len(said) == 1 and said[0].startswith("process 1's trace of psum") and \
        "holds 2 of its 3 traced steps: cut short" in said[0], said


def test_merged_timeline_one_track_per_process(profiled_run):
    run, _ = profiled_run
    merged = json.loads((run / "traces" / "h2xd2" / "merged.trace.json").read_text())
    tracks = {e["args"]["name"] for e in merged["traceEvents"] if e["name"] == "process_name"}
    assert tracks == {"process 0", "process 1"}
    steps_csv = pd.read_csv(run / "traces" / "steps.csv")
    assert set(steps_csv.process) == {0, 1}


def test_trace_dir_named_by_host(tmp_path):
    """--trace-dir: the host writes straight to a shared path (or gs://) named by host;
    podscale maps host names back to processes through the run's sidecars."""
    res = podscale("run", "--rounds", "1",
                   "psum", "--hosts", "1", "--devices-per-host", "2", "--sizes", "4K",
                   "--iters", "3", "--profile", "--trace-dir", str(tmp_path / "shared"),
                   "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    (xplane,) = (tmp_path / "shared").glob("h1xd2/plugins/profile/*/*.xplane.pb")
    assert not xplane.name.startswith("process-")  # JAX's own <host>.xplane.pb
    table = step_table(load_traces(only_run(tmp_path / "out"), tmp_path / "shared"))
    assert set(table["process"]) == {0} and len(table) == 2 * 3
    res = podscale("run", "--rounds", "1",
                   "psum", "--hosts", "2", "--profile", "--trace-dir", "gs://b/p",
                   "--out", str(tmp_path / "x"))
    assert res.returncode == 2 and "share one host" in res.stderr
