"""``podscale profile``: a user's program run unmodified on simulated hosts, each process
under ``podscale attach``, with admission, signals, the lifeline and records as for
``podscale run``; then its step table."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path

from podscale.attach import SUPERVISED
from podscale.core import envnames
from podscale.core import runfolder as rf
from podscale.core.case import Layout
from podscale.core.errors import UsageError, WorkerFailed
from podscale.core.lines import commented
from podscale.core.profilerecord import path_of
from podscale.frontend.captureoptions import CaptureOptions
from podscale.launch.options import DEFAULT, LaunchOptions
from podscale.launch.room import PROGRAM_BYTES, check_room, full_disk

NO_CAPTURE = CaptureOptions()


def check_script(script: Path) -> None:
    if not script.is_file():
        raise UsageError(f"{script}: no such program (a Python file to run)")
    try:
        compile(script.read_bytes(), str(script), "exec")
    except SyntaxError as exc:
        raise UsageError(f"{script}:{exc.lineno}: {exc.msg} (the program does not parse)") \
            from None


def run_name(script: Path) -> str:
    """A run's default name from its program's file: the stem transliterated to ASCII
    (``naïve-señal.py``: ``naive-senal``), with what a run name may not hold (spaces,
    ...) made dashes (``with space.py``: ``with-space``)."""
    import re
    import unicodedata

    plain = unicodedata.normalize("NFKD", script.stem).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9._-]+", "-", plain).strip("-.")[:80] or "program"


def _piped_stdin() -> int | None:
    """The front end's standard input for process 0 where it is piped or a file (``data |
    podscale profile prog.py``), as mpirun gives rank 0 its own; None for a terminal (a
    process in a session of its own cannot read it)."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    import os

    return None if os.isatty(fd) else fd


def script_spec(script: Path, args: list[str], step: str | None, launcher: str) -> dict:
    """What the manifest says of the program: its path, hash and arguments."""
    data = script.read_bytes()
    return {"mode": "profile", "script": str(script.resolve()),
            "sha256": hashlib.sha256(data).hexdigest(), "args": list(args), "step": step,
            "launcher": launcher}


def _admit(script: Path, layout: Layout, out: Path, launch: LaunchOptions,
           force: bool) -> None:
    """What refuses a profiled program before it starts: script, launcher, will it fit
    (:mod:`podscale.launch.fitting`), room."""
    from podscale.launch.fitting import check_program

    check_script(script)
    if launch.launcher not in ("local", "ray"):
        raise UsageError("podscale profile starts local processes or Ray actors; under "
                         f"{launch.launcher}, run `podscale attach` under it")
    if launch.launcher == "ray":
        return  # the Ray cluster's room is the driver's to check, before any actor
    processes = layout.processes
    check_program(layout, launch, force=force)
    if launch.note:
        print(commented(f"note: {launch.note}"), file=sys.stderr)
    check_room(out, processes * PROGRAM_BYTES,
               f"{processes} profiled process(es) (their records and traces)")


def profile(script: Path, args: list[str], *, layout: Layout, out: Path,
            launch: LaunchOptions = DEFAULT, name: str | None = None, force: bool = False,
            capture: CaptureOptions = NO_CAPTURE, rank_env: str | None = None,
            env: Mapping[str, str] | None = None) -> tuple[Path, int]:
    """Run ``script`` on ``layout.processes`` local processes, started and watched as
    ``launch`` says; the run directory and the program's exit code (the first failing
    process's). ``capture``: ``podscale attach``'s options on every process; ``rank_env``:
    a launcher's rank variables each process also gets (``k8s``, ``slurm``, ``mpi``);
    ``env``: variables each process gets on top of this one's (an A/B arm's)."""
    from podscale.core.records import Manifest, lifecycle
    from podscale.launch.local import Program, run_local
    from podscale.launch.runner import new_run_dir

    processes = layout.processes
    capture.check_port()  # before a run directory or a process: a port in use, one line
    _admit(script, layout, out, launch, force)
    run_dir = new_run_dir(out, name or run_name(script))
    spec = {**script_spec(script, args, capture.step, launch.launcher), **capture.figures,
            "rank_env": rank_env, "hosts": processes, "slices": layout.slices,
            "devices_per_host": None if launch.own_devices and launch.chips is None
            else layout.devices_per_host,
            "case_timeout": launch.case_timeout, "platform": launch.platform,
            **({"env": dict(env)} if env else {})}
    argv = ["-m", "podscale", "attach", "--run-dir", str(run_dir.resolve()),
            *capture.argv(), str(script.resolve()), *args]
    watched = [path_of(run_dir, i) for i in range(processes)]
    extra = {**(env or {}), SUPERVISED: "1",
             **({envnames.ARM_VARS: ",".join(env)} if env else {})}
    label = f"{script.name} on {layout.key}"
    try:
        with lifecycle(run_dir, Manifest.new(run_dir.name, spec, [layout.key])):
            if launch.launcher == "ray":
                _on_ray(layout, run_dir, launch, argv, watched, label, extra)
            else:
                run_local(layout, run_dir / "run.json", run_dir / rf.LOGS / layout.key,
                          case_timeout=launch.case_timeout, port=launch.port,
                          watched=watched, label=label,
                          program=Program(argv, _piped_stdin(), rank_env, extra,
                                          launch.own_devices),
                          chips=launch.chips)
    except WorkerFailed as exc:
        if exc.code is None or exc.code <= 0:
            raise WorkerFailed(f"{exc}; records so far kept in {run_dir}") from None
        print(f"podscale: {exc}", file=sys.stderr)
        return run_dir, exc.code
    full = full_disk(run_dir)
    if full is not None:  # the program ended well; podscale's records stop where it filled
        raise WorkerFailed(f"{script.name} on {layout.key}: {full}: the profile records "
                           f"stop where the disk filled; records so far kept in {run_dir}")
    return run_dir, 0


