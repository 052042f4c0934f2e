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

#define ROWS_IMPL(SFX, TARGET, W)                                                              \
    TARGET static float max_##SFX(const float *x, int64_t n)                                   \
    {                                                                                          \
        typedef float vf __attribute__((vector_size(W * 4)));                                  \
        typedef int32_t vi __attribute__((vector_size(W * 4)));                                \
        const vf zero = {0};                                                                   \
        vf acc = zero - INFINITY;                                                              \
        int64_t i = 0;                                                                         \
        for (; i + W <= n; i += W) {                                                           \
            vf v;                                                                              \
            memcpy(&v, x + i, sizeof v);                                                       \
            const vi gt = v > acc;                                                             \
            acc = (vf)(((vi)v & gt) | ((vi)acc & ~gt));                                        \
        }                                                                                      \
        float m = -INFINITY;                                                                   \
        for (int l = 0; l < W; l++)                                                            \
            if (acc[l] > m) m = acc[l];                                                        \
        for (; i < n; i++)                                                                     \
            if (x[i] > m) m = x[i];                                                            \
        return m;                                                                              \
    }                                                                                          \
    TARGET static float exp_sum_##SFX(float *x, int64_t n, float m)                            \
    {                                                                                          \
        typedef float vf __attribute__((vector_size(W * 4)));                                  \
        typedef int32_t vi __attribute__((vector_size(W * 4)));                                \
        vf acc = {0}, v, e;                                                                    \
        int64_t i = 0;                                                                         \
        for (; i + W <= n; i += W) {                                                           \
            memcpy(&v, x + i, sizeof v);                                                       \
            v = v - m;                                                                         \
            ROWS_VEXP(vf, vi, v, e);                                                           \
            memcpy(x + i, &e, sizeof e);                                                       \
            acc += e;                                                                          \
        }                                                                                      \
        if (i < n) {                                                                           \
            float buf[W];                                                                      \
            for (int l = 0; l < W; l++) buf[l] = i + l < n ? x[i + l] - m : -INFINITY;         \
            memcpy(&v, buf, sizeof v);                                                         \
            ROWS_VEXP(vf, vi, v, e);                                                           \
            memcpy(buf, &e, sizeof e);                                                         \
            memcpy(x + i, buf, sizeof(float) * (size_t)(n - i));                               \
            acc += e;                                                                          \
        }                                                                                      \
        float s = 0.0f;                                                                        \
        for (int l = 0; l < W; l++) s += acc[l];                                               \
        return s;                                                                              \
    }                                                                                          \
    TARGET static void ds_##SFX(float *dp, const float *p, int64_t n, float d)                 \
    {                                                                                          \
        typedef float vf __attribute__((vector_size(W * 4)));                                  \
        int64_t i = 0;                                                                         \
        for (; i + W <= n; i += W) {                                                           \
            vf a, b;                                                                           \
            memcpy(&a, dp + i, sizeof a);                                                      \
            memcpy(&b, p + i, sizeof b);                                                       \
            a = b * (a - d);                                                                   \
            memcpy(dp + i, &a, sizeof a);                                                      \
        }                                                                                      \
        for (; i < n; i++) dp[i] = p[i] * (dp[i] - d);                                         \
    }                                                                                          \
    static const pct_attn_rows_f32 rows_##SFX = {max_##SFX, exp_sum_##SFX, ds_##SFX};

/* ISO C mode turns off the contraction of a * b + c into FMAs: ask for it per function */
#if defined(__GNUC__) && !defined(__clang__)
#define ROWS_FMA optimize("fp-contract=fast")
#else
#define ROWS_FMA
#endif
ROWS_IMPL(base, __attribute__((ROWS_FMA)), 4)
#if defined(__x86_64__) && defined(__GNUC__)
#define PCT_ROWS_X86 1
ROWS_IMPL(avx2, __attribute__((target("avx2,fma"), ROWS_FMA)), 8)
#ifndef PCT_NO_AVX512
ROWS_IMPL(avx512, __attribute__((target("avx512f"), ROWS_FMA)), 16)
#endif
#endif

const pct_attn_rows_f32 *pct_attn_rows_f32_get(void)
{
    static const pct_attn_rows_f32 *chosen;
    if (chosen) return chosen;
    const pct_attn_rows_f32 *r = &rows_base;
#ifdef PCT_ROWS_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) r = &rows_avx2;
#ifndef PCT_NO_AVX512
    if (__builtin_cpu_supports("avx512f")) r = &rows_avx512;
#endif
#endif
    chosen = r;
    return r;
}
