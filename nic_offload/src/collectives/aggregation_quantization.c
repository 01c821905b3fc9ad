/* Block-wise fixed point, bit for bit quantization.py's (aggregation_quantization.h). */
#include "aggregation_quantization.h"

#include <string.h>

#include "engine.h"

/* 2**k as math.ldexp(1.0, k) and numpy.ldexp give it: subnormal below -1022, 0 below
 * -1074, infinity above 1023 (*overflow set: Python's math.ldexp raises there). */
static double pow2(int64_t k, int32_t *overflow)
{
    uint64_t bits;
    double v;
    *overflow = k > 1023;
    if (k > 1023)
        return __builtin_inf();
    if (k < -1074)
        return 0.0;
    bits = k >= -1022 ? (uint64_t)(k + 1023) << 52 : (uint64_t)1 << (k + 1074);
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* The biased exponent field of |x| (0 for zero and subnormals, 255 for NaN and inf). */
static uint32_t float_exponent_field(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits >> 23) & 0xFFu;
}

int32_t nw_agg_local_exponents(const float *data, uint32_t chunks, uint32_t lanes,
                               int16_t *out)
{
    for (uint32_t c = 0; c < chunks; c++) {
        const float *x = data + (uint64_t)c * lanes;
        uint32_t top = 0;
        for (uint32_t i = 0; i < lanes; i++) {
            uint32_t field = float_exponent_field(x[i]);
            top = field > top ? field : top;
        }
        if (top == 255u)
            return NW_ERANGE;
        /* a normal peak 1.f * 2**(top - 127) is below 2**(top - 126): frexp's exponent;
         * a subnormal or zero peak is clamped to the minimum */
        out[c] = (int16_t)(top == 0 ? NW_AGG_EXPONENT_MIN : (int32_t)top - 126);
    }
    return NW_OK;
}

/* The product is exact (a power-of-two scale); adding 1.5 * 2**52 leaves no fraction
 * bits for |v| <= 2**51, so that addition rounds to an integer in the default mode (to
 * nearest, ties to even: the constant is even), as rint does, without a branch on the
 * sign (a branch per lane on random signs cost 2.6x the time). */
int32_t nw_agg_quantize_block(const float *x, uint32_t lanes, int32_t exponent, uint32_t bits,
                              uint8_t *out)
{
    const double magic = 6755399441055744.0; /* 1.5 * 2**52 */
    uint32_t bad = 0;
    int32_t overflow;
    double limit, scale;
    if (bits > 30)
        return NW_EINVAL; /* the sum of two values could overflow int32 */
    limit = (double)((uint64_t)1 << bits) + 0.5; /* |rint(v)| <= 2**bits */
    scale = pow2((int64_t)bits - exponent, &overflow);
    if (overflow)
        return NW_ERANGE;
    for (uint32_t i = 0; i < lanes; i++) {
        double v = (double)x[i] * scale;
        uint32_t in_range = __builtin_fabs(v) <= limit; /* false for NaN */
        double r = ((in_range ? v : 0.0) + magic) - magic;
        uint32_t be = __builtin_bswap32((uint32_t)(int32_t)r);
        bad |= in_range ^ 1u;
        memcpy(out + 4u * i, &be, sizeof be);
    }
    return bad ? NW_ERANGE : NW_OK;
}

void nw_agg_dequantize(const int32_t *sums, const int16_t *exponents, uint32_t chunks,
                       uint32_t lanes, uint32_t bits, uint64_t length, float *out)
{
    for (uint32_t c = 0; c < chunks; c++) {
        uint64_t first = (uint64_t)c * lanes;
        uint64_t end = first + lanes < length ? first + lanes : length;
        int32_t overflow;
        double scale = pow2((int64_t)exponents[c] - bits, &overflow);
        for (uint64_t i = first; i < end; i++)
            out[i] = (float)((double)sums[i] * scale);
    }
}
