"""Progress lines: each case's line stays distinct when cut to the terminal (the study's
246 cases at 80 columns), and the parts every case of a workload shares are left out."""

from podscale.core.grid import expand_all
from podscale.frontend.cli import build_parser
from podscale.frontend.commands.gridargs import STUDY_FILE, grids_from_args
from podscale.launch.progress import fit, fit_label, labels


def test_study_progress_lines_are_distinct_at_80_columns():
    cases = expand_all(grids_from_args(build_parser().parse_args(["study"]), STUDY_FILE)[0])
    shown = [fit_label(label, 80 - len("# [246/246] ") - len(" done (59s, ETA 21s)"))
             for label in labels(cases)]
    assert len(cases) > 200 and len(set(shown)) == len(cases)
    cut = [fit(c.id, 80 - len("# [246/246] ") - len(" done (59s, ETA 21s)")) for c in cases]
    assert len(set(cut)) < len(cases)  # the full ids, cut in the middle, repeat
    assert fit_label("all_reduce@1/algorithm=hierarchical/axes=local/size=1048576/h4xd2", 48) \
        == "all_reduce@1/hierarchical/local/1048576/h4xd2"
    one = labels(cases)[[c.workload for c in cases].index("all_reduce")]
    assert one.startswith("all_reduce@1/") and "float32" not in one and "shard_map" not in one
    assert one.endswith(cases[[c.workload for c in cases].index("all_reduce")].layout.key)


def test_eta_holds_across_launches_of_different_sizes():
    """Launches of 1, 4 and 16 processes whose cases cost in proportion (as on shared
    cores): after the first launch, every ETA is within 10% of the time really left; with
    no weights it is more than twice too short."""
    from podscale.launch.progress import Clock

    hosts, cases, first, each = [1, 4, 16], [10, 10, 10], 2.0, 0.1
    truth = [w * (first + (n - 1) * each) for w, n in zip(hosts, cases)]

    def etas(weights):
        clock, now, out = Clock(cases, weights), 0.0, []
        for launch, (w, n) in enumerate(zip(hosts, cases)):
            clock.start_launch(now)
            for k in range(n):
                now += w * (first if k == 0 else each)
                clock.case_done(now)
                if launch >= 1:
                    out.append((clock.left(), sum(truth) - now))
        return out

    weighted = etas(hosts)
    assert all(abs(left - real) <= 0.1 * real + 1e-9 for left, real in weighted)
    plain = [left / real for left, real in etas(()) if real > 0]
    assert max(plain) < 0.5


def test_eta_is_steady_when_cheap_and_dear_cases_alternate():
    """A grid's sizes alternate 4K, 64K, 1M (cheap, cheap, dear) and the poll sometimes
    sees two cases finish at once: from the fourth case on, while 5 s or more are left,
    each ETA is within 30% of the time really left (with the median of the case costs
    instead of the mean: 84% off, swinging between the cheap and the dear)."""
    from podscale.launch.progress import Clock

    costs = [0.05, 0.1, 1.5] * 20
    clock, now, errors = Clock([len(costs)]), 0.0, []
    clock.start_launch(now)
    clock.case_done(now := now + 2.0)  # the launch's first case
    k = 1
    while k < len(costs):
        together = 2 if k % 5 == 0 and k + 1 < len(costs) else 1  # one poll, two cases
        now += sum(costs[k:k + together])
        clock.case_done(now, together)
        k += together
        real = sum(costs[k:])
        if k >= 4 and real >= 5:
            errors.append(abs(clock.left() - real) / real)
    assert max(errors) < 0.3, max(errors)
