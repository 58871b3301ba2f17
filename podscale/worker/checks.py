"""A case's correctness checks: its outputs against the workload's reference within the
rounding bound, then (where the workload has them, and the first check was not already
an equality check on every element, as for data movement) the same compiled step on
integer inputs whose every output is exact (:func:`podscale.core.bounds.exact_pattern`)."""

from __future__ import annotations

from typing import Any

from podscale.core.case import Case
from podscale.core.workload import Context, check
from podscale.worker import faults
from podscale.worker.compiling import Compiled


def run_checks(case: Case, index: int, wl, ctx: Context, expected, compiled: Compiled, rt,
               fault) -> dict[str, Any]:
    """The outputs of the timed inputs against their reference, then (where the workload
    has them) of integer inputs whose every output is exact: the CaseRecord's fields."""
    rt.mark(index, case.id, "check")
    got = faults.corrupt(fault, rt.process, index, wl.output(ctx, compiled.run()),
                         case.workload)
    first = check(got, expected, case.dtype)
    fields = dict(checked=first.checked, wrong=first.wrong, max_error=first.max_error,
                  result=first.result, unchecked=first.unchecked, exact_checked=first.exact)
    # data movement is already compared for equality: the exact pass adds nothing there
    exact_local = wl.exact_inputs(ctx) if first.exact < first.checked else None
    if exact_local is not None:
        rt.mark(index, case.id, "exact check")
        exact_expected = wl.reference(ctx, exact_local)
        out = compiled.call(*wl.step(ctx, exact_local).args)
        got = faults.corrupt(fault, rt.process, index, wl.output(ctx, out), case.workload)
        second = check(got, exact_expected, case.dtype)
        fields.update(checked=first.checked + second.checked,
                      wrong=first.wrong + second.wrong, exact_checked=second.checked,
                      max_error=max(first.max_error, second.max_error),
                      unchecked=second.unchecked)  # the exact check verifies every output
    if rt.process == 0 and compiled.program is not None:
        fields["program"] = compiled.program
    groups = wl.groups(case) if rt.process == 0 else None
    if groups is not None:
        from podscale.core.groups import spell_groups

        fields["group_members"] = spell_groups(groups)
    return fields
