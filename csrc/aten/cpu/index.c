/* index.c: the index op family: index_select, gather, scatter (+ reduce forms), scatter_add,
 * scatter_reduce, index_add/copy/fill, fill_(Tensor), take, put_. The rest of the family:
 * advanced indexing x[idx], x[idx] = v, index_put_ (index_advanced.c); masked_fill/select/
 * scatter (masked.c); nonzero, argwhere, where(condition) (nonzero.c); the shared helpers,
 * the index loop and index checking (index_common.c); declared in index_internal.h.
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
#include "index_internal.h"

/* ---------------------------------------------------------------------------------------
 * index_select, gather, scatter and friends
 * ------------------------------------------------------------------------------------- */

/* Messages for an index value out of range. */
static void raise_dim_bounds(pct_error_kind kind, const char *prefix, int64_t bad, int dim, int64_t size)
{
    pct_error(kind, "%sindex %lld is out of bounds for dimension %d with size %lld", prefix, (long long)bad, dim, (long long)size);
}

/* index_select without out= handling (join.c's repeat_interleave uses it). New reference or NULL. */
pct_tensor *pct_index_select_impl(pct_tensor *self, int64_t dim_arg, pct_tensor *index);
pct_tensor *pct_index_select_impl(pct_tensor *self, int64_t dim_arg, pct_tensor *index)
{
    pct_tensor *idx = NULL, *r = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = pct_ix_geom(self, ss, st);
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (index->ndim > 1) PCT_FAIL(PCT_ERR_INDEX, "index_select(): Index is supposed to be a vector");
    if (!is_index_dtype(index->dtype)) PCT_FAIL(PCT_ERR_RUNTIME, "index_select(): Expected dtype int32 or int64 for index");
    if (self->ndim == 0 && index->numel != 1)
        PCT_FAIL(PCT_ERR_RUNTIME, "index_select(): Index to scalar can have only 1 value, got %lld value(s)", (long long)index->numel);
    int64_t n = index->numel, bad;
    int is_bad;
    if (self->ndim > 1 && n > 0 && self->numel == 0 && ss[dim] == 0)
        PCT_FAIL(PCT_ERR_RUNTIME, "index_select(): self indexing axis dim should be positive");
    /* torch checks nothing for an empty index of a >1-d tensor */
    idx = pct_ix_checked_index(index, self->ndim > 1 && n == 0 ? INT64_MIN : 0, self->ndim > 1 && n == 0 ? INT64_MAX : ss[dim], &bad, &is_bad);
    if (is_bad) {
        /* torch's dim-1 and empty-self paths raise RuntimeError, the others IndexError */
        if (self->ndim > 1 && (dim == 1 || self->numel == 0))
            PCT_FAIL(PCT_ERR_RUNTIME, "INDICES element is out of DATA bounds, id=%lld axis_dim=%lld", (long long)bad, (long long)ss[dim]);
        PCT_FAIL(PCT_ERR_INDEX, "index out of range in self");
    }
    if (!idx) goto fail;
    if (self->ndim > 0) {
        /* x[:, ..., idx]: the result is walked row-major, each run of the slice contiguous */
        int64_t one = 1;
        pct_tensor *per[PCT_MAX_DIMS] = {0}, *iv = pct_tensor_view_of(idx, 1, &n, &one, 0);
        if (!iv) goto fail;
        per[dim] = iv;
        r = (pct_tensor *)pct_cpu_index_get(self, self->ndim, per);
        PCT_DECREF(iv);
        if (!r) goto fail;
    } else {
        int64_t rs[PCT_MAX_DIMS], rst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS], zero[PCT_MAX_DIMS] = {0};
        memcpy(rs, ss, sizeof(int64_t) * (size_t)nd);
        rs[dim] = n;
        PCT_TRY(r = pct_tensor_empty(0, rs, self->dtype, self->device_type, self->device_index));
        pct_contiguous_strides(nd, rs, rst);
        memcpy(shape, rs, sizeof(int64_t) * (size_t)nd);
        shape[dim] = 1;
        ix_ctx ctx = {.op = IX_COPY, .n = n, .idx_step = 1, .dst_si = rst[dim], .src_sj = st[dim]};
        PCT_TRY_INT(pct_ix_run(&ctx, nd, shape, r, rst, self, st, idx, zero, NULL, NULL, false));
    }
    PCT_DECREF(idx);
    return r;
fail:
    PCT_XDECREF(idx);
    PCT_XDECREF(r);
    return NULL;
}

pct_object *pct_cpu_index_select(pct_call *c)
{
    PCT_ARGS(index_select);
    return pct_index_to_out(c, pct_index_select_impl(arg.input, arg.dim, arg.index));
}

