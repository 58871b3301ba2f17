import math

import pytest

from podscale.analysis.models.bandwidth import BUS_FACTOR, algbw, bus_factor, busbw


@pytest.mark.parametrize(
    "collective, n, factor",
    [("all_reduce", 8, 2 * 7 / 8), ("all_gather", 4, 3 / 4), ("reduce_scatter", 2, 0.5),
     ("all_to_all", 4, 0.75), ("broadcast", 8, 1.0), ("reduce", 3, 1.0), ("sendrecv", 2, 1.0)],
)
def test_nccl_tests_factors(collective, n, factor):
    assert BUS_FACTOR[collective](n) == pytest.approx(factor)
    assert busbw(collective, 1e9, 0.5, n) == pytest.approx(2e9 * factor)


def test_algbw_and_collectives():
    assert algbw(100, 4) == 25
    assert math.isnan(algbw(1, 0))
    assert bus_factor("all_reduce", 1) == 0.0
    assert bus_factor("all_reduce", 4) == pytest.approx(1.5)
    assert bus_factor(None, 4) is None  # not a collective (e.g. dot)
    assert bus_factor(float("nan"), 4) is None  # a pandas missing value
