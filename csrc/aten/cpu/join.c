/* join.c: joining and shape ops that copy data: cat/concat/concatenate, stack, hstack,
 * vstack, dstack, flip/fliplr/flipud, roll, repeat, repeat_interleave, tile, tril/triu, diag,
 * diag_embed.
 *
 * Note [Copying through views]: none of these ops has a loop of its own. Each describes the
 * data movement as a pair of views - a slice of the output and a view of the input with
 * negative strides (flip), stride 0 (repeat), split dims (repeat, roll) or a diagonal stride
 * (diag, diag_embed) - and hands them to pct_copy_, which broadcasts, converts dtypes,
 * merges contiguous dims and runs in parallel. tril/triu copy, then zero a triangle.
 */
#include "../op.h"
#include "../out.h"
#include "../error.h"
#include "../checked.h"
#include "../iter.h"
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#define JN_PRAGMA(x) _Pragma(#x)
#define JN_PARALLEL_FOR(cond) JN_PRAGMA(omp parallel for schedule(static) if (cond))
#else
#define JN_PARALLEL_FOR(cond)
#endif

/* shared with index.c */
pct_object *pct_index_to_out(pct_call *c, pct_tensor *res);
pct_object *pct_index_to_out_unchecked(pct_call *c, pct_tensor *res); /* tril, triu, diag: Note [out= arguments] */
int pct_index_check_out(pct_call *c, pct_tensor *out, bool internal);
pct_tensor *pct_index_select_impl(pct_tensor *self, int64_t dim_arg, pct_tensor *index);


#define SHAPE(buf, nd, sz) pct_shape_str((buf), sizeof(buf), (nd), (sz))

static long version_of(pct_tensor *t) { return atomic_load(&t->version->value); }
static void set_version(pct_tensor *t, long v) { atomic_store(&t->version->value, v); }

/* A view of t with the given geometry (new reference). */
static pct_tensor *view(pct_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    return pct_tensor_view_of(t, ndim, sizes, strides, offset);
}

