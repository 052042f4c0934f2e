/*
 * random_engine.c - pyctorch CPU random engine (see random_engine.h): the mt19937
 * generator, its state, uniform_ and normal_. The other draws live beside it
 * (random_int.c, random_distributions.c, random_multinomial.c; shared helpers in
 * random_engine_internal.h), under the same build-flag rules.
 *
 * Required build flags: -std=c11 (or later) plus any optimisation level,
 * link with -lm.  Verified with: gcc -std=c11 -Wall -Wextra -O3.
 * Forbidden: -ffast-math, -Ofast, -ffinite-math-only, -fassociative-math,
 * -freciprocal-math, -fno-signed-zeros (results must follow IEEE-754
 * round-to-nearest exactly).  FP contraction (-ffp-contract=fast, the GCC
 * default in GNU modes) is harmless: the code contains no a*b+c expression
 * left for the compiler to fuse; every fused multiply-add performed by the
 * torch binary is spelled out with fma()/fmaf().
 *
 * Reference behaviour: torch 2.13.0 x86-64 CPU wheel.  Its random kernels are
 * compiled with GCC 13 in a GNU C++ mode, i.e. with FMA contraction enabled,
 * and they run the AVX2 kernel build on AVX2 and AVX-512 machines (the
 * normal_ kernel is not registered for AVX-512).  Where the compiled code
 * differs from a literal reading of the C++ sources (fused multiply-adds,
 * the "== to" fix-up of uniform_, 24-bit uniforms for half/bfloat16, the
 * chunked half/bfloat16 normal_ kernel, the 2^28 threshold of random_), this
 * file follows the compiled code, which was checked instruction by
 * instruction and validated against the real library bit for bit.
 */
#include "random_engine_internal.h"

#if (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define PCT_RNG_HAVE_AVX2_PATH 1
#include <immintrin.h>
#else
#define PCT_RNG_HAVE_AVX2_PATH 0
#endif

size_t pct_rng_dtype_size(int dtype)
{
    switch (dtype) {
    case PCT_RNG_F32: return 4;
    case PCT_RNG_F64: return 8;
    case PCT_RNG_F16: return 2;
    case PCT_RNG_BF16: return 2;
    case PCT_RNG_I64: return 8;
    case PCT_RNG_I32: return 4;
    case PCT_RNG_I16: return 2;
    case PCT_RNG_I8: return 1;
    case PCT_RNG_U8: return 1;
    case PCT_RNG_BOOL: return 1;
    case PCT_RNG_U16: return 2;
    case PCT_RNG_U32: return 4;
    case PCT_RNG_U64: return 8;
    default: return 0;
    }
}

/* ===================================================================== */
/* mt19937 generator                                                      */
/* ===================================================================== */

uint32_t pct_generator_random32(pct_cpu_generator *g)
{
    return rng_next32(g);
}

uint64_t pct_generator_random64(pct_cpu_generator *g)
{
    return rng_next64(g);
}

/* ===================================================================== */
/* uniform_                                                               */
/* ===================================================================== */

int pct_rng_uniform(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                    double from, double to)
{
    int64_t i;
    double dmax;

    if (!rng_check_buf(g, out, n) || !rng_is_float_dtype(dtype))
        return -1;
    dmax = rng_dtype_max(dtype);
    if (!(from >= -dmax && from <= dmax) || !(to >= -dmax && to <= dmax))
        return -1;
    if (!(from <= to) || !(to - from <= dmax))
        return -1;

    if (dtype == PCT_RNG_F64) {
        double *o = (double *)out;
        double span = to - from;
        /* span == 1: the product is exact, so fma == plain add (fast path
         * that avoids a libm fma call on targets built without FMA). */
        if (span == 1.0) {
            for (i = 0; i < n; i++) {
                double v = rng_u53(g) + from;
                o[i] = (v == to) ? from : v;
            }
            return 0;
        }
        for (i = 0; i < n; i++) {
            double v = fma(rng_u53(g), span, from);
            o[i] = (v == to) ? from : v;
        }
        return 0;
    }

    {
        float ff = (float)from;
        float tf = (float)to;
        float span = tf - ff;
        if (!(span <= FLT_MAX))
            return -1;
        if (dtype == PCT_RNG_F32) {
            float *o = (float *)out;
            if (span == 1.0f) { /* exact product: fmaf == add */
                for (i = 0; i < n; i++) {
                    float v = rng_u24(g) + ff;
                    o[i] = (v == tf) ? ff : v;
                }
                return 0;
            }
            for (i = 0; i < n; i++) {
                float v = fmaf(rng_u24(g), span, ff);
                o[i] = (v == tf) ? ff : v;
            }
        } else if (dtype == PCT_RNG_F16) {
            uint16_t *o = (uint16_t *)out;
            uint16_t hf = rng_f32_to_f16(ff);
            float ht = rng_f16_to_f32(rng_f32_to_f16(tf));
            for (i = 0; i < n; i++) {
                uint16_t h = rng_f32_to_f16(fmaf(rng_u24(g), span, ff));
                o[i] = (rng_f16_to_f32(h) == ht) ? hf : h;
            }
        } else {
            uint16_t *o = (uint16_t *)out;
            uint16_t bf = rng_f32_to_bf16(ff);
            float bt = rng_bf16_to_f32(rng_f32_to_bf16(tf));
            for (i = 0; i < n; i++) {
                uint16_t b = rng_f32_to_bf16(fmaf(rng_u24(g), span, ff));
                o[i] = (rng_bf16_to_f32(b) == bt) ? bf : b;
            }
        }
    }
    return 0;
}

