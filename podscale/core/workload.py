"""The workload protocol: what a workload file declares, and what a worker asks of it.

A workload is one object (an instance of a :class:`Workload` subclass) that declares its
``name``, ``version``, parameters (:class:`Param`: the grid axes it understands, with
types and defaults), whether it is a collective (``collective``: a key of
``analysis/bandwidth.py``'s table, for busbw), the API variants and dtypes it supports,
and per process:

- :meth:`Workload.inputs` — this process's host-local numpy inputs;
- :meth:`Workload.step` — the function to time and its placed arguments (the body);
- :meth:`Workload.reference` — the float64 expected output and a per-element error bound;
- :meth:`Workload.output` — the host-local part of the step's output, as numpy;
- :meth:`Workload.work` — bytes, flops and collective participants, for bandwidths.

``suites/common.py`` has opt-in helpers that build :meth:`step` and :meth:`output` from a
per-device ``body`` for the ``pmap`` and ``jit(shard_map)`` variants. Nothing here imports
JAX: a :class:`Context` carries the mesh a worker built.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from podscale.core.case import DTYPES, Case, parse_size
from podscale.core.errors import UsageError

KINDS = ("int", "float", "str", "bool", "size")
MAX_SIZE = 2**50  # a size parameter (bytes or elements per device or process) above is a typo


@dataclass(frozen=True)
class Param:
    """One parameter of a workload: a grid axis with a type and a default."""

    name: str
    default: Any
    kind: str = "int"  # int | float | str | bool | size (an int written 4K, 1M, 2**20, 1KiB)
    choices: tuple = ()
    help: str = ""
    unit: str = ""  # what a value counts (B, elements, rows): tables head its column with it

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"param {self.name}: kind must be one of {KINDS}")
        object.__setattr__(self, "default", self.parse(self.default))

    def parse(self, value: Any) -> Any:
        """One value from a CLI word or a TOML value; UsageError when it does not fit."""
        try:
            if self.kind == "size":
                v: Any = parse_size(value)
            elif self.kind == "int":
                v = int(value) if not isinstance(value, bool) else None
            elif self.kind == "float":
                v = float(value)
            elif self.kind == "bool":
                v = value if isinstance(value, bool) else {"true": True, "false": False}[
                    str(value).lower()]
            else:
                v = str(value)
        except (ValueError, KeyError, TypeError, UsageError):
            v = None
        if v is None:
            raise UsageError(f"parameter {self.name}: {value!r} is not of kind {self.kind}")
        if self.kind == "size" and not 1 <= v <= MAX_SIZE:
            raise UsageError(f"parameter {self.name}: {value!r} is out of range (a size is "
                             f"1 to 2**50)")
        if self.choices and v not in self.choices:
            raise UsageError(f"parameter {self.name}: {v!r} is not one of "
                             f"{', '.join(map(str, self.choices))}")
        return v

    def describe(self) -> str:
        text = f"{self.name}={self.default} ({self.kind}"
        text += f": {'|'.join(map(str, self.choices))})" if self.choices else ")"
        return text + (f"  {self.help}" if self.help else "")


@dataclass(frozen=True)
class Work:
    """What one case moves and computes, for GB/s, GFLOP/s, algbw and busbw.

    ``bytes_per_device`` is nccl-tests' S for collectives (the per-rank buffer the
    collective's busbw factor applies to); ``participants`` is n, the ranks of one group;
    ``hosts_per_group`` how many processes (hosts) one group spans: 1 when it stays inside
    a host, whose links differ from those between hosts."""

    bytes_per_process: int
    flops_per_process: int = 0
    bytes_per_device: int = 0
    participants: int = 1
    hosts_per_group: int = 1


@dataclass(frozen=True)
class Expected:
    """The float64 reference of this process's output, and the largest allowed error
    per element (a rounding-error bound in the compute dtype)."""

    value: np.ndarray
    bound: np.ndarray


@dataclass(frozen=True)
class Step:
    """The function a case times, with its arguments already placed on devices. ``aot``:
    compile ahead of time (``fn.lower(*args).compile()``); otherwise the first call
    compiles (``pmap``), and its sample is labelled as such."""

    fn: Callable
    args: tuple
    aot: bool = True


@dataclass(frozen=True)
class Context:
    """What a workload sees in a worker: the case, this process, and the case's mesh
    (a ``jax.sharding.Mesh`` over the case's devices with the layout's named axes)."""

    case: Case
    process: int
    process_count: int
    devices: Sequence[Any]
    mesh: Any

    @property
    def p(self) -> dict[str, Any]:
        return self.case.p

    @property
    def axis_names(self) -> tuple[str, ...]:
        return self.case.layout.axis_names

    @property
    def local_devices(self) -> int:
        return self.case.layout.devices_per_host

    @property
    def seed(self) -> int:
        """The reference workload's per-process seed, ``42 + 10*process_index``."""
        return seed_for(self.process)