/* t narrowed to [start, start + len) along dim (new reference). */
static pct_tensor *narrowed(pct_tensor *t, int dim, int64_t start, int64_t len)
{
    int64_t sizes[PCT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    sizes[dim] = len;
    return view(t, t->ndim, sizes, t->strides, t->offset + start * t->strides[dim]);
}

/* ---------------------------------------------------------------------------------------
 * cat and friends
 * ------------------------------------------------------------------------------------- */

static bool legacy_empty(const pct_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* cat over an array of tensors; out= honoured (dtype must be castable). */
static pct_object *cat_tensors(pct_call *c, int n, pct_tensor **ts, int64_t dim_arg)
{
    if (n == 0) {
        pct_error_str(PCT_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors");
        return NULL;
    }
    int dtype = ts[0]->dtype, ref = -1;
    for (int i = 0; i < n; i++) {
        if (ts[i]->ndim == 0) {
            pct_error(PCT_ERR_RUNTIME, "zero-dimensional tensor (at position %d) cannot be concatenated", i);
            return NULL;
        }
        for (int d = 0; d < ts[i]->ndim; d++) {
            if (ts[i]->sizes[d] < 0) { /* only a broken tensor has one; never write through it */
                pct_error(PCT_ERR_RUNTIME, "cat(): tensor number %d has an invalid negative size %lld", i, (long long)ts[i]->sizes[d]);
                return NULL;
            }
        }
        if (ts[i]->device_type != ts[0]->device_type) {
            pct_error_str(PCT_ERR_RUNTIME, "Expected all tensors to be on the same device");
            return NULL;
        }
        if (i && (dtype = pct_promote_types_or_raise(dtype, ts[i]->dtype)) < 0) return NULL;
        if (ref < 0 && !legacy_empty(ts[i])) ref = i;
    }
    pct_tensor *r0 = ts[ref >= 0 ? ref : 0];
    int dim = ref >= 0 ? pct_wrap_dim(dim_arg, r0->ndim) : 0; /* all legacy empty: dim is not looked at */
    if (dim < 0) return NULL;
    if (c->out && !pct_can_cast(dtype, c->out->dtype)) {
        pct_error(PCT_ERR_TYPE, "torch.cat(): input types can't be cast to the desired output type %s", pct_dtype_cpp_name[c->out->dtype]);
        return NULL;
    }
    int64_t shape[PCT_MAX_DIMS], total = 0;
    memcpy(shape, r0->sizes, sizeof(int64_t) * (size_t)r0->ndim);
    for (int i = 0; i < n; i++) {
        pct_tensor *t = ts[i];
        if (legacy_empty(t) && ref >= 0 && i != ref) continue;
        if (t->ndim != r0->ndim) {
            pct_error(PCT_ERR_RUNTIME, "Tensors must have same number of dimensions: got %d and %d", r0->ndim, t->ndim);
            return NULL;
        }
        for (int d = 0; d < t->ndim; d++) {
            if (d != dim && t->sizes[d] != r0->sizes[d]) {
                pct_error(PCT_ERR_RUNTIME, "Sizes of tensors must match except in dimension %d. Expected size %lld but got size "
                             "%lld for tensor number %d in the list.", dim, (long long)r0->sizes[d], (long long)t->sizes[d], i);
                return NULL;
            }
        }
        total += t->sizes[dim];
    }
    shape[dim] = total;
    pct_tensor *r;
    long v0 = 0;
    if (c->out) {
        r = c->out;
        v0 = version_of(r);
        /* the inputs may not share memory with out (checked before out is resized) */
        if (pct_index_check_out(c, r, false) < 0 || pct_out_resize(r, r0->ndim, shape) < 0) return NULL;
        if (pct_index_check_out(c, r, true) < 0) return NULL; /* out's own elements may not share memory */
        PCT_INCREF(r);
    } else if (!(r = pct_tensor_empty(r0->ndim, shape, dtype, PCT_CPU, -1))) {
        return NULL;
    }
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        pct_tensor *t = ts[i];
        if ((legacy_empty(t) && ref >= 0 && i != ref) || t->sizes[dim] == 0) continue;
        pct_tensor *slot = narrowed(r, dim, start, t->sizes[dim]);
        if (!slot || pct_copy_(slot, t) < 0) {
            PCT_XDECREF(slot);
            PCT_DECREF(r);
            return NULL;
        }
        PCT_DECREF(slot);
        start += t->sizes[dim];
    }
    set_version(r, c->out ? v0 + 1 : 0);
    return (pct_object *)r;
}

/* The tensors of a Tensor[] argument (borrowed pointers into the sequence). */
static pct_tensor **list_items(const pct_tensor_list *v, int *n)
{
    *n = (int)v->n;
    return (pct_tensor **)v->items;
}

static pct_object *cat_list(pct_call *c, const pct_tensor_list *tensors, int64_t dim)
{
    int n;
    pct_tensor **ts = list_items(tensors, &n);
    return cat_tensors(c, n, ts, dim);
}

/* cat and its aliases: the same schema under three names */
#define CAT_ENTRY(op)                                                                                                 \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return cat_list(c, &arg.tensors, arg.dim);                                                                    \
    }
CAT_ENTRY(cat)
CAT_ENTRY(concat)
CAT_ENTRY(concatenate)
#undef CAT_ENTRY

pct_object *pct_cpu_concatenate_axis(pct_call *c)
{
    PCT_ARGS(concatenate_axis);
    return cat_list(c, &arg.tensors, arg.axis);
}

/* Views of each tensor reshaped by `how` (new references in vs[]); -1 with exception. */
typedef pct_tensor *(*reshape_fn)(pct_tensor *t, int64_t arg);

static pct_object *cat_of_views(pct_call *c, int n, pct_tensor **ts, reshape_fn how, int64_t arg, int64_t dim)
{
    pct_tensor **vs = calloc((size_t)(n ? n : 1), sizeof *vs);
    if (!vs) return pct_error_nomem();
    pct_object *r = NULL;
    for (int i = 0; i < n; i++)
        if (!(vs[i] = how(ts[i], arg))) goto done;
    r = cat_tensors(c, n, vs, dim);
done:
    for (int i = 0; i < n; i++) PCT_XDECREF(vs[i]);
    free(vs);
    return r;
}

/* t with a size-1 dim inserted at position `at`. */
static pct_tensor *unsqueezed(pct_tensor *t, int64_t at)
{
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == at) { sizes[n] = 1; strides[n++] = 1; }
        if (i < t->ndim) { sizes[n] = t->sizes[i]; strides[n++] = t->strides[i]; }
    }
    return view(t, n, sizes, strides, t->offset);
}

