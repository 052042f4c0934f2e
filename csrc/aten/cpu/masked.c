/* masked.c: masked_fill, masked_select and masked_scatter, the mask broadcast to the written
 * tensor's shape.
 */
#include "index_internal.h"
#include "simd_levels.h" /* PCT_HOT */

/* ---------------------------------------------------------------------------------------
 * masked_fill / masked_select / masked_scatter
 * ------------------------------------------------------------------------------------- */

typedef struct mf_ctx { unsigned char value[16]; int isz; } mf_ctx; /* value: one element, complex128 the widest */

/* Contiguous runs of the integer-sized elements are written back whatever the mask, blended by bit masks (a
 * select `m ? v : d` GCC turns back into a store under a branch): that vectorizes, where the branch mispredicted
 * on every other element of a random mask (4 ns an element, torch's time). */
#define MF_BODY(W, BLEND)                                                                       \
    {                                                                                           \
        W v;                                                                                    \
        memcpy(&v, &c->value, sizeof v);                                                        \
        if (BLEND && steps[0] == (int64_t)sizeof(W) && steps[1] == 1) {                         \
            MF_BLEND_##BLEND(W)                                                                 \
        } else {                                                                                \
            for (int64_t k = 0; k < dims[0]; k++)                                               \
                if (*(const uint8_t *)(args[1] + k * steps[1])) *(W *)(args[0] + k * steps[0]) = v; \
        }                                                                                       \
    }

#define MF_BLEND_0(W)
#define MF_BLEND_1(W)                                                                           \
    W *restrict d = (W *)args[0];                                                               \
    const uint8_t *restrict m = (const uint8_t *)args[1];                                       \
    const int64_t n = dims[0];                                                                  \
    for (int64_t k = 0; k < n; k++) {                                                           \
        const W keep = (W)((W)(m[k] != 0) - (W)1); /* all ones where the mask is clear */      \
        d[k] = (W)((d[k] & keep) | (v & (W)~keep));                                             \
    }

PCT_HOT static void mf_loop(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    const mf_ctx *c = vctx;
    switch (c->isz) {
    case 1: MF_BODY(uint8_t, 1) break;
    case 2: MF_BODY(uint16_t, 1) break;
    case 4: MF_BODY(uint32_t, 1) break;
    case 16: MF_BODY(pct_cdouble, 0) break; /* complex128 */
    default: MF_BODY(uint64_t, 1) break;
    }
}

/* dst[mask] = s, mask (bool or uint8) broadcast to dst's shape. */
int pct_ix_masked_fill_run(pct_tensor *dst, pct_tensor *mask, const pct_scalar *s)
{
    pct_iter it;
    pct_iter_config cfg = {.out = dst, .inplace = true, .ninputs = 1, .inputs = {mask}, .compute_dtype = dst->dtype,
                           .out_dtype = dst->dtype, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    mf_ctx c = {.isz = pct_dtype_itemsize[dst->dtype]};
    if (pct_dtype_is_complex(dst->dtype) || pct_dtype_is_storage_only(dst->dtype)) {
        pct_store_complex(c.value, dst->dtype, s->d, s->kind == PCT_SCALAR_COMPLEX ? s->im : 0);
    } else {
        const uint64_t b = pct_ix_scalar_bytes(dst->dtype, s);
        memcpy(c.value, &b, sizeof b);
    }
    pct_iter_run(&it, mf_loop, &c);
    pct_iter_release(&it);
    return 0;
}

/* masked_fill and masked_scatter: `run` writes dst where mask (broadcast) is set, from arg. In place it
 * writes self (after the written-to checks, warning as `warn_op`); otherwise a copy of self broadcast
 * with mask, returned through the out= handling. */
typedef int (*masked_write_fn)(pct_tensor *dst, pct_tensor *mask, const void *arg);
static pct_object *masked_apply(pct_call *c, pct_tensor *self, pct_tensor *mask, const char *warn_op, masked_write_fn run,
                              const void *arg)
{
    if (c->inplace) {
        long v = version_of(self);
        if (pct_ix_check_written(self, warn_op) < 0 || run(self, mask, arg) < 0) return NULL;
        PCT_INCREF(self);
        return pct_ix_done(c, self, v, false);
    }
    int nd;
    int64_t shape[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, &nd, shape) < 0) return NULL;
    pct_tensor *r = pct_tensor_empty(nd, shape, self->dtype, PCT_CPU, -1);
    if (!r) return NULL;
    if (pct_copy_(r, self) < 0 || run(r, mask, arg) < 0) { PCT_DECREF(r); return NULL; }
    return pct_index_to_out(c, r);
}

static int mf_apply(pct_tensor *dst, pct_tensor *mask, const void *s) { return pct_ix_masked_fill_run(dst, mask, s); }