pct_object *pct_cpu_gather(pct_call *c)
{
    PCT_ARGS(gather);
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    pct_tensor *self = arg.input, *index = arg.index, *idx = NULL, *r = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS], is[PCT_MAX_DIMS], ist[PCT_MAX_DIMS];
    int nd = pct_ix_geom(self, ss, st), ind = pct_ix_geom(index, is, ist);
    int dim = pct_wrap_dim(arg.dim, self->ndim);
    if (dim < 0) return NULL;
    if (index->numel > 0 && !is_index_dtype(index->dtype)) PCT_FAIL(PCT_ERR_RUNTIME, "gather(): Expected dtype int32/int64 for index");
    if (index->numel == 0)
        return pct_index_to_out(c, pct_tensor_empty(index->ndim, index->sizes, self->dtype, self->device_type, self->device_index));
    if (ind != nd) PCT_FAIL(PCT_ERR_RUNTIME, "Index tensor must have the same number of dimensions as input tensor");
    for (int d = 0; d < nd; d++)
        if (d != dim && is[d] > ss[d])
            PCT_FAIL(PCT_ERR_RUNTIME, "Size does not match at dimension %d expected index %s to be no larger than self %s apart from dimension %d",
                     d, SHAPE(b1, index->ndim, index->sizes), SHAPE(b2, self->ndim, self->sizes), dim);
    if (dim == nd - 1 && self->ndim == nd) { /* Note [Fused gather]; a value out of range: the path below raises */
        PCT_TRY(r = pct_tensor_empty(index->ndim, index->sizes, self->dtype, self->device_type, self->device_index));
        if (pct_gather_last_dim(r, self, index) == 0) return pct_index_to_out(c, r);
        PCT_DECREF(r);
        r = NULL;
    }
    int64_t bad;
    int is_bad;
    idx = pct_ix_checked_index(index, 0, ss[dim], &bad, &is_bad);
    if (is_bad) PCT_FAIL(PCT_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld", (long long)bad, dim, (long long)ss[dim]);
    if (!idx) goto fail;
    PCT_TRY(r = pct_tensor_empty(index->ndim, index->sizes, self->dtype, self->device_type, self->device_index));
    {
        int64_t cst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS];
        pct_contiguous_strides(nd, is, cst);
        memcpy(shape, is, sizeof(int64_t) * (size_t)nd);
        shape[dim] = 1;
        ix_ctx ctx = {.op = IX_COPY, .n = is[dim], .idx_step = cst[dim], .dst_si = cst[dim], .src_sj = st[dim]};
        PCT_TRY_INT(pct_ix_run(&ctx, nd, shape, r, cst, self, st, idx, cst, NULL, NULL, false));
    }
    PCT_DECREF(idx);
    return pct_index_to_out(c, r);
fail:
    PCT_XDECREF(idx);
    PCT_XDECREF(r);
    return NULL;
}