/* atleast_1d / atleast_2d / atleast_3d as views. */
static pct_tensor *at_least(pct_tensor *t, int64_t k)
{
    if (t->ndim >= k) { PCT_INCREF(t); return t; }
    int64_t sizes[3] = {1, 1, 1}, strides[3] = {1, 1, 1};
    if (t->ndim == 1) {
        /* (n) -> (1, n) or (1, n, 1) */
        sizes[1] = t->sizes[0];
        strides[1] = t->strides[0];
    } else if (t->ndim == 2) {
        /* (m, n) -> (m, n, 1) */
        sizes[0] = t->sizes[0]; strides[0] = t->strides[0];
        sizes[1] = t->sizes[1]; strides[1] = t->strides[1];
    }
    return view(t, (int)k, sizes, strides, t->offset);
}

pct_object *pct_cpu_stack(pct_call *c)
{
    PCT_ARGS(stack);
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    int n;
    pct_tensor **ts = list_items(&arg.tensors, &n);
    if (n == 0) {
        pct_error_str(PCT_ERR_RUNTIME, "stack expects a non-empty TensorList");
        return NULL;
    }
    int dim = pct_wrap_dim(arg.dim, ts[0]->ndim + 1); /* torch checks the dim before the sizes */
    if (dim < 0 || pct_check_ndim(ts[0]->ndim + 1) < 0) return NULL;
    for (int i = 1; i < n; i++) {
        if (ts[i]->ndim != ts[0]->ndim || memcmp(ts[i]->sizes, ts[0]->sizes, sizeof(int64_t) * (size_t)ts[0]->ndim) != 0) {
            pct_error(PCT_ERR_RUNTIME, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d",
                         SHAPE(b1, ts[0]->ndim, ts[0]->sizes), SHAPE(b2, ts[i]->ndim, ts[i]->sizes), i);
            return NULL;
        }
    }
    return cat_of_views(c, n, ts, unsqueezed, dim, dim);
}

static pct_object *xstack(pct_call *c, const pct_tensor_list *tensors, const char *name, int64_t k)
{
    int n;
    pct_tensor **ts = list_items(tensors, &n);
    if (n == 0) {
        pct_error(PCT_ERR_RUNTIME, "%s expects a non-empty TensorList", name);
        return NULL;
    }
    int64_t dim = k == 3 ? 2 : 0;
    if (k == 1 && ts[0]->ndim > 1) dim = 1; /* hstack: along dim 1 unless the inputs are 1-d */
    return cat_of_views(c, n, ts, at_least, k, dim);
}

#define XSTACK_ENTRY(op, k)                                                                                           \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return xstack(c, &arg.tensors, #op, k);                                                                       \
    }
XSTACK_ENTRY(hstack, 1)
XSTACK_ENTRY(vstack, 2)
XSTACK_ENTRY(dstack, 3)

/* ---------------------------------------------------------------------------------------
 * flip, roll
 * ------------------------------------------------------------------------------------- */

/* A fresh contiguous copy of t with the marked dims reversed. */
static pct_tensor *flipped(pct_tensor *t, const bool *mask)
{
    int64_t strides[PCT_MAX_DIMS], offset = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        strides[d] = t->strides[d];
        /* torch copies uint16/32/64 rows as they are, but has no loop reversing a unit-stride dim for them */
        if (mask[d] && t->sizes[d] > 1 && t->strides[d] == 1 && pct_dtype_is_barebones(t->dtype)) {
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"flip_cpu\" not implemented for '%s'", pct_dtype_cpp_name[t->dtype]);
            return NULL;
        }
        if (mask[d] && t->sizes[d] > 1) {
            offset += (t->sizes[d] - 1) * t->strides[d];
            strides[d] = -t->strides[d];
        }
    }
    pct_tensor *v = view(t, t->ndim, t->sizes, strides, offset);
    if (!v) return NULL;
    pct_tensor *r = pct_to_dtype(v, t->dtype, true);
    PCT_DECREF(v);
    return r;
}

