/* Block-wise fixed point of the in-network all-reduce, in C: the arithmetic of
 * transport/collectives/aggregation/quantization.py (the reference; its docstring
 * states the scheme and the error bound), bit for bit.
 *
 * A block is `lanes` float32 values sharing one exponent e; a worker's value is
 * q = rint(x * 2**(bits - e)) as int32 (|q| <= 2**bits), the sum comes back as
 * int32 and is dequantized as sum * 2**(e - bits) in double, rounded once to float.
 * No libm: powers of two are built from their bits and rint is one addition.
 */
#ifndef NETWEFT_AGGREGATION_QUANTIZATION_H
#define NETWEFT_AGGREGATION_QUANTIZATION_H

#include <stdint.h>

#define NW_AGG_EXPONENT_MIN (-126) /* float32's smallest normal exponent */
#define NW_AGG_EXPONENT_MAX 128

/* Each block's local exponent: the smallest e with max|x| < 2**e, clamped to
 * [NW_AGG_EXPONENT_MIN, NW_AGG_EXPONENT_MAX] (local_exponents); NW_ERANGE if a value
 * is NaN or infinite. data holds chunks * lanes values. */
int32_t nw_agg_local_exponents(const float *data, uint32_t chunks, uint32_t lanes,
                               int16_t *out);

/* One block on exponent e, written as `lanes` big-endian int32 at out (quantize);
 * NW_ERANGE if a value does not fit (|q| > 2**bits: e is below the data's own). */
int32_t nw_agg_quantize_block(const float *x, uint32_t lanes, int32_t exponent, uint32_t bits,
                              uint8_t *out);

/* The first `length` values of chunks blocks of summed integers, each block on its
 * exponent, as float (dequantize). */
void nw_agg_dequantize(const int32_t *sums, const int16_t *exponents, uint32_t chunks,
                       uint32_t lanes, uint32_t bits, uint64_t length, float *out);

#endif
