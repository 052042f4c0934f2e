/*
 * random_int.c - pyctorch CPU random engine: random_ (from/to, from, default)
 * and randperm,
 * (see random_engine.h; the build-flag rules of random_engine.c hold here too).
 */
#include "random_engine_internal.h"

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
