"""bench-self's pieces work (figures and targets are for `podscale bench-self`, not tests)."""

import pytest

from podscale.selfbench.baseline import harness_overhead, run_minimal
from podscale.selfbench.stages import scale
from podscale.startup.peaks import llc_bytes


def test_minimal_script_runs_on_two_processes():
    r = run_minimal(2, 2, "psum", 4096, iters=7, warmup=1)
    assert len(r["seconds"]) == 7 and r["wall_s"] > max(r["seconds"])


@pytest.mark.alone
def test_harness_overhead_sees_a_planted_slowdown(tmp_path, monkeypatch):
    """podscale's psum steps each made 20 ms slower (the script's are not): its ratio
    shows it, dot's does not. (Unfaulted, 4 KiB psum on 2 x 2 here takes 3-4 ms, and a
    stretch factor is not seen in full: the stretch's sleep frees a core for the psum.
    dot's ratio is 1 to 1.8 on a quiet machine; a 4 KiB dot takes tens of µs, so under
    the suite's load one round has read 3.1: it is held against psum's, not a constant;
    psum's own has read 2.5, alone on the machine.)"""
    monkeypatch.setenv("PODSCALE_FAULT", "slow=0.02@*:psum")
    r = harness_overhead(tmp_path, rounds=1, iters=10, warmup=2)
    assert r["psum"]["ratio"]["median"] > 2, r  # (20 ms planted on a 3-10 ms step)
    assert r["dot"]["ratio"]["median"] * 2 < r["psum"]["ratio"]["median"], r
    assert r["layout"] == "h2xd2" and r["psum"]["ratio"]["n"] == 1


def test_llc_is_read_from_sysfs(tmp_path):
    for i, (level, size) in enumerate([(1, "48K"), (2, "1024K"), (3, "30M"), (1, "32K")]):
        (tmp_path / f"index{i}").mkdir()
        (tmp_path / f"index{i}" / "level").write_text(f"{level}\n")
        (tmp_path / f"index{i}" / "size").write_text(f"{size}\n")
    assert llc_bytes(root=tmp_path) == 30 << 20
    assert llc_bytes(7, root=tmp_path / "none") == 7


def test_scale_smoke(tmp_path):
    r = scale(tmp_path, counts=(1, 2))
    assert r["largest"] == 2 and r["stopped"] == "reached 2 processes"
    assert [row["processes"] for row in r["curve"]] == [1, 2]


def test_asv_split_output_is_counted():
    """Rows per section of asv's --split comparison (an excerpt of real output)."""
    from podscale.selfbench.asvstage import counts, ratios

    out = """
Benchmarks that have improved:

| Change   | Before [c697c426] <main~1>   | After [65ce3a97] <main>   |   Ratio | Benchmark (Parameter)                                  |
|----------|------------------------------|---------------------------|---------|--------------------------------------------------------|
| -        | 4.16±0ms                     | 3.69±0ms                  |    0.89 | benchmarks.TimePsum.time_psum(1048576, 1, 'shard_map') |

Benchmarks that have stayed the same:

| Change   | Before [c697c426] <main~1>   | After [65ce3a97] <main>   |   Ratio | Benchmark (Parameter)                                  |
|----------|------------------------------|---------------------------|---------|--------------------------------------------------------|
|          | 4.33±0ms                     | 4.26±0ms                  |    0.98 | benchmarks.TimePsum.time_psum(1048576, 1, 'pmap')      |
|          | 149±0μs                      | 157±0μs                   |   ~1.16 | benchmarks.TimePsum.time_psum(4096, 1, 'shard_map')    |

Benchmarks that have got worse:

| Change   | Before [c697c426] <main~1>   | After [65ce3a97] <main>   |   Ratio | Benchmark (Parameter)                                  |
|----------|------------------------------|---------------------------|---------|--------------------------------------------------------|
| +        | 2.31±0ms                     | 2.63±0ms                  |    1.14 | benchmarks.TimePsum.time_psum(1048576, 2, 'pmap')      |
| +        | 1.31                         | 1.63                      |    1.24 | benchmarks.TrackCollectives.track_busbw('ppermute')    |
"""  # noqa: E501
    assert counts(out) == {"improved": 1, "same": 2, "worse": 2, "incomparable": 0}
    assert counts(out, "track_") == {"improved": 0, "same": 0, "worse": 1, "incomparable": 0}
    assert counts(out, "time_", True, "psum") == {"improved": 1, "same": 2, "worse": 1,
                                                 "incomparable": 0}
    assert counts(out, "track_", False, "psum")["worse"] == 1
    r = ratios(out)
    assert r["benchmarks.TimePsum.time_psum(4096, 1, 'shard_map')"] == 1.16 and len(r) == 5