pct_object *pct_cpu_flip(pct_call *c)
{
    PCT_ARGS(flip);
    pct_tensor *t = arg.input;
    const pct_int_list *dims = &arg.dims;
    bool mask[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < dims->n; i++) {
        int d = pct_wrap_dim(dims->v[i], t->ndim);
        if (d < 0) return NULL;
        if (mask[d]) {
            pct_error(PCT_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", d);
            return NULL;
        }
        mask[d] = true;
    }
    return (pct_object *)flipped(t, mask);
}

pct_object *pct_cpu_fliplr(pct_call *c)
{
    PCT_ARGS(fliplr);
    pct_tensor *t = arg.input;
    if (t->ndim < 2) { pct_error_str(PCT_ERR_RUNTIME, "Input must be >= 2-d."); return NULL; }
    bool mask[PCT_MAX_DIMS] = {0};
    mask[1] = true;
    return (pct_object *)flipped(t, mask);
}

pct_object *pct_cpu_flipud(pct_call *c)
{
    PCT_ARGS(flipud);
    pct_tensor *t = arg.input;
    if (t->ndim < 1) { pct_error_str(PCT_ERR_RUNTIME, "Input must be >= 1-d."); return NULL; }
    bool mask[PCT_MAX_DIMS] = {0};
    mask[0] = true;
    return (pct_object *)flipped(t, mask);
}

#define ROLL_MAX_COMBINED 8

/* dst = src rolled by shift[i] along dim[i] (k dims, shifts in [1, size)): every combination
 * of the two pieces of each dim is one copy. */
static int roll_into(pct_tensor *dst, pct_tensor *src, int k, const int *dims, const int64_t *shifts)
{
    for (int combo = 0; combo < (1 << k); combo++) {
        int64_t dsz[PCT_MAX_DIMS];
        int64_t doff = dst->offset, soff = src->offset;
        bool empty = false;
        memcpy(dsz, dst->sizes, sizeof(int64_t) * (size_t)dst->ndim);
        for (int i = 0; i < k; i++) {
            int d = dims[i];
            int64_t size = dst->sizes[d], sh = shifts[i];
            int64_t len, dstart, sstart;
            if (combo & (1 << i)) { len = sh; dstart = 0; sstart = size - sh; }
            else { len = size - sh; dstart = sh; sstart = 0; }
            if (len == 0) empty = true;
            dsz[d] = len;
            doff += dstart * dst->strides[d];
            soff += sstart * src->strides[d];
        }
        if (empty) continue;
        pct_tensor *dv = view(dst, dst->ndim, dsz, dst->strides, doff);
        pct_tensor *sv = dv ? view(src, src->ndim, dsz, src->strides, soff) : NULL;
        int rc = sv ? pct_copy_(dv, sv) : -1;
        PCT_XDECREF(dv);
        PCT_XDECREF(sv);
        if (rc < 0) return -1;
    }
    return 0;
}

/* A fresh tensor: t rolled along k dims (any k: at most ROLL_MAX_COMBINED dims per pass). */
static pct_tensor *rolled(pct_tensor *t, int k, const int *dims, const int64_t *shifts)
{
    pct_tensor *cur = t;
    PCT_INCREF(cur);
    int done = 0;
    do {
        int m = k - done > ROLL_MAX_COMBINED ? ROLL_MAX_COMBINED : k - done;
        pct_tensor *r = pct_tensor_empty(t->ndim, t->sizes, t->dtype, PCT_CPU, -1);
        if (!r) { PCT_DECREF(cur); return NULL; }
        if (m == 0 ? pct_copy_(r, cur) < 0 : roll_into(r, cur, m, dims + done, shifts + done) < 0) {
            PCT_DECREF(r);
            PCT_DECREF(cur);
            return NULL;
        }
        PCT_DECREF(cur);
        cur = r;
        done += m;
    } while (done < k);
    set_version(cur, 0);
    return cur;
}

pct_object *pct_cpu_roll(pct_call *c)
{
    PCT_ARGS(roll);
    pct_tensor *t = arg.input;
    const pct_int_list *sh = &arg.shifts;
    const pct_int_list *dv = &arg.dims; /* dims=None (n = 0) rolls the flattened tensor */
    if (sh->n == 0) {
        pct_error_str(PCT_ERR_RUNTIME, "`shifts` required");
        return NULL;
    }
    if (sh->n != dv->n && !(dv->n == 0 && sh->n == 1)) {
        pct_error(PCT_ERR_RUNTIME, "shifts and dimensions must align. shifts: %d, dims:%d", sh->n, dv->n);
        return NULL;
    }
    if (t->numel == 0) return (pct_object *)pct_to_dtype(t, t->dtype, true);
    if (dv->n == 0) {
        /* roll the flattened tensor, then restore the shape */
        pct_tensor *flat = pct_contiguous(t);
        if (!flat) return NULL;
        int64_t n = t->numel, one = 1;
        pct_tensor *f1 = view(flat, 1, &n, &one, flat->offset);
        PCT_DECREF(flat);
        if (!f1) return NULL;
        int dim0 = 0;
        int64_t s = n ? ((sh->v[0] % n) + n) % n : 0;
        pct_tensor *r = rolled(f1, s ? 1 : 0, &dim0, &s);
        PCT_DECREF(f1);
        if (!r) return NULL;
        pct_tensor *out = view(r, t->ndim, t->sizes, NULL, 0);
        PCT_DECREF(r);
        if (out) PCT_CLEAR(out->base);
        return (pct_object *)out;
    }
    int64_t per[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < dv->n; i++) {
        if (t->ndim == 0) {
            pct_error(PCT_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dv->v[i]);
            return NULL;
        }
        int d = pct_wrap_dim(dv->v[i], t->ndim);
        if (d < 0) return NULL;
        per[d] += sh->v[i];
    }
    int dims[PCT_MAX_DIMS], k = 0;
    int64_t shifts[PCT_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        int64_t size = t->sizes[d];
        int64_t s = size ? ((per[d] % size) + size) % size : 0;
        if (s) { dims[k] = d; shifts[k++] = s; }
    }
    return (pct_object *)rolled(t, k, dims, shifts);
}

/* ---------------------------------------------------------------------------------------
 * repeat, tile, repeat_interleave
 * ------------------------------------------------------------------------------------- */

static pct_object *repeat_impl(pct_tensor *t, int n, const int64_t *reps)
{
    if (n < t->ndim) {
        pct_error_str(PCT_ERR_RUNTIME, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
        return NULL;
    }
    int64_t ps[PCT_MAX_DIMS], pst[PCT_MAX_DIMS], os[PCT_MAX_DIMS];
    int pad = n - t->ndim;
    for (int d = 0; d < n; d++) {
        ps[d] = d < pad ? 1 : t->sizes[d - pad];
        pst[d] = d < pad ? 0 : t->strides[d - pad];
        if (pct_mul_overflows(reps[d], ps[d], &os[d])) { /* Note [Checked bounds] */
            pct_error(PCT_ERR_RUNTIME, "numel: integer multiplication overflow (repeat %lld times a size of %lld at "
                         "dimension %d)", (long long)reps[d], (long long)ps[d], d);
            return NULL;
        }
    }
    pct_tensor *r = pct_tensor_empty(n, os, t->dtype, PCT_CPU, -1);
    if (!r || r->numel == 0) return (pct_object *)r;
    /* split each repeated dim into (repeat, size): the source has stride 0 over repeats */
    int64_t vs[PCT_MAX_DIMS], dst[PCT_MAX_DIMS], sst[PCT_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < n; d++) {
        int64_t cs = r->strides[d];
        if (reps[d] != 1 && ps[d] != 1) {
            if (m + 2 > PCT_MAX_DIMS) {
                PCT_DECREF(r);
                pct_error(PCT_ERR_RUNTIME, "repeat: too many repeated dimensions (pyctorch supports %d dims)", PCT_MAX_DIMS);
                return NULL;
            }
            vs[m] = reps[d]; dst[m] = ps[d] * cs; sst[m++] = 0;
            vs[m] = ps[d]; dst[m] = cs; sst[m++] = pst[d];
        } else {
            if (m + 1 > PCT_MAX_DIMS) {
                PCT_DECREF(r);
                pct_error(PCT_ERR_RUNTIME, "repeat: too many dimensions (pyctorch supports %d dims)", PCT_MAX_DIMS);
                return NULL;
            }
            vs[m] = os[d]; dst[m] = cs; sst[m++] = reps[d] != 1 ? 0 : pst[d];
        }
    }
    pct_tensor *dv = view(r, m, vs, dst, 0);
    pct_tensor *sv = dv ? view(t, m, vs, sst, t->offset) : NULL;
    int rc = sv ? pct_copy_(dv, sv) : -1;
    PCT_XDECREF(dv);
    PCT_XDECREF(sv);
    if (rc < 0) { PCT_DECREF(r); return NULL; }
    set_version(r, 0);
    return (pct_object *)r;
}

pct_object *pct_cpu_repeat(pct_call *c)
{
    PCT_ARGS(repeat);
    return repeat_impl(arg.input, arg.repeats.n, arg.repeats.v);
}

pct_object *pct_cpu_tile(pct_call *c)
{
    PCT_ARGS(tile);
    pct_tensor *t = arg.input;
    const pct_int_list *dv = &arg.dims;
    int64_t reps[PCT_MAX_DIMS];
    int n = dv->n < t->ndim ? t->ndim : dv->n, pad = n - dv->n;
    for (int d = 0; d < n; d++) reps[d] = d < pad ? 1 : dv->v[d - pad];
    return repeat_impl(t, n, reps);
}

/* A contiguous int64 copy of an integral tensor's values. */
static pct_tensor *int64_values(pct_tensor *t)
{
    pct_tensor *r = pct_to_dtype(t, PCT_INT64, false);
    if (!r) return NULL;
    pct_tensor *cc = pct_contiguous(r);
    PCT_DECREF(r);
    return cc;
}

/* The indices 0..n-1, index i repeated reps[i] times (reps int64 contiguous, or one value
 * for all when nrep == 1 and n != 1). NULL with exception. */
static pct_tensor *repeated_indices(const int64_t *reps, int64_t nrep, int64_t n, pct_int_opt output_size, int dtype)
{
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = reps[nrep == 1 ? 0 : i];
        if (r < 0) { pct_error_str(PCT_ERR_RUNTIME, "repeats can not be negative"); return NULL; }
        total += r;
    }
    if (!output_size.none && output_size.v != total) {
        pct_error_str(PCT_ERR_RUNTIME, "allocated size does not match required size");
        return NULL;
    }
    pct_tensor *idx = pct_tensor_empty(1, &total, dtype, PCT_CPU, -1);
    if (!idx) return NULL;
    char *p = pct_tensor_data(idx);
    int isz = pct_dtype_itemsize[dtype];
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0, r = reps[nrep == 1 ? 0 : i]; j < r; j++, k++) pct_store_int64(p + k * isz, dtype, i);
    return idx;
}

