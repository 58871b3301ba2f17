"""Ceilings: documented peaks selected by device kind, measured ones on CPU (no JAX)."""

import numpy as np
import pandas as pd
import pytest

from podscale.analysis import load_run, summarize
from podscale.analysis.models.ceilings import peak_for, with_ceilings
from tests.synth import make_run


@pytest.mark.parametrize("kind, name", [
    ("TPU v4", "TPU v4"), ("TPU v5 lite", "TPU v5e"), ("TPU v5", "TPU v5p"),
    ("TPU v5p", "TPU v5p"), ("TPU v6 lite", "TPU v6e"), ("TPU7x", "TPU7x"),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB"), ("NVIDIA A100-SXM4-40GB", "A100"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H200", "H200"),
    ("NVIDIA H100 PCIe", None), ("cpu", None), (None, None)])
def test_peak_is_selected_by_device_kind(kind, name):
    peak = peak_for(kind)
    assert (peak.name if peak else None) == name
    if peak:
        assert peak.source and peak.link_one_way_gbps == peak.link_chip_bidir_gbps / 2


def test_percent_of_documented_ceiling(tmp_path):
    run = make_run(tmp_path / "tpu", platform="TPU v5 lite")
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    table = with_ceilings(summarize(samples, cases), "TPU v5 lite")
    coll = table[(table.workload == "psum") & (table.participants > 1)]
    assert len(coll) > 0  # .all() holds on an empty frame: the rows are counted first
    # no slice shape recorded: each group taken as one line of chips, a ring one way on it
    assert (coll.ceiling_gbps == 50.0).all() and coll.ceiling.str.contains("TPU v5e ICI").all()
    assert coll.ceiling.str.contains("the group taken as one line").all()
    assert np.allclose(coll.pct_ceiling, 100 * coll.busbw / 50.0)
    dot = table[table.workload == "dot"]
    assert len(dot) > 0 and (dot.ceiling_gbps == 819.0).all()
    assert np.allclose(dot.pct_ceiling, 100 * dot.gbps / dot.devices_per_host / 819.0)
    one = table[(table.workload == "psum") & (table.participants == 1)]
    assert len(one) > 0 and one.pct_ceiling.isna().all()  # one participant: no busbw


def _table():
    rows = [  # what a CPU run with stream and ppermute cases summarises to
        {"workload": "stream", "op": "read", "hosts": 1, "devices_per_host": 1, "gbps": 10.0},
        {"workload": "stream", "op": "copy", "hosts": 1, "devices_per_host": 1, "gbps": 4.0},
        {"workload": "stream", "op": "read", "hosts": 2, "devices_per_host": 1, "gbps": 8.0},
        {"workload": "dot", "hosts": 2, "devices_per_host": 1, "gbps": 2.0},
        {"workload": "dot", "hosts": 4, "devices_per_host": 1, "gbps": 1.0},
        {"workload": "ppermute", "hosts": 2, "devices_per_host": 1, "collective": "sendrecv",
         "participants": 2, "hosts_per_group": 2, "algbw": 3.0, "busbw": 3.0},
        {"workload": "ppermute", "hosts": 1, "devices_per_host": 2, "collective": "sendrecv",
         "participants": 2, "hosts_per_group": 1, "algbw": 9.0, "busbw": 9.0},
        {"workload": "all_reduce", "hosts": 2, "devices_per_host": 1,
         "collective": "all_reduce", "participants": 2, "hosts_per_group": 2, "algbw": 0.5,
         "busbw": 0.5},
        {"workload": "all_reduce", "hosts": 1, "devices_per_host": 2,
         "collective": "all_reduce", "participants": 2, "hosts_per_group": 1, "algbw": 2.5,
         "busbw": 2.5},
    ]
    table = pd.DataFrame(rows).reindex(columns=[
        "workload", "op", "hosts", "devices_per_host", "gbps", "collective", "participants",
        "hosts_per_group", "algbw", "busbw"])
    return table.fillna({"participants": 1, "hosts_per_group": 1})