/* ===================================================================== */
/* normal_                                                                */
/* ===================================================================== */

/* Constants of the avx_mathfun log/sincos polynomials, as float bit
 * patterns taken from the compiled torch kernel. */
#define NF_ONE         0x3f800000u
#define NF_HALF        0x3f000000u
#define NF_MIN_NORM    0x00800000u
#define NF_INV_MANT    0x807fffffu
#define NF_SQRTHF      0x3f3504f3u
#define NF_LOG_P0      0x3d9021bbu
#define NF_LOG_P1      0xbdebd1b8u
#define NF_LOG_P2      0x3def251au
#define NF_LOG_P3      0xbdfe5d4fu
#define NF_LOG_P4      0x3e11e9bfu
#define NF_LOG_P5      0xbe2aae50u
#define NF_LOG_P6      0x3e4cceacu
#define NF_LOG_P7      0xbe7ffffcu
#define NF_LOG_P8      0x3eaaaaaau
#define NF_LOG_Q1      0xb95e8083u
#define NF_LOG_Q2      0x3f318000u
#define NF_TWO_PI      0x40c90fdbu
#define NF_FOPI        0x3fa2f983u
#define NF_DP1         0xbf490000u
#define NF_DP2         0xb97da000u
#define NF_DP3         0xb3222169u
#define NF_COS_P0      0x37ccf5ceu
#define NF_COS_P1      0xbab6061au
#define NF_COS_P2      0x3d2aaaa5u
#define NF_SIN_P0      0xb94ca1f9u
#define NF_SIN_P1      0x3c08839eu
#define NF_SIN_P2      0xbe2aaaa3u

/* One lane of torch's AVX2 normal_fill_16 (log256_ps, sincos256_ps and the
 * final fmadd), with exactly the fused / unfused operations of the compiled
 * kernel. */
