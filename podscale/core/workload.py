"""The workload protocol (protocol 2): what a workload file declares, and what a worker
asks of it. Nothing here imports JAX: a :class:`Context` carries the mesh a worker built.

A workload is one module-level instance of a :class:`Workload` subclass. It declares
``name``, ``version``, ``params`` (:class:`Param`), ``collective`` (a key of
``analysis/models/bandwidth.py``'s table, for busbw), ``variants`` and ``dtypes`` as class
attributes, and implements the abstract hooks, each of which receives what it needs (the
:class:`Context` or the :class:`~podscale.core.case.Case`): a workload keeps no per-case
state on ``self``. Every method is abstract, an optional hook (:data:`OPTIONAL_HOOKS`,
whose default is the documented behaviour) or final; checks of a case are per class
(:meth:`Workload.check_case`, run base class first), never ``super()`` chains.

Required hooks: :meth:`~Workload.inputs` (host-local numpy inputs),
:meth:`~Workload.place` (the inputs on devices), :meth:`~Workload.program` (the function to
time), :meth:`~Workload.output` (the host-local output as numpy),
:meth:`~Workload.reference` (expected values and bounds) and :meth:`~Workload.work`.
:class:`podscale.Mapped` and :class:`podscale.Collective` implement most of them.
"""

from __future__ import annotations

import abc
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, final

import numpy as np

from podscale.core.case import FLOAT_DTYPES, Case
from podscale.core.errors import UsageError
from podscale.core.params import MAX_SIZE, Param  # noqa: F401 (the protocol's own)

PROTOCOL = 2


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
    """The float64 reference of this process's output and the largest allowed error per
    element (a rounding-error bound in the compute dtype). ``positions``: the indices along
    the output's last axis that ``value`` holds (a sample; None: every element), the rest
    counted as not compared; ``dtype``: the output's dtype where it is not the case's.
    ``bound`` broadcasts against ``value``: 0.0 (or any one-element 0) is an equality
    check, compared fastest. ``lowered``: what each element is where the device computed
    at a lowered precision (float32 inputs rounded to bfloat16 or TF32), of ``value``'s
    shape: elements equal to it are counted, and pass only where ``lowered_ok``."""

    value: np.ndarray
    bound: np.ndarray | float
    positions: np.ndarray | None = None
    dtype: str | None = None
    lowered: np.ndarray | None = None
    lowered_ok: bool = False


@dataclass(frozen=True)
class Program:
    """The function a case times. ``aot``: compile ahead of time
    (``fn.lower(*args).compile()``); otherwise the first call compiles (``pmap``), and its
    sample is labelled as such."""

    fn: Callable
    aot: bool = True


@dataclass(frozen=True)
class Step:
    """A :class:`Program` with its placed arguments: what the worker compiles and times."""

    fn: Callable
    args: tuple
    aot: bool = True


@dataclass(frozen=True)
class ExactCheck:
    """A second, exact check of the compiled step: host-local ``inputs`` of the timed
    inputs' shapes, and the outputs expected from them (bound 0 where exact), computed
    without communication."""

    inputs: tuple[np.ndarray, ...]
    expected: Expected


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

    @property
    def case_seed(self) -> int:
        """A seed every process derives alike from the case (sampled positions)."""
        return zlib.crc32(self.case.id.encode())

    def sample(self, m: int, chunks: int = 1) -> np.ndarray:
        """The positions of a buffer of ``m`` that the float check compares (the same on
        every process): ``--check-elements`` of them, or all (see
        :func:`podscale.core.patterns.sample_positions`)."""
        from podscale.core.patterns import sample_positions

        return sample_positions(m, self.case.settings.check_elements, self.case_seed, chunks)


def seed_for(process: int) -> int:
    return 42 + 10 * process


#: hooks a subclass may override; their defaults are the documented behaviour
OPTIONAL_HOOKS = ("check_case", "unsupported_case", "cases", "collective_of", "takes_part",
                  "groups", "exact_check")


def _own(wl: Workload, hook: str) -> list[Callable]:
    """Each class's own definition of ``hook``, base class first."""
    return [vars(cls)[hook] for cls in reversed(type(wl).__mro__) if hook in vars(cls)]


