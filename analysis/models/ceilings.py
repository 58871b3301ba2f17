"""Is my number normal? The ceiling each row is measured against, and its % of it.

Accelerators: the peaks the workers read from the device (on TPU, HBM bandwidth, bf16
FLOP/s and on-chip memory from ``get_tpu_info()``: :mod:`podscale.startup.peaks`), else
documented peaks per device kind (:mod:`podscale.analysis.models.peaks`, each row with
its source), selected by the ``device_kind`` the workers recorded. Rows that compute are
held against the bf16 FLOP peak (``pct_flops``); on CPU, against the best ``matmul`` of
the run (per device). Collectives over more than one participant (busbw, nccl-tests'
convention): on TPU against what the torus allows on the axes the group spans (rings
both ways where an axis wraps, one way where not, the bisection for all_to_all:
:mod:`podscale.analysis.models.torus`, naming the link figure and its source), between
slices against the DCN; on GPUs against NVLink one way per chip. Local workloads against
HBM bandwidth per device.

CPU (and any kind without a row): ceilings measured in the same run — ``stream`` (read)
for local workloads, on the same layout where the run has it, and the best algbw of a
point-to-point transfer between processes (``pairs`` or ``ppermute`` on 2+ hosts) for
collectives. Without such cases the ceiling is N/A, and the report says what to add.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from podscale.analysis.models import torus
from podscale.analysis.models.peaks import Peak, onchip_bytes, peak_for, peak_of, read_peaks  # noqa: F401 - peak_for: re-exported

LOOPBACK = ("pairs", "ppermute")


def _across(rows: pd.DataFrame) -> pd.Series:
    """Whether each case's groups span processes (hosts)."""
    if "hosts_per_group" in rows.columns:
        return rows["hosts_per_group"].fillna(1) > 1
    return rows["hosts"] > 1


def _measured(summary: pd.DataFrame) -> tuple[dict, float | None, str]:
    stream = summary[(summary.workload == "stream")]
    if "op" in stream.columns:
        stream = stream[stream["op"].astype(str) == "read"]
    per_layout = stream.groupby(["hosts", "devices_per_host"])["gbps"].max().to_dict()
    loop = summary[summary.workload.isin(LOOPBACK) & _across(summary)]
    best = float(loop["algbw"].max()) if len(loop) and loop["algbw"].notna().any() else None
    where = f"{loop.loc[loop['algbw'].idxmax(), 'workload']} in this run" if best else ""
    return per_layout, best, where


def _stream(r: Any, stream: dict) -> tuple[float, str]:
    same = stream.get((r.hosts, r.devices_per_host))
    best = same if same is not None else (max(stream.values()) if stream else None)
    if not best:
        return np.nan, "N/A: add stream (--sizes >= 4x LLC) to the run"
    return best, f"stream read, {'same' if same is not None else 'other'} layout, this run"


def ici(gen: torus.Generation, collective: str, n: int,
        shape: tuple[int, ...] | None) -> tuple[float, str]:
    """(busbw ceiling, what it is) of a collective over n chips of a slice of ``shape``
    (the workers' devices' coordinates; unknown: the group taken as one line of n)."""
    axes = torus.span(gen, shape or (n,), n)
    value, how = torus.bound(gen, collective, axes)
    others = "; ".join(f"{f.source}: {f.value:g}" for f in gen.link[1:])
    return value, f"{gen.name} ICI, {how}: {gen.w:g} GB/s a link one way " \
        f"({gen.link[0].source}{'; ' + others if others else ''})" + (
            "" if shape else "; slice shape not recorded: the group taken as one line")


