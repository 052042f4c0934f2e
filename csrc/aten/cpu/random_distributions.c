/*
 * random_distributions.c - pyctorch CPU random engine: exponential_, bernoulli_ (scalar and
 * tensor probabilities), cauchy_, log_normal_ and geometric_,
 * (see random_engine.h; the build-flag rules of random_engine.c hold here too).
 */
#include "random_engine_internal.h"

/* ===================================================================== */
/* exponential_, bernoulli_, cauchy_, log_normal_, geometric_             */
/* ===================================================================== */

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
