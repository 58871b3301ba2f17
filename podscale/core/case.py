"""Layouts (named mesh axes), measurement settings and cases.

A :class:`Case` is one measured configuration: a workload (name, version, where it is
loaded from) with its parameter values, a dtype and API variant, a :class:`Layout` and
the :class:`Settings` it is measured with. All are frozen and validated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podscale.core import defaults
from podscale.core.errors import UsageError

if TYPE_CHECKING:  # mypy reports every use (PEP 702); at run time a DeprecationWarning
    from typing_extensions import deprecated
else:
    def deprecated(message: str) -> Callable:
        import functools
        import warnings

        def wrap(fn: Callable) -> Callable:
            @functools.wraps(fn)
            def warned(*args: Any, **kwargs: Any) -> Any:
                warnings.warn(message, DeprecationWarning, stacklevel=2)
                return fn(*args, **kwargs)
            return warned
        return wrap

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
    ``slices`` > 1 groups the processes (``processes`` of them in all, slice-major) into
    that many slices: a ``dcn`` axis first, then the ``hosts`` axis of
    :attr:`hosts_per_slice` (what ``--hosts`` gives: a multi-slice job's hybrid mesh, ICI
    axes inside a slice, DCN across)."""

    processes: int
    devices_per_host: int
    local_axes: tuple[tuple[str, int], ...] = ()
    slices: int = 1

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise UsageError(f"hosts must be >= 1, got {self.processes}")
        if self.slices < 1 or self.processes % self.slices:
            raise UsageError(f"{self.processes} processes do not make {self.slices} slices "
                             "of equal hosts")
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
        """Processes per slice: what ``--hosts`` gives."""
        return self.processes // self.slices

    @property
    @deprecated("Layout.hosts counted every process: read .processes, or .hosts_per_slice "
                "for what --hosts gives")
    def hosts(self) -> int:
        return self.processes

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
        return self.processes * self.devices_per_host

    def to_dict(self) -> dict:
        """As records and plans hold it: ``hosts`` there is every process (the form's
        word, kept so that runs of every podscale read alike)."""
        return {"hosts": self.processes, "devices_per_host": self.devices_per_host,
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
    def processes(self) -> int:
        """Every process of its layout (``--hosts`` x ``--slices``)."""
        return self.layout.processes

    @property
    @deprecated("Case.hosts counted every process: read .processes")
    def hosts(self) -> int:
        return self.layout.processes

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
