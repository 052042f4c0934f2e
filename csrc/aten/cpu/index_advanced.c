/* index_advanced.c: advanced indexing (Note [Advanced indexing]): x[indices] (pct_cpu_index_get),
 * x[indices] = values and index_put_ (pct_cpu_index_put_), masks expanded to their nonzero
 * coordinates and every index turned into one element offset.
 */
#include "index_internal.h"
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------
 * Advanced indexing: x[indices], x[indices] = values
 * ------------------------------------------------------------------------------------- */

/* Note [Advanced indexing]: masks become the index tensors of their nonzero coordinates, and
 * all index tensors broadcast to one shape B. If the indexed dims are adjacent the B dims
 * replace them in the result; otherwise they come first (NumPy's rule). Each position of B
 * gets one element offset L = sum_k wrap(idx_k) * stride(dim_k), checked as it is made; the
 * source is then read (or written) through a view of the result's shape whose B dims have
 * stride 0, plus L. */
typedef struct adv_plan {
    int n;                                  /* index tensors after mask expansion */
    int dims[PCT_MAX_DIMS];                 /* the dim each one indexes */
    pct_tensor *idx[PCT_MAX_DIMS];          /* owned */
    int bnd;
    int64_t bshape[PCT_MAX_DIMS];
    int rnd;
    int64_t rshape[PCT_MAX_DIMS];
    int64_t rstride[PCT_MAX_DIMS];          /* self's strides over the result (0 on B dims) */
    int64_t lstride[PCT_MAX_DIMS];          /* L's strides over the result (0 off B dims) */
    pct_tensor *L;                          /* owned, int64 of shape B */
    int bpos;                               /* where the B dims start in the result */
} adv_plan;

static void adv_release(adv_plan *a)
{
    for (int i = 0; i < a->n; i++) PCT_CLEAR(a->idx[i]);
    PCT_CLEAR(a->L);
}

/* Checks a mask covering dims [p, p+k) of self; -1 with IndexError. */
static int check_mask(pct_tensor *self, pct_tensor *mask, int p)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (p + mask->ndim > self->ndim) {
        pct_error(PCT_ERR_INDEX, "too many indices for tensor of dimension %d (got %d)", self->ndim, p + mask->ndim);
        return -1;
    }
    for (int j = 0; j < mask->ndim; j++) {
        if (mask->sizes[j] != self->sizes[p + j]) {
            pct_error(PCT_ERR_INDEX, "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at index %d",
                         SHAPE(b1, mask->ndim, mask->sizes), j, SHAPE(b2, self->ndim, self->sizes), p + j);
            return -1;
        }
    }
    return 0;
}

