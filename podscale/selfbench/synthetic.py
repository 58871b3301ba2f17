"""Synthetic run directories written with podscale's own record types (no JAX): for the
tests, and for bench-self's report stage (reports at pod scale without a pod)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from podscale.core import runfolder as rf
from podscale.core.case import Case, Layout, Settings
from podscale.core.plan import group_by_layout
from podscale.core.records import CaseRecord, EnvRecord, Manifest, Samples, write_manifest
from podscale.worker.writers import RecordWriter


def synthetic_cases(sizes: tuple[int, ...] = (1024, 2048, 4096), hosts: tuple[int, ...] = (1, 2),
                    dph: tuple[int, ...] = (1, 2),
                    settings: Settings | None = None) -> list[Case]:
    settings = settings or Settings(iters=30)
    return [Case(w, "1", f"podscale.suites.{w}:{w}", v, "float32", Layout(h, d), (("size", n),),
                 settings)
            for h in hosts for d in dph for w in ("dot", "psum") for v in ("pmap", "shard_map")
            for n in sizes]


def make_run(path: Path, *, slowdown: float = 1.0, seed: int = 0, iters: int = 30,
             platform: str = "cpu", cpu_count: int = 2, name: str = "<synthetic & 'run'>",
             settings: Settings | None = None, rounds: int = 3,
             launch_noise: float = 0.03, only: str | None = None,
             sizes: tuple[int, ...] = (1024, 2048, 4096),
             time_of: Callable[[Case, CaseRecord], float] | None = None,
             hosts: tuple[int, ...] = (1, 2), dph: tuple[int, ...] = (1, 2),
             process_skew: float | None = None,
             slow_process: tuple[int, float] | None = None, per_sample: bool = False) -> Path:
    """A complete run; times scale with size, hosts and ``slowdown``; small noise within
    a round and a per-round (per-launch) factor of log-sd ``launch_noise``, shared by every
    iteration of the round, as between launches on a real machine. ``only``: the
    slowdown applies to that workload alone. ``time_of(case, record)``: the base time of a
    case instead (e.g. a planted alpha + S/beta). Process p takes (1 + process_skew p)
    times as long (default 0.05, or 0.01 with ``time_of``); ``slow_process=(p, f)``:
    process p takes f times as long in every case. ``per_sample``: one JSON line per
    sample, as runs of schema podscale.run/2 were written (to measure the formats)."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True)
    env = {"hostname": name, "cpu_count": cpu_count, "git_commit": "abc", "python": "3.11",
           "versions": {"jax": "0.0-test"}}
    layouts = group_by_layout(synthetic_cases(sizes, hosts, dph,
                                              settings=settings or Settings(iters=iters)))
    effects = {(c.id, r): float(np.exp(launch_noise * rng.normal()))
               for cs in layouts.values() for c in cs for r in range(rounds)}
    write_manifest(path, Manifest(path.name, "2026-01-01T00:00:00", ["podscale", name],
                                  {"synthetic": True}, [k.key for k in layouts], env,
                                  status="complete"))
    for layout, cases in layouts.items():
        for p in range(layout.processes):
            w = RecordWriter(rf.records_file(path, layout.key, p))
            w.write(EnvRecord(p, layout.processes, layout.devices_per_host, layout.devices,
                              platform, platform, "0.0-test", "0.0-test", name, 1, "", {}))
            for case in cases:
                size = case.p["size"]
                base = 1e-5 + size * 1e-9 * (2 if case.workload == "dot" else 1)
                slow = slowdown if only in (None, case.workload) else 1.0
                skew = (0.05 if time_of is None else 0.01) if process_skew is None \
                    else process_skew
                base *= (1 + 0.3 * (layout.processes - 1)) * slow * (1 + skew * p)
                if time_of is not None:
                    base = time_of(case, _case(case, p)) * (1 + skew * p)
                if slow_process and slow_process[0] == p:
                    base *= slow_process[1]
                for r in range(rounds):
                    launch = base * effects[(case.id, r)]
                    times = launch * (1 + 0.02 * np.abs(rng.normal(size=iters)))
                    blocks = [Samples(case.id, p, "compile", (0,), (0.02,), round=r),
                              Samples(case.id, p, "timed", tuple(range(iters)), tuple(times),
                                      round=r)]
                    w.write(_case(case, p, r), *(
                        [x for b in blocks for x in b.expand()] if per_sample else blocks))
            w.close()
    return path


def _case(case: Case, p: int, round_: int = 0) -> CaseRecord:
    size = case.p["size"]
    nbytes = size * case.itemsize * (7 if case.workload == "dot" else 1)
    collective = "all_reduce" if case.workload == "psum" else None
    return CaseRecord(case.id, p, case.to_dict(), nbytes, 6 * size,
                      nbytes // case.devices_per_host, size, 0, 0.0, 1.0,
                      collective=collective, participants=case.layout.devices, round=round_)
