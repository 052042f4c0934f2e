/* sort_common.c: the pieces every file of the sort family uses (declared in sort_internal.h):
 * per-dtype loaders of (key, index) pairs (Note [Sort keys] in sort.c), the rows of a tensor
 * along a dim with the parallel row driver, and the result helpers (out=, the input's memory
 * layout, result pairs).
 */
#include "sort_internal.h"

/* ------------------------------------------------------------------------------------ */
/* keys (Note [Sort keys])                                                               */

/* Loads n strided elements of one row as (key, position) pairs. */
#define SORT_DEF_LOAD(E, N, T, C, S)                                                       \
    static void sort_load_##N(sort_kv *kv, const char *p, int64_t st, int64_t n)           \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            kv[j].k = SORT_KEY_##E(*(const T *)(p + j * st));                              \
            kv[j].i = j;                                                                   \
        }                                                                                  \
    }                                                                                      \
    static void sort_loadv_##N(sort_dv *dv, const char *p, int64_t st, int64_t n)          \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            dv[j].v = (double)PCT_TO_COMPUTE_##E(*(const T *)(p + j * st));                \
            dv[j].i = j;                                                                   \
        }                                                                                  \
    }                                                                                      \
    static void sort_keys_##N(uint64_t *out, const char *p, int64_t st, int64_t n)         \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) out[j] = SORT_KEY_##E(*(const T *)(p + j * st));   \
    }
PCT_FORALL_ALL_DTYPES(SORT_DEF_LOAD) /* sort, argsort, unique take uint16/32/64 */

const sort_loadv_fn pct_sort_loadv[PCT_NUM_DTYPES] = {
#define SORT_LOADV_ENTRY(E, N, T, C, S) [PCT_##E] = sort_loadv_##N,
    PCT_FORALL_ALL_DTYPES(SORT_LOADV_ENTRY)
#undef SORT_LOADV_ENTRY
};
const sort_load_fn pct_sort_load[PCT_NUM_DTYPES] = {
#define SORT_LOAD_ENTRY(E, N, T, C, S) [PCT_##E] = sort_load_##N,
    PCT_FORALL_ALL_DTYPES(SORT_LOAD_ENTRY)
#undef SORT_LOAD_ENTRY
};
const sort_keys_fn pct_sort_keys[PCT_NUM_DTYPES] = {
#define SORT_KEYS_ENTRY(E, N, T, C, S) [PCT_##E] = sort_keys_##N,
    PCT_FORALL_ALL_DTYPES(SORT_KEYS_ENTRY)
#undef SORT_KEYS_ENTRY
};

/* ------------------------------------------------------------------------------------ */
/* rows along a dim, and the parallel row driver                                         */

void pct_sort_rows_init(sort_rows *rp, const pct_tensor *t, int dim)
{
    rp->base = pct_tensor_data(t);
    rp->itemsize = (int)pct_tensor_itemsize(t);
    rp->nother = 0;
    rp->inner = 1;
    rp->nrows = 1;
    if (t->ndim == 0) {
        rp->n = 1;
        rp->st = rp->itemsize;
        return;
    }
    rp->n = t->sizes[dim];
    rp->st = t->strides[dim] * rp->itemsize;
    for (int d = 0; d < t->ndim; d++) {
        if (d == dim) continue;
        rp->osz[rp->nother] = t->sizes[d];
        rp->ost[rp->nother] = t->strides[d] * rp->itemsize;
        rp->nother++;
        rp->nrows *= t->sizes[d];
        if (d > dim) rp->inner *= t->sizes[d];
    }
}

/* Runs fn(ctx, r, scratch) for every row r; with the GIL released and rows split across
 * threads when `work` (about the number of element operations) is large. Each thread has
 * its own scratch buffer of scratch_bytes. -1 with MemoryError. */
