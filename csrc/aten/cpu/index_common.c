/* index_common.c: what every index op uses (declared in index_internal.h): out= and in-place
 * result handling, overlap checks, the index loop ix_loop_<dtype> (Note [Index loops] in
 * index.c) with its runner, and the checking of index values into element offsets.
 */
#include "index_internal.h"
#include "../backend.h" /* pct_device_type_name */
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------
 * Small shared helpers (join.c uses pct_index_to_out and pct_index_check_out too)
 * ------------------------------------------------------------------------------------- */

/* Hands back a freshly made result (version 0), or, for an out= call, copies it into out
 * (resized, same dtype required) and returns out. Steals res; NULL res passes through.
 * `check`: out may not overlap itself nor any tensor argument (the _unchecked form is for ops
 * torch lets write anywhere, Note [out= arguments]). */
static pct_object *to_out(pct_call *c, pct_tensor *res, bool check)
{
    if (!res) return NULL;
    pct_tensor *o = c->out;
    if (!o || c->inplace) {
        set_version(res, 0);
        return (pct_object *)res;
    }
    if (o->dtype != res->dtype) {
        if (c->op_index == PCT_OP_index_select || c->op_index == PCT_OP_masked_select)
            pct_error(PCT_ERR_RUNTIME, "%s(): self and result must have the same scalar type", c->op->sig.name);
        else
            pct_out_check_dtype(o, res->dtype);
        PCT_DECREF(res);
        return NULL;
    }
    long v = version_of(o);
    bool resized = o->ndim != res->ndim || memcmp(o->sizes, res->sizes, sizeof(int64_t) * (size_t)res->ndim) != 0;
    /* gather, index_add and index_copy check out's own overlap once it is resized (pct_out_resize does) */
    bool late = c->op_index == PCT_OP_gather || c->op_index == PCT_OP_index_add || c->op_index == PCT_OP_index_copy;
    if ((check && pct_index_check_out(c, o, !late) < 0) || pct_out_resize(o, res->ndim, res->sizes) < 0) goto fail;
    /* nonzero resizes its out column-major, as torch's (it fills the transposed matrix) */
    if (resized && c->op_index == PCT_OP_nonzero) {
        const int64_t cm[2] = {1, res->sizes[0]};
        if (pct_tensor_set_shape(o, 2, res->sizes, cm) < 0) goto fail;
    }
    if (pct_copy_(o, res) < 0) goto fail;
    set_version(o, v + 1);
    PCT_DECREF(res);
    PCT_INCREF(o);
    return (pct_object *)o;
fail:
    PCT_DECREF(res);
    return NULL;
}

pct_object *pct_index_to_out(pct_call *c, pct_tensor *res);
pct_object *pct_index_to_out(pct_call *c, pct_tensor *res) { return to_out(c, res, true); }
pct_object *pct_index_to_out_unchecked(pct_call *c, pct_tensor *res);
pct_object *pct_index_to_out_unchecked(pct_call *c, pct_tensor *res) { return to_out(c, res, false); }

/* The result of an op that wrote `target` (self for an in-place call, else a new tensor): steals target.
 * In place: bumps self's version (v0 = its version before the write) and returns it; otherwise returns
 * the new tensor through the out= handling (`via_out`) or as it is, with version 0. */
pct_object *pct_ix_done(pct_call *c, pct_tensor *target, long v0, bool via_out)
{
    if (c->inplace) {
        set_version(target, v0 + 1);
        return (pct_object *)target;
    }
    if (via_out) return pct_index_to_out(c, target);
    set_version(target, 0);
    return (pct_object *)target;
}

/* The geometry of t with a 0-d tensor seen as 1-d of size 1 (as torch's gather/scatter do). */
int pct_ix_geom(const pct_tensor *t, int64_t *sizes, int64_t *strides)
{
    if (t->ndim == 0) { sizes[0] = 1; strides[0] = 1; return 1; }
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    return t->ndim;
}

/* One element of dtype `dtype` holding a scalar, as bytes (for fills). */
uint64_t pct_ix_scalar_bytes(int dtype, const pct_scalar *s)
{
    uint64_t b = 0;
    if (s->kind == PCT_SCALAR_FLOAT || (pct_scalar_is_uint64(s) && pct_dtype_is_floating(dtype))) pct_store_double(&b, dtype, s->d);
    else pct_store_int64(&b, dtype, s->i);
    return b;
}

/* t covers exactly numel elements of its storage (a permutation of a contiguous layout). */
static bool dense(const pct_tensor *t)
{
    int64_t st[PCT_MAX_DIMS], sz[PCT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1) continue;
        if (t->strides[d] <= 0) return false;
        /* insertion by stride */
        int k = n++;
        while (k > 0 && st[k - 1] > t->strides[d]) { st[k] = st[k - 1]; sz[k] = sz[k - 1]; k--; }
        st[k] = t->strides[d];
        sz[k] = t->sizes[d];
    }
    int64_t expected = 1;
    for (int k = 0; k < n; k++) {
        if (st[k] != expected) return false;
        expected *= sz[k];
    }
    return true;
}

