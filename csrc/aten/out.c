/* out.c: out= arguments, once for every op.
 *
 * Note [out= arguments]
 * torch's rules for a tensor passed as out= (none of them apply to the self of an in-place op,
 * which the loop machine checks itself, csrc/aten/iter.c):
 *  - memory: out may not have internal overlap (two elements at one address: an expanded
 *    tensor), and, for most ops, may not partially overlap a tensor input (sharing the exact
 *    same elements in the same layout is allowed: elementwise ops read before they write). Which
 *    ops check what is torch's per-op choice: its reductions (sum, prod, amax, var, norm...),
 *    tril/triu, bmm/mv/dot and the factories check nothing; mm, matmul, mean, logsumexp, the
 *    searches and a few more check only internal overlap; everything else checks both. The
 *    table below lists the exceptions. torch checks once out has its final shape (an expanded
 *    out of the wrong shape is resized, then fine), except in TensorIterator ops, which check
 *    first: pct_dispatch marks the call being run (pct_out_enter) and pct_out_resize, which every
 *    kernel calls on its out= before writing it, applies the rules; the loop machine and ops marked
 *    EARLY check before. Index ops add their stricter full-overlap rule in index.c, the joins
 *    theirs in join.c.
 *  - shape: an out of the wrong shape is resized (pct_out_resize), with torch's deprecation
 *    warning when it had elements; an out of the right shape keeps its strides. An out that is
 *    itself one of the inputs of an elementwise op may not be resized (iter.c).
 *  - dtype: elementwise ops (the loop machine) accept any out dtype the result can be cast to
 *    and compute at the result dtype, casting on store; most other ops require out's dtype to
 *    equal the result dtype (pct_out_check_dtype and the kernels' own checks, with each op
 *    family's message, as torch's).
 */
#include "out.h"
#include "error.h"
#include "iter.h"
#include <string.h>

/* EARLY: checked before the kernel runs; EARLY_SAME: before the kernel when out already has the shape of the
 * first input (ops whose result has self's shape and that check out before validating their other arguments) */
enum { OUT_CHECK_INTERNAL = 1, OUT_CHECK_PARTIAL = 2, OUT_CHECK_BOTH = 3, OUT_CHECK_NONE = 4, OUT_CHECK_EARLY = 8,
       OUT_CHECK_EARLY_SAME = 16 };

