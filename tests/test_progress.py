"""Progress lines: each case's line stays distinct when cut to the terminal (the study's
246 cases at 80 columns), and the parts every case of a workload shares are left out."""

from podscale.core.grid import expand_all
from podscale.frontend.cli import build_parser
from podscale.frontend.gridargs import STUDY_FILE, grids_from_args
from podscale.launch.progress import fit, fit_label, labels


def test_study_progress_lines_are_distinct_at_80_columns():
    cases = expand_all(grids_from_args(build_parser().parse_args(["study"]), STUDY_FILE)[0])
    shown = [fit_label(label, 80 - len("# [246/246] ") - len(" done (59s, ETA 21s)"))
             for label in labels(cases)]
    assert len(cases) > 200 and len(set(shown)) == len(cases)
    cut = [fit(c.id, 80 - len("# [246/246] ") - len(" done (59s, ETA 21s)")) for c in cases]
    assert len(set(cut)) < len(cases)  # the full ids, cut in the middle, repeat
    assert fit_label("all_reduce@1/algorithm=hierarchical/axes=local/size=1048576/h4xd2", 48) \
        == "all_reduce@1/hierarchical/local/1048576/h4xd2"
    one = labels(cases)[[c.workload for c in cases].index("all_reduce")]
    assert one.startswith("all_reduce@1/") and "float32" not in one and "shard_map" not in one
    assert one.endswith(cases[[c.workload for c in cases].index("all_reduce")].layout.key)
