/* fast_exp.h: expf and logf as branch-free polynomials (Cephes, about 1 ulp) that vectorizing
 * loops inline (libm's are calls). Shared by the reductions (softmax, logsumexp) and the fused
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

/* out = expf(x) lane-wise on GCC vector types (VF float lanes, VI int32 lanes of one width),
 * the scheme of pct_fast_expf for x <= 88.37 (softmax's x - max, GELU's -x^2 / 2): no
 * overflow handling, results below 2^-126 flush to 0, NaN stays NaN. Compile with FMA
 * contraction where the target has it. */
#define PCT_VEXPF_NEG(VF, VI, out, xin)                                                        \
    do {                                                                                       \
        VF x_ = (xin), zero_ = {0};                                                            \
        VI lo_ = x_ < zero_ - 87.33654f;                                                       \
        VF xc_ = (VF)(((VI)(zero_ - 87.33654f) & lo_) | ((VI)x_ & ~lo_));                      \
        VF fx_ = xc_ * 1.44269504088896341f;                                                   \
        fx_ = (fx_ + 12582912.0f) - 12582912.0f;                                               \
        VF r_ = xc_ - fx_ * 0.693359375f + fx_ * 2.12194440e-4f;                               \
        VF r2_ = r_ * r_;                                                                      \
        VF y_ = zero_ + 1.9875691500e-4f;                                                      \
        y_ = y_ * r_ + 1.3981999507e-3f;                                                       \
        y_ = y_ * r_ + 8.3334519073e-3f;                                                       \
        y_ = y_ * r_ + 4.1665795894e-2f;                                                       \
        y_ = y_ * r_ + 1.6666665459e-1f;                                                       \
        y_ = y_ * r_ + 5.0000001201e-1f;                                                       \
        y_ = y_ * r2_ + r_ + 1.0f;                                                             \
        VI bits_ = (__builtin_convertvector(fx_, VI) + 127) << 23;                             \
        (out) = (VF)((VI)(y_ * (VF)bits_) & ~lo_);                                             \
    } while (0)

/* logf without a libm call (Cephes' polynomial, about 1 ulp) for positive normal x, +inf and
 * NaN (log_softmax's row sums, which lie in [1, len] or are NaN); 0, negatives and subnormals
 * are outside its domain. */
static inline float pct_fast_logf(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    int32_t e = (int32_t)((u >> 23) & 0xff) - 126; /* x = m * 2^e, m in [0.5, 1) */
    u = (u & 0x807fffffu) | 0x3f000000u;
    float m;
    memcpy(&m, &u, sizeof m);
    int32_t low = m < 0.707106781186547524f;
    e -= low;
    m = low ? m + m - 1.0f : m - 1.0f;
    float z = m * m;
    float y = 7.0376836292e-2f;
    y = y * m - 1.1514610310e-1f;
    y = y * m + 1.1676998740e-1f;
    y = y * m - 1.2420140846e-1f;
    y = y * m + 1.4249322787e-1f;
    y = y * m - 1.6668057665e-1f;
    y = y * m + 2.0000714765e-1f;
    y = y * m - 2.4999993993e-1f;
    y = y * m + 3.3333331174e-1f;
    y = y * m * z;
    float fe = (float)e;
    y += -2.12194440e-4f * fe;
    y += -0.5f * z;
    float r = m + y;
    r += 0.693359375f * fe;
    r = x == INFINITY ? x : r;
    return x != x ? x : r;
}
#endif