/* Exceptions to OUT_CHECK_BOTH, the default for every op with an out= parameter (torch 2.13's behaviour). */
static const uint8_t out_policy[PCT_NUM_OPS] = {
    /* reductions built on TensorIterator's reduction mode, which checks no overlap */
    [PCT_OP_sum] = OUT_CHECK_NONE, [PCT_OP_nansum] = OUT_CHECK_NONE, [PCT_OP_prod] = OUT_CHECK_NONE,
    [PCT_OP_amax] = OUT_CHECK_NONE, [PCT_OP_amin] = OUT_CHECK_NONE, [PCT_OP_argmax] = OUT_CHECK_NONE,
    [PCT_OP_argmin] = OUT_CHECK_NONE, [PCT_OP_all] = OUT_CHECK_NONE, [PCT_OP_any] = OUT_CHECK_NONE,
    [PCT_OP_var] = OUT_CHECK_NONE, [PCT_OP_std] = OUT_CHECK_NONE, [PCT_OP_norm] = OUT_CHECK_NONE,
    [PCT_OP_norm_str] = OUT_CHECK_NONE, [PCT_OP_linalg_vector_norm] = OUT_CHECK_NONE, [PCT_OP_histc] = OUT_CHECK_NONE,
    [PCT_OP_cummax] = OUT_CHECK_NONE, [PCT_OP_cummin] = OUT_CHECK_NONE,
    /* the joins check in their own order (join.c): the inputs before out is resized, out itself after */
    [PCT_OP_cat] = OUT_CHECK_NONE, [PCT_OP_concat] = OUT_CHECK_NONE, [PCT_OP_concatenate] = OUT_CHECK_NONE,
    [PCT_OP_concatenate_axis] = OUT_CHECK_NONE, [PCT_OP_stack] = OUT_CHECK_NONE, [PCT_OP_hstack] = OUT_CHECK_NONE,
    [PCT_OP_vstack] = OUT_CHECK_NONE, [PCT_OP_dstack] = OUT_CHECK_NONE,
    /* kernels that write out= directly without a check */
    [PCT_OP_tril] = OUT_CHECK_NONE, [PCT_OP_triu] = OUT_CHECK_NONE, [PCT_OP_bmm] = OUT_CHECK_NONE,
    [PCT_OP_mv] = OUT_CHECK_NONE, [PCT_OP_dot] = OUT_CHECK_NONE, [PCT_OP_vdot] = OUT_CHECK_NONE,
    /* factories resize out= with Tensor.resize_ and fill it; those that check do it themselves */
    [PCT_OP_empty] = OUT_CHECK_NONE, [PCT_OP_zeros] = OUT_CHECK_NONE, [PCT_OP_ones] = OUT_CHECK_NONE,
    [PCT_OP_full] = OUT_CHECK_NONE, [PCT_OP_eye] = OUT_CHECK_NONE, [PCT_OP_arange] = OUT_CHECK_NONE,
    [PCT_OP_arange_end] = OUT_CHECK_NONE, [PCT_OP_linspace] = OUT_CHECK_NONE, [PCT_OP_logspace] = OUT_CHECK_NONE,
    [PCT_OP_rand] = OUT_CHECK_NONE, [PCT_OP_randn] = OUT_CHECK_NONE, [PCT_OP_randint] = OUT_CHECK_NONE,
    [PCT_OP_randint_low] = OUT_CHECK_NONE, [PCT_OP_randperm] = OUT_CHECK_NONE, [PCT_OP_normal_float_float] = OUT_CHECK_NONE,
    [PCT_OP_normal_tensor_float] = OUT_CHECK_NONE, [PCT_OP_normal_tensor_tensor] = OUT_CHECK_NONE,
    [PCT_OP_normal_float_tensor] = OUT_CHECK_NONE, /* random.c: out's dtype first, then its overlap */
    [PCT_OP_index_copy] = OUT_CHECK_BOTH | OUT_CHECK_EARLY_SAME,
    /* TensorIterator ops outside the loop machine's own checks: out= is checked before it is resized */
    [PCT_OP_outer] = OUT_CHECK_BOTH | OUT_CHECK_EARLY, [PCT_OP_ger] = OUT_CHECK_BOTH | OUT_CHECK_EARLY,
    /* ops that assert only that out has no internal overlap */
    [PCT_OP_mean] = OUT_CHECK_INTERNAL, [PCT_OP_nanmean] = OUT_CHECK_INTERNAL, [PCT_OP_logsumexp] = OUT_CHECK_INTERNAL,
    [PCT_OP_matmul] = OUT_CHECK_INTERNAL, [PCT_OP_mm] = OUT_CHECK_INTERNAL, [PCT_OP_inner] = OUT_CHECK_INTERNAL,
    [PCT_OP_tensordot] = OUT_CHECK_INTERNAL, [PCT_OP_diag] = OUT_CHECK_INTERNAL, [PCT_OP_argsort_stable] = OUT_CHECK_INTERNAL,
    [PCT_OP_searchsorted] = OUT_CHECK_INTERNAL, [PCT_OP_bucketize] = OUT_CHECK_INTERNAL,
    [PCT_OP_multinomial] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_matrix_norm] = OUT_CHECK_INTERNAL,
    [PCT_OP_linalg_matrix_norm_str] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_norm] = OUT_CHECK_INTERNAL,
    [PCT_OP_linalg_norm_str] = OUT_CHECK_INTERNAL, [PCT_OP_nonzero] = OUT_CHECK_INTERNAL,
    [PCT_OP_linalg_svd] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_svdvals] = OUT_CHECK_INTERNAL, [PCT_OP_svd] = OUT_CHECK_INTERNAL,
    /* the LAPACK-backed linalg ops (cpu/linalg_factor.c, linalg_solve.c) */
    [PCT_OP_cholesky] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_det] = OUT_CHECK_INTERNAL,
    [PCT_OP_linalg_eigvalsh] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_householder_product] = OUT_CHECK_INTERNAL,
    [PCT_OP_orgqr] = OUT_CHECK_INTERNAL, [PCT_OP_ormqr] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_ldl_solve] = OUT_CHECK_INTERNAL,
    [PCT_OP_linalg_lu_solve] = OUT_CHECK_INTERNAL, [PCT_OP_linalg_solve_triangular] = OUT_CHECK_INTERNAL,
};

