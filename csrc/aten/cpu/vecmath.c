/* vecmath.c: see vecmath.h. Note [Vector math]: each loop handles contiguous runs in SIMD
 * chunks (the tail through a padded buffer) and anything strided element by element with
 * the scalar libm function, so its results never depend on how the loop machine split the
 * work. Built only where setup.py found libmvec (PCT_HAVE_LIBMVEC). */
#include "vecmath.h"
#include "../op.h"
#include "pointwise_math.h" /* pct_pw_erfinv_d and its coefficients, pct_pw_ctx */
#include "pointwise.h"      /* pct_pw_loop: the table loop pow falls back to */

#if defined(PCT_HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ops with libmvec forms: the op id and the C name share the spelling */
#define PCT_MVEC_FUNCS(X) \
    X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) \
    X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(erf) X(erfc)

/* libmvec's names: _ZGV<isa>N<lanes><one v per input>_<fn>, V being v (one input) or vv (two) */
#define PCT_MVEC_DECLARE_AS(fn, V, A256, A256D, A512, A512D) \
    extern __m256 _ZGVdN8##V##_##fn##f A256;                 \
    extern __m256d _ZGVdN4##V##_##fn A256D;                  \
    extern __m512 _ZGVeN16##V##_##fn##f A512;                \
    extern __m512d _ZGVeN8##V##_##fn A512D;
#define PCT_MVEC_DECLARE(fn) PCT_MVEC_DECLARE_AS(fn, v, (__m256), (__m256d), (__m512), (__m512d))
#define PCT_MVEC_DECLARE2(fn) PCT_MVEC_DECLARE_AS(fn, vv, (__m256, __m256), (__m256d, __m256d), (__m512, __m512), (__m512d, __m512d))
/* Binary functions of libmvec (glibc 2.35, as the unary AVX2/AVX-512 forms setup.py checks for): atan2 and hypot. */
#define PCT_MVEC_FUNCS2(X) X(atan2) X(hypot)
extern __m512d _ZGVeN8vv_pow(__m512d, __m512d);
extern __m256d _ZGVdN4vv_pow(__m256d, __m256d);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
PCT_MVEC_FUNCS(PCT_MVEC_DECLARE)
PCT_MVEC_FUNCS2(PCT_MVEC_DECLARE2)

/* f of one or two arguments (NIN) */
#define PCT_VEC_CALL1(f, x, y) f(x)
#define PCT_VEC_CALL2(f, x, y) f(x, y)
/* One loop per (function, dtype, ISA) over NIN inputs (args[1], and args[2] for two). W is the vector width in
 * elements. SIMD where every run is contiguous; else the scalar function element by element (a broadcast operand
 * included). */
