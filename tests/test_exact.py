"""The correctness check at pod scale: integer inputs make every expected output exact in
bfloat16 at 4096 devices, so a wrong output is caught where the rounding bound would pass
anything; loose bounds count elements unchecked, never OK; max_error is a finite ratio."""

import numpy as np
import pytest

from podscale import exact_pattern, gamma, integral
from podscale.core.case import Case
from podscale.core.workload import Expected, check
from podscale.suites.all_gather import all_gather
from podscale.suites.all_reduce import all_reduce
from podscale.suites.reduce_scatter import reduce_scatter


def _case(wl, devices: int, dtype: str = "bfloat16", size: int = 8192) -> Case:
    from podscale.core.grid import Grid, expand

    (case,) = [c for c in expand(Grid((wl.name,), hosts=(1,), devices_per_host=(devices,),
                                      dtypes=(dtype,), variants=("shard_map",),
                                      params=(("size", (size,)),)))
               if c.p.get("op", "sum") == "sum" and c.p.get("algorithm", "flat") == "flat"]
    return case


def _group_inputs(wl, case: Case) -> np.ndarray:
    """Every rank's integer inputs, as the worker makes them (rank order)."""
    n, m = wl.group_size(case), wl.elements(case)
    x = exact_pattern(np.arange(n), m, n, case.dtype)
    assert integral(x)
    return x.astype(np.float64)[None]  # (1 group, n, m)


@pytest.mark.parametrize("devices", [256, 4096])
def test_all_zero_bf16_all_reduce_is_caught(devices):
    case = _case(all_reduce, devices)
    x = _group_inputs(all_reduce, case)
    value, bound = all_reduce.combine(x, case)
    assert not bound.any()  # every expected element is exact in bfloat16
    # every partial sum fits: at most 2**8 in magnitude
    assert np.abs(x).sum(axis=-2).max() <= 256
    zeros = check(np.zeros(value.shape), Expected(value, bound), "bfloat16")
    assert zeros.wrong == np.count_nonzero(value) and zeros.wrong > value.size // 2
    right = check(value.astype(np.float32), Expected(value, bound), "bfloat16")
    assert right.wrong == 0 and right.unchecked == 0 and right.max_error == 0


@pytest.mark.parametrize("devices", [256, 4096])
def test_bound_too_loose_counts_unchecked_never_ok(devices):
    """Normal inputs: gamma_n is infinite in bfloat16 from 256 terms; a zero output then
    passes the bound, so every element is counted unchecked."""
    assert gamma(devices, "bfloat16") == float("inf")
    case = _case(all_reduce, devices, size=512)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, devices, 256)).astype(np.float32)
    value, bound = all_reduce.combine(x.astype(np.float64), case)
    result = check(np.zeros(value.shape), Expected(value, bound), "bfloat16")
    assert result.wrong == 0 and result.unchecked == value.size


def test_missing_rank_caught():
    case = _case(all_reduce, 4096)
    x = _group_inputs(all_reduce, case)
    value, bound = all_reduce.combine(x, case)
    for rank in (0, 1234, 4095):
        dropped = np.delete(x, rank, axis=-2).sum(axis=-2, keepdims=True)
        got = np.broadcast_to(dropped, value.shape)
        assert check(got, Expected(value, bound), "bfloat16").wrong > 0, rank


def test_swapped_blocks_caught():
    """reduce_scatter: ranks 3 and 5 get each other's chunk; all_gather: rank 0's output
    holds rank 3's block where rank 5's belongs and the other way round."""
    for wl in (reduce_scatter, all_gather):
        case = _case(wl, 64)
        x = _group_inputs(wl, case)
        value, bound = wl.combine(x, case)
        got = np.array(np.broadcast_to(value, value.shape))
        if wl is reduce_scatter:
            got[0, [3, 5]] = got[0, [5, 3]]
        else:
            m = wl.elements(case)
            blocks = got[0, 0].reshape(-1, m)
            blocks[[3, 5]] = blocks[[5, 3]]
            got[0, 0] = blocks.reshape(-1)
        result = check(got, Expected(value, np.broadcast_to(bound, value.shape)), "bfloat16")
        assert result.wrong > 0, wl.name


def test_one_element_off_by_twice_its_bound():
    case = _case(all_reduce, 8, dtype="float32")
    x = np.random.default_rng(1).standard_normal((1, 8, 2048)).astype(np.float32)
    value, bound = all_reduce.combine(x.astype(np.float64), case)
    got = np.array(value, dtype=np.float64)
    got[0, 2, 17] += 2 * bound[0, 2, 17]
    result = check(got, Expected(value, bound), "float32")
    assert result.wrong == 1
    assert result.max_error == pytest.approx(2.0, rel=1e-6)  # finite: how far out


def test_max_error_of_exact_elements_in_half_ulps():
    value = np.array([256.0, 4.0])
    result = check(np.array([256.0, 5.0]), Expected(value, np.zeros(2)), "bfloat16")
    assert result.wrong == 1 and result.max_error == pytest.approx(1 / (4 * 2**-8))


def test_patterns_reach_every_rank():
    """With at least K elements per device every rank adds to some element: a missing or
    doubled rank changes a sum."""
    for n, dtype in ((4096, "bfloat16"), (4096, "float16"), (8, "float32"), (2, "bfloat16")):
        x = exact_pattern(np.arange(n), 64, n, dtype)
        assert (x != 0).any(axis=1).all(), (n, dtype)
        assert x.sum(axis=0).max() <= 2 ** {"bfloat16": 8, "float16": 11, "float32": 24}[dtype]


def test_stream_read_exact_inputs_sum_exactly_and_see_a_dropped_block():
    """stream's read (a sum over a device's elements) in bfloat16 over 2**20 elements:
    the bound on normal inputs passes a zero; the integer inputs' sum is exact, and
    leaving out any K-element block changes it."""
    from podscale.suites.stream import stream

    m = 1 << 20
    column = exact_pattern(np.arange(m), 1, m, "bfloat16")[:, 0].astype(np.float64)
    assert integral(column) and 0 < column.sum() <= 256
    k = m // int(np.count_nonzero(column))
    dropped = column.copy()
    dropped[5 * k:6 * k] = 0
    assert dropped.sum() != column.sum()
    assert stream.exact_inputs.__doc__  # the workload has them (read only)
