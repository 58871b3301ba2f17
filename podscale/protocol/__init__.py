"""The workload protocol and its helpers: everything a workload file needs, re-exported by
:mod:`podscale` (``from podscale import Collective, Param, ...``).

- :class:`Workload` with :class:`Param`, :class:`Work`, :class:`Expected`, :class:`Step` and
  the :class:`Context` a case runs in; ``seed_for(process)`` is the reference seed.
- :class:`Mapped`: a per-device ``body`` in the ``pmap`` and ``shard_map`` variants, with
  the input helpers :func:`normals`, :func:`cast`, :func:`exact`, :func:`gather_processes`.
- :class:`Collective`: a one-file collective over any mesh axes (``reduce_axes``) and
  groups (``--group-sizes``), checked against a float64 reference.
- Rounding-error bounds: :data:`UNIT_ROUNDOFF`, :func:`gamma`, :func:`sum_bound`; exact
  checks: :func:`exact_pattern` (integer inputs), :func:`integral`.
"""

from podscale.core.bounds import UNIT_ROUNDOFF, exact_pattern, gamma, integral, sum_bound
from podscale.core.errors import UsageError
from podscale.core.workload import Context, Expected, Param, Step, Work, Workload, seed_for
from podscale.protocol.collective import AXES, GROUP, SIZE, Collective, parse_group
from podscale.protocol.mapped import PMAP_AXIS, Mapped, cast, exact, gather_processes, normals

__all__ = ["AXES", "GROUP", "PMAP_AXIS", "SIZE", "UNIT_ROUNDOFF", "Collective", "Context",
           "Expected", "Mapped", "Param", "Step", "UsageError", "Work", "Workload", "cast",
           "exact", "exact_pattern", "gamma", "gather_processes", "integral", "normals",
           "parse_group", "seed_for", "sum_bound"]
