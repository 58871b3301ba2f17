"""bench-self's memory stage: the stream (read) ceiling and dot's bandwidth per layout,
buffers of at least 4x the last-level cache per process where memory allows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podscale.core.case import Layout, Settings
from podscale.core.grid import Grid, expand
from podscale.launch.admission import available_mb, estimate_mb
from podscale.launch.runner import execute
from podscale.startup.peaks import llc_bytes


def memory_ceiling(out: Path, hosts: tuple[int, ...] = (1, 2),
                   devices: tuple[int, ...] = (1, 2)) -> dict:
    """Per layout: the stream (read) ceiling and dot's bandwidth, both with buffers of at
    least 4x the last-level cache per process where memory allows (halved together until
    admission's estimate fits: a VM can report its host's whole L3, 480 MiB here), measured
    in one run; medians over iterations of the max over processes; dot / stream per
    layout."""
    from podscale.analysis import load_run

    llc = llc_bytes()
    values = 1 << max(llc.bit_length() - 1, 20)  # float32 values: 4x the LLC in bytes
    rows = 1 << max((4 * llc // 24 - 1).bit_length(), 20)  # dot: 24 bytes of input a row
    grid: dict[str, Any] = dict(hosts=tuple(hosts), devices_per_host=tuple(devices),
                                variants=("shard_map",), settings=Settings(iters=10, warmup=2))

    def cases_at(values: int, rows: int) -> list:
        return expand(Grid(workloads=("stream",), params=(("size", (values,)),
                                                          ("op", ("read",))), **grid)) + \
            expand(Grid(workloads=("dot",), params=(("size", (rows,)),), **grid))

    capped = False
    while estimate_mb(cases_at(values, rows))[1] > available_mb() and rows > 1 << 20:
        values, rows, capped = values // 2, rows // 2, True
    run = execute(cases_at(values, rows), out, "memory", progress=None)
    table = load_run(run).summary()
    layouts = []
    for (h, d), g in table.groupby(["hosts", "devices_per_host"]):
        s, t = (g[g.workload == w].iloc[0] for w in ("stream", "dot"))
        layouts.append({"layout": Layout(h, d).key, "stream_gbps": float(s.gbps),
                        "dot_gbps": float(t.gbps), "fraction": float(t.gbps / s.gbps)})
    return {"llc_bytes": llc, "stream_bytes": values * 4, "dot_bytes": rows * 24,
            "capped_by_memory": capped, "layouts": layouts}
