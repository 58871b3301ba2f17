"""A case's correctness checks: its last timed iteration's outputs against the
workload's reference (every element, or a sample of ``--check-elements`` per device)
within the rounding bound, then, where the workload has one and the first check did not
already compare every element for equality, the same compiled step on inputs whose every
output is exact and known in closed form (:mod:`podscale.core.patterns`): every element
compared, no communication."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podscale.core.case import Case
from podscale.core.checking import check
from podscale.core.workload import Context, Expected, Workload
from podscale.startup import faults
from podscale.worker.compiling import Compiled

if TYPE_CHECKING:
    from podscale.startup.faults import Fault
    from podscale.startup.runtime import Runtime



def run_checks(case: Case, index: int, wl: Workload, ctx: Context, expected: Expected,
               compiled: Compiled, rt: Runtime, fault: Fault | None,
               outputs: Any = None) -> dict[str, Any]:
    """The CaseRecord's check fields: ``checked`` and ``wrong`` over both passes,
    ``unchecked`` (loose bounds) from both, ``unsampled`` (timed outputs outside the
    sample) and ``exact_checked`` (elements compared for equality). ``outputs``: the last
    timed iteration's (else the step runs once more)."""
    rt.mark(index, case.id, "check")
    if outputs is None:
        outputs = compiled.run()
    got = faults.corrupt(fault, rt.process, index, wl.output(ctx, outputs), case.workload)
    first = check(got, expected, case.dtype)
    fields: dict[str, Any] = dict(checked=first.checked, wrong=first.wrong,
                                  max_error=first.max_error,
                  result=first.result, unchecked=first.unchecked, exact_checked=first.exact,
                  unsampled=first.unsampled, lowered=first.lowered)
    # data movement compared in full is an equality check already: nothing to add
    complete = first.exact == first.checked and first.unsampled == 0
    exact = None if complete else wl.exact_check(ctx)
    if exact is not None:
        rt.mark(index, case.id, "exact check")
        out = compiled.call(*wl.place(ctx, exact.inputs))
        got = faults.corrupt(fault, rt.process, index, wl.output(ctx, out), case.workload)
        second = check(got, exact.expected, case.dtype)
        fields.update(checked=first.checked + second.checked,
                      wrong=first.wrong + second.wrong,
                      exact_checked=first.exact + second.exact,
                      max_error=max(first.max_error, second.max_error),
                      unchecked=first.unchecked + second.unchecked)
    if rt.process == 0 and compiled.program is not None:
        fields["program"] = compiled.program
    groups = wl.groups(case) if rt.process == 0 else None
    if groups is not None:
        from podscale.core.groups import spell_groups

        fields["group_members"] = spell_groups(groups)
    return fields
