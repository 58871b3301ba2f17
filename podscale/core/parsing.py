"""The command line's words for sizes, counts, names and mesh axes, read into values:
``64K``, ``1K:1M:x2`` (nccl-tests' sweep), ``1,2,4``, ``chip=2,core=2``; a word that is
none is one UsageError naming what was expected."""

from __future__ import annotations

import re
from collections.abc import Iterable

from podscale.core.errors import UsageError

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str | int) -> int:
    """``4096``, ``64K``, ``1M``, ``4KiB`` or ``2**20`` as an integer (K = 1024)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    t = str(text).strip().lower()
    if m := re.fullmatch(r"(\d+)\s*\*\*\s*(\d+)", t):
        return int(m[1]) ** int(m[2])
    m = re.fullmatch(r"(\d+)\s*([kmg]?)(?:i?b)?", t)
    if not m:
        raise UsageError(f"bad size {text!r}: use an integer, optionally with K, M or G "
                         "(or KiB, MiB, GiB), or 2**N")
    return int(m[1]) * _SUFFIX[m[2]]


def parse_sizes(text: str) -> list[int]:
    """A comma-separated list of sizes, each a size or a sweep ``BEGIN:END:xFACTOR`` (as
    nccl-tests' ``-b -e -f``: BEGIN, BEGIN*F, ... up to END)."""
    out: list[int] = []
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        if ":" not in part:
            out.append(parse_size(part))
            continue
        bits = part.split(":")
        if len(bits) != 3 or not re.fullmatch(r"x?\d+", bits[2].strip().lower()):
            raise UsageError(f"bad size sweep {part!r}: use BEGIN:END:xFACTOR, e.g. 1K:1M:x2")
        lo, hi = parse_size(bits[0]), parse_size(bits[1])
        factor = int(bits[2].strip().lower().lstrip("x"))
        if lo < 1 or hi < lo or factor < 2:
            raise UsageError(f"bad size sweep {part!r}: need 1 <= BEGIN <= END and FACTOR >= 2")
        size = lo
        while size <= hi:
            out.append(size)
            size *= factor
    if not out:
        raise UsageError("size list is empty")
    return out


def parse_int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"bad {what} list {text!r}: expected comma-separated integers") from None
    if not values:
        raise UsageError(f"{what} list is empty")
    return values


def parse_names(text: str, what: str, known: Iterable[str]) -> list[str]:
    known = list(known)
    names = [v.strip() for v in str(text).split(",") if v.strip()]
    for name in names:
        if name not in known:
            raise UsageError(f"unknown {what} {name!r} (known: {', '.join(known)})")
    if not names:
        raise UsageError(f"{what} list is empty")
    return names


def parse_local_axes(text: str) -> tuple[tuple[str, int], ...]:
    """``chip=2,core=2`` -> (("chip", 2), ("core", 2))."""
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, eq, size = part.partition("=")
        if not eq or not size.strip().isdigit():
            raise UsageError(f"bad --local-axes {text!r}: use NAME=SIZE[,NAME=SIZE...]")
        out.append((name.strip(), int(size)))
    if not out:
        raise UsageError("--local-axes is empty")
    return tuple(out)