/* Integer limits per dtype, for the identities of amax/amin. */
static pct_tensor *reduce_identity(int dtype, int op)
{
    bool lowest = op == IX_MAX;
    if (op == IX_ADD || op == IX_MEAN) return pct_tensor_scalar(dtype, 0, 0, false);
    if (op == IX_MUL) return pct_tensor_scalar(dtype, 1, 1, false);
    if (pct_dtype_is_floating(dtype)) return pct_tensor_scalar(dtype, lowest ? -INFINITY : INFINITY, 0, true);
    const pct_dtype_info *info = &pct_dtype_infos[dtype];
    return pct_tensor_scalar(dtype, 0, lowest ? info->int_lowest : info->int_highest, false);
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
/* complex64 / complex128: each part by the count */
#define MEAN_DIV_COMPLEX(N, T, R)                                                               \
    static void mean_div_##N(char **args, const int64_t *dims, const int64_t *steps, void *ctx)  \
    {                                                                                           \
        (void)ctx;                                                                              \
        for (int64_t k = 0; k < dims[0]; k++) {                                                 \
            T *d = (T *)(args[0] + k * steps[0]);                                               \
            int64_t n = *(const int64_t *)(args[1] + k * steps[1]);                             \
            *d = *d / (R)(n == 0 ? 1 : n);                                                      \
        }                                                                                       \
    }
MEAN_DIV_COMPLEX(cfloat, pct_cfloat, float)
MEAN_DIV_COMPLEX(cdouble, pct_cdouble, double)
#undef MEAN_DIV_COMPLEX
static const pct_loop_fn mean_div_loops[PCT_NUM_DTYPES] = {
#define MEAN_ENTRY(E, N, T, C, S) mean_div_##N,
    PCT_FORALL_DTYPES(MEAN_ENTRY)
#undef MEAN_ENTRY
    [PCT_COMPLEX64] = mean_div_cfloat, [PCT_COMPLEX128] = mean_div_cdouble,
};

/* What the scatter and index_add/copy/fill families write along: self's dim `dim` at `index` (their first three
 * arguments). */
typedef struct ix_along {
    pct_tensor *self;
    int64_t dim;
    pct_tensor *index;
} ix_along;

/* The scatter family. src NULL: value (a 0-d tensor of self's dtype) is scattered. */
static pct_object *scatter_impl(pct_call *c, const char *name, const ix_along *at, pct_tensor *src, pct_tensor *value,
                                int op, bool include_self)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF], b3[PCT_SHAPE_BUF];
    pct_tensor *self = at->self, *index = at->index, *target = NULL, *idx = NULL, *ident = NULL, *cnt = NULL, *srcu = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS], is[PCT_MAX_DIMS], ist[PCT_MAX_DIMS], rs[PCT_MAX_DIMS], rst[PCT_MAX_DIMS];
    int nd = pct_ix_geom(self, ss, st), ind = pct_ix_geom(index, is, ist);
    int dim = pct_wrap_dim(at->dim, self->ndim);
    if (dim < 0) return NULL;
    if (index->numel > 0 && !is_index_dtype(index->dtype))
        PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Expected dtype int32/int64 for index", name);
    if (src && src->dtype != self->dtype) PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Expected self.dtype to be equal to src.dtype", name);
    if (index->numel != 0) {
        if (ind != nd) PCT_FAIL(PCT_ERR_RUNTIME, "Index tensor must have the same number of dimensions as self tensor");
        if (src) {
            int64_t srs[PCT_MAX_DIMS], srst[PCT_MAX_DIMS];
            int snd = pct_ix_geom(src, srs, srst);
            /* torch reads src.size(d) for every dim of index before it compares the ranks */
            if (src->ndim > 0 && src->ndim < ind)
                PCT_FAIL(PCT_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                         -src->ndim, src->ndim - 1, src->ndim);
            if (snd != ind) PCT_FAIL(PCT_ERR_RUNTIME, "Index tensor must have the same number of dimensions as src tensor");
            for (int d = 0; d < nd; d++)
                if ((d != dim && is[d] > ss[d]) || is[d] > srs[d])
                    PCT_FAIL(PCT_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %d and to be no larger size than src %s",
                             SHAPE(b1, index->ndim, index->sizes), SHAPE(b2, self->ndim, self->sizes), dim, SHAPE(b3, src->ndim, src->sizes));
        } else {
            for (int d = 0; d < nd; d++)
                if (d != dim && is[d] > ss[d])
                    PCT_FAIL(PCT_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %d",
                             SHAPE(b1, index->ndim, index->sizes), SHAPE(b2, self->ndim, self->sizes), dim);
        }
    }
    int64_t bad;
    int is_bad;
    idx = pct_ix_checked_index(index, 0, ss[dim], &bad, &is_bad);
    if (is_bad) PCT_FAIL(PCT_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld", (long long)bad, dim, (long long)ss[dim]);
    if (!idx) goto fail;
    long v0 = version_of(self);
    if (c->inplace && pct_ix_check_written(self, NULL) < 0) goto fail;
    if (c->inplace) { target = self; PCT_INCREF(target); }
    else PCT_TRY(target = clone_of(self));
    if (src) {
        PCT_TRY(srcu = pct_ix_unaliased(target, src));
        src = srcu;
    }
    if (index->numel != 0) {
        int64_t cst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS], zero[PCT_MAX_DIMS] = {0}, srst[PCT_MAX_DIMS];
        pct_ix_geom(target, rs, rst);
        pct_contiguous_strides(nd, is, cst);
        memcpy(shape, is, sizeof(int64_t) * (size_t)nd);
        shape[dim] = 1;
        const int64_t *src_st = zero;
        int64_t src_si = 0;
        if (src) {
            int64_t srs[PCT_MAX_DIMS];
            pct_ix_geom(src, srs, srst);
            src_st = srst;
            src_si = srst[dim];
        }
        pct_tensor *from = src ? src : value;
        if (!include_self) {
            /* the scattered-to positions start from the reduction's identity */
            PCT_TRY(ident = reduce_identity(self->dtype, op));
            ix_ctx ctx = {.op = IX_COPY, .n = is[dim], .idx_step = cst[dim], .dst_sj = rst[dim]};
            PCT_TRY_INT(pct_ix_run(&ctx, nd, shape, target, rst, ident, zero, idx, cst, NULL, NULL, false));
        }
        if (op == IX_MEAN) {
            PCT_TRY(cnt = pct_tensor_zeros_on(nd, rs, PCT_INT64, target->device_type, target->device_index));
            if (include_self) {
                const pct_scalar one = {.kind = PCT_SCALAR_INT, .i = 1, .d = 1};
                PCT_TRY_INT(pct_fill_scalar(cnt, &one));
            }
            int64_t cntst[PCT_MAX_DIMS];
            pct_contiguous_strides(nd, rs, cntst);
            ix_ctx ctx = {.op = IX_MEAN, .n = is[dim], .idx_step = cst[dim], .dst_sj = rst[dim], .src_si = src_si,
                          .cnt_sj = cntst[dim]};
            PCT_TRY_INT(pct_ix_run(&ctx, nd, shape, target, rst, from, src_st, idx, cst, cnt, cntst, false));
            /* divide by the counts */
            pct_tensor *cv = pct_tensor_view_of(cnt, target->ndim, target->sizes, cntst, 0);
            if (!cv) goto fail;
            if (target->device_type != PCT_CPU) { /* Note [Device indexing] */
                int drc = pct_ix_device_mean_div(target, cv);
                PCT_DECREF(cv);
                if (drc < 0) goto fail;
                goto divided;
            }
            pct_iter it;
            pct_iter_config cfg = {.out = target, .inplace = true, .ninputs = 1, .inputs = {cv}, .compute_dtype = target->dtype,
                                   .out_dtype = target->dtype, .mixed_dtypes = true};
            int brc = pct_iter_build(&it, &cfg);
            PCT_DECREF(cv);
            if (brc < 0) goto fail;
            pct_iter_run(&it, mean_div_loops[target->dtype], NULL);
            pct_iter_release(&it);
        divided:;
        } else {
            ix_ctx ctx = {.op = op, .n = is[dim], .idx_step = cst[dim], .dst_sj = rst[dim], .src_si = src_si, .alpha_d = 1, .alpha_i = 1};
            PCT_TRY_INT(pct_ix_run(&ctx, nd, shape, target, rst, from, src_st, idx, cst, NULL, NULL, false));
        }
    }
    PCT_DECREF(idx);
    PCT_XDECREF(ident);
    PCT_XDECREF(cnt);
    PCT_XDECREF(srcu);
    return pct_ix_done(c, target, v0, true);