pct_object *pct_cpu_repeat_interleave_idx(pct_call *c)
{
    PCT_ARGS(repeat_interleave_idx);
    pct_tensor *rep = arg.repeats;
    if (rep->dtype != PCT_INT64 && rep->dtype != PCT_INT32) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"repeat_interleave_cpu\" not implemented for '%s'", pct_dtype_cpp_name[rep->dtype]);
        return NULL;
    }
    if (rep->ndim != 1) { pct_error_str(PCT_ERR_RUNTIME, "repeat_interleave only accept 1D vector as repeat"); return NULL; }
    pct_tensor *rv = int64_values(rep);
    if (!rv) return NULL;
    pct_tensor *r = repeated_indices((const int64_t *)pct_tensor_data(rv), rv->numel, rv->numel, arg.output_size, rep->dtype);
    PCT_DECREF(rv);
    if (r) set_version(r, 0);
    return (pct_object *)r;
}

/* repeat_interleave(input, repeats, dim): repeats is one int (one_rep, where not NULL) or a tensor (rep). */
static pct_object *repeat_interleave_impl(pct_tensor *t, const int64_t *one_rep, pct_tensor *rep, pct_int_opt dim_arg,
                                          pct_int_opt output_size)
{
    pct_tensor *input = NULL, *rv = NULL, *idx = NULL, *r = NULL;
    const int64_t *reps;
    int64_t nrep;
    if (one_rep && *one_rep < 0) PCT_FAIL(PCT_ERR_RUNTIME, "Repeats must be non-negative");
    if (!dim_arg.none && t->ndim == 0) { /* torch sizes a 0-d input along dim before it reads repeats */
        if (pct_wrap_dim(dim_arg.v, 0) < 0) goto fail;
        PCT_FAIL(PCT_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim_arg.v);
    }
    if (one_rep) {
        reps = one_rep;
        nrep = 1;
    } else {
        if (rep->ndim > 1) PCT_FAIL(PCT_ERR_RUNTIME, "repeats must be 0-dim or 1-dim tensor");
        if (rep->dtype != PCT_INT64 && rep->dtype != PCT_INT32) /* torch's kernel has these two only */
            PCT_FAIL(PCT_ERR_NOT_IMPLEMENTED, "\"repeat_interleave_cpu\" not implemented for '%s'", pct_dtype_cpp_name[rep->dtype]);
        PCT_TRY(rv = int64_values(rep));
        reps = (const int64_t *)pct_tensor_data(rv);
        nrep = rv->numel;
    }
    int64_t dim;
    if (dim_arg.none) {
        /* no dim: the flattened input */
        int64_t n = t->numel, one = 1;
        pct_tensor *cc = pct_contiguous(t);
        if (!cc) goto fail;
        input = view(cc, 1, &n, &one, cc->offset);
        PCT_DECREF(cc);
        if (!input) goto fail;
        dim = 0;
    } else {
        int d = pct_wrap_dim(dim_arg.v, t->ndim);
        if (d < 0) goto fail;
        dim = d;
        input = t;
        PCT_INCREF(input);
    }
    {
        int64_t size = input->ndim ? input->sizes[dim] : 1;
        if (nrep != 1 && nrep != size)
            PCT_FAIL(PCT_ERR_RUNTIME, "repeats must have the same size as input along dim, but got repeats.size(0) = %lld and "
                     "input.size(%lld) = %lld", (long long)nrep, (long long)dim, (long long)size);
        if (nrep == 0 && size == 0) nrep = 1; /* nothing to repeat */
        PCT_TRY(idx = repeated_indices(reps, nrep, size, output_size, PCT_INT64));
        PCT_TRY(r = pct_index_select_impl(input, dim, idx));
    }
    PCT_DECREF(input);
    PCT_XDECREF(rv);
    PCT_DECREF(idx);
    set_version(r, 0);
    return (pct_object *)r;
fail:
    PCT_XDECREF(input);
    PCT_XDECREF(rv);
    PCT_XDECREF(idx);
    return NULL;
}

