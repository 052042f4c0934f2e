/* index.c: advanced indexing (x[idx], x[mask] = v) and the index op family: index_select,
 * gather, scatter (+ reduce forms), scatter_add, scatter_reduce, index_add/copy/fill,
 * masked_fill/select/scatter, take, put_, nonzero, argwhere, where(condition), index_put_.
 *
 * Note [Index loops]: every op here that moves data through an index runs one inner loop,
 * ix_loop_<dtype>, through the loop machine (iter.h). The iteration covers the "outer"
 * positions (every dim but the indexed one, which is given size 1); at each outer position
 * the loop walks i in [0, n), reads j = idx[i] (an int64 already checked and wrapped), and
 * applies its op (copy, add, mul, max, min, mean) to
 *     dst + i*dst_si + j*dst_sj   and   src + i*src_si + j*src_sj.
 * gather-like ops write at i and read at j (dst_sj = src_si = 0); scatter-like ops write at j
 * and read at i. Advanced indexing precomputes one int64 element offset per index position
 * (Note [Advanced indexing]) and runs the same loop with n = 1 and a "restrided" view of the
 * indexed tensor whose indexed dims have stride 0. Because each outer position owns the
 * memory it writes along the indexed dim, scatter-like loops run in parallel without races;
 * the ones that accumulate through arbitrary offsets (index_put_ with accumulate, put_,
 * index_add_) run serially, in torch's order, so duplicate indices sum the same way.
 * Indices are checked before any loop runs (torch skips the check when nothing is read or
 * written, and so do we); the checking loop records a bad value in its context and the
 * exception is raised after it. Sources sharing memory with the written tensor raise as
 * torch's assert_no_overlap does, or are read from a copy when torch cannot tell.
 */
#include "../op.h"
#include "../error.h"
#include "../out.h"
#include "../iter.h"
#include "../../python/indexing.h"
#include "../../python/pyobjects.h"
#include "fill.h"
#include <math.h>
#include <stdatomic.h>
#ifdef _OPENMP
#include <omp.h>
#define IX_PRAGMA(x) _Pragma(#x)
#define IX_PARALLEL_FOR(cond) IX_PRAGMA(omp parallel for schedule(static) if (cond))
#else
#define IX_PARALLEL_FOR(cond)
#endif


#define SHAPE(buf, nd, sz) pct_shape_str((buf), sizeof(buf), (nd), (sz))

/* ---------------------------------------------------------------------------------------
 * Small shared helpers (join.c uses pct_index_to_out and pct_index_check_out too)
 * ------------------------------------------------------------------------------------- */

static long version_of(pct_tensor *t) { return atomic_load(&t->version->value); }
static void set_version(pct_tensor *t, long v) { atomic_store(&t->version->value, v); }

int pct_index_check_out(pct_call *c, pct_tensor *out, bool internal);

/* Hands back a freshly made result (version 0), or, for an out= call, copies it into out
 * (resized, same dtype required) and returns out. Steals res; NULL res passes through.
 * `check`: out may not overlap itself nor any tensor argument (the _unchecked form is for ops
 * torch lets write anywhere, Note [out= arguments]). */
static PyObject *to_out(pct_call *c, pct_tensor *res, bool check)
{
    if (!res) return NULL;
    pct_tensor *o = c->out;
    if (!o || c->inplace) {
        set_version(res, 0);
        return (PyObject *)res;
    }
    if (o->dtype != res->dtype) {
        if (c->op_index == PCT_OP_index_select || c->op_index == PCT_OP_masked_select)
            PyErr_Format(PyExc_RuntimeError, "%s(): self and result must have the same scalar type", c->op->sig.name);
        else
            pct_out_check_dtype(o, res->dtype);
        Py_DECREF(res);
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
    Py_DECREF(res);
    Py_INCREF(o);
    return (PyObject *)o;
fail:
    Py_DECREF(res);
    return NULL;
}

PyObject *pct_index_to_out(pct_call *c, pct_tensor *res);
PyObject *pct_index_to_out(pct_call *c, pct_tensor *res) { return to_out(c, res, true); }
PyObject *pct_index_to_out_unchecked(pct_call *c, pct_tensor *res);
PyObject *pct_index_to_out_unchecked(pct_call *c, pct_tensor *res) { return to_out(c, res, false); }

/* The result of an op that wrote `target` (self for an in-place call, else a new tensor): steals target.
 * In place: bumps self's version (v0 = its version before the write) and returns it; otherwise returns
 * the new tensor through the out= handling (`via_out`) or as it is, with version 0. */
static PyObject *ix_done(pct_call *c, pct_tensor *target, long v0, bool via_out)
{
    if (c->inplace) {
        set_version(target, v0 + 1);
        return (PyObject *)target;
    }
    if (via_out) return pct_index_to_out(c, target);
    set_version(target, 0);
    return (PyObject *)target;
}

/* The geometry of t with a 0-d tensor seen as 1-d of size 1 (as torch's gather/scatter do). */
static int geom(const pct_tensor *t, int64_t *sizes, int64_t *strides)
{
    if (t->ndim == 0) { sizes[0] = 1; strides[0] = 1; return 1; }
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    return t->ndim;
}

/* A contiguous copy of t (fresh version counter, version 0). */
static pct_tensor *clone_of(pct_tensor *t) { return pct_to_dtype(t, t->dtype, true); }

/* One element of dtype `dtype` holding a scalar, as bytes (for fills). */
static uint64_t scalar_bytes(int dtype, const pct_scalar *s)
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
static int check_no_overlap(const pct_tensor *dst, const pct_tensor *src)
{
    if (dst->storage != src->storage || dst->numel == 0 || src->numel == 0) return 0;
    /* the same tensor (or the same view of it) always overlaps fully */
    bool same = dst == src || (dst->offset == src->offset && dst->ndim == src->ndim &&
                               memcmp(dst->sizes, src->sizes, sizeof(int64_t) * (size_t)dst->ndim) == 0 &&
                               memcmp(dst->strides, src->strides, sizeof(int64_t) * (size_t)dst->ndim) == 0);
    if (same || (dense(dst) && dense(src) && dst->offset < src->offset + src->numel && src->offset < dst->offset + dst->numel)) {
        PyErr_SetString(PyExc_RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor "
                                            "refer to a single memory location. Please clone() the tensor before performing the operation.");
        return -1;
    }
    return 0;
}

/* src itself, or a copy when it shares memory with dst (new reference; NULL with exception). */
static pct_tensor *unaliased(pct_tensor *dst, pct_tensor *src)
{
    if (check_no_overlap(dst, src) < 0) return NULL;
    if (src->storage == dst->storage) return clone_of(src);
    Py_INCREF(src);
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

static int check_written(const pct_tensor *t, const char *warn_op)
{
    if (!internal_overlap(t)) return 0;
    if (warn_op) {
        char msg[320];
        snprintf(msg, sizeof msg, "Use of %s on expanded tensors is deprecated. Please clone() the tensor before performing "
                 "this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor", warn_op);
        return PyErr_WarnEx(PyExc_UserWarning, msg, 1);
    }
    PyErr_SetString(PyExc_RuntimeError, "unsupported operation: more than one element of the written-to tensor refers to a single "
                                        "memory location. Please clone() the tensor before performing the operation.");
    return -1;
}

/* For out= calls: out may not have internal overlap nor share memory with a tensor argument. */
int pct_index_check_out(pct_call *c, pct_tensor *out, bool internal);
int pct_index_check_out(pct_call *c, pct_tensor *out, bool internal)
{
    if (internal && check_written(out, NULL) < 0) return -1;
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (v->none || i == sig->out_index) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR) {
            if (check_no_overlap(out, v->t) < 0) return -1;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST) {
            Py_ssize_t n = PySequence_Fast_GET_SIZE(v->obj);
            PyObject **items = PySequence_Fast_ITEMS(v->obj);
            for (Py_ssize_t k = 0; k < n; k++)
                if (check_no_overlap(out, (pct_tensor *)items[k]) < 0) return -1;
        }
    }
    return 0;
}

static int warn_uint8_index(void)
{
    return PyErr_WarnEx(PyExc_UserWarning, "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.", 1);
}

/* ---------------------------------------------------------------------------------------
 * The index loop (Note [Index loops])
 * ------------------------------------------------------------------------------------- */

enum { IX_COPY, IX_ADD, IX_MUL, IX_MAX, IX_MIN, IX_MEAN };

typedef struct ix_ctx {
    int op;
    int64_t n;                        /* inner length */
    int64_t idx_step;                 /* between successive index entries */
    int64_t dst_si, dst_sj, src_si, src_sj, cnt_sj; /* elements in the caller, bytes in the loop */
    double alpha_d;
    int64_t alpha_i;
} ix_ctx;

static inline bool ix_isnan(double v) { return isnan(v); }

/* BODY sees d (destination element), s (source element), j (index value) and k (outer
 * position). n == 1 (advanced indexing, take, put) has its own loop without the inner one. */
