"""Two profiled runs of one program compared (``podscale compare A B`` on profiled runs):
a verdict on the job's step time with its interval, and whether a change is one process
straggling or every process alike.

- The job's **step time** at step *k* is the time between the last process's ready of
  step *k-1* and of step *k* (the job moves at its slowest process); the first
  ``WARMUP`` steps (compiles) are left out. The verdict compares the medians: their ratio
  B/A with a 95% bootstrap interval (resampling each run's steps), *slower* or *faster*
  when the interval leaves [1 - threshold, 1 + threshold] out on one side, else ``~``.
- The change is a **straggler change** when one process's time lost per step (straggler
  blame, :mod:`.steps`) moved by at least half the change in the median step time;
  otherwise **uniform** (every process's own step time moved).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from podscale.analysis.profile.steps import WARMUP as STEPS_WARMUP
from podscale.analysis.profile.steps import job_periods
from podscale.analysis.profile.summary import ProfileSummary
from podscale.analysis.units import time_h
from podscale.core import defaults

WARMUP = STEPS_WARMUP
BOOT = 2000


@dataclass(frozen=True)
class StepVerdict:
    """The step-time verdict of B against A, and what the change is."""

    step: str
    median_a: float
    median_b: float
    ratio: float
    low: float
    high: float
    verdict: str  # slower | faster | ~
    kind: str  # straggler | uniform | none
    process: int | None  # the straggler whose blame moved most
    lost_a: float  # its time lost per step in A and B
    lost_b: float

    def sentence(self) -> str:
        change = (f"{self.step}: {time_h(self.median_a)} -> {time_h(self.median_b)} per "
                  f"step, {self.ratio:.3f}x (95% interval {self.low:.3f}-{self.high:.3f}): "
                  f"{self.verdict}")
        if self.kind == "straggler":
            change += (f"; a straggler change: process {self.process} costs the job "
                       f"{time_h(self.lost_b)} per step in B against {time_h(self.lost_a)} "
                       "in A")
        elif self.kind == "uniform":
            change += "; uniform: no one process's lateness explains it"
        return change


def job_steps(s: ProfileSummary) -> np.ndarray:
    """The job's step times after the warm-up steps (seconds)."""
    return job_periods(s.ledger, WARMUP).to_numpy()


