"""Weak and strong scaling efficiency of a run's summary against its one-host cases."""

from __future__ import annotations

import pandas as pd

from podscale.analysis.data.summary import Summary


def scaling(table: Summary) -> pd.DataFrame:
    """Weak and strong scaling efficiency vs host count, per workload/variant/dtype/layout
    and every parameter but ``size`` (workloads without a size parameter have none).

    Sizes are per process, so the same size at H hosts is weak scaling:
    ``eff = T(1 host) / T(H)``. Strong scaling keeps the total fixed — size ``S*…/H``
    per process at H hosts against ``S`` at one host: ``eff = T(1) / (H * T(H))``.
    """
    summary = table.frame
    keys = ["workload", "variant", "dtype", "devices_per_host", "mesh_local",
            *[c for c in table.param_columns if c != "size"]]
    rows = []
    if "size" not in summary.columns:
        return pd.DataFrame(columns=[*keys, "kind", "hosts", "size", "efficiency"])
    summary = summary.assign(mesh_local=summary["mesh"].str.split("x", n=1).str[1])
    for k, g in summary.dropna(subset=["size"]).groupby(keys, dropna=False):
        base = g[g["hosts"] == 1].set_index("size")["time_s"]
        for r in g.itertuples():
            if r.size in base.index:
                rows.append({**dict(zip(keys, k)), "kind": "weak", "hosts": r.hosts,
                             "size": r.size, "efficiency": base[r.size] / r.time_s})
            total = r.size * r.hosts
            if r.hosts > 1 and total in base.index:
                rows.append({**dict(zip(keys, k)), "kind": "strong", "hosts": r.hosts,
                             "size": total, "efficiency": base[total] / (r.hosts * r.time_s)})
    cols = [*keys, "kind", "hosts", "size", "efficiency"]
    return pd.DataFrame(rows, columns=cols)