#define IX_EACH(T, ...)                                                                            \
    if (n == 1 && steps[2] == 0) {                                                              \
        /* one index value for the whole run (the inner dims of x[idx]): plain strided loop */  \
        const int64_t j = *(const int64_t *)args[2];                                            \
        char *restrict d0 = args[0] + j * c->dst_sj;                                            \
        const char *restrict s0 = args[1] + j * c->src_sj;                                      \
        const int64_t sd = steps[0], ss = steps[1];                                             \
        if (c->op == IX_COPY && sd == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {         \
            memcpy(d0, s0, (size_t)dims[0] * sizeof(T));                                        \
        } else if (sd == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {                      \
            for (int64_t k = 0; k < dims[0]; k++) {                                             \
                char *d = d0 + k * (int64_t)sizeof(T);                                          \
                const char *s = s0 + k * (int64_t)sizeof(T);                                    \
                (void)s;                                                                        \
                __VA_ARGS__;                                                                    \
            }                                                                                   \
        } else {                                                                                \
            for (int64_t k = 0; k < dims[0]; k++) {                                             \
                char *d = d0 + k * sd;                                                          \
                const char *s = s0 + k * ss;                                                    \
                (void)s;                                                                        \
                __VA_ARGS__;                                                                    \
            }                                                                                   \
        }                                                                                       \
    } else if (n == 1 && c->op == IX_COPY && c->dst_sj == 0 && steps[0] == (int64_t)sizeof(T) && \
               steps[1] == 0 && steps[2] == (int64_t)sizeof(int64_t)) {                         \
        /* a gather into a contiguous run: dst[k] = src[L[k]] */                                \
        T *restrict dd = (T *)args[0];                                                          \
        const int64_t *restrict jp = (const int64_t *)args[2];                                  \
        const char *sb = args[1];                                                               \
        for (int64_t k = 0; k < dims[0]; k++) dd[k] = *(const T *)(sb + jp[k] * c->src_sj);     \
    } else if (n == 1) {                                                                        \
        for (int64_t k = 0; k < dims[0]; k++) {                                                 \
            int64_t j = *(const int64_t *)(args[2] + k * steps[2]);                             \
            char *d = args[0] + k * steps[0] + j * c->dst_sj;                                   \
            const char *s = args[1] + k * steps[1] + j * c->src_sj;                             \
            (void)s;                                                                            \
            __VA_ARGS__;                                                                        \
        }                                                                                       \
    } else {                                                                                    \
        for (int64_t k = 0; k < dims[0]; k++) {                                                 \
            char *dp = args[0] + k * steps[0];                                                  \
            const char *sp = args[1] + k * steps[1];                                            \
            const char *ip = args[2] + k * steps[2];                                            \
            for (int64_t i = 0; i < n; i++) {                                                   \
                int64_t j = *(const int64_t *)(ip + i * c->idx_step);                           \
                char *d = dp + i * c->dst_si + j * c->dst_sj;                                   \
                const char *s = sp + i * c->src_si + j * c->src_sj;                             \
                (void)s;                                                                        \
                __VA_ARGS__;                                                                    \
            }                                                                                   \
        }                                                                                       \
    }

#define IX_LOOP(E, N, T, C, S)                                                                  \
    static void ix_loop_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx)  \
    {                                                                                           \
        const ix_ctx *c = vctx;                                                                 \
        const int64_t n = c->n;                                                                 \
        const C alpha = pct_dtype_is_floating(PCT_##E) ? (C)c->alpha_d : (C)c->alpha_i;         \
        switch (c->op) {                                                                        \
        case IX_COPY:                                                                           \
            IX_EACH(T, *(T *)d = *(const T *)s) break;                                             \
        case IX_ADD:                                                                            \
            IX_EACH(T, *(T *)d = PCT_FROM_COMPUTE_##E(PCT_TO_COMPUTE_##E(*(T *)d) +                \
                                                   alpha * PCT_TO_COMPUTE_##E(*(const T *)s))) break; \
        case IX_MUL:                                                                            \
            IX_EACH(T, *(T *)d = PCT_FROM_COMPUTE_##E(PCT_TO_COMPUTE_##E(*(T *)d) *                \
                                                   PCT_TO_COMPUTE_##E(*(const T *)s))) break;   \
        case IX_MAX:                                                                            \
            IX_EACH(T, C a_ = PCT_TO_COMPUTE_##E(*(T *)d), b_ = PCT_TO_COMPUTE_##E(*(const T *)s); \
                    if (ix_isnan((double)b_) || b_ > a_) *(T *)d = *(const T *)s) break;        \
        case IX_MIN:                                                                            \
            IX_EACH(T, C a_ = PCT_TO_COMPUTE_##E(*(T *)d), b_ = PCT_TO_COMPUTE_##E(*(const T *)s); \
                    if (ix_isnan((double)b_) || b_ < a_) *(T *)d = *(const T *)s) break;        \
        case IX_MEAN:                                                                           \
            IX_EACH(T, *(T *)d = PCT_FROM_COMPUTE_##E(PCT_TO_COMPUTE_##E(*(T *)d) +                \
                                                   PCT_TO_COMPUTE_##E(*(const T *)s));          \
                    (*(int64_t *)(args[3] + k * steps[3] + j * c->cnt_sj))++) break;            \
        }                                                                                       \
    }
PCT_FORALL_ALL_DTYPES(IX_LOOP) /* index_select and indexing copy uint16/32/64 elements */

static const pct_loop_fn ix_loops[PCT_NUM_DTYPES] = {
#define IX_ENTRY(E, N, T, C, S) ix_loop_##N,
    PCT_FORALL_ALL_DTYPES(IX_ENTRY)
#undef IX_ENTRY
};

/* Runs the index loop over `shape`, each operand seen through its own element strides
 * (its storage offset kept). cnt may be NULL. ctx steps are in elements; converted here. */
static int ix_run(ix_ctx *ctx, int ndim, const int64_t *shape, pct_tensor *dst, const int64_t *dst_st, pct_tensor *src,
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
    for (int k = 0; k < nops; k++)
        if (!(v[k] = pct_tensor_view_of(base[k], ndim, shape, st[k], base[k]->offset))) goto done;
    pct_iter it;
    pct_iter_config cfg = {.out = v[0], .inplace = true, .ninputs = nops - 1, .inputs = {v[1], v[2], v[3]},
                           .compute_dtype = dst->dtype, .out_dtype = dst->dtype, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) goto done;
    if (ctx->n > 0) {
        if (serial) pct_iter_run_serial(&it, ix_loops[dst->dtype], ctx);
        else pct_iter_run(&it, ix_loops[dst->dtype], ctx);
    }
    pct_iter_release(&it);
    rc = 0;
done:
    for (int k = 0; k < 4; k++) Py_XDECREF(v[k]);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Checking indices and making element offsets
 * ------------------------------------------------------------------------------------- */

typedef struct off_ctx {
    int64_t lo, hi;       /* valid values are [lo, hi); negative ones get hi added */
    int64_t mul;          /* offset = value * mul (dim mode) */
    int accumulate;       /* add to the output instead of storing */
    int in32;             /* the input is int32 (else int64) */
    int linear;           /* value is a row-major linear index into ndim/sizes/strides */
    int ndim;
    const int64_t *sizes, *strides;
    atomic_int err;
    int64_t bad;
} off_ctx;

static void off_loop(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    off_ctx *c = vctx;
    for (int64_t k = 0; k < dims[0]; k++) {
        const char *p = args[1] + k * steps[1];
        int64_t v = c->in32 ? (int64_t)*(const int32_t *)p : *(const int64_t *)p;
        int64_t *out = (int64_t *)(args[0] + k * steps[0]);
        if (v < c->lo || v >= c->hi) {
            int expected = 0;
            if (atomic_compare_exchange_strong(&c->err, &expected, 1)) c->bad = v;
            *out = 0;
            continue;
        }
        if (v < 0) {
            v += c->hi;
        }
        int64_t o;
        if (c->linear) {
            o = 0;
            for (int d = c->ndim - 1; d >= 0; d--) {
                o += (v % c->sizes[d]) * c->strides[d];
                v /= c->sizes[d];
            }
        } else {
            o = v * c->mul;
        }
        *out = c->accumulate ? *out + o : o;
    }
}

/* Runs off_loop writing `out` (int64) from `in` (int32/int64, broadcast to out). 0, or -1
 * with an exception; a bad value leaves c->err set and no exception. */
static int off_run(pct_tensor *out, pct_tensor *in, off_ctx *c)
{
    c->in32 = in->dtype == PCT_INT32;
    if (out->numel == 0) return 0;
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
static pct_tensor *checked_index(pct_tensor *index, int64_t lo, int64_t hi, int64_t *bad, int *is_bad)
{
    *is_bad = 0;
    pct_tensor *r = pct_tensor_empty(index->ndim, index->sizes, PCT_INT64, PCT_CPU, -1);
    if (!r) return NULL;
    off_ctx c = {.lo = lo, .hi = hi, .mul = 1};
    atomic_init(&c.err, 0);
    if (off_run(r, index, &c) < 0) { Py_DECREF(r); return NULL; }
    if (atomic_load(&c.err)) {
        Py_DECREF(r);
        *bad = c.bad;
        *is_bad = 1;
        return NULL;
    }
    return r;
}

static bool is_index_dtype(int d) { return d == PCT_INT64 || d == PCT_INT32; }

/* ---------------------------------------------------------------------------------------
 * nonzero and mask compaction
 * ------------------------------------------------------------------------------------- */

#define NZ_MAX_CHUNKS 256

/* A contiguous bool tensor with t's truth values (t itself when it already is one). */
static pct_tensor *bool_contiguous(pct_tensor *t)
{
    if ((t->dtype == PCT_BOOL || t->dtype == PCT_UINT8) && pct_tensor_is_contiguous(t)) { Py_INCREF(t); return t; }
    pct_tensor *m = pct_tensor_empty(t->ndim, t->sizes, PCT_BOOL, PCT_CPU, -1);
    if (m && pct_copy_(m, t) < 0) Py_CLEAR(m);
    return m;
}

/* Splits [0, n) into chunks and counts the set bytes of m in each: start[k] is where chunk
 * k's output begins; returns the total. */
static int nz_chunks(int64_t n)
{
    int nch = 1;
    (void)n;
#ifdef _OPENMP
    if (n >= PCT_PARALLEL_GRAIN && !omp_in_parallel()) {
        nch = omp_get_max_threads() * 4;
        if (nch > NZ_MAX_CHUNKS) nch = NZ_MAX_CHUNKS;
        if (nch < 1) nch = 1;
    }
#endif
    return nch;
}

static int64_t nz_count(const uint8_t *m, int64_t n, int nch, int64_t *start)
{
    int64_t cnt[NZ_MAX_CHUNKS];
    IX_PARALLEL_FOR(nch > 1)
    for (int ch = 0; ch < nch; ch++) {
        int64_t b = n * ch / nch, e = n * (ch + 1) / nch, s = 0;
        for (int64_t i = b; i < e; i++) s += m[i] != 0;
        cnt[ch] = s;
    }
    int64_t total = 0;
    for (int ch = 0; ch < nch; ch++) { start[ch] = total; total += cnt[ch]; }
    return total;
}

/* Coordinates of the nonzero elements of t: (count, ndim) int64, or (ndim, count) when
 * transposed. t of 0 dims is seen as 1-d when as_1d is set. */
static pct_tensor *nonzero_impl(pct_tensor *t, bool transposed, bool as_1d)
{
    pct_tensor *m = bool_contiguous(t);
    if (!m) return NULL;
    int nd = t->ndim;
    int64_t sizes[PCT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nd);
    if (nd == 0 && as_1d) { nd = 1; sizes[0] = 1; }
    int64_t n = t->numel, start[NZ_MAX_CHUNKS];
    const uint8_t *md = (const uint8_t *)pct_tensor_data(m);
    int nch = nz_chunks(n);
    int64_t total;
    Py_BEGIN_ALLOW_THREADS
    total = nz_count(md, n, nch, start);
    Py_END_ALLOW_THREADS
    int64_t rs[2] = {transposed ? nd : total, transposed ? total : nd};
    pct_tensor *r = pct_tensor_empty(2, rs, PCT_INT64, PCT_CPU, -1);
    if (!r) { Py_DECREF(m); return NULL; }
    int64_t *out = (int64_t *)pct_tensor_data(r);
    int64_t rstride = transposed ? 1 : nd, dstride = transposed ? total : 1;
    if (total == 0) nch = 0; /* nothing to write (and sizes may hold zeros) */
    Py_BEGIN_ALLOW_THREADS
    IX_PARALLEL_FOR(nch > 1)
    for (int ch = 0; ch < nch; ch++) {
        int64_t b = n * ch / nch, e = n * (ch + 1) / nch, pos = start[ch];
        if (b == e) continue;
        int64_t co[PCT_MAX_DIMS], rem = b;
        for (int d = nd - 1; d >= 0; d--) { co[d] = rem % sizes[d]; rem /= sizes[d]; }
        if (nd == 0) continue;
        int64_t last = sizes[nd - 1], i = b;
        while (i < e) {
            /* the rest of the current row of the last dim */
            int64_t c0 = co[nd - 1], row_end = i + (last - c0);
            if (row_end > e) row_end = e;
            for (int64_t q = i; q < row_end; q++) {
                if (md[q]) {
                    co[nd - 1] = c0 + (q - i);
                    for (int d = 0; d < nd; d++) out[pos * rstride + d * dstride] = co[d];
                    pos++;
                }
            }
            if (row_end >= e) break;
            i = row_end;
            co[nd - 1] = 0;
            for (int d = nd - 2; d >= 0; d--) {
                if (++co[d] < sizes[d]) break;
                co[d] = 0;
            }
        }
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(m);
    return r;
}

/* The rows of a (k, count) tensor as a tuple of 1-d views. */
static PyObject *rows_tuple(pct_tensor *r)
{
    int64_t k = r->sizes[0], cnt = r->sizes[1];
    PyObject *tup = PyTuple_New((Py_ssize_t)k);
    for (int64_t i = 0; tup && i < k; i++) {
        int64_t st = 1;
        pct_tensor *row = pct_tensor_view_of(r, 1, &cnt, &st, r->offset + i * r->strides[0]);
        if (!row) { Py_CLEAR(tup); break; }
        Py_CLEAR(row->base); /* the rows stand alone, as torch's results do */
        PyTuple_SET_ITEM(tup, (Py_ssize_t)i, (PyObject *)row);
    }
    return tup;
}

PyObject *pct_cpu_nonzero(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    bool as_tuple = pct_arg(c, "as_tuple")->b;
    if (as_tuple && c->out) {
        PyErr_SetString(PyExc_RuntimeError, "nonzero does not support the out kwarg when as_tuple is True");
        return NULL;
    }
    if (as_tuple) {
        pct_tensor *r = nonzero_impl(t, true, true);
        if (!r) return NULL;
        PyObject *tup = rows_tuple(r);
        Py_DECREF(r);
        return tup;
    }
    if (c->out && c->out->dtype != PCT_INT64) {
        PyErr_Format(PyExc_RuntimeError, "nonzero: Expected out tensor to have scalar type Long but got scalar type%s",
                     pct_dtype_cpp_name[c->out->dtype]);
        return NULL;
    }
    return pct_index_to_out(c, nonzero_impl(t, false, false));
}

PyObject *pct_cpu_argwhere(pct_call *c) { return pct_index_to_out(c, nonzero_impl(c->v[0].t, false, false)); }

PyObject *pct_cpu_where_cond(pct_call *c)
{
    pct_tensor *r = nonzero_impl(c->v[0].t, true, true);
    if (!r) return NULL;
    PyObject *tup = rows_tuple(r);
    Py_DECREF(r);
    return tup;
}

/* ---------------------------------------------------------------------------------------
 * masked_fill / masked_select / masked_scatter
 * ------------------------------------------------------------------------------------- */

typedef struct mf_ctx { uint64_t value; int isz; } mf_ctx;

#define MF_BODY(W)                                                                              \
    {                                                                                           \
        W v;                                                                                    \
        memcpy(&v, &c->value, sizeof v);                                                        \
        for (int64_t k = 0; k < dims[0]; k++)                                                   \
            if (*(const uint8_t *)(args[1] + k * steps[1])) *(W *)(args[0] + k * steps[0]) = v; \
    }

static void mf_loop(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    const mf_ctx *c = vctx;
    switch (c->isz) {
    case 1: MF_BODY(uint8_t) break;
    case 2: MF_BODY(uint16_t) break;
    case 4: MF_BODY(uint32_t) break;
    default: MF_BODY(uint64_t) break;
    }
}

/* dst[mask] = s, mask (bool or uint8) broadcast to dst's shape. */
static int masked_fill_run(pct_tensor *dst, pct_tensor *mask, const pct_scalar *s)
{
    pct_iter it;
    pct_iter_config cfg = {.out = dst, .inplace = true, .ninputs = 1, .inputs = {mask}, .compute_dtype = dst->dtype,
                           .out_dtype = dst->dtype, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    mf_ctx c = {.value = scalar_bytes(dst->dtype, s), .isz = pct_dtype_itemsize[dst->dtype]};
    pct_iter_run(&it, mf_loop, &c);
    pct_iter_release(&it);
    return 0;
}

/* masked_fill and masked_scatter: `run` writes dst where mask (broadcast) is set, from arg. In place it
 * writes self (after the written-to checks, warning as `warn_op`); otherwise a copy of self broadcast
 * with mask, returned through the out= handling. */
typedef int (*masked_write_fn)(pct_tensor *dst, pct_tensor *mask, const void *arg);
static PyObject *masked_apply(pct_call *c, pct_tensor *self, pct_tensor *mask, const char *warn_op, masked_write_fn run,
                              const void *arg)
{
    if (c->inplace) {
        long v = version_of(self);
        if (check_written(self, warn_op) < 0 || run(self, mask, arg) < 0) return NULL;
        Py_INCREF(self);
        return ix_done(c, self, v, false);
    }
    int nd;
    int64_t shape[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, &nd, shape) < 0) return NULL;
    pct_tensor *r = pct_tensor_empty(nd, shape, self->dtype, PCT_CPU, -1);
    if (!r) return NULL;
    if (pct_copy_(r, self) < 0 || run(r, mask, arg) < 0) { Py_DECREF(r); return NULL; }
    return pct_index_to_out(c, r);
}

static int mf_apply(pct_tensor *dst, pct_tensor *mask, const void *s) { return masked_fill_run(dst, mask, s); }

PyObject *pct_cpu_masked_fill(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *mask = c->v[1].t, *value = c->v[2].t;
    if (mask->dtype != PCT_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype %s", pct_dtype_cpp_type_name[mask->dtype]);
        return NULL;
    }
    if (value->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                     value->ndim);
        return NULL;
    }
    pct_scalar s;
    pct_tensor_item_scalar(value, &s);
    if (pct_scalar_check_fits(&s, self->dtype) < 0) return NULL;
    return masked_apply(c, self, mask, "masked_fill_", mf_apply, &s);
}

/* Broadcast views of a and b (new references) to their common shape. */
static int broadcast_pair(pct_tensor *a, pct_tensor *b, pct_tensor **ea, pct_tensor **eb)
{
    int nd;
    int64_t shape[PCT_MAX_DIMS], sa[PCT_MAX_DIMS], sb[PCT_MAX_DIMS];
    *ea = *eb = NULL;
    if (pct_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, &nd, shape) < 0) return -1;
    for (int d = 0; d < nd; d++) {
        int da = a->ndim - nd + d, db = b->ndim - nd + d;
        sa[d] = (da < 0 || a->sizes[da] == 1) ? 0 : a->strides[da];
        sb[d] = (db < 0 || b->sizes[db] == 1) ? 0 : b->strides[db];
    }
    *ea = pct_tensor_view_of(a, nd, shape, sa, a->offset);
    *eb = pct_tensor_view_of(b, nd, shape, sb, b->offset);
    if (!*ea || !*eb) { Py_CLEAR(*ea); Py_CLEAR(*eb); return -1; }
    return 0;
}

#define COMPACT_BODY(W)                                                                         \
    {                                                                                           \
        const W *restrict in = (const W *)xd;                                                   \
        W *restrict out = (W *)od;                                                              \
        for (int64_t i = b; i < e; i++)                                                         \
            if (md[i]) out[pos++] = in[i];                                                      \
    }

/* The elements of x where m is set, in row-major order (x and m of one shape). */
static pct_tensor *compact(pct_tensor *xs, pct_tensor *ms)
{
    pct_tensor *x = NULL, *m = NULL, *r = NULL;
    PCT_TRY(x = pct_contiguous(xs));
    PCT_TRY(m = bool_contiguous(ms));
    {
        int64_t n = x->numel, start[NZ_MAX_CHUNKS], total;
        int nch = nz_chunks(n);
        const uint8_t *md = (const uint8_t *)pct_tensor_data(m);
        total = nz_count(md, n, nch, start);
        PCT_TRY(r = pct_tensor_empty(1, &total, xs->dtype, PCT_CPU, -1));
        const char *xd = pct_tensor_data(x);
        char *od = pct_tensor_data(r);
        int isz = pct_dtype_itemsize[xs->dtype];
        Py_BEGIN_ALLOW_THREADS
        IX_PARALLEL_FOR(nch > 1)
        for (int ch = 0; ch < nch; ch++) {
            int64_t b = n * ch / nch, e = n * (ch + 1) / nch, pos = start[ch];
            switch (isz) {
            case 1: COMPACT_BODY(uint8_t) break;
            case 2: COMPACT_BODY(uint16_t) break;
            case 4: COMPACT_BODY(uint32_t) break;
            default: COMPACT_BODY(uint64_t) break;
            }
        }
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(x);
    Py_DECREF(m);
    return r;
fail:
    Py_XDECREF(x);
    Py_XDECREF(m);
    return NULL;
}

PyObject *pct_cpu_masked_select(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *mask = c->v[1].t;
    pct_tensor *es = NULL, *em = NULL, *r = NULL;
    if (mask->dtype != PCT_BOOL) PCT_FAIL(PyExc_RuntimeError, "masked_select: expected BoolTensor for mask");
    PCT_TRY_INT(broadcast_pair(self, mask, &es, &em));
    r = compact(es, em);
    Py_DECREF(es);
    Py_DECREF(em);
    return pct_index_to_out(c, r);
fail:
    return NULL;
}

/* masked_scatter: dst[k] = source[pos[k]] where pos[k] >= 0 (the running count of the mask). */
typedef struct ms_ctx { const char *src; int isz; } ms_ctx;

#define MS_BODY(W)                                                                              \
    for (int64_t k = 0; k < dims[0]; k++) {                                                     \
        int64_t p = *(const int64_t *)(args[1] + k * steps[1]);                                 \
        if (p >= 0) *(W *)(args[0] + k * steps[0]) = ((const W *)c->src)[p];                    \
    }

static void ms_loop(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    const ms_ctx *c = vctx;
    switch (c->isz) {
    case 1: MS_BODY(uint8_t) break;
    case 2: MS_BODY(uint16_t) break;
    case 4: MS_BODY(uint32_t) break;
    default: MS_BODY(uint64_t) break;
    }
}

#define MS_CONTIG(W)                                                                            \
    for (int64_t i = b; i < e; i++)                                                             \
        if (md[i]) ((W *)dd)[i] = ((const W *)sd)[p++];

static int masked_scatter_into(pct_tensor *dst, pct_tensor *mask, pct_tensor *source)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    int rc = -1;
    pct_tensor *em = NULL, *m = NULL, *pos = NULL, *src = NULL;
    int nd;
    int64_t shape[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(dst->ndim, dst->sizes, mask->ndim, mask->sizes, &nd, shape) < 0 || nd != dst->ndim ||
        memcmp(shape, dst->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
        PyErr_Clear();
        PCT_FAIL(PyExc_RuntimeError, "The expanded size of the tensor must match: mask of shape %s cannot be broadcast to self of shape %s",
                 SHAPE(b1, mask->ndim, mask->sizes), SHAPE(b2, dst->ndim, dst->sizes));
    }
    for (int d = 0; d < nd; d++) {
        int dm = mask->ndim - nd + d;
        st[d] = (dm < 0 || mask->sizes[dm] == 1) ? 0 : mask->strides[dm];
    }
    PCT_TRY(em = pct_tensor_view_of(mask, nd, shape, st, mask->offset));
    PCT_TRY(m = bool_contiguous(em));
    PCT_TRY(src = pct_contiguous(source));
    {
        int64_t n = m->numel, start[NZ_MAX_CHUNKS], total;
        int nch = nz_chunks(n);
        const uint8_t *md = (const uint8_t *)pct_tensor_data(m);
        Py_BEGIN_ALLOW_THREADS
        total = nz_count(md, n, nch, start);
        Py_END_ALLOW_THREADS
        if (total > source->numel) PCT_FAIL(PyExc_RuntimeError, "Number of elements of source < number of ones in mask");
        if (pct_tensor_is_contiguous(dst)) {
            /* one pass: the k-th set position takes source element k */
            char *dd = pct_tensor_data(dst);
            const char *sd = pct_tensor_data(src);
            /* a source sharing dst's memory is read as torch's serial loop reads it */
            int fch = src->storage == dst->storage ? 1 : nch;
            if (fch == 1) start[0] = 0;
            Py_BEGIN_ALLOW_THREADS
            IX_PARALLEL_FOR(fch > 1)
            for (int ch = 0; ch < fch; ch++) {
                int64_t b = n * ch / fch, e = n * (ch + 1) / fch, p = start[ch];
                switch (pct_dtype_itemsize[dst->dtype]) {
                case 1: MS_CONTIG(uint8_t) break;
                case 2: MS_CONTIG(uint16_t) break;
                case 4: MS_CONTIG(uint32_t) break;
                default: MS_CONTIG(uint64_t) break;
                }
            }
            Py_END_ALLOW_THREADS
            rc = 0;
            goto fail;
        }
        PCT_TRY(pos = pct_tensor_empty(nd, shape, PCT_INT64, PCT_CPU, -1));
        int64_t *pd = (int64_t *)pct_tensor_data(pos);
        IX_PARALLEL_FOR(nch > 1)
        for (int ch = 0; ch < nch; ch++) {
            int64_t b = n * ch / nch, e = n * (ch + 1) / nch, p = start[ch];
            for (int64_t i = b; i < e; i++) pd[i] = md[i] ? p++ : -1;
        }
    }
    {
        pct_iter it;
        pct_iter_config cfg = {.out = dst, .inplace = true, .ninputs = 1, .inputs = {pos}, .compute_dtype = dst->dtype,
                               .out_dtype = dst->dtype, .mixed_dtypes = true, .keep_order = true};
        PCT_TRY_INT(pct_iter_build(&it, &cfg));
        ms_ctx c = {.src = pct_tensor_data(src), .isz = pct_dtype_itemsize[dst->dtype]};
        if (src->storage == dst->storage) pct_iter_run_serial(&it, ms_loop, &c); /* row-major, as torch reads it */
        else pct_iter_run(&it, ms_loop, &c);
        pct_iter_release(&it);
    }
    rc = 0;
fail:
    Py_XDECREF(em); Py_XDECREF(m); Py_XDECREF(pos); Py_XDECREF(src);
    return rc;
}

static int ms_apply(pct_tensor *dst, pct_tensor *mask, const void *source)
{
    return masked_scatter_into(dst, mask, (pct_tensor *)source);
}

PyObject *pct_cpu_masked_scatter(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *mask = c->v[1].t, *source = c->v[2].t;
    if (mask->dtype != PCT_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter_ only supports boolean masks, but got mask with dtype %s", pct_dtype_cpp_name[mask->dtype]);
        return NULL;
    }
    if (self->dtype != source->dtype) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                     pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
        return NULL;
    }
    return masked_apply(c, self, mask, NULL, ms_apply, source);
}

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
    for (int i = 0; i < a->n; i++) Py_CLEAR(a->idx[i]);
    Py_CLEAR(a->L);
}

/* Checks a mask covering dims [p, p+k) of self; -1 with IndexError. */
static int check_mask(pct_tensor *self, pct_tensor *mask, int p)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (p + mask->ndim > self->ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d (got %d)", self->ndim, p + mask->ndim);
        return -1;
    }
    for (int j = 0; j < mask->ndim; j++) {
        if (mask->sizes[j] != self->sizes[p + j]) {
            PyErr_Format(PyExc_IndexError, "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at index %d",
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
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d (got %d)", self->ndim, nindices);
        return -1;
    }
    for (int p = 0; p < nindices; p++) {
        pct_tensor *ix = indices[p];
        if (!ix) continue;
        int dt = ix->dtype;
        if (dt == PCT_BOOL || dt == PCT_UINT8) {
            if (dt == PCT_UINT8 && warn_uint8_index() < 0) return -1;
            pct_tensor *nz;
            int k;
            if (ix->ndim == 0) {
                /* a scalar mask indexes a size-1 dim made for it by the caller */
                if (self->sizes[p] != 1) {
                    PyErr_Format(PyExc_IndexError, "The shape of the mask [] at index 0 does not match the shape of the indexed tensor %s at index %d",
                                 SHAPE(b1, self->ndim, self->sizes), p);
                    return -1;
                }
                nz = nonzero_impl(ix, true, true);
                k = 1;
            } else {
                if (check_mask(self, ix, p) < 0) return -1;
                nz = nonzero_impl(ix, true, false);
                k = ix->ndim;
            }
            if (!nz) return -1;
            PyObject *rows = rows_tuple(nz);
            Py_DECREF(nz);
            if (!rows) return -1;
            for (int j = 0; j < k; j++) {
                a->dims[a->n] = p + j;
                a->idx[a->n] = (pct_tensor *)PyTuple_GET_ITEM(rows, j);
                Py_INCREF(a->idx[a->n]);
                a->n++;
            }
            Py_DECREF(rows);
            p += k - 1;
        } else if (is_index_dtype(dt)) {
            a->dims[a->n] = p;
            a->idx[a->n] = ix;
            Py_INCREF(ix);
            a->n++;
        } else {
            PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
            return -1;
        }
    }
    /* broadcast the index tensors */
    a->bnd = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t prev[PCT_MAX_DIMS];
        memcpy(prev, a->bshape, sizeof(int64_t) * (size_t)a->bnd); /* the output may not alias an input */
        if (pct_broadcast_shapes(a->bnd, prev, a->idx[i]->ndim, a->idx[i]->sizes, &a->bnd, a->bshape) < 0) {
            PyErr_Clear();
            PyObject *msg = PyUnicode_FromString("shape mismatch: indexing tensors could not be broadcast together with shapes ");
            for (int j = 0; msg && j < a->n; j++) {
                PyObject *m2 = PyUnicode_FromFormat("%U%s%s", msg, j ? ", " : "", SHAPE(b1, a->idx[j]->ndim, a->idx[j]->sizes));
                Py_SETREF(msg, m2);
            }
            if (msg) { PyErr_SetObject(PyExc_IndexError, msg); Py_DECREF(msg); }
            return -1;
        }
    }
    int64_t bnumel = 1;
    for (int b = 0; b < a->bnd; b++) bnumel *= a->bshape[b];
    for (int i = 0; i < a->n; i++) {
        if (self->sizes[a->dims[i]] == 0 && bnumel > 0) {
            PyErr_SetString(PyExc_IndexError, "index is out of bounds for dimension with size 0");
            return -1;
        }
    }
    /* the result's shape */
    bool indexed[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < a->n; i++) indexed[a->dims[i]] = true;
    bool adjacent = a->n == 0 || a->dims[a->n - 1] - a->dims[0] == a->n - 1;
    int r = 0, bpos;
    if (self->ndim - a->n + a->bnd > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_IndexError, "pyctorch supports at most %d dimensions", PCT_MAX_DIMS);
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
    if (!(a->L = pct_tensor_empty(a->bnd, a->bshape, PCT_INT64, PCT_CPU, -1))) return -1;
    for (int d = 0; d < r; d++) a->lstride[d] = 0;
    for (int b = 0; b < a->bnd; b++) a->lstride[bpos + b] = a->L->strides[b];
    int64_t rnumel = 1;
    for (int d = 0; d < r; d++) rnumel *= a->rshape[d];
    /* an empty result reads nothing: torch checks no index then (its check is in the kernel) */
    for (int i = 0; i < a->n && rnumel > 0; i++) {
        int64_t size = self->sizes[a->dims[i]];
        off_ctx c = {.lo = -size, .hi = size, .mul = self->strides[a->dims[i]], .accumulate = i > 0};
        atomic_init(&c.err, 0);
        if (off_run(a->L, a->idx[i], &c) < 0) return -1;
        if (atomic_load(&c.err)) {
            PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld", (long long)c.bad, i,
                         (long long)size);
            return -1;
        }
    }
    if (a->n == 0) {
        /* no index at all: L is a single 0 */
        *(int64_t *)pct_tensor_data(a->L) = 0;
    }
    return 0;
}

PyObject *pct_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
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
            if (indices[0]->dtype == PCT_UINT8 && warn_uint8_index() < 0) return NULL;
            return (PyObject *)compact(self, indices[0]);
        }
    }
    if (adv_prepare(&a, self, nindices, indices) < 0 || adv_offsets(&a, self) < 0) goto fail;
    PCT_TRY(r = pct_tensor_empty(a.rnd, a.rshape, self->dtype, PCT_CPU, -1));
    {
        ix_ctx c = {.op = IX_COPY, .n = 1, .src_sj = 1};
        PCT_TRY_INT(ix_run(&c, a.rnd, a.rshape, r, r->strides, self, a.rstride, a.L, a.lstride, NULL, NULL, false));
    }
    adv_release(&a);
    return (PyObject *)r;
fail:
    adv_release(&a);
    Py_XDECREF(r);
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
            PyErr_SetString(PyExc_RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char");
            return -1;
        }
        if (warn_uint8_index() < 0) return -1;
    }
    int64_t st[PCT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) st[d] = 0;
    if (mask->ndim == 0) {
        if (self->sizes[which] != 1) {
            PyErr_Format(PyExc_IndexError, "The shape of the mask [] at index 0 does not match the shape of the indexed tensor %s at index %d",
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
    int rc = masked_fill_run(self, mv, &s);
    Py_DECREF(mv);
    return rc < 0 ? -1 : 1;
}

static int index_put_impl(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate, bool setitem)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    adv_plan a = {0};
    pct_tensor *vals = NULL;
    int rc = -1;
    if (check_written(self, "index_put_") < 0) return -1;
    if (!accumulate) {
        int m = try_masked_fill_put(self, nindices, indices, values);
        if (m != 0) return m < 0 ? -1 : 0;
    }
    PCT_TRY_INT(adv_prepare(&a, self, nindices, indices));
    if (values->dtype != self->dtype)
        PCT_FAIL(PyExc_RuntimeError, "Index put requires the source and destination dtypes match, got %s for the destination and %s for the source.",
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
            PCT_FAIL(PyExc_RuntimeError, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                     SHAPE(b1, values->ndim, values->sizes), SHAPE(b2, a.rnd, a.rshape));
        /* values sharing memory with self: torch's overlap error, else read from a copy */
        PCT_TRY(vals = unaliased(self, values));
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
        PCT_TRY_INT(ix_run(&c, a.rnd, a.rshape, self, a.rstride, vals, st, a.L, a.lstride, NULL, NULL, accumulate));
    }
    rc = 0;
fail:
    adv_release(&a);
    Py_XDECREF(vals);
    return rc;
}

int pct_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    return index_put_impl(self, nindices, indices, values, accumulate, true);
}