static int adv_prepare(adv_plan *a, pct_tensor *self, int nindices, pct_tensor **indices)
{
    char b1[PCT_SHAPE_BUF];
    a->n = 0;
    a->L = NULL;
    if (nindices > self->ndim) {
        pct_error(PCT_ERR_INDEX, "too many indices for tensor of dimension %d (got %d)", self->ndim, nindices);
        return -1;
    }
    for (int p = 0; p < nindices; p++) {
        pct_tensor *ix = indices[p];
        if (!ix) continue;
        int dt = ix->dtype;
        if (dt == PCT_BOOL || dt == PCT_UINT8) {
            if (dt == PCT_UINT8 && pct_ix_warn_uint8_index() < 0) return -1;
            pct_tensor *nz;
            int k;
            if (ix->ndim == 0) {
                /* a scalar mask indexes a size-1 dim made for it by the caller */
                if (self->sizes[p] != 1) {
                    pct_error(PCT_ERR_INDEX, "The shape of the mask [] at index 0 does not match the shape of the indexed tensor %s at index %d",
                                 SHAPE(b1, self->ndim, self->sizes), p);
                    return -1;
                }
                nz = pct_ix_nonzero(ix, true, true);
                k = 1;
            } else {
                if (check_mask(self, ix, p) < 0) return -1;
                nz = pct_ix_nonzero(ix, true, false);
                k = ix->ndim;
            }
            if (!nz) return -1;
            int rc = pct_ix_rows(nz, &a->idx[a->n]); /* nz is (k, count) with k <= the dims left to index */
            PCT_DECREF(nz);
            if (rc < 0) return -1;
            for (int j = 0; j < k; j++) {
                a->dims[a->n] = p + j;
                a->n++;
            }
            p += k - 1;
        } else if (is_index_dtype(dt)) {
            a->dims[a->n] = p;
            a->idx[a->n] = ix;
            PCT_INCREF(ix);
            a->n++;
        } else {
            pct_error_str(PCT_ERR_INDEX, "tensors used as indices must be long, int, byte or bool tensors");
            return -1;
        }
    }
    /* broadcast the index tensors */
    a->bnd = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t prev[PCT_MAX_DIMS];
        memcpy(prev, a->bshape, sizeof(int64_t) * (size_t)a->bnd); /* the output may not alias an input */
        if (pct_broadcast_shapes(a->bnd, prev, a->idx[i]->ndim, a->idx[i]->sizes, &a->bnd, a->bshape) < 0) {
            pct_error_clear();
            /* every shape, each up to PCT_SHAPE_BUF long */
            size_t cap = 96 + (size_t)a->n * (PCT_SHAPE_BUF + 2), used;
            char *msg = malloc(cap);
            if (!msg) { pct_error_nomem(); return -1; }
            used = (size_t)snprintf(msg, cap, "shape mismatch: indexing tensors could not be broadcast together with shapes ");
            for (int j = 0; j < a->n && used < cap; j++)
                used += (size_t)snprintf(msg + used, cap - used, "%s%s", j ? ", " : "", SHAPE(b1, a->idx[j]->ndim, a->idx[j]->sizes));
            pct_error_str(PCT_ERR_INDEX, msg);
            free(msg);
            return -1;
        }
    }
    int64_t bnumel = 1;
    for (int b = 0; b < a->bnd; b++) bnumel *= a->bshape[b];
    for (int i = 0; i < a->n; i++) {
        if (self->sizes[a->dims[i]] == 0 && bnumel > 0) {
            pct_error_str(PCT_ERR_INDEX, "index is out of bounds for dimension with size 0");
            return -1;
        }
    }
    /* the result's shape */
    bool indexed[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < a->n; i++) indexed[a->dims[i]] = true;
    bool adjacent = a->n == 0 || a->dims[a->n - 1] - a->dims[0] == a->n - 1;
    int r = 0, bpos;
    if (self->ndim - a->n + a->bnd > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_INDEX, "pyctorch supports at most %d dimensions", PCT_MAX_DIMS);
        return -1;
    }
    int first = a->n ? a->dims[0] : 0;
    if (adjacent) {
        for (int d = 0; d < first; d++, r++) { a->rshape[r] = self->sizes[d]; a->rstride[r] = self->strides[d]; }
    }
    bpos = r;
    for (int b = 0; b < a->bnd; b++, r++) { a->rshape[r] = a->bshape[b]; a->rstride[r] = 0; }
    for (int d = adjacent ? first : 0; d < self->ndim; d++) {
        if (indexed[d]) continue;
        a->rshape[r] = self->sizes[d];
        a->rstride[r] = self->strides[d];
        r++;
    }
    a->rnd = r;
    a->bpos = bpos;
    return 0;
}

