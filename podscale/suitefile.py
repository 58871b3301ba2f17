"""Suite files: a parameter grid in TOML, validated key by key.

Example (``suites/study.toml``)::

    suites = ["dot", "psum"]
    sizes = ["4K", "64K", "1M"]        # elements per process: integers or "4K"/"1M"/"2**20"
    hosts = [1, 2, 4]
    devices_per_host = [1, 2]
    dtypes = ["float32"]
    variants = ["pmap", "shard_map"]
    iters = 20
    warmup = 3
    sync = "each"                      # or "once"
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from podscale.errors import UsageError

LISTS = {"suites": str, "sizes": (str, int), "hosts": int, "devices_per_host": int,
         "dtypes": str, "variants": str}
SCALARS = {"iters": int, "warmup": int, "sync": str, "traced_iters": int}


def load(path: Path) -> dict[str, Any]:
    """The grid of a suite file, as CLI-style strings and numbers; one-line errors."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such suite file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - set(LISTS) - set(SCALARS))
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(unknown)} "
                         f"(known: {', '.join([*LISTS, *SCALARS])})")
    out: dict[str, Any] = {}
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
            if not isinstance(data[key], kind) or isinstance(data[key], bool):
                raise UsageError(f"{path}: {key} must be {_name(kind)}")
            out[key] = data[key]
    if "sync" in out and out["sync"] not in ("each", "once"):
        raise UsageError(f"{path}: sync must be \"each\" or \"once\"")
    return out


def _name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({str: "strings", int: "integers"}[k] for k in kinds)