def _on_ray(layout: Layout, run_dir: Path, launch: LaunchOptions, argv: list[str],
            watched: list[Path], label: str, extra: dict[str, str]) -> None:
    """The program under ``podscale attach`` on one Ray actor per host
    (:mod:`podscale.launch.raydriver`): a simulated host keeps the program's own device
    count where it asks for it."""
    from podscale.launch.cluster import run_external

    if launch.own_devices and launch.simulate_cpu:
        extra = {**extra, envnames.CPU_DEVICES: envnames.PROGRAMS_OWN}
    run_external(layout, run_dir / "run.json", run_dir / rf.LOGS / layout.key, launch,
                 watched=watched, label=label, command=argv, env=extra, home=run_dir)


def replay_alone(run_dir: Path, hosts: int, devices_per_host: int, rounds: int,
                 options: LaunchOptions, force: bool = False) -> Path | None:
    """Replay each distinct collective of the captured step's program (saved by process 0
    at its first capture) alone, on the same layout, in ``rounds`` fresh launches started
    as ``options`` says (local ones admitted as ``podscale run``'s are, unless ``force``):
    the run ``RUN/<stamp>-replay``, or None when the program has no collective."""
    from podscale.analysis import load_run
    from podscale.core.case import Settings
    from podscale.frontend.actions import wrong_results
    from podscale.frontend.replay import collective_cases
    from podscale.launch.runner import execute

    if not list(run_dir.glob(rf.hlo_glob())):
        print("# replay: no step program was saved (no capture window opened)")
        return None
    cases, _ = collective_cases(run_dir, hosts, devices_per_host, (), Settings(),
                                scaling=False)
    if not cases:
        print("# replay: the step's program has no collective to replay")
        return None
    from podscale.launch.fitting import check_cases

    check_cases(cases, options, force=force)
    rep = execute(cases, run_dir, "replay", options, spec={"replay_of": run_dir.name},
                  rounds=rounds, progress=None)
    if load_run(rep).wrong:
        raise wrong_results(load_run(rep))
    return rep


def saved_layout(run_dir: Path) -> tuple[int, int]:
    """(hosts, devices per host) of the step program a profiled run saved (``RUN/hlo``);
    a one-line error when it saved none, or programs of more than one layout."""
    import json
    import re

    from podscale.core.manifest import run_kind

    if run_kind(run_dir) != "profile":
        raise UsageError(f"{run_dir}: not a run of podscale profile or podscale attach "
                         "(no profile/ folder)")
    saved = sorted(run_dir.glob(rf.hlo_glob()))
    if not saved:
        raise UsageError(f"{run_dir}: no step program was saved (it is saved at the first "
                         "capture: run with --profile-steps A:B or --profile-every N)")
    layouts = sorted({p.parent.name for p in saved})
    if len(layouts) > 1:
        raise UsageError(f"{run_dir}: step programs of {len(layouts)} layouts "
                         f"({', '.join(layouts)}); expected one")
    info = json.loads(Path(str(saved[0]).removesuffix(".hlo.txt") + ".json").read_text())
    if "hosts" in info:
        return int(info["hosts"]), int(info["devices_per_host"])
    m = re.fullmatch(r"h(\d+)xd(\d+)", layouts[0])  # saved before the sidecar said
    if m is None:
        raise UsageError(f"{run_dir}: cannot tell the layout of hlo/{layouts[0]}")
    return int(m[1]), int(m[2])


def ab_program(script: Path, arms: Mapping[str, tuple[list[str], dict[str, str]]],
               rounds: int, *, layout: Layout, out: Path, name: str | None,
               launch: LaunchOptions = DEFAULT, capture: CaptureOptions = NO_CAPTURE
               ) -> tuple[Path, list[Path], list[Path]]:
    """Arms ``A`` and ``B`` of a program (each its arguments and extra environment),
    ``rounds`` launches each, alternating (A B, B A, ...): the folder holding them and
    each arm's run directories; a failing launch stops it."""
    from podscale.launch.runner import new_run_dir

    if rounds < 2:
        raise UsageError("an A/B of a program compares launches: --rounds must be >= 2")
    folder = new_run_dir(out, f"{name or run_name(script)}-ab")
    runs: dict[str, list[Path]] = {"A": [], "B": []}
    for r in range(rounds):
        for arm in ("A", "B") if r % 2 == 0 else ("B", "A"):
            args, env = arms[arm]
            run_dir, code = profile(script, args, layout=layout, out=folder, launch=launch,
                                    name=f"{arm}{r}", capture=capture, env=env)
            if code:
                raise WorkerFailed(f"arm {arm}, launch {r + 1}: the program exited with "
                                   f"{code}; runs so far kept in {folder}")
            runs[arm].append(run_dir)
    return folder, runs["A"], runs["B"]