fail:
    PCT_XDECREF(idx);
    PCT_XDECREF(target);
    PCT_XDECREF(ident);
    PCT_XDECREF(cnt);
    PCT_XDECREF(srcu);
    return NULL;
}

/* scatter(input, dim, index, src | value, *, reduce=None): its four overloads share this (value NULL: src, where a
 * Python number given for src arrives as a wrapped-number tensor and is a value; reduce NULL: None). */
static pct_object *scatter_overload(pct_call *c, const ix_along *at, pct_tensor *src, const pct_scalar *value,
                                    const char *reduce)
{
    if (pct_wrap_dim(at->dim, at->self->ndim) < 0) return NULL;
    pct_tensor *vt = NULL;
    int op = IX_COPY;
    pct_scalar s;
    if (value) {
        s = *value;
    } else if (src->flags & PCT_FLAG_WRAPPED_NUMBER) {
        pct_tensor_item_scalar(src, &s);
        value = &s;
        src = NULL;
    }
    if (reduce) {
        if (strcmp(reduce, "add") == 0) op = IX_ADD;
        else if (strcmp(reduce, "multiply") == 0) op = IX_MUL;
        else {
            pct_error_str(PCT_ERR_RUNTIME, "reduce argument must be either add or multiply.");
            return NULL;
        }
    }
    /* the value's range check is skipped with an empty index, as torch does */
    if (value && ((at->index->numel && pct_scalar_check_fits(&s, at->self->dtype) < 0) ||
                  !(vt = pct_scalar_tensor_of(at->self->dtype, &s))))
        return NULL;
    pct_object *r = scatter_impl(c, "scatter", at, src, vt, op, true);
    PCT_XDECREF(vt);
    return r;
}

#define IX_ALONG(arg) (&(const ix_along){(arg).input, (arg).dim, (arg).index})
pct_object *pct_cpu_scatter_src(pct_call *c)
{
    PCT_ARGS(scatter_src);
    return scatter_overload(c, IX_ALONG(arg), arg.src, NULL, NULL);
}

