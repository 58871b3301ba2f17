"""The workload protocol (protocol 2) and its helpers: everything a workload file needs,
re-exported by :mod:`podscale` (``from podscale import Collective, Param, ...``).

- :class:`Workload` (abstract hooks ``inputs``, ``place``, ``program``, ``output``,
  ``reference``, ``work``) with :class:`Param`, :class:`Work`, :class:`Expected`,
  :class:`Program`, :class:`ExactCheck` and the :class:`Context` a case runs in;
  ``seed_for(process)`` is the reference seed.
- :class:`Mapped`: a per-device ``body(case, axes, *blocks)`` in the ``pmap`` and
  ``shard_map`` variants, with the input helpers :func:`normals`, :func:`cast`,
  :func:`exact` and :func:`gather_elements` (the compared elements of every device).
- :class:`Collective`: a one-file collective over any mesh axes (``reduce_axes``) and
  groups (``--group-sizes``), checked on a sample against a float64 reference and
  exactly in closed form (``exact_rule``).
- Rounding-error bounds: :data:`UNIT_ROUNDOFF`, :func:`gamma`, :func:`sum_bound`; exact
  checks: :func:`exact_pattern`, :func:`reduce_pattern`, :func:`dense_pattern`,
  :func:`spacing`, :func:`integral`.
"""

from podscale.core.bounds import UNIT_ROUNDOFF, gamma, integral, sum_bound
from podscale.core.errors import UsageError
from podscale.core.patterns import dense_pattern, exact_pattern, reduce_pattern, spacing
from podscale.core.workload import (
    Context,
    ExactCheck,
    Expected,
    Param,
    Program,
    Step,
    Work,
    Workload,
    seed_for,
)
from podscale.protocol.collective import AXES, GROUP, SIZE, Collective, parse_group
from podscale.protocol.mapped import (
    PMAP_AXIS,
    Mapped,
    cast,
    exact,
    gather_elements,
    gather_processes,
    normals,
)

__all__ = ["AXES", "GROUP", "PMAP_AXIS", "SIZE", "UNIT_ROUNDOFF", "Collective", "Context",
           "ExactCheck", "Expected", "Mapped", "Param", "Program", "Step", "UsageError",
           "Work", "Workload", "cast", "dense_pattern", "exact", "exact_pattern", "gamma",
           "gather_elements", "gather_processes", "integral", "normals", "parse_group",
           "reduce_pattern", "seed_for", "spacing", "sum_bound"]
