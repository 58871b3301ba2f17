"""Layouts (named mesh axes), measurement settings and cases.

A :class:`Case` is one measured configuration: a workload (name, version, where it is
loaded from) with its parameter values, a dtype and API variant, a :class:`Layout` and
the :class:`Settings` it is measured with. All are frozen and validated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from podscale.core import defaults
from podscale.core.errors import UsageError

DTYPES = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1}
FLOAT_DTYPES = ("float32", "bfloat16", "float16")  # a workload's unless it says (int8: matmul)
HOSTS_AXIS, LOCAL_AXIS = "hosts", "local"
#: the axis across slices (the data-centre network, DCN), first where a layout has slices;
#: ``ici``: every axis inside a slice (the chip-to-chip links)
DCN_AXIS, ICI = "dcn", "ici"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, order=True)
class Layout:
    """Processes (simulated hosts) x devices per process, as a mesh with named axes:
    (``hosts``, ``local``) by default, or the local devices split into several axes
    (``local_axes=(("chip", 2), ("core", 2))`` for a 3-D mesh ``hosts x chip x core``).
    ``slices`` > 1 groups the processes (``hosts`` of them in all, slice-major) into that
    many slices: a ``dcn`` axis first, then ``hosts`` per slice (a multi-slice job's
    hybrid mesh: ICI axes inside a slice, DCN across)."""

    hosts: int
    devices_per_host: int
    local_axes: tuple[tuple[str, int], ...] = ()
    slices: int = 1

    def __post_init__(self) -> None:
        if self.hosts < 1:
            raise UsageError(f"hosts must be >= 1, got {self.hosts}")
        if self.slices < 1 or self.hosts % self.slices:
            raise UsageError(f"{self.hosts} processes do not make {self.slices} slices of "
                             "equal hosts")
        if self.devices_per_host < 1:
            raise UsageError(f"devices per host must be >= 1, got {self.devices_per_host}")
        if not self.local_axes:
            object.__setattr__(self, "local_axes", ((LOCAL_AXIS, self.devices_per_host),))
        object.__setattr__(self, "local_axes", tuple((str(n), int(s)) for n, s in self.local_axes))
        names = [DCN_AXIS, ICI, HOSTS_AXIS, *(n for n, _ in self.local_axes)]
        if len(set(names)) != len(names) or not all(_NAME.fullmatch(n) for n in names):
            raise UsageError(f"mesh axis names must be distinct identifiers, got {names}")
        product = 1
        for _, size in self.local_axes:
            if size < 1:
                raise UsageError(f"mesh axis sizes must be >= 1, got {self.local_axes}")
            product *= size
        if product != self.devices_per_host:
            shape = "x".join(str(s) for _, s in self.local_axes)
            raise UsageError(f"local mesh axes {shape} do not make {self.devices_per_host} "
                             "devices per host")

    @property
    def hosts_per_slice(self) -> int:
        return self.hosts // self.slices

    @property
    def axes(self) -> tuple[tuple[str, int], ...]:
        """(name, size) of every mesh axis: ``dcn`` first where there are slices, then
        hosts (per slice), then the local axes."""
        dcn = ((DCN_AXIS, self.slices),) if self.slices > 1 else ()
        return (*dcn, (HOSTS_AXIS, self.hosts_per_slice), *self.local_axes)

    def slice_of(self, process: int) -> int:
        """The slice process ``process`` is in (processes are slice-major)."""
        return process // self.hosts_per_slice

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.axes)

    @property
    def default_split(self) -> bool:
        return self.local_axes == ((LOCAL_AXIS, self.devices_per_host),)

    @property
    def key(self) -> str:
        """The one spelling of a layout: ``h2xd4``, ``h2xd4-chip2xcore2`` for a split, and
        ``s2xh2xd4`` for 2 slices of 2 hosts (directory names, case ids, tables and
        reports); one slice keeps the key it always had."""
        split = () if self.default_split else self.local_axes
        return layout_key(self.hosts_per_slice, self.devices_per_host, split, self.slices)

    @property
    def devices(self) -> int:
        return self.hosts * self.devices_per_host

    def to_dict(self) -> dict:
        return {"hosts": self.hosts, "devices_per_host": self.devices_per_host,
                "local_axes": [list(a) for a in self.local_axes],
                **({"slices": self.slices} if self.slices > 1 else {})}

    @classmethod
    def from_dict(cls, d: dict) -> Layout:
        return cls(d["hosts"], d["devices_per_host"],
                   tuple(tuple(a) for a in d.get("local_axes") or ()), d.get("slices", 1))


def layout_key(hosts: int, devices_per_host: int,
               local_axes: Iterable[tuple[str, int]] = (), slices: int = 1) -> str:
    """``h{hosts}xd{devices per host}`` (``s{slices}x`` first where there are several,
    ``hosts`` then per slice), then ``-`` and the local axes where they split."""
    split = "x".join(f"{n}{s}" for n, s in local_axes)
    head = f"s{slices}x" if slices > 1 else ""
    return f"{head}h{hosts}xd{devices_per_host}" + (f"-{split}" if split else "")


def key_of(hosts: int, devices_per_host: int, slices: int = 1) -> str:
    """The key of a layout of ``hosts`` processes in all (a table's column), in slices."""
    slices = int(slices) if slices == slices and slices else 1
    return layout_key(int(hosts) // slices, int(devices_per_host), (), slices)


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


@dataclass(frozen=True)
class Settings:
    """How a case is measured; part of its identity (``compare`` refuses mixed settings)."""

    iters: int = defaults.ITERS
    warmup: int = defaults.WARMUP
    sync: str = defaults.SYNC  # barrier before each timed iteration, or "once" before the loop
    traced_iters: int = 0  # > 0: a profiled pass after the timed iterations
    #: elements per device the float check compares (0: all); not part of what is timed
    check_elements: int = defaults.CHECK_ELEMENTS
    #: the timing methods (:data:`podscale.core.timing.METHODS`), as ``each,chain,device``
    timing: str = defaults.TIMING

    def __post_init__(self) -> None:
        from podscale.core.timing import parse_methods

        try:
            object.__setattr__(self, "timing", ",".join(parse_methods(self.timing)))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if self.iters < 1:
            raise UsageError(f"iters must be >= 1, got {self.iters}")
        if self.warmup < 0:
            raise UsageError(f"warmup must be >= 0, got {self.warmup}")
        if self.sync not in ("each", "once"):
            raise UsageError(f"sync must be 'each' or 'once', got {self.sync!r}")
        if self.traced_iters < 0:
            raise UsageError(f"traced iters must be >= 0, got {self.traced_iters}")
        if self.check_elements < 0:
            raise UsageError(f"check elements must be >= 0 (0: all), got {self.check_elements}")

    def to_dict(self) -> dict:
        return {"iters": self.iters, "warmup": self.warmup, "sync": self.sync,
                "traced_iters": self.traced_iters, "check_elements": self.check_elements,
                "timing": self.timing}

    @property
    def methods(self) -> tuple[str, ...]:
        """The timing methods, in the order they run."""
        return tuple(self.timing.split(","))


@dataclass(frozen=True)
class Case:
    """One measured configuration; ``params`` are the workload's own parameter values."""

    workload: str
    version: str
    source: str  # how a worker loads the workload: "module:NAME" or "/path/file.py:NAME"
    variant: str
    dtype: str
    layout: Layout
    params: tuple[tuple[str, Any], ...] = ()
    settings: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise UsageError(f"unknown dtype {self.dtype!r} (known: {', '.join(DTYPES)})")
        object.__setattr__(self, "params", tuple(sorted(dict(self.params).items())))

    @property
    def p(self) -> dict[str, Any]:
        """The workload parameters as a dict."""
        return dict(self.params)

    @property
    def id(self) -> str:
        """``workload@version/variant/dtype/k=v/.../layout``: unique within a run."""
        parts = [f"{self.workload}@{self.version}", self.variant, self.dtype]
        parts += [f"{k}={_show(v)}" for k, v in self.params]
        return "/".join([*parts, self.layout.key])

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype]

    @property
    def hosts(self) -> int:
        return self.layout.hosts

    @property
    def devices_per_host(self) -> int:
        return self.layout.devices_per_host

    def to_dict(self) -> dict:
        return {"workload": self.workload, "version": self.version, "source": self.source,
                "variant": self.variant, "dtype": self.dtype, "layout": self.layout.to_dict(),
                "params": dict(self.params), "settings": self.settings.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> Case:
        return cls(d["workload"], str(d["version"]), d["source"], d["variant"], d["dtype"],
                   Layout.from_dict(d["layout"]), tuple(d.get("params", {}).items()),
                   Settings(**d.get("settings", {})))


def _show(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "+".join(map(str, v))
    return str(v)


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