def seed_for(process: int) -> int:
    return 42 + 10 * process


class Workload:
    """Base class of workloads; subclass, set the attributes, make one module-level instance."""

    name: str = ""
    version: str = "1"
    params: tuple[Param, ...] = ()
    collective: str | None = None
    variants: tuple[str, ...] = ("shard_map",)
    dtypes: tuple[str, ...] = tuple(DTYPES)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def validate(self, case: Case) -> None:
        """Raise :class:`UsageError` when ``case`` cannot run (before any process starts)."""

    def cases(self, case: Case) -> list[Case]:
        """The cases one grid point stands for (default: itself). A workload whose cases
        depend on the layout (e.g. every pair of processes) expands them here."""
        return [case]

    def collective_of(self, case: Case) -> str | None:
        """The collective of ``case`` (a key of ``analysis/bandwidth.py``), for busbw; a
        workload whose cases differ in kind (``replay``) overrides it."""
        return self.collective

    def unsupported(self, case: Case) -> str | None:
        """Why ``case`` cannot be expressed (e.g. pmap and a subset of the mesh axes), or
        None. Such cases are left out of the grid; a workload left with none is an error
        giving this reason."""
        return None

    def inputs(self, ctx: Context) -> tuple[np.ndarray, ...]:
        raise NotImplementedError

    def step(self, ctx: Context, local: tuple[np.ndarray, ...]) -> Step:
        raise NotImplementedError

    def reference(self, ctx: Context, local: tuple[np.ndarray, ...]) -> Expected:
        raise NotImplementedError

    def output(self, ctx: Context, out: Any) -> np.ndarray:
        return np.asarray(out)

    def exact_inputs(self, ctx: Context) -> tuple[np.ndarray, ...] | None:
        """Inputs of the same shapes whose every expected output is exact in the compute
        dtype (small integers, see :func:`podscale.exact_pattern`), for a second, exact
        check of the compiled step; None: the workload has none."""
        return None

    def takes_part(self, case: Case, process: int) -> bool:
        """Whether ``process`` takes part in ``case`` (times and per-process spreads are
        over the processes that do; default: every process)."""
        return True

    def groups(self, case: Case) -> np.ndarray | None:
        """The global device indices of each group of participants, shape (groups, n),
        recorded with the case; None: no collective groups."""
        return None

    def work(self, case: Case) -> Work:
        return Work(0)

    @property
    def summary(self) -> str:
        doc = (type(self).__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""


@dataclass(frozen=True)
class Check:
    """One comparison of outputs with their reference. ``unchecked``: elements whose bound
    cannot tell a wrong value (it is infinite, or so loose that a zero output would pass);
    they are never counted OK. ``max_error``: the largest |error| / bound (for exact
    elements, |error| / (u·|expected|): how many half-ulps off), finite for finite outputs."""

    checked: int
    wrong: int
    max_error: float
    result: float  # sum of this process's outputs (a fingerprint)
    unchecked: int = 0
    exact: int = 0  # elements whose bound is 0: checked for equality


def check(got: np.ndarray, expected: Expected, dtype: str = "float32") -> Check:
    """Compare outputs with the reference element by element; NaN or inf is wrong."""
    from podscale.core.bounds import UNIT_ROUNDOFF

    got = np.asarray(got, dtype=np.float64)
    value = np.broadcast_to(expected.value, got.shape)
    bound = np.broadcast_to(expected.bound, got.shape)
    finite = np.isfinite(got)
    err = np.abs(np.where(finite, got, 0.0) - value)
    wrong = ~finite | (err > bound)
    loose = ~np.isfinite(bound) | ((bound > 0) & (bound >= np.abs(value)))
    scale = np.where(bound > 0, bound, UNIT_ROUNDOFF.get(dtype, 2.0**-24) * np.abs(value))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / np.maximum(scale, np.finfo(np.float64).tiny))
    ratio = np.where(np.isfinite(bound), ratio, 0.0)
    return Check(checked=int(got.size), wrong=int(np.count_nonzero(wrong)),
                 max_error=float(np.max(ratio, initial=0.0)) if finite.all() else math.inf,
                 result=float(np.sum(got)) if finite.all() else float("nan"),
                 unchecked=int(np.count_nonzero(loose & ~wrong)),
                 exact=int(np.count_nonzero(bound == 0)))
