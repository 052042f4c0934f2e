/* histogram.c: bincount and histc (histc's arithmetic in the input dtype, as torch's).
 */
#include "sort_internal.h"

/* ------------------------------------------------------------------------------------ */
/* bincount, histc                                                                       */

pct_object *pct_cpu_bincount(pct_call *c)
{
    PCT_ARGS(bincount);
    pct_tensor *self = arg.input, *w = (arg.weights == NULL) ? NULL : arg.weights, *in = NULL, *wc = NULL, *res = NULL;
    int64_t minlength = arg.minlength;
    if (!pct_dtype_is_integral(self->dtype, false)) {
        sort_not_implemented("bincount_cpu", self->dtype);
        return NULL;
    }
    if (minlength < 0) {
        pct_error_str(PCT_ERR_RUNTIME, "minlength should be >= 0");
        return NULL;
    }
    if (self->ndim == 1 && self->numel == 0) return (pct_object *)pct_tensor_zeros(1, &minlength, PCT_INT64);
    if (!(in = pct_to_dtype(self, PCT_INT64, false))) return NULL;
    pct_tensor *ic = pct_contiguous(in);
    PCT_DECREF(in);
    if (!(in = ic)) return NULL;
    const int64_t *ip = (const int64_t *)pct_tensor_data(in);
    int64_t n = in->numel, mx = -1;
    bool bad = self->ndim != 1;
    for (int64_t j = 0; j < n && !bad; j++) {
        if (ip[j] < 0) bad = true;
        if (ip[j] > mx) mx = ip[j];
    }
    if (bad) {
        pct_error_str(PCT_ERR_RUNTIME, "bincount only supports 1-d non-negative integral inputs.");
        goto fail;
    }
    if (w && (w->ndim != 1 || w->sizes[0] != n)) {
        pct_error_str(PCT_ERR_RUNTIME, "weights should be 1-d and have the same length as input");
        goto fail;
    }
    int64_t nbins = mx + 1 > minlength ? mx + 1 : minlength;
    if (!w) {
        if (!(res = pct_tensor_zeros(1, &nbins, PCT_INT64))) goto fail;
        int64_t *op = (int64_t *)pct_tensor_data(res);
        for (int64_t j = 0; j < n; j++) op[ip[j]]++;
    } else if (w->dtype == PCT_FLOAT32) {
        if (!(wc = pct_contiguous(w)) || !(res = pct_tensor_zeros(1, &nbins, PCT_FLOAT32))) goto fail;
        float *op = (float *)pct_tensor_data(res);
        const float *wp = (const float *)pct_tensor_data(wc);
        for (int64_t j = 0; j < n; j++) op[ip[j]] += wp[j];
    } else {
        pct_tensor *wd = pct_to_dtype(w, PCT_FLOAT64, false);
        if (!wd) goto fail;
        wc = pct_contiguous(wd);
        PCT_DECREF(wd);
        if (!wc || !(res = pct_tensor_zeros(1, &nbins, PCT_FLOAT64))) goto fail;
        double *op = (double *)pct_tensor_data(res);
        const double *wp = (const double *)pct_tensor_data(wc);
        for (int64_t j = 0; j < n; j++) op[ip[j]] += wp[j];
    }
    PCT_DECREF(in);
    PCT_XDECREF(wc);
    return (pct_object *)res;
fail:
    PCT_XDECREF(in);
    PCT_XDECREF(wc);
    PCT_XDECREF(res);
    return NULL;
}

/* torch's histogram arithmetic in the input dtype: c10::Half / BFloat16 round every step */
#define HIST_ROUND_FLOAT16(x) pct_half_to_float(pct_float_to_half(x))
#define HIST_ROUND_BFLOAT16(x) pct_bf16_to_float(pct_float_to_bf16(x))
#define HIST_ROUND_FLOAT32(x) (x)
#define HIST_ROUND_FLOAT64(x) (x)

#define SORT_DEF_HIST(E, N, T, C, S)                                                             \
    static void hist_count_##N(const char *p, int64_t n, double lo, double hi, int64_t bins, double *h) \
    {                                                                                            \
        const C left = HIST_ROUND_##E((C)lo), right = HIST_ROUND_##E((C)hi);                    \
        const C nb = HIST_ROUND_##E((C)bins), width = HIST_ROUND_##E(right - left);              \
        for (int64_t j = 0; j < n; j++) {                                                        \
            C x = PCT_TO_COMPUTE_##E(((const T *)p)[j]);                                        \
            if (!(x >= left && x <= right)) continue;                                            \
            C t = HIST_ROUND_##E(x - left);                                                      \
            t = HIST_ROUND_##E(t * nb);                                                          \
            t = HIST_ROUND_##E(t / width);                                                       \
            int64_t pos = (int64_t)t;                                                            \
            if (pos == bins) pos--;                                                              \
            if (pos >= 0 && pos < bins) h[pos] += 1;                                             \
        }                                                                                        \
    }