/* index_put(input, indices, values, accumulate): indices is a tuple/list of index tensors
 * (None for a dim not indexed), each consuming one dim, a mask its number of dims. */
PyObject *pct_cpu_index_put(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *values = c->v[2].t, *target = NULL;
    PyObject *ind = c->v[1].none ? Py_None : c->v[1].obj;
    bool accumulate = c->v[3].b;
    if (!PyTuple_Check(ind) && !PyList_Check(ind)) {
        PyErr_Format(PyExc_TypeError, "index_put(): argument 'indices' (position 2) must be tuple of Tensors, not %s",
                     Py_TYPE(ind)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(ind);
    PyObject **items = PySequence_Fast_ITEMS(ind);
    pct_tensor *per[PCT_MAX_DIMS] = {0};
    int p = 0;
    bool skip_all = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        if (!PCT_TENSOR_CHECK(o)) { /* torch's index_put takes no None (Tensor[] indices), unlike indexing */
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %s", i,
                         o == Py_None ? "NoneType" : Py_TYPE(o)->tp_name);
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
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d (got %d)", self->ndim, p + k);
            return NULL;
        }
        per[p] = t;
        p += k;
    }
    if (c->inplace) { target = self; Py_INCREF(target); }
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
                if (!zero) { Py_DECREF(target); return NULL; }
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
                    PyErr_Format(PyExc_RuntimeError, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                                 SHAPE(b1, values->ndim, values->sizes), SHAPE(b2, nd, target->sizes));
                    rc = -1;
                } else if (values->dtype != target->dtype) {
                    PyErr_Format(PyExc_RuntimeError, "Index put requires the source and destination dtypes match, got %s for the destination and %s for the source.",
                                 pct_dtype_cpp_name[target->dtype], pct_dtype_cpp_name[values->dtype]);
                    rc = -1;
                } else {
                    ix_ctx ctx = {.op = IX_ADD, .n = 1, .alpha_d = 1, .alpha_i = 1};
                    rc = ix_run(&ctx, nd, target->sizes, target, target->strides, values, vst, zero, zst, NULL, NULL, false);
                }
                Py_DECREF(zero);
            } else {
                rc = pct_copy_(target, values);
            }
            if (rc < 0) { Py_DECREF(target); return NULL; }
        } else if (index_put_impl(target, self->ndim, per, values, accumulate, false) < 0) {
            Py_DECREF(target);
            return NULL;
        }
    }
    return ix_done(c, target, v, false);
}