pct_object *pct_cpu_repeat_interleave_int(pct_call *c)
{
    PCT_ARGS(repeat_interleave_int);
    return repeat_interleave_impl(arg.input, &arg.repeats, NULL, arg.dim, arg.output_size);
}

pct_object *pct_cpu_repeat_interleave(pct_call *c)
{
    PCT_ARGS(repeat_interleave);
    return repeat_interleave_impl(arg.input, NULL, arg.repeats, arg.dim, arg.output_size);
}

/* ---------------------------------------------------------------------------------------
 * tril, triu, diag, diag_embed
 * ------------------------------------------------------------------------------------- */

#define ZERO_RUN(W) for (int64_t j = j0; j < j1; j++) *(W *)(p + j * cs * isz) = 0;

/* Zeroes the upper (tril) or lower (triu) triangle of the last two dims of t, in place. */
static void zero_triangle(pct_tensor *t, int64_t k, bool lower)
{
    int nd = t->ndim;
    int64_t M = t->sizes[nd - 2], N = t->sizes[nd - 1], rs = t->strides[nd - 2], cs = t->strides[nd - 1];
    int64_t batches = M ? t->numel / (M * (N ? N : 1)) : 0;
    if (N == 0) batches = 0;
    int64_t rows = batches * M;
    int isz = pct_dtype_itemsize[t->dtype];
    char *base = pct_tensor_data(t);
    const int64_t *sizes = t->sizes, *strides = t->strides;
    PCT_NOGIL_BEGIN
    JN_PARALLEL_FOR(rows * N >= PCT_PARALLEL_GRAIN)
    for (int64_t row = 0; row < rows; row++) {
        int64_t b = row / M, i = row % M, off = i * rs;
        for (int d = nd - 3; d >= 0; d--) { off += (b % sizes[d]) * strides[d]; b /= sizes[d]; }
        int64_t j0, j1;
        if (lower) { j0 = i + k + 1; j1 = N; }  /* tril: zero above the diagonal */
        else { j0 = 0; j1 = i + k; }             /* triu: zero below it */
        if (j0 < 0) j0 = 0;
        if (j1 > N) j1 = N;
        char *p = base + off * isz;
        if (cs == 1 && j1 > j0) {
            memset(p + j0 * isz, 0, (size_t)((j1 - j0) * isz));
        } else {
            switch (isz) {
            case 1: ZERO_RUN(uint8_t) break;
            case 2: ZERO_RUN(uint16_t) break;
            case 4: ZERO_RUN(uint32_t) break;
            case 16: ZERO_RUN(pct_cdouble) break; /* complex128 */
            default: ZERO_RUN(uint64_t) break;
            }
        }
    }
    PCT_NOGIL_END
}

