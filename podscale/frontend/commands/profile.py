"""``podscale profile [options] SCRIPT [ARGS...]``: run your own multi-controller program,
unmodified, on ``--hosts`` simulated hosts (each a process calling the script's own
``jax.distributed.initialize()``), record every compiled computation's calls on every
process, and print the step table: per process, the steps, their median and p90, how
often it arrived last and the time that cost the job. Options go before SCRIPT;
everything after it is the script's own. The exit code is the script's."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core import defaults
from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.argtypes import launcher_words, port, seconds

if TYPE_CHECKING:
    from podscale.core.case import Layout
    from podscale.frontend.profiling import CaptureOptions
    from podscale.launch.options import LaunchOptions


def register(sub: Subparsers) -> None:
    p = sub.add_parser("profile", help="run your own program unmodified on simulated hosts "
                                       "and tabulate its steps", description=__doc__)
    p.add_argument("--hosts", type=int, default=None,
                   help="processes (default: 2 simulated hosts; 1 on this machine's chips); "
                        "with --slices, per slice")
    p.add_argument("--slices", type=int, default=1,
                   help="simulated slices of --hosts processes each, with the MEGASCALE_* "
                        "variables a multi-slice job's processes get")
    p.add_argument("--devices-per-host", type=int, default=None,
                   help="CPU devices per simulated process (default: as many as the "
                        "program asks for itself in XLA_FLAGS' "
                        "--xla_force_host_platform_device_count, else 1; on this "
                        "machine's chips, one process sees every chip; several split them)")
    p.add_argument("--platform", choices=["auto", "cpu", "tpu", "gpu"], default="auto",
                   help="auto: this machine's TPU or GPU chips where JAX finds them, else "
                        "hosts simulated on the CPU; cpu: simulated; tpu, gpu: those chips "
                        "(default: auto)")
    p.add_argument("--out", type=Path, default=defaults.OUT,
                   help="folder the run directory is made in")
    p.add_argument("--name", default=None, help="run name (default: the script's stem)")
    p.add_argument("--timeout", type=seconds, default=defaults.CASE_TIMEOUT,
                   help="stop every process when none records anything for this long")
    p.add_argument("--coordinator-port", dest="port", type=port, default=0,
                   help="the coordinator's port on 127.0.0.1 (0: any free one)")
    p.add_argument("--force", action="store_true",
                   help="start even when the processes would not fit in memory")
    _launcher_args(p)
    p.add_argument("--rank-env", choices=("k8s", "slurm", "mpi"), default=None,
                   help="also give each process its rank as this launcher would "
                        "(JOB_COMPLETION_INDEX; SLURM_PROCID/NTASKS; OMPI_COMM_WORLD_RANK/"
                        "SIZE), for a program that reads it itself")
    from podscale.frontend.commands.captureargs import add_capture_args
    from podscale.frontend.commands.gridargs import add_format

    add_capture_args(p)
    p.add_argument("--replay", action="store_true",
                   help="then replay each collective of the captured step's program alone "
                        "on the same layout: its time in the step against alone (needs a "
                        "capture window)")
    p.add_argument("--replay-rounds", type=int, default=defaults.ROUNDS, metavar="R",
                   help="fresh launches of the replay, for the spread of each factor")
    p.add_argument("--env-a", action="append", default=None, metavar="NAME=VALUE",
                   help="an A/B of the program: arm A's processes set this (repeatable)")
    p.add_argument("--env-b", action="append", default=None, metavar="NAME=VALUE",
                   help="an A/B of the program: arm B's processes set this (repeatable)")
    p.add_argument("--args-b", default=None, metavar="'ARGS'",
                   help="an A/B of the program: arm B's own arguments (one quoted string; "
                        "arm A runs with the ARGS after SCRIPT)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"an A/B: launches per arm, alternating A B, B A, ... (default "
                        f"{defaults.ROUNDS + 1})")
    add_format(p)
    p.add_argument("script", type=Path, help="the program (a Python file)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    p.set_defaults(func=run, own_options=sorted(
        {s for a in p._actions for s in a.option_strings if s.startswith("--")}))


def _launcher_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--launcher", choices=("local", "ray"), default="local",
                   help="local: one process per host on this machine; ray: one Ray actor "
                        "per host (RAY_ADDRESS's cluster, else a local one started and "
                        "stopped for the run)")
    p.add_argument("--launcher-args", default="",
                   help="for ray: --address A, --cpus-per-process C (default 1), "
                        "--tpus-per-process T, --gpus-per-process G")


def layout_of(args: argparse.Namespace) -> Layout:
    from podscale.core.case import Layout
    from podscale.core.errors import UsageError

    hosts = args.hosts if args.hosts is not None else 1 if launch_of(args).chips else 2
    devices = 1 if args.devices_per_host is None else args.devices_per_host
    if hosts < 1 or devices < 1 or args.slices < 1:
        raise UsageError("--hosts, --slices and --devices-per-host must be >= 1")
    return Layout(hosts * args.slices, devices, slices=args.slices)


def launch_of(args: argparse.Namespace) -> LaunchOptions:
    """The profiled processes' launch: local processes or Ray actors, with the command's
    timeout, port and platform (this machine's chips, or simulated hosts)."""
    from podscale.launch.options import LaunchOptions
    from podscale.launch.platform import choose

    if getattr(args, "launch", None) is None:  # chosen once: finding chips opens them
        choice = choose(args.platform, args.launcher)
        args.launch = LaunchOptions(launcher=args.launcher,
                                    launcher_args=launcher_words(args.launcher_args),
                                    case_timeout=args.timeout, port=args.port,
                                    simulate_cpu=choice.simulate_cpu, chips=choice.chips,
                                    note=choice.note,
                                    own_devices=args.devices_per_host is None)
    return args.launch


def run(args: argparse.Namespace) -> int:
    from podscale.core.errors import UsageError
    from podscale.frontend.commands.captureargs import capture_of
    from podscale.frontend.profiling import profile

    capture = capture_of(args)  # malformed windows: refused before any process starts
    if args.replay and not capture.step_window:
        raise UsageError("--replay compares each collective's time in the captured steps "
                         "with its time alone: give a step window (--profile-steps A:B "
                         "or --profile-every N; an anomaly's capture saves no program)")
    if args.replay_rounds < 1:
        raise UsageError(f"--replay-rounds must be >= 1, got {args.replay_rounds}")
    theirs = [a for a in args.args if a.partition("=")[0] in args.own_options]
    if theirs:  # argparse hands everything after SCRIPT to the program, as python does
        print(f"# note: {', '.join(theirs)} after {args.script.name} go(es) to the program, "
              "not to podscale: podscale's options come before SCRIPT", file=sys.stderr)
    if args.env_a or args.env_b or args.args_b is not None or args.rounds is not None:
        return ab(args, capture)
    run_dir, code = profile(args.script, args.args, layout=layout_of(args), out=args.out,
                            launch=launch_of(args), name=args.name, force=args.force,
                            capture=capture, rank_env=args.rank_env)
    from podscale.frontend.actions import show_profile
    from podscale.frontend.seedcheck import echo_outputs

    if args.replay and code == 0:
        from podscale.frontend.profiling import replay_alone, saved_layout

        hosts, devices = saved_layout(run_dir)  # the devices the program had
        replay_alone(run_dir, hosts, devices, args.replay_rounds, launch_of(args), args.force)

    if args.format == "text":  # the program's own output first, process by process
        echo_outputs(run_dir, headed=True)
    show_profile(run_dir, args.format, args.step)

    print(f"# run directory: {run_dir}", file=sys.stdout if args.format == "text" else sys.stderr)
    return code


def ab(args: argparse.Namespace, capture: CaptureOptions) -> int:
    """The program as arms A and B, launches alternating, and the verdict on its step."""
    import shlex

    import numpy as np

    from podscale.analysis.profile.summary import summarize_profile
    from podscale.analysis.units import time_h
    from podscale.analysis.verdicts.profilecompare import compare_rounds, job_steps, replaced
    from podscale.core.errors import UsageError
    from podscale.core.lines import commented
    from podscale.frontend.ab import arm_notes, parse_env
    from podscale.frontend.profiling import ab_program, check_script

    if args.replay:
        raise UsageError("--replay is for one run of the program, not an A/B")
    env_a, env_b = parse_env(args.env_a, "--env-a"), parse_env(args.env_b, "--env-b")
    try:
        args_b = args.args if args.args_b is None else shlex.split(args.args_b)
    except ValueError as exc:
        raise UsageError(f"bad --args-b {args.args_b!r}: {exc} (one quoted string of the "
                         "program's arguments)") from None
    check_script(args.script)
    for note in arm_notes(env_a, env_b, cpu=launch_of(args).simulate_cpu,
                          same_args=list(args.args) == list(args_b)):
        print(f"# note: {note}")
    folder, runs_a, runs_b = ab_program(
        args.script, {"A": (args.args, env_a), "B": (args_b, env_b)},
        defaults.ROUNDS + 1 if args.rounds is None else args.rounds, layout=layout_of(args),
        out=args.out, name=args.name, launch=launch_of(args), capture=capture)
    a = [summarize_profile(r, args.step) for r in runs_a]
    b = [summarize_profile(r, args.step) for r in runs_b]
    v = compare_rounds(a, b)
    lost = []
    for label, env, argv, runs in (("A", env_a, args.args, a), ("B", env_b, args_b, b)):
        shown = " ".join(f"{k}={w}" for k, w in env.items()) or "(no extra environment)"
        medians = ", ".join(time_h(float(np.median(job_steps(s)))) for s in runs)
        print(f"# {label}: {shlex.join(argv) or '(no arguments)'}  {shown}; median step "
              f"per launch: {medians}")
        said = list(dict.fromkeys(r for s in runs for r in replaced(s)))
        lost += [f"arm {label}: {r}" for r in said]
    for line in lost:
        print(commented(f"note: {line}"))
    if lost:  # an arm did not run what it was to test: no experiment, no verdict
        print(f"{v.step}: no verdict: an arm's variable was replaced by the program, so "
              "the arms did not differ as asked (set it where the program reads it)")
    else:
        print(v.sentence())
        print(ops_said(a, b))
    print(f"# runs: {folder}")
    return 0


def ops_said(a: list, b: list) -> str:
    """The ops of the step that moved between the arms, from each launch's capture window
    (judged as cases are), or how to get them."""
    from podscale.analysis.render.text import op_changes_text
    from podscale.analysis.verdicts.opdiff import judge, per_launch

    pa, pb = per_launch(a), per_launch(b)
    if not pa or not pb:
        return ("# ops: no capture window in the launches (--profile-steps A:B captures the "
                "step's ops in each)")
    return op_changes_text(judge(pa, pb, threshold=defaults.THRESHOLD, alpha=defaults.ALPHA),
                           True, source="per step from each launch's capture window")