/* The element offsets L, each index checked (torch checks them last, in its kernel). */
static int adv_offsets(adv_plan *a, pct_tensor *self)
{
    int bpos = a->bpos, r = a->rnd;
    if (!(a->L = pct_tensor_empty(a->bnd, a->bshape, PCT_INT64, self->device_type, self->device_index))) return -1;
    for (int d = 0; d < r; d++) a->lstride[d] = 0;
    for (int b = 0; b < a->bnd; b++) a->lstride[bpos + b] = a->L->strides[b];
    int64_t rnumel = 1;
    for (int d = 0; d < r; d++) rnumel *= a->rshape[d];
    /* an empty result reads nothing: torch checks no index then (its check is in the kernel) */
    for (int i = 0; i < a->n && rnumel > 0; i++) {
        int64_t size = self->sizes[a->dims[i]];
        off_ctx c = {.lo = -size, .hi = size, .mul = self->strides[a->dims[i]], .accumulate = i > 0};
        atomic_init(&c.err, 0);
        if (pct_ix_off_run(a->L, a->idx[i], &c) < 0) return -1;
        if (atomic_load(&c.err)) {
            pct_error(PCT_ERR_INDEX, "index %lld is out of bounds for dimension %d with size %lld", (long long)c.bad, i,
                         (long long)size);
            return -1;
        }
    }
    if (a->n == 0) {
        /* no index at all: L is a single 0 (filled through the backend: L may live on a device) */
        const pct_scalar zero = {.kind = PCT_SCALAR_INT};
        if (pct_fill_scalar(a->L, &zero) < 0) return -1;
    }
    return 0;
}

pct_object *pct_cpu_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
{
    adv_plan a;
    pct_tensor *r = NULL;
    /* x[mask] with a mask of x's own shape: one compaction pass */
    if (nindices >= 1 && indices[0] && indices[0]->ndim == self->ndim && self->ndim > 0 &&
        (indices[0]->dtype == PCT_BOOL || indices[0]->dtype == PCT_UINT8)) {
        bool only = true;
        for (int p = 1; p < nindices; p++) only &= indices[p] == NULL;
        if (only) {
            if (check_mask(self, indices[0], 0) < 0) return NULL;
            if (indices[0]->dtype == PCT_UINT8 && pct_ix_warn_uint8_index() < 0) return NULL;
            return (pct_object *)pct_ix_compact(self, indices[0]);
        }
    }
    if (adv_prepare(&a, self, nindices, indices) < 0 || adv_offsets(&a, self) < 0) goto fail;
    PCT_TRY(r = pct_tensor_empty(a.rnd, a.rshape, self->dtype, self->device_type, self->device_index));
    {
        ix_ctx c = {.op = IX_COPY, .n = 1, .src_sj = 1};
        PCT_TRY_INT(pct_ix_run(&c, a.rnd, a.rshape, r, r->strides, self, a.rstride, a.L, a.lstride, NULL, NULL, false));
    }
    adv_release(&a);
    return (pct_object *)r;
fail:
    adv_release(&a);
    PCT_XDECREF(r);
    return NULL;
}

/* x[mask] = v with a one-element v and a single bool/uint8 index: torch fills through
 * masked_fill_, converting v to x's dtype (no dtype check). Returns 1 when it applied. */