/* torch's tril_/triu_ write in place when the batch dims tile memory (or there are at most 3 dims; a leading
 * expanded dim is allowed); otherwise they compute a contiguous copy and copy_ it back, which refuses a self
 * whose elements share memory. */
static int tri_inplace_check(const pct_tensor *t)
{
    int nd = t->ndim;
    if (nd <= 3 || pct_tensor_is_contiguous(t)) return 0;
    int64_t expected = t->sizes[nd - 1] * t->sizes[nd - 2];
    bool batch_contiguous = true;
    for (int i = nd - 3; i >= 0 && batch_contiguous; i--) {
        if (i == 0 && (t->strides[0] == 0 || t->sizes[0] == 1)) continue;
        batch_contiguous = t->strides[i] == expected;
        expected *= t->sizes[i];
    }
    return batch_contiguous ? 0 : pct_check_written_overlap(t, 0, NULL);
}

static pct_object *tri(pct_call *c, bool lower, pct_tensor *t, int64_t k)
{
    if (t->ndim < 2) {
        pct_error(PCT_ERR_RUNTIME, "%s: input tensor must have at least 2 dimensions", lower ? "tril" : "triu");
        return NULL;
    }
    if (c->inplace) {
        long v0 = version_of(t);
        if (tri_inplace_check(t) < 0) return NULL;
        zero_triangle(t, k, lower); /* an expanded self is otherwise written through, as torch does */
        set_version(t, v0 + 1);
        PCT_INCREF(t);
        return (pct_object *)t;
    }
    pct_tensor *r = pct_to_dtype(t, t->dtype, true);
    if (!r) return NULL;
    zero_triangle(r, k, lower);
    return pct_index_to_out_unchecked(c, r);
}

