/* unique.c: unique and unique_consecutive, over all elements (sorted (key, index) pairs) or
 * along a dim (rows ordered by libstdc++'s introsort, as torch's std::sort: sort_stl_impl.h).
 */
#include "sort_internal.h"

/* ------------------------------------------------------------------------------------ */
/* unique, unique_consecutive                                                            */

/* unique over all elements: sorted as torch's sort(stable=False) of the flattened input
 * (the first of equal values in that order represents them) unless consecutive; NaN never
 * equals anything (torch's equal_nan=False). */
static int unique_flat(pct_tensor *self, bool consecutive, pct_tensor **out, pct_tensor **inv, pct_tensor **cnt)
{
    int64_t n = self->numel, one = 0;
    pct_tensor *flat = NULL, *o = NULL, *iv = NULL, *ct = NULL;
    sort_kv *kv = NULL;
    if (!(iv = pct_tensor_empty(self->ndim, self->sizes, PCT_INT64, PCT_CPU, -1))) goto fail;
    if (n == 0) {
        if (!(o = pct_tensor_empty(1, &one, self->dtype, PCT_CPU, -1))) goto fail;
        if (!(ct = pct_tensor_empty(1, &one, PCT_INT64, PCT_CPU, -1))) goto fail;
        *out = o;
        *inv = iv;
        *cnt = ct;
        return 0;
    }
    if (!(flat = pct_contiguous(self))) goto fail;
    if (!(kv = malloc(sizeof(sort_kv) * (size_t)n * 2))) {
        pct_error_nomem();
        goto fail;
    }
    const char *p = pct_tensor_data(flat);
    int isz = (int)pct_tensor_itemsize(flat);
    pct_sort_load[self->dtype](kv, p, isz, n);
    if (!consecutive) {
        /* torch sorts the flattened input with sort(stable=False) (radix-sorting integers) */
        void *ts = n >= PCT_PARALLEL_GRAIN ? pct_gil_release() : NULL;
        if (pct_dtype_is_integral(self->dtype, false) && n >= PCT_PARALLEL_GRAIN) pct_sort_stable(kv, kv + n, n, false);
        else pct_sort_unstable_asc(kv, n);
        if (ts) pct_gil_restore(ts);
    }
    /* group starts: kv[j].k becomes the group id, stored in place after counting */
    int64_t *ivp = (int64_t *)pct_tensor_data(iv), groups = 0;
    for (int64_t j = 0; j < n; j++) {
        bool fresh = j == 0 || kv[j].k != kv[j - 1].k || sort_key_is_nan(kv[j].k, self->dtype);
        if (fresh) groups++;
        ivp[kv[j].i] = groups - 1;
    }
    if (!(o = pct_tensor_empty(1, &groups, self->dtype, PCT_CPU, -1))) goto fail;
    if (!(ct = pct_tensor_zeros(1, &groups, PCT_INT64))) goto fail;
    char *op = pct_tensor_data(o);
    int64_t *cp = (int64_t *)pct_tensor_data(ct), g = -1;
    for (int64_t j = 0; j < n; j++) {
        int64_t gid = ivp[kv[j].i];
        if (gid != g) {
            g = gid;
            sort_copy_elem(op + g * isz, p + kv[j].i * isz, isz);
        }
        cp[g]++;
    }
    free(kv);
    PCT_DECREF(flat);
    *out = o;
    *inv = iv;
    *cnt = ct;
    return 0;
fail:
    free(kv);
    PCT_XDECREF(flat);
    PCT_XDECREF(o);
    PCT_XDECREF(iv);
    PCT_XDECREF(ct);
    return -1;
}

/* Rows of unique(dim=) compared as torch does: lexicographically with < and > (a NaN
 * compares neither way), equal when every element is == (so never with a NaN). Floats
 * are compared as doubles, other dtypes through their keys. */
typedef struct udim_ctx {
    const double *d;
    const uint64_t *u;
    int64_t m;
} udim_ctx;

static inline bool udim_less(const udim_ctx *c, int64_t a, int64_t b)
{
    int64_t m = c->m;
    if (c->d) {
        const double *x = c->d + a * m, *y = c->d + b * m;
        for (int64_t i = 0; i < m; i++) {
            if (x[i] < y[i]) return true;
            if (x[i] > y[i]) return false;
        }
    } else {
        const uint64_t *x = c->u + a * m, *y = c->u + b * m;
        for (int64_t i = 0; i < m; i++) {
            if (x[i] < y[i]) return true;
            if (x[i] > y[i]) return false;
        }
    }
    return false;
}

