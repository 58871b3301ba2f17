"""The options several commands share, declared (``add_grid_args``, ``add_verdict_args``,
``add_format``) and turned into values where argparse stops: grids — the command line
overrides a suite file's sweeps, which override ``GRID_DEFAULTS`` — the launcher options
as one :class:`LaunchOptions`, a prepared run, a verdict."""

from __future__ import annotations

import argparse
import math
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podscale.core import defaults
from podscale.core.case import DTYPES, Settings
from podscale.core.errors import UsageError
from podscale.core.grid import Grid
from podscale.core.parsing import parse_int_list, parse_local_axes, parse_names, parse_sizes
from podscale.frontend.commands.argtypes import (
    check_elements,
    launcher_words,
    port,
    seconds,
)
from podscale.launch.options import LAUNCHERS, LaunchOptions

if TYPE_CHECKING:
    from podscale.frontend.actions import Prepared

#: the default study's grid, shipped with the built-in workloads
STUDY_FILE = Path(str(resources.files("podscale.suites").joinpath("study.toml")))
GRID_DEFAULTS = defaults.GRID


def launch_options(args: argparse.Namespace, **fields: Any) -> LaunchOptions:
    """The command line's :class:`LaunchOptions` (validated), with ``fields`` set; the
    platform chosen once per command (finding chips opens them)."""
    from podscale.launch.platform import choose

    if getattr(args, "platform_choice", None) is None:
        args.platform_choice = choose(args.platform, args.launcher)
    choice = args.platform_choice
    return LaunchOptions(launcher=args.launcher,
                         launcher_args=launcher_words(args.launcher_args),
                         simulate_cpu=choice.simulate_cpu, chips=choice.chips,
                         note=choice.note, case_timeout=args.case_timeout,
                         port=getattr(args, "coordinator_port", 0), **fields)


def _cli_params(words: list[str] | None) -> dict[str, str]:
    out = {}
    for word in words or []:
        name, eq, values = word.partition("=")
        if not eq or not name.strip() or not values.strip():
            raise UsageError(f"bad --param {word!r}: use NAME=VALUE[,VALUE...]")
        out[name.strip()] = values
    return out


def grids(args: argparse.Namespace, default_file: Path | None = None) -> list[dict]:
    """Grid values per sweep: command line, else the suite file (one grid, or one per
    ``[[sweep]]``), else GRID_DEFAULTS. Command-line options apply to every sweep."""
    from podscale.frontend import suitefile

    path = args.suite_file or default_file
    out = []
    for sweep in suitefile.load(path) if path else [{}]:
        values = dict(GRID_DEFAULTS, **sweep)
        values["params"] = {**values["params"], **_cli_params(getattr(args, "param", None))}
        for name in ("axes", "group"):  # --axes A,B and --group-sizes N,M: shortcuts
            given = getattr(args, name if name == "axes" else "group_sizes", None)
            if given:
                values["params"][name] = given
        for key in GRID_DEFAULTS:
            if key != "params" and getattr(args, key, None) is not None:
                values[key] = getattr(args, key)
        out.append(values)
    return out


def grids_from_args(args: argparse.Namespace,
                    default_file: Path | None = None) -> tuple[list[Grid], int]:
    """The run's grids (one per sweep) and its number of rounds, from one read of the
    suite file."""
    values = grids(args, default_file)
    return [_grid(g, args) for g in values], _rounds(values)


def _rounds(values: list[dict]) -> int:
    """Independent repetitions of the whole run (one value for every sweep)."""
    found = {g["rounds"] for g in values}
    if len(found) > 1:
        raise UsageError(f"rounds differ between sweeps ({sorted(found)}): set it once, at "
                         "the top of the suite file")
    (rounds,) = found
    if rounds < 1:
        raise UsageError(f"--rounds must be >= 1, got {rounds}")
    return rounds


