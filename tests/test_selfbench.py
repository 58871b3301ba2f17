"""bench-self's pieces work (figures and targets are for `podscale bench-self`, not tests)."""

from podscale.frontend.selfbench import harness_overhead, scale


def test_harness_overhead_smoke():
    r = harness_overhead(rounds=2, iters=20)
    assert r["bare_us"] > 0 and r["podscale_us"] > 0 and r["ratio"] > 0


def test_scale_smoke(tmp_path):
    r = scale(tmp_path, counts=(1, 2))
    assert r["largest"] == 2
    assert [row["processes"] for row in r["curve"]] == [1, 2]
    assert all(row["psum_us"] > 0 and row["startup_s"] > 0 for row in r["curve"])
