"""Is my number normal? The ceiling each row is measured against, and its % of it.

Accelerators: the peaks the workers read from the device (on TPU, HBM bandwidth, bf16
FLOP/s and on-chip memory from ``get_tpu_info()``: :mod:`podscale.startup.peaks`), else
documented peaks per device kind (one table, each row with its source), selected by the
``device_kind`` the workers recorded. Rows that compute are held against the bf16 FLOP
peak (``pct_flops``); on CPU, against the best ``matmul`` of the run (per device).
Collectives over more than one participant are held against the chip's interconnect
bandwidth in one direction (busbw, nccl-tests' convention, is comparable with a link's
unidirectional peak; the per-chip figure is the sum over the chip's links, so a ring over
one mesh axis, which uses two of them, reaches a fraction of it); local workloads against
HBM bandwidth per device.

CPU (and any kind without a row): ceilings measured in the same run — ``stream`` (read)
for local workloads, on the same layout where the run has it, and the best algbw of a
point-to-point transfer between processes (``pairs`` or ``ppermute`` on 2+ hosts) for
collectives. Without such cases the ceiling is N/A, and the report says what to add.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Peak:
    """Documented peak figures of one device kind (GB/s; ICI/NVLink bidirectional)."""

    name: str
    pattern: str  # regex matched against jax's device_kind
    link_chip_bidir_gbps: float  # ICI (TPU) or NVLink (GPU), summed over the chip's links
    links: int | None
    hbm_gbps: float
    dcn_chip_gbps: float | None
    source: str
    bf16_tflops: float | None = None  # dense bf16 (TPU MXU, GPU tensor cores)
    onchip_bytes: int | None = None  # what a bandwidth buffer must exceed (VMEM, L2)
    int8_tops: float | None = None  # dense int8 (int32 accumulation)

    @property
    def link_one_way_gbps(self) -> float:
        return self.link_chip_bidir_gbps / 2


PEAKS: tuple[Peak, ...] = (
    # TPU v4: 6 ICI links of 400 Gb/s each way (Jouppi et al., "TPU v4: An Optically
    # Reconfigurable Supercomputer...", ISCA 2023); HBM 1200 GB/s
    # (https://cloud.google.com/tpu/docs/v4)
    Peak("TPU v4", r"TPU v4", 600.0, 6, 1200.0, None,
         "cloud.google.com/tpu/docs/v4; TPU v4 paper (ISCA 2023)", 275.0, int8_tops=275.0),
    # TPU v5e: ICI 400 GB/s bidirectional per chip, 4 ports; HBM 819 GB/s; 2 x 100 Gbps
    # NICs per 8-chip host (https://cloud.google.com/tpu/docs/v5e)
    Peak("TPU v5e", r"TPU v5 ?lite|TPU v5e", 400.0, 4, 819.0, 200 / 8 / 8,
         "cloud.google.com/tpu/docs/v5e", 197.0, 128 << 20, 394.0),
    # TPU v5p: ICI 1200 GB/s bidirectional per chip (3D torus: 6 links); HBM 2765 GB/s;
    # DCN 50 Gbps per chip (https://cloud.google.com/tpu/docs/v5p)
    Peak("TPU v5p", r"TPU v5p|TPU v5$", 1200.0, 6, 2765.0, 50 / 8,
         "cloud.google.com/tpu/docs/v5p", 459.0, int8_tops=918.0),
    # TPU v6e (Trillium): ICI 800 GB/s bidirectional per chip, 4 ports; HBM 1638 GB/s;
    # DCN 100 Gbps per chip (https://cloud.google.com/tpu/docs/v6e)
    Peak("TPU v6e", r"TPU v6 ?lite|TPU v6e|Trillium", 800.0, 4, 1638.0, 100 / 8,
         "cloud.google.com/tpu/docs/v6e", 918.0, int8_tops=1836.0),
    # TPU7x (Ironwood): ICI 1200 GB/s bidirectional per chip; HBM 7380 GB/s; DCN 100 Gb/s
    # per chip (https://cloud.google.com/tpu/docs/tpu7x); link count not documented there
    Peak("TPU7x", r"TPU ?7x|Ironwood", 1200.0, None, 7380.0, 100 / 8,
         "cloud.google.com/tpu/docs/tpu7x", 2307.0),
    # A100 SXM4: NVLink 3, 12 links, 600 GB/s bidirectional; HBM2e 2039 GB/s (80 GB)
    # or 1555 GB/s (40 GB) (https://www.nvidia.com/en-us/data-center/a100/)
    Peak("A100 80GB", r"A100.*80GB", 600.0, 12, 2039.0, None, "nvidia.com A100 datasheet",
         312.0, int8_tops=624.0),
    Peak("A100", r"A100", 600.0, 12, 1555.0, None, "nvidia.com A100 datasheet", 312.0,
         int8_tops=624.0),
    # H100 SXM5: NVLink 4, 18 links, 900 GB/s bidirectional; HBM3 3.35 TB/s
    # (https://www.nvidia.com/en-us/data-center/h100/); H100 PCIe is not this row
    Peak("H100 SXM", r"H100(?!.*PCIe)", 900.0, 18, 3350.0, None, "nvidia.com H100 datasheet",
         989.0, int8_tops=1979.0),
    # H200 SXM: NVLink 900 GB/s bidirectional (18 links); HBM3e 4.8 TB/s
    # (https://www.nvidia.com/en-us/data-center/h200/)
    Peak("H200", r"H200", 900.0, 18, 4800.0, None, "nvidia.com H200 datasheet", 989.0,
         int8_tops=1979.0),
)
LOOPBACK = ("pairs", "ppermute")


def peak_for(device_kind: str | None) -> Peak | None:
    """The documented row for a device kind (first match), or None (CPU, unknown)."""
    for p in PEAKS:
        if device_kind and re.search(p.pattern, device_kind, re.IGNORECASE):
            return p
    return None


def read_peaks(envs: pd.DataFrame | None) -> dict:
    """What the workers read from their device (:mod:`podscale.startup.peaks`): process 0's
    ``extra["peaks"]``, or {}."""
    if envs is None or envs.empty or "extra" not in envs.columns:
        return {}
    for extra in envs.sort_values("process")["extra"]:
        if isinstance(extra, dict) and isinstance(extra.get("peaks"), dict):
            return extra["peaks"]
    return {}


def peak_of(device_kind: str | None, envs: pd.DataFrame | None = None) -> Peak | None:
    """The peaks a run is held against: the documented row, with HBM bandwidth, bf16 FLOP/s
    and on-chip memory replaced by what the device reported where it did (the source
    names both); None where neither knows the kind (CPU)."""
    doc, read = peak_for(device_kind), read_peaks(envs)
    if not read.get("hbm_gbps"):
        return doc
    return Peak(doc.name if doc else str(device_kind), doc.pattern if doc else "",
                doc.link_chip_bidir_gbps if doc else float("nan"), doc.links if doc else None,
                float(read["hbm_gbps"]), doc.dcn_chip_gbps if doc else None,
                f"HBM, FLOP/s and on-chip memory {read.get('source')}"
                + (f"; links {doc.source}" if doc else ""),
                read.get("bf16_tflops"), read.get("onchip_bytes"),
                read.get("int8_tops") or (doc.int8_tops if doc else None))


def onchip_bytes(device_kind: str | None, envs: pd.DataFrame | None = None) -> int | None:
    """The on-chip memory a bandwidth buffer must exceed (4x, to measure HBM or DRAM):
    read from the device or host, else documented."""
    read = read_peaks(envs).get("onchip_bytes")
    if read:
        return int(read)
    peak = peak_for(device_kind)
    return peak.onchip_bytes if peak else None


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


def _ceiling(r: Any, peak: Peak | None, stream: dict, loop: float | None,
             loop_where: str) -> tuple[float, str, float]:
    """(ceiling GB/s, what it is, the figure held against it) for one summary row."""
    if isinstance(r.collective, str) and r.participants <= 1:
        return np.nan, "N/A: one participant (nothing crosses a link)", np.nan
    collective = isinstance(r.collective, str)
    across = getattr(r, "hosts_per_group", 1) > 1 if collective else False
    if peak is not None and collective and crosses_dcn(r):  # between slices: the DCN
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
        return peak.link_one_way_gbps, f"{peak.name} interconnect per chip, one way " \
                                       f"({peak.source})", r.busbw
    if collective and across:
        return (*measured_loop, r.busbw)
    value, label = _stream(r, stream)
    if collective:  # inside one process a collective is memory traffic
        label = f"{label}: a collective inside one process moves memory"
    return value, label, r.busbw if collective else r.gbps


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
    rows = [_ceiling(r, peak, stream, loop, loop_where) for r in out.itertuples()]
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
