/*
 * random_engine.c - pyctorch CPU random engine (see random_engine.h).
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
#include "random_engine.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#if (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define PCT_RNG_HAVE_AVX2_PATH 1
#include <immintrin.h>
#else
#define PCT_RNG_HAVE_AVX2_PATH 0
#endif

/* ===================================================================== */
/* small helpers                                                          */
/* ===================================================================== */

static inline uint32_t rng_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float rng_u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* float -> IEEE half, round to nearest even; NaN -> quiet NaN with the sign
 * kept (0x7e00 | sign), as c10::Half does. */
static uint16_t rng_f32_to_f16(float f)
{
    uint32_t x = rng_f2u(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    uint32_t h, rem, halfway, sh, m;

    if (ax > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (ax >= 0x47800000u) /* >= 65536 (and inf) */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* result is a normal half (or rounds to inf) */
        h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
        rem = ax & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    if (ax < 0x33000000u) /* < 2^-25: rounds to zero */
        return sign;
    /* subnormal half result */
    m = (ax & 0x7fffffu) | 0x800000u;
    sh = 126u - (ax >> 23); /* 14 .. 24 */
    h = m >> sh;
    rem = m & ((1u << sh) - 1u);
    halfway = 1u << (sh - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

static float rng_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t m = (uint32_t)h & 0x3ffu;
    if (e == 0x1fu)
        return rng_u2f(sign | 0x7f800000u | (m << 13));
    if (e != 0)
        return rng_u2f(sign | ((e + 112u) << 23) | (m << 13));
    if (m == 0)
        return rng_u2f(sign);
    /* subnormal: value = m * 2^-24, exact in float */
    {
        float v = (float)m * 0x1p-24f;
        return (sign != 0) ? -v : v;
    }
}

/* float -> bfloat16, round to nearest even, NaN -> 0x7fc0 (c10 rule). */
static uint16_t rng_f32_to_bf16(float f)
{
    uint32_t u = rng_f2u(f);
    if (f != f)
        return 0x7fc0u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float rng_bf16_to_f32(uint16_t b)
{
    return rng_u2f((uint32_t)b << 16);
}

/* x86 cvtts*2si semantics (out of range / NaN -> "integer indefinite"),
 * i.e. what torch's static_cast<int64_t>(float/double) compiles to. */
static int64_t rng_d2i64(double d)
{
    if (!(d >= -0x1p63 && d < 0x1p63))
        return INT64_MIN;
    return (int64_t)d;
}

static int32_t rng_d2i32(double d)
{
    if (!(d > -2147483649.0 && d < 2147483648.0))
        return INT32_MIN;
    return (int32_t)d;
}

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

static int rng_is_float_dtype(int dtype)
{
    return dtype == PCT_RNG_F32 || dtype == PCT_RNG_F64 ||
           dtype == PCT_RNG_F16 || dtype == PCT_RNG_BF16;
}

static int rng_check_buf(const pct_cpu_generator *g, const void *out,
                         int64_t n)
{
    if (g == NULL || n < 0)
        return 0;
    if (n > 0 && out == NULL)
        return 0;
    return 1;
}

/* Stores of a double value into any dtype (C conversion semantics; floats
 * narrower than double go through float like torch's static_cast). */
static inline void rng_store_double(void *out, int dtype, int64_t i, double v)
{
    switch (dtype) {
    case PCT_RNG_F64: ((double *)out)[i] = v; break;
    case PCT_RNG_F32: ((float *)out)[i] = (float)v; break;
    case PCT_RNG_F16: ((uint16_t *)out)[i] = rng_f32_to_f16((float)v); break;
    case PCT_RNG_BF16: ((uint16_t *)out)[i] = rng_f32_to_bf16((float)v); break;
    default: break;
    }
}

/* Store of an int64 value (torch: static_cast<scalar_t>(int64_t)). */
static inline void rng_store_i64(void *out, int dtype, int64_t i, int64_t v)
{
    switch (dtype) {
    case PCT_RNG_F64: ((double *)out)[i] = (double)v; break;
    case PCT_RNG_F32: ((float *)out)[i] = (float)v; break;
    case PCT_RNG_F16: ((uint16_t *)out)[i] = rng_f32_to_f16((float)v); break;
    case PCT_RNG_BF16: ((uint16_t *)out)[i] = rng_f32_to_bf16((float)v); break;
    case PCT_RNG_I64: ((int64_t *)out)[i] = v; break;
    case PCT_RNG_U64: ((uint64_t *)out)[i] = (uint64_t)v; break;
    case PCT_RNG_I32:
    case PCT_RNG_U32: ((uint32_t *)out)[i] = (uint32_t)(uint64_t)v; break;
    case PCT_RNG_I16:
    case PCT_RNG_U16: ((uint16_t *)out)[i] = (uint16_t)(uint64_t)v; break;
    case PCT_RNG_I8:
    case PCT_RNG_U8: ((uint8_t *)out)[i] = (uint8_t)(uint64_t)v; break;
    case PCT_RNG_BOOL: ((uint8_t *)out)[i] = (uint8_t)(v != 0); break;
    default: break;
    }
}

/* ===================================================================== */
/* mt19937 generator                                                      */
/* ===================================================================== */

#define RNG_MT_N 624
#define RNG_MT_M 397

static inline uint32_t rng_mt_twist_pair(uint32_t u, uint32_t v)
{
    uint32_t y = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (y >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
}

static void rng_mt_regenerate(pct_cpu_generator *g)
{
    uint32_t *s = g->state;
    int k;
    for (k = 0; k < RNG_MT_N - RNG_MT_M; k++)
        s[k] = s[k + RNG_MT_M] ^ rng_mt_twist_pair(s[k], s[k + 1]);
    for (; k < RNG_MT_N - 1; k++)
        s[k] = s[k + RNG_MT_M - RNG_MT_N] ^ rng_mt_twist_pair(s[k], s[k + 1]);
    s[RNG_MT_N - 1] =
        s[RNG_MT_M - 1] ^ rng_mt_twist_pair(s[RNG_MT_N - 1], s[0]);
    g->left = RNG_MT_N;
    g->next = 0;
}

void pct_generator_init(pct_cpu_generator *g, uint64_t seed)
{
    uint32_t j;
    if (g == NULL)
        return;
    memset(g, 0, sizeof *g);
    g->seed = seed;
    g->seeded = 1;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (j = 1; j < RNG_MT_N; j++) {
        uint32_t prev = g->state[j - 1];
        g->state[j] = 1812433253u * (prev ^ (prev >> 30)) + j;
    }
    g->left = 1;
    g->next = 0;
    g->has_next_double_normal = 0;
    g->has_next_float_normal = 0;
}

uint64_t pct_generator_seed_value(const pct_cpu_generator *g)
{
    return g != NULL ? g->seed : 0;
}

static inline uint32_t rng_next32(pct_cpu_generator *g)
{
    uint32_t y;
    if (--g->left <= 0)
        rng_mt_regenerate(g);
    /* Only reachable through a hand-made state (next == 624 with left > 1),
     * which torch would read out of bounds; regenerate instead. */
    if (g->next >= RNG_MT_N)
        rng_mt_regenerate(g);
    y = g->state[g->next++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

static inline uint64_t rng_next64(pct_cpu_generator *g)
{
    uint64_t hi = rng_next32(g);
    uint64_t lo = rng_next32(g);
    return (hi << 32) | lo;
}

uint32_t pct_generator_random32(pct_cpu_generator *g)
{
    return rng_next32(g);
}

uint64_t pct_generator_random64(pct_cpu_generator *g)
{
    return rng_next64(g);
}

/* uniform_real_distribution<float>(0,1) / <double>(0,1) */
static inline float rng_u24(pct_cpu_generator *g)
{
    return (float)(rng_next32(g) & 0xffffffu) * 0x1p-24f;
}

static inline double rng_u53(pct_cpu_generator *g)
{
    return (double)(rng_next64(g) & UINT64_C(0x1fffffffffffff)) * 0x1p-53;
}

/* ----------------------------------------------------- state (de)serialise */

#define RNG_ST_SEED 0
#define RNG_ST_LEFT 8
#define RNG_ST_SEEDED 12
#define RNG_ST_NEXT 16
#define RNG_ST_STATE 24
#define RNG_ST_NORMAL_X 5016
#define RNG_ST_NORMAL_Y 5024
#define RNG_ST_NORMAL_RHO 5032
#define RNG_ST_NORMAL_VALID 5040
#define RNG_ST_FLOAT_NORMAL 5048
#define RNG_ST_FLOAT_VALID 5052

static void rng_put_u64(uint8_t *p, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void rng_put_u32(uint8_t *p, uint32_t v)
{
    int i;
    for (i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rng_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t rng_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    int i;
    for (i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

size_t pct_generator_state_size(void)
{
    return PCT_GENERATOR_STATE_SIZE;
}

void pct_generator_get_state(const pct_cpu_generator *g, uint8_t *out)
{
    int i;
    uint64_t dbits;
    if (g == NULL || out == NULL)
        return;
    memset(out, 0, PCT_GENERATOR_STATE_SIZE);
    rng_put_u64(out + RNG_ST_SEED, g->seed);
    rng_put_u32(out + RNG_ST_LEFT, (uint32_t)g->left);
    rng_put_u32(out + RNG_ST_SEEDED, g->seeded ? 1u : 0u);
    rng_put_u64(out + RNG_ST_NEXT, (uint64_t)g->next);
    for (i = 0; i < RNG_MT_N; i++)
        rng_put_u64(out + RNG_ST_STATE + 8 * i, (uint64_t)g->state[i]);
    if (g->has_next_double_normal) {
        memcpy(&dbits, &g->next_double_normal, sizeof dbits);
        rng_put_u64(out + RNG_ST_NORMAL_Y, dbits);
        rng_put_u32(out + RNG_ST_NORMAL_VALID, 1u);
    }
    if (g->has_next_float_normal) {
        rng_put_u32(out + RNG_ST_FLOAT_NORMAL, rng_f2u(g->next_float_normal));
        out[RNG_ST_FLOAT_VALID] = 1;
    }
}

int pct_generator_set_state(pct_cpu_generator *g, const uint8_t *in, size_t n)
{
    pct_cpu_generator tmp;
    int32_t left, seeded;
    uint32_t next;
    uint64_t dbits;
    int i;

    if (g == NULL || in == NULL || n != PCT_GENERATOR_STATE_SIZE)
        return -1;
    left = (int32_t)rng_get_u32(in + RNG_ST_LEFT);
    seeded = (int32_t)rng_get_u32(in + RNG_ST_SEEDED);
    next = (uint32_t)rng_get_u64(in + RNG_ST_NEXT);
    if (seeded == 0 || left <= 0 || left > RNG_MT_N || next > RNG_MT_N)
        return -1;

    memset(&tmp, 0, sizeof tmp);
    tmp.seed = rng_get_u64(in + RNG_ST_SEED);
    tmp.left = left;
    tmp.seeded = 1;
    tmp.next = next;
    for (i = 0; i < RNG_MT_N; i++)
        tmp.state[i] = (uint32_t)rng_get_u64(in + RNG_ST_STATE + 8 * i);
    if (rng_get_u32(in + RNG_ST_NORMAL_VALID) != 0) {
        dbits = rng_get_u64(in + RNG_ST_NORMAL_Y);
        memcpy(&tmp.next_double_normal, &dbits, sizeof dbits);
        tmp.has_next_double_normal = 1;
    }
    if (in[RNG_ST_FLOAT_VALID] != 0) {
        tmp.next_float_normal = rng_u2f(rng_get_u32(in + RNG_ST_FLOAT_NORMAL));
        tmp.has_next_float_normal = 1;
    }
    *g = tmp;
    return 0;
}

/* ===================================================================== */
/* uniform_                                                               */
/* ===================================================================== */

static double rng_dtype_max(int dtype)
{
    switch (dtype) {
    case PCT_RNG_F64: return DBL_MAX;
    case PCT_RNG_F32: return (double)FLT_MAX;
    case PCT_RNG_F16: return 65504.0;
    case PCT_RNG_BF16: return 3.3895313892515355e+38; /* 0x7f7f */
    default: return 0.0;
    }
}

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

/* Scalar Box-Muller of at::normal_distribution<double>, with the
 * generator's cached second value. */
static double rng_normal_double(pct_cpu_generator *g, double mean, double sd)
{
    double u1, u2, r, theta;
    if (g->has_next_double_normal) {
        g->has_next_double_normal = 0;
        return fma(g->next_double_normal, sd, mean);
    }
    u1 = rng_u53(g);
    u2 = rng_u53(g);
    r = sqrt(-2.0 * log1p(-u2));
    theta = 6.283185307179586 * u1; /* (double)(2*pi) */
    g->next_double_normal = r * sin(theta);
    g->has_next_double_normal = 1;
    return fma(r * cos(theta), sd, mean);
}

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

/* ===================================================================== */
/* random_                                                                */
/* ===================================================================== */

static int rng_float_digits(int dtype)
{
    switch (dtype) {
    case PCT_RNG_F64: return 53;
    case PCT_RNG_F32: return 24;
    case PCT_RNG_F16: return 11;
    case PCT_RNG_BF16: return 8;
    default: return 0;
    }
}

/* static_cast<int64_t>(static_cast<scalar_t>(v)) for a floating dtype */
static int64_t rng_i64_through(int dtype, int64_t v)
{
    switch (dtype) {
    case PCT_RNG_F64: return rng_d2i64((double)v);
    case PCT_RNG_F32: return rng_d2i64((double)(float)v);
    case PCT_RNG_F16:
        return rng_d2i64((double)rng_f16_to_f32(rng_f32_to_f16((float)v)));
    default:
        return rng_d2i64((double)rng_bf16_to_f32(rng_f32_to_bf16((float)v)));
    }
}

static int rng_ilog2_u64(uint64_t v)
{
    int k = 0;
    while (v >>= 1)
        ++k;
    return k;
}

static uint64_t rng_abs_u64(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int64_t rng_update_from(int dtype, int64_t from)
{
    int64_t fp1 = (int64_t)((uint64_t)from + 1u);
    int64_t from_plus_1 = rng_i64_through(dtype, fp1);
    if (from_plus_1 < from) {
        int k = rng_ilog2_u64(rng_abs_u64(fp1));
        int sh = k - rng_float_digits(dtype) + 1;
        if (sh >= 0 && sh < 63)
            from = (int64_t)((uint64_t)from_plus_1 + ((uint64_t)1 << sh));
    }
    return from;
}

static int64_t rng_update_to(int dtype, int64_t to)
{
    int64_t tm1 = (int64_t)((uint64_t)to - 1u);
    int64_t to_minus_1 = rng_i64_through(dtype, tm1);
    if (to_minus_1 >= to) {
        int k = rng_ilog2_u64(rng_abs_u64(tm1));
        int sh = k - rng_float_digits(dtype) + 1;
        if (sh >= 0 && sh < 63)
            to = (int64_t)((uint64_t)to_minus_1 - ((uint64_t)1 << sh));
    }
    return to;
}

/* torch's check_from_to_in_range: errors only (the "not exactly
 * representable" case is a warning in torch). */
static int rng_from_to_in_range(int dtype, int64_t from, int64_t to_inc)
{
    int64_t lo, hi;
    if (rng_is_float_dtype(dtype)) {
        double m = rng_dtype_max(dtype);
        return ((double)from >= -m && (double)from <= m &&
                (double)to_inc >= -m && (double)to_inc <= m);
    }
    switch (dtype) {
    case PCT_RNG_I64: lo = INT64_MIN; hi = INT64_MAX; break;
    case PCT_RNG_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case PCT_RNG_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case PCT_RNG_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case PCT_RNG_U8: lo = 0; hi = UINT8_MAX; break;
    case PCT_RNG_BOOL: lo = 0; hi = 1; break;
    case PCT_RNG_U16: lo = 0; hi = UINT16_MAX; break;
    case PCT_RNG_U32: lo = 0; hi = UINT32_MAX; break;
    case PCT_RNG_U64: lo = 0; hi = INT64_MAX; break; /* bounds arrive as int64 */
    default: return 0;
    }
    return from >= lo && from <= hi && to_inc >= lo && to_inc <= hi;
}

static void rng_random_range_kernel(pct_cpu_generator *g, void *out,
                                    int dtype, int64_t n, uint64_t range,
                                    int64_t base)
{
    int64_t i;
    int wide = range >= (UINT64_C(1) << 28);
    for (i = 0; i < n; i++) {
        uint64_t r = wide ? rng_next64(g) : (uint64_t)rng_next32(g);
        rng_store_i64(out, dtype, i, (int64_t)(r % range + (uint64_t)base));
    }
}

int pct_rng_random_from_to(pct_cpu_generator *g, void *out, int dtype,
                           int64_t n, int64_t from, int64_t to_exclusive)
{
    int64_t to = to_exclusive;
    if (!rng_check_buf(g, out, n) || pct_rng_dtype_size(dtype) == 0)
        return -1;
    if (!(from < to))
        return -1;
    if (rng_is_float_dtype(dtype)) {
        from = rng_update_from(dtype, from);
        to = rng_update_to(dtype, to);
        if (!(from < to))
            return -1;
    }
    if (!rng_from_to_in_range(dtype, from, (int64_t)((uint64_t)to - 1u)))
        return -1;
    if (n == 0)
        return 0;
    rng_random_range_kernel(g, out, dtype, n, (uint64_t)to - (uint64_t)from,
                            from);
    return 0;
}

int pct_rng_random_from(pct_cpu_generator *g, void *out, int dtype,
                        int64_t n, int64_t from)
{
    int64_t to_inc, i;
    if (!rng_check_buf(g, out, n) || pct_rng_dtype_size(dtype) == 0)
        return -1;
    if (from == INT64_MIN) {
        if (dtype != PCT_RNG_I64 && dtype != PCT_RNG_F32 &&
            dtype != PCT_RNG_F64 && dtype != PCT_RNG_BF16)
            return -1;
        for (i = 0; i < n; i++)
            rng_store_i64(out, dtype, i, (int64_t)rng_next64(g));
        return 0;
    }
    switch (dtype) {
    case PCT_RNG_F64: case PCT_RNG_F32: case PCT_RNG_F16: case PCT_RNG_BF16:
        to_inc = (int64_t)1 << rng_float_digits(dtype);
        from = rng_update_from(dtype, from);
        if (!(from < to_inc))
            return -1;
        break;
    case PCT_RNG_I64: to_inc = INT64_MAX; break;
    case PCT_RNG_I32: to_inc = INT32_MAX; break;
    case PCT_RNG_I16: to_inc = INT16_MAX; break;
    case PCT_RNG_I8: to_inc = INT8_MAX; break;
    case PCT_RNG_U8: to_inc = UINT8_MAX; break;
    case PCT_RNG_U16: to_inc = UINT16_MAX; break;
    case PCT_RNG_U32: to_inc = UINT32_MAX; break;
    case PCT_RNG_U64: return -1; /* [from, 2^64 - 1] is not an int64 range */
    default: to_inc = 1; break; /* bool */
    }
    if (!rng_from_to_in_range(dtype, from, to_inc))
        return -1;
    if (n == 0)
        return 0;
    rng_random_range_kernel(g, out, dtype, n,
                            (uint64_t)to_inc - (uint64_t)from + 1u, from);
    return 0;
}

int pct_rng_random_default(pct_cpu_generator *g, void *out, int dtype,
                           int64_t n)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || pct_rng_dtype_size(dtype) == 0)
        return -1;
    switch (dtype) {
    case PCT_RNG_F64:
        for (i = 0; i < n; i++)
            ((double *)out)[i] =
                (double)(rng_next64(g) % ((UINT64_C(1) << 53) + 1u));
        break;
    case PCT_RNG_F32:
        for (i = 0; i < n; i++)
            ((float *)out)[i] = (float)(rng_next32(g) % ((1u << 24) + 1u));
        break;
    case PCT_RNG_F16:
        for (i = 0; i < n; i++)
            ((uint16_t *)out)[i] =
                rng_f32_to_f16((float)(rng_next32(g) % ((1u << 11) + 1u)));
        break;
    case PCT_RNG_BF16:
        for (i = 0; i < n; i++)
            ((uint16_t *)out)[i] =
                rng_f32_to_bf16((float)(rng_next32(g) % ((1u << 8) + 1u)));
        break;
    case PCT_RNG_I64:
        for (i = 0; i < n; i++)
            ((int64_t *)out)[i] =
                (int64_t)(rng_next64(g) & UINT64_C(0x7fffffffffffffff));
        break;
    case PCT_RNG_I32:
        for (i = 0; i < n; i++)
            ((int32_t *)out)[i] = (int32_t)(rng_next32(g) & 0x7fffffffu);
        break;
    case PCT_RNG_I16:
        for (i = 0; i < n; i++)
            ((int16_t *)out)[i] = (int16_t)(rng_next32(g) & 0x7fffu);
        break;
    case PCT_RNG_I8:
        for (i = 0; i < n; i++)
            ((int8_t *)out)[i] = (int8_t)(rng_next32(g) & 0x7fu);
        break;
    case PCT_RNG_U8:
        for (i = 0; i < n; i++)
            ((uint8_t *)out)[i] = (uint8_t)(rng_next32(g) & 0xffu);
        break;
    case PCT_RNG_BOOL:
        for (i = 0; i < n; i++)
            ((uint8_t *)out)[i] = (uint8_t)(rng_next32(g) & 1u);
        break;
    default: return -1; /* the unsigned dtypes: torch has no default range for them */
    }
    return 0;
}

/* ===================================================================== */
/* exponential_, bernoulli_, cauchy_, log_normal_, geometric_             */
/* ===================================================================== */

static inline double rng_exponential_sample(pct_cpu_generator *g,
                                            double lambd)
{
    double u = rng_u53(g);
    return (-1.0 / lambd) * log1p(-u);
}

int pct_rng_exponential(pct_cpu_generator *g, void *out, int dtype,
                        int64_t n, double lambd)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || !rng_is_float_dtype(dtype))
        return -1;
    if (!(lambd > 0.0))
        return -1;
    for (i = 0; i < n; i++)
        rng_store_double(out, dtype, i, rng_exponential_sample(g, lambd));
    return 0;
}

int pct_rng_bernoulli_scalar(pct_cpu_generator *g, void *out, int dtype,
                             int64_t n, double p)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || pct_rng_dtype_size(dtype) == 0)
        return -1;
    if (!(p >= 0.0 && p <= 1.0))
        return -1;
    for (i = 0; i < n; i++)
        rng_store_i64(out, dtype, i, rng_u53(g) < p ? 1 : 0);
    return 0;
}

/* bernoulli with a probability per element: float64 probabilities draw a 53-bit uniform, float32 ones a
   24-bit uniform (as torch does), so the two keep separate samplers but share the code. */
#define RNG_BERNOULLI_TENSOR(NAME, T, UNIFORM)                                      \
    int NAME(pct_cpu_generator *g, void *out, int dtype, const T *p, int64_t n)     \
    {                                                                               \
        int64_t i;                                                                  \
        if (!rng_check_buf(g, out, n) || pct_rng_dtype_size(dtype) == 0)           \
            return -1;                                                              \
        if (n > 0 && p == NULL)                                                     \
            return -1;                                                              \
        for (i = 0; i < n; i++)                                                     \
            if (!(p[i] >= (T)0 && p[i] <= (T)1))                                    \
                return -1;                                                          \
        for (i = 0; i < n; i++)                                                     \
            rng_store_i64(out, dtype, i, UNIFORM(g) < p[i] ? 1 : 0);                \
        return 0;                                                                   \
    }
RNG_BERNOULLI_TENSOR(pct_rng_bernoulli_tensor, double, rng_u53)
RNG_BERNOULLI_TENSOR(pct_rng_bernoulli_tensor_f32, float, rng_u24)
#undef RNG_BERNOULLI_TENSOR

int pct_rng_cauchy(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                   double median, double sigma)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || !rng_is_float_dtype(dtype))
        return -1;
    if (!(sigma > 0.0))
        return -1;
    for (i = 0; i < n; i++) {
        double u = rng_u53(g);
        double t = tan((u - 0.5) * 3.141592653589793);
        rng_store_double(out, dtype, i, fma(t, sigma, median));
    }
    return 0;
}

int pct_rng_log_normal(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                       double mean, double std)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || !rng_is_float_dtype(dtype))
        return -1;
    if (!(std > 0.0))
        return -1;
    for (i = 0; i < n; i++)
        rng_store_double(out, dtype, i, exp(rng_normal_double(g, mean, std)));
    return 0;
}

int pct_rng_geometric(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                      double p)
{
    int64_t i;
    if (!rng_check_buf(g, out, n) || pct_rng_dtype_size(dtype) == 0 ||
        dtype == PCT_RNG_BOOL)
        return -1;
    if (!(p > 0.0 && p < 1.0))
        return -1;
    for (i = 0; i < n; i++) {
        double u = rng_u53(g);
        double v = ceil(log(u) / log1p(-p));
        switch (dtype) {
        case PCT_RNG_I64: ((int64_t *)out)[i] = rng_d2i64(v); break;
        case PCT_RNG_I32: ((int32_t *)out)[i] = rng_d2i32(v); break;
        case PCT_RNG_I16:
            ((uint16_t *)out)[i] = (uint16_t)(uint32_t)rng_d2i32(v);
            break;
        case PCT_RNG_I8:
        case PCT_RNG_U8:
            ((uint8_t *)out)[i] = (uint8_t)(uint32_t)rng_d2i32(v);
            break;
        default: rng_store_double(out, dtype, i, v); break;
        }
    }
    return 0;
}

/* ===================================================================== */
/* randperm                                                               */
/* ===================================================================== */

int pct_rng_randperm(pct_cpu_generator *g, int64_t *out, int64_t n)
{
    int64_t i;
    if (!rng_check_buf(g, out, n))
        return -1;
    if (n < (int64_t)(UINT32_MAX / 20u)) {
        for (i = 0; i < n; i++)
            out[i] = i;
        for (i = 0; i < n - 1; i++) {
            int64_t z = (int64_t)((uint64_t)rng_next32(g) % (uint64_t)(n - i));
            int64_t t = out[i];
            out[i] = out[z + i];
            out[z + i] = t;
        }
        return 0;
    }
    for (i = 0; i < n; i++) {
        int64_t z = (int64_t)(rng_next64(g) % (uint64_t)(i + 1));
        out[i] = out[z];
        out[z] = i;
    }
    return 0;
}

/* ===================================================================== */
/* multinomial                                                            */
/* ===================================================================== */

typedef struct {
    double v;
    int64_t i;
} rng_pair;

/* topk comparator (largest first, NaN counts as largest) */
static inline int rng_gt(const rng_pair *a, const rng_pair *b)
{
    int an = (a->v != a->v), bn = (b->v != b->v);
    return (an && !bn) || (a->v > b->v);
}

/* --- faithful re-implementations of the libstdc++ (GCC 13) algorithms used
 *     by torch's topk, so that equal keys come out in the same order. --- */

static void rng_push_heap(rng_pair *a, int64_t hole, int64_t top, rng_pair val)
{
    int64_t parent = (hole - 1) / 2;
    while (hole > top && rng_gt(&a[parent], &val)) {
        a[hole] = a[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    a[hole] = val;
}

static void rng_adjust_heap(rng_pair *a, int64_t hole, int64_t len,
                            rng_pair val)
{
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (rng_gt(&a[child], &a[child - 1]))
            child--;
        a[hole] = a[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        a[hole] = a[child - 1];
        hole = child - 1;
    }
    rng_push_heap(a, hole, top, val);
}

static void rng_make_heap(rng_pair *a, int64_t len)
{
    int64_t parent;
    if (len < 2)
        return;
    parent = (len - 2) / 2;
    for (;;) {
        rng_adjust_heap(a, parent, len, a[parent]);
        if (parent == 0)
            return;
        parent--;
    }
}

static void rng_pop_heap(rng_pair *a, int64_t len, int64_t result)
{
    rng_pair val = a[result];
    a[result] = a[0];
    rng_adjust_heap(a, 0, len, val);
}

static void rng_heap_select(rng_pair *a, int64_t middle, int64_t last)
{
    int64_t i;
    rng_make_heap(a, middle);
    for (i = middle; i < last; i++)
        if (rng_gt(&a[i], &a[0]))
            rng_pop_heap(a, middle, i);
}

static void rng_sort_heap(rng_pair *a, int64_t last)
{
    while (last > 1) {
        --last;
        rng_pop_heap(a, last, last);
    }
}

static void rng_partial_sort(rng_pair *a, int64_t middle, int64_t last)
{
    rng_heap_select(a, middle, last);
    rng_sort_heap(a, middle);
}

static inline void rng_swap(rng_pair *a, int64_t i, int64_t j)
{
    rng_pair t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static void rng_move_median_to_first(rng_pair *x, int64_t result, int64_t a,
                                     int64_t b, int64_t c)
{
    if (rng_gt(&x[a], &x[b])) {
        if (rng_gt(&x[b], &x[c]))
            rng_swap(x, result, b);
        else if (rng_gt(&x[a], &x[c]))
            rng_swap(x, result, c);
        else
            rng_swap(x, result, a);
    } else if (rng_gt(&x[a], &x[c])) {
        rng_swap(x, result, a);
    } else if (rng_gt(&x[b], &x[c])) {
        rng_swap(x, result, c);
    } else {
        rng_swap(x, result, b);
    }
}

static int64_t rng_unguarded_partition(rng_pair *x, int64_t first,
                                       int64_t last, int64_t pivot)
{
    for (;;) {
        while (rng_gt(&x[first], &x[pivot]))
            ++first;
        --last;
        while (rng_gt(&x[pivot], &x[last]))
            --last;
        if (!(first < last))
            return first;
        rng_swap(x, first, last);
        ++first;
    }
}

static int64_t rng_partition_pivot(rng_pair *x, int64_t first, int64_t last)
{
    int64_t mid = first + (last - first) / 2;
    rng_move_median_to_first(x, first, first + 1, mid, last - 1);
    return rng_unguarded_partition(x, first + 1, last, first);
}

static void rng_unguarded_linear_insert(rng_pair *x, int64_t last)
{
    rng_pair val = x[last];
    int64_t next = last - 1;
    while (rng_gt(&val, &x[next])) {
        x[last] = x[next];
        last = next;
        --next;
    }
    x[last] = val;
}

static void rng_insertion_sort(rng_pair *x, int64_t first, int64_t last)
{
    int64_t i;
    if (first == last)
        return;
    for (i = first + 1; i != last; ++i) {
        if (rng_gt(&x[i], &x[first])) {
            rng_pair val = x[i];
            memmove(&x[first + 1], &x[first],
                    (size_t)(i - first) * sizeof(rng_pair));
            x[first] = val;
        } else {
            rng_unguarded_linear_insert(x, i);
        }
    }
}

static int rng_lg(int64_t n)
{
    return rng_ilog2_u64((uint64_t)n);
}

static void rng_introsort_loop(rng_pair *x, int64_t first, int64_t last,
                               int depth)
{
    while (last - first > 16) {
        if (depth == 0) {
            rng_partial_sort(x + first, last - first, last - first);
            return;
        }
        --depth;
        {
            int64_t cut = rng_partition_pivot(x, first, last);
            rng_introsort_loop(x, cut, last, depth);
            last = cut;
        }
    }
}

static void rng_std_sort(rng_pair *x, int64_t first, int64_t last)
{
    int64_t i;
    if (first == last)
        return;
    rng_introsort_loop(x, first, last, rng_lg(last - first) * 2);
    if (last - first > 16) {
        rng_insertion_sort(x, first, first + 16);
        for (i = first + 16; i != last; ++i)
            rng_unguarded_linear_insert(x, i);
    } else {
        rng_insertion_sort(x, first, last);
    }
}

static void rng_nth_element(rng_pair *x, int64_t first, int64_t nth,
                            int64_t last)
{
    int depth;
    if (first == last || nth == last)
        return;
    depth = rng_lg(last - first) * 2;
    while (last - first > 3) {
        if (depth == 0) {
            rng_heap_select(x + first, nth + 1 - first, last - first);
            rng_swap(x, first, nth);
            return;
        }
        --depth;
        {
            int64_t cut = rng_partition_pivot(x, first, last);
            if (cut <= nth)
                first = cut;
            else
                last = cut;
        }
    }
    rng_insertion_sort(x, first, last);
}

/* torch topk(k, largest=True, sorted=True) on one row -> indices */
static void rng_topk_row(rng_pair *q, int64_t len, int64_t k, int64_t *out)
{
    int64_t j;
    if (k * 64 <= len) {
        rng_partial_sort(q, k, len);
    } else {
        rng_nth_element(q, 0, k - 1, len);
        rng_std_sort(q, 0, k - 1);
    }
    for (j = 0; j < k; j++)
        out[j] = q[j].i;
}

static double rng_load_prob(const void *p, int dtype, int64_t i)
{
    switch (dtype) {
    case PCT_RNG_F64: return ((const double *)p)[i];
    case PCT_RNG_F32: return (double)((const float *)p)[i];
    case PCT_RNG_F16: return (double)rng_f16_to_f32(((const uint16_t *)p)[i]);
    default: return (double)rng_bf16_to_f32(((const uint16_t *)p)[i]);
    }
}

/* p / q in the probability dtype; q is the exponential sample in double,
 * first rounded to the dtype as torch's exponential_ kernel does. */
static double rng_div_in_dtype(int dtype, double pv, double qd)
{
    switch (dtype) {
    case PCT_RNG_F64: return pv / qd;
    case PCT_RNG_F32: return (double)((float)pv / (float)qd);
    case PCT_RNG_F16: {
        float qf = rng_f16_to_f32(rng_f32_to_f16((float)qd));
        return (double)rng_f16_to_f32(rng_f32_to_f16((float)pv / qf));
    }
    default: {
        float qf = rng_bf16_to_f32(rng_f32_to_bf16((float)qd));
        return (double)rng_bf16_to_f32(rng_f32_to_bf16((float)pv / qf));
    }
    }
}

/* One row of the with-replacement kernel; cum is scratch of ncat doubles
 * holding values of the accumulation type. */
static void rng_multinomial_repl_row(pct_cpu_generator *g, const void *probs,
                                     int dtype, int64_t row, int64_t ncat,
                                     int64_t nsample, double *cum,
                                     int64_t *out)
{
    int64_t j, s;
    if (dtype == PCT_RNG_F64) {
        double sum = 0.0;
        for (j = 0; j < ncat; j++) {
            sum += ((const double *)probs)[row * ncat + j];
            cum[j] = sum;
        }
        for (j = 0; j < ncat; j++)
            cum[j] = cum[j] / sum;
    } else {
        float sum = 0.0f;
        for (j = 0; j < ncat; j++) {
            sum += (float)rng_load_prob(probs, dtype, row * ncat + j);
            cum[j] = (double)sum;
        }
        for (j = 0; j < ncat; j++)
            cum[j] = (double)((float)cum[j] / sum);
    }
    for (s = 0; s < nsample; s++) {
        double u = rng_u53(g);
        int64_t left = 0, right = ncat;
        cum[ncat - 1] = 1.0;
        while (right - left > 0) {
            int64_t mid = left + (right - left) / 2;
            if (cum[mid] < u)
                left = mid + 1;
            else
                right = mid;
        }
        out[s] = left;
    }
}

int pct_rng_multinomial(pct_cpu_generator *g, int64_t *out, const void *probs,
                        int probs_dtype, int64_t n_dist, int64_t n_categories,
                        int64_t n_sample, int replacement)
{
    int64_t r, j, total;
    if (g == NULL || out == NULL || probs == NULL)
        return -1;
    if (!rng_is_float_dtype(probs_dtype))
        return -1;
    if (n_dist < 1 || n_categories < 1 || n_categories > ((int64_t)1 << 24))
        return -1;
    if (n_sample < 1 || (!replacement && n_sample > n_categories))
        return -1;
    if (n_dist > INT64_MAX / n_categories ||
        (size_t)(n_dist * n_categories) > SIZE_MAX / sizeof(rng_pair))
        return -1;
    total = n_dist * n_categories;

    /* validation (torch checks before sampling on the no-replacement path and
     * row by row on the replacement path; we check everything up front) */
    for (r = 0; r < n_dist; r++) {
        double dsum = 0.0;
        float fsum = 0.0f;
        for (j = 0; j < n_categories; j++) {
            double v = rng_load_prob(probs, probs_dtype, r * n_categories + j);
            if (!(v >= 0.0) || isinf(v))
                return -1;
            dsum += v;
            fsum += (float)v;
        }
        if (probs_dtype == PCT_RNG_F64 ? !(dsum > 0.0) : !(fsum > 0.0f))
            return -1;
    }

    if (replacement && n_sample > 1) {
        double *cum = (double *)malloc((size_t)n_categories * sizeof(double));
        if (cum == NULL)
            return -1;
        for (r = 0; r < n_dist; r++)
            rng_multinomial_repl_row(g, probs, probs_dtype, r, n_categories,
                                     n_sample, cum, out + r * n_sample);
        free(cum);
        return 0;
    }

    {
        rng_pair *q = (rng_pair *)malloc((size_t)total * sizeof(rng_pair));
        if (q == NULL)
            return -1;
        /* q = exponential_(1) over the whole tensor, then q = probs / q */
        for (j = 0; j < total; j++) {
            double e = rng_exponential_sample(g, 1.0);
            if (probs_dtype == PCT_RNG_F32)
                e = (double)(float)e;
            q[j].v = rng_div_in_dtype(probs_dtype,
                                      rng_load_prob(probs, probs_dtype, j), e);
            q[j].i = j % n_categories;
        }
        for (r = 0; r < n_dist; r++) {
            rng_pair *row = q + r * n_categories;
            if (n_sample == 1) {
                int64_t best = 0;
                for (j = 1; j < n_categories; j++) {
                    double bv = row[best].v, v = row[j].v;
                    if (bv != bv)
                        break;
                    if (v != v || v > bv)
                        best = j;
                }
                out[r] = best;
            } else {
                rng_topk_row(row, n_categories, n_sample, out + r * n_sample);
            }
        }
        free(q);
    }
    return 0;
}
