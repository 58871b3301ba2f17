"""links: every link in P-1 ring shifts; a slow process among 8 named from a real run,
and the attribution of slow processes and links on planted per-process times."""

import os
import re

import numpy as np
import pandas as pd
import pytest

from podscale.analysis import load_run
from podscale.analysis.models.links import matrices, outliers
from tests.conftest import only_run, podscale


def planted(n: int, slow_process: int | None = None, slow_link: tuple[int, int] | None = None):
    """A summary and per-process medians as a links run of n processes would give: 1 ms
    a step; a slow process takes 20 ms at every shift and its receiver waits for it; both
    ends of a slow link take 5 ms at its shift."""
    rows, med = [], {}
    for k in range(1, n):
        case = f"links@1/shard_map/float32/shift={k}/size=1024/h{n}xd1"
        rows.append({"case_id": case, "workload": "links", "size": 1024, "hosts": n,
                     "devices_per_host": 1, "variant": "shard_map", "dtype": "float32",
                     "shift": str(k)})
        for p in range(n):
            t = 1e-3
            if slow_process is not None and slow_process in (p, (p - k) % n):
                t = 20e-3
            if slow_link and slow_link in ((p, (p + k) % n), ((p - k) % n, p)):
                t = 5e-3  # both ends of a slow link wait on it
            med[(case, p)] = t
    index = pd.MultiIndex.from_tuples(med, names=["case_id", "process"])
    return pd.DataFrame(rows), pd.Series(list(med.values()), index=index)


def test_slow_process_and_slow_link_are_named():
    summary, med = planted(16, slow_process=5)
    ((key, m, own),) = matrices(summary, med)
    assert m.shape == (16, 16) and np.isnan(np.diag(m.to_numpy())).all()
    procs, _ = outliers(m, own)
    assert procs[procs["outlier"]]["process"].tolist() == [5]
    summary, med = planted(16, slow_link=(3, 9))
    ((key, m, own),) = matrices(summary, med)
    procs, links = outliers(m, own)
    assert not procs["outlier"].any()
    assert (links.iloc[0]["src"], links.iloc[0]["dst"]) == (3, 9) and links.iloc[0]["outlier"]
    assert links["outlier"].sum() == 1


@pytest.mark.alone
def test_a_slow_process_among_8_is_named(tmp_path):
    """8 real processes, process 5 planted 20 ms slower in every step: 7 cases (not
    56 pairs), and the terminal and the report name process 5 (from calls waited on:
    the link matrix reads each process's own time per call, ``each``)."""
    res = podscale("run", "links", "--hosts", "8", "--devices-per-host", "1", "--sizes",
                   "1K", "--iters", "3", "--warmup", "1", "--rounds", "1", "--timing", "each",
                   "--out",
                   str(tmp_path), env={**os.environ, "PODSCALE_FAULT": "slow=0.02@5:*"},
                   timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    run = load_run(only_run(tmp_path))
    assert run.cases["case_id"].nunique() == 7
    line = next(x for x in res.stdout.splitlines() if x.startswith("# links 1024 B"))
    assert "slow process(es) 5 (" in line, line  # named first: the slowest
    ratios = [float(r) for r in re.findall(r"\(([\d.]+)x the others' median", line)]
    assert ratios[0] >= 2 and all(r < ratios[0] / 2 for r in ratios[1:]), line  # by far
    assert podscale("report", str(run.path)).returncode == 0
    md = (run.path / "report" / "summary.md").read_text()
    assert "## Links: links size 1024 on 8x1" in md


def test_a_multi_slice_matrix_is_its_own_and_marks_the_slice_boundaries():
    """8 processes as one slice and as 2 slices of 4 are two matrices, not one; the 2-slice
    one's heatmap draws the boundary between process 3 and 4 across both axes, and its
    title says the slices."""
    from podscale.analysis.render import plots
    from podscale.analysis.render.sections import _on, _per_slice

    one, med_one = planted(8)
    two, med_two = planted(8, slow_process=2)
    two["slices"], one["slices"] = 2, 1
    two["case_id"] = two["case_id"] + "/s2"
    med_two.index = med_two.index.set_levels(med_two.index.levels[0] + "/s2", level=0)
    found = matrices(pd.concat([one, two]), pd.concat([med_one, med_two]))
    assert sorted(k["slices"] for k, _, _ in found) == [1, 2]
    key, m, _ = next(s for s in found if s.key["slices"] == 2)
    assert _on(key) == "8x1 (2 slices of 4)" and _per_slice(key) == 4
    fig = plots.pair_heatmap(m * 1e6, "t", _per_slice(key))
    drawn = [line.get_xydata()[:, i].tolist() for line in fig.axes[0].lines
             for i in (0, 1)]
    assert [4.0, 4.0] in drawn and len(fig.axes[0].lines) == 2, drawn
    plain = plots.pair_heatmap(m * 1e6, "t")
    assert not plain.axes[0].lines
