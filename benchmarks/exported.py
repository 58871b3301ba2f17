"""The series ``podscale export --format asv`` writes: runs asv could not launch (a pod's
``podscale worker --gather``, a JobSet, Slurm) beside asv's own. One parameter, the case;
its values are every case ever exported into this project's asv results folder (the
listing ``podscale-exported.txt`` there, read at discovery). asv itself never measures
them: run here they are skipped (n/a); the figures come from the exports."""

from __future__ import annotations

import json
from pathlib import Path

VERSION = "podscale-export-1"  # analysis/export/asvexport.py writes the same


def _cases() -> list[str]:
    """The cases exported so far (asv's results folder, from the asv.conf.json in the
    working directory or at the project's root), else one placeholder."""
    for conf in (Path.cwd() / "asv.conf.json",
                 Path(__file__).resolve().parents[1] / "asv.conf.json"):
        try:
            results = conf.parent / json.loads(conf.read_text()).get("results_dir", "results")
            names = (results / "podscale-exported.txt").read_text().split()
        except (OSError, ValueError):
            continue
        if names:
            return sorted(names)
    return ["none"]


class TrackExported:
    """Every exported case's figures; asv skips them (the exports hold the values)."""

    params = [_cases()]
    param_names = ["case"]

    def setup(self, case: str) -> None:
        raise NotImplementedError("written by podscale export --format asv, not run by asv")

    def track_time(self, case: str) -> float:
        return float("nan")

    def track_busbw(self, case: str) -> float:
        return float("nan")

    def track_bandwidth(self, case: str) -> float:
        return float("nan")

    def track_flops(self, case: str) -> float:
        return float("nan")

    track_time.unit = "seconds"  # type: ignore[attr-defined]
    track_busbw.unit = track_bandwidth.unit = "GB/s"  # type: ignore[attr-defined]
    track_flops.unit = "GFLOP/s"  # type: ignore[attr-defined]
    for _f in (track_time, track_busbw, track_bandwidth, track_flops):
        _f.version = VERSION  # type: ignore[attr-defined]
    del _f