def _grid(g: dict, args: argparse.Namespace) -> Grid:
    if args.profile and g["traced_iters"] < 1:
        raise UsageError(f"--traced-iters must be >= 1 with --profile, got {g['traced_iters']}")
    if not g["workloads"]:
        raise UsageError("name the workloads (e.g. dot,psum; podscale list)")
    params: dict[str, tuple[str | int, ...]] = {
        k: tuple(str(v) for v in str(vals).split(",") if v.strip())
        for k, vals in g["params"].items()}
    if g["sizes"] is not None:
        params["size"] = tuple(parse_sizes(str(g["sizes"])))  # typed once; Param.parse keeps ints
    local_axes = parse_local_axes(g["local_axes"]) if g["local_axes"] else ()
    dph = g["devices_per_host"]
    if local_axes and getattr(args, "devices_per_host", None) is None:
        dph = str(math.prod(n for _, n in local_axes))
    return Grid(
        workloads=tuple(w.strip() for w in str(g["workloads"]).split(",") if w.strip()),
        hosts=tuple(parse_int_list(str(g["hosts"]), "hosts")),
        devices_per_host=tuple(parse_int_list(str(dph), "devices-per-host")),
        slices=tuple(parse_int_list(str(g.get("slices", 1)), "slices")),
        local_axes=local_axes,
        dtypes=tuple(parse_names(g["dtypes"], "dtype", DTYPES)),
        variants=tuple(v.strip() for v in str(g["variants"] or "").split(",") if v.strip()),
        params=tuple(params.items()),
        settings=Settings(iters=g["iters"], warmup=g["warmup"], sync=g["sync"],
                          timing=g["timing"],
                          traced_iters=g["traced_iters"] if args.profile else 0,
                          check_elements=check_elements(g["check_elements"])),
    )


def _layout_args(p: argparse.ArgumentParser) -> None:
    """The layout's options: hosts, slices, devices per host, the local mesh split."""
    p.add_argument("--hosts", help="process (simulated host) counts, e.g. 1,2,4; with "
                                   "--slices, per slice "
                                   f"(default: {GRID_DEFAULTS['hosts']})")
    p.add_argument("--slices", help="slices, e.g. 1,2,4: each of --hosts processes, joined "
                                    "across by a dcn mesh axis (a multi-slice job; "
                                    f"default: {GRID_DEFAULTS['slices']})")
    p.add_argument("--devices-per-host", dest="devices_per_host",
                   help="devices per process, e.g. 1,2,4 "
                        f"(default: {GRID_DEFAULTS['devices_per_host']})")
    p.add_argument("--local-axes", dest="local_axes", default=None, metavar="NAME=N,...",
                   help="split each host's devices into named mesh axes, e.g. chip=2,core=2 "
                        "(mesh hosts x chip x core; default: one axis 'local')")


def add_grid_args(p: argparse.ArgumentParser, rounds: int | None = None) -> None:
    """Grid options; None means: from --suite-file, else GRID_DEFAULTS (``rounds``: the
    command's own default number of rounds, for the help)."""
    p.add_argument("--suite-file", type=Path, default=None,
                   help="TOML parameter grid (the study's: podscale/suites/study.toml); "
                        "options below override it")
    p.add_argument("--sizes", help="the workloads' size parameter, comma-separated: 4096, "
                                   "64K, 1M, 4KiB, 2**20, or sweeps BEGIN:END:xFACTOR")
    p.add_argument("-p", "--param", action="append", default=None, metavar="NAME=V1,V2",
                   help="values of a workload parameter (repeatable; see podscale list)")
    p.add_argument("--axes", help="collectives: mesh axes to run over, e.g. hosts,local,all "
                                  "(--param axes=...)")
    p.add_argument("--group-sizes", dest="group_sizes", metavar="N,...",
                   help="collectives: participants per group, e.g. 2,4,8,all: groups of N "
                        "consecutive ranks along the axes, all at once (N:strided: every "
                        "(n/N)-th rank); one job, several n (--param group=...)")
    _layout_args(p)
    p.add_argument("--dtypes", help=f"compute dtypes, of {', '.join(DTYPES)} "
                                    f"(default: {GRID_DEFAULTS['dtypes']})")
    p.add_argument("--variants", help="API variants, e.g. pmap,shard_map (default: every "
                                      "variant each workload supports)")
    p.add_argument("--iters", type=int, help="timed iterations per case and round "
                                              f"(default: {GRID_DEFAULTS['iters']})")
    p.add_argument("--warmup", type=int, help="untimed iterations before the timed ones "
                                              f"(default: {GRID_DEFAULTS['warmup']})")
    p.add_argument("--rounds", type=int, default=None,
                   help="independent repetitions of every case, each a fresh launch of the "
                        f"processes, interleaved (default: {rounds or GRID_DEFAULTS['rounds']}; "
                        "podscale compare needs >= 2 per run to judge a change against "
                        "between-launch variation)")
    p.add_argument("--sync", choices=["each", "once"],
                   help="barrier before each timed iteration, or once before the loop "
                        f"(default: {GRID_DEFAULTS['sync']})")
    p.add_argument("--timing", metavar="METHOD,...",
                   help="how each case is timed, any of: each (one call, waited on: the "
                        "latency a program sees), chain (back-to-back calls, one wait: "
                        "nccl-tests), device (each execution's device time from a profiler "
                        "trace); tables take their time from device, else chain, else each "
                        f"(default: {GRID_DEFAULTS['timing']})")
    p.add_argument("--profile", action="store_true", help="after the timed iterations, "
                   "trace a separate pass per process")
    p.add_argument("--traced-iters", dest="traced_iters", type=int,
                   help="iterations in the traced pass "
                        f"(default: {GRID_DEFAULTS['traced_iters']})")
    p.add_argument("--trace-dir", default=None,
                   help="with --profile on real hosts: each host writes its trace straight "
                        "to DIR/<layout> (shared path or gs://), named by host")
    add_check_args(p)
    p.add_argument("--out", type=Path, default=defaults.OUT,
                   help="folder the run directory is made in")
    p.add_argument("--name", default=None, help="run name (default: the workloads)")
    _add_run_args(p)


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--case-timeout", type=seconds, default=defaults.CASE_TIMEOUT,
                   help="stop the run when no process makes progress for this many seconds")
    p.add_argument("--coordinator-port", type=port, default=0,
                   help="coordinator port on 127.0.0.1 (default: any free port; a busy one "
                        "is replaced by a free one)")
    p.add_argument("--no-reuse", dest="reuse", action="store_false",
                   help="start fresh processes for every layout instead of running smaller "
                        "devices-per-host layouts on device subsets of the same processes")
    add_launcher_args(p)


