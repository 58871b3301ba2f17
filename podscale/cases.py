"""Suite specs and the cases they expand to.

A :class:`SuiteSpec` is a parameter grid; :func:`expand` turns it into validated
:class:`Case` objects, grouped later by device :class:`Layout` so that one set of
worker processes runs every case of a layout.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from podscale.errors import UsageError

SUITES = ("dot", "psum")
VARIANTS = ("pmap", "shard_map")
DTYPES = {"float32": 4, "bfloat16": 2, "float16": 2}

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True, order=True)
class Layout:
    """How many processes (simulated hosts) and how many devices each one has."""

    hosts: int
    devices_per_host: int

    def __post_init__(self) -> None:
        if self.hosts < 1:
            raise UsageError(f"hosts must be >= 1, got {self.hosts}")
        if self.devices_per_host < 1:
            raise UsageError(f"devices per host must be >= 1, got {self.devices_per_host}")

    @property
    def key(self) -> str:
        return f"h{self.hosts}-d{self.devices_per_host}"

    @property
    def devices(self) -> int:
        return self.hosts * self.devices_per_host


@dataclass(frozen=True)
class Case:
    """One measured configuration. ``size`` counts elements per process (for ``dot``,
    rows of ``width``-vectors), split evenly over the process's local devices."""

    suite: str
    variant: str
    dtype: str
    size: int
    hosts: int
    devices_per_host: int
    width: int = 3

    def __post_init__(self) -> None:
        if self.suite not in SUITES:
            raise UsageError(f"unknown suite {self.suite!r} (known: {', '.join(SUITES)})")
        if self.variant not in VARIANTS:
            raise UsageError(f"unknown variant {self.variant!r} (known: {', '.join(VARIANTS)})")
        if self.dtype not in DTYPES:
            raise UsageError(f"unknown dtype {self.dtype!r} (known: {', '.join(DTYPES)})")
        layout = self.layout  # validates hosts/devices
        if self.size < 1:
            raise UsageError(f"size must be >= 1, got {self.size}")
        if self.size % layout.devices_per_host:
            raise UsageError(
                f"size {self.size} is not divisible by {layout.devices_per_host} devices per host"
            )

    @property
    def layout(self) -> Layout:
        return Layout(self.hosts, self.devices_per_host)

    @property
    def id(self) -> str:
        return (
            f"{self.suite}/{self.variant}/{self.dtype}/n{self.size}/"
            f"h{self.hosts}xd{self.devices_per_host}"
        )

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype]

    @property
    def per_device(self) -> int:
        return self.size // self.devices_per_host

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SuiteSpec:
    """A parameter grid over suites, variants, dtypes, sizes and device layouts."""

    suites: Sequence[str] = ("dot", "psum")
    sizes: Sequence[int] = (1 << 12, 1 << 16, 1 << 20)
    hosts: Sequence[int] = (1, 2)
    devices_per_host: Sequence[int] = (1, 2)
    dtypes: Sequence[str] = ("float32",)
    variants: Sequence[str] = ("pmap", "shard_map")
    iters: int = 20
    warmup: int = 3
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("suites", "sizes", "hosts", "devices_per_host", "dtypes", "variants"):
            if not getattr(self, name):
                raise UsageError(f"{name.replace('_', ' ')} must not be empty")
        if self.iters < 1:
            raise UsageError(f"iters must be >= 1, got {self.iters}")
        if self.warmup < 0:
            raise UsageError(f"warmup must be >= 0, got {self.warmup}")


def expand(spec: SuiteSpec) -> list[Case]:
    """All cases of the grid, in layout order so each layout's cases run together."""
    cases = [
        Case(suite, variant, dtype, size, hosts, dph)
        for hosts, dph, suite, variant, dtype, size in itertools.product(
            spec.hosts, spec.devices_per_host, spec.suites, spec.variants, spec.dtypes, spec.sizes
        )
    ]
    return sorted(cases, key=lambda c: (c.layout, SUITES.index(c.suite)))


def group_by_layout(cases: Iterable[Case]) -> dict[Layout, list[Case]]:
    groups: dict[Layout, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.layout, []).append(case)
    return groups


def parse_size(text: str) -> int:
    """Parse ``4096``, ``64K``, ``1M`` or ``2**20`` into an element count."""
    t = text.strip().lower()
    if m := re.fullmatch(r"(\d+)\s*\*\*\s*(\d+)", t):
        return int(m[1]) ** int(m[2])
    m = re.fullmatch(r"(\d+)([kmg]?)", t)
    if not m:
        raise UsageError(f"bad size {text!r}: use an integer, optionally with K, M or G, or 2**N")
    return int(m[1]) * _SUFFIX[m[2]]


def parse_int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"bad {what} list {text!r}: expected comma-separated integers") from None
    if not values:
        raise UsageError(f"{what} list is empty")
    return values


def parse_names(text: str, what: str, known: Iterable[str]) -> list[str]:
    known = list(known)
    names = [v.strip() for v in text.split(",") if v.strip()]
    for name in names:
        if name not in known:
            raise UsageError(f"unknown {what} {name!r} (known: {', '.join(known)})")
    if not names:
        raise UsageError(f"{what} list is empty")
    return names