/* torch's assert_no_overlap: a source whose memory meets the written tensor's raises (when
 * both are dense; otherwise torch cannot tell and lets it through). 0 or -1 with exception. */
int pct_ix_check_no_overlap(const pct_tensor *dst, const pct_tensor *src)
{
    if (dst->storage != src->storage || dst->numel == 0 || src->numel == 0) return 0;
    /* the same tensor (or the same view of it) always overlaps fully */
    bool same = dst == src || (dst->offset == src->offset && dst->ndim == src->ndim &&
                               memcmp(dst->sizes, src->sizes, sizeof(int64_t) * (size_t)dst->ndim) == 0 &&
                               memcmp(dst->strides, src->strides, sizeof(int64_t) * (size_t)dst->ndim) == 0);
    if (same || (dense(dst) && dense(src) && dst->offset < src->offset + src->numel && src->offset < dst->offset + dst->numel)) {
        pct_error_str(PCT_ERR_RUNTIME, "unsupported operation: some elements of the input tensor and the written-to tensor "
                                            "refer to a single memory location. Please clone() the tensor before performing the operation.");
        return -1;
    }
    return 0;
}

/* src itself, or a copy when it shares memory with dst (new reference; NULL with exception). */
pct_tensor *pct_ix_unaliased(pct_tensor *dst, pct_tensor *src)
{
    if (pct_ix_check_no_overlap(dst, src) < 0) return NULL;
    if (src->storage == dst->storage) return clone_of(src);
    PCT_INCREF(src);
    return src;
}

/* torch's assert_no_internal_overlap: an in-place write into a tensor whose elements share
 * memory (an expanded, stride-0 dim) is refused; `warn_op` names the ops torch only warns for. */
static bool internal_overlap(const pct_tensor *t)
{
    if (t->numel == 0) return false; /* nothing to overlap */
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && t->strides[d] == 0) return true;
    return false;
}

int pct_ix_check_written(const pct_tensor *t, const char *warn_op)
{
    if (!internal_overlap(t)) return 0;
    if (warn_op) {
        char msg[320];
        snprintf(msg, sizeof msg, "Use of %s on expanded tensors is deprecated. Please clone() the tensor before performing "
                 "this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor", warn_op);
        return pct_warn(PCT_WARN_USER, "%s", msg);
    }
    pct_error_str(PCT_ERR_RUNTIME, "unsupported operation: more than one element of the written-to tensor refers to a single "
                                        "memory location. Please clone() the tensor before performing the operation.");
    return -1;
}

static int no_overlap_with(void *out, pct_tensor *t) { return pct_ix_check_no_overlap(out, t); }

/* For out= calls: out may not have internal overlap nor share memory with a tensor argument. */
int pct_index_check_out(pct_call *c, pct_tensor *out, bool internal)
{
    if (internal && pct_ix_check_written(out, NULL) < 0) return -1;
    return pct_out_each_input(c, no_overlap_with, out);
}