/* ---------------------------------------------------------------------------------------
 * index_select, gather, scatter and friends
 * ------------------------------------------------------------------------------------- */

/* Messages for an index value out of range. */
static void raise_dim_bounds(PyObject *exc, const char *prefix, int64_t bad, int dim, int64_t size)
{
    PyErr_Format(exc, "%sindex %lld is out of bounds for dimension %d with size %lld", prefix, (long long)bad, dim, (long long)size);
}

/* index_select without out= handling (join.c's repeat_interleave uses it). New reference or NULL. */
pct_tensor *pct_index_select_impl(pct_tensor *self, int64_t dim_arg, pct_tensor *index);
pct_tensor *pct_index_select_impl(pct_tensor *self, int64_t dim_arg, pct_tensor *index)
{
    pct_tensor *idx = NULL, *r = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = geom(self, ss, st);
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (index->ndim > 1) PCT_FAIL(PyExc_IndexError, "index_select(): Index is supposed to be a vector");
    if (!is_index_dtype(index->dtype)) PCT_FAIL(PyExc_RuntimeError, "index_select(): Expected dtype int32 or int64 for index");
    if (self->ndim == 0 && index->numel != 1)
        PCT_FAIL(PyExc_RuntimeError, "index_select(): Index to scalar can have only 1 value, got %lld value(s)", (long long)index->numel);
    int64_t n = index->numel, bad;
    int is_bad;
    if (self->ndim > 1 && n > 0 && self->numel == 0 && ss[dim] == 0)
        PCT_FAIL(PyExc_RuntimeError, "index_select(): self indexing axis dim should be positive");
    /* torch checks nothing for an empty index of a >1-d tensor */
    idx = checked_index(index, self->ndim > 1 && n == 0 ? INT64_MIN : 0, self->ndim > 1 && n == 0 ? INT64_MAX : ss[dim], &bad, &is_bad);
    if (is_bad) {
        /* torch's dim-1 and empty-self paths raise RuntimeError, the others IndexError */
        if (self->ndim > 1 && (dim == 1 || self->numel == 0))
            PCT_FAIL(PyExc_RuntimeError, "INDICES element is out of DATA bounds, id=%lld axis_dim=%lld", (long long)bad, (long long)ss[dim]);
        PCT_FAIL(PyExc_IndexError, "index out of range in self");
    }
    if (!idx) goto fail;
    if (self->ndim > 0) {
        /* x[:, ..., idx]: the result is walked row-major, each run of the slice contiguous */
        int64_t one = 1;
        pct_tensor *per[PCT_MAX_DIMS] = {0}, *iv = pct_tensor_view_of(idx, 1, &n, &one, 0);
        if (!iv) goto fail;
        per[dim] = iv;
        r = (pct_tensor *)pct_index_get(self, self->ndim, per);
        Py_DECREF(iv);
        if (!r) goto fail;
    } else {
        int64_t rs[PCT_MAX_DIMS], rst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS], zero[PCT_MAX_DIMS] = {0};
        memcpy(rs, ss, sizeof(int64_t) * (size_t)nd);
        rs[dim] = n;
        PCT_TRY(r = pct_tensor_empty(0, rs, self->dtype, PCT_CPU, -1));
        pct_contiguous_strides(nd, rs, rst);
        memcpy(shape, rs, sizeof(int64_t) * (size_t)nd);
        shape[dim] = 1;
        ix_ctx ctx = {.op = IX_COPY, .n = n, .idx_step = 1, .dst_si = rst[dim], .src_sj = st[dim]};
        PCT_TRY_INT(ix_run(&ctx, nd, shape, r, rst, self, st, idx, zero, NULL, NULL, false));
    }
    Py_DECREF(idx);
    return r;