def _ceiling(r: Any, peak: Peak | None, stream: dict, loop: float | None,
             loop_where: str, shape: tuple[int, ...] | None = None
             ) -> tuple[float, str, float]:
    """(ceiling GB/s, what it is, the figure held against it) for one summary row."""
    if isinstance(r.collective, str) and r.participants <= 1:
        return np.nan, "N/A: one participant (nothing crosses a link)", np.nan
    collective = isinstance(r.collective, str)
    across = getattr(r, "hosts_per_group", 1) > 1 if collective else False
    gen = torus.generation(peak.name) if peak is not None else None
    if peak is not None and collective and crosses_dcn(r):  # between slices: the DCN
        if gen is not None:
            dcn = gen.dcn_host_gbps
            return dcn.value / gen.chips_per_host, f"{gen.name} DCN per chip: " \
                f"{dcn.value:g} GB/s a host of {gen.chips_per_host} chips ({dcn.source})", \
                r.busbw
        if peak.dcn_chip_gbps:
            return peak.dcn_chip_gbps, f"{peak.name} DCN per chip ({peak.source})", r.busbw
        return np.nan, f"N/A: no documented DCN figure for {peak.name}", r.busbw
    measured_loop = (loop, f"loopback transfer between processes, best algbw of "
                           f"{loop_where}") if loop else (
        np.nan, "N/A: add pairs or ppermute across hosts to the run")
    if peak is not None:
        if not collective:
            return peak.hbm_gbps, f"{peak.name} HBM ({peak.source})", \
                r.gbps / r.devices_per_host
        if across and not peak.name.startswith("TPU"):  # NVLink stays inside a host
            value, label = measured_loop
            return value, label.replace("loopback transfer", "transfer"), r.busbw
        if gen is not None:
            return (*ici(gen, r.collective, int(r.participants), shape), r.busbw)
        return peak.link_one_way_gbps, f"{peak.name} interconnect per chip, one way " \
                                       f"({peak.source})", r.busbw
    if collective and across:
        return (*measured_loop, r.busbw)
    value, label = _stream(r, stream)
    if collective:  # inside one process a collective is memory traffic
        label = f"{label}: a collective inside one process moves memory"
    return value, label, r.busbw if collective else r.gbps


def least_time(device_kind: str | None) -> Callable[[str, int, float], float] | None:
    """On TPU, the least time (s) of a collective over n chips putting ``bus`` bytes on
    the bus, the group laid over the generation's pod torus (what model output beyond
    the run is held against); None elsewhere. Its ``source`` names what bounds it."""
    gen = torus.generation(device_kind)
    if gen is None:
        return None

    def floor(collective: str, n: int, bus: float) -> float:
        return torus.time_bound(gen, collective, torus.span(gen, gen.pod, n), bus)

    floor.source = (f"{gen.name} {'x'.join(map(str, gen.pod))} torus, "  # type: ignore
                    f"{gen.w:g} GB/s a link ({gen.link[0].source})")
    return floor


def crosses_dcn(r: Any) -> bool:
    """Whether a summary row's collective crosses slices: a layout of several, over
    ``dcn`` or every axis."""
    axes = getattr(r, "axes", "all")
    if getattr(r, "slices", 1) in (None, 1) or getattr(r, "slices", 1) != \
            getattr(r, "slices", 1):
        return False
    return not isinstance(axes, str) or axes == "all" or "dcn" in axes.split("+")


def with_half_peak(fitted: pd.DataFrame, peak: Peak | None) -> pd.DataFrame:
    """The fits plus ``n_half_peak_bytes``: the size at which each sweep's fitted bandwidth
    reaches half of the device's peak in its basis (busbw: a link one way; bytes per
    process: HBM times the devices per process); NaN without a peak."""
    from podscale.analysis.models.fits import half_peak_bytes

    out = fitted.copy()
    if peak is None or out.empty:
        out["n_half_peak_bytes"] = np.nan
        return out
    ref = [peak.link_one_way_gbps if basis == "busbw" else peak.hbm_gbps * dph
           for basis, dph in zip(out["basis"], out["devices_per_host"])]
    out["n_half_peak_bytes"] = [half_peak_bytes(a, b, p) for a, b, p in
                                zip(out["alpha_us"], out["beta_gbps"], ref)]
    return out


