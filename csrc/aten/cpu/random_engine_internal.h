/* random_engine_internal.h: what the files of the CPU random engine share (random_engine.c:
 * the mt19937 generator, its state, uniform_ and normal_; random_int.c: random_ and
 * randperm; random_distributions.c: exponential_, bernoulli_, cauchy_, log_normal_,
 * geometric_; random_multinomial.c). The build-flag rules of random_engine.c hold for all of
 * them. Helpers are static here (RNG_SHARED: static, and no warning where a file does not
 * use one), so each file compiles and inlines them as the single file did (the state refill
 * and the scalar Box-Muller included: as static callees they keep GCC's interprocedural
 * register allocation in the draw loops, worth 12% of randint).
 */
#ifndef PCT_RANDOM_ENGINE_INTERNAL_H
#define PCT_RANDOM_ENGINE_INTERNAL_H
#include "random_engine.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define RNG_SHARED static __attribute__((unused))

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
RNG_SHARED uint16_t rng_f32_to_f16(float f)
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

RNG_SHARED float rng_f16_to_f32(uint16_t h)
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
RNG_SHARED uint16_t rng_f32_to_bf16(float f)
{
    uint32_t u = rng_f2u(f);
    if (f != f)
        return 0x7fc0u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

RNG_SHARED float rng_bf16_to_f32(uint16_t b)
{
    return rng_u2f((uint32_t)b << 16);
}

/* x86 cvtts*2si semantics (out of range / NaN -> "integer indefinite"),
 * i.e. what torch's static_cast<int64_t>(float/double) compiles to. */
RNG_SHARED int64_t rng_d2i64(double d)
{
    if (!(d >= -0x1p63 && d < 0x1p63))
        return INT64_MIN;
    return (int64_t)d;
}

RNG_SHARED int32_t rng_d2i32(double d)
{
    if (!(d > -2147483649.0 && d < 2147483648.0))
        return INT32_MIN;
    return (int32_t)d;
}

RNG_SHARED int rng_is_float_dtype(int dtype)
{
    return dtype == PCT_RNG_F32 || dtype == PCT_RNG_F64 ||
           dtype == PCT_RNG_F16 || dtype == PCT_RNG_BF16;
}

RNG_SHARED int rng_check_buf(const pct_cpu_generator *g, const void *out,
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

RNG_SHARED void rng_mt_regenerate(pct_cpu_generator *g)
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

/* uniform_real_distribution<float>(0,1) / <double>(0,1) */
static inline float rng_u24(pct_cpu_generator *g)
{
    return (float)(rng_next32(g) & 0xffffffu) * 0x1p-24f;
}

static inline double rng_u53(pct_cpu_generator *g)
{
    return (double)(rng_next64(g) & UINT64_C(0x1fffffffffffff)) * 0x1p-53;
}

/* the largest finite value of a floating dtype */
RNG_SHARED double rng_dtype_max(int dtype)
{
    switch (dtype) {
    case PCT_RNG_F64: return DBL_MAX;
    case PCT_RNG_F32: return (double)FLT_MAX;
    case PCT_RNG_F16: return 65504.0;
    case PCT_RNG_BF16: return 3.3895313892515355e+38; /* 0x7f7f */
    default: return 0.0;
    }
}

/* Scalar Box-Muller of at::normal_distribution<double>, with the
 * generator's cached second value. */
RNG_SHARED double rng_normal_double(pct_cpu_generator *g, double mean, double sd)
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

RNG_SHARED int rng_ilog2_u64(uint64_t v)
{
    int k = 0;
    while (v >>= 1)
        ++k;
    return k;
}

static inline double rng_exponential_sample(pct_cpu_generator *g,
                                            double lambd)
{
    double u = rng_u53(g);
    return (-1.0 / lambd) * log1p(-u);
}

#endif
