"""Block-wise fixed point: no int32 overflow for any data, exact dequantization, the stated
error bound against the exact sum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from netweft.transport.collectives.aggregation.quantization import (
    EXPONENT_MIN,
    BlockQuantizer,
    shared_exponents,
    value_bits,
)


def quantized_sum(arrays: list[np.ndarray], block: int):
    """What an in-network all-reduce computes: shared exponents, int32 sums, dequantized."""
    quant = BlockQuantizer(block, len(arrays))
    exps = shared_exponents(*(quant.local_exponents(a) for a in arrays))
    total = np.zeros((quant.blocks(arrays[0].size), block), dtype=np.int32)
    for a in arrays:
        q = quant.quantize(a, exps)
        # the switch adds in int32: check that no partial sum left its range
        wide = total.astype(np.int64) + q
        assert np.abs(wide).max(initial=0) <= 2**31 - 1
        total = wide.astype(np.int32)
    return quant, exps, total, quant.dequantize(total, exps, arrays[0].size)


def exact(arrays: list[np.ndarray]) -> np.ndarray:
    return np.sum([a.astype(np.float64) for a in arrays], axis=0)


def test_value_bits_leave_headroom_for_the_sum():
    for n in (1, 2, 3, 4, 5, 8, 9, 64, 1000):
        assert n * 2 ** value_bits(n) <= 2**30
    assert value_bits(8) == 27
    with pytest.raises(ValueError):
        value_bits(0)


def test_worst_case_values_do_not_overflow_int32():
    # every worker's values at the top of the grid, same sign: the largest possible sum
    n, block = 8, 64
    top = np.nextafter(np.float32(2.0**20), np.float32(0))
    arrays = [np.full(block * 3, top, dtype=np.float32) for _ in range(n)]
    quant, exps, total, result = quantized_sum(arrays, block)
    assert np.abs(total.astype(np.int64)).max() <= n * 2**quant.bits
    assert np.all(np.abs(result - exact(arrays)) <= quant.error_bound(exps, exact(arrays)))


def test_dequantization_is_exact_scaling():
    quant = BlockQuantizer(4, 2)
    sums = np.array([[1, -2, 3, 2**29], [0, 5, -7, 1]], dtype=np.int32)
    exps = np.array([3, -10], dtype=np.int16)
    out = quant.dequantize(sums, exps, 8)
    expect = np.concatenate([sums[0] * 2.0 ** (3 - quant.bits), sums[1] * 2.0 ** (-10 - quant.bits)])
    assert np.array_equal(out, expect.astype(np.float32))
    assert out.dtype == np.float32


def test_zero_and_tiny_blocks_use_the_minimum_exponent():
    quant = BlockQuantizer(2, 4)
    x = np.array([0, 0, 1e-40, -1e-39, 1.5, 0.25], dtype=np.float32)
    assert list(quant.local_exponents(x)) == [EXPONENT_MIN, EXPONENT_MIN, 1]


def test_non_finite_values_are_refused():
    quant = BlockQuantizer(4, 2)
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="NaN or infinite"):
            quant.local_exponents(np.array([1, bad], dtype=np.float32))


def test_exponent_below_the_data_is_refused():
    quant = BlockQuantizer(4, 2)
    x = np.array([8.0, 1, 2, 3], dtype=np.float32)
    with pytest.raises(ValueError, match="shared exponents"):
        quant.quantize(x, np.array([1], dtype=np.int16))


def test_wrong_dtype_is_refused():
    with pytest.raises(ValueError, match="float32"):
        BlockQuantizer(4, 2).local_exponents(np.ones(4))


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False,
                     min_value=-(2.0**100), max_value=2.0**100)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), block=st.sampled_from([1, 3, 16, 64]),
       data=st.data())
def test_sum_within_the_stated_bound(n, block, data):
    length = data.draw(st.integers(1, 200))
    arrays = [data.draw(hnp.arrays(np.float32, length, elements=finite32)) for _ in range(n)]
    quant, exps, _total, result = quantized_sum(arrays, block)
    s = exact(arrays)
    err = np.abs(result.astype(np.float64) - s)
    assert np.all(err <= quant.error_bound(exps, s))


def test_bound_is_tight_enough_to_matter():
    # Gradient-like data: the error stays near float32's own precision of the block's peak.
    rng = np.random.default_rng(7)
    arrays = [rng.normal(0, 1e-3, 4096).astype(np.float32) for _ in range(8)]
    quant, exps, _total, result = quantized_sum(arrays, 64)
    s = exact(arrays)
    bound = quant.error_bound(exps, s)
    peaks = np.repeat(np.abs(np.stack(arrays)).reshape(8, -1, 64).max(axis=(0, 2)), 64)
    assert np.all(bound <= 2.0**-22 * peaks + 2.0**-24 * np.abs(s) + 2.0**-149)
    assert np.all(np.abs(result - s) <= bound)
    assert np.abs(result - s).max() > 0  # quantization really rounds: the test can fail
