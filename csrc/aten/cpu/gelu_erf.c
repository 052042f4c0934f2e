/* gelu_erf.c: see gelu_erf.h.
 *
 * Note [Rational erf]
 * GELU is x (1 + erf(x / sqrt 2)) / 2, as torch computes it. Here erf(z) = z N(z^2) / D(z^2)
 * on z clamped to [-4, 4] (erf(4) rounds to 1 in float32), N and D of degree 5, fitted for
 * this file (iteratively reweighted linear least squares towards minimax, float32
 * coefficients): absolute error ~5e-8 before rounding, ~1e-7 evaluated in float, like
 * torch's vectorized erf (~1.5e-7); Phi is clamped to [0, 1] so that the far left tail gives
 * exactly 0 (-0.0 for x < 0, as torch). That is 11 FMAs and a divide, against ~40 operations for
 * libmvec's erff: GELU's cost is its operation count, not memory. The gradient adds
 * x phi(x) = x exp(-x^2 / 2) / sqrt(2 pi) (fast_exp.h's exp). Tails go through zero-padded
 * vectors, so every element is computed alike whatever the split. */
#include "gelu_erf.h"
#include "fast_exp.h"
#include "simd_levels.h"
#include <string.h>

#define GE_A0 1.128378987312317f
#define GE_A1 0.1962391585111618f
#define GE_A2 0.05346591770648956f
#define GE_A3 0.0040031312964856625f
#define GE_A4 0.00028801424195989966f
#define GE_A5 1.9747167243622243e-06f
#define GE_B1 0.5072435736656189f
#define GE_B2 0.11647212505340576f
#define GE_B3 0.01544343400746584f
#define GE_B4 0.0012162040220573545f
#define GE_B5 3.747822847799398e-05f

/* out = (1 + erf(x / sqrt 2)) / 2 = Phi(x), lane-wise; NaN stays NaN */
#define GE_PHI(VF, MINF, MAXF, x, out)                                                         \
    do {                                                                                       \
        VF z_ = (x) * 0.70710678118654752440f;                                                 \
        z_ = MINF((VF){0} + 4.0f, MAXF((VF){0} - 4.0f, z_));                                   \
        VF s_ = z_ * z_;                                                                       \
        VF n_ = s_ * GE_A5 + GE_A4, d_ = s_ * GE_B5 + GE_B4;                                   \
        n_ = n_ * s_ + GE_A3;                                                                  \
        d_ = d_ * s_ + GE_B3;                                                                  \
        n_ = n_ * s_ + GE_A2;                                                                  \
        d_ = d_ * s_ + GE_B2;                                                                  \
        n_ = n_ * s_ + GE_A1;                                                                  \
        d_ = d_ * s_ + GE_B1;                                                                  \
        n_ = n_ * s_ + GE_A0;                                                                  \
        d_ = d_ * s_ + 1.0f;                                                                   \
        VF p_ = (z_ * n_ / d_) * 0.5f + 0.5f;                                                  \
        (out) = MINF((VF){0} + 1.0f, MAXF((VF){0}, p_)); /* the fit overshoots near |z| = 4 */ \
    } while (0)

/* Lane-wise min / max (NaN in the second operand comes through): one instruction each on x86,
 * where compare-and-select clamps measured 1.5x the whole kernel's time. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GE_MIN_base(a, b) ((ge_vf_base)_mm_min_ps((__m128)(a), (__m128)(b)))
#define GE_MAX_base(a, b) ((ge_vf_base)_mm_max_ps((__m128)(a), (__m128)(b)))
#define GE_MIN_avx2(a, b) ((ge_vf_avx2)_mm256_min_ps((__m256)(a), (__m256)(b)))
#define GE_MAX_avx2(a, b) ((ge_vf_avx2)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define GE_MIN_avx512(a, b) ((ge_vf_avx512)_mm512_min_ps((__m512)(a), (__m512)(b)))
#define GE_MAX_avx512(a, b) ((ge_vf_avx512)_mm512_max_ps((__m512)(a), (__m512)(b)))
#else
#define GE_SEL_(a, b, m) ((ge_vf_base)(((ge_vi_base)(a) & (m)) | ((ge_vi_base)(b) & ~(m))))
#define GE_MIN_base(a, b) GE_SEL_(a, b, (a) < (b))
#define GE_MAX_base(a, b) GE_SEL_(a, b, (a) > (b))
#endif

#define PCT_LEVELS_TEMPLATE "gelu_erf_impl.h"
#include "simd_levels_foreach.h"

typedef struct ge_impl {
    void (*fwd)(float *, const float *, int64_t);
    void (*bwd)(float *, const float *, const float *, int64_t);
    void (*tanh_fwd)(float *, const float *, int64_t);
    void (*tanh_bwd)(float *, const float *, const float *, int64_t);
} ge_impl;

#define GE_IMPL(sfx) {fwd_##sfx, bwd_##sfx, tanh_fwd_##sfx, tanh_bwd_##sfx}
/* index 0: baseline; 1: AVX2 + FMA; 2: AVX-512 (entries of missing builds repeat the last) */
static const ge_impl ge_impls[3] = {
    GE_IMPL(base),
#ifdef PCT_SIMD_X86
    GE_IMPL(avx2),
#ifdef PCT_SIMD_AVX512
    GE_IMPL(avx512),
#else
    GE_IMPL(avx2),
#endif
#else
    GE_IMPL(base),
    GE_IMPL(base),
#endif
};

/* The widest level this CPU runs (a benign race computes the same value). */
static int ge_level(void)
{
    static int level = -1;
    int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (l >= 0) return l;
    l = 0;
#ifdef PCT_SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) l = 1;
    if (__builtin_cpu_supports("avx512f")) l = 2;
#endif
    __atomic_store_n(&level, l, __ATOMIC_RELAXED);
    return l;
}

void pct_gelu_erf_f32(float *o, const float *x, int64_t n) { ge_impls[ge_level()].fwd(o, x, n); }
void pct_gelu_erf_backward_f32(float *o, const float *g, const float *x, int64_t n)
{
    ge_impls[ge_level()].bwd(o, g, x, n);
}
void pct_gelu_tanh_f32(float *o, const float *x, int64_t n) { ge_impls[ge_level()].tanh_fwd(o, x, n); }
void pct_gelu_tanh_backward_f32(float *o, const float *g, const float *x, int64_t n)
{
    ge_impls[ge_level()].tanh_bwd(o, g, x, n);
}