def test_cpu_ceilings_are_measured_in_the_run():
    table = _table()
    out = with_ceilings(table, "cpu").set_index(["workload", "hosts"])
    assert out.loc[("dot", 2), "ceiling_gbps"] == 8.0  # stream read on the same layout
    assert "same layout" in out.loc[("dot", 2), "ceiling"]
    assert out.loc[("dot", 4), "ceiling_gbps"] == 10.0  # none there: the best elsewhere
    assert out.loc[("dot", 2), "pct_ceiling"] == pytest.approx(25.0)
    # across processes: the best transfer between processes (not the in-process ppermute)
    assert out.loc[("all_reduce", 2), "ceiling_gbps"] == 3.0
    assert out.loc[("all_reduce", 2), "pct_ceiling"] == pytest.approx(100 * 0.5 / 3.0)
    # inside one process: memory (stream on that layout, or the best elsewhere)
    assert out.loc[("all_reduce", 1), "ceiling_gbps"] == 10.0
    assert "inside one process" in out.loc[("all_reduce", 1), "ceiling"]
    bare = with_ceilings(table[table.workload == "dot"], "cpu")
    assert bare.pct_ceiling.isna().all() and bare.ceiling.str.startswith("N/A: add").all()


def test_gpu_collectives_across_hosts_are_not_held_against_nvlink():
    out = with_ceilings(_table(), "NVIDIA H100 80GB HBM3").set_index(["workload", "hosts"])
    assert out.loc[("all_reduce", 1), "ceiling_gbps"] == 450.0  # NVLink, one way
    assert out.loc[("all_reduce", 2), "ceiling_gbps"] == 3.0  # measured between hosts
    assert "NVLink" not in out.loc[("all_reduce", 2), "ceiling"]
    assert out.loc[("dot", 2), "ceiling_gbps"] == 3350.0


def test_collectives_across_slices_are_held_against_the_dcn():
    """On a multi-slice TPU v5p layout, a collective over dcn (or every axis) crosses the
    data-centre network: held against v5p's documented DCN per chip (50 Gbps); over ici,
    against the torus (a group of 8 as one line: one link one way); v4's DCN figure is
    the scaling book's ~25 GB/s a host of 4 chips, named."""
    from podscale.analysis.verdicts.findings import axis_findings

    rows = [{"workload": "all_reduce", "variant": "shard_map", "layout": "s2xh2xd4",
             "hosts": 4, "devices_per_host": 4, "slices": 2, "axes": axes, "size": size,
             "collective": "all_reduce", "participants": 8, "hosts_per_group": 2,
             "algbw": bw, "busbw": bw, "gbps": np.nan}
            for axes, bw in (("dcn", 5.0), ("ici", 250.0), ("all", 6.0))
            for size in (1 << 20, 1 << 24)]
    table = pd.DataFrame(rows)
    out = with_ceilings(table, "TPU v5p").set_index(["axes", "size"])
    assert out.loc[("dcn", 1 << 20), "ceiling_gbps"] == 50 / 8
    assert "DCN per chip" in out.loc[("all", 1 << 20), "ceiling"]
    assert out.loc[("ici", 1 << 20), "ceiling_gbps"] == 100.0  # a line of 8: one link one way
    assert out.loc[("dcn", 1 << 24), "pct_ceiling"] == pytest.approx(100 * 5.0 / 6.25)
    v4 = with_ceilings(table, "TPU v4").set_index(["axes", "size"])
    assert v4.loc[("dcn", 1 << 20), "ceiling_gbps"] == 25 / 4  # the scaling book's, a host
    assert "the scaling book" in v4.loc[("dcn", 1 << 20), "ceiling"]
    assert axis_findings(table) == [
        "all_reduce shard_map on s2xh2xd4: busbw across slices (dcn) is 0.02x that inside "
        "one (ici), median over 2 size(s): DCN is the data-centre network between slices, "
        "ICI the chips' own links"]