pct_object *pct_cpu_masked_fill(pct_call *c)
{
    PCT_ARGS(masked_fill);
    pct_tensor *self = arg.input, *mask = arg.mask, *value = arg.value;
    if (mask->dtype != PCT_BOOL) {
        pct_error(PCT_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype %s", pct_dtype_cpp_type_name[mask->dtype]);
        return NULL;
    }
    if (value->ndim != 0) {
        pct_error(PCT_ERR_RUNTIME, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
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
    if (!*ea || !*eb) { PCT_CLEAR(*ea); PCT_CLEAR(*eb); return -1; }
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
pct_tensor *pct_ix_compact(pct_tensor *xs, pct_tensor *ms)
{
    pct_tensor *x = NULL, *m = NULL, *r = NULL;
    PCT_TRY(x = pct_contiguous(xs));
    PCT_TRY(m = pct_ix_bool_contiguous(ms));
    {
        int64_t n = x->numel, start[NZ_MAX_CHUNKS], total;
        int nch = pct_ix_nz_chunks(n);
        const uint8_t *md = (const uint8_t *)pct_tensor_data(m);
        total = pct_ix_nz_count(md, n, nch, start);
        PCT_TRY(r = pct_tensor_empty(1, &total, xs->dtype, PCT_CPU, -1));
        const char *xd = pct_tensor_data(x);
        char *od = pct_tensor_data(r);
        int isz = pct_dtype_itemsize[xs->dtype];
        PCT_NOGIL_BEGIN
        IX_PARALLEL_FOR(nch > 1)
        for (int ch = 0; ch < nch; ch++) {
            int64_t b = n * ch / nch, e = n * (ch + 1) / nch, pos = start[ch];
            switch (isz) {
            case 1: COMPACT_BODY(uint8_t) break;
            case 2: COMPACT_BODY(uint16_t) break;
            case 4: COMPACT_BODY(uint32_t) break;
            case 16: COMPACT_BODY(pct_cdouble) break; /* complex128 */
            default: COMPACT_BODY(uint64_t) break;
            }
        }
        PCT_NOGIL_END
    }
    PCT_DECREF(x);
    PCT_DECREF(m);
    return r;
fail:
    PCT_XDECREF(x);
    PCT_XDECREF(m);
    return NULL;
}

pct_object *pct_cpu_masked_select(pct_call *c)
{
    PCT_ARGS(masked_select);
    pct_tensor *self = arg.input, *mask = arg.mask;
    pct_tensor *es = NULL, *em = NULL, *r = NULL;
    if (mask->dtype != PCT_BOOL) PCT_FAIL(PCT_ERR_RUNTIME, "masked_select: expected BoolTensor for mask");
    PCT_TRY_INT(broadcast_pair(self, mask, &es, &em));
    r = pct_ix_compact(es, em);
    PCT_DECREF(es);
    PCT_DECREF(em);
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
    case 16: MS_BODY(pct_cdouble) break; /* complex128 */
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
        pct_error_clear();
        PCT_FAIL(PCT_ERR_RUNTIME, "The expanded size of the tensor must match: mask of shape %s cannot be broadcast to self of shape %s",
                 SHAPE(b1, mask->ndim, mask->sizes), SHAPE(b2, dst->ndim, dst->sizes));
    }
    for (int d = 0; d < nd; d++) {
        int dm = mask->ndim - nd + d;
        st[d] = (dm < 0 || mask->sizes[dm] == 1) ? 0 : mask->strides[dm];
    }
    PCT_TRY(em = pct_tensor_view_of(mask, nd, shape, st, mask->offset));
    PCT_TRY(m = pct_ix_bool_contiguous(em));
    PCT_TRY(src = pct_contiguous(source));
    {
        int64_t n = m->numel, start[NZ_MAX_CHUNKS], total;
        int nch = pct_ix_nz_chunks(n);
        const uint8_t *md = (const uint8_t *)pct_tensor_data(m);
        PCT_NOGIL_BEGIN
        total = pct_ix_nz_count(md, n, nch, start);
        PCT_NOGIL_END
        if (total > source->numel) PCT_FAIL(PCT_ERR_RUNTIME, "Number of elements of source < number of ones in mask");
        if (pct_tensor_is_contiguous(dst)) {
            /* one pass: the k-th set position takes source element k */
            char *dd = pct_tensor_data(dst);
            const char *sd = pct_tensor_data(src);
            /* a source sharing dst's memory is read as torch's serial loop reads it */
            int fch = src->storage == dst->storage ? 1 : nch;
            if (fch == 1) start[0] = 0;
            PCT_NOGIL_BEGIN
            IX_PARALLEL_FOR(fch > 1)
            for (int ch = 0; ch < fch; ch++) {
                int64_t b = n * ch / fch, e = n * (ch + 1) / fch, p = start[ch];
                switch (pct_dtype_itemsize[dst->dtype]) {
                case 1: MS_CONTIG(uint8_t) break;
                case 2: MS_CONTIG(uint16_t) break;
                case 4: MS_CONTIG(uint32_t) break;
                case 16: MS_CONTIG(pct_cdouble) break; /* complex128 */
                default: MS_CONTIG(uint64_t) break;
                }
            }
            PCT_NOGIL_END
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
    PCT_XDECREF(em); PCT_XDECREF(m); PCT_XDECREF(pos); PCT_XDECREF(src);
    return rc;
}

static int ms_apply(pct_tensor *dst, pct_tensor *mask, const void *source)
{
    return masked_scatter_into(dst, mask, (pct_tensor *)source);
}

pct_object *pct_cpu_masked_scatter(pct_call *c)
{
    PCT_ARGS(masked_scatter);
    pct_tensor *self = arg.input, *mask = arg.mask, *source = arg.source;
    if (mask->dtype != PCT_BOOL) {
        pct_error(PCT_ERR_RUNTIME, "masked_scatter_ only supports boolean masks, but got mask with dtype %s", pct_dtype_cpp_name[mask->dtype]);
        return NULL;
    }
    if (self->dtype != source->dtype) {
        pct_error(PCT_ERR_RUNTIME, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                     pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
        return NULL;
    }
    return masked_apply(c, self, mask, NULL, ms_apply, source);
}

