"""Block-wise fixed point for float32 with one shared exponent per block.

A switch sums 32-bit integers, not floats. Before an in-network all-reduce,
each worker cuts its float32 array into blocks of ``block`` elements (one
block per aggregation packet) and turns each block into integers with a
power-of-two scale shared by every worker for that block:

    q = rint(x * 2**(P - e))            (int32, |q| <= 2**P)

where ``e`` is the block's *shared exponent*, the largest over the workers
of each worker's local exponent (the smallest integer with max|x| < 2**e in
the block), and ``P`` the value bits. ``P = 30 - ceil(log2(workers))``, so
that the sum of ``workers`` values is at most ``workers * 2**P <= 2**30``
in magnitude: the switch's int32 addition can never overflow, whatever the
data. Dequantization multiplies the integer sum by ``2**(e - P)``, a power of
two, in float64: exact (the sum has at most 31 significant bits). The one
rounding after it is to float32.

Error bound (stated, and asserted by the tests): for an element of block
``b`` with shared exponent ``e_b``, the all-reduced value ``r`` and the exact
sum ``s`` of the workers' float32 inputs satisfy

    |r - s| <= workers * 2**(e_b - P - 1) * (1 + 2**-24) + 2**-24 * |s| + 2**-150

(each worker's rounding to the grid costs at most half a step, ``2**(e_b-P-1)``;
the final rounding to float32 at most half an ulp of the result; the last term
covers float32's subnormal spacing). Relative to the block's largest magnitude
``M_b`` (``M_b >= 2**(e_b-1)``), the first term is at most
``workers * 2**-P * M_b``: about ``2**-24 * M_b`` for 8 workers.

Exponents are clamped to ``[EXPONENT_MIN, EXPONENT_MAX]`` = [-126, 128]: a block
whose values are all below 2**-126 in magnitude (or zero) uses -126, so its
error is bounded by the same formula with ``e_b = -126``. Non-finite inputs
(NaN, infinities) cannot be represented and raise ``ValueError``.

Exponent agreement is the caller's business (the in-network worker has the
switch take the maximum; see :mod:`netweft.transport.collectives.aggregation.worker`); this module
only computes local exponents, combines them (:func:`shared_exponents`),
quantizes and dequantizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EXPONENT_MIN = -126  # float32's smallest normal exponent; smaller blocks use this one
EXPONENT_MAX = 128  # float32 values are below 2**128
INT32_HEADROOM_BITS = 30  # workers * 2**P <= 2**30 < 2**31 - 1


def value_bits(workers: int) -> int:
    """P: magnitude bits per quantized value so that ``workers`` of them sum within int32."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    bits = INT32_HEADROOM_BITS - math.ceil(math.log2(workers))
    if bits < 8:
        raise ValueError(f"{workers} workers leave only {bits} value bits per int32; "
                         "use at most 2**22 workers")
    return bits


def shared_exponents(*local: np.ndarray) -> np.ndarray:
    """The element-wise maximum of several workers' local exponents (what the switch keeps)."""
    if not local:
        raise ValueError("shared_exponents needs at least one exponent array")
    out = np.asarray(local[0], dtype=np.int16).copy()
    for other in local[1:]:
        np.maximum(out, np.asarray(other, dtype=np.int16), out=out)
    return out


@dataclass(frozen=True)
class BlockQuantizer:
    """Quantizes float32 arrays for an all-reduce among ``workers`` with ``block``-element
    blocks (one block per aggregation packet)."""

    block: int
    workers: int

    def __post_init__(self) -> None:
        if not isinstance(self.block, int) or isinstance(self.block, bool) or self.block < 1:
            raise ValueError(f"block must be an int >= 1, got {self.block!r}")
        value_bits(self.workers)  # validates workers

    @property
    def bits(self) -> int:
        """P, the magnitude bits of one worker's quantized value."""
        return value_bits(self.workers)

    def blocks(self, length: int) -> int:
        """Number of blocks for an array of ``length`` elements (the last one padded)."""
        return -(-length // self.block)

    def as_blocks(self, x: np.ndarray) -> np.ndarray:
        """``x`` (float32) flattened and zero-padded to shape (blocks, block)."""
        x = np.asarray(x)
        if x.dtype != np.float32:
            raise ValueError(f"expected a float32 array, got {x.dtype}")
        flat = x.reshape(-1)
        pad = self.blocks(flat.size) * self.block - flat.size
        if pad:
            flat = np.concatenate([flat, np.zeros(pad, dtype=np.float32)])
        return flat.reshape(-1, self.block)

    def local_exponents(self, x: np.ndarray) -> np.ndarray:
        """This worker's exponent per block: the smallest e with max|x| < 2**e, clamped."""
        blocks = self.as_blocks(x)
        peak = np.abs(blocks).max(axis=1) if blocks.size else np.zeros(0, np.float32)
        if not np.all(np.isfinite(peak)):
            raise ValueError("cannot quantize NaN or infinite values")
        _, exp = np.frexp(peak.astype(np.float64))  # peak = m * 2**exp, 0.5 <= m < 1
        exp = np.where(peak > 0, exp, EXPONENT_MIN)
        return np.clip(exp, EXPONENT_MIN, EXPONENT_MAX).astype(np.int16)

    def quantize(self, x: np.ndarray, exponents: np.ndarray) -> np.ndarray:
        """int32 values of ``x`` (padded to whole blocks, shape (blocks, block)) on the grid
        of ``exponents`` (the shared ones, each >= this worker's local exponent)."""
        blocks = self.as_blocks(x)
        exponents = np.asarray(exponents)
        if exponents.shape != (blocks.shape[0],):
            raise ValueError(f"expected {blocks.shape[0]} exponents, got shape {exponents.shape}")
        scale = np.ldexp(1.0, (self.bits - exponents.astype(np.int64)))[:, None]
        q = np.rint(blocks.astype(np.float64) * scale)
        limit = float(1 << self.bits)
        if q.size and np.abs(q).max() > limit:
            raise ValueError("an exponent is below the data's own exponent: quantize with "
                             "the shared exponents (the maximum over the workers)")
        return q.astype(np.int32)

    def dequantize(self, sums: np.ndarray, exponents: np.ndarray, length: int) -> np.ndarray:
        """The float32 result of ``length`` elements from summed integers (shape (blocks,
        block)) and their shared exponents: exact scaling, one rounding to float32."""
        sums = np.asarray(sums).reshape(-1, self.block)
        exponents = np.asarray(exponents)
        if exponents.shape != (sums.shape[0],):
            raise ValueError(f"expected {sums.shape[0]} exponents, got shape {exponents.shape}")
        scale = np.ldexp(1.0, exponents.astype(np.int64) - self.bits)[:, None]
        return (sums.astype(np.float64) * scale).reshape(-1)[:length].astype(np.float32)

    def error_bound(self, exponents: np.ndarray, exact_sum: np.ndarray) -> np.ndarray:
        """The stated bound on |result - exact_sum| per element (see the module docstring)."""
        exact_sum = np.asarray(exact_sum, dtype=np.float64).reshape(-1)
        grid = np.ldexp(1.0, np.asarray(exponents).astype(np.int64) - self.bits - 1)
        per_elem = np.repeat(grid, self.block)[:exact_sum.size]
        return (self.workers * per_elem * (1 + 2.0**-24) + 2.0**-24 * np.abs(exact_sum)
                + 2.0**-150)
