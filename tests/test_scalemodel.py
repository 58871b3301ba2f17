"""Scaling models recover how a planted collective grows with n, and predict a held-out n
(synthetic records, no JAX)."""

import numpy as np

from podscale.analysis import load_run, summarize
from podscale.analysis.data.summary import Summary
from podscale.analysis.models.bandwidth import bus_factor
from podscale.analysis.models.scalemodel import fit, scaling_models
from tests.synth import make_run

A0, A1, BETA = 30e-6, 20e-6, 4e9  # s, s per extra participant, bus bytes/s


def ring(case, record):
    n = record.participants
    if case.workload != "psum" or n < 2:
        return 1e-5 + record.bytes_per_process / 2e9
    return A0 + A1 * (n - 1) + record.bytes_per_device * bus_factor("all_reduce", n) / BETA


def tree(case, record):
    n = record.participants
    if case.workload != "psum" or n < 2:
        return 1e-5 + record.bytes_per_process / 2e9
    return A0 + 3 * A1 * np.log2(n) + record.bytes_per_device * bus_factor("all_reduce", n) / (
        BETA / (1 + 0.5 * np.log2(n)))


def _models(tmp_path, name, time_of, floor=None):
    run = make_run(tmp_path / name, sizes=(4096, 65536, 1 << 20), hosts=(1, 2, 4, 8),
                   dph=(2,), rounds=3, launch_noise=0.03, time_of=time_of, process_skew=0)
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    return scaling_models(samples, Summary(summarize(samples, cases), loaded.params), draws=200,
                          floor=floor)


def test_a_prediction_under_the_hardwares_least_time_says_so(tmp_path):
    """Model output is held against the least time the hardware allows (on TPU, the
    torus's): one under it says so, naming the bound's source; one above it does not."""
    def floor(collective, n, bus):
        return 1.0 if n == 256 else 0.0  # 1 s at n = 256: every prediction is under it

    floor.source = "a planted bound"
    pred = _models(tmp_path, "floor", ring, floor)["predictions"]
    under = pred[pred.n == 256]
    assert len(under) > 0 and (under.floor_us == 1e6).all()
    assert under.label.str.endswith("under the least time the hardware allows, 1e+06 us "
                                    "(a planted bound)").all(), under.label
    assert not pred[pred.n == 64].label.str.contains("least time").any()


def test_planted_ring_is_recovered_and_predicts_held_out_n(tmp_path):
    out = _models(tmp_path, "ring", ring)
    m = out["models"]
    psum = m[m.workload == "psum"]
    assert len(psum) == 2 and set(psum.n_values) == {"2,4,8,16"}  # pmap and shard_map
    assert (psum.family == "alpha linear, 1/beta none").all(), psum
    # times are the max over processes of per-iteration noise: a few % above the plant
    assert np.allclose(psum.a1_us, A1 * 1e6, rtol=0.1), psum
    assert np.allclose(1 / psum.c0_ns_per_B, BETA / 1e9, rtol=0.1), psum  # ns/B -> GB/s
    held = out["heldout"]
    assert set(held.n) == {16} and set(held.fitted_on_n) == {"2,4,8"}
    assert (held.error.abs() < 0.05).all(), held
    assert held.within_interval.mean() >= 0.5, held
    pred = out["predictions"]
    at = pred[(pred.workload == "psum") & (pred.n == 256) & (pred["size"] == 1 << 20)]
    per_device = (1 << 20) * 4 // 2  # psum's size: float32 elements per process, 2 devices
    truth = (A0 + A1 * 255 + per_device * bus_factor("all_reduce", 256) / BETA) * 1e6
    # 16x beyond the largest n measured; the max over more processes of the records'
    # per-iteration noise (1 + 0.02|N|) grows slowly with n and tilts the slope (~ +5%)
    assert len(at) == 2 and np.allclose(at.predicted_us, truth, rtol=0.08), (at, truth)
    assert ((at.lo_us < truth) & (truth < at.hi_us)).all(), (at, truth)
    assert at.label.str.startswith("model output").all()


def test_tree_and_ring_are_told_apart(tmp_path):
    out = _models(tmp_path, "tree", tree)
    psum = out["models"][out["models"].workload == "psum"]
    assert len(psum) > 0 and (psum.family == "alpha log2, 1/beta log2").all(), psum
    held = out["heldout"]
    assert len(held) > 0 and (held.error.abs() < 0.05).all(), held


def test_fit_on_exact_points():
    n = np.repeat([2.0, 4, 8, 16], 3)
    bus = np.tile([1e3, 1e5, 1e7], 4)
    t = 5e-6 + 1e-6 * np.log2(n) + bus / 1e10
    m = fit(n, bus, t)
    assert m["family"] == ("log2", "none") and m["rel_rmse"] < 1e-6
    assert np.allclose(m["coef"], [5e-6, 1e-6, 1e-10, 0], atol=1e-12)


def test_one_job_gives_the_curve_and_a_held_out_error(tmp_path):
    """A real run, one launch of 4 hosts x 4 devices: all_reduce in groups of 2 and 4
    (strided, so across hosts), 8 and 16 — n = 2, 4, 8, 16 across hosts from one job; the
    model fits 2, 4 and 8 and predicts the measured 16; the report shows both. The same
    sweep without 16 predicts beyond what ran (3 n); without 8 as well, nothing (2 n),
    and says what to run instead."""
    from podscale.analysis.render.report import write_report
    from tests.conftest import only_run, podscale

    res = podscale("run", "all_reduce", "--hosts", "4", "--devices-per-host", "4",
                   "--sizes", "4KiB,64KiB", "--group-sizes", "2:strided,4:strided,8,all",
                   "--rounds", "1", "--iters", "5", "--warmup", "1", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    run = only_run(tmp_path)
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    summary = Summary(summarize(samples, cases), loaded.params)
    table = summary.frame
    assert set(table.hosts_per_group) == {2, 4} and set(table.participants) == {2, 4, 8, 16}
    out = scaling_models(samples, summary, draws=100)
    (m,) = out["models"].itertuples()
    assert m.regime == "across hosts" and m.n_values == "2,4,8,16" and m.predicts
    held = out["heldout"]
    assert set(held.n) == {16} and len(held) == 2 and held.error.notna().all()
    assert (held.measured_us > 0).all() and np.isfinite(held.error).all()
    assert len(out["predictions"]) == 4 and out["notes"].empty
    three = scaling_models(samples, summary.of(table[table.participants < 16]), draws=100)
    assert three["heldout"].empty and len(three["predictions"]) == 4
    assert set(three["predictions"].label) == {
        "model output (measured n: 2,4,8; 8x the largest)",
        "model output (measured n: 2,4,8; 32x the largest)"}
    two = scaling_models(samples, summary.of(table[table.participants < 8]), draws=100)
    assert two["predictions"].empty and two["curves"].empty and two["heldout"].empty
    (note,) = two["notes"].itertuples()
    assert note.n_values == "2,4" and note.instead == (
        "add a third participant count, e.g. n = 8 (more hosts: --hosts)")
    _, md = write_report(run)
    text = md.read_text()
    assert "Scaling with participants" in text and "held-out: " in text
    assert "of 2 inside their 95% intervals (n=16 predicted from the smaller n" in text
