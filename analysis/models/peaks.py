"""The peaks a device kind is held against: a documented table, each row with its source,
and the figures the workers read from their device (:mod:`podscale.startup.peaks`), which
replace the table's where read. TPU interconnects are :mod:`podscale.analysis.models.torus`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