static inline bool udim_equal(const udim_ctx *c, int64_t a, int64_t b)
{
    int64_t m = c->m;
    if (c->d) {
        const double *x = c->d + a * m, *y = c->d + b * m;
        for (int64_t i = 0; i < m; i++)
            if (!(x[i] == y[i])) return false;
    } else {
        const uint64_t *x = c->u + a * m, *y = c->u + b * m;
        for (int64_t i = 0; i < m; i++)
            if (x[i] != y[i]) return false;
    }
    return true;
}

#define UDIM_LESS(x, y) udim_less((const udim_ctx *)ctx, (x), (y))
#define STL_P udim
#define STL_T int64_t
#define STL_LESS UDIM_LESS
#include "sort_stl_impl.h"

static int unique_dim(pct_tensor *self, int dim, bool consecutive, pct_tensor **out, pct_tensor **inv, pct_tensor **cnt)
{
    pct_tensor *cont = NULL, *o = NULL, *iv = NULL, *ct = NULL;
    int64_t *idx = NULL, *rep = NULL, zero = 0;
    void *cmp = NULL;
    int64_t R = self->sizes[dim];
    if (self->numel == 0) {
        int nz = 0;
        for (int d = 0; d < self->ndim; d++) nz += self->sizes[d] == 0;
        if (R == 0) {
            if (nz != 1) {
                pct_error_str(PCT_ERR_RUNTIME,
                                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
                return -1;
            }
            if (!(o = pct_tensor_empty(self->ndim, self->sizes, self->dtype, PCT_CPU, -1))) goto fail;
            if (!(iv = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1))) goto fail;
            if (!(ct = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1))) goto fail;
            *out = o;
            *inv = iv;
            *cnt = ct;
            return 0;
        }
        {
            pct_error_str(PCT_ERR_RUNTIME,
                            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
            return -1;
        }
    }
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= self->sizes[d];
    for (int d = dim + 1; d < self->ndim; d++) inner *= self->sizes[d];
    int64_t m = outer * inner;
    if (!(cont = pct_contiguous(self))) goto fail;
    const char *p = pct_tensor_data(cont);
    int isz = (int)pct_tensor_itemsize(cont);
    bool isf = pct_dtype_is_floating(self->dtype);
    udim_ctx uc = {NULL, NULL, m};
    size_t cells = (size_t)(R * m > 0 ? R * m : 1);
    if (!(cmp = malloc(cells * 8)) || !(idx = malloc(sizeof(int64_t) * (size_t)R)) ||
        !(rep = malloc(sizeof(int64_t) * (size_t)R))) {
        pct_error_nomem();
        goto fail;
    }
    /* row r of the comparison matrix: the elements (o, r, i) in (o, i) order */
    for (int64_t r = 0; r < R; r++) {
        for (int64_t ou = 0; ou < outer; ou++) {
            const char *src = p + ((ou * R + r) * inner) * isz;
            int64_t at = r * m + ou * inner;
            if (isf) {
                for (int64_t i = 0; i < inner; i++) ((double *)cmp)[at + i] = pct_load_as_double(src + i * isz, self->dtype);
            } else {
                pct_sort_keys[self->dtype]((uint64_t *)cmp + at, src, isz, inner);
            }
        }
        idx[r] = r;
    }
    if (isf) uc.d = cmp;
    else uc.u = cmp;
    if (!consecutive) udim_sort(idx, R, &uc);
    if (!(iv = pct_tensor_empty(1, &R, PCT_INT64, PCT_CPU, -1))) goto fail;
    int64_t *ivp = (int64_t *)pct_tensor_data(iv), groups = 1;
    rep[0] = idx[0];
    ivp[idx[0]] = 0;
    for (int64_t j = 1; j < R; j++) {
        if (!udim_equal(&uc, idx[j], rep[groups - 1])) rep[groups++] = idx[j];
        ivp[idx[j]] = groups - 1;
    }
    if (!(ct = pct_tensor_zeros(1, &groups, PCT_INT64))) goto fail;
    int64_t *cp = (int64_t *)pct_tensor_data(ct);
    for (int64_t j = 0; j < R; j++) cp[ivp[j]]++;
    int64_t shape[PCT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[dim] = groups;
    if (!(o = pct_tensor_empty(self->ndim, shape, self->dtype, PCT_CPU, -1))) goto fail;
    char *op = pct_tensor_data(o);
    for (int64_t ou = 0; ou < outer; ou++)
        for (int64_t g = 0; g < groups; g++)
            memcpy(op + ((ou * groups + g) * inner) * isz, p + ((ou * R + rep[g]) * inner) * isz, (size_t)(inner * isz));
    free(cmp);
    free(idx);
    free(rep);
    PCT_DECREF(cont);
    *out = o;
    *inv = iv;
    *cnt = ct;
    return 0;
fail:
    free(cmp);
    free(idx);
    free(rep);
    PCT_XDECREF(cont);
    PCT_XDECREF(o);
    PCT_XDECREF(iv);
    PCT_XDECREF(ct);
    return -1;
}

/* Note [unique_consecutive's result]
 * torch.unique_consecutive is a Python boolean_dispatch that chooses which tensors to return
 * from `return_inverse` / `return_counts` given as keywords, or else from positional
 * arguments 2 and 1 respectively (swapped with respect to the signature), while the
 * computation uses the real arguments. So unique_consecutive(x, True) returns (output,
 * counts) with counts empty (not computed), and unique_consecutive(x, True, False) the
 * same. Its overloads tell the kernel how many flags were positional; tensors returned but
 * not computed are empty, except on the dim path, which always computes all three. */
typedef struct unique_flags {
    bool ret_inv, ret_cnt; /* what is computed */
    bool fmt_inv, fmt_cnt; /* what is returned (empty where not computed) */
} unique_flags;

static pct_object *unique_common(pct_tensor *self, bool consecutive, unique_flags f, pct_int_opt dv)
{
    pct_tensor *o = NULL, *iv = NULL, *ct = NULL;
    const bool ret_inv = f.ret_inv, ret_cnt = f.ret_cnt, fmt_inv = f.fmt_inv, fmt_cnt = f.fmt_cnt;
    bool flat = dv.none || (consecutive && dv.v == 0 && self->ndim == 1);
    int r;
    if (flat) {
        r = unique_flat(self, consecutive, &o, &iv, &ct);
    } else {
        if (self->ndim == 0) {
            pct_error(PCT_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dv.v);
            return NULL;
        }
        int dim = pct_wrap_dim(dv.v, self->ndim);
        if (dim < 0) return NULL;
        r = unique_dim(self, dim, consecutive, &o, &iv, &ct);
    }
    if (r < 0) return NULL;
    if (flat && ((fmt_inv && !ret_inv) || (fmt_cnt && !ret_cnt))) {
        int64_t zero = 0;
        pct_tensor **slots[2] = {&iv, &ct};
        bool blank[2] = {!ret_inv, !ret_cnt};
        for (int k = 0; k < 2; k++) {
            if (!blank[k]) continue;
            PCT_DECREF(*slots[k]);
            *slots[k] = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1);
        }
        if (!iv || !ct) {
            PCT_DECREF(o);
            PCT_XDECREF(iv);
            PCT_XDECREF(ct);
            return NULL;
        }
    }
    pct_object *t;
    if (!fmt_inv && !fmt_cnt) {
        PCT_INCREF(o);
        t = (pct_object *)o;
    } else if (fmt_inv && fmt_cnt) {
        t = pct_tuple_pack3(o, iv, ct);
    } else {
        t = pct_tuple_pack2(o, fmt_inv ? iv : ct);
    }
    PCT_DECREF(o);
    PCT_DECREF(iv);
    PCT_DECREF(ct);
    return t;
}

