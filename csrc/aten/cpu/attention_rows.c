/* attention_rows.c: see attention_rows.h.
 *
 * Note [Attention row loops]
 * The softmax of a score tile costs one exp per score, as many as the FLOPs of a GEMM
 * with E = 1: with scalar libm expf it would cost more than both GEMMs together. The
 * loops below are written once with GCC vector extensions and compiled per instruction
 * set (16 lanes for AVX-512, 8 for AVX2, 4 for the SSE2 baseline); the dispatcher picks
 * the widest the CPU runs. exp is the Cephes single-precision scheme: n = round(x/ln2),
 * r = x - n ln2 in two parts, exp(r) by a degree-7 polynomial (within 2 ulp), times 2^n
 * built in the exponent bits. Inputs below -87 give exactly 0 (masked scores are -inf),
 * NaN stays NaN. Tails run through a padded buffer so that every element of a row is
 * computed the same way. */
#include "attention_rows.h"
#include "simd_levels.h"
#include <math.h>
#include <string.h>

/* exp of every lane of x (vector types vf / vi of the enclosing function) into out */
#define ROWS_VEXP(vf, vi, x, out)                                                              \
    do {                                                                                       \
        const vf zero_ = {0};                                                                  \
        const vi lo_ = (x) < -87.0f, hi_ = (x) > 88.0f;                                        \
        vf c_ = (vf)(((vi)(x) & ~lo_) | ((vi)(zero_ - 87.0f) & lo_));                          \
        c_ = (vf)(((vi)c_ & ~hi_) | ((vi)(zero_ + 88.0f) & hi_));                              \
        const vf t_ = c_ * 1.44269504088896341f + 12582912.0f; /* 1.5 * 2^23 rounds */        \
        const vf n_ = t_ - 12582912.0f;                                                        \
        vf r_ = c_ - n_ * 0.693359375f;                                                        \
        r_ = r_ + n_ * 2.12194440e-4f;                                                         \
        vf p_ = r_ * 1.9875691500e-4f + 1.3981999507e-3f;                                      \
        p_ = p_ * r_ + 8.3334519073e-3f;                                                       \
        p_ = p_ * r_ + 4.1665795894e-2f;                                                       \
        p_ = p_ * r_ + 1.6666665459e-1f;                                                       \
        p_ = p_ * r_ + 5.0000001201e-1f;                                                       \
        p_ = p_ * r_ * r_ + r_ + 1.0f;                                                         \
        const vi e_ = ((vi)t_ - 0x4B400000 + 127) << 23;                                       \
        (out) = (vf)((vi)(p_ * (vf)e_) & ~lo_);                                                \
    } while (0)

/* One set of row loops per level of simd_levels.h (its attributes ask for FMA contraction, which ISO C mode turns
 * off). */
#define PCT_LEVELS_TEMPLATE "attention_rows_impl.h"
#include "simd_levels_foreach.h"

const pct_attn_rows_f32 *pct_attn_rows_f32_get(void)
{
    static const pct_attn_rows_f32 *chosen;
    if (chosen) return chosen;
    const pct_attn_rows_f32 *r = &rows_base;
#ifdef PCT_SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) r = &rows_avx2;
#ifdef PCT_SIMD_AVX512
    if (__builtin_cpu_supports("avx512f")) r = &rows_avx512;
#endif
#endif
    chosen = r;
    return r;
}
