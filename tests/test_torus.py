"""Ceilings that know the torus: published figures reproduced from each generation's torus
and link figures (within 10%), where axes wrap, the bound each collective has on the axes
it runs over, the ceiling a TPU run is held against, and ``podscale ceilings``."""

import numpy as np
import pandas as pd
import pytest

from podscale.analysis.models import torus
from podscale.analysis.models.ceilings import least_time, with_ceilings
from tests.conftest import podscale

V5E, V6E, V4 = (torus.generation(k) for k in ("v5e", "v6e", "v4"))
BOOK_LINK = 45.0  # the scaling book's v5e link, one way (GB/s)


@pytest.mark.parametrize("gen, allreduce, bisection, dcn", [
    # cloud.google.com/tpu/docs: all-reduce and bisection bandwidth per pod (TB/s), the
    # data-centre network per pod (Tb/s)
    (V5E, 51.2, 1.6, 6.4), (V6E, 102.4, 3.2, 25.6), (V4, 1100, 24, None)])
def test_published_pod_figures_are_reproduced(gen, allreduce, bisection, dcn):
    pod = torus.pod_figures(gen)
    assert pod["allreduce_gbps"] / 1e3 == pytest.approx(allreduce, rel=0.1)
    assert pod["bisection_gbps"] / 1e3 == pytest.approx(bisection, rel=0.1)
    if dcn:
        assert pod["dcn_gbps"] * 8 / 1e3 == pytest.approx(dcn, rel=0.1)


def test_the_scaling_books_v5e_all_gathers_are_reproduced():
    """jax-ml.github.io/scaling-book/sharding, pop quiz 2: AllGather over Y of a v5e
    {X: 8, Y: 4} mesh, bf16[2048, 8192] (8 MiB a shard): no wraparound on 4, so ~560 us
    at 45 GB/s; on an axis of 16 that wraps, V / W_bidi = 377 us; 32 KiB shards are
    latency bound (3 hops of ~1 us); on a wrapped axis, ~95% of the link from ~10 MB."""
    y4 = torus.over(V5E, (8, 4), "y")
    assert y4 == [(4, False)]
    (_, _, book), = [r for r in torus.collective_time(V5E, "all_gather", y4, 8 << 20)
                     if r[0].value == BOOK_LINK]
    assert book * 1e6 == pytest.approx(560, rel=0.1)
    x16 = torus.over(V5E, (16, 16), "x")
    assert x16 == [(16, True)]
    t16 = torus.time_bound(V5E, "all_gather", x16, (32 << 20) * 15 / 16, BOOK_LINK)
    assert t16 * 1e6 == pytest.approx(377, rel=0.1)
    assert torus.hops(y4) == 3 and V5E.hop_us.value == 1.0
    small = torus.time_bound(V5E, "all_gather", y4, 4 * (32 << 10) * 3 / 4, BOOK_LINK)
    assert small * 1e6 < 8  # the book measured ~8 us: the model's floor is below it
    shard = 10e6
    bus = 16 * shard * 15 / 16
    reach = bus / (torus.bound(V5E, "all_gather", x16, BOOK_LINK)[0] * 1e9) / \
        torus.time_bound(V5E, "all_gather", x16, bus, BOOK_LINK)
    assert reach == pytest.approx(0.95, rel=0.1)


def test_where_axes_wrap():
    assert torus.wraps(V5E, (8, 16)) == (False, True)  # the book: v5e 8x16 wraps on 16
    assert torus.wraps(V5E, (4, 4)) == (False, False)
    assert torus.wraps(V4, (2, 2, 4)) == (False, False, False)  # below a cube: none
    assert torus.wraps(V4, (4, 4, 8)) == (True, True, True)
    assert torus.span(V5E, (16, 16), 64) == [(16, True), (4, False)]
    assert torus.span(V5E, (16, 16), 256) == [(16, True), (16, True)]


def test_each_collective_has_its_bound():
    line, ring = [(4, False)], [(16, True)]
    w = V5E.w
    assert torus.bound(V5E, "all_gather", line)[0] == w
    assert torus.bound(V5E, "all_reduce", ring)[0] == 2 * w
    assert torus.bound(V5E, "all_gather", [(16, True), (16, True)])[0] == 4 * w  # 2-D
    assert torus.bound(V5E, "sendrecv", ring)[0] == w
    # two chips: each sends half its buffer over the one link: busbw = the link
    assert torus.bound(V5E, "all_to_all", [(2, False)])[0] == pytest.approx(w)
    assert torus.bound(V5E, "all_to_all", ring)[0] == pytest.approx(8 * w * 15 / 256)
    assert np.isnan(torus.bound(V5E, "all_gather", [])[0])


def test_a_tpu_run_is_held_against_its_slices_torus():
    """A v5e run whose workers recorded a 16x16 slice: a group of 16 runs both ways on a
    wrapped axis (2 links), a group of 4 one way on a line; the label names the figure,
    its source and the other source's."""
    rows = [{"workload": "all_gather", "collective": "all_gather", "participants": n,
             "hosts": 32, "devices_per_host": 8, "hosts_per_group": 2, "busbw": 40.0,
             "gbps": np.nan, "size": 1 << 20} for n in (4, 16)]
    envs = pd.DataFrame([{"process": 0, "extra": {"peaks": {"slice_shape": [16, 16]}}}])
    out = with_ceilings(pd.DataFrame(rows), "TPU v5 lite", envs).set_index("participants")
    assert out.loc[16, "ceiling_gbps"] == 100 and out.loc[4, "ceiling_gbps"] == 50
    assert "a ring both ways on 16 (wraps)" in out.loc[16, "ceiling"]
    assert "cloud.google.com/tpu/docs/v5e" in out.loc[4, "ceiling"]
    assert "the scaling book" in out.loc[4, "ceiling"] and "one line" not in out.loc[4,
                                                                                 "ceiling"]
    floor = least_time("TPU v5 lite")
    assert floor("all_gather", 256, 1e9) > 1e9 / 200e9 and "16x16 torus" in floor.source
    assert least_time("cpu") is None


def test_tpu7x_is_a_slice_type():
    from podscale.launch.jobset import tpu_slice

    s = tpu_slice("tpu7x-128")
    assert (s.chips, s.topology, s.hosts, s.accelerator) == (64, "4x4x4", 16, "tpu7x")


def test_the_ceilings_command():
    res = podscale("ceilings", "v5litepod-32", "--collective", "all_gather", "--over", "y",
                   "--shard", "8MiB")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "slice 4x8 (32 chip(s)): x 4, y 8" in out
    assert "a pod of 256 chips: all-reduce 51.2 TB/s, bisection 1.6 TB/s" in out
    assert "at 45 GB/s a link (the scaling book" in out and "busbw ceiling 50 GB/s" in out
    for bad, said in ((["v9"], "unknown TPU 'v9'"),
                      (["v5e", "--topology", "4x4x4"], "a TPU v5e slice is 2-D"),
                      (["v5e", "--collective", "all_gather", "--over", "q"], "--over: axes"),
                      ([], "no TPU here")):
        res = podscale("ceilings", *bad)
        assert res.returncode == 2 and said in res.stderr and not res.stdout, res.stderr
