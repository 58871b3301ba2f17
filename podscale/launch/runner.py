"""A run: its directory, manifest and per-launch plans, executed launch by launch.

Run directory::

    run.json                       manifest (schema podscale.run/4)
    plans/<layout>.json            what every process of a launch runs (podscale.plan/1)
    records/<layout>/process-<i>.jsonl
    logs/<layout>/process-<i>.log
"""

from __future__ import annotations

import contextlib
import itertools
import re
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from podscale.core import runfolder as rf
from podscale.core.case import Case, Layout
from podscale.core.errors import Interrupted, UsageError, WorkerFailed, interrupt_signal
from podscale.core.lines import commented
from podscale.core.plan import LayoutPlan, Plan, launches
from podscale.core.records import Manifest, lifecycle
from podscale.launch.cluster import run_external
from podscale.launch.local import run_local
from podscale.launch.options import DEFAULT, LaunchOptions
from podscale.launch.progress import Progress
from podscale.launch.room import check_room, records_bytes

#: the platform notes this command has said (a command of several launches says each once)
SAID: set[str] = set()

def check_name(name: str) -> str:
    """A run name is one path component of letters, digits, ``.``, ``_`` and ``-``."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name or ""):
        raise UsageError(f"bad run name {name!r}: use letters, digits, '.', '_' and '-' "
                         "(one path component, at most 100 characters)")
    return name


def default_name(workloads: Iterable[str], limit: int = 90) -> str:
    """A run's name where none was given: its workloads joined by ``-``, as many as fit in
    ``limit`` characters and then how many more (a suite file of eleven workloads would
    exceed a name's 100; ``limit`` leaves room for an arm's ``-A``)."""
    names = list(dict.fromkeys(workloads))
    for k in range(len(names), 0, -1):
        more = len(names) - k
        name = "-".join(names[:k]) + (f"-and-{more}-more" if more else "")
        if len(name) <= limit:
            return name
    return f"{len(names)}-workloads"


def new_run_dir(out: Path, name: str) -> Path:
    check_name(name)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(out) / f"{stamp}-{name}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise UsageError(f"cannot create run directory under {out}: {exc.strerror}") from None
    return path


def launch_label(layouts: Sequence[LayoutPlan]) -> str:
    keys = [lp.layout.key for lp in layouts]
    return f"layout {keys[0]}" if len(keys) == 1 else f"layouts {'+'.join(keys)}"


def execute(cases: Sequence[Case], out: Path, name: str,
            options: LaunchOptions = DEFAULT, *, spec: dict | None = None,
            mode: str = "bench", layouts: Sequence[Layout] = (),
            progress: Callable[[str], None] | None = print, reuse: bool = True,
            rounds: int = 1) -> Path:
    """Run every case (``mode="seed"``: the reference listing on ``layouts``); the manifest
    records how the run ended, and every failure names the run directory it kept.
    Arguments as for :func:`execute_arms`."""
    return execute_arms(cases, out, {name: {}}, options, spec=spec, mode=mode,
                        layouts=layouts, progress=progress, reuse=reuse, rounds=rounds)[0]


def execute_arms(cases: Sequence[Case], out: Path, arms: dict[str, dict[str, str]],
                 options: LaunchOptions = DEFAULT, *, spec: dict | None = None,
                 mode: str = "bench", layouts: Sequence[Layout] = (),
                 progress: Callable[[str], None] | None = print, reuse: bool = True,
                 rounds: int = 1) -> list[Path]:
    """One run per arm (run name -> environment its processes set); for every round and
    process group each arm launches in turn, alternating (A B, B A, ...) so drift falls on
    every arm alike. ``options``: how processes start (:class:`LaunchOptions`); ``spec``:
    the grid, for the manifest; ``rounds``: fresh launches of every group, interleaved;
    ``reuse``: a layout's smaller device counts run in the same processes."""
    if rounds < 1:
        raise UsageError(f"--rounds must be >= 1, got {rounds}")
    groups = (launches(cases, reuse) if mode == "bench"
              else [(k, [LayoutPlan(k)]) for k in layouts])
    check_room(out, records_bytes(cases, rounds, len(arms)),
               f"its records ({len(cases)} cases x {rounds} round(s) x {len(arms)} arm(s))")
    run_dirs = [new_run_dir(out, name) for name in arms]
    ids = [d.name for d in run_dirs]
    envs = [tuple(sorted(env.items())) for env in arms.values()]
    in_order = [g for _ in range(rounds) for _, g in groups for _ in arms]  # launches
    bar = Progress([c for g in in_order for lp in g for c in lp.cases], progress,
                   launch_sizes=[sum(len(lp.cases) for lp in g) for g in in_order],
                   launch_weights=[max(lp.layout.processes for lp in g) for g in in_order])
    try:
        with _kept_on_failure(run_dirs), contextlib.ExitStack() as stack:
            common = {**(spec or {}), "mode": mode, "case_timeout": options.case_timeout,
                      "rounds": rounds, "launcher": options.launcher,
                      "launcher_args": list(options.launcher_args),
                      "platform": options.platform,
                      **({"chips": asdict(options.chips)} if options.chips else {}),
                      **({"platform_note": options.note} if options.note else {})}
            if options.note and options.note not in SAID:  # once per command
                SAID.add(options.note)
                bar.say(commented(f"note: {options.note}"))
            keys = [lp.layout.key for _, group in groups for lp in group]
            for run_dir, env in zip(run_dirs, envs):
                others = [i for i in ids if i != run_dir.name]
                spec_ = {**common, "env": dict(env),
                         **({"interleaved_with": others} if others else {})}
                stack.enter_context(lifecycle(run_dir, Manifest.new(run_dir.name, spec_, keys)))
            order = list(zip(run_dirs, envs))
            for turn, (round_, (launched, group)) in enumerate(
                    itertools.product(range(rounds), groups)):
                for run_dir, env in (order if turn % 2 == 0 else order[::-1]):
                    arm = f" [{run_dir.name}]" if len(arms) > 1 else ""
                    _launch(run_dir, launched, group, mode, bar, round_, rounds, env, arm,
                            options)
    finally:
        bar.close()
    return run_dirs