int pct_out_each_input(const pct_call *c, int (*fn)(void *ctx, pct_tensor *t), void *ctx)
{
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (v->none || i == sig->out_index) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR) {
            if (fn(ctx, v->t) < 0) return -1;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST) {
            for (int32_t j = 0; j < v->n; j++)
                if (fn(ctx, v->items[j]) < 0) return -1;
        }
    }
    return 0;
}

typedef struct inputs_buf { pct_tensor **ins; int n, cap; } inputs_buf;
static int keep_input(void *ctx, pct_tensor *t)
{
    inputs_buf *b = ctx;
    if (b->n < b->cap) b->ins[b->n++] = t;
    return 0;
}

/* The first `cap` tensor inputs of c. */
static int gather_inputs(const pct_call *c, pct_tensor **ins, int cap)
{
    inputs_buf b = {ins, 0, cap};
    pct_out_each_input(c, keep_input, &b);
    return b.n;
}

/* The op call whose out= tensors pct_out_resize checks: set by pct_dispatch around the kernel (per thread, as a
 * kernel may release the GIL while another thread dispatches). */
static _Thread_local const pct_call *out_call;

static int out_check(const pct_call *c, const pct_tensor *out);

int pct_out_enter(const pct_call *c, const pct_call **prev)
{
    *prev = out_call;
    int policy = out_policy[c->op_index];
    out_call = policy == OUT_CHECK_NONE || c->inplace ? NULL : c;
    const pct_signature *sig = &c->op->sig;
    if (!out_call || !(policy & (OUT_CHECK_EARLY | OUT_CHECK_EARLY_SAME)) || sig->params[sig->out_index].type != PCT_ARG_TENSOR)
        return 0;
    const pct_tensor *out = c->v[sig->out_index].t, *self = sig->params[0].type == PCT_ARG_TENSOR ? c->v[0].t : NULL;
    bool early = (policy & OUT_CHECK_EARLY) ||
                 (self && self->ndim == out->ndim && memcmp(self->sizes, out->sizes, sizeof(int64_t) * (size_t)out->ndim) == 0);
    if (early && out_check(c, out) < 0) {
        out_call = *prev;
        return -1;
    }
    return 0;
}

void pct_out_leave(const pct_call *prev) { out_call = prev; }

/* Whether t is an out= tensor of call c (the tensor, or an item of the tuple). */
static bool is_out_of(const pct_call *c, const pct_tensor *t)
{
    const pct_signature *sig = &c->op->sig;
    if (sig->out_index < 0 || c->v[sig->out_index].none) return false;
    if (sig->params[sig->out_index].type == PCT_ARG_TENSOR) return c->v[sig->out_index].t == t;
    pct_object *o = c->v[sig->out_index].obj;
    pct_object *const *items;
    int64_t n;
    if (!o || !pct_sequence_items(o, &items, &n)) return false;
    for (int64_t k = 0; k < n; k++)
        if (items[k] == (pct_object *)t) return true;
    return false;
}