static void rng_nf16_lane(float d0, float d8, float mean, float sd,
                          float *out0, float *out8)
{
    const float one = rng_u2f(NF_ONE);
    const float half = rng_u2f(NF_HALF);
    float x, e, tmp, z, y, lg, radius;
    float theta, ax, yf, yc, ys, s_raw, c_raw;
    uint32_t xb, invalid, mask, sign_sin, sign_cos, pm, ysin1, ysin2;
    int32_t imm0, j;

    /* ---- log(1 - d0) ---- */
    x = one - d0;
    invalid = (x <= 0.0f) ? 0xffffffffu : 0u;
    x = (x > rng_u2f(NF_MIN_NORM)) ? x : rng_u2f(NF_MIN_NORM);
    xb = rng_f2u(x);
    imm0 = (int32_t)(xb >> 23);
    x = rng_u2f((xb & NF_INV_MANT) | NF_HALF);
    imm0 = imm0 - 127;
    e = (float)imm0 + one;
    mask = (x < rng_u2f(NF_SQRTHF)) ? 0xffffffffu : 0u;
    tmp = rng_u2f(rng_f2u(x) & mask);
    x = x - one;
    e = e - rng_u2f(NF_ONE & mask);
    x = x + tmp;
    z = x * x;
    y = fmaf(rng_u2f(NF_LOG_P0), x, rng_u2f(NF_LOG_P1));
    y = fmaf(y, x, rng_u2f(NF_LOG_P2));
    y = fmaf(y, x, rng_u2f(NF_LOG_P3));
    y = fmaf(y, x, rng_u2f(NF_LOG_P4));
    y = fmaf(y, x, rng_u2f(NF_LOG_P5));
    y = fmaf(y, x, rng_u2f(NF_LOG_P6));
    y = fmaf(y, x, rng_u2f(NF_LOG_P7));
    y = fmaf(y, x, rng_u2f(NF_LOG_P8));
    tmp = e * rng_u2f(NF_LOG_Q1);
    y = y * x;
    y = fmaf(y, z, tmp);
    y = fmaf(-z, half, y);
    x = x + y;
    x = fmaf(e, rng_u2f(NF_LOG_Q2), x);
    lg = rng_u2f(rng_f2u(x) | invalid);
    radius = sqrtf(lg * -2.0f);

    /* ---- sincos(2*pi*d8) ---- */
    theta = rng_u2f(NF_TWO_PI) * d8;
    ax = rng_u2f(rng_f2u(theta) & 0x7fffffffu);
    sign_sin = rng_f2u(theta) & 0x80000000u;
    y = ax * rng_u2f(NF_FOPI);
    j = (y > -2147483649.0f && y < 2147483648.0f) ? (int32_t)y : INT32_MIN;
    j = (int32_t)(((uint32_t)j + 1u) & ~1u);
    yf = (float)j;
    sign_sin ^= ((uint32_t)j & 4u) << 29;
    pm = (((uint32_t)j & 2u) == 0u) ? 0xffffffffu : 0u;
    x = fmaf(yf, rng_u2f(NF_DP1), ax);
    x = fmaf(rng_u2f(NF_DP2), yf, x);
    x = fmaf(yf, rng_u2f(NF_DP3), x);
    sign_cos = (~((uint32_t)j - 2u) & 4u) << 29;
    z = x * x;
    tmp = z * half;
    yc = fmaf(rng_u2f(NF_COS_P0), z, rng_u2f(NF_COS_P1));
    yc = fmaf(yc, z, rng_u2f(NF_COS_P2));
    yc = z * yc;
    yc = fmaf(z, yc, -tmp);
    yc = yc + one;
    ys = fmaf(rng_u2f(NF_SIN_P0), z, rng_u2f(NF_SIN_P1));
    ys = fmaf(ys, z, rng_u2f(NF_SIN_P2));
    ys = z * ys;
    ys = fmaf(x, ys, x);
    ysin2 = rng_f2u(ys) & pm;
    ysin1 = rng_f2u(yc) & ~pm;
    yc = yc - rng_u2f(ysin1);
    ys = ys - rng_u2f(ysin2);
    s_raw = rng_u2f(ysin1) + rng_u2f(ysin2);
    c_raw = ys + yc;

    *out0 = fmaf(radius * rng_u2f(rng_f2u(c_raw) ^ sign_cos), sd, mean);
    *out8 = fmaf(radius * rng_u2f(rng_f2u(s_raw) ^ sign_sin), sd, mean);
}

static void rng_nf16_scalar(float *d, float mean, float sd)
{
    int k;
    for (k = 0; k < 8; k++)
        rng_nf16_lane(d[k], d[k + 8], mean, sd, &d[k], &d[k + 8]);
}

#if PCT_RNG_HAVE_AVX2_PATH
#define NF_V(c) _mm256_castsi256_ps(_mm256_set1_epi32((int)(c)))