def under_onchip(summary: pd.DataFrame) -> pd.DataFrame:
    """The stream rows (of :func:`with_ceilings`) whose buffer per device (per process,
    where the on-chip memory is the CPU's shared last-level cache) is under 4x the
    device's on-chip memory: a cache's figure, not HBM's or DRAM's."""
    need = {"onchip_bytes", "onchip_shared", "size", "devices_per_host", "dtype"}
    if not need <= set(summary.columns) or summary["onchip_bytes"].isna().all():
        return summary.iloc[0:0]
    from podscale.core.case import DTYPES

    rows = summary[summary["workload"] == "stream"]
    per = rows["size"] * rows["dtype"].map(DTYPES) / rows["devices_per_host"].where(
        ~rows["onchip_shared"].astype(bool), 1)
    return rows[per < 4 * rows["onchip_bytes"]]


def _flops(out: pd.DataFrame, peak: Peak | None) -> tuple[np.ndarray, np.ndarray]:
    """(the FLOP/s ceiling per device in GFLOP/s, per row; what it is, per row): the chip's
    int8 peak for int8 rows and its bf16 peak for the others, or on CPU the best matmul of
    the run per device (same dtype where the run has it)."""
    if peak is not None and peak.bf16_tflops:
        int8 = (out["dtype"] == "int8").to_numpy()
        i8 = peak.int8_tops * 1e3 if peak.int8_tops else np.nan
        return np.where(int8, i8, peak.bf16_tflops * 1e3), np.where(
            int8, f"{peak.name} int8 peak ({peak.source})" if peak.int8_tops else
            f"N/A: no int8 peak known for {peak.name}",
            f"{peak.name} bf16 peak ({peak.source})")
    mm = out[out["workload"] == "matmul"]
    if mm.empty:
        return np.full(len(out), np.nan), np.full(len(out), "N/A: add matmul to the run")
    per = mm["gflops"] / mm["devices_per_host"]
    by_dtype = per.groupby(mm["dtype"]).max()
    best = float(per.max())
    return np.array([by_dtype.get(d, best) for d in out["dtype"]], float), \
        np.full(len(out), "matmul, best of this run per device (same dtype)")


def with_ceilings(summary: pd.DataFrame, device_kind: str | None,
                  envs: pd.DataFrame | None = None) -> pd.DataFrame:
    """``summary`` plus ``ceiling_gbps``, ``ceiling`` (what it is) and ``pct_ceiling``:
    busbw for collectives over 2+ participants, GB/s per device otherwise. Collectives
    whose groups span hosts are held against the links between hosts (TPU ICI, or a
    transfer between processes measured in the run); groups inside a host against the
    chip's interconnect (NVLink, ICI) or, on CPU, memory (stream). Rows that compute get
    ``flops_ceiling_gflops``, ``flops_ceiling`` and ``pct_flops`` (per device).
    ``envs``: the run's environments, whose read peaks replace the documented ones."""
    out = summary.copy()
    peak = peak_of(device_kind, envs)
    stream, loop, loop_where = _measured(summary)
    shape = read_peaks(envs).get("slice_shape")
    shape = tuple(int(d) for d in shape if int(d) > 1) if shape else None
    rows = [_ceiling(r, peak, stream, loop, loop_where, shape) for r in out.itertuples()]
    out["ceiling_gbps"] = [v for v, _, _ in rows]
    out["ceiling"] = [label for _, label, _ in rows]
    measured = np.asarray([m for _, _, m in rows], float)
    out["pct_ceiling"] = 100 * measured / out["ceiling_gbps"].to_numpy(float)
    out["onchip_bytes"] = onchip_bytes(device_kind, envs)
    # a CPU's last-level cache is shared by its devices; a chip's VMEM is its own
    out["onchip_shared"] = bool(read_peaks(envs).get("onchip_shared"))
    if "flops_per_process" not in out or "gflops" not in out:
        return out
    flops, label = _flops(out, peak)
    computes = (out["flops_per_process"] > 0).to_numpy()
    out["flops_ceiling_gflops"] = np.where(computes, flops, np.nan)
    out["flops_ceiling"] = np.where(computes, label, "")
    out["pct_flops"] = 100 * out["gflops"] / out["devices_per_host"] / \
        out["flops_ceiling_gflops"]
    return out