/* The memory rules for out once it has its final shape (torch checks after resizing out=, except in
 * TensorIterator ops, whose checks the loop machine makes before). */
static int out_check(const pct_call *c, const pct_tensor *out)
{
    int policy = out_policy[c->op_index] ? out_policy[c->op_index] & OUT_CHECK_BOTH : OUT_CHECK_BOTH;
    if (!policy || !is_out_of(c, out)) return 0;
    pct_tensor *ins[64];
    int nin = policy & OUT_CHECK_PARTIAL ? gather_inputs(c, ins, 64) : 0;
    return pct_check_written_overlap(out, nin, ins);
}

static int out_resize(pct_tensor *out, int ndim, const int64_t *shape, bool warn)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (out->ndim == ndim && (ndim == 0 || memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)ndim) == 0))
        return out_call ? out_check(out_call, out) : 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s", (long long)shape[i],
                         pct_shape_str(b1, sizeof b1, ndim, shape));
            return -1;
        }
    }
    if (warn && out->numel != 0 &&
        pct_warn(PCT_WARN_USER,
                         "An output with one or more elements was resized since it had shape %s, which does not match "
                         "the required output shape %s. This behavior is deprecated, and in a future PyTorch release "
                         "outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
                         "tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                         pct_shape_str(b1, sizeof b1, out->ndim, out->sizes), pct_shape_str(b2, sizeof b2, ndim, shape)) < 0)
        return -1;
    if (pct_tensor_resize_(out, ndim, shape) < 0) return -1;
    return out_call ? out_check(out_call, out) : 0;
}

int pct_out_resize(pct_tensor *out, int ndim, const int64_t *shape) { return out_resize(out, ndim, shape, true); }
int pct_out_resize_quiet(pct_tensor *out, int ndim, const int64_t *shape) { return out_resize(out, ndim, shape, false); }

int pct_out_check_dtype(const pct_tensor *out, int dtype)
{
    if (!out || out->dtype == dtype) return 0;
    pct_error(PCT_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead", pct_dtype_cpp_type_name[dtype],
                 pct_dtype_cpp_type_name[out->dtype]);
    return -1;
}

int pct_out_check_cast(int result_dtype, const pct_tensor *out)
{
    if (!out || pct_can_cast(result_dtype, out->dtype)) return 0;
    pct_error(PCT_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s", pct_dtype_cpp_name[result_dtype],
                 pct_dtype_cpp_name[out->dtype]);
    return -1;
}

/* A type's name as torch prints it ("Tensor", not "pyctorch.Tensor"). */
static const char *short_type_name(pct_object *o)
{
    const char *n = pct_type_name(o), *dot = strrchr(n, '.');
    return dot ? dot + 1 : n;
}

int pct_out_parse_tuple(pct_object *o, const char *name, int n, pct_tensor **outs)
{
    for (int i = 0; i < n; i++) outs[i] = NULL;
    if (!o || pct_is_none(o)) return 0;
    pct_object *const *items;
    int64_t got;
    if (!pct_sequence_items(o, &items, &got)) {
        pct_error(PCT_ERR_TYPE, "%s(): argument 'out' must be tuple of Tensors, not %s", name, short_type_name(o));
        return -1;
    }
    if (got != n) {
        pct_error(PCT_ERR_TYPE, "expected tuple of %d elements but got %lld", n, (long long)got);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        pct_object *t = items[i];
        if (!pct_is_tensor(t)) {
            pct_error(PCT_ERR_TYPE, "%s(): argument 'out' must be tuple of Tensors, not %s", name, short_type_name(t));
            return -1;
        }
        outs[i] = (pct_tensor *)t;
    }
    return 0;
}

int pct_out_parse_pair(pct_object *out, const char *name, pct_tensor **outs)
{
    return pct_out_parse_tuple(out, name, 2, outs);
}
