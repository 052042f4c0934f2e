/* vecmath.c: see vecmath.h. Note [Vector math]: each loop handles contiguous runs in SIMD
 * chunks (the tail through a padded buffer) and anything strided element by element with
 * the scalar libm function, so its results never depend on how the loop machine split the
 * work. Built only where setup.py found libmvec (PCT_HAVE_LIBMVEC). */
#include "vecmath.h"
#include "../op.h"
#include "pointwise_math.h" /* pct_pw_erfinv_d and its coefficients */

#if defined(PCT_HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>
#include <math.h>

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
/* float32 erfinv (trunc_normal_ initialisation): pct_pw_erfinv_d's steps in double on 8 (AVX-512)
 * or 4 (AVX2) lanes with libmvec's log, erf and exp; both polynomials run and a mask picks. One
 * Newton step, not two: from the polynomial's ~1e-7 the step leaves ~1e-13, far below a float's
 * rounding, and gave float32 results equal to the correctly rounded ones on 6 million uniform
 * inputs, as the scalar form's. float64 keeps the scalar form: libmvec's erf is a few ulp off
 * and a second step does not remove that. Lanes outside (-1, 1) (and NaN) take the scalar form. */
#define PCT_ERFINV_VEC(NAME, STEPS, VD, N, SET1, ADD, SUB, MUL, DIV, SQRT, BLEND, LT, LOG, ERF, EXP, TARGET)       \
    __attribute__((target(TARGET))) static inline VD NAME(VD y)                                                 \
    {                                                                                                           \
        static const double central[PCT_ERFINV_TERMS] = PCT_ERFINV_CENTRAL, tail[PCT_ERFINV_TERMS] = PCT_ERFINV_TAIL; \
        const VD one = SET1(1.0);                                                                               \
        VD w = SUB(SET1(0.0), LOG(MUL(SUB(one, y), ADD(one, y))));                                              \
        const VD wc = SUB(w, SET1(2.5)), wt = SUB(SQRT(w), SET1(3.0));                                          \
        VD pc = SET1(central[0]), pt = SET1(tail[0]);                                                           \
        for (int i = 1; i < PCT_ERFINV_TERMS; i++) {                                                            \
            pc = ADD(SET1(central[i]), MUL(pc, wc));                                                            \
            pt = ADD(SET1(tail[i]), MUL(pt, wt));                                                               \
        }                                                                                                       \
        VD x = MUL(BLEND(LT(w, SET1(5.0)), pt, pc), y);                                                         \
        for (int i = 0; i < STEPS; i++)                                                                         \
            x = SUB(x, DIV(SUB(ERF(x), y), MUL(SET1(PCT_TWO_OVER_SQRT_PI), EXP(SUB(SET1(0.0), MUL(x, x)))))); \
        double lanes_y[N], lanes_x[N];                                                                          \
        memcpy(lanes_y, &y, sizeof lanes_y);                                                                    \
        memcpy(lanes_x, &x, sizeof lanes_x);                                                                    \
        for (int i = 0; i < N; i++)                                                                             \
            if (!(lanes_y[i] > -1.0 && lanes_y[i] < 1.0)) lanes_x[i] = pct_pw_erfinv_d(lanes_y[i]);             \
        memcpy(&x, lanes_x, sizeof lanes_x);                                                                    \
        return x;                                                                                               \
    }
#define PCT_BLEND512(m, a, b) _mm512_mask_blend_pd((m), (a), (b))
#define PCT_LT512(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_LT_OQ)
#define PCT_BLEND256(m, a, b) _mm256_blendv_pd((a), (b), (m))
#define PCT_LT256(a, b) _mm256_cmp_pd((a), (b), _CMP_LT_OQ)
PCT_ERFINV_VEC(erfinv512d, 1, __m512d, 8, _mm512_set1_pd, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_div_pd,
               _mm512_sqrt_pd, PCT_BLEND512, PCT_LT512, _ZGVeN8v_log, _ZGVeN8v_erf, _ZGVeN8v_exp, "avx512f")
PCT_ERFINV_VEC(erfinv256d, 1, __m256d, 4, _mm256_set1_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_div_pd,
               _mm256_sqrt_pd, PCT_BLEND256, PCT_LT256, _ZGVdN4v_log, _ZGVdN4v_erf, _ZGVdN4v_exp, "avx2,fma")
__attribute__((target("avx512f"))) static inline __m512 erfinv512f(__m512 y)
{
    const __m512d lo = erfinv512d(_mm512_cvtps_pd(_mm512_castps512_ps256(y)));
    const __m512d hi = erfinv512d(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1))));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo))),
                                               _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
}
__attribute__((target("avx2,fma"))) static inline __m256 erfinv256f(__m256 y)
{
    const __m256d lo = erfinv256d(_mm256_cvtps_pd(_mm256_castps256_ps128(y)));
    const __m256d hi = erfinv256d(_mm256_cvtps_pd(_mm256_extractf128_ps(y, 1)));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}
static inline float erfinvf_scalar(float y) { return (float)pct_pw_erfinv_d(y); }
PCT_VEC_LOOP(v256_erfinv_f32, 1, float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, erfinv256f, erfinvf_scalar, "avx2,fma")
PCT_VEC_LOOP(v512_erfinv_f32, 1, float, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, erfinv512f, erfinvf_scalar, "avx512f")
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
    table[PCT_OP_erfinv][0][0] = v256_erfinv_f32; /* float64 keeps the scalar form (see erfinv512d) */
    table[PCT_OP_erfinv][0][1] = v512_erfinv_f32;
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
