/* searchsorted.c: searchsorted and bucketize: binary searches of sorted boundaries (with an
 * optional sorter), per dtype.
 */
#include "sort_internal.h"

/* ------------------------------------------------------------------------------------ */
/* searchsorted, bucketize                                                               */

/* torch's cus_lower_bound / cus_upper_bound in the common dtype (the negated comparisons
 * send NaN boundaries to the right). */
#define SORT_DEF_SEARCH(E, N, T, C, S)                                                           \
    static void search_##N(const char *bd, int64_t len, const int64_t *sorter, const char *vals, \
                           int64_t nvals, int64_t inner, bool bd_rows, bool right, bool i32, char *out) \
    {                                                                                            \
        for (int64_t e = 0; e < nvals; e++) {                                                    \
            int64_t row = bd_rows ? e / inner : 0;                                               \
            const T *b = (const T *)bd + row * len;                                              \
            const int64_t *so = sorter ? sorter + row * len : NULL;                              \
            C v = PCT_TO_COMPUTE_##E(((const T *)vals)[e]);                                      \
            int64_t lo = 0, hi = len;                                                            \
            while (lo < hi) {                                                                    \
                int64_t mid = lo + ((hi - lo) >> 1);                                             \
                C mv = PCT_TO_COMPUTE_##E(so ? b[so[mid]] : b[mid]);                             \
                if (right ? !(mv > v) : !(mv >= v)) lo = mid + 1;                                \
                else hi = mid;                                                                   \
            }                                                                                    \
            if (i32) ((int32_t *)out)[e] = (int32_t)lo;                                          \
            else ((int64_t *)out)[e] = lo;                                                       \
        }                                                                                        \
    }
PCT_FORALL_DTYPES(SORT_DEF_SEARCH)

static pct_object *search_impl(pct_tensor *bd, pct_tensor *in, bool out_int32, bool right, pct_tensor *sorter,
                             pct_tensor *out)
{
    pct_tensor *bc = NULL, *ic = NULL, *sc = NULL, *res = NULL;
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (bd->ndim == 0) {
        pct_error_str(PCT_ERR_RUNTIME,
                        "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
        return NULL;
    }
    int64_t len = bd->sizes[bd->ndim - 1];
    if (sorter) {
        if (sorter->ndim != bd->ndim || memcmp(sorter->sizes, bd->sizes, sizeof(int64_t) * (size_t)bd->ndim) != 0) {
            /* (torch prints no space before "and") */
            pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): boundary and sorter must have the same size, but got "
                         "boundary tensor %sand got sorter tensor %s", pct_shape_str(b1, sizeof b1, bd->ndim, bd->sizes),
                         pct_shape_str(b2, sizeof b2, sorter->ndim, sorter->sizes));
            return NULL;
        }
        if (sorter->dtype != PCT_INT64) {
            pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                         pct_dtype_cpp_name[sorter->dtype]);
            return NULL;
        }
        if (!(sc = pct_contiguous(sorter))) return NULL;
        const int64_t *sp = (const int64_t *)pct_tensor_data(sc);
        for (int64_t j = 0; j < sc->numel; j++) {
            if (sp[j] < 0 || sp[j] >= len) {
                pct_error_str(PCT_ERR_RUNTIME, "torch.searchsorted(): sorter index out of range");
                goto fail;
            }
        }
    }
    if (!(in->ndim > 0 || (in->numel == 1 && bd->ndim == 1))) {
        pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                     "dimension is 1, but we got boundaries tensor dim(%d) and input value's dim(%d) numel(%lld)",
                     bd->ndim, in->ndim, (long long)in->numel);
        goto fail;
    }
    if (bd->ndim > 1) {
        bool ok = bd->ndim == in->ndim;
        for (int d = 0; ok && d < bd->ndim - 1; d++) ok = bd->sizes[d] == in->sizes[d];
        if (!ok) {
            pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                         "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor %s "
                         "and input value tensor %s", pct_shape_str(b1, sizeof b1, bd->ndim, bd->sizes),
                         pct_shape_str(b2, sizeof b2, in->ndim, in->sizes));
            goto fail;
        }
    }
    int odt = out_int32 ? PCT_INT32 : PCT_INT64;
    if (out && out->dtype != odt) {
        pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                     "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype %s and "
                     "out_int32 flag is %s", pct_dtype_cpp_name[out->dtype], out_int32 ? "True" : "False");
        goto fail;
    }
    pct_tensor *pair[2] = {bd, in};
    int cd = pct_result_type_of(2, pair);
    if (cd < 0) goto fail;
    if (cd == PCT_BOOL) {
        sort_not_implemented("searchsorted_out_cpu", cd);
        goto fail;
    }
    pct_tensor *t;
    if (!(t = pct_to_dtype(bd, cd, false))) goto fail;
    bc = pct_contiguous(t);
    PCT_DECREF(t);
    if (!bc || !(t = pct_to_dtype(in, cd, false))) goto fail;
    ic = pct_contiguous(t);
    PCT_DECREF(t);
    if (!ic || !(res = pct_tensor_empty(in->ndim, in->sizes, odt, PCT_CPU, -1))) goto fail;
    if (res->numel > 0) {
        int64_t inner = in->ndim ? in->sizes[in->ndim - 1] : 1;
        const char *bp = pct_tensor_data(bc), *vp = pct_tensor_data(ic);
        const int64_t *sp = sc ? (const int64_t *)pct_tensor_data(sc) : NULL;
        char *op = pct_tensor_data(res);
        bool rows = bd->ndim > 1;
        void *ts = res->numel >= PCT_PARALLEL_GRAIN ? pct_gil_release() : NULL;
        switch (cd) {
#define SEARCH_CASE(E, N, T, C, S) \
        case PCT_##E: search_##N(bp, len, sp, vp, res->numel, inner, rows, right, out_int32, op); break;
            PCT_FORALL_DTYPES(SEARCH_CASE)
#undef SEARCH_CASE
        default: break;
        }
        if (ts) pct_gil_restore(ts);
    }
    PCT_DECREF(bc);
    PCT_DECREF(ic);
    PCT_XDECREF(sc);
    return pct_sort_finish(res, out);
fail:
    PCT_XDECREF(bc);
    PCT_XDECREF(ic);
    PCT_XDECREF(sc);
    PCT_XDECREF(res);
    return NULL;
}

pct_object *pct_cpu_searchsorted(pct_call *c)
{
    PCT_ARGS(searchsorted);
    bool right = arg.right;
    const char *s = arg.side;
    if (s) {
        if (strcmp(s, "left") != 0 && strcmp(s, "right") != 0) {
            pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): side can only be 'left' or 'right' but got %s", s);
            return NULL;
        }
        if (right && strcmp(s, "right") != 0) {
            pct_error(PCT_ERR_RUNTIME, "torch.searchsorted(): side and right can't be set to opposites, got side of %s "
                         "while right was True", s);
            return NULL;
        }
        right = strcmp(s, "right") == 0;
    }
    return search_impl(arg.sorted_sequence, arg.input, arg.out_int32, right, (arg.sorter == NULL) ? NULL : arg.sorter, c->out);
}

pct_object *pct_cpu_bucketize(pct_call *c)
{
    PCT_ARGS(bucketize);
    pct_tensor *bd = arg.boundaries;
    if (bd->ndim != 1) {
        pct_error(PCT_ERR_RUNTIME, "boundaries tensor must be 1 dimension, but got dim(%d)", bd->ndim);
        return NULL;
    }
    return search_impl(bd, arg.input, arg.out_int32, arg.right, NULL, c->out);
}