int pct_sort_run_rows(int64_t nrows, double work, size_t scratch_bytes, sort_row_fn fn, void *ctx)
{
    if (nrows <= 0) return 0;
    bool big = work >= (double)PCT_PARALLEL_GRAIN;
    int failed = 0;
    void *ts = big ? pct_gil_release() : NULL;
#ifdef _OPENMP
#pragma omp parallel if (big && nrows > 1)
#endif
    {
        void *scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
        bool ok = !scratch_bytes || scratch;
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t r = 0; r < nrows; r++)
            if (ok) fn(ctx, r, scratch);
        free(scratch);
    }
    if (ts) pct_gil_restore(ts);
    if (failed) {
        pct_error_nomem();
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* results and out=                                                                      */


/* The result of a one-output op: res itself, or res copied into out (stolen res). */
pct_object *pct_sort_finish(pct_tensor *res, pct_tensor *out)
{
    if (!res) return NULL;
    if (!out) return (pct_object *)res;
    if (pct_out_resize(out, res->ndim, res->sizes) < 0 || pct_copy_(out, res) < 0) {
        PCT_DECREF(res);
        return NULL;
    }
    PCT_DECREF(res);
    PCT_INCREF(out);
    return (pct_object *)out;
}

/* The result of a two-output op, (a, b) or the out= pair they were copied into (steals a and b). */
pct_object *pct_sort_finish_pair(pct_tensor *a, pct_tensor *b, pct_tensor *const *outs)
{
    pct_tensor *res[2] = {a, b};
    if (!a || !b || !outs[0]) return pct_result_tuple(2, res);
    for (int i = 0; i < 2; i++) {
        if (pct_out_resize(outs[i], res[i]->ndim, res[i]->sizes) < 0 || pct_copy_(outs[i], res[i]) < 0) {
            PCT_DECREF(a);
            PCT_DECREF(b);
            return NULL;
        }
    }
    PCT_DECREF(a);
    PCT_DECREF(b);
    PCT_INCREF(outs[0]);
    PCT_INCREF(outs[1]);
    return pct_result_tuple(2, outs);
}

/* Note [Complex selections] (sort_internal.h) */
pct_object *pct_sort_complex_scalar_pair(pct_tensor *self, const char *kernel, pct_tensor *const *outs)
{
    if (self->ndim > 0) {
        sort_not_implemented(kernel, self->dtype);
        return NULL;
    }
    pct_tensor *v = pct_to_dtype(self, self->dtype, true), *i = v ? pct_tensor_zeros(0, NULL, PCT_INT64) : NULL;
    if (!i) {
        PCT_XDECREF(v);
        return NULL;
    }
    return pct_sort_finish_pair(v, i, outs);
}

/* sort, argsort and msort results keep the input's memory layout, as torch's (its dense
 * strides, or for a non-dense input infer_dense_strides: dims ordered by stride, smaller
 * size first on ties, stride-0 dims left in place). Results are computed contiguous and
 * copied into that layout when it differs; res is stolen. */
pct_tensor *pct_sort_relayout(pct_tensor *res, const pct_tensor *like)
{
    int n = like->ndim;
    /* an empty `like` counts as contiguous whatever its strides, and torch keeps them */
    if (!res || n < 2 || (like->numel > 0 && pct_tensor_is_contiguous(like))) return res;
    int64_t st[PCT_MAX_DIMS];
    pct_preserved_strides(like, st);
    if (memcmp(st, res->strides, sizeof(int64_t) * (size_t)n) == 0) return res;
    pct_tensor *r = pct_tensor_empty(n, like->sizes, res->dtype, PCT_CPU, -1);
    if (!r || pct_tensor_set_shape(r, n, like->sizes, st) < 0 || pct_copy_(r, res) < 0) {
        PCT_XDECREF(r);
        PCT_DECREF(res);
        return NULL;
    }
    atomic_store(&r->version->value, 0);
    PCT_DECREF(res);
    return r;
}

/* Output shape of a reduction over dim (keepdim keeps it as size 1). */
int pct_sort_reduced_shape(const pct_tensor *t, int dim, bool keepdim, int64_t *shape)
{
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d == dim) {
            if (keepdim) shape[n++] = 1;
        } else {
            shape[n++] = t->sizes[d];
        }
    }
    return n;
}

/* IndexError for a reduction over an empty dim, as torch's zero_numel_check_dims. */
int pct_sort_check_nonempty_dim(const pct_tensor *t, int dim, const char *name)
{
    if (t->ndim > 0 && t->sizes[dim] == 0) {
        pct_error(PCT_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, dim);
        return -1;
    }
    return 0;
}