PCT_FORALL_FLOAT_DTYPES(SORT_DEF_HIST)

pct_object *pct_cpu_histc(pct_call *c)
{
    PCT_ARGS(histc);
    pct_tensor *self = arg.input, *out = c->out, *cont = NULL, *res = NULL;
    int64_t bins = arg.bins;
    double lo = arg.min.d, hi = arg.max.d;
    double *h = NULL;
    if (bins <= 0) {
        pct_error(PCT_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
        return NULL;
    }
    if (out && out->dtype != self->dtype) {
        pct_error(PCT_ERR_RUNTIME, "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
                     "input %s and hist %s", pct_dtype_cpp_type_name[self->dtype], pct_dtype_cpp_type_name[out->dtype]);
        return NULL;
    }
    bool floating = pct_dtype_is_floating(self->dtype);
    /* torch converts min and max to the input's type, range-checked */
    if (floating && (pct_scalar_check_fits(&arg.min, self->dtype) < 0 || pct_scalar_check_fits(&arg.max, self->dtype) < 0))
        return NULL;
    if (lo == hi && self->numel > 0) {
        /* torch takes the range from the data (aminmax; a NaN makes it NaN) */
        cont = pct_contiguous(self);
        if (!cont) return NULL;
        const char *p = pct_tensor_data(cont);
        int isz = (int)pct_tensor_itemsize(cont);
        bool has_nan = false;
        /* aminmax starts from the dtype's largest finite values, so all -inf gives max = lowest */
        double big = pct_dtype_infos[self->dtype].highest;
        lo = big;
        hi = -big;
        for (int64_t j = 0; j < cont->numel; j++) {
            double v = pct_load_as_double(p + j * isz, self->dtype);
            if (v != v) has_nan = true;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        if (has_nan) /* as torch prints it (its vectorized aminmax yields the negative NaN) */
            lo = hi = (self->numel > 1 && self->dtype != PCT_BFLOAT16) ? -NAN : NAN;
    }
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi)) {
        char msg[128]; /* formatted here, as the error text needs %g */
        snprintf(msg, sizeof msg, "torch.histc: range of [%g, %g] is not finite", lo, hi);
        pct_error_str(PCT_ERR_RUNTIME, msg);
        goto fail;
    }
    if (!(lo < hi)) {
        pct_error_str(PCT_ERR_RUNTIME, "torch.histc: max must be larger than min");
        goto fail;
    }
    if (!floating) {
        /* torch fails making the bin edges (linspace in the input dtype), or then in histogram */
        const pct_dtype_info *info = &pct_dtype_infos[self->dtype];
        if (self->dtype == PCT_BOOL) {
            sort_not_implemented("linspace_cpu", self->dtype);
        } else if (lo < info->lowest || lo > info->highest || hi < info->lowest || hi > info->highest) {
            pct_error(PCT_ERR_RUNTIME, "value cannot be converted to type %s without overflow", info->overflow_name);
        } else {
            sort_not_implemented("histogram_cpu", self->dtype);
        }
        goto fail;
    }
    if (!cont && !(cont = pct_contiguous(self))) goto fail;
    if (!(h = calloc((size_t)bins, sizeof(double)))) {
        pct_error_nomem();
        goto fail;
    }
    {
        void *ts = cont->numel >= PCT_PARALLEL_GRAIN ? pct_gil_release() : NULL;
        const char *p = pct_tensor_data(cont);
        switch (self->dtype) {
#define HIST_CASE(E, N, T, C, S) case PCT_##E: hist_count_##N(p, cont->numel, lo, hi, bins, h); break;
            PCT_FORALL_FLOAT_DTYPES(HIST_CASE)
#undef HIST_CASE
        default: break;
        }
        if (ts) pct_gil_restore(ts);
    }
    if (!(res = pct_tensor_empty(1, &bins, self->dtype, PCT_CPU, -1))) goto fail;
    for (int64_t b = 0; b < bins; b++) pct_store_double(pct_tensor_data(res) + b * pct_tensor_itemsize(res), res->dtype, h[b]);
    free(h);
    PCT_DECREF(cont);
    return pct_sort_finish(res, out);
fail:
    free(h);
    PCT_XDECREF(cont);
    PCT_XDECREF(res);
    return NULL;
}

