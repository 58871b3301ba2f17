"""The timing core with a fake clock and barrier: no JAX needed."""

from podscale.core.timing import Timing, measure


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_phases_iterations_and_barriers():
    events: list[str] = []
    clock = FakeClock(0.5)
    out = list(measure(lambda: events.append("step"), clock=clock,
                       barrier=lambda: events.append("barrier"), warmup=2, iters=3))
    assert [t.phase for t in out] == ["warmup"] * 2 + ["timed"] * 3
    assert [t.iteration for t in out] == [0, 1, 0, 1, 2]
    assert all(t.seconds == 0.5 for t in out)
    # one barrier before the timed loop and one before each later timed iteration
    assert events == ["step", "step", "barrier", "step", "barrier", "step", "barrier", "step"]


def test_sync_once_and_around_hook():
    barriers, wrapped = [], []

    class Ctx:
        def __init__(self, i):
            self.i = i

        def __enter__(self):
            wrapped.append(self.i)

        def __exit__(self, *exc):
            return False

    out = list(measure(lambda: None, clock=FakeClock(1.0), barrier=lambda: barriers.append(1),
                       warmup=0, iters=4, phase="traced", sync_each=False, around=Ctx))
    assert len(barriers) == 1
    assert wrapped == [0, 1, 2, 3]
    assert out[-1] == Timing("traced", 3, 1.0)


def test_barrier_time_is_never_clocked():
    """A barrier that advances the clock by 100 s, a step that advances it by 1 s: if the
    barrier ever moved inside the clocked region, samples would show 101 s."""
    now = [0.0]

    def clock() -> float:
        return now[0]

    def barrier() -> None:
        now[0] += 100.0

    def step() -> None:
        now[0] += 1.0

    for sync_each in (True, False):
        out = list(measure(step, clock=clock, barrier=barrier, warmup=2, iters=5,
                           sync_each=sync_each))
        assert [t.seconds for t in out] == [1.0] * 7
