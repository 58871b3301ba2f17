"""bench-self ``methods``: podscale's own ``chain`` and ``device`` against hand-written
loops of the same method (:mod:`podscale.selfbench.handloops`) calling the same compiled
program on the same buffers, in one process (one CPU device, or one of this machine's
chips: ``bench-self --platform``), in interleaved rounds (the order alternating): what
podscale's loop costs, apart from the program. Per round and method the ratio of
podscale's median over the hand loop's; the median and range of the ratios. Target:
within 3% (a ratio within 0.97-1.03).

    python -m podscale.selfbench.methodstage ROUNDS ITERS [chip]   # one JSON line
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from podscale.core import envnames
from podscale.core.errors import PodscaleError
from podscale.selfbench import Log

if TYPE_CHECKING:
    from podscale.launch.chips import Chips

#: (workload, parameters): a memory-bound read and a compute-bound product, on the CPU
CASES = (("stream", {"size": 1 << 24, "op": "read"}), ("matmul", {"size": 512}))
#: the same on a chip: a 512 MiB read (beyond any on-chip memory) and a product at the
#: compute ceiling (the study's sizes)
CHIP_CASES = (("stream", {"size": 1 << 27, "op": "read"}), ("matmul", {"size": 8192}))
TARGET = 0.03


def _case(workload: str, params: dict, iters: int) -> Any:
    from podscale.core.case import Settings
    from podscale.core.grid import Grid, expand

    dtype = "bfloat16" if workload == "matmul" else "float32"
    (case,) = expand(Grid((workload,), hosts=(1,), devices_per_host=(1,),
                          variants=("shard_map",), dtypes=(dtype,),
                          params=tuple((k, (v,)) for k, v in params.items()),
                          settings=Settings(iters=iters, warmup=3)))
    return case


def _one_round(case: Any, compiled: Any, hand: Any, args: tuple, module: str,
               order: int, depth: int) -> dict:
    """podscale's and the hand loop's chain and device medians, in ``order``."""
    from podscale.core.timing import chain
    from podscale.selfbench import handloops
    from podscale.worker.devicetime import device_pass

    iters = case.settings.iters
    ours = {
        "chain": lambda: statistics.median(t.seconds for t in chain(
            compiled.launch, compiled.wait, clock=time.perf_counter, barrier=lambda: None,
            length=iters, depth=depth)),
        "device": lambda: statistics.median(s.seconds for s in device_pass(
            case.id, 0, compiled.launch, compiled.wait, lambda: None, iters, [0],
            compiled.module, depth=depth).samples)}
    theirs = {"chain": lambda: statistics.median(handloops.chain(hand, args, iters)),
              "device": lambda: statistics.median(handloops.device(
                  hand, args, iters, module))}
    out = {}
    for method in ("chain", "device"):
        sides = [("podscale", ours[method]), ("hand", theirs[method])]
        for side, fn in sides if order % 2 == 0 else sides[::-1]:
            out[f"{method}_{side}"] = fn()
    return out


def main(rounds: int, iters: int, chip: bool = False) -> dict:
    """In this process (one device: the CPU's, or a chip's): per case, per round, both
    sides' medians."""
    from podscale.core.registry import load_source
    from podscale.core.timing import depth_for
    from podscale.startup import runtime
    from podscale.worker.compiling import compile_workload
    from podscale.worker.main import context

    rt = runtime.start()
    result = {}
    for workload, params in CHIP_CASES if chip else CASES:
        case = _case(workload, params, iters)
        wl = load_source(case.source)
        ctx = context(case, rt)
        compiled = compile_workload(wl, ctx, wl.place(ctx, wl.inputs(ctx)))
        depth = depth_for(wl.work(case).bytes_per_device)  # as the worker keeps it
        per = [_one_round(case, compiled, compiled.launch, (), compiled.module or "", r, depth)
               for r in range(rounds)]
        result[case.id] = {m: {"podscale_us": [p[f"{m}_podscale"] * 1e6 for p in per],
                               "hand_us": [p[f"{m}_hand"] * 1e6 for p in per],
                               "ratio": [p[f"{m}_podscale"] / p[f"{m}_hand"] for p in per]}
                           for m in ("chain", "device")}
    return result


def methods_overhead(rounds: int = 9, iters: int = 20, log: Log = print,
                     chips: Chips | None = None) -> dict:
    """The stage: :func:`main` in a process of its own (JAX on the CPU, or on one of
    ``chips``); per case and method the ratios' median and range, against the target."""
    env = {**os.environ, "JAX_PLATFORMS": chips.runtime if chips else "cpu"}
    env.pop(envnames.CPU_DEVICES, None)
    res = subprocess.run([sys.executable, "-m", "podscale.selfbench.methodstage", str(rounds),
                          str(iters), *(["chip"] if chips else [])], capture_output=True,
                         text=True, env=env, timeout=900)
    if res.returncode:
        raise PodscaleError(f"methods stage failed: {res.stderr.strip().splitlines()[-1:]}")
    raw = json.loads(res.stdout.strip().splitlines()[-1])
    out: dict = {"rounds": rounds, "iters": iters, "target": TARGET, "cases": {},
                 "platform": chips.describe() if chips else "cpu"}
    for case_id, methods in raw.items():
        out["cases"][case_id] = {}
        for m, d in methods.items():
            med = statistics.median(d["ratio"])
            out["cases"][case_id][m] = {**d, "median_ratio": med, "min_ratio": min(d["ratio"]),
                                        "max_ratio": max(d["ratio"]),
                                        "met": abs(med - 1) <= TARGET}
            log(f"  {case_id} {m}: podscale / hand median {med:.3f} (range "
                f"{min(d['ratio']):.3f}-{max(d['ratio']):.3f} over {rounds} rounds; "
                f"{statistics.median(d['podscale_us']):.1f} vs "
                f"{statistics.median(d['hand_us']):.1f} us) "
                f"{'met' if abs(med - 1) <= TARGET else 'MISSED'} (within {TARGET:.0%})")
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["chip"])),
          flush=True)