pct_object *pct_cpu_scatter_value(pct_call *c)
{
    PCT_ARGS(scatter_value);
    return scatter_overload(c, IX_ALONG(arg), NULL, &arg.value, NULL);
}

pct_object *pct_cpu_scatter_src_reduce(pct_call *c)
{
    PCT_ARGS(scatter_src_reduce);
    return scatter_overload(c, IX_ALONG(arg), arg.src, NULL, arg.reduce);
}

pct_object *pct_cpu_scatter_value_reduce(pct_call *c)
{
    PCT_ARGS(scatter_value_reduce);
    return scatter_overload(c, IX_ALONG(arg), NULL, &arg.value, arg.reduce);
}

pct_object *pct_cpu_scatter_add(pct_call *c)
{
    PCT_ARGS(scatter_add);
    pct_tensor *src = arg.src;
    return scatter_impl(c, "scatter", IX_ALONG(arg), src, NULL, IX_ADD, true);
}

pct_object *pct_cpu_scatter_reduce(pct_call *c)
{
    PCT_ARGS(scatter_reduce);
    if (pct_wrap_dim(arg.dim, arg.input->ndim) < 0) return NULL; /* torch checks the dim first */
    const char *r = arg.reduce;
    int op;
    if (strcmp(r, "sum") == 0) op = IX_ADD;
    else if (strcmp(r, "prod") == 0) op = IX_MUL;
    else if (strcmp(r, "mean") == 0) op = IX_MEAN;
    else if (strcmp(r, "amax") == 0 || strcmp(r, "max") == 0) op = IX_MAX; /* torch accepts max/min too */
    else if (strcmp(r, "amin") == 0 || strcmp(r, "min") == 0) op = IX_MIN;
    else {
        pct_error(PCT_ERR_RUNTIME, "reduce argument must be either sum, prod, mean, amax or amin, got %s", r);
        return NULL;
    }
    if ((op == IX_MAX || op == IX_MIN) && pct_dtype_is_complex(arg.input->dtype)) { /* complex: sum, prod, mean */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"scatter_gather_tensor_cpu_reduce_%s\" not implemented for '%s'",
                  op == IX_MAX ? "amax" : "amin", pct_dtype_cpp_name[arg.input->dtype]);
        return NULL;
    }
    return scatter_impl(c, "scatter_reduce", IX_ALONG(arg), arg.src, NULL, op, arg.include_self);
}

/* The shapes (as pct_ix_geom() gives them) agree outside dim. */
static bool same_slices(const int64_t *ss, int nd, const int64_t *srs, int snd, int dim)
{
    if (snd != nd) return false;
    for (int d = 0; d < nd; d++)
        if (d != dim && srs[d] != ss[d]) return false;
    return true;
}