def add_check_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check-elements", dest="check_elements", metavar="K|all",
                   help="elements per device the float check compares on the timed inputs, "
                        "drawn from the case (the exact pass checks every element of its own "
                        f"inputs); all: every one (default: {GRID_DEFAULTS['check_elements']})")


def add_launcher_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="start even when the processes' estimated memory exceeds what this "
                        "machine has available (local launcher)")
    p.add_argument("--launcher", choices=list(LAUNCHERS), default="local",
                   help="local: one process per simulated host on this machine; mpirun/srun: "
                        "that launcher starts the workers, which auto-detect the cluster; "
                        "ray: one Ray actor per host (RAY_ADDRESS's cluster, else a local "
                        "one started and stopped for the run)")
    p.add_argument("--launcher-args", default="",
                   help="extra words for mpirun/srun, e.g. \"--mca btl_tcp_if_include lo\"; "
                        "for ray: --address A, --cpus-per-process C (default 1), "
                        "--tpus-per-process T, --gpus-per-process G")
    p.add_argument("--platform", choices=["auto", "cpu", "tpu", "gpu"], default="auto",
                   help="auto: this machine's TPU or GPU chips where JAX finds them, else "
                        "hosts simulated on the CPU (with mpirun/srun: what the cluster's "
                        "hosts have); cpu: simulate --devices-per-host CPU devices per "
                        "process with gloo; tpu, gpu: those chips, refused where there are "
                        "none (default: auto)")


def add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "csv", "json"), default="text",
                   help="text: tables for people; csv or json: every summary column at full "
                        "precision for scripts (progress then goes to stderr)")


def prepared_of(args: argparse.Namespace, default_file: Path | None = None) -> Prepared:
    """The run :func:`add_grid_args`' options ask for (:func:`podscale.frontend.actions
    .prepare`), every case and option validated before any process starts; on this
    machine's chips, the layouts of the grid the command line did not give fitted to
    them (:func:`podscale.launch.chips.fit_layouts`)."""
    from podscale.frontend.actions import prepare

    gs, rounds = grids_from_args(args, default_file)
    options = launch_options(args, trace_dir=args.trace_dir if args.profile else None)
    if options.chips is not None:
        from podscale.launch.chips import fit_layouts

        gs, said = fit_layouts(gs, options.chips, args.hosts is not None,
                               args.devices_per_host is not None)
        if said:
            from dataclasses import replace

            options = replace(options, note="; ".join(n for n in (options.note, said) if n))
    if args.trace_dir and args.launcher == "local" and max(h for g in gs for h in g.hosts) > 1:
        raise UsageError("--trace-dir names trace files by host; the local launcher's processes "
                         "share one host (leave it out: traces go to the run directory)")
    return prepare(gs, rounds, options, force=args.force, reuse=args.reuse,
                   name=getattr(args, "name", None))
