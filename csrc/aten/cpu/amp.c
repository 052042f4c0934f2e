/* amp.c: the kernels of gradient scaling (ops_prof.def), torch's
 * _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_.
 * Unscaling multiplies each gradient by inv_scale in its own dtype's compute type (float
 * for float16/bfloat16/float32, double for float64) and notes any inf/NaN it reads, in
 * one pass; inv_scale == 1 (GradScaler's inf check for optimizers that unscale
 * themselves) only checks. */
#include "../op.h"
#include "../error.h"
#include <math.h>

#define AMP_GRAIN 32768

/* One contiguous run of n elements; returns whether a non-finite value was seen. */
#define AMP_UNSCALE(E, N, T, C, S)                                                              \
    static bool unscale_##N(void *data, int64_t n, double inv_d)                                 \
    {                                                                                            \
        T *x = data;                                                                             \
        const C inv = (C)inv_d;                                                                  \
        const bool scale = inv_d != 1.0;                                                         \
        int bad = 0;                                                                             \
        _Pragma("omp parallel for reduction(|: bad) if (n > AMP_GRAIN)")                         \
        for (int64_t i = 0; i < n; i++) {                                                        \
            C v = PCT_TO_COMPUTE_##E(x[i]);                                                      \
            bad |= !isfinite(v);                                                                 \
            if (scale) x[i] = PCT_FROM_COMPUTE_##E(v * inv);                                     \
        }                                                                                        \
        return bad != 0;                                                                         \
    }
PCT_FORALL_FLOAT_DTYPES(AMP_UNSCALE)

typedef bool (*unscale_fn)(void *, int64_t, double);
static const unscale_fn unscale_table[PCT_NUM_DTYPES] = {
#define AMP_ENTRY(E, N, T, C, S) [PCT_##E] = unscale_##N,
    PCT_FORALL_FLOAT_DTYPES(AMP_ENTRY)
};

/* A non-contiguous gradient (rare): element by element through its strides. */
static bool unscale_strided(pct_tensor *t, double inv)
{
    int64_t idx[PCT_MAX_DIMS] = {0};
    const int64_t isz = pct_tensor_itemsize(t);
    char *base = pct_tensor_data(t);
    bool bad = false;
    for (int64_t k = 0; k < t->numel; k++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        char *p = base + off * isz;
        double v = pct_load_as_double(p, t->dtype);
        if (!isfinite(v)) bad = true;
        if (inv != 1.0) {
            /* the product in the compute type, as the contiguous loops do */
            if (t->dtype == PCT_FLOAT64) pct_store_double(p, t->dtype, v * inv);
            else pct_store_double(p, t->dtype, (double)((float)v * (float)inv));
        }
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->sizes[d]) break;
            idx[d] = 0;
        }
    }
    return bad;
}

static int check_scalar_float(const pct_tensor *t, const char *what)
{
    if (t->numel != 1) {
        pct_error(PCT_ERR_RUNTIME, "%s must be a 1-element tensor.", what);
        return -1;
    }
    if (t->dtype != PCT_FLOAT32) {
        pct_error(PCT_ERR_RUNTIME, "%s must be a float tensor.", what);
        return -1;
    }
    return 0;
}

pct_object *pct_cpu_amp_non_finite_check_and_unscale_(pct_call *c)
{
    PCT_ARGS(amp_foreach_non_finite_check_and_unscale_);
    pct_tensor *const *items = arg.self.items;
    pct_tensor *found = arg.found_inf, *inv = arg.inv_scale;
    if (check_scalar_float(inv, "inv_scale") < 0 || check_scalar_float(found, "found_inf") < 0) return NULL;
    const int32_t n = arg.self.n;
    for (int32_t i = 0; i < n; i++) {
        pct_tensor *t = items[i];
        if (t->device_type != PCT_CPU) {
            pct_error_str(PCT_ERR_RUNTIME, "_amp_foreach_non_finite_check_and_unscale_: expected CPU tensors");
            return NULL;
        }
        if (!unscale_table[t->dtype]) {
            pct_error(PCT_ERR_RUNTIME, "\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented for '%s'",
                         pct_dtype_cpp_name[t->dtype]);
            return NULL;
        }
    }
    const double inv_d = (double)*(const float *)pct_tensor_data(inv);
    bool bad = false;
    for (ptrdiff_t i = 0; i < n; i++) {
        pct_tensor *t = (pct_tensor *)items[i];
        if (t->numel == 0) continue;
        bool b;
        if (pct_tensor_is_contiguous(t)) {
            PCT_NOGIL_BEGIN
            b = unscale_table[t->dtype](pct_tensor_data(t), t->numel, inv_d);
            PCT_NOGIL_END
        } else {
            b = unscale_strided(t, inv_d);
        }
        bad |= b;
        if (inv_d != 1.0) pct_tensor_bump_version(t);
    }
    if (bad) {
        *(float *)pct_tensor_data(found) = 1.0f;
        pct_tensor_bump_version(found);
    }
    return pct_none();
}

pct_object *pct_cpu_amp_update_scale_(pct_call *c)
{
    PCT_ARGS(amp_update_scale_);
    pct_tensor *scale = arg.self, *tracker = arg.growth_tracker, *found = arg.found_inf;
    const double growth = arg.scale_growth_factor, backoff = arg.scale_backoff_factor;
    const int64_t interval = arg.growth_interval;
    if (tracker->numel != 1 || tracker->dtype != PCT_INT32) {
        pct_error_str(PCT_ERR_RUNTIME, "growth_tracker must be a 1-element int tensor.");
        return NULL;
    }
    if (check_scalar_float(scale, "current_scale") < 0 || check_scalar_float(found, "found_inf") < 0) return NULL;
    float *s = (float *)pct_tensor_data(scale);
    int32_t *g = (int32_t *)pct_tensor_data(tracker);
    if (*(const float *)pct_tensor_data(found) != 0.0f) {
        *s = (float)(*s * backoff);
        *g = 0;
    } else {
        int64_t ok = (int64_t)*g + 1;
        if (ok == interval) {
            float grown = (float)(*s * growth);
            if (isfinite(grown)) *s = grown;
            *g = 0;
        } else {
            *g = (int32_t)ok;
        }
    }
    pct_tensor_bump_version(tracker);
    return PCT_NEWREF((pct_object *)scale);
}
