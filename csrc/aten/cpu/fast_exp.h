/* fast_exp.h: expf as a branch-free polynomial (Cephes, about 1 ulp) that vectorizing loops
 * inline (libm's expf is a call). Shared by the reductions (softmax, logsumexp) and the fused
 * cross-entropy. */
#ifndef PCT_FAST_EXP_H
#define PCT_FAST_EXP_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* expf without a libm call, so loops over it vectorize: Cephes' polynomial (about 1 ulp).
 * Exact at the edges that matter here (-inf -> 0, NaN -> NaN, +inf -> inf); results that
 * would be subnormal flush to 0 and arguments in (88.38, 88.72] are clamped. Every caller
 * passes x - max <= 0 except for infinities. */
static inline float pct_fast_expf(float x)
{
    float xc = x < -87.33654f ? -87.33654f : x;
    xc = xc > 88.37626f ? 88.37626f : xc;
    float fx = xc * 1.44269504088896341f;
    fx = (fx + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = xc - fx * 0.693359375f + fx * 2.12194440e-4f;
    float r2 = r * r;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * r2 + r + 1.0f;
    uint32_t bits = (uint32_t)((int32_t)fx + 127) << 23;
    float p2;
    memcpy(&p2, &bits, sizeof p2);
    y *= p2;
    y = x > 88.72283f ? INFINITY : y;
    y = x < -87.33654f ? 0.0f : y;
    return x != x ? x : y;
}
#endif
