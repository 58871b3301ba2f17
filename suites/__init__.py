"""Workloads measured by podscale. Each suite module defines a :class:`Workload`."""

from __future__ import annotations

from importlib import import_module

from suites.common import Prepared, Workload, prepare_case

__all__ = ["Prepared", "Workload", "prepare", "workload"]


def workload(name: str) -> Workload:
    """The workload of suite ``name`` (``dot`` or ``psum``)."""
    return import_module(f"suites.{name}").WORKLOAD


def prepare(case, rt) -> Prepared:
    """Build inputs and the compiled step of ``case`` on this process's devices."""
    return prepare_case(workload(case.suite), case, rt)