static int try_masked_fill_put(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values)
{
    int which = -1, count = 0;
    for (int p = 0; p < nindices; p++) {
        if (!indices[p]) continue;
        count++;
        if (indices[p]->dtype == PCT_BOOL || indices[p]->dtype == PCT_UINT8) which = p;
    }
    if (count != 1 || which < 0 || values->numel != 1 || nindices > self->ndim) return 0;
    pct_tensor *mask = indices[which];
    char b1[PCT_SHAPE_BUF];
    if (mask->dtype == PCT_UINT8) {
        /* torch takes this path only when the mask's sizes match the dims it indexes, and masked_fill_ refuses a
         * uint8 mask; otherwise its deprecated uint8 indexing goes on (and fails on the mismatch below) */
        bool fits = which + mask->ndim <= self->ndim;
        for (int j = 0; fits && j < mask->ndim; j++) fits = mask->sizes[j] == self->sizes[which + j];
        if (fits) {
            pct_error_str(PCT_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char");
            return -1;
        }
        if (pct_ix_warn_uint8_index() < 0) return -1;
    }
    int64_t st[PCT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) st[d] = 0;
    if (mask->ndim == 0) {
        if (self->sizes[which] != 1) {
            pct_error(PCT_ERR_INDEX, "The shape of the mask [] at index 0 does not match the shape of the indexed tensor %s at index %d",
                         SHAPE(b1, self->ndim, self->sizes), which);
            return -1;
        }
    } else {
        if (check_mask(self, mask, which) < 0) return -1;
        for (int j = 0; j < mask->ndim; j++) st[which + j] = mask->strides[j];
    }
    pct_tensor *mv = pct_tensor_view_of(mask, self->ndim, self->sizes, st, mask->offset);
    if (!mv) return -1;
    pct_scalar s;
    pct_tensor_item_scalar(values, &s);
    int rc = pct_ix_masked_fill_run(self, mv, &s);
    PCT_DECREF(mv);
    return rc < 0 ? -1 : 1;
}

static int index_put_impl(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate, bool setitem)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    adv_plan a = {0};
    pct_tensor *vals = NULL;
    int rc = -1;
    if (pct_ix_check_written(self, "index_put_") < 0) return -1;
    if (!accumulate) {
        int m = try_masked_fill_put(self, nindices, indices, values);
        if (m != 0) return m < 0 ? -1 : 0;
    }
    PCT_TRY_INT(adv_prepare(&a, self, nindices, indices));
    if (values->dtype != self->dtype)
        PCT_FAIL(PCT_ERR_RUNTIME, "Index put requires the source and destination dtypes match, got %s for the destination and %s for the source.",
                 pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[values->dtype]);
    {
        /* values: leading 1s dropped (setitem only), then broadcast to the result */
        int vnd = values->ndim, lead = 0;
        if (setitem) while (vnd - lead > a.rnd && values->sizes[lead] == 1) lead++;
        const int64_t *vs = values->sizes + lead, *vst = values->strides + lead;
        vnd -= lead;
        bool ok = vnd <= a.rnd;
        int64_t st[PCT_MAX_DIMS];
        for (int d = 0; ok && d < a.rnd; d++) {
            int dv = vnd - a.rnd + d;
            if (dv < 0 || vs[dv] == 1) st[d] = 0;
            else if (vs[dv] == a.rshape[d]) st[d] = vst[dv];
            else ok = false;
        }
        if (!ok)
            PCT_FAIL(PCT_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                     SHAPE(b1, values->ndim, values->sizes), SHAPE(b2, a.rnd, a.rshape));
        /* values sharing memory with self: torch's overlap error, else read from a copy */
        PCT_TRY(vals = pct_ix_unaliased(self, values));
        PCT_TRY_INT(adv_offsets(&a, self));
        if (vals != values) { /* the copy is contiguous: restride it */
            int64_t cst[PCT_MAX_DIMS];
            pct_contiguous_strides(values->ndim, values->sizes, cst);
            for (int d = 0; d < a.rnd; d++) {
                int dv = vnd - a.rnd + d;
                st[d] = (dv < 0 || vs[dv] == 1) ? 0 : cst[lead + dv];
            }
        }
        ix_ctx c = {.op = accumulate ? IX_ADD : IX_COPY, .n = 1, .dst_sj = 1, .alpha_d = 1, .alpha_i = 1};
        PCT_TRY_INT(pct_ix_run(&c, a.rnd, a.rshape, self, a.rstride, vals, st, a.L, a.lstride, NULL, NULL, accumulate));
    }
    rc = 0;
fail:
    adv_release(&a);
    PCT_XDECREF(vals);
    return rc;
}

int pct_cpu_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    return index_put_impl(self, nindices, indices, values, accumulate, true);
}

/* index_put(input, indices, values, accumulate): indices is a tuple/list of index tensors
 * (None for a dim not indexed), each consuming one dim, a mask its number of dims. */