fail:
    Py_XDECREF(idx);
    Py_XDECREF(r);
    return NULL;
}

PyObject *pct_cpu_index_select(pct_call *c) { return pct_index_to_out(c, pct_index_select_impl(c->v[0].t, c->v[1].i, c->v[2].t)); }

PyObject *pct_cpu_gather(pct_call *c)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    pct_tensor *self = c->v[0].t, *index = c->v[2].t, *idx = NULL, *r = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS], is[PCT_MAX_DIMS], ist[PCT_MAX_DIMS];
    int nd = geom(self, ss, st), ind = geom(index, is, ist);
    int dim = pct_wrap_dim(c->v[1].i, self->ndim);
    if (dim < 0) return NULL;
    if (index->numel > 0 && !is_index_dtype(index->dtype)) PCT_FAIL(PyExc_RuntimeError, "gather(): Expected dtype int32/int64 for index");
    if (index->numel == 0) return pct_index_to_out(c, pct_tensor_empty(index->ndim, index->sizes, self->dtype, PCT_CPU, -1));
    if (ind != nd) PCT_FAIL(PyExc_RuntimeError, "Index tensor must have the same number of dimensions as input tensor");
    for (int d = 0; d < nd; d++)
        if (d != dim && is[d] > ss[d])
            PCT_FAIL(PyExc_RuntimeError, "Size does not match at dimension %d expected index %s to be no larger than self %s apart from dimension %d",
                     d, SHAPE(b1, index->ndim, index->sizes), SHAPE(b2, self->ndim, self->sizes), dim);
    int64_t bad;
    int is_bad;
    idx = checked_index(index, 0, ss[dim], &bad, &is_bad);
    if (is_bad) PCT_FAIL(PyExc_RuntimeError, "index %lld is out of bounds for dimension %d with size %lld", (long long)bad, dim, (long long)ss[dim]);
    if (!idx) goto fail;
    PCT_TRY(r = pct_tensor_empty(index->ndim, index->sizes, self->dtype, PCT_CPU, -1));
    {
        int64_t cst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS];
        pct_contiguous_strides(nd, is, cst);
        memcpy(shape, is, sizeof(int64_t) * (size_t)nd);
        shape[dim] = 1;
        ix_ctx ctx = {.op = IX_COPY, .n = is[dim], .idx_step = cst[dim], .dst_si = cst[dim], .src_sj = st[dim]};
        PCT_TRY_INT(ix_run(&ctx, nd, shape, r, cst, self, st, idx, cst, NULL, NULL, false));
    }
    Py_DECREF(idx);
    return pct_index_to_out(c, r);