__attribute__((target("avx2,fma")))
static void rng_nf16_avx2(float *d, float mean, float sd)
{
    const __m256 one = NF_V(NF_ONE);
    const __m256 half = NF_V(NF_HALF);
    __m256 u1 = _mm256_sub_ps(one, _mm256_loadu_ps(d));
    __m256 u2 = _mm256_loadu_ps(d + 8);
    __m256 invalid, x, e, mask, tmp, z, y, radius, theta, ax, sign_sin, yf;
    __m256 sign_cos, pm, yc, ys, ysin1, ysin2, s, c;
    __m256i imm0, j;

    invalid = _mm256_cmp_ps(u1, _mm256_setzero_ps(), _CMP_LE_OS);
    x = _mm256_max_ps(u1, NF_V(NF_MIN_NORM));
    imm0 = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    x = _mm256_and_ps(x, NF_V(NF_INV_MANT));
    x = _mm256_or_ps(x, half);
    imm0 = _mm256_sub_epi32(imm0, _mm256_set1_epi32(127));
    e = _mm256_add_ps(_mm256_cvtepi32_ps(imm0), one);
    mask = _mm256_cmp_ps(x, NF_V(NF_SQRTHF), _CMP_LT_OS);
    tmp = _mm256_and_ps(x, mask);
    x = _mm256_sub_ps(x, one);
    e = _mm256_sub_ps(e, _mm256_and_ps(one, mask));
    x = _mm256_add_ps(x, tmp);
    z = _mm256_mul_ps(x, x);
    y = _mm256_fmadd_ps(NF_V(NF_LOG_P0), x, NF_V(NF_LOG_P1));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P2));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P3));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P4));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P5));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P6));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P7));
    y = _mm256_fmadd_ps(y, x, NF_V(NF_LOG_P8));
    tmp = _mm256_mul_ps(e, NF_V(NF_LOG_Q1));
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, tmp);
    y = _mm256_fnmadd_ps(z, half, y);
    x = _mm256_add_ps(x, y);
    x = _mm256_fmadd_ps(e, NF_V(NF_LOG_Q2), x);
    x = _mm256_or_ps(x, invalid);
    radius = _mm256_sqrt_ps(_mm256_mul_ps(x, _mm256_set1_ps(-2.0f)));

    theta = _mm256_mul_ps(NF_V(NF_TWO_PI), u2);
    ax = _mm256_and_ps(theta, NF_V(0x7fffffffu));
    sign_sin = _mm256_and_ps(theta, NF_V(0x80000000u));
    y = _mm256_mul_ps(ax, NF_V(NF_FOPI));
    j = _mm256_cvttps_epi32(y);
    j = _mm256_add_epi32(j, _mm256_set1_epi32(1));
    j = _mm256_and_si256(j, _mm256_set1_epi32(~1));
    yf = _mm256_cvtepi32_ps(j);
    sign_sin = _mm256_xor_ps(sign_sin, _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_and_si256(j, _mm256_set1_epi32(4)), 29)));
    pm = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
        _mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
    x = _mm256_fmadd_ps(yf, NF_V(NF_DP1), ax);
    x = _mm256_fmadd_ps(NF_V(NF_DP2), yf, x);
    x = _mm256_fmadd_ps(yf, NF_V(NF_DP3), x);
    sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_andnot_si256(
        _mm256_sub_epi32(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)), 29));
    z = _mm256_mul_ps(x, x);
    tmp = _mm256_mul_ps(z, half);
    yc = _mm256_fmadd_ps(NF_V(NF_COS_P0), z, NF_V(NF_COS_P1));
    yc = _mm256_fmadd_ps(yc, z, NF_V(NF_COS_P2));
    yc = _mm256_mul_ps(z, yc);
    yc = _mm256_fmsub_ps(z, yc, tmp);
    yc = _mm256_add_ps(yc, one);
    ys = _mm256_fmadd_ps(NF_V(NF_SIN_P0), z, NF_V(NF_SIN_P1));
    ys = _mm256_fmadd_ps(ys, z, NF_V(NF_SIN_P2));
    ys = _mm256_mul_ps(z, ys);
    ys = _mm256_fmadd_ps(x, ys, x);
    ysin2 = _mm256_and_ps(pm, ys);
    ysin1 = _mm256_andnot_ps(pm, yc);
    yc = _mm256_sub_ps(yc, ysin1);
    ys = _mm256_sub_ps(ys, ysin2);
    s = _mm256_xor_ps(_mm256_add_ps(ysin1, ysin2), sign_sin);
    c = _mm256_xor_ps(_mm256_add_ps(ys, yc), sign_cos);

    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c),
                                        _mm256_set1_ps(sd),
                                        _mm256_set1_ps(mean)));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s),
                                            _mm256_set1_ps(sd),
                                            _mm256_set1_ps(mean)));
}

#endif

/* Set only by the test hook below; read-only during normal operation. */
static int rng_force_scalar_normal = 0;

