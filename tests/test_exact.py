"""The correctness checks at pod scale, with nothing gathered: the exact pass's expected
outputs come in closed form (checked here against brute force over every rank), catch a
wrong output where the rounding bound would pass anything, see sign- and
magnitude-dependent errors; the float check compares a sample; a broken reference or a
mis-shaped output never passes."""

import numpy as np
import pytest

from podscale import exact_pattern, gamma, integral, reduce_pattern
from podscale.core.bounds import exact_limit
from podscale.core.case import Case
from podscale.core.checking import OutputMismatch, check
from podscale.core.patterns import _position, sample_positions, spacing
from podscale.core.workload import Expected
from podscale.protocol.exact import rule_inputs, rule_outputs
from podscale.suites.all_reduce import all_reduce


def _case(wl, devices: int, dtype: str = "bfloat16", size: int = 8192) -> Case:
    from podscale.core.grid import Grid, expand

    (case,) = [c for c in expand(Grid((wl.name,), hosts=(1,), devices_per_host=(devices,),
                                      dtypes=(dtype,), variants=("shard_map",),
                                      params=(("size", (size,)),)))
               if c.p.get("op", "sum") == "sum" and c.p.get("algorithm", "flat") == "flat"]
    return case


@pytest.mark.parametrize("n,dtype", [(256, "bfloat16"), (4096, "bfloat16"), (8, "float32"),
                                     (4096, "float16"), (3, "float32")])