fail:
    Py_XDECREF(idx);
    Py_XDECREF(r);
    return NULL;
}

/* Integer limits per dtype, for the identities of amax/amin. */
static pct_tensor *reduce_identity(int dtype, int op)
{
    bool lowest = op == IX_MAX;
    if (op == IX_ADD || op == IX_MEAN) return pct_tensor_scalar(dtype, 0, 0, false);
    if (op == IX_MUL) return pct_tensor_scalar(dtype, 1, 1, false);
    if (pct_dtype_is_floating(dtype)) return pct_tensor_scalar(dtype, lowest ? -INFINITY : INFINITY, 0, true);
    int64_t lo, hi;
    switch (dtype) {
    case PCT_BOOL: lo = 0; hi = 1; break;
    case PCT_UINT8: lo = 0; hi = UINT8_MAX; break;
    case PCT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case PCT_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case PCT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    default: lo = INT64_MIN; hi = INT64_MAX; break;
    }
    return pct_tensor_scalar(dtype, 0, lowest ? lo : hi, false);
}

/* self / count in place (count 0 counts as 1); floor division for integral dtypes. */
#define MEAN_DIV(E, N, T, C, S)                                                                 \
    static void mean_div_##N(char **args, const int64_t *dims, const int64_t *steps, void *ctx)  \
    {                                                                                           \
        (void)ctx;                                                                              \
        for (int64_t k = 0; k < dims[0]; k++) {                                                 \
            T *d = (T *)(args[0] + k * steps[0]);                                               \
            int64_t n = *(const int64_t *)(args[1] + k * steps[1]);                             \
            if (n == 0) n = 1;                                                                  \
            if (pct_dtype_is_floating(PCT_##E)) {                                               \
                *d = PCT_FROM_COMPUTE_##E((double)PCT_TO_COMPUTE_##E(*d) / (double)n);          \
            } else {                                                                            \
                int64_t a = (int64_t)PCT_TO_COMPUTE_##E(*d), q = a / n;                         \
                if (a % n != 0 && a < 0) q--;                                                   \
                *d = PCT_FROM_COMPUTE_##E(q);                                                   \
            }                                                                                   \
        }                                                                                       \
    }
PCT_FORALL_DTYPES(MEAN_DIV)
static const pct_loop_fn mean_div_loops[PCT_NUM_DTYPES] = {
#define MEAN_ENTRY(E, N, T, C, S) mean_div_##N,
    PCT_FORALL_DTYPES(MEAN_ENTRY)
#undef MEAN_ENTRY
};

/* The scatter family. src NULL: value (a 0-d tensor of self's dtype) is scattered. */
static PyObject *scatter_impl(pct_call *c, const char *name, int64_t dim_arg, pct_tensor *index, pct_tensor *src,
                              pct_tensor *value, int op, bool include_self)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF], b3[PCT_SHAPE_BUF];
    pct_tensor *self = c->v[0].t, *target = NULL, *idx = NULL, *ident = NULL, *cnt = NULL, *srcu = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS], is[PCT_MAX_DIMS], ist[PCT_MAX_DIMS], rs[PCT_MAX_DIMS], rst[PCT_MAX_DIMS];
    int nd = geom(self, ss, st), ind = geom(index, is, ist);
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (index->numel > 0 && !is_index_dtype(index->dtype))
        PCT_FAIL(PyExc_RuntimeError, "%s(): Expected dtype int32/int64 for index", name);
    if (src && src->dtype != self->dtype) PCT_FAIL(PyExc_RuntimeError, "%s(): Expected self.dtype to be equal to src.dtype", name);
    if (index->numel != 0) {
        if (ind != nd) PCT_FAIL(PyExc_RuntimeError, "Index tensor must have the same number of dimensions as self tensor");
        if (src) {
            int64_t srs[PCT_MAX_DIMS], srst[PCT_MAX_DIMS];
            int snd = geom(src, srs, srst);
            /* torch reads src.size(d) for every dim of index before it compares the ranks */
            if (src->ndim > 0 && src->ndim < ind)
                PCT_FAIL(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                         -src->ndim, src->ndim - 1, src->ndim);
            if (snd != ind) PCT_FAIL(PyExc_RuntimeError, "Index tensor must have the same number of dimensions as src tensor");
            for (int d = 0; d < nd; d++)
                if ((d != dim && is[d] > ss[d]) || is[d] > srs[d])
                    PCT_FAIL(PyExc_RuntimeError, "Expected index %s to be no larger than self %s apart from dimension %d and to be no larger size than src %s",
                             SHAPE(b1, index->ndim, index->sizes), SHAPE(b2, self->ndim, self->sizes), dim, SHAPE(b3, src->ndim, src->sizes));
        } else {
            for (int d = 0; d < nd; d++)
                if (d != dim && is[d] > ss[d])
                    PCT_FAIL(PyExc_RuntimeError, "Expected index %s to be no larger than self %s apart from dimension %d",
                             SHAPE(b1, index->ndim, index->sizes), SHAPE(b2, self->ndim, self->sizes), dim);
        }
    }
    int64_t bad;
    int is_bad;
    idx = checked_index(index, 0, ss[dim], &bad, &is_bad);
    if (is_bad) PCT_FAIL(PyExc_RuntimeError, "index %lld is out of bounds for dimension %d with size %lld", (long long)bad, dim, (long long)ss[dim]);
    if (!idx) goto fail;
    long v0 = version_of(self);
    if (c->inplace && check_written(self, NULL) < 0) goto fail;
    if (c->inplace) { target = self; Py_INCREF(target); }
    else PCT_TRY(target = clone_of(self));
    if (src) {
        PCT_TRY(srcu = unaliased(target, src));
        src = srcu;
    }
    if (index->numel != 0) {
        int64_t cst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS], zero[PCT_MAX_DIMS] = {0}, srst[PCT_MAX_DIMS];
        geom(target, rs, rst);
        pct_contiguous_strides(nd, is, cst);
        memcpy(shape, is, sizeof(int64_t) * (size_t)nd);
        shape[dim] = 1;
        const int64_t *src_st = zero;
        int64_t src_si = 0;
        if (src) {
            int64_t srs[PCT_MAX_DIMS];
            geom(src, srs, srst);
            src_st = srst;
            src_si = srst[dim];
        }
        pct_tensor *from = src ? src : value;
        if (!include_self) {
            /* the scattered-to positions start from the reduction's identity */
            PCT_TRY(ident = reduce_identity(self->dtype, op));
            ix_ctx ctx = {.op = IX_COPY, .n = is[dim], .idx_step = cst[dim], .dst_sj = rst[dim]};
            PCT_TRY_INT(ix_run(&ctx, nd, shape, target, rst, ident, zero, idx, cst, NULL, NULL, false));
        }
        if (op == IX_MEAN) {
            PCT_TRY(cnt = pct_tensor_zeros(nd, rs, PCT_INT64));
            if (include_self) {
                int64_t *cd = (int64_t *)pct_tensor_data(cnt);
                for (int64_t i = 0; i < cnt->numel; i++) cd[i] = 1;
            }
            int64_t cntst[PCT_MAX_DIMS];
            pct_contiguous_strides(nd, rs, cntst);
            ix_ctx ctx = {.op = IX_MEAN, .n = is[dim], .idx_step = cst[dim], .dst_sj = rst[dim], .src_si = src_si,
                          .cnt_sj = cntst[dim]};
            PCT_TRY_INT(ix_run(&ctx, nd, shape, target, rst, from, src_st, idx, cst, cnt, cntst, false));
            /* divide by the counts */
            pct_tensor *cv = pct_tensor_view_of(cnt, target->ndim, target->sizes, cntst, 0);
            if (!cv) goto fail;
            pct_iter it;
            pct_iter_config cfg = {.out = target, .inplace = true, .ninputs = 1, .inputs = {cv}, .compute_dtype = target->dtype,
                                   .out_dtype = target->dtype, .mixed_dtypes = true};
            int brc = pct_iter_build(&it, &cfg);
            Py_DECREF(cv);
            if (brc < 0) goto fail;
            pct_iter_run(&it, mean_div_loops[target->dtype], NULL);
            pct_iter_release(&it);
        } else {
            ix_ctx ctx = {.op = op, .n = is[dim], .idx_step = cst[dim], .dst_sj = rst[dim], .src_si = src_si, .alpha_d = 1, .alpha_i = 1};
            PCT_TRY_INT(ix_run(&ctx, nd, shape, target, rst, from, src_st, idx, cst, NULL, NULL, false));
        }
    }
    Py_DECREF(idx);
    Py_XDECREF(ident);
    Py_XDECREF(cnt);
    Py_XDECREF(srcu);
    return ix_done(c, target, v0, true);
