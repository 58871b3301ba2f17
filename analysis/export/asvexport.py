"""A run as asv's own results, for runs asv could not launch (a pod's ``podscale worker
--gather``, a JobSet, Slurm): asv's result file for the machine and commit (written with
asv's ``Results``), the machine's ``machine.json``, and the exported benchmarks'
entries merged into ``benchmarks.json``, so ``asv publish`` and ``asv compare`` read them
beside asv's own series. The benchmarks are ``exported.TrackExported.track_<figure>``
(``benchmarks/exported.py``, one parameter: the case), version :data:`VERSION`; the cases
ever exported are listed in ``podscale-exported.txt`` (the module reads it at discovery,
so the next ``asv run`` keeps them)."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Sequence
from pathlib import Path

from podscale.analysis.export.rows import FIGURES, Row, RunFacts

VERSION = "podscale-export-1"
LISTING = "podscale-exported.txt"
MODULE = "exported.TrackExported"
UNITS = {"time": "seconds", "busbw": "GB/s", "bandwidth": "GB/s", "flops": "GFLOP/s"}


def _entry(key: str, cases: list[str]) -> dict:
    return {"name": f"{MODULE}.track_{key}", "type": "track", "unit": UNITS[key],
            "params": [[repr(c) for c in cases]], "param_names": ["case"],
            "version": VERSION, "timeout": 60, "rounds": 1, "code": "exported by podscale",
            "pretty_name": f"podscale export: {key} ({UNITS[key]})"}


def _merge_benchmarks(results: Path, cases: list[str]) -> list[str]:
    """Every case ever exported here (the listing and this run), written to the listing
    and to benchmarks.json's entries of the exported benchmarks."""
    listing = results / LISTING
    known = set(listing.read_text().split("\n")) - {""} if listing.exists() else set()
    every = sorted(known | set(cases))
    listing.write_text("\n".join(every) + "\n")
    path = results / "benchmarks.json"
    bench = json.loads(path.read_text()) if path.exists() else {"version": 2}
    for key in FIGURES:
        bench[f"{MODULE}.track_{key}"] = _entry(key, every)
    path.write_text(json.dumps(bench, indent=4, sort_keys=True) + "\n")
    return every


def write_asv(rows: Sequence[Row], facts: RunFacts, results: Path, *, machine: str,
              commit: str | None = None) -> Path:
    """Write the run into asv's results folder ``results`` as machine ``machine`` at
    ``commit`` (default: the run's); the result file written."""
    from asv import runner
    from asv.results import Results

    commit = commit or facts.commit
    if not commit:
        raise ValueError("the run records no git commit: give --commit")
    results.mkdir(parents=True, exist_ok=True)
    cases = [r.name for r in rows]
    _merge_benchmarks(results, cases)
    (results / machine).mkdir(exist_ok=True)
    (results / machine / "machine.json").write_text(json.dumps({
        "arch": platform.machine(), "cpu": facts.device_kind or "", "machine": machine,
        "num_cpu": "", "os": platform.system(), "ram": "", "version": 1}, indent=4) + "\n")
    python = ".".join(platform.python_version_tuple()[:2])
    params = {"machine": machine, "python": python, "platform": facts.platform,
              "device_kind": facts.device_kind or ""}
    res = Results(params, {}, commit, None, python, "podscale-export", {})
    for key in FIGURES:
        values = [next((f.value for f in r.figures if f.key == key), math.nan) for r in rows]
        if all(math.isnan(v) for v in values):
            continue
        bench = {"name": f"{MODULE}.track_{key}", "version": VERSION,
                 "params": [[repr(c) for c in cases]]}
        res.add_result(bench, runner.BenchmarkResult(
            result=values, samples=[None] * len(values), number=[None] * len(values),
            errcode=0, stderr="", profile=None))
    res.save(str(results))
    return results / res._filename  # noqa: SLF001 - asv names the file; no public getter