int pct_ix_warn_uint8_index(void)
{
    return pct_warn(PCT_WARN_USER, "%s", "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
}

/* ---------------------------------------------------------------------------------------
 * The index loop (Note [Index loops])
 * ------------------------------------------------------------------------------------- */

static inline bool ix_isnan(double v) { return isnan(v); }

/* ix_loop_<N> per dtype (index_loop_impl.h); index_select and indexing copy uint16/32/64 elements */
#define PCT_FOREACH_TEMPLATE "index_loop_impl.h"
#define PCT_FOREACH_UNSIGNED
#include "dtype_foreach.h"

static const pct_loop_fn ix_loops[PCT_NUM_DTYPES] = {
#define IX_ENTRY(E, N, T, C, S) ix_loop_##N,
    PCT_FORALL_ALL_DTYPES(IX_ENTRY)
#undef IX_ENTRY
};

/* The index loops of the complex and storage-only dtypes (Note [Complex and float8 dtypes] in ../dtype.h): copies
 * (indexing, index_select, index_put) move their bytes through the loop of an integer dtype of their size; complex128
 * (16 bytes, no such integer) and the sums of index_add / index_put(accumulate=True), the products and scatter_reduce's
 * means on complex64 / complex128 have their own loops, through index_each_impl.h as the other dtypes' do (amax / amin
 * are refused before: complex numbers have no order). */
#define PCT_TPL_T pct_cfloat
static void ix_loop_cfloat(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    const ix_ctx *c = vctx;
    const int64_t n = c->n;
    const float alpha = (float)c->alpha_d;
    if (c->op == IX_COPY) {
#define IX_BODY *(pct_cfloat *)d = *(const pct_cfloat *)s
#include "index_each_impl.h"
    } else if (c->op == IX_MUL) {
#define IX_BODY *(pct_cfloat *)d *= *(const pct_cfloat *)s
#include "index_each_impl.h"
    } else if (c->op == IX_MEAN) { /* scatter_reduce's mean: the sums and their counts (args[3]) */
#define IX_BODY *(pct_cfloat *)d += *(const pct_cfloat *)s; (*(int64_t *)(args[3] + k * steps[3] + j * c->cnt_sj))++
#include "index_each_impl.h"
    } else {
#define IX_BODY *(pct_cfloat *)d += alpha * *(const pct_cfloat *)s
#include "index_each_impl.h"
    }
}
#undef PCT_TPL_T
#define PCT_TPL_T pct_cdouble
static void ix_loop_cdouble(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    const ix_ctx *c = vctx;
    const int64_t n = c->n;
    const double alpha = c->alpha_d;
    if (c->op == IX_COPY) {
#define IX_BODY *(pct_cdouble *)d = *(const pct_cdouble *)s
#include "index_each_impl.h"
    } else if (c->op == IX_MUL) {
#define IX_BODY *(pct_cdouble *)d *= *(const pct_cdouble *)s
#include "index_each_impl.h"
    } else if (c->op == IX_MEAN) { /* scatter_reduce's mean: the sums and their counts (args[3]) */
#define IX_BODY *(pct_cdouble *)d += *(const pct_cdouble *)s; (*(int64_t *)(args[3] + k * steps[3] + j * c->cnt_sj))++
#include "index_each_impl.h"
    } else {
#define IX_BODY *(pct_cdouble *)d += alpha * *(const pct_cdouble *)s
#include "index_each_impl.h"
    }
}
#undef PCT_TPL_T

static pct_loop_fn ix_loop_of(int dtype, int op)
{
    if (dtype == PCT_COMPLEX64) return ix_loop_cfloat;
    if (dtype == PCT_COMPLEX128) return ix_loop_cdouble;
    if (dtype < PCT_COMPLEX64) return ix_loops[dtype];
    if (op != IX_COPY) return NULL; /* complex32 and float8: copies only */
    return ix_loops[pct_dtype_itemsize[dtype] == 1 ? PCT_UINT8 : PCT_INT32];
}

/* Runs the index loop over `shape`, each operand seen through its own element strides
 * (its storage offset kept). cnt may be NULL. ctx steps are in elements; converted here. */
int pct_ix_run(ix_ctx *ctx, int ndim, const int64_t *shape, pct_tensor *dst, const int64_t *dst_st, pct_tensor *src,
                  const int64_t *src_st, pct_tensor *idx, const int64_t *idx_st, pct_tensor *cnt, const int64_t *cnt_st,
                  bool serial)
{
    pct_tensor *base[4] = {dst, src, idx, cnt};
    const int64_t *st[4] = {dst_st, src_st, idx_st, cnt_st};
    pct_tensor *v[4] = {NULL, NULL, NULL, NULL};
    int nops = cnt ? 4 : 3, rc = -1;
    int64_t isz = pct_dtype_itemsize[dst->dtype];
    ctx->dst_si *= isz;
    ctx->dst_sj *= isz;
    ctx->src_si *= isz;
    ctx->src_sj *= isz;
    ctx->idx_step *= 8;
    ctx->cnt_sj *= 8;
    /* Note [Device indexing]: on a device, a 1-element CPU source goes by value, a 1-element CPU index or count is
     * copied over */
    const bool device = dst->device_type != PCT_CPU;
    bool by_value = false;
    uint64_t value = 0;
    pct_tensor *moved[4] = {NULL, NULL, NULL, NULL};
    if (device && src->device_type == PCT_CPU && src->numel == 1 && pct_dtype_itemsize[src->dtype] <= 8) {
        by_value = true;
        memcpy(&value, pct_tensor_data(src), (size_t)pct_dtype_itemsize[src->dtype]);
        base[1] = dst; /* a stand-in operand of the device (never read) */
        st[1] = dst_st;
    }
    for (int k = 1; device && k < nops; k++) {
        if (base[k]->device_type == dst->device_type && base[k]->device_index == dst->device_index) continue;
        if (base[k]->device_type != PCT_CPU || base[k]->numel != 1) {
            pct_error(PCT_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, "
                      "%s:%d and %s!", pct_device_type_name(dst->device_type), dst->device_index,
                      pct_device_type_name(base[k]->device_type));
            goto done;
        }
        if (!(moved[k] = pct_ix_on_device_of(base[k], dst))) goto done;
        base[k] = moved[k];
    }
    for (int k = 0; k < nops; k++)
        if (!(v[k] = pct_tensor_view_of(base[k], ndim, shape, st[k], base[k]->offset))) goto done;
    if (device) {
        pct_iter dit;
        pct_iter_config dcfg = {.out = v[0], .inplace = true, .ninputs = nops - 1, .inputs = {v[1], v[2], v[3]},
                                .compute_dtype = dst->dtype, .out_dtype = dst->dtype, .mixed_dtypes = true};
        if (pct_iter_build(&dit, &dcfg) < 0) goto done;
        rc = pct_ix_device_loop(ctx, &dit, by_value, value);
        pct_iter_release(&dit);
        goto done;
    }
    pct_iter it;
    pct_iter_config cfg = {.out = v[0], .inplace = true, .ninputs = nops - 1, .inputs = {v[1], v[2], v[3]},
                           .compute_dtype = dst->dtype, .out_dtype = dst->dtype, .mixed_dtypes = true};
    pct_loop_fn loop = ix_loop_of(dst->dtype, ctx->op);
    if (!loop) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"index_cpu\" not implemented for '%s'", pct_dtype_cpp_name[dst->dtype]);
        goto done;
    }
    if (pct_iter_build(&it, &cfg) < 0) goto done;
    if (ctx->n > 0) {
        if (serial) pct_iter_run_serial(&it, loop, ctx);
        else pct_iter_run_work(&it, loop, ctx, ctx->n); /* each element of the plan walks n index values */
    }
    pct_iter_release(&it);
    rc = 0;