fail:
    Py_XDECREF(idx);
    Py_XDECREF(target);
    Py_XDECREF(ident);
    Py_XDECREF(cnt);
    Py_XDECREF(srcu);
    return NULL;
}

/* scatter(input, dim, index, src | value, *, reduce=None): one kernel for both overloads; a
 * Python number given for src arrives as a wrapped-number tensor and is a value. */
PyObject *pct_cpu_scatter(pct_call *c)
{
    if (pct_wrap_dim(c->v[1].i, c->v[0].t->ndim) < 0) return NULL;
    pct_tensor *self = c->v[0].t, *index = c->v[2].t, *src = NULL, *value = NULL;
    const pct_value *red = pct_arg(c, "reduce");
    int op = IX_COPY;
    bool is_value = c->op_index == PCT_OP_scatter_value || c->op_index == PCT_OP_scatter_value_reduce;
    pct_scalar s;
    if (is_value) {
        s = c->v[3].s;
    } else {
        src = c->v[3].t;
        if (src->flags & PCT_FLAG_WRAPPED_NUMBER) { pct_tensor_item_scalar(src, &s); is_value = true; src = NULL; }
    }
    if (!red->none) {
        const char *r = PyUnicode_AsUTF8(red->obj);
        if (!r) return NULL;
        if (strcmp(r, "add") == 0) op = IX_ADD;
        else if (strcmp(r, "multiply") == 0) op = IX_MUL;
        else {
            PyErr_SetString(PyExc_RuntimeError, "reduce argument must be either add or multiply.");
            return NULL;
        }
    }
    /* the value's range check is skipped with an empty index, as torch does */
    if (is_value && ((index->numel && pct_scalar_check_fits(&s, self->dtype) < 0) || !(value = pct_scalar_tensor_of(self->dtype, &s)))) return NULL;
    PyObject *r = scatter_impl(c, "scatter", c->v[1].i, index, src, value, op, true);
    Py_XDECREF(value);
    return r;
}

PyObject *pct_cpu_scatter_add(pct_call *c)
{
    pct_tensor *src = c->v[3].t;
    return scatter_impl(c, "scatter", c->v[1].i, c->v[2].t, src, NULL, IX_ADD, true);
}

PyObject *pct_cpu_scatter_reduce(pct_call *c)
{
    if (pct_wrap_dim(c->v[1].i, c->v[0].t->ndim) < 0) return NULL; /* torch checks the dim first */
    const char *r = PyUnicode_AsUTF8(c->v[4].obj);
    if (!r) return NULL;
    int op;
    if (strcmp(r, "sum") == 0) op = IX_ADD;
    else if (strcmp(r, "prod") == 0) op = IX_MUL;
    else if (strcmp(r, "mean") == 0) op = IX_MEAN;
    else if (strcmp(r, "amax") == 0 || strcmp(r, "max") == 0) op = IX_MAX; /* torch accepts max/min too */
    else if (strcmp(r, "amin") == 0 || strcmp(r, "min") == 0) op = IX_MIN;
    else {
        PyErr_Format(PyExc_RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got %s", r);
        return NULL;
    }
    return scatter_impl(c, "scatter_reduce", c->v[1].i, c->v[2].t, c->v[3].t, NULL, op, pct_arg(c, "include_self")->b);
}

/* The shapes (as geom() gives them) agree outside dim. */
static bool same_slices(const int64_t *ss, int nd, const int64_t *srs, int snd, int dim)
{
    if (snd != nd) return false;
    for (int d = 0; d < nd; d++)
        if (d != dim && srs[d] != ss[d]) return false;
    return true;
}

/* index_add / index_copy / index_fill: a vector index along dim of self. source NULL: fill. */
static PyObject *index_along(pct_call *c, const char *name, int op, pct_tensor *source, pct_tensor *value, double alpha_d,
                             int64_t alpha_i, bool wrap)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    pct_tensor *self = c->v[0].t, *index = c->v[2].t, *idx = NULL, *target = NULL, *srcu = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = geom(self, ss, st);
    int dim = pct_wrap_dim(c->v[1].i, self->ndim);
    if (dim < 0) return NULL;
    /* torch's index_copy_ refuses an expanded self, or one sharing memory with index or source, and index_copy an
     * out= of another dtype, before it validates the arguments */
    if (op == IX_COPY && source && c->inplace &&
        (check_written(self, NULL) < 0 || check_no_overlap(self, index) < 0 || check_no_overlap(self, source) < 0))
        return NULL;
    if (op == IX_COPY && source && !c->inplace && pct_out_check_dtype(c->out, self->dtype) < 0) return NULL;
    if (!source && index->dtype != PCT_INT64) PCT_FAIL(PyExc_IndexError, "%s(): Expected dtype int64 for index.", name);
    if (index->ndim > 1 && !source) PCT_FAIL(PyExc_RuntimeError, "Index has to be a vector/scalar");
    if (index->ndim > 1)
        PCT_FAIL(PyExc_IndexError, "%s(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s", name,
                 index->ndim, pct_dtype_cpp_name[index->dtype], SHAPE(b1, index->ndim, index->sizes));
    const bool copy = op == IX_COPY && source; /* index_copy checks its index's dtype later */
    if (!source && index->dtype != PCT_INT64) PCT_FAIL(PyExc_IndexError, "%s(): Expected dtype int64 for index.", name);
    if (!copy && !is_index_dtype(index->dtype))
        PCT_FAIL(PyExc_RuntimeError, "%s(): Expected dtype int32/int64 for index but got: %s", name, pct_dtype_cpp_name[index->dtype]);
    int64_t n = index->numel;
    int64_t srs[PCT_MAX_DIMS], srst[PCT_MAX_DIMS], zero[PCT_MAX_DIMS] = {0};
    if (source) {
        int snd = geom(source, srs, srst);
        if (op == IX_COPY) { /* torch's order: scalar source, ranks, index dtype, dtypes, slice shapes, count */
            if (source->ndim == 0 && n != 1)
                PCT_FAIL(PyExc_IndexError, "%s(): When source is scalar, index should have one element (got %lld)", name,
                         (long long)n);
            if (snd != nd && !(source->ndim == 0 || self->ndim == 0))
                PCT_FAIL(PyExc_IndexError, "%s(): When source and destination are not scalars, their dimensionality must match. Source "
                         "dimensionality (%d), destination dimensionality (%d)", name, source->ndim, self->ndim);
            if (index->dtype != PCT_INT64)
                PCT_FAIL(PyExc_RuntimeError, "%s(): Expected a long tensor for index, but got %s", name, pct_dtype_cpp_name[index->dtype]);
            if (source->dtype != self->dtype)
                PCT_FAIL(PyExc_RuntimeError, "%s(): self and source expected to have the same dtype, but got (self) %s and (source) %s",
                         name, pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
            if (!same_slices(ss, nd, srs, snd, dim))
                PCT_FAIL(PyExc_RuntimeError, "%s(): Source/destination tensor must have same slice shapes. Destination slice shape: %s "
                         "and source slice shape: %s", name, SHAPE(b1, self->ndim, self->sizes), SHAPE(b2, source->ndim, source->sizes));
            if (srs[snd > dim ? dim : 0] != n)
                PCT_FAIL(PyExc_IndexError, "%s(): Number of indices (%lld) should be equal to source.size(dim) (%lld)", name,
                         (long long)n, (long long)srs[snd > dim ? dim : 0]);
        } else {
            if (source->dtype != self->dtype)
                PCT_FAIL(PyExc_RuntimeError, "%s(): self (%s) and source (%s) must have the same scalar type", name,
                         pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
            if (source->ndim == 0 && dim > 0)
                PCT_FAIL(PyExc_RuntimeError, "%s(): Indexing dim %d is out of bounds of the source tensor with dim 0", name, dim);
            if (source->ndim == 0 && n != 1)
                PCT_FAIL(PyExc_IndexError, "Dimension specified as %d but tensor has no dimensions", dim);
            if (source->ndim != self->ndim)
                PCT_FAIL(PyExc_RuntimeError, "source tensor shape must match self tensor shape, excluding the specified dimension. "
                         "Got self.shape = %s source.shape = %s", SHAPE(b1, self->ndim, self->sizes), SHAPE(b2, source->ndim, source->sizes));
            if (srs[snd > dim ? dim : 0] != n)
                PCT_FAIL(PyExc_RuntimeError, "%s(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %d",
                         name, (long long)n, (long long)srs[snd > dim ? dim : 0], dim);
        }
        if (!same_slices(ss, nd, srs, snd, dim))
            PCT_FAIL(PyExc_RuntimeError, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                     "self.shape = %s source.shape = %s", SHAPE(b1, self->ndim, self->sizes), SHAPE(b2, source->ndim, source->sizes));
    }
    int64_t bad;
    int is_bad;
    /* nothing is read or written: torch checks no index then */
    bool moves = source ? source->numel > 0 : self->numel > 0;
    int64_t others = 1;
    for (int d = 0; d < nd; d++) others *= d == dim ? 1 : ss[d];
    if (!source && ss[dim] == 0 && n > 0 && others > 0)
        PCT_FAIL(PyExc_RuntimeError, "%s(): cannot fill dimension %d of size 0 (got %lld indices)", name, dim, (long long)n);
    idx = checked_index(index, moves ? (wrap ? -ss[dim] : 0) : INT64_MIN, moves ? ss[dim] : INT64_MAX, &bad, &is_bad);
    if (is_bad) {
        if (op == IX_COPY && source) raise_dim_bounds(PyExc_IndexError, "index_copy_(): ", bad, dim, ss[dim]);
        else if (source) raise_dim_bounds(PyExc_RuntimeError, "", bad, dim, ss[dim]);
        else raise_dim_bounds(PyExc_IndexError, "", bad, dim, ss[dim]);
        goto fail;
    }
    if (!idx) goto fail;
    long v0 = version_of(self);
    if (c->inplace && check_written(self, source ? NULL : "index_fill_") < 0) goto fail;
    if (c->inplace) { target = self; Py_INCREF(target); }
    else PCT_TRY(target = clone_of(self));
    if (source) {
        PCT_TRY(srcu = unaliased(target, source));
        source = srcu;
    }
    {
        /* walk the source's shape row-major (runs along the inner dims share one index value);
         * accumulation runs serially, in index order, as torch's loop over the index does */
        int64_t rs[PCT_MAX_DIMS], rst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS], ist[PCT_MAX_DIMS] = {0};
        geom(target, rs, rst);
        memcpy(shape, rs, sizeof(int64_t) * (size_t)nd);
        shape[dim] = n;
        int64_t jstride = rst[dim];
        rst[dim] = 0;
        ist[dim] = 1;
        ix_ctx ctx = {.op = op, .n = 1, .dst_sj = jstride, .alpha_d = alpha_d, .alpha_i = alpha_i};
        PCT_TRY_INT(ix_run(&ctx, nd, shape, target, rst, source ? source : value, source ? srst : zero, idx, ist, NULL, NULL,
                           op != IX_COPY));
    }
    Py_DECREF(idx);
    Py_XDECREF(srcu);
    return ix_done(c, target, v0, true);
fail:
    Py_XDECREF(idx);
    Py_XDECREF(target);
    Py_XDECREF(srcu);
    return NULL;
}

PyObject *pct_cpu_index_add(pct_call *c)
{
    const pct_scalar *a = &c->v[4].s;
    pct_tensor *self = c->v[0].t;
    /* an integral tensor takes a float alpha truncated, as torch does, after its range check */
    if (pct_scalar_check_fits(a, self->dtype) < 0) return NULL;
    int64_t ai = a->kind == PCT_SCALAR_FLOAT ? (int64_t)a->d : a->i;
    return index_along(c, "index_add_", IX_ADD, c->v[3].t, NULL, a->d, ai, false);
}

PyObject *pct_cpu_index_copy(pct_call *c) { return index_along(c, "index_copy_", IX_COPY, c->v[3].t, NULL, 1, 1, false); }

PyObject *pct_cpu_index_fill(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *value = c->v[3].t;
    if (value->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                     value->ndim);
        return NULL;
    }
    pct_scalar s;
    pct_tensor_item_scalar(value, &s);
    if (pct_scalar_check_fits(&s, self->dtype) < 0) return NULL;
    pct_tensor *v = pct_scalar_tensor_of(self->dtype, &s);
    if (!v) return NULL;
    PyObject *r = index_along(c, "index_fill_", IX_COPY, NULL, v, 1, 1, true);
    Py_DECREF(v);
    return r;
}