/* index_add / index_copy / index_fill: a vector index along dim of self. source NULL: fill. */
static pct_object *index_along(pct_call *c, const char *name, const ix_along *at, int op, pct_tensor *source,
                               pct_tensor *value, double alpha_d, int64_t alpha_i, bool wrap)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    pct_tensor *self = at->self, *index = at->index, *idx = NULL, *target = NULL, *srcu = NULL;
    int64_t ss[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = pct_ix_geom(self, ss, st);
    int dim = pct_wrap_dim(at->dim, self->ndim);
    if (dim < 0) return NULL;
    /* torch's index_copy_ refuses an expanded self, or one sharing memory with index or source, and index_copy an
     * out= of another dtype, before it validates the arguments */
    if (op == IX_COPY && source && c->inplace &&
        (pct_ix_check_written(self, NULL) < 0 || pct_ix_check_no_overlap(self, index) < 0 || pct_ix_check_no_overlap(self, source) < 0))
        return NULL;
    if (op == IX_COPY && source && !c->inplace && pct_out_check_dtype(c->out, self->dtype) < 0) return NULL;
    if (!source && index->dtype != PCT_INT64) PCT_FAIL(PCT_ERR_INDEX, "%s(): Expected dtype int64 for index.", name);
    if (index->ndim > 1 && !source) PCT_FAIL(PCT_ERR_RUNTIME, "Index has to be a vector/scalar");
    if (index->ndim > 1)
        PCT_FAIL(PCT_ERR_INDEX, "%s(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s", name,
                 index->ndim, pct_dtype_cpp_name[index->dtype], SHAPE(b1, index->ndim, index->sizes));
    const bool copy = op == IX_COPY && source; /* index_copy checks its index's dtype later */
    if (!source && index->dtype != PCT_INT64) PCT_FAIL(PCT_ERR_INDEX, "%s(): Expected dtype int64 for index.", name);
    if (!copy && !is_index_dtype(index->dtype))
        PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Expected dtype int32/int64 for index but got: %s", name, pct_dtype_cpp_name[index->dtype]);
    int64_t n = index->numel;
    int64_t srs[PCT_MAX_DIMS], srst[PCT_MAX_DIMS], zero[PCT_MAX_DIMS] = {0};
    if (source) {
        int snd = pct_ix_geom(source, srs, srst);
        if (op == IX_COPY) { /* torch's order: scalar source, ranks, index dtype, dtypes, slice shapes, count */
            if (source->ndim == 0 && n != 1)
                PCT_FAIL(PCT_ERR_INDEX, "%s(): When source is scalar, index should have one element (got %lld)", name,
                         (long long)n);
            if (snd != nd && !(source->ndim == 0 || self->ndim == 0))
                PCT_FAIL(PCT_ERR_INDEX, "%s(): When source and destination are not scalars, their dimensionality must match. Source "
                         "dimensionality (%d), destination dimensionality (%d)", name, source->ndim, self->ndim);
            if (index->dtype != PCT_INT64)
                PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Expected a long tensor for index, but got %s", name, pct_dtype_cpp_name[index->dtype]);
            if (source->dtype != self->dtype)
                PCT_FAIL(PCT_ERR_RUNTIME, "%s(): self and source expected to have the same dtype, but got (self) %s and (source) %s",
                         name, pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
            if (!same_slices(ss, nd, srs, snd, dim))
                PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Source/destination tensor must have same slice shapes. Destination slice shape: %s "
                         "and source slice shape: %s", name, SHAPE(b1, self->ndim, self->sizes), SHAPE(b2, source->ndim, source->sizes));
            if (srs[snd > dim ? dim : 0] != n)
                PCT_FAIL(PCT_ERR_INDEX, "%s(): Number of indices (%lld) should be equal to source.size(dim) (%lld)", name,
                         (long long)n, (long long)srs[snd > dim ? dim : 0]);
        } else {
            if (source->dtype != self->dtype)
                PCT_FAIL(PCT_ERR_RUNTIME, "%s(): self (%s) and source (%s) must have the same scalar type", name,
                         pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
            if (source->ndim == 0 && dim > 0)
                PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Indexing dim %d is out of bounds of the source tensor with dim 0", name, dim);
            if (source->ndim == 0 && n != 1)
                PCT_FAIL(PCT_ERR_INDEX, "Dimension specified as %d but tensor has no dimensions", dim);
            if (source->ndim != self->ndim)
                PCT_FAIL(PCT_ERR_RUNTIME, "source tensor shape must match self tensor shape, excluding the specified dimension. "
                         "Got self.shape = %s source.shape = %s", SHAPE(b1, self->ndim, self->sizes), SHAPE(b2, source->ndim, source->sizes));
            if (srs[snd > dim ? dim : 0] != n)
                PCT_FAIL(PCT_ERR_RUNTIME, "%s(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %d",
                         name, (long long)n, (long long)srs[snd > dim ? dim : 0], dim);
        }
        if (!same_slices(ss, nd, srs, snd, dim))
            PCT_FAIL(PCT_ERR_RUNTIME, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                     "self.shape = %s source.shape = %s", SHAPE(b1, self->ndim, self->sizes), SHAPE(b2, source->ndim, source->sizes));
    }
    int64_t bad;
    int is_bad;
    /* nothing is read or written: torch checks no index then */
    bool moves = source ? source->numel > 0 : self->numel > 0;
    int64_t others = 1;
    for (int d = 0; d < nd; d++) others *= d == dim ? 1 : ss[d];
    if (!source && ss[dim] == 0 && n > 0 && others > 0)
        PCT_FAIL(PCT_ERR_RUNTIME, "%s(): cannot fill dimension %d of size 0 (got %lld indices)", name, dim, (long long)n);
    idx = pct_ix_checked_index(index, moves ? (wrap ? -ss[dim] : 0) : INT64_MIN, moves ? ss[dim] : INT64_MAX, &bad, &is_bad);
    if (is_bad) {
        if (op == IX_COPY && source) raise_dim_bounds(PCT_ERR_INDEX, "index_copy_(): ", bad, dim, ss[dim]);
        else if (source) raise_dim_bounds(PCT_ERR_RUNTIME, "", bad, dim, ss[dim]);
        else raise_dim_bounds(PCT_ERR_INDEX, "", bad, dim, ss[dim]);
        goto fail;
    }
    if (!idx) goto fail;
    long v0 = version_of(self);
    if (c->inplace && pct_ix_check_written(self, source ? NULL : "index_fill_") < 0) goto fail;
    if (c->inplace) { target = self; PCT_INCREF(target); }
    else PCT_TRY(target = clone_of(self));
    if (source) {
        PCT_TRY(srcu = pct_ix_unaliased(target, source));
        source = srcu;
    }
    {
        /* walk the source's shape row-major (runs along the inner dims share one index value);
         * accumulation runs serially, in index order, as torch's loop over the index does */
        int64_t rs[PCT_MAX_DIMS], rst[PCT_MAX_DIMS], shape[PCT_MAX_DIMS], ist[PCT_MAX_DIMS] = {0};
        pct_ix_geom(target, rs, rst);
        memcpy(shape, rs, sizeof(int64_t) * (size_t)nd);
        shape[dim] = n;
        int64_t jstride = rst[dim];
        rst[dim] = 0;
        ist[dim] = 1;
        ix_ctx ctx = {.op = op, .n = 1, .dst_sj = jstride, .alpha_d = alpha_d, .alpha_i = alpha_i};
        PCT_TRY_INT(pct_ix_run(&ctx, nd, shape, target, rst, source ? source : value, source ? srst : zero, idx, ist, NULL, NULL,
                           op != IX_COPY));
    }
    PCT_DECREF(idx);
    PCT_XDECREF(srcu);
    return pct_ix_done(c, target, v0, true);
fail:
    PCT_XDECREF(idx);
    PCT_XDECREF(target);
    PCT_XDECREF(srcu);
    return NULL;
}

pct_object *pct_cpu_index_add(pct_call *c)
{
    PCT_ARGS(index_add);
    const pct_scalar *a = &arg.alpha;
    pct_tensor *self = arg.input;
    /* an integral tensor takes a float alpha truncated, as torch does, after its range check */
    if (pct_scalar_check_fits(a, self->dtype) < 0) return NULL;
    int64_t ai = a->kind == PCT_SCALAR_FLOAT ? (int64_t)a->d : a->i;
    return index_along(c, "index_add_", IX_ALONG(arg), IX_ADD, arg.source, NULL, a->d, ai, false);
}

pct_object *pct_cpu_index_copy(pct_call *c)
{
    PCT_ARGS(index_copy);
    return index_along(c, "index_copy_", IX_ALONG(arg), IX_COPY, arg.source, NULL, 1, 1, false);
}

pct_object *pct_cpu_index_fill(pct_call *c)
{
    PCT_ARGS(index_fill);
    pct_tensor *self = arg.input, *value = arg.value;
    if (value->ndim != 0) {
        pct_error(PCT_ERR_RUNTIME, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                     value->ndim);
        return NULL;
    }
    pct_scalar s;
    if (value->device_type != PCT_CPU) { /* a device's 0-d value is read through a host copy, as torch's item() */
        pct_tensor *h = pct_tensor_empty(0, NULL, value->dtype, PCT_CPU, -1);
        if (!h || pct_copy_(h, value) < 0) {
            PCT_XDECREF(h);
            return NULL;
        }
        pct_tensor_item_scalar(h, &s);
        s.from_tensor = true;
        PCT_DECREF(h);
    } else {
        pct_tensor_item_scalar(value, &s);
    }
    if (pct_scalar_check_fits(&s, self->dtype) < 0) return NULL;
    pct_tensor *v = pct_scalar_tensor_of(self->dtype, &s);
    if (!v) return NULL;
    pct_object *r = index_along(c, "index_fill_", IX_ALONG(arg), IX_COPY, NULL, v, 1, 1, true);
    PCT_DECREF(v);
    return r;
}

/* fill_(Tensor value): torch's overload for a 0-d tensor value (its gradient flows to value) */
int pct_fill_tensor_value_(pct_tensor *self, pct_tensor *value)
{
    if (value->ndim != 0) {
        pct_error(PCT_ERR_RUNTIME, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                     value->ndim);
        return -1;
    }
    /* torch fills from a tensor through a TensorIterator, which refuses an expanded self (a Number fills any) */
    if (pct_check_written_overlap(self, 0, NULL) < 0) return -1;
    pct_scalar s;
    pct_tensor_item_scalar(value, &s);
    return pct_fill_scalar(self, &s);
}

pct_object *pct_cpu_fill_tensor_(pct_call *c)
{
    PCT_ARGS(fill_tensor_);
    if (pct_fill_tensor_value_(arg.input, arg.value) < 0) return NULL;
    PCT_INCREF(arg.input);
    return (pct_object *)arg.input;
}

/* ---------------------------------------------------------------------------------------
 * take / put_
 * ------------------------------------------------------------------------------------- */

/* Element offsets into t of the row-major linear indices in index (wrapped, checked). */
static pct_tensor *linear_offsets(pct_tensor *t, pct_tensor *index)
{
    pct_tensor *L = pct_tensor_empty(index->ndim, index->sizes, PCT_INT64, t->device_type, t->device_index);
    if (!L) return NULL;
    off_ctx c = {.lo = -t->numel, .hi = t->numel, .mul = 1, .linear = !pct_tensor_is_contiguous(t) && t->ndim > 0,
                 .ndim = t->ndim, .sizes = t->sizes, .strides = t->strides};
    atomic_init(&c.err, 0);
    if (pct_ix_off_run(L, index, &c) < 0) { PCT_DECREF(L); return NULL; }
    if (atomic_load(&c.err)) {
        if (t->numel == 0) pct_error_str(PCT_ERR_INDEX, "take(): tried to take from an empty tensor");
        else pct_error(PCT_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.", (long long)c.bad,
                          (long long)t->numel);
        PCT_DECREF(L);
        return NULL;
    }
    return L;
}

pct_object *pct_cpu_take(pct_call *c)
{
    PCT_ARGS(take);
    pct_tensor *self = arg.input, *index = arg.index, *L = NULL, *r = NULL;
    if (c->out && c->out->dtype != self->dtype)
        PCT_FAIL(PCT_ERR_RUNTIME, "take(): self and out expected to have the same dtype, but got self.dtype = %s and out.dtype = %s",
                 pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[c->out->dtype]);
    if (index->dtype != PCT_INT64) PCT_FAIL(PCT_ERR_RUNTIME, "take(): Expected a long tensor for index, but got %s", pct_dtype_cpp_name[index->dtype]);
    PCT_TRY(L = linear_offsets(self, index));
    PCT_TRY(r = pct_tensor_empty(index->ndim, index->sizes, self->dtype, self->device_type, self->device_index));
    {
        int64_t zero[PCT_MAX_DIMS] = {0};
        ix_ctx ctx = {.op = IX_COPY, .n = 1, .src_sj = 1};
        PCT_TRY_INT(pct_ix_run(&ctx, r->ndim, r->sizes, r, r->strides, self, zero, L, L->strides, NULL, NULL, false));
    }
    PCT_DECREF(L);
    return pct_index_to_out(c, r);
fail:
    PCT_XDECREF(L);
    PCT_XDECREF(r);
    return NULL;
}

pct_object *pct_cpu_put(pct_call *c)
{
    PCT_ARGS(put);
    pct_tensor *self = arg.input, *index = arg.index, *source = arg.source, *L = NULL, *src = NULL, *target = NULL;
    bool accumulate = arg.accumulate;
    if (index->dtype != PCT_INT64) PCT_FAIL(PCT_ERR_RUNTIME, "put_(): Expected a long tensor for index, but got %s", pct_dtype_cpp_name[index->dtype]);
    if (source->dtype != self->dtype)
        PCT_FAIL(PCT_ERR_RUNTIME, "put_(): self and source expected to have the same dtype, but got self.dtype = %s and source.dtype = %s",
                 pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[source->dtype]);
    if (source->numel != index->numel)
        PCT_FAIL(PCT_ERR_INDEX, "put_(): Expected source and index to have the same number of elements, but got source.numel() = %lld, "
                 "index.numel() = %lld", (long long)source->numel, (long long)index->numel);
    long v0 = version_of(self);
    if (c->inplace && pct_ix_check_written(self, NULL) < 0) goto fail;
    if (c->inplace) { target = self; PCT_INCREF(target); }
    else PCT_TRY(target = clone_of(self));
    PCT_TRY(L = linear_offsets(target, index));
    PCT_TRY(src = pct_ix_unaliased(target, source));
    {
        pct_tensor *cc = pct_contiguous(src);
        PCT_DECREF(src);
        PCT_TRY(src = cc);
    }
    {
        int64_t zero[PCT_MAX_DIMS] = {0};
        ix_ctx ctx = {.op = accumulate ? IX_ADD : IX_COPY, .n = 1, .dst_sj = 1, .alpha_d = 1, .alpha_i = 1};
        PCT_TRY_INT(pct_ix_run(&ctx, L->ndim, L->sizes, target, zero, src, L->strides, L, L->strides, NULL, NULL, true));
    }
    PCT_DECREF(L);
    PCT_DECREF(src);
    return pct_ix_done(c, target, v0, false);
fail:
    PCT_XDECREF(L);
    PCT_XDECREF(src);
    PCT_XDECREF(target);
    return NULL;
}