def _interval(a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    ra = np.median(rng.choice(a, (BOOT, len(a))), axis=1)
    rb = np.median(rng.choice(b, (BOOT, len(b))), axis=1)
    low, high = np.quantile(rb / ra, [0.025, 0.975])
    return float(low), float(high)


def history_row(s: ProfileSummary) -> dict:
    """The run as ``podscale history`` keeps it: one case, the program's step, whose time
    is the job's median step time after the warm-up steps."""
    from podscale.core.case import Layout

    p = s.profile
    n = int(p.processes["process"].nunique())
    script = str(p.manifest.spec.get("script", "?")).rsplit("/", 1)[-1]
    times = job_steps(s) if s.step is not None else np.array([])
    procs = p.processes
    # the layout as a run's: processes x devices per process (2x2 and 2x4 are two series)
    local = procs["local_devices"].dropna() if "local_devices" in procs else procs["process"][:0]
    layout = Layout(max(n, 1), int(local.max()) if len(local) else 1).key
    return {"case_id": f"{script}:{s.step}@{layout}", "workload": script, "variant": "profile",
            "dtype": "", "layout": layout,
            "time_s": float(np.median(times)) if len(times) else None, "round_cv": None,
            "rounds": 1, "busbw": None, "iters": len(times), "warmup": WARMUP, "sync": "",
            "method": "step", "each_s": None, "chain_s": None, "device_s": None}


def lost_per_step(s: ProfileSummary) -> pd.Series:
    late = s.blame[s.blame["step"] >= WARMUP]
    steps = max(1, s.steps - WARMUP)
    return late.groupby("last")["lost"].sum() / steps


#: podscale's own options a profiled run's manifest keeps, as the command line says them
OWN_OPTIONS = {"devices_per_host": "--devices-per-host", "platform": "--platform",
               "rank_env": "--rank-env", "step": "--step", "peak_tflops": "--peak-tflops",
               "tokens_per_step": "--tokens-per-step", "case_timeout": "--timeout"}


def _windows(s: ProfileSummary) -> str:
    """The capture windows a run opened, as words (none: "no capture")."""
    from podscale.core.profilerecord import window_label

    w = s.profile.windows
    if w.empty:
        return "no capture"
    seen = dict.fromkeys(str(t) if isinstance(t, list) else window_label(a, b)
                         for a, b, t in zip(w["first"], w["stop"], w["trigger"]))
    return "captured steps " + ", ".join(seen)


def differences(a: ProfileSummary, b: ProfileSummary) -> list[str]:
    """What differs between the two runs besides the time: podscale's own options first
    (capture windows among them), then processes, program, arguments."""
    spec_a, spec_b = a.profile.manifest.spec, b.profile.manifest.spec
    own = [f"{flag} {spec_a.get(k)} -> {spec_b.get(k)}" for k, flag in OWN_OPTIONS.items()
           if spec_a.get(k) != spec_b.get(k)]
    wa, wb = _windows(a), _windows(b)
    own += [f"A: {wa}, B: {wb}"] if wa != wb else []
    out = [f"podscale's options: {'; '.join(own)}"] if own else []
    na, nb = (int(s.profile.processes["process"].nunique()) for s in (a, b))
    if na != nb:
        out.append(f"A ran on {na} process(es), B on {nb}")
    if spec_a.get("sha256") != spec_b.get("sha256"):
        out.append("the program's file differs (SHA-256)")
    if spec_a.get("args") != spec_b.get("args"):
        out.append("arguments: " + args_differ(spec_a.get("args") or [],
                                               spec_b.get("args") or []))
    out += [f"{label}: {r}" for label, s in (("A", a), ("B", b)) for r in replaced(s)]
    return out


def _keyed(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """``key=value`` arguments (MaxText's, Hydra's: not options) by key, and the rest."""
    kv = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in args
          if "=" in w and not w.startswith("-")}
    return kv, [w for w in args if not ("=" in w and not w.startswith("-"))]


def args_differ(a: list[str], b: list[str]) -> str:
    """What differs between two argument lists, not both whole: ``key=value`` ones by key
    (``steps=20 -> 40``), the rest in order (``--steps 20 -> 40; --fast only in B``)."""
    import difflib

    (ka, a), (kb, b) = _keyed(a), _keyed(b)
    out = [f"{k}={ka[k]} -> {k}={kb[k]}" if k in ka and k in kb else
           f"{k}={ka[k]} only in A" if k in ka else f"{k}={kb[k]} only in B"
           for k in dict.fromkeys([*ka, *kb]) if ka.get(k) != kb.get(k)]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        was, now = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        context = a[i1 - 1] + " " if i1 and a[i1 - 1].startswith("-") and \
            not was.startswith("-") else ""
        if op == "replace":
            out.append(f"{context}{was} -> {context}{now}")
        elif op == "delete":
            out.append(f"{context}{was} only in A")
        elif op == "insert":
            out.append(f"{context}{now} only in B")
    return "; ".join(out)


def replaced(s: ProfileSummary) -> list[str]:
    """An A/B arm's variables the program replaced: each one the arm set that a process
    ran with otherwise (read at its first computation), in words."""
    wanted = s.profile.manifest.spec.get("env") or {}
    procs = s.profile.processes
    seen = procs["arm_vars"].dropna() if "arm_vars" in procs else []
    out = []
    for name, value in wanted.items():
        ran = sorted({str(v.get(name)) for v in seen if isinstance(v, dict)
                      and v.get(name) != value})
        if ran:
            out.append(f"{name}={value} was replaced by the program: it ran with "
                       f"{' or '.join(map(repr, ran))}")
    return out


def _status(s: ProfileSummary) -> str:
    from podscale.core.manifest import abandoned_because

    m = s.profile.manifest
    return "abandoned" if abandoned_because(s.profile.run_dir, m) else m.status


def compare_steps(a: ProfileSummary, b: ProfileSummary,
                  threshold: float = defaults.THRESHOLD) -> StepVerdict:
    """B's step time against A's (:class:`StepVerdict`)."""
    from podscale.core.errors import UsageError

    for label, s in (("A", a), ("B", b)):
        if s.step is None:
            raise UsageError(f"run {label} ({s.profile.run_dir.name}, {_status(s)}) has no "
                             "step to compare: no computation recurred (at least 3 calls on "
                             "every process)")
    if a.step is None or a.step != b.step:
        raise UsageError(f"the runs' steps differ ({a.step} vs {b.step}): compare profiles "
                         "of one program (or name it with --step)")
    sa, sb = job_steps(a), job_steps(b)
    if len(sa) < 3 or len(sb) < 3:
        raise UsageError(f"too few steps to compare ({len(sa)} and {len(sb)} after the "
                         f"first {WARMUP})")
    low, high = _interval(sa, sb)
    return _judge(a.step, float(np.median(sa)), float(np.median(sb)), low, high,
                  lost_per_step(a), lost_per_step(b), threshold)


def _judge(step: str, ma: float, mb: float, low: float, high: float, la: pd.Series,
           lb: pd.Series, threshold: float) -> StepVerdict:
    """The verdict on medians ``ma``, ``mb`` and the ratio's interval, and what the change
    is: a straggler change when one process's time lost per step (``la``, ``lb``) moved
    by at least half the change in the median, else uniform."""
    verdict = "slower" if low > 1 + threshold else "faster" if high < 1 - threshold else "~"
    moved = lb.subtract(la, fill_value=0.0)
    process = int(moved.abs().idxmax()) if len(moved) else None
    kind = "none"
    if verdict != "~":
        big = process is not None and abs(moved[process]) >= 0.5 * abs(mb - ma)
        kind = "straggler" if big else "uniform"
    return StepVerdict(step, ma, mb, mb / ma, low, high, verdict, kind, process,
                       float(la.get(process, 0.0)) if process is not None else 0.0,
                       float(lb.get(process, 0.0)) if process is not None else 0.0)


def _pooled_median(runs: list[np.ndarray], rng: np.random.Generator) -> float:
    """One bootstrap draw: rounds resampled, then each drawn round's steps."""
    picks = rng.integers(0, len(runs), len(runs))
    return float(np.median(np.concatenate([rng.choice(runs[i], len(runs[i]))
                                           for i in picks])))


def compare_rounds(a: list[ProfileSummary], b: list[ProfileSummary],
                   threshold: float = defaults.THRESHOLD, seed: int = 0) -> StepVerdict:
    """Arm B's step time against arm A's over interleaved launches (``podscale profile
    --env-b/--args-b``): the medians of each arm's pooled steps after the warm-up, the
    ratio's 95% interval from a two-level bootstrap (launches, then steps within each:
    launch-to-launch spread counts), and the straggler/uniform split of
    :func:`compare_steps` on each process's time lost per step, averaged over launches."""
    from podscale.core.errors import UsageError

    steps = {s.step for s in a + b}
    if None in steps:
        raise UsageError("no computation recurred in some launch (at least 3 calls on every "
                         "process): no step to compare")
    if len(steps) != 1:
        raise UsageError(f"the arms' steps differ ({', '.join(map(str, steps))}): an A/B "
                         "of one program (or name its step with --step)")
    sa, sb = [job_steps(s) for s in a], [job_steps(s) for s in b]
    if min(map(len, sa + sb)) < 3:
        raise UsageError(f"too few steps to compare in some launch (after the first "
                         f"{WARMUP})")
    rng = np.random.default_rng(seed)
    ratios = [_pooled_median(sb, rng) / _pooled_median(sa, rng) for _ in range(BOOT)]
    low, high = (float(x) for x in np.quantile(ratios, [0.025, 0.975]))

    def lost(runs: list[ProfileSummary]) -> pd.Series:  # per launch; 0 where never last
        return pd.concat([lost_per_step(s) for s in runs], axis=1).fillna(0.0).mean(axis=1)

    return _judge(str(next(iter(steps))), float(np.median(np.concatenate(sa))),
                  float(np.median(np.concatenate(sb))), low, high, lost(a), lost(b),
                  threshold)
