"""The peaks of the device a worker runs on, read from the device where JAX gives them.

On TPU, ``jax.experimental.pallas.tpu.get_tpu_info()`` (per TensorCore, times the
device's cores): HBM bandwidth, bf16 FLOP/s, int8 OP/s where it gives them, on-chip memory
(VMEM), and the torus of the job's chips (their coordinates' extent). Elsewhere only the
on-chip memory a bandwidth buffer must exceed: the CPU's last-level cache (Linux sysfs).
Analysis falls back to its documented table (:mod:`podscale.analysis.models.ceilings`)
for what is not read here, and names the source of each figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SOURCE_TPU = "read from the device: jax.experimental.pallas.tpu.get_tpu_info()"
SOURCE_LLC = "read from the host: the CPU's last-level cache (sysfs)"


def llc_bytes(default: int = 32 << 20,
              root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """The last-level cache of CPU 0 (Linux sysfs), or ``default``."""
    best = 0
    for index in root.glob("index*"):
        try:
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        size = int(text.rstrip("KMG")) * scale
        best = max(best, size) if level >= 2 else best
    return best or default


def from_tpu_info(info: Any) -> dict[str, Any]:
    """Peaks from a ``TpuInfo`` (its figures are per TensorCore: times ``num_cores``)."""
    cores = max(int(getattr(info, "num_cores", 1) or 1), 1)
    int8 = getattr(info, "int8_ops_per_second", 0) or 0  # 0: not given for this chip
    return {"hbm_gbps": info.mem_bw_bytes_per_second * cores / 1e9,
            "bf16_tflops": info.bf16_ops_per_second * cores / 1e12,
            "int8_tops": int8 * cores / 1e12 if int8 else None,
            "onchip_bytes": int(info.vmem_capacity_bytes) * cores,
            "chip": str(info.chip_version), "cores": cores, "source": SOURCE_TPU}


def slice_shape() -> list[int] | None:
    """The chips' torus this job runs on: the extent of every device's ``coords`` (TPU),
    or None where the devices give none."""
    import jax

    coords = [c for c in (getattr(d, "coords", None) for d in jax.devices()) if c]
    if not coords or len(coords) != len(jax.devices()):
        return None
    return [max(c[i] for c in coords) - min(c[i] for c in coords) + 1
            for i in range(len(coords[0]))]


def device_peaks() -> dict[str, Any]:
    """This process's first device's peaks (see the module doc); never raises."""
    import jax

    try:
        platform = jax.local_devices()[0].platform
        if platform == "tpu":
            from jax.experimental.pallas import tpu as pltpu

            return {**from_tpu_info(pltpu.get_tpu_info()), "slice_shape": slice_shape()}
    except Exception as exc:  # noqa: BLE001 - a JAX without it, a kind it does not know
        return {"onchip_bytes": None, "source": f"not read: {type(exc).__name__}: "
                                                f"{str(exc)[:120]}"}
    if platform == "cpu":
        return {"onchip_bytes": llc_bytes(), "onchip_shared": True, "source": SOURCE_LLC}
    return {"source": f"not read on {platform}: the documented table applies"}
