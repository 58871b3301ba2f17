"""podscale: benchmarking and profiling for JAX multi-controller programs.

The public API, imported lazily (a worker that imports ``podscale`` pays for none of it):

- writing workloads (:mod:`podscale.protocol`): ``Workload``, ``Param``, ``Work``,
  ``Expected``, ``Step``, ``Context``, ``Mapped``, ``Collective``, ``normals``, ``cast``,
  ``exact``, ``gather_processes``, ``seed_for``, ``UNIT_ROUNDOFF``, ``gamma``,
  ``sum_bound``;
- reading results (:mod:`podscale.analysis`): ``Run``, ``load_run``, ``summarize``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

_PROTOCOL = ("AXES", "GROUP", "PMAP_AXIS", "SIZE", "UNIT_ROUNDOFF", "Collective", "Context",
             "Expected", "Mapped", "Param", "Step", "UsageError", "Work", "Workload", "cast",
             "exact", "gamma", "gather_processes", "normals", "parse_group", "seed_for",
             "sum_bound")
_ANALYSIS = ("Run", "load_run", "summarize")
__all__ = ["__version__", *_PROTOCOL, *_ANALYSIS]

if TYPE_CHECKING:
    from podscale.analysis import Run, load_run, summarize  # noqa: F401
    from podscale.protocol import *  # noqa: F403


def __getattr__(name: str) -> Any:
    if name in _PROTOCOL:
        return getattr(importlib.import_module("podscale.protocol"), name)
    if name in _ANALYSIS:
        return getattr(importlib.import_module("podscale.analysis"), name)
    raise AttributeError(f"module 'podscale' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