pct_object *pct_cpu_tril(pct_call *c)
{
    PCT_ARGS(tril);
    return tri(c, true, arg.input, arg.diagonal);
}

pct_object *pct_cpu_triu(pct_call *c)
{
    PCT_ARGS(triu);
    return tri(c, false, arg.input, arg.diagonal);
}

pct_object *pct_cpu_diag(pct_call *c)
{
    PCT_ARGS(diag);
    pct_tensor *t = arg.input;
    int64_t k = arg.diagonal;
    if (t->ndim == 1) {
        int64_t n = t->sizes[0], m = n + (k >= 0 ? k : -k);
        int64_t shape[2] = {m, m};
        pct_tensor *r = pct_tensor_zeros(2, shape, t->dtype);
        if (!r) return NULL;
        pct_tensor *dv = pct_diagonal_view(r, k, 0, 1);
        if (!dv || pct_copy_(dv, t) < 0) {
            PCT_XDECREF(dv);
            PCT_DECREF(r);
            return NULL;
        }
        PCT_DECREF(dv);
        return pct_index_to_out_unchecked(c, r);
    }
    if (t->ndim == 2) {
        pct_tensor *dv = pct_diagonal_view(t, k, 0, 1);
        if (!dv) return NULL;
        pct_tensor *r = pct_to_dtype(dv, t->dtype, true);
        PCT_DECREF(dv);
        return pct_index_to_out_unchecked(c, r);
    }
    pct_error(PCT_ERR_RUNTIME, "diag(): Supports 1D or 2D tensors. Got %dD", t->ndim);
    return NULL;
}

pct_object *pct_cpu_diag_embed(pct_call *c)
{
    PCT_ARGS(diag_embed);
    pct_tensor *t = arg.input;
    int64_t off = arg.offset;
    int nd = t->ndim + 1;
    int d1 = pct_wrap_dim(arg.dim1, nd), d2 = pct_wrap_dim(arg.dim2, nd);
    if (d1 < 0 || d2 < 0) return NULL;
    if (d1 == d2) {
        pct_error(PCT_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)arg.dim1, (long long)arg.dim2);
        return NULL;
    }
    if (nd > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "pyctorch supports at most %d dimensions", PCT_MAX_DIMS);
        return NULL;
    }
    int64_t n = t->sizes[t->ndim - 1], m = n + (off >= 0 ? off : -off);
    int64_t shape[PCT_MAX_DIMS];
    for (int d = 0, src = 0; d < nd; d++) shape[d] = (d == d1 || d == d2) ? m : t->sizes[src++];
    pct_tensor *r = pct_tensor_zeros(nd, shape, t->dtype);
    if (!r) return NULL;
    pct_tensor *dv = pct_diagonal_view(r, off, d1, d2);
    if (!dv || pct_copy_(dv, t) < 0) {
        PCT_XDECREF(dv);
        PCT_DECREF(r);
        return NULL;
    }
    PCT_DECREF(dv);
    return pct_index_to_out(c, r);
}