typedef void (*rng_nf16_fn)(float *d, float mean, float sd);

/* Chosen once per fill call (no global mutable cache, so no data race). */
static rng_nf16_fn rng_select_nf16(void)
{
#if PCT_RNG_HAVE_AVX2_PATH
    if (!rng_force_scalar_normal) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return rng_nf16_avx2;
    }
#endif
    return rng_nf16_scalar;
}

void pct_rng_debug_force_scalar_normal(int force_scalar)
{
    rng_force_scalar_normal = force_scalar ? 1 : 0;
}

static void rng_normal_fill_f32(pct_cpu_generator *g, float *d, int64_t n,
                                float mean, float sd)
{
    rng_nf16_fn rng_nf16 = rng_select_nf16();
    int64_t i;
    int k;
    for (i = 0; i < n; i++)
        d[i] = rng_u24(g);
    for (i = 0; i + 16 <= n; i += 16)
        rng_nf16(d + i, mean, sd);
    if (n % 16 != 0) {
        float *t = d + n - 16;
        for (k = 0; k < 16; k++)
            t[k] = rng_u24(g);
        rng_nf16(t, mean, sd);
    }
}

static void rng_normal_fill_reduced(pct_cpu_generator *g, uint16_t *o,
                                    int64_t n, float mean, float sd,
                                    int is_bf16)
{
    rng_nf16_fn rng_nf16 = rng_select_nf16();
    float buf[16];
    int64_t i;
    int k;
    for (i = 0; i + 16 <= n; i += 16) {
        for (k = 0; k < 16; k++)
            buf[k] = rng_u24(g);
        rng_nf16(buf, mean, sd);
        for (k = 0; k < 16; k++)
            o[i + k] = is_bf16 ? rng_f32_to_bf16(buf[k])
                               : rng_f32_to_f16(buf[k]);
    }
    if (n % 16 != 0) {
        for (k = 0; k < 16; k++)
            buf[k] = rng_u24(g);
        rng_nf16(buf, mean, sd);
        for (k = 0; k < 16; k++)
            o[n - 16 + k] = is_bf16 ? rng_f32_to_bf16(buf[k])
                                    : rng_f32_to_f16(buf[k]);
    }
}

static void rng_normal16_f64(double *d, double mean, double sd)
{
    int k;
    for (k = 0; k < 8; k++) {
        double u1 = 1.0 - d[k];
        double r = sqrt(log(u1) * -2.0);
        double theta = 6.283185307179586 * d[k + 8];
        d[k] = fma(r * cos(theta), sd, mean);
        d[k + 8] = fma(r * sin(theta), sd, mean);
    }
}

static void rng_normal_fill_f64(pct_cpu_generator *g, double *d, int64_t n,
                                double mean, double sd)
{
    int64_t i;
    int k;
    for (i = 0; i < n; i++)
        d[i] = rng_u53(g);
    for (i = 0; i + 16 <= n; i += 16)
        rng_normal16_f64(d + i, mean, sd);
    if (n % 16 != 0) {
        double *t = d + n - 16;
        for (k = 0; k < 16; k++)
            t[k] = rng_u53(g);
        rng_normal16_f64(t, mean, sd);
    }
}

int pct_rng_normal_ex(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                      double mean, double std, int contiguous)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || !rng_is_float_dtype(dtype))
        return -1;
    if (!(std >= 0.0))
        return -1;
    if (n == 0)
        return 0;
    if (contiguous && n >= 16) {
        switch (dtype) {
        case PCT_RNG_F32:
            rng_normal_fill_f32(g, (float *)out, n, (float)mean, (float)std);
            return 0;
        case PCT_RNG_F64:
            rng_normal_fill_f64(g, (double *)out, n, mean, std);
            return 0;
        case PCT_RNG_F16:
            rng_normal_fill_reduced(g, (uint16_t *)out, n, (float)mean,
                                    (float)std, 0);
            return 0;
        default:
            rng_normal_fill_reduced(g, (uint16_t *)out, n, (float)mean,
                                    (float)std, 1);
            return 0;
        }
    }
    for (i = 0; i < n; i++)
        rng_store_double(out, dtype, i, rng_normal_double(g, mean, std));
    return 0;
}

int pct_rng_normal(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                   double mean, double std)
{
    return pct_rng_normal_ex(g, out, dtype, n, mean, std, 1);
}
