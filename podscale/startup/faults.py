"""Planted faults, for testing podscale itself: ``PODSCALE_FAULT=KIND[=ARG]@PROCESS:CASE``.

PROCESS is a process index or ``*`` (every process); CASE is a case index within the
launch, ``*`` (every case) or a workload name (its every case). KIND is one of:

- ``raise``, ``exit``, ``kill``, ``hang`` — at the start of the case (the supervisor's tests);
- ``slow[=SECONDS]`` — process PROCESS sleeps SECONDS (default 0.002) before its part of
  every step, warm-up and timed alike, and before every launch of a chain or device pass:
  a straggler its peers wait for at the collective, and a host delay on every call;
- ``stretch[=FACTOR]`` — each step of process PROCESS takes FACTOR times as long
  (default 1.5; a spin-wait of (FACTOR-1) x the step's own time after it; in a chain
  each launch is waited on first): a planted slowdown of a workload's host-side time, e.g.
  ``stretch=1.5@*:psum``, for the comparison benchmark (device time does not see it);
- ``stall[=CALL]`` — process PROCESS's step blocks forever at its CALL-th call (default
  1: the first warm-up iteration), host-side, before dispatching: a process stuck inside a
  step, which the watchdog must name among peers waiting at the collective;
- ``corrupt`` — process PROCESS's outputs are changed before the correctness check;
- ``heavier[=SHARE]`` — process PROCESS's step program also reads SHARE (default 0.02;
  above 1, each input whole that many times, then the fraction) of each of its inputs'
  rows (the second-last axis; a vector's elements) on the device after the step, one
  read after another, its outputs unchanged: a slowdown device time sees (the host-side
  ``stretch`` is not one), about in proportion for a memory-bound step (the extra
  reduction has a launch of its own); jit and shard_map steps only (a pmap's program is
  left alone);
- ``lower`` — process PROCESS's float32 inputs are rounded to bfloat16 before they are
  placed (after the reference is computed from them): what a device that multiplies
  float32 in bfloat16 computes;
- ``drop`` — process PROCESS's share of the seed's global sums is left out (zeros);
- ``late[=SECONDS]`` — process PROCESS sleeps SECONDS (default 2) before it joins the job:
  a slow start its peers wait for (the ledger names it the join straggler);
- ``linger[=SECONDS]`` — process PROCESS sleeps SECONDS (default 2) after its last case,
  before the job's end: a slow shutdown, which is no case.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from podscale.core import envnames

KINDS = ("raise", "exit", "kill", "hang", "slow", "stretch", "stall", "corrupt", "drop",
         "late", "lower", "heavier", "linger")
#: act on steps, inputs, outputs, the join or the end, not at case start
STEP_KINDS = ("slow", "stretch", "stall", "corrupt", "drop", "late", "lower", "heavier",
              "linger")


@dataclass(frozen=True)
class Fault:
    kind: str
    process: int | None  # None: every process
    case: int | str | None  # None: every case; str: every case of that workload
    arg: float | None = None

    def applies(self, process: int, index: int, workload: str = "") -> bool:
        return self.process in (None, process) and self.case in (None, index, workload)


def _stalled(step: Callable[[], Any], at: int) -> Callable[[], Any]:
    calls = [0]

    def stalled() -> Any:
        calls[0] += 1
        while calls[0] == at:  # stuck for good, host-side, before dispatching
            time.sleep(3600)
        return step()

    return stalled


def parse(spec: str) -> Fault | None:
    if not spec:
        return None
    what, _, where = spec.partition("@")
    kind, _, arg = what.partition("=")
    process, _, case = where.partition(":")
    named = case.isidentifier()
    number = _number(arg)
    if kind not in KINDS or not (process.isdigit() or process == "*") or \
            not (case in ("", "*") or case.isdigit() or named) or (arg and number is None):
        from podscale.core.errors import UsageError

        raise UsageError(f"bad PODSCALE_FAULT {spec!r}: KIND[=ARG]@PROCESS:CASE with KIND of "
                         f"{', '.join(KINDS)}, ARG a number >= 0, PROCESS an index or * and "
                         "CASE an index, * or a workload name")
    which: int | str | None = None if case == "*" else case if named else int(case or 0)
    return Fault(kind, None if process == "*" else int(process), which, number)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) and value >= 0 else None


def from_env() -> Fault | None:
    return parse(os.environ.get(envnames.FAULT, ""))


def launcher_rank() -> int | None:
    """This process's index as its launcher gave it, before JAX knows it."""
    for name in (envnames.PROCESS_ID, "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return None


def launcher_size() -> int | None:
    """How many processes this process's launcher started, where it says (podscale's
    local launcher, Open MPI, PMI, an srun step), before JAX knows it. Slurm's is the
    step's count: a batch script's own process sees its allocation's ``SLURM_NTASKS``
    though it runs alone."""
    for name in (envnames.NUM_PROCESSES, "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                 "SLURM_STEP_NUM_TASKS"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return None


def before_join(fault: Fault | None) -> None:
    """``late``: the process (by its launcher-given index) starts late."""
    rank = launcher_rank()
    if fault is not None and fault.kind == "late" and rank is not None and \
            fault.process in (None, rank):
        time.sleep(2.0 if fault.arg is None else fault.arg)


def at_end(fault: Fault | None, process: int) -> None:
    """``linger``: the process ends late, after its last case."""
    if fault is not None and fault.kind == "linger" and fault.process in (None, process):
        time.sleep(2.0 if fault.arg is None else fault.arg)


def at_case_start(fault: Fault | None, process: int, index: int, say: Callable,
                  workload: str = "") -> None:
    if fault is None or not fault.applies(process, index, workload) or \
            fault.kind in STEP_KINDS:
        return
    say(f"injected fault: {fault.kind}")
    if fault.kind == "raise":
        raise RuntimeError(f"injected failure in process {process}")
    if fault.kind == "exit":
        os._exit(7)
    if fault.kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    while True:  # hang
        time.sleep(3600)


def wrap_step(fault: Fault | None, process: int, index: int, step: Callable[[], Any],
              workload: str = "") -> Callable[[], Any]:
    if fault is None or fault.kind not in ("slow", "stretch", "stall") or \
            not fault.applies(process, index, workload):
        return step
    if fault.kind == "stall":
        return _stalled(step, int(fault.arg or 1))
    if fault.kind == "stretch":
        return _stretched(step, 1.5 if fault.arg is None else fault.arg)
    return _slowed(fault, step)


def _stretched(step: Callable[[], Any], factor: float,
               wait: Callable[[Any], Any] | None = None) -> Callable[[], Any]:
    """``step`` (dispatched, then waited on with ``wait`` where it does not block itself)
    taking ``factor`` times its own time: the rest slept, then spun."""

    def stretched() -> Any:
        start = time.perf_counter()
        out = step()
        if wait is not None:
            wait(out)
        end = start + factor * (time.perf_counter() - start)
        rest = end - time.perf_counter()
        if rest > 0.002:  # sleep most of it: spinning would take a core from the peers
            time.sleep(rest - 0.001)
        while time.perf_counter() < end:  # spin the rest: sleep is too coarse for it
            pass
        return out

    return stretched


def _slowed(fault: Fault, step: Callable[[], Any]) -> Callable[[], Any]:
    delay = 0.002 if fault.arg is None else fault.arg

    def slowed() -> Any:
        time.sleep(delay)
        return step()

    return slowed


def wrap_launch(fault: Fault | None, process: int, index: int, launch: Callable[[], Any],
                wait: Callable[[Any], Any], workload: str = "") -> Callable[[], Any]:
    """The launches of a chain or device pass: ``slow`` before each; ``stretch`` waits on
    each and stretches it (a host-side slowdown that device time does not see); ``stall``
    acts on the waited-on step only."""
    if fault is None or fault.kind not in ("slow", "stretch") or \
            not fault.applies(process, index, workload):
        return launch
    if fault.kind == "stretch":
        return _stretched(launch, 1.5 if fault.arg is None else fault.arg, wait)
    return _slowed(fault, launch)


def heavier(fault: Fault | None, process: int, index: int, fn: Callable[..., Any],
            aot: bool, workload: str = "") -> Callable[..., Any]:
    """``fn`` reading, besides, a share of each input on the device, where planted."""
    if fault is None or fault.kind != "heavier" or not aot or \
            not fault.applies(process, index, workload):
        return fn
    import jax
    import jax.numpy as jnp

    share = 0.02 if fault.arg is None else fault.arg
    # whole reads of each input for the integer part of ``share``, then its fraction
    reads = [1.0] * int(share) + ([share % 1] if share % 1 else [])

    def more(*args: Any) -> Any:
        out = fn(*args)
        # each read starts from the last one's result, the first from the step's output:
        # the reads follow the step and each other, none merged with another or fused
        # into the step; one element by index, a share of whole rows (the second-last
        # axis), never a reshape nor a share of each row: a chip's tiled layout copies a
        # reshaped array, and reads a row's tile whole however little of it is taken
        first = jax.tree_util.tree_leaves(out)[0]
        link = first[(0,) * first.ndim].astype(jnp.float32)
        for x in jax.tree_util.tree_leaves(args):
            if getattr(x, "size", 0) and getattr(x, "ndim", 0):
                axis = x.ndim - 2 if x.ndim > 1 else 0
                for r in reads:
                    part = jax.lax.slice_in_dim(x, 0, max(1, int(r * x.shape[axis])),
                                                axis=axis)
                    link = jnp.sum(part * (1 + 0 * link), dtype=jnp.float32)
        return jax.tree_util.tree_map(lambda o: o + (link * 0).astype(o.dtype), out)

    return jax.jit(more)


def lower(fault: Fault | None, process: int, index: int, local: tuple[np.ndarray, ...],
          workload: str = "") -> tuple[np.ndarray, ...]:
    """The host-local inputs, float32 ones rounded to bfloat16 (and back) where planted."""
    if fault is None or fault.kind != "lower" or not fault.applies(process, index, workload):
        return local
    import ml_dtypes

    return tuple(x.astype(ml_dtypes.bfloat16).astype(np.float32)
                 if np.asarray(x).dtype == np.float32 else x for x in local)


def corrupt(fault: Fault | None, process: int, index: int, got: np.ndarray,
            workload: str = "") -> np.ndarray:
    """Outputs moved far outside any rounding bound (and the first made NaN)."""
    if fault is None or fault.kind != "corrupt" or not fault.applies(process, index, workload):
        return got
    bad = np.array(got, dtype=np.float64, copy=True)
    bad += 1.0 + 1e3 * np.maximum(np.abs(bad), 1.0)
    if bad.size:
        bad.flat[0] = np.nan
    return bad.astype(np.asarray(got).dtype)  # the output's dtype: only values change