#define PCT_VEC_LOOP(name, NIN, T, W, VT, LOAD, STORE, VFN, SFN, TARGET)                              \
    __attribute__((target(TARGET))) static void name(char **args, const int64_t *dims, const int64_t *steps, void *ctx) \
    {                                                                                                  \
        (void)ctx;                                                                                     \
        const int64_t n = *dims, sz = (int64_t)sizeof(T), ib = (NIN) == 2 ? 2 : 1;                      \
        int64_t k = 0;                                                                                 \
        if (steps[0] != sz || steps[1] != sz || steps[ib] != sz) {                                     \
            for (; k < n; k++)                                                                         \
                *(T *)(args[0] + k * steps[0]) = PCT_VEC_CALL##NIN(SFN, *(const T *)(args[1] + k * steps[1]), \
                                                                   *(const T *)(args[ib] + k * steps[ib])); \
            return;                                                                                    \
        }                                                                                              \
        T *o = (T *)args[0];                                                                           \
        const T *a = (const T *)args[1], *b = (const T *)args[ib];                                     \
        (void)b;                                                                                       \
        for (; k + W <= n; k += W) STORE(o + k, PCT_VEC_CALL##NIN(VFN, LOAD(a + k), LOAD(b + k)));     \
        if (k < n) {                                                                                   \
            T ba[W] = {0}, bb[W] = {0};                                                                \
            memcpy(ba, a + k, sizeof(T) * (size_t)(n - k));                                            \
            memcpy(bb, b + k, sizeof(T) * (size_t)(n - k));                                            \
            STORE(ba, PCT_VEC_CALL##NIN(VFN, LOAD(ba), LOAD(bb)));                                     \
            memcpy(o + k, ba, sizeof(T) * (size_t)(n - k));                                            \
        }                                                                                              \
    }

/* the four loops of a libmvec function of NIN inputs (V: its v or vv) */
#define PCT_VEC_LOOPS_AS(fn, V, NIN)                                                                           \
    PCT_VEC_LOOP(v256_##fn##_f32, NIN, float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, _ZGVdN8##V##_##fn##f, fn##f, "avx2,fma") \
    PCT_VEC_LOOP(v256_##fn##_f64, NIN, double, 4, __m256d, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4##V##_##fn, fn, "avx2,fma") \
    PCT_VEC_LOOP(v512_##fn##_f32, NIN, float, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, _ZGVeN16##V##_##fn##f, fn##f, "avx512f") \
    PCT_VEC_LOOP(v512_##fn##_f64, NIN, double, 8, __m512d, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8##V##_##fn, fn, "avx512f")
#define PCT_VEC_LOOPS(fn) PCT_VEC_LOOPS_AS(fn, v, 1)
#define PCT_VEC_LOOPS2(fn) PCT_VEC_LOOPS_AS(fn, vv, 2)
PCT_MVEC_FUNCS(PCT_VEC_LOOPS)
PCT_MVEC_FUNCS2(PCT_VEC_LOOPS2)

/* sigmoid = 1 / (1 + exp(-x)), with the vector exp */
__attribute__((target("avx2,fma"))) static inline __m256 sig256f(__m256 x)
{
    __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, _ZGVdN8v_expf(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}
__attribute__((target("avx2,fma"))) static inline __m256d sig256d(__m256d x)
{
    __m256d one = _mm256_set1_pd(1.0);
    return _mm256_div_pd(one, _mm256_add_pd(one, _ZGVdN4v_exp(_mm256_sub_pd(_mm256_setzero_pd(), x))));
}
__attribute__((target("avx512f"))) static inline __m512 sig512f(__m512 x)
{
    __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, _ZGVeN16v_expf(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}
__attribute__((target("avx512f"))) static inline __m512d sig512d(__m512d x)
{
    __m512d one = _mm512_set1_pd(1.0);
    return _mm512_div_pd(one, _mm512_add_pd(one, _ZGVeN8v_exp(_mm512_sub_pd(_mm512_setzero_pd(), x))));
}
/* silu = x / (1 + exp(-x)), torch's formula, with the vector exp */
__attribute__((target("avx2,fma"))) static inline __m256 silu256f(__m256 x)
{
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), _ZGVdN8v_expf(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}
__attribute__((target("avx2,fma"))) static inline __m256d silu256d(__m256d x)
{
    return _mm256_div_pd(x, _mm256_add_pd(_mm256_set1_pd(1.0), _ZGVdN4v_exp(_mm256_sub_pd(_mm256_setzero_pd(), x))));
}
__attribute__((target("avx512f"))) static inline __m512 silu512f(__m512 x)
{
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), _ZGVeN16v_expf(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}
__attribute__((target("avx512f"))) static inline __m512d silu512d(__m512d x)
{
    return _mm512_div_pd(x, _mm512_add_pd(_mm512_set1_pd(1.0), _ZGVeN8v_exp(_mm512_sub_pd(_mm512_setzero_pd(), x))));
}
static inline float siluf(float x) { return x / (1.0f + expf(-x)); }
static inline double silud(double x) { return x / (1.0 + exp(-x)); }
static inline float sigf(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline double sigd(double x) { return 1.0 / (1.0 + exp(-x)); }
PCT_VEC_LOOP(v256_sigmoid_f32, 1, float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, sig256f, sigf, "avx2,fma")
PCT_VEC_LOOP(v256_sigmoid_f64, 1, double, 4, __m256d, _mm256_loadu_pd, _mm256_storeu_pd, sig256d, sigd, "avx2,fma")
PCT_VEC_LOOP(v512_sigmoid_f32, 1, float, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, sig512f, sigf, "avx512f")
PCT_VEC_LOOP(v512_sigmoid_f64, 1, double, 8, __m512d, _mm512_loadu_pd, _mm512_storeu_pd, sig512d, sigd, "avx512f")
PCT_VEC_LOOP(v256_silu_f32, 1, float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, silu256f, siluf, "avx2,fma")
PCT_VEC_LOOP(v256_silu_f64, 1, double, 4, __m256d, _mm256_loadu_pd, _mm256_storeu_pd, silu256d, silud, "avx2,fma")
PCT_VEC_LOOP(v512_silu_f32, 1, float, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, silu512f, siluf, "avx512f")
PCT_VEC_LOOP(v512_silu_f64, 1, double, 8, __m512d, _mm512_loadu_pd, _mm512_storeu_pd, silu512d, silud, "avx512f")
/* float32 erfinv (trunc_normal_ initialisation) on 16 (AVX-512) or 8 (AVX2) lanes, each half as 8 or 4
 * doubles: w = -log((1 - y)(1 + y)) with libmvec's double log (the product is exact for a float y), then
 * pct_pw_erfinv_d's polynomials (pointwise_math.h: degree 20 in w for w < 5, |y| < 0.9966, and in sqrt(w)
 * up to 17, past every float below 1) by Estrin's scheme. Rounded once, that is the float64 result rounded
 * (tests/test_erfinv_vector.py) except where the exact value lies within ~1e-15 of a float rounding
 * boundary, about one input in 10^8. With no erf and no Newton step this runs in 0.65x the time of the
 * former float guess refined by libmvec's double erf. Lanes outside (-1, 1) (and NaN) take the scalar form. */
/* OUT = the degree-20 polynomial with coefficients C (highest power first) at U, by Estrin's scheme:
 * pairs a_2j + a_2j+1 U, then pairs of those with U^2 and U^4, and the last three by U^8: five FMAs deep instead of
 * Horner's twenty, whose latency bound the loop. */
_Static_assert(PCT_ERFINV_DEGREE == 20, "PCT_ERFINV_ESTRIN is written for degree 20");
#define PCT_ERFINV_ESTRIN(VD, SET1D, FMADDD, MULD, C, U, OUT)                                              \
    do {                                                                                                   \
        VD t_[11];                                                                                         \
        const VD u1_ = (U), u2_ = MULD(u1_, u1_), u4_ = MULD(u2_, u2_), u8_ = MULD(u4_, u4_);               \
        for (int j_ = 0; j_ < 10; j_++) /* a_k is C[20 - k] */                                             \
            t_[j_] = FMADDD(SET1D((C)[19 - 2 * j_]), u1_, SET1D((C)[20 - 2 * j_]));                         \
        t_[10] = SET1D((C)[0]);                                                                            \
        for (int j_ = 0; j_ < 5; j_++) t_[j_] = FMADDD(t_[2 * j_ + 1], u2_, t_[2 * j_]);                   \
        t_[5] = t_[10];                                                                                    \
        for (int j_ = 0; j_ < 3; j_++) t_[j_] = FMADDD(t_[2 * j_ + 1], u4_, t_[2 * j_]);                   \
        (OUT) = FMADDD(FMADDD(t_[2], u8_, t_[1]), u8_, t_[0]);                                                   \
    } while (0)
#define PCT_ERFINV_F32(NAME, VF, VD, MASKD, NF, HALF, JOIN, TOD, FROMD, SET1D, ADDD, SUBD, MULD, FMADDD, SQRTD, LTD, \
                       ALLSETD, BLENDD, LOGD, OUTSIDEF, TARGET)                                                   \
    __attribute__((target(TARGET))) static inline VF NAME(VF y)                                                  \
    {                                                                                                            \
        static const double central[PCT_ERFINV_DEGREE + 1] = PCT_ERFINV_CENTRAL,                             \
                            tail[PCT_ERFINV_DEGREE + 1] = PCT_ERFINV_TAIL;                                    \
        const VD one = SET1D(1.0);                                                                               \
        VD yd[2], w[2], half[2];                                                                                 \
        for (int h = 0; h < 2; h++) {                                                                            \
            yd[h] = TOD(HALF(y, h));                                                                             \
            w[h] = SUBD(SET1D(0.0), LOGD(MULD(SUBD(one, yd[h]), ADDD(one, yd[h]))));                             \
        }                                                                                                        \
        for (int h = 0; h < 2; h++) {                                                                            \
            VD g;                                                                                                \
            PCT_ERFINV_ESTRIN(VD, SET1D, FMADDD, MULD, central, MULD(SUBD(w[h], SET1D(2.5)), SET1D(0.4)), g);    \
            const MASKD central_lanes = LTD(w[h], SET1D(5.0));                                                   \
            if (!ALLSETD(central_lanes)) { /* some |y| > 0.9966: the tail polynomial for those lanes */          \
                const VD ut = MULD(SUBD(SQRTD(w[h]), SET1D(PCT_ERFINV_TAIL_MID)), SET1D(1.0 / PCT_ERFINV_TAIL_HALF)); \
                VD gt;                                                                                           \
                PCT_ERFINV_ESTRIN(VD, SET1D, FMADDD, MULD, tail, ut, gt);                                        \
                g = BLENDD(central_lanes, gt, g);                                                                \
            }                                                                                                    \
            half[h] = MULD(g, yd[h]);                                                                            \
        }                                                                                                        \
        VF out = JOIN(FROMD(half[0]), FROMD(half[1]));                                                           \
        if (!OUTSIDEF(y)) return out;                                                                            \
        float lanes_y[NF], lanes_x[NF];                                                                          \
        memcpy(lanes_y, &y, sizeof lanes_y);                                                                     \
        memcpy(lanes_x, &out, sizeof lanes_x);                                                                   \
        for (int i = 0; i < NF; i++)                                                                             \
            if (!(lanes_y[i] > -1.0f && lanes_y[i] < 1.0f)) lanes_x[i] = (float)pct_pw_erfinv_d(lanes_y[i]);     \
        memcpy(&out, lanes_x, sizeof lanes_x);                                                                   \
        return out;                                                                                              \
    }
/* the AVX-512 pieces: 16 floats, halves of 8 as doubles */
#define PCT_HALF512(v, h) ((h) ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)) : _mm512_castps512_ps256(v))
#define PCT_JOIN512(lo, hi) \
    _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1))
#define PCT_BLEND512F(m, a, b) _mm512_mask_blend_ps((m), (a), (b))
#define PCT_BLEND512D(m, a, b) _mm512_mask_blend_pd((m), (a), (b))
#define PCT_LT512D(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_LT_OQ)
#define PCT_ALLSET512D(m) ((m) == (__mmask8)0xff)
#define PCT_OUTSIDE512F(y) _mm512_cmp_ps_mask(_mm512_abs_ps(y), _mm512_set1_ps(1.0f), _CMP_NLT_UQ)
/* the AVX2 pieces: 8 floats, halves of 4 */
#define PCT_HALF256(v, h) ((h) ? _mm256_extractf128_ps((v), 1) : _mm256_castps256_ps128(v))
#define PCT_JOIN256(lo, hi) _mm256_insertf128_ps(_mm256_castps128_ps256(lo), (hi), 1)
#define PCT_BLEND256F(m, a, b) _mm256_blendv_ps((a), (b), (m))
#define PCT_BLEND256D(m, a, b) _mm256_blendv_pd((a), (b), (m))
#define PCT_LT256D(a, b) _mm256_cmp_pd((a), (b), _CMP_LT_OQ)
#define PCT_ALLSET256D(m) (_mm256_movemask_pd(m) == 0xf)
#define PCT_OUTSIDE256F(y) \
    _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), (y)), _mm256_set1_ps(1.0f), _CMP_NLT_UQ))
PCT_ERFINV_F32(erfinv512f, __m512, __m512d, __mmask8, 16, PCT_HALF512, PCT_JOIN512, _mm512_cvtps_pd, _mm512_cvtpd_ps,
               _mm512_set1_pd, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_fmadd_pd, _mm512_sqrt_pd, PCT_LT512D,
               PCT_ALLSET512D, PCT_BLEND512D, _ZGVeN8v_log, PCT_OUTSIDE512F, "avx512f")
PCT_ERFINV_F32(erfinv256f, __m256, __m256d, __m256d, 8, PCT_HALF256, PCT_JOIN256, _mm256_cvtps_pd, _mm256_cvtpd_ps,
               _mm256_set1_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_fmadd_pd, _mm256_sqrt_pd, PCT_LT256D,
               PCT_ALLSET256D, PCT_BLEND256D, _ZGVdN4v_log, PCT_OUTSIDE256F, "avx2,fma")
static inline float erfinvf_scalar(float y) { return (float)pct_pw_erfinv_d(y); }
PCT_VEC_LOOP(v256_erfinv_f32, 1, float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, erfinv256f, erfinvf_scalar, "avx2,fma")
PCT_VEC_LOOP(v512_erfinv_f32, 1, float, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, erfinv512f, erfinvf_scalar, "avx512f")
/* float32 pow: pairs of 8 (AVX-512) or 4 (AVX2) lanes through libmvec's double pow, rounded once: the bits of
 * the table loop, whose pow(a, b) is the double function (its exponents 2, 3 and -2 as products in float, lane by
 * lane here too). A scalar exponent of 2, 3 or -2, and any strided run, go to the table loop (Note [pow by a
 * constant] in pointwise_loops.h). float64 keeps the scalar pow (libmvec's double pow is a few ulp off). */
#define PCT_POW_F32(NAME, VF, VD, W, HALF, JOIN, TOD, FROMD, POWD, LOADF, STOREF, SET1F, MULF, DIVF, EQ, BLEND, TARGET) \
    __attribute__((target(TARGET))) static inline VF NAME##_lanes(VF a, VF b)                                 \
    {                                                                                                        \
        VD half[2];                                                                                          \
        for (int h = 0; h < 2; h++) half[h] = POWD(TOD(HALF(a, h)), TOD(HALF(b, h)));                        \
        VF r = JOIN(FROMD(half[0]), FROMD(half[1]));                                                         \
        const VF sq = MULF(a, a);                                                                            \
        r = BLEND(EQ(b, SET1F(2.0f)), r, sq);                                                                \
        r = BLEND(EQ(b, SET1F(3.0f)), r, MULF(sq, a));                                                       \
        return BLEND(EQ(b, SET1F(-2.0f)), r, DIVF(SET1F(1.0f), sq));                                         \
    }                                                                                                        \
    __attribute__((target(TARGET))) static void NAME(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                                        \
        const pct_pw_ctx *ctx = vctx;                                                                        \
        const int64_t n = *dims, sb = steps[2];                                                              \
        float bs = 0.0f;                                                                                     \
        if (sb == 0) bs = ctx->has_scalar_b ? (float)ctx->scalar_b : *(const float *)args[2];                \
        if (steps[0] != 4 || steps[1] != 4 || (sb != 4 && sb != 0) || (sb == 0 && (bs == 2 || bs == 3 || bs == -2))) { \
            pct_pw_loop(PCT_OP_pow, PCT_FLOAT32)(args, dims, steps, vctx);                                   \
            return;                                                                                          \
        }                                                                                                    \
        float *o = (float *)args[0];                                                                         \
        const float *a = (const float *)args[1], *b = (const float *)args[2];                                \
        int64_t k = 0;                                                                                       \
        for (; k + W <= n; k += W) STOREF(o + k, NAME##_lanes(LOADF(a + k), sb ? LOADF(b + k) : SET1F(bs)));  \
        if (k < n) {                                                                                         \
            float ba[W], bb[W];                                                                              \
            for (int i = 0; i < W; i++) {                                                                    \
                ba[i] = k + i < n ? a[k + i] : 1.0f;                                                         \
                bb[i] = sb == 0 ? bs : k + i < n ? b[k + i] : 1.0f;                                          \
            }                                                                                                \
            STOREF(ba, NAME##_lanes(LOADF(ba), LOADF(bb)));                                                  \
            memcpy(o + k, ba, sizeof(float) * (size_t)(n - k));                                              \
        }                                                                                                    \
    }
#define PCT_EQ512F(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ)
#define PCT_EQ256F(a, b) _mm256_cmp_ps((a), (b), _CMP_EQ_OQ)
PCT_POW_F32(v512_pow_f32, __m512, __m512d, 16, PCT_HALF512, PCT_JOIN512, _mm512_cvtps_pd, _mm512_cvtpd_ps, _ZGVeN8vv_pow,
            _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_mul_ps, _mm512_div_ps, PCT_EQ512F, PCT_BLEND512F,
            "avx512f")
PCT_POW_F32(v256_pow_f32, __m256, __m256d, 8, PCT_HALF256, PCT_JOIN256, _mm256_cvtps_pd, _mm256_cvtpd_ps, _ZGVdN4vv_pow,
            _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_mul_ps, _mm256_div_ps, PCT_EQ256F, PCT_BLEND256F,
            "avx2,fma")
#pragma GCC diagnostic pop

/* table[op][0 = f32, 1 = f64][0 = avx2, 1 = avx512] */
static pct_loop_fn table[PCT_NUM_OPS][2][2];
static int isa = -1; /* -1 unknown, 0 none, 1 avx2, 2 avx512 */

static void init_table(void)
{
#define PCT_VEC_ENTRY(fn)                                                                      \
    table[PCT_OP_##fn][0][0] = v256_##fn##_f32; table[PCT_OP_##fn][1][0] = v256_##fn##_f64;     \
    table[PCT_OP_##fn][0][1] = v512_##fn##_f32; table[PCT_OP_##fn][1][1] = v512_##fn##_f64;
    PCT_MVEC_FUNCS(PCT_VEC_ENTRY)
    PCT_VEC_ENTRY(sigmoid)
    PCT_VEC_ENTRY(silu)
    table[PCT_OP_erfinv][0][0] = v256_erfinv_f32; /* float64 keeps the scalar form (see erfinv512f) */
    table[PCT_OP_erfinv][0][1] = v512_erfinv_f32;
    table[PCT_OP_pow][0][0] = v256_pow_f32; /* float64: the scalar pow, as erfinv */
    table[PCT_OP_pow][0][1] = v512_pow_f32;
    PCT_MVEC_FUNCS2(PCT_VEC_ENTRY)
#define PCT_VEC_ALIAS(alias, fn) \
    for (int d = 0; d < 2; d++) for (int i = 0; i < 2; i++) table[PCT_OP_##alias][d][i] = table[PCT_OP_##fn][d][i];
    PCT_VEC_ALIAS(arctan2, atan2)
#undef PCT_VEC_ALIAS
#undef PCT_VEC_ENTRY
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    bool avx512 = __builtin_cpu_supports("avx512f");
#ifdef PCT_NO_AVX512
    avx512 = false; /* valgrind builds: no AVX-512 instructions */
#endif
    const char *off = getenv("PYCTORCH_NO_AVX512"); /* at run time: the AVX2 loops (tests use it) */
    if (off && *off && strcmp(off, "0") != 0) avx512 = false;
    isa = avx512 ? 2 : avx2 ? 1 : 0;
}

pct_loop_fn pct_vec_loop(int op_index, int dtype)
{
    if (isa < 0) init_table();
    if (isa == 0 || (dtype != PCT_FLOAT32 && dtype != PCT_FLOAT64)) return NULL;
    return table[op_index][dtype == PCT_FLOAT64][isa - 1];
}

#else
pct_loop_fn pct_vec_loop(int op_index, int dtype)
{
    (void)op_index; (void)dtype;
    return NULL;
}
#endif