pct_object *pct_cpu_index_put(pct_call *c)
{
    PCT_ARGS(index_put);
    pct_tensor *self = arg.input, *values = arg.values, *target = NULL;
    bool accumulate = arg.accumulate;
    pct_object *const *items;
    int64_t n;
    if (!pct_sequence_items(arg.indices, &items, &n)) {
        pct_error(PCT_ERR_TYPE, "index_put(): argument 'indices' (position 2) must be tuple of Tensors, not %s",
                     pct_type_name(arg.indices));
        return NULL;
    }
    pct_tensor *per[PCT_MAX_DIMS] = {0};
    int p = 0;
    bool skip_all = false;
    for (int64_t i = 0; i < n; i++) {
        pct_object *o = items[i];
        if (!pct_is_tensor(o)) { /* torch's index_put takes no None (Tensor[] indices), unlike indexing */
            pct_error(PCT_ERR_TYPE, "expected Tensor as element %lld in argument 0, but got %s", (long long)i,
                         pct_type_name(o));
            return NULL;
        }
        pct_tensor *t = (pct_tensor *)o;
        bool is_mask = t->dtype == PCT_BOOL || t->dtype == PCT_UINT8;
        if (is_mask && t->ndim == 0) {
            /* a scalar mask indexes nothing; False selects nothing */
            if (!pct_load_as_int64(pct_tensor_data(t), t->dtype)) skip_all = true;
            continue;
        }
        int k = is_mask ? t->ndim : 1;
        if (p + k > self->ndim) {
            pct_error(PCT_ERR_INDEX, "too many indices for tensor of dimension %d (got %d)", self->ndim, p + k);
            return NULL;
        }
        per[p] = t;
        p += k;
    }
    if (c->inplace) { target = self; PCT_INCREF(target); }
    else if (!(target = clone_of(self))) return NULL;
    long v = version_of(target);
    bool any = false;
    for (int d = 0; d < self->ndim; d++) any |= per[d] != NULL;
    if (!skip_all) {
        if (!any) {
            /* no index: values broadcast over the whole tensor */
            int rc;
            if (accumulate) {
                /* x += values, through the index loop with a single zero offset */
                pct_tensor *zero = pct_tensor_zeros(0, NULL, PCT_INT64);
                if (!zero) { PCT_DECREF(target); return NULL; }
                int64_t zst[PCT_MAX_DIMS] = {0}, vst[PCT_MAX_DIMS];
                int nd = target->ndim;
                bool ok = values->ndim <= nd;
                for (int d = 0; ok && d < nd; d++) {
                    int dv = values->ndim - nd + d;
                    if (dv < 0 || values->sizes[dv] == 1) vst[d] = 0;
                    else if (values->sizes[dv] == target->sizes[d]) vst[d] = values->strides[dv];
                    else ok = false;
                }
                if (!ok) {
                    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
                    pct_error(PCT_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                                 SHAPE(b1, values->ndim, values->sizes), SHAPE(b2, nd, target->sizes));
                    rc = -1;
                } else if (values->dtype != target->dtype) {
                    pct_error(PCT_ERR_RUNTIME, "Index put requires the source and destination dtypes match, got %s for the destination and %s for the source.",
                                 pct_dtype_cpp_name[target->dtype], pct_dtype_cpp_name[values->dtype]);
                    rc = -1;
                } else {
                    ix_ctx ctx = {.op = IX_ADD, .n = 1, .alpha_d = 1, .alpha_i = 1};
                    rc = pct_ix_run(&ctx, nd, target->sizes, target, target->strides, values, vst, zero, zst, NULL, NULL, false);
                }
                PCT_DECREF(zero);
            } else {
                rc = pct_copy_(target, values);
            }
            if (rc < 0) { PCT_DECREF(target); return NULL; }
        } else if (index_put_impl(target, self->ndim, per, values, accumulate, false) < 0) {
            PCT_DECREF(target);
            return NULL;
        }
    }
    return pct_ix_done(c, target, v, false);
}