@contextlib.contextmanager
def _kept_on_failure(run_dirs: list[Path]) -> Iterator[None]:
    """A failure's message ends naming the run directories that keep its records."""
    kept = ", ".join(map(str, run_dirs))
    try:
        yield
    except WorkerFailed as exc:
        raise WorkerFailed(f"{exc}; records so far kept in {kept}") from None
    except UsageError as exc:
        raise UsageError(f"{exc}; records so far kept in {kept}") from None
    except KeyboardInterrupt as exc:
        signum = interrupt_signal(exc)
        raise Interrupted(f"interrupted by {signal.Signals(signum).name}; all workers "
                          f"stopped; records so far kept in {kept}", signum) from None


def _launch(run_dir: Path, launched: Layout, group: list[LayoutPlan], mode: str,
            bar: Progress, round_: int, rounds: int, env: tuple[tuple[str, str], ...],
            arm: str, options: LaunchOptions) -> None:
    started = time.monotonic()
    label = launch_label(group)
    which = f", round {round_ + 1}/{rounds}" if rounds > 1 else ""
    bar.say(f"# {label}{arm}: {launched.processes} process(es) x {launched.devices_per_host} "
            f"device(s), {sum(len(lp.cases) for lp in group)} case(s){which}")
    plan = Plan(str(run_dir.resolve()), launched, tuple(group), mode=mode,
                trace_dir=options.trace_dir, round=round_, env=env, hlo=options.hlo,
                program=options.program)
    suffix = f"-round{round_}" if round_ else ""  # round 0 keeps the plain names
    path = plan.write(run_dir / "plans" / f"{launched.key}{suffix}.json")
    watched = [rf.records_file(run_dir, lp.layout.key, i)
               for lp in group for i in range(lp.layout.processes)]
    lead = [rf.records_file(run_dir, lp.layout.key, 0) for lp in group]
    bar.start_launch(lead)
    logs = run_dir / rf.LOGS / f"{launched.key}{suffix}"
    if options.launcher == "local":
        run_local(launched, path, logs, case_timeout=options.case_timeout, port=options.port,
                  watched=watched, label=label, on_poll=bar.poll, chips=options.chips)
    else:
        run_external(launched, path, logs, options, watched=watched, label=label,
                     on_poll=bar.poll, home=run_dir)
    bar.poll()
    bar.say(f"#   done in {time.monotonic() - started:.1f}s")