/* An overload whose flags are what they say (swapped: unique_consecutive's p2 and p3, see above). */
#define UNIQUE_ENTRY(id, consecutive, swapped)                                                                       \
    pct_object *pct_cpu_##id(pct_call *c)                                                                            \
    {                                                                                                                \
        PCT_ARGS(id);                                                                                                \
        const bool inv = arg.return_inverse, cnt = arg.return_counts;                                               \
        return unique_common(arg.input, consecutive, (unique_flags){inv, cnt, swapped ? cnt : inv, swapped ? inv : cnt}, \
                             arg.dim);                                                                               \
    }
UNIQUE_ENTRY(unique, false, false)
UNIQUE_ENTRY(unique_consecutive, true, false)
UNIQUE_ENTRY(unique_consecutive_kw, true, false)
UNIQUE_ENTRY(unique_consecutive_p2, true, true)
UNIQUE_ENTRY(unique_consecutive_p3, true, true)
#undef UNIQUE_ENTRY

/* p1: return_counts None returns (output, counts) when return_inverse, counts empty */
pct_object *pct_cpu_unique_consecutive_p1(pct_call *c)
{
    PCT_ARGS(unique_consecutive_p1);
    const bool inv = arg.return_inverse, cnt = !arg.return_counts.none && arg.return_counts.v;
    return unique_common(arg.input, true, (unique_flags){inv, cnt, false, arg.return_counts.none ? inv : cnt}, arg.dim);
}

