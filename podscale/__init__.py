"""podscale: benchmarking and profiling for JAX multi-controller programs.

The public API, imported lazily (a worker that imports ``podscale`` pays for none of it):

- writing workloads (:mod:`podscale.protocol`, protocol 2): ``Workload``, ``Param``,
  ``Work``, ``Expected``, ``Program``, ``ExactCheck``, ``Context``, ``Mapped``,
  ``Collective``, ``normals``, ``cast``, ``exact``, ``gather_elements``, ``seed_for``,
  ``UNIT_ROUNDOFF``, ``gamma``, ``sum_bound``, ``integral``, ``exact_pattern``,
  ``reduce_pattern``, ``dense_pattern``, ``spacing`` (``Step`` and ``gather_processes`` remain for
  the worker and programs that need whole arrays);
- reading results (:mod:`podscale.analysis`): ``Run``, ``load_run``, ``summarize``; a
  profiled program's run: ``load_profile`` (its records as frames) and
  ``summarize_profile`` (its step table, goodput ledger), ``profile_findings`` (that
  summary's Findings, as ``podscale profile`` says them).
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from podscale.core.version import __version__  # the one place (pyproject reads it there)

# From a checkout that is not installed (``tools/accel_check.py`` on a bare accelerator
# machine): ``podscale.analysis`` and ``podscale.suites`` live at the repository's top.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isfile(os.path.join(_ROOT, "pyproject.toml")) and \
        os.path.isfile(os.path.join(_ROOT, "analysis", "__init__.py")):
    __path__.append(_ROOT)

_PROTOCOL = ("AXES", "GROUP", "PMAP_AXIS", "SIZE", "UNIT_ROUNDOFF", "Collective", "Context",
             "ExactCheck", "Expected", "Mapped", "Param", "Program", "Step", "UsageError",
             "Work", "Workload", "cast", "dense_pattern", "exact", "exact_pattern", "gamma",
             "gather_elements", "gather_processes", "integral", "normals", "parse_group",
             "reduce_pattern", "seed_for", "spacing", "sum_bound")
_ANALYSIS = ("Run", "load_profile", "load_run", "profile_findings", "summarize",
             "summarize_profile")
__all__ = ["__version__", *_PROTOCOL, *_ANALYSIS]

if TYPE_CHECKING:
    from podscale.analysis import (  # noqa: F401
        Run,
        load_profile,
        load_run,
        profile_findings,
        summarize,
        summarize_profile,
    )
    from podscale.protocol import *  # noqa: F403


def __getattr__(name: str) -> Any:
    if name in _PROTOCOL:
        return getattr(importlib.import_module("podscale.protocol"), name)
    if name in _ANALYSIS:
        return getattr(importlib.import_module("podscale.analysis"), name)
    raise AttributeError(f"module 'podscale' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