done:
    for (int k = 0; k < 4; k++) {
        PCT_XDECREF(v[k]);
        PCT_XDECREF(moved[k]);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Checking indices and making element offsets
 * ------------------------------------------------------------------------------------- */

static void off_loop(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    off_ctx *c = vctx;
    /* the parameters read once: the stores below may alias *c (-fno-strict-aliasing) */
    const int64_t lo = c->lo, hi = c->hi, mul = c->mul;
    const bool in32 = c->in32, linear = c->linear, accumulate = c->accumulate;
    for (int64_t k = 0; k < dims[0]; k++) {
        const char *p = args[1] + k * steps[1];
        int64_t v = in32 ? (int64_t)*(const int32_t *)p : *(const int64_t *)p;
        int64_t *out = (int64_t *)(args[0] + k * steps[0]);
        if (v < lo || v >= hi) {
            int expected = 0;
            if (atomic_compare_exchange_strong(&c->err, &expected, 1)) c->bad = v;
            *out = 0;
            continue;
        }
        if (v < 0) {
            v += hi;
        }
        int64_t o;
        if (linear) {
            o = 0;
            for (int d = c->ndim - 1; d >= 0; d--) {
                o += (v % c->sizes[d]) * c->strides[d];
                v /= c->sizes[d];
            }
        } else {
            o = v * mul;
        }
        *out = accumulate ? *out + o : o;
    }
}

/* Runs off_loop writing `out` (int64) from `in` (int32/int64, broadcast to out). 0, or -1
 * with an exception; a bad value leaves c->err set and no exception. */
int pct_ix_off_run(pct_tensor *out, pct_tensor *in, off_ctx *c)
{
    c->in32 = in->dtype == PCT_INT32;
    if (out->numel == 0) return 0;
    if (out->device_type != PCT_CPU) return pct_ix_device_offsets(out, in, c); /* Note [Device indexing] */
    pct_iter it;
    pct_iter_config cfg = {.out = out, .inplace = true, .ninputs = 1, .inputs = {in}, .compute_dtype = PCT_INT64,
                           .out_dtype = PCT_INT64, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    pct_iter_run(&it, off_loop, c);
    pct_iter_release(&it);
    return 0;
}

/* A contiguous int64 copy of an int32/int64 index with every value checked to lie in
 * [lo, hi) (negatives wrapped by +hi). NULL with an exception, or NULL with *bad set and
 * *is_bad = 1 (no exception) so the caller raises its own message. */
pct_tensor *pct_ix_checked_index(pct_tensor *index, int64_t lo, int64_t hi, int64_t *bad, int *is_bad)
{
    *is_bad = 0;
    pct_tensor *r = pct_tensor_empty(index->ndim, index->sizes, PCT_INT64, index->device_type, index->device_index);
    if (!r) return NULL;
    off_ctx c = {.lo = lo, .hi = hi, .mul = 1};
    atomic_init(&c.err, 0);
    if (pct_ix_off_run(r, index, &c) < 0) { PCT_DECREF(r); return NULL; }
    if (atomic_load(&c.err)) {
        PCT_DECREF(r);
        *bad = c.bad;
        *is_bad = 1;
        return NULL;
    }
    return r;
}