/* fill_(Tensor value): torch's overload for a 0-d tensor value (its gradient flows to value) */
PyObject *pct_cpu_fill_tensor_(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *value = c->v[1].t;
    if (value->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                     value->ndim);
        return NULL;
    }
    /* torch fills from a tensor through a TensorIterator, which refuses an expanded self (a Number fills any) */
    if (pct_check_written_overlap(self, 0, NULL) < 0) return NULL;
    pct_scalar s;
    pct_tensor_item_scalar(value, &s);
    if (pct_fill_scalar(self, &s) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

/* ---------------------------------------------------------------------------------------
 * take / put_
 * ------------------------------------------------------------------------------------- */

/* Element offsets into t of the row-major linear indices in index (wrapped, checked). */
static pct_tensor *linear_offsets(pct_tensor *t, pct_tensor *index)
{
    pct_tensor *L = pct_tensor_empty(index->ndim, index->sizes, PCT_INT64, PCT_CPU, -1);
    if (!L) return NULL;
    off_ctx c = {.lo = -t->numel, .hi = t->numel, .mul = 1, .linear = !pct_tensor_is_contiguous(t) && t->ndim > 0,
                 .ndim = t->ndim, .sizes = t->sizes, .strides = t->strides};
    atomic_init(&c.err, 0);
    if (off_run(L, index, &c) < 0) { Py_DECREF(L); return NULL; }
    if (atomic_load(&c.err)) {
        if (t->numel == 0) PyErr_SetString(PyExc_IndexError, "take(): tried to take from an empty tensor");
        else PyErr_Format(PyExc_IndexError, "out of range: tried to access index %lld on a tensor of %lld elements.", (long long)c.bad,
                          (long long)t->numel);
        Py_DECREF(L);
        return NULL;
    }
    return L;
}

PyObject *pct_cpu_take(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *index = c->v[1].t, *L = NULL, *r = NULL;
    if (c->out && c->out->dtype != self->dtype)
        PCT_FAIL(PyExc_RuntimeError, "take(): self and out expected to have the same dtype, but got self.dtype = %s and out.dtype = %s",
                 pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[c->out->dtype]);
    if (index->dtype != PCT_INT64) PCT_FAIL(PyExc_RuntimeError, "take(): Expected a long tensor for index, but got %s", pct_dtype_cpp_name[index->dtype]);
    PCT_TRY(L = linear_offsets(self, index));
    PCT_TRY(r = pct_tensor_empty(index->ndim, index->sizes, self->dtype, PCT_CPU, -1));
    {
        int64_t zero[PCT_MAX_DIMS] = {0};
        ix_ctx ctx = {.op = IX_COPY, .n = 1, .src_sj = 1};
        PCT_TRY_INT(ix_run(&ctx, r->ndim, r->sizes, r, r->strides, self, zero, L, L->strides, NULL, NULL, false));
    }
    Py_DECREF(L);
    return pct_index_to_out(c, r);
fail:
    Py_XDECREF(L);
    Py_XDECREF(r);
    return NULL;
}

PyObject *pct_cpu_put(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *index = c->v[1].t, *source = c->v[2].t, *L = NULL, *src = NULL, *target = NULL;
    bool accumulate = c->v[3].b;
    if (index->dtype != PCT_INT64) PCT_FAIL(PyExc_RuntimeError, "put_(): Expected a long tensor for index, but got %s", pct_dtype_cpp_name[index->dtype]);
    if (source->dtype != self->dtype)
        PCT_FAIL(PyExc_RuntimeError, "put_(): self and source expected to have the same dtype, but got self.dtype = %s and source.dtype = %s",
                 pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
    if (source->numel != index->numel)
        PCT_FAIL(PyExc_IndexError, "put_(): Expected source and index to have the same number of elements, but got source.numel() = %lld, "
                 "index.numel() = %lld", (long long)source->numel, (long long)index->numel);
    long v0 = version_of(self);
    if (c->inplace && check_written(self, NULL) < 0) goto fail;
    if (c->inplace) { target = self; Py_INCREF(target); }
    else PCT_TRY(target = clone_of(self));
    PCT_TRY(L = linear_offsets(target, index));
    PCT_TRY(src = unaliased(target, source));
    {
        pct_tensor *cc = pct_contiguous(src);
        Py_DECREF(src);
        PCT_TRY(src = cc);
    }
    {
        int64_t zero[PCT_MAX_DIMS] = {0};
        ix_ctx ctx = {.op = accumulate ? IX_ADD : IX_COPY, .n = 1, .dst_sj = 1, .alpha_d = 1, .alpha_i = 1};
        PCT_TRY_INT(ix_run(&ctx, L->ndim, L->sizes, target, zero, src, L->strides, L, L->strides, NULL, NULL, true));
    }
    Py_DECREF(L);
    Py_DECREF(src);
    return ix_done(c, target, v0, false);
fail:
    Py_XDECREF(L);
    Py_XDECREF(src);
    Py_XDECREF(target);
    return NULL;
}
