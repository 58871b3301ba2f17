"""Command-line grid options -> grids: the command line overrides a suite file's sweeps,
which override ``GRID_DEFAULTS``; and the launcher options -> keyword arguments."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from podscale.core.case import (
    DTYPES,
    Settings,
    parse_int_list,
    parse_local_axes,
    parse_names,
    parse_sizes,
)
from podscale.core.errors import UsageError
from podscale.core.grid import Grid

STUDY_FILE = Path(__file__).resolve().parents[2] / "suites" / "study.toml"
GRID_DEFAULTS = {"workloads": None, "sizes": None, "hosts": "1,2", "devices_per_host": "1,2",
                 "local_axes": None, "dtypes": "float32", "variants": None, "iters": 20,
                 "warmup": 3, "sync": "each", "traced_iters": 3, "rounds": 3, "params": {}}


def launch_kwargs(args: argparse.Namespace) -> dict:
    import shlex

    platform = args.platform or ("cpu" if args.launcher == "local" else "auto")
    if args.launcher == "local" and platform != "cpu":
        raise UsageError("the local launcher simulates hosts on the CPU; use --platform cpu")
    try:
        extra = shlex.split(args.launcher_args)
    except ValueError as exc:
        raise UsageError(f"bad --launcher-args: {exc}") from None
    return {"launcher": args.launcher, "launcher_args": extra,
            "simulate_cpu": platform == "cpu"}


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
    params = {k: [str(v) for v in str(vals).split(",") if v.strip()]
              for k, vals in g["params"].items()}
    if g["sizes"] is not None:
        params["size"] = [str(n) for n in parse_sizes(str(g["sizes"]))]
    local_axes = parse_local_axes(g["local_axes"]) if g["local_axes"] else ()
    dph = g["devices_per_host"]
    if local_axes and getattr(args, "devices_per_host", None) is None:
        dph = str(math.prod(n for _, n in local_axes))
    return Grid(
        workloads=tuple(w.strip() for w in str(g["workloads"]).split(",") if w.strip()),
        hosts=tuple(parse_int_list(str(g["hosts"]), "hosts")),
        devices_per_host=tuple(parse_int_list(str(dph), "devices-per-host")),
        local_axes=local_axes,
        dtypes=tuple(parse_names(g["dtypes"], "dtype", DTYPES)),
        variants=tuple(v.strip() for v in str(g["variants"] or "").split(",") if v.strip()),
        params=tuple(params.items()),
        settings=Settings(iters=g["iters"], warmup=g["warmup"], sync=g["sync"],
                          traced_iters=g["traced_iters"] if args.profile else 0),
    )
