"""What ``podscale ceilings`` says: a slice's torus, its figures and their sources, and a
collective's ceiling and least time on it (:mod:`podscale.analysis.models.torus`)."""

from __future__ import annotations

import math
from typing import Any

from podscale.analysis.models import torus


def _gbps(v: float) -> str:
    for scale, unit in ((1e6, "PB/s"), (1e3, "TB/s")):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.3g} GB/s"


def _us(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def slice_lines(gen: torus.Generation, shape: tuple[int, ...]) -> list[str]:
    """The generation's torus, link figures and pod figures, and the slice's axes."""
    w = torus.wraps(gen, shape)
    rule = "an axis wraps only at 16 chips" if gen.wrap == "16" else \
        "every axis wraps in a slice of whole 4x4x4 cubes, none below one"
    pod = torus.pod_figures(gen)
    out = [f"{gen.name}: pod torus {'x'.join(map(str, gen.pod))} ({rule}); "
           f"{gen.links.value:g} ICI links a chip ({gen.links.source})",
           "a link, one way: " + "; ".join(f"{f.value:g} GB/s ({f.source})"
                                           for f in gen.link),
           f"a pod of {pod['chips']:g} chips: all-reduce {_gbps(pod['allreduce_gbps'])}, "
           f"bisection {_gbps(pod['bisection_gbps'])} (one way), DCN "
           f"{_gbps(pod['dcn_gbps'])} ({pod['dcn_gbps'] * 8 / 1000:.3g} Tb/s; "
           f"{gen.dcn_host_gbps.source})",
           f"slice {'x'.join(map(str, shape))} ({math.prod(shape)} chip(s)): " + ", ".join(
               f"{a} {d}{' wraps' if wr else ''}" for a, d, wr in zip("xyz", shape, w))]
    return out


def collective_lines(gen: torus.Generation, collective: str,
                     axes: list[tuple[int, bool]], shard: int) -> list[str]:
    """A collective's ceiling and least time over ``axes``, once per link figure."""
    _, how = torus.bound(gen, collective, axes)
    hops = torus.hops(axes)
    out = [f"{collective} over {' x '.join(str(d) for d, _ in axes)} chips, {shard:,} bytes "
           f"a chip: {how}; latency floor {hops} hop(s) x {gen.hop_us.value:g} us "
           f"({gen.hop_us.source})"]
    for f, busbw, t in torus.collective_time(gen, collective, axes, shard):
        out.append(f"  at {f.value:g} GB/s a link ({f.source.split(':')[0]}): busbw "
                   f"ceiling {_gbps(busbw)}, least time {_us(t)}")
    return out


def this_machine() -> tuple[str | None, str | None, str]:
    """(generation key, topology, what was read) of this machine's chips, or (None, None,
    why not) without TPU chips JAX can use."""
    from podscale.analysis.models.peaks import peak_for

    try:
        import jax

        devices = jax.devices()
    except Exception as exc:  # noqa: BLE001 - no backend: said, exit 2
        return None, None, f"no TPU here ({type(exc).__name__}): name a generation or type"
    kind = devices[0].device_kind
    gen = torus.generation(kind) if devices[0].platform == "tpu" else None
    if gen is None:
        return None, None, (f"no TPU here (JAX lists {devices[0].platform}: {kind}): name a "
                            "generation (v4, v5e, v5p, v6e, tpu7x) or a TPU type")
    from podscale.startup.peaks import device_peaks

    read: dict[str, Any] = device_peaks()
    doc = peak_for(kind)
    shape = read.get("slice_shape") or [1] * len(gen.pod)
    shape = (list(shape) + [1] * len(gen.pod))[:len(gen.pod)]
    said = [f"this machine: {len(devices)} x {kind}; read: HBM {read.get('hbm_gbps', 0):.4g}"
            f" GB/s, bf16 {read.get('bf16_tflops', 0):.4g} TFLOP/s, int8 "
            f"{read.get('int8_tops') or 0:.4g} TOP/s, VMEM {read.get('onchip_bytes', 0) or 0:,}"
            f" bytes ({read.get('source')})"]
    if doc is not None:
        said.append(f"documented: HBM {doc.hbm_gbps:g} GB/s, bf16 {doc.bf16_tflops:g} "
                    f"TFLOP/s, int8 {doc.int8_tops or 0:g} TOP/s ({doc.source})")
    return gen.key, "x".join(map(str, shape)), "\n".join(said)