class Workload(abc.ABC):
    """Base class of workloads; subclass, set the attributes, make one module-level instance."""

    name: str = ""
    version: str = "1"
    params: tuple[Param, ...] = ()
    collective: str | None = None
    variants: tuple[str, ...] = ("shard_map",)
    dtypes: tuple[str, ...] = FLOAT_DTYPES

    # -- required hooks ---------------------------------------------------------------

    @abc.abstractmethod
    def inputs(self, ctx: Context) -> tuple[np.ndarray, ...]:
        """This process's inputs, host-local numpy arrays.

        Args: ctx: the case and this process (``ctx.seed`` = 42 + 10·process).
        Returns: the arrays :meth:`place` puts on devices and :meth:`reference` checks
        against."""

    @abc.abstractmethod
    def place(self, ctx: Context, local: tuple[np.ndarray, ...]) -> tuple:
        """Put host-local inputs on the case's devices.

        Args: ctx: the case and its mesh; local: arrays shaped as :meth:`inputs` makes
        them (the timed inputs, or an exact check's).
        Returns: the program's arguments (``jax.Array`` s or pytrees of them)."""

    @abc.abstractmethod
    def program(self, ctx: Context) -> Program:
        """The function the case times.

        Args: ctx: the case and its mesh.
        Returns: a :class:`Program` (its ``fn`` is called with :meth:`place`'s
        arguments)."""

    @abc.abstractmethod
    def output(self, ctx: Context, out: Any) -> np.ndarray:
        """The host-local part of the program's output.

        Args: ctx: the case; out: what the compiled program returned.
        Returns: a numpy array in the output's dtype, shaped as the reference's value."""

    @abc.abstractmethod
    def reference(self, ctx: Context, local: tuple[np.ndarray, ...]) -> Expected:
        """The expected output of the timed inputs.

        Args: ctx: the case; local: this process's inputs.
        Returns: :class:`Expected` float64 values and per-element bounds, at every element
        or at ``ctx.sample(...)`` positions (gather only those: :func:`gather_elements`)."""

    @abc.abstractmethod
    def work(self, case: Case) -> Work:
        """What one case moves and computes.

        Args: case: the case.
        Returns: :class:`Work` (bytes, flops, S and participants for GB/s and busbw)."""

    # -- optional hooks (OPTIONAL_HOOKS) ----------------------------------------------

    def check_case(self, case: Case) -> None:
        """Raise :class:`UsageError` (or ``ValueError``) when ``case`` cannot run (before
        any process starts). Each class checks its own concerns: :meth:`validate` runs every class's
        ``check_case``, base class first (no ``super()`` call)."""
        return None

    def unsupported_case(self, case: Case) -> str | None:
        """Why ``case`` cannot be expressed (e.g. pmap and a subset of the mesh axes), or
        None; per class like :meth:`check_case`, the first reason wins."""
        return None

    def cases(self, case: Case) -> list[Case]:
        """The cases one grid point stands for (default: itself). A workload whose cases
        depend on the layout (e.g. every pair of processes) expands them here."""
        return [case]

    def collective_of(self, case: Case) -> str | None:
        """The collective of ``case`` (a key of ``analysis/models/bandwidth.py``), for busbw;
        default: the ``collective`` attribute."""
        return self.collective

    def takes_part(self, case: Case, process: int) -> bool:
        """Whether ``process`` takes part in ``case`` (times and per-process spreads are
        over the processes that do; default: every process)."""
        return True

    def groups(self, case: Case) -> np.ndarray | None:
        """The global device indices of each group of participants, shape (groups, n),
        recorded with the case; None: no collective groups."""
        return None

    def exact_check(self, ctx: Context) -> ExactCheck | None:
        """Inputs whose every expected output is exact in the compute dtype, with those
        outputs computed without communication (:mod:`podscale.core.patterns`), for a
        second check of the compiled step; None (default): the workload has none."""
        return None

    # -- final ------------------------------------------------------------------------

    @final
    def validate(self, case: Case) -> None:
        """Every class's :meth:`check_case`, base first, then :meth:`unsupported`; a
        ``ValueError`` a check raises is the user's refusal too (one line, exit 2)."""
        for check_case in _own(self, "check_case"):
            try:
                check_case(self, case)
            except UsageError:
                raise
            except ValueError as exc:
                raise UsageError(f"{self.name}: case {case.id}: {exc}") from None
        problem = self.unsupported(case)
        if problem:
            raise UsageError(problem)

    @final
    def unsupported(self, case: Case) -> str | None:
        """The first reason any class gives (:meth:`unsupported_case`), or None. Such
        cases are left out of the grid; a workload left with none is an error giving it."""
        for hook in _own(self, "unsupported_case"):
            reason = hook(self, case)
            if reason:
                return reason
        return None

    @final
    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or None."""
        return next((p for p in self.params if p.name == name), None)

    @property
    @final
    def summary(self) -> str:
        """The first line of the class's docstring (``podscale list``)."""
        doc = (type(self).__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""
