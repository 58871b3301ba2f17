"""Suite files: a parameter grid in TOML, validated key by key.

Example::

    workloads = ["dot", "psum"]        # built-in names, "file.py:NAME", "pkg.module:NAME"
    sizes = ["4K", "64K", "1M"]        # the size parameter: integers, "4K", "1KiB", "1K:1M:x4"
    hosts = [1, 2, 4]
    devices_per_host = [1, 2]
    local_axes = "chip=2,core=2"       # optional: split local devices into named mesh axes
    dtypes = ["float32"]
    variants = ["pmap", "shard_map"]   # default: every variant each workload supports
    iters = 20
    warmup = 3
    sync = "each"                      # or "once"
    timing = ["each", "chain"]         # or one string: "each,chain,device"
    rounds = 3                         # independent repetitions (separate launches)

    [params]                           # any other workload parameter (podscale list)
    width = [3, 8]

    [[sweep]]                          # optional: several grids in one run; each sweep
    workloads = ["all_reduce"]         # takes the keys above as defaults and may set any
    sizes = ["4KiB:1MiB:x16"]          # of them (its params merge with the top level's)
    [sweep.params]
    axes = ["hosts", "local", "all"]
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from podscale.core.errors import UsageError

#: what a key's values must be: one type or any of several
Kind = type | tuple[type, ...]
LISTS: dict[str, Kind] = {"workloads": str, "sizes": (str, int), "hosts": int,
                          "devices_per_host": int, "slices": int, "dtypes": str,
                          "variants": str}
SCALARS: dict[str, Kind] = {"iters": int, "warmup": int, "sync": str, "timing": str,
                            "traced_iters": int,
                            "local_axes": str, "rounds": int, "check_elements": (int, str)}
#: scalars also given as a list (joined with commas, as on the command line)
JOINED = ("timing",)
TABLES = ("params",)
SWEEP = "sweep"


def load(path: Path) -> list[dict[str, Any]]:
    """The grids of a suite file (one, or one per ``[[sweep]]``), as CLI-style strings and
    numbers; one-line errors."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such suite file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    sweeps = data.pop(SWEEP, None)
    top = _grid(data, str(path))
    if sweeps is None:
        return [top]
    if not isinstance(sweeps, list) or not sweeps or not all(isinstance(s, dict)
                                                             for s in sweeps):
        raise UsageError(f"{path}: sweep must be an array of tables ([[sweep]])")
    out = []
    for i, sweep in enumerate(sweeps, 1):
        own = _grid(sweep, f"{path}: sweep {i}")
        out.append({**top, **own, "params": {**top["params"], **own["params"]}})
    return out


def _grid(data: dict, path: str) -> dict[str, Any]:
    """One grid's keys, validated; ``path`` names it in errors (file, or file: sweep i)."""
    unknown = sorted(set(data) - set(LISTS) - set(SCALARS) - set(TABLES))
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(unknown)} "
                         f"(known: {', '.join([*LISTS, *SCALARS, *TABLES, SWEEP])})")
    out: dict[str, Any] = {}
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise UsageError(f"{path}: params must be a table of lists")
    out["params"] = {}
    for name, values in params.items():
        if not isinstance(values, list) or not values or not all(
                isinstance(v, (str, int, float, bool)) for v in values):
            raise UsageError(f"{path}: params.{name} must be a non-empty list of values")
        out["params"][name] = ",".join(str(v).lower() if isinstance(v, bool) else str(v)
                                       for v in values)
    for key, kind in LISTS.items():
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, list) or not all(
            isinstance(v, kind) and not isinstance(v, bool) for v in value
        ):
            raise UsageError(f"{path}: {key} must be a list of {_name(kind)}")
        out[key] = ",".join(str(v) for v in value)
    for key, kind in SCALARS.items():
        if key in data:
            value = data[key]
            if key in JOINED and isinstance(value, list) and value and all(
                    isinstance(v, kind) and not isinstance(v, bool) for v in value):
                value = ",".join(map(str, value))  # the CLI's comma list
            if not isinstance(value, kind) or isinstance(value, bool):
                raise UsageError(f"{path}: {key} must be {_name(kind, one=True)}" + (
                    f" or a list of {_name(kind)}" if key in JOINED else ""))
            out[key] = value
    if "sync" in out and out["sync"] not in ("each", "once"):
        raise UsageError(f"{path}: sync must be \"each\" or \"once\"")
    return out


def _name(kind: Kind, one: bool = False) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", int: "an integer"} if one else \
        {str: "strings", int: "integers"}
    return " or ".join(names[k] for k in kinds)
