"""Synthetic run directories written with podscale's own record types (no JAX)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from podscale.cases import Case, SuiteSpec, expand, group_by_layout
from podscale.records import CaseRecord, EnvRecord, Manifest, RecordWriter, Sample, write_manifest


def make_run(path: Path, *, slowdown: float = 1.0, seed: int = 0, iters: int = 30,
             platform: str = "cpu", cpu_count: int = 2, name: str = "<synthetic & 'run'>") -> Path:
    """A complete run; times scale with size, hosts and ``slowdown``; small noise."""
    rng = np.random.default_rng(seed)
    spec = SuiteSpec(sizes=[1024, 2048, 4096], hosts=[1, 2], devices_per_host=[1, 2])
    path.mkdir(parents=True)
    env = {"hostname": name, "cpu_count": cpu_count, "git_commit": "abc", "python": "3.11",
           "versions": {"jax": "0.0-test"}}
    layouts = group_by_layout(expand(spec))
    write_manifest(path, Manifest(path.name, "2026-01-01T00:00:00", ["podscale", name],
                                  {"synthetic": True}, [k.key for k in layouts], env,
                                  status="complete"))
    for layout, cases in layouts.items():
        for p in range(layout.hosts):
            w = RecordWriter(path / "records" / layout.key / f"process-{p}.jsonl")
            w.write(EnvRecord(p, layout.hosts, layout.devices_per_host, layout.devices, platform,
                              platform, "0.0-test", "0.0-test", name, 1, "", {}))
            for case in cases:
                w.write(_case(case, p), Sample(case.id, p, "compile", 0, 0.02))
                base = 1e-5 + case.size * 1e-9 * (2 if case.suite == "dot" else 1)
                base *= (1 + 0.3 * (layout.hosts - 1)) * slowdown * (1 + 0.05 * p)
                for i in range(iters):
                    t = base * (1 + 0.02 * abs(rng.normal()))
                    w.write(Sample(case.id, p, "timed", i, t))
            w.close()
    return path


def _case(case: Case, p: int) -> CaseRecord:
    nbytes = case.size * case.itemsize * (7 if case.suite == "dot" else 1)
    return CaseRecord(case.id, p, case.to_dict(), nbytes, 6 * case.size,
                      nbytes // case.devices_per_host, case.size, 0, 0.0, 1.0)