def test_closed_forms_equal_brute_force_and_every_partial_sum_is_exact(n, dtype):
    m = 256
    x = exact_pattern(np.arange(n), m, n, dtype)
    assert (x < 0).any() and (np.abs(x[x != 0]) < 2**-6).any()  # signed, small values
    # each element: a multiple of one power of two, at most 2**p of it in |sum|, so every
    # partial sum in any order is exact
    _, _, unit = _position(np.arange(m), spacing(n, dtype)[1], dtype)
    assert integral(x / unit) and (np.abs(x).sum(axis=0) / unit).max() <= exact_limit(dtype)
    k, v = spacing(n, dtype)
    assert -(-n // k) * v <= exact_limit(dtype)
    assert (x != 0).any(axis=1).all() == (m >= k)  # every rank adds somewhere once m >= K
    for op, brute in (("sum", x.sum(axis=0)), ("max", x.max(axis=0)), ("min", x.min(axis=0))):
        np.testing.assert_array_equal(reduce_pattern(op, np.arange(m), n, dtype), brute)


@pytest.mark.parametrize("devices", [256, 4096])
def test_all_zero_bf16_all_reduce_is_caught(devices):
    m = 256
    value = rule_outputs("sum", np.array([0]), devices, m, "bfloat16")
    zeros = check(np.zeros(value.shape, np.float32),
                  Expected(value, np.zeros(1)), "float32")
    assert zeros.wrong == np.count_nonzero(value) and zeros.wrong > value.size // 2
    right = check(value.astype(np.float32), Expected(value, np.zeros(1)), "float32")
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
    result = check(np.zeros(value.shape), Expected(value, bound, dtype="float64"),
                   "bfloat16")
    assert result.wrong == 0 and result.unchecked == value.size


def test_missing_rank_caught():
    n, m = 4096, 256  # m >= K = 32: every rank adds to some element
    x = exact_pattern(np.arange(n), m, n, "bfloat16")
    value = reduce_pattern("sum", np.arange(m), n, "bfloat16")
    for rank in (0, 1234, 4095):
        dropped = np.delete(x, rank, axis=0).sum(axis=0)
        assert check(dropped, Expected(value, np.zeros(1), dtype="float64")).wrong > 0, rank


def test_swapped_blocks_caught():
    """reduce_scatter: ranks 3 and 5 get each other's chunk; all_gather: rank 0's output
    holds rank 3's block where rank 5's belongs and the other way round."""
    n, m = 64, 512
    ranks = np.arange(n)
    scattered = rule_outputs("reduce_scatter", ranks, n, m, "bfloat16")
    got = scattered.copy()
    got[[3, 5]] = got[[5, 3]]
    assert check(got, Expected(scattered, np.zeros(1), dtype="float64")).wrong > 0
    gathered = rule_outputs("all_gather", np.array([0]), n, m, "bfloat16")
    blocks = gathered.reshape(n, m).copy()
    blocks[[3, 5]] = blocks[[5, 3]]
    got = blocks.reshape(1, -1)
    assert check(got, Expected(gathered, np.zeros(1), dtype="float64")).wrong > 0
    # and the dense inputs really are what each rank sends
    np.testing.assert_array_equal(rule_inputs("all_gather", ranks, n, m, "bfloat16").ravel(),
                                  gathered[0])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_sign_and_magnitude_dependent_errors_caught(dtype):
    """A 2-ulp error on every negative result, and small results flushed to zero: both
    pass a rounding bound's slack on normal inputs, both fail the exact pass."""
    n, m = 8, 4096
    value = rule_outputs("sum", np.arange(n), n, m, dtype)
    u = {"float32": 2.0**-24, "bfloat16": 2.0**-8}[dtype]
    spacing_ = 2.0 ** np.floor(np.log2(np.where(value == 0, 1, np.abs(value)))) * 2 * u
    negative = np.where(value < 0, value - 2 * spacing_, value)
    flushed = np.where(np.abs(value) < 1e-3, 0.0, value)
    exp = Expected(value, np.zeros(1), dtype="float64")
    assert check(negative, exp).wrong == np.count_nonzero(value < 0) > 0
    assert check(flushed, exp).wrong == np.count_nonzero((np.abs(value) < 1e-3) & (value != 0)) > 0


def test_one_element_off_by_twice_its_bound():
    case = _case(all_reduce, 8, dtype="float32")
    x = np.random.default_rng(1).standard_normal((1, 8, 2048)).astype(np.float32)
    value, bound = all_reduce.combine(x.astype(np.float64), case)
    got = np.array(value, dtype=np.float64)
    got[0, 2, 17] += 2 * bound[0, 2, 17]
    result = check(got, Expected(value, bound, dtype="float64"), "float32")
    assert result.wrong == 1
    assert result.max_error == pytest.approx(2.0, rel=1e-6)  # finite: how far out


def test_max_error_of_exact_elements_in_half_ulps():
    value = np.array([256.0, 4.0])
    result = check(np.array([256.0, 5.0]), Expected(value, np.zeros(2), dtype="float64"),
                   "bfloat16")
    assert result.wrong == 1 and result.max_error == pytest.approx(1 / (4 * 2**-8))


def test_nan_reference_or_bound_never_passes():
    """A bug in a reference (NaN expected value or bound) used to turn the checker off."""
    got = np.zeros(4096, np.float32)
    nan = check(got, Expected(np.full(4096, np.nan), np.zeros(1)))
    assert nan.wrong == 4096 and nan.max_error == float("inf")
    nan_bound = check(got, Expected(np.zeros(4096), np.full(4096, np.nan)))
    assert nan_bound.wrong == 4096


def test_output_shape_and_dtype_compared_first():
    exp = Expected(np.zeros((2, 8)), np.zeros(1))
    with pytest.raises(OutputMismatch, match=r"float32 \(2, 8\) where the reference is "
                                             r"bfloat16 \(2, 8\)"):
        check(np.zeros((2, 8), np.float32), exp, "bfloat16")
    with pytest.raises(OutputMismatch, match=r"\(2, 2, 8\) where the reference is float32"):
        check(np.zeros((2, 2, 8), np.float32), exp, "float32")  # an extra stacked axis
    sampled = Expected(np.zeros((2, 3)), np.zeros(1), np.array([0, 5, 7]))
    assert check(np.zeros((2, 8), np.float32), sampled).unsampled == 10
    with pytest.raises(OutputMismatch):
        check(np.zeros((2, 6), np.float32), sampled)  # position 7 is outside the output


def test_sample_is_agreed_and_a_single_wrong_element_is_found_by_the_exact_pass():
    """One wrong element among 2**20: the exact pass (every element) finds it always; the
    sampled float check only when the sample holds it, k/m of the time."""
    m, k = 1 << 20, 4096
    a, b = sample_positions(m, k, seed=7), sample_positions(m, k, seed=7)
    np.testing.assert_array_equal(a, b)  # every process derives the same positions
    assert a.size == k == np.unique(a).size and a.max() < m
    hits = sum(123456 in sample_positions(m, k, seed) for seed in range(400))
    assert hits <= 10  # about k/m * 400 = 1.6
    value = reduce_pattern("sum", np.arange(m), 8, "float32")
    got = value.copy()
    got[123456] += 1.0
    assert check(got, Expected(value, np.zeros(1), dtype="float64")).wrong == 1
    chunked = sample_positions(64, 4, seed=1, chunks=4)
    assert chunked.size == 4 and len(set(chunked % 16)) == 1  # one offset in every chunk


def test_stream_read_exact_check_sums_exactly_and_sees_a_dropped_block():
    """stream's read (a sum over a device's elements) in bfloat16 over 2**20 elements:
    the bound on normal inputs passes a zero; the pattern's sum is exact, and leaving out
    any K-element block changes it."""
    m = 1 << 20
    column = exact_pattern(np.arange(m), 1, m, "bfloat16", contributors=128)[:, 0]
    k = m // int(np.count_nonzero(column))
    assert k == m // 128 and np.abs(column).sum() / np.abs(column[column != 0]).min() <= 256
    dropped = column.copy()
    dropped[5 * k:6 * k] = 0
    assert dropped.sum() != column.sum()


@pytest.mark.parametrize("size,devices", [(3 * (1 << 20) + 10, 2), (1000, 1)])
def test_stream_reference_from_its_period_is_the_inputs_sum(size, devices):
    """stream's inputs repeat a period per device; the reference (the period's sum times
    its repeats, plus the rest) equals the float64 sum of every input, with a remainder and
    with a buffer shorter than one period; and a period that does not repeat is seen."""
    from podscale.core.case import Case, Layout, Settings
    from podscale.core.workload import Context
    from podscale.suites.stream import stream as wl

    case = Case("stream", "1", "stream", "shard_map", "float32", Layout(1, devices),
                (("op", "read"), ("size", size)), Settings())
    ctx = Context(case, 0, 1, [None] * devices, None)
    (x,) = wl.inputs(ctx)
    flat = x.reshape(devices, -1).astype(np.float64)
    want = flat.sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(wl.reference(ctx, (x,)).value, want)
    assert len(np.unique(flat[0])) >= min(size // devices, 1 << 20) * 0.9  # drawn, not constant
    if size > 1 << 20:
        broken = x.copy().reshape(devices, -1)
        broken[0, -1] += 0.5  # the inputs no longer repeat: the reference no longer holds
        assert not np.array_equal(wl.reference(ctx, (broken,)).value,
                                  broken.astype(np.float64).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("dtype,width,exactly", [("float32", 3, True), ("bfloat16", 3, True),
                                                 ("bfloat16", 1000, False)])
def test_dot_exact_check_compares_every_row_for_equality(dtype, width, exactly):
    """dot's exact pass: integer rows whose dot products are exact in the dtype (bound 0:
    every row compared for equality, through check's equality path); two swapped rows and
    a zeroed row are wrong. Rows too wide for the dtype's integers fall back to the
    rounding bound, still sound."""
    from podscale.core.case import Layout, Settings
    from podscale.core.workload import Context
    from podscale.protocol import cast
    from podscale.suites.dot import PERIOD
    from podscale.suites.dot import dot as wl

    size = 2 * PERIOD + 10
    case = Case("dot", "1", "dot", "shard_map", dtype, Layout(1, 2),
                (("size", size), ("width", width)), Settings())
    ctx = Context(case, 0, 1, [None, None], None)
    ex = wl.exact_check(ctx)
    x, y = (np.asarray(a, np.float64) for a in ex.inputs)
    assert x.shape == (2, size // 2, width) and np.all(x == np.rint(x))
    got = cast(np.einsum("dri,dri->dr", x, y), dtype)  # exact: integers
    first = check(got, ex.expected, dtype)
    assert first.wrong == 0 and first.checked == size
    assert (first.exact == size) == exactly
    if not exactly:
        return
    swapped = got.copy()
    i = int(np.flatnonzero(got[0, :-1] != got[0, 1:])[0])
    swapped[0, [i, i + 1]] = swapped[0, [i + 1, i]]
    assert check(swapped, ex.expected, dtype).wrong == 2
    zeroed = got.copy()
    j = int(np.flatnonzero(got[1] != 0)[0])
    zeroed[1, j] = 0
    assert check(zeroed, ex.expected, dtype).wrong == 1


@pytest.mark.parametrize("k,bits", [(256, 12), (4096, 9), (16384, None)])
def test_matmul_float32_inputs_reveal_a_lowered_precision(k, bits):
    """A float32 matmul's inputs carry a fraction bfloat16 drops: the product of A rounded
    to bfloat16 (what a TPU does at precision=default; the worker's path with it planted
    is tests/test_workloads.py's) is counted ``lowered`` in every sampled element, passes
    at default and is wrong at highest; the float32 product is exact (0 lowered, 0 wrong)
    at every precision; a K too long for exact sums keeps integer inputs (no probe). No
    JAX in this process: a later test's fork would meet JAX's threads."""
    import ml_dtypes

    from podscale.core.case import Layout, Settings
    from podscale.core.workload import Context
    from podscale.suites.matmul import fraction_bits
    from podscale.suites.matmul import matmul as wl

    def case(precision):
        return Case("matmul", "2", "matmul", "shard_map", "float32", Layout(1, 1),
                    (("size", 8), ("shape", f"8x{k}x8"), ("precision", precision),
                     ("out_dtype", "accumulator")), Settings(check_elements=16))

    assert fraction_bits(case("default")) == bits
    ctx = Context(case("default"), 0, 1, [None], None)
    a, b = wl.inputs(ctx)
    # integers and 2**-f: every sum exact, in float64 as in a float32 accumulator
    full = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    rounded = a.astype(ml_dtypes.bfloat16).astype(np.float64)
    low = np.matmul(rounded, b.astype(np.float64)).astype(np.float32)
    for precision in ("default", "high", "highest"):
        ctx = Context(case(precision), 0, 1, [None], None)
        expected = wl.reference(ctx, (a, b))
        exact = check(full, expected)
        assert exact.wrong == 0 and exact.lowered == 0 and exact.checked == 16, exact
        lowered = check(low, expected)
        if bits is None:  # integers: bfloat16 holds them, nothing to tell
            assert lowered.wrong == 0 and lowered.lowered == 0
            continue
        assert lowered.lowered == 16, lowered
        assert lowered.wrong == (16 if precision == "highest" else 0), (precision, lowered)
    if bits is not None:  # a value neither product gives is wrong at every precision
        off = low.copy()
        off[0, 0, :] += 1
        assert check(off, wl.reference(Context(case("default"), 0, 1, [None], None),
                                      (a, b))).wrong >= 1


@pytest.mark.parametrize("dtype,out", [("bfloat16", "input"), ("float16", "input"),
                                       ("int8", "accumulator")])
def test_matmul_written_in_a_narrow_dtype_is_held_to_one_rounding(dtype, out):
    """At ``out_dtype=input`` a bfloat16 (float16) product is the exact sum rounded once to
    the output dtype, to nearest even, as a device rounds its float32 accumulator: that
    passes the exact pass on every element, and the same sums truncated instead (a
    rounding a device must not do) are wrong; an int8 product is its exact int32 sum, and
    one element off by one is wrong. No JAX in this process (see above)."""
    import ml_dtypes

    from podscale.core.case import Layout, Settings
    from podscale.core.workload import Context
    from podscale.suites.matmul import matmul as wl

    case = Case("matmul", "2", "matmul", "shard_map", dtype, Layout(1, 1),
                (("size", 64), ("shape", "16x1024x64"), ("precision", "default"),
                 ("out_dtype", out)), Settings())
    ctx = Context(case, 0, 1, [None], None)
    if dtype == "int8":
        ex = wl.exact_check(ctx)
        a, b = (np.asarray(x, np.float64) for x in ex.inputs)
        got = np.matmul(a, b).astype(np.int32)
        assert ex.expected.dtype == "int32" and check(got, ex.expected, dtype).wrong == 0
        got.flat[7] += 1
        assert check(got, ex.expected, dtype).wrong == 1
        return
    # sums near 2048-4096, where bfloat16 keeps 8 bits and float16 11: rounding matters
    rng = np.random.default_rng(0)
    a = np.full((1, 16, 1024), 3.0)
    b = rng.integers(0, 3, (1, 1024, 64)).astype(np.float64)
    expected = wl.reference(ctx, (a, b))
    exact = np.matmul(a, b)
    narrow = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[dtype]
    nearest = exact.astype(np.float32).astype(narrow)
    assert expected.dtype == dtype and (nearest.astype(np.float64) != exact).any()
    assert check(nearest, expected, dtype).wrong == 0
    bits = {"bfloat16": 8, "float16": 11}[dtype]
    scale = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(exact), 1))) - bits + 1)
    truncated = (np.trunc(exact / scale) * scale).astype(narrow)
    differs = np.count_nonzero(truncated.astype(np.float64) != nearest.astype(np.float64))
    assert differs > 0 and check(truncated, expected, dtype).wrong == differs
