/* iter.c: building and running the elementwise loop machine. */
#include "iter.h"
#include "error.h"
#include "out.h"
#include "backend.h"
#include "cpu/copy_loops.h"
#include <stdint.h>
#include <string.h>

int pct_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    int64_t res[PCT_MAX_DIMS]; /* out may alias a or b */
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            pct_error(PCT_ERR_RUNTIME,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                         (long long)sa, (long long)sb, i);
            return -1;
        }
        res[i] = sa == 1 ? sb : sa;
    }
    memcpy(out, res, sizeof(int64_t) * (size_t)n);
    *nout = n;
    return 0;
}

static int tier_of(const pct_tensor *t)
{
    if (t->flags & PCT_FLAG_WRAPPED_NUMBER) return 2;
    return t->ndim == 0 ? 1 : 0;
}

static int raise_refused_promotion(int da, int db)
{
    const char *a = da == PCT_UINT64_SCALAR ? "UInt64" : pct_dtype_cpp_name[da];
    const char *b = db == PCT_UINT64_SCALAR ? "UInt64" : pct_dtype_cpp_name[db];
    pct_error(PCT_ERR_RUNTIME, "Promotion for %s is not supported, attempted to promote %s and %s",
              pct_dtype_is_float8(da) || pct_dtype_is_float8(db) ? "Float8 Types" : "uint16, uint32, uint64 types", a, b);
    return -1;
}

int pct_result_type_done(pct_result_type_state *st)
{
    int r = pct_result_type_finish(st);
    return r >= 0 ? r : raise_refused_promotion(st->refused_a, st->refused_b);
}

int pct_promote_types_or_raise(int a, int b)
{
    int r = pct_promote_types(a, b);
    return r >= 0 ? r : raise_refused_promotion(a, b);
}

int pct_result_type_of(int n, pct_tensor *const *ts)
{
    pct_result_type_state st = PCT_RESULT_TYPE_STATE_INIT;
    for (int i = 0; i < n; i++)
        pct_result_type_update(&st, ts[i]->flags & PCT_FLAG_UINT64_NUMBER ? PCT_UINT64_SCALAR : ts[i]->dtype, tier_of(ts[i]));
    return pct_result_type_done(&st);
}

void pct_iter_release(pct_iter *it)
{
    for (int k = 0; k < it->ntensors; k++) PCT_CLEAR(it->ops[k]);
    PCT_CLEAR(it->result);
    it->ntensors = 0;
}

/* Sets byte strides of operand k, aligned to the iterator's broadcast shape. */
static void fill_strides(pct_iter *it, int k)
{
    const pct_tensor *t = it->ops[k];
    int64_t item = pct_tensor_itemsize(t);
    for (int d = 0; d < it->ndim; d++) {
        int td = t->ndim - it->ndim + d;
        it->strides[d][k] = (td < 0 || t->sizes[td] == 1) ? 0 : t->strides[td] * item;
    }
    it->data[k] = pct_tensor_data(t);
}

/* Reorders the iteration dims so the loop walks memory in `order` (order[0] innermost). */
static void permute_dims(pct_iter *it, const int *order)
{
    int n = it->ndim;
    int64_t shape[PCT_MAX_DIMS], strides[PCT_MAX_DIMS][PCT_ITER_MAX_OPERANDS];
    for (int j = 0; j < n; j++) {
        int d = order[n - 1 - j];
        shape[j] = it->shape[d];
        memcpy(strides[j], it->strides[d], sizeof strides[j]);
    }
    memcpy(it->shape, shape, sizeof(int64_t) * (size_t)n);
    memcpy(it->strides, strides, sizeof strides[0] * (size_t)n);
}

/* Drops size-1 dims and merges neighbours that are contiguous for every operand. */
static void coalesce(pct_iter *it)
{
    int n = 0;
    for (int d = 0; d < it->ndim; d++) {
        if (it->shape[d] == 1) continue;
        if (n > 0) {
            bool merge = true;
            for (int k = 0; k < it->ntensors; k++)
                if (it->strides[n - 1][k] != it->shape[d] * it->strides[d][k]) { merge = false; break; }
            if (merge) {
                it->shape[n - 1] *= it->shape[d];
                for (int k = 0; k < it->ntensors; k++) it->strides[n - 1][k] = it->strides[d][k];
                continue;
            }
        }
        it->shape[n] = it->shape[d];
        for (int k = 0; k < it->ntensors; k++) it->strides[n][k] = it->strides[d][k];
        n++;
    }
    it->ndim = n;
}

/* Stride of operand t in iteration dim d (0 where t broadcasts, its own stride for a real size-1 dim). */
static int64_t layout_stride(const pct_tensor *t, int ndim, const int64_t *shape, int d)
{
    int td = t->ndim - ndim + d;
    if (td < 0 || (t->sizes[td] == 1 && shape[d] != 1)) return 0;
    return t->strides[td];
}

void pct_layout_perm(int ndim, const int64_t *sizes, int nops, const int64_t *const *strides, int *perm)
{
    for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
    for (int i = 1; i < ndim; i++) {
        int slow = i;
        for (int fast = i - 1; fast >= 0; fast--) {
            /* the first operand with two non-zero strides that differ decides; on a tie in stride
             * the longer dim goes outside; when nobody decides, compare with the next faster dim */
            int d0 = perm[fast], d1 = perm[slow], verdict = 0;
            for (int k = 0; k < nops && !verdict; k++) {
                int64_t a = strides[k][d0], b = strides[k][d1];
                if (a == 0 || b == 0) continue;
                if (a != b) verdict = a < b ? -1 : 1;
                else if (sizes[d0] > sizes[d1]) verdict = 1;
            }
            if (verdict < 0) break;
            if (verdict > 0) {
                perm[fast] = d1;
                perm[slow] = d0;
                slow = fast;
            }
        }
    }
}

/* The memory order of the iteration space (order[0] fastest) from the written tensor, when it keeps its
 * shape, and the inputs; true when that is plain C order (outputs are then allocated contiguous). */
static bool layout_order(int ndim, const int64_t *shape, pct_tensor *const *ops, int nops, int *order)
{
    int64_t st[PCT_ITER_MAX_OPERANDS][PCT_MAX_DIMS];
    const int64_t *rows[PCT_ITER_MAX_OPERANDS];
    for (int k = 0; k < nops; k++) {
        for (int d = 0; d < ndim; d++) st[k][d] = layout_stride(ops[k], ndim, shape, d);
        rows[k] = st[k];
    }
    pct_layout_perm(ndim, shape, nops, rows, order);
    for (int j = 0; j < ndim; j++)
        if (order[j] != ndim - 1 - j) return false;
    return true;
}

/* TensorIterator's fast setup: operands that all have the broadcast shape and are all contiguous give a
 * C-order result. Only empty tensors (contiguous whatever their strides) can get another order from
 * layout_order: torch's t + t of a permuted (0, 2, 3) t is C-ordered, t * 2 (a broadcast operand) is not. */
static bool all_contiguous_same_shape(int ndim, const int64_t *shape, pct_tensor *const *ops, int nops)
{
    for (int k = 0; k < nops; k++)
        if (ops[k]->ndim != ndim || !pct_tensor_is_contiguous(ops[k]) ||
            (ndim && memcmp(ops[k]->sizes, shape, sizeof(int64_t) * (size_t)ndim) != 0))
            return false;
    return nops > 0;
}

/* The device of the tensors a plan allocates (its output, a temporary for an out= of another dtype): the written
 * tensor's, else that of the first input that is not a 0-d CPU tensor (which joins any device, as in the dispatcher),
 * else the CPU. */
static void plan_device(const pct_iter_config *cfg, int *type, int *index)
{
    const pct_tensor *from = cfg->out;
    for (int i = 0; i < cfg->ninputs && !from; i++)
        if (cfg->inputs[i]->device_type != PCT_CPU || cfg->inputs[i]->ndim != 0) from = cfg->inputs[i];
    *type = from ? from->device_type : PCT_CPU;
    *index = from ? from->device_index : -1;
}

/* A new dense tensor of `shape` laid out in `order` (from layout_order) on cfg's device; NULL with exception. */
static pct_tensor *empty_in_order(const pct_iter_config *cfg, int ndim, const int64_t *shape, int dtype, bool c_order,
                                  const int *order)
{
    int device_type, device_index;
    plan_device(cfg, &device_type, &device_index);
    pct_tensor *t = pct_tensor_empty(ndim, shape, dtype, device_type, device_index);
    if (!t || c_order) return t;
    int64_t strides[PCT_MAX_DIMS], next = 1;
    for (int j = 0; j < ndim; j++) {
        strides[order[j]] = next;
        next *= shape[order[j]];
    }
    if (pct_tensor_set_shape(t, ndim, shape, strides) < 0) PCT_CLEAR(t);
    return t;
}

/* torch's TensorIterator resizes an out= of the wrong shape (Note [out= arguments]), except when it is also one
 * of the inputs (read and written): then its shape must be the broadcast shape. */
static int resize_out(const pct_iter_config *cfg, int ndim, const int64_t *shape)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    pct_tensor *out = cfg->out;
    bool same = out->ndim == ndim && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)ndim) == 0;
    for (int i = 0; i < cfg->ninputs && !same; i++) {
        if (cfg->inputs[i] != out) continue;
        pct_error(PCT_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                     pct_shape_str(b1, sizeof b1, out->ndim, out->sizes), pct_shape_str(b2, sizeof b2, ndim, shape));
        return -1;
    }
    return pct_out_resize(out, ndim, shape);
}

int pct_iter_build(pct_iter *it, const pct_iter_config *cfg)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    memset(it, 0, offsetof(pct_iter, shape));
    /* before shapes and dtypes, and before out= is resized, as torch's TensorIterator does */
    if (cfg->check_overlap && cfg->out && pct_check_written_overlap(cfg->out, cfg->ninputs, cfg->inputs) < 0) return -1;
    it->ntensors = 1 + cfg->ninputs;
    int ndim = 0;
    int64_t shape[PCT_MAX_DIMS];
    for (int i = 0; i < cfg->ninputs; i++) {
        const pct_tensor *t = cfg->inputs[i];
        if (pct_broadcast_shapes(ndim, shape, t->ndim, t->sizes, &ndim, shape) < 0) return -1;
    }
    if (cfg->inplace) {
        pct_tensor *o = cfg->out;
        int nb;
        int64_t tmp[PCT_MAX_DIMS];
        if (pct_broadcast_shapes(o->ndim, o->sizes, ndim, shape, &nb, tmp) < 0 || nb != o->ndim ||
            memcmp(tmp, o->sizes, sizeof(int64_t) * (size_t)nb) != 0) {
            pct_error_clear();
            pct_error(PCT_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                         pct_shape_str(b1, sizeof b1, o->ndim, o->sizes), pct_shape_str(b2, sizeof b2, ndim, shape));
            return -1;
        }
        /* the written tensor fixes the iteration shape (inputs broadcast to it) */
        ndim = o->ndim;
        memcpy(shape, o->sizes, sizeof(int64_t) * (size_t)ndim);
    }

    /* Note [Arithmetic of Python numbers]: when every input is a wrapped Python number (which happens
     * only inside pyctorch, e.g. `1 - weight` in a backward formula), the result is what the
     * Python numbers give, in double precision (float64/int64, not the default dtype), and is a
     * wrapped number itself: a formula computing with scalars matches torch's C++ Scalar arithmetic.
     * A user's call with only Python numbers (torch.add(3, 2.5), torch.div(3, 2)) is not that: its numbers were
     * all made by this call's parser (PCT_FLAG_CALL_NUMBER), and it follows torch's result_type (the default
     * float dtype), as torch's Python API does. */
    bool numbers_only = cfg->compute_dtype < 0 && cfg->ninputs > 0, all_call_numbers = true;
    for (int i = 0; i < cfg->ninputs && numbers_only; i++) {
        numbers_only = (cfg->inputs[i]->flags & PCT_FLAG_WRAPPED_NUMBER) != 0;
        all_call_numbers &= (cfg->inputs[i]->flags & PCT_FLAG_CALL_NUMBER) != 0;
    }
    if (all_call_numbers) numbers_only = false;
    int common = cfg->compute_dtype;
    if (common < 0 && numbers_only) {
        common = cfg->inputs[0]->dtype;
        for (int i = 1; i < cfg->ninputs && common >= 0; i++) common = pct_promote_types_or_raise(common, cfg->inputs[i]->dtype);
        if (common < 0) return -1;
    }
    if (common < 0 && (common = pct_result_type_of(cfg->ninputs, (pct_tensor *const *)cfg->inputs)) < 0) return -1;
    if (cfg->int_to_float && !pct_dtype_is_floating(common) && !pct_dtype_is_complex(common)) common = numbers_only ? PCT_FLOAT64 : pct_default_dtype;
    int out_dtype = cfg->out_dtype >= 0 ? cfg->out_dtype : common;
    it->compute_dtype = common;
    it->out_dtype = out_dtype;

    /* the memory order: from the written tensor if it keeps its shape, then the inputs */
    pct_tensor *order_ops[PCT_ITER_MAX_OPERANDS];
    int norder = 0;
    pct_tensor *out = cfg->out;
    if (out && (cfg->inplace || (out->ndim == ndim && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)ndim) == 0)))
        order_ops[norder++] = out;
    for (int i = 0; i < cfg->ninputs; i++) order_ops[norder++] = cfg->inputs[i];
    int order[PCT_MAX_DIMS];
    bool c_order = cfg->keep_order || all_contiguous_same_shape(ndim, shape, order_ops, norder) ||
                   layout_order(ndim, shape, order_ops, norder, order);

    if (out) {
        if (cfg->out_dtype < 0 && !cfg->mixed_dtypes && pct_out_check_cast(common, out) < 0) return -1;
        if (!cfg->inplace && resize_out(cfg, ndim, shape) < 0) return -1;
        PCT_INCREF(out);
        it->result = out;
        if (out->dtype == out_dtype || cfg->mixed_dtypes) {
            PCT_INCREF(out);
            it->ops[0] = out;
        } else if (!(it->ops[0] = empty_in_order(cfg, ndim, shape, out_dtype, c_order, order))) {
            goto fail;
        }
    } else {
        if (!(it->ops[0] = empty_in_order(cfg, ndim, shape, out_dtype, c_order, order))) goto fail;
        if (numbers_only && ndim == 0) it->ops[0]->flags |= PCT_FLAG_WRAPPED_NUMBER;
        PCT_INCREF(it->ops[0]);
        it->result = it->ops[0];
    }
    for (int i = 0; i < cfg->ninputs; i++) {
        pct_tensor *t = cfg->inputs[i];
        if (cfg->mixed_dtypes || t->dtype == common) {
            PCT_INCREF(t);
            it->ops[i + 1] = t;
        } else if (!(it->ops[i + 1] = pct_to_dtype(t, common, false))) {
            goto fail;
        }
    }
    it->ndim = ndim;
    it->numel = 1;
    for (int d = 0; d < ndim; d++) { it->shape[d] = shape[d]; it->numel *= shape[d]; }
    for (int k = 0; k < it->ntensors; k++) fill_strides(it, k);
    if (!c_order) permute_dims(it, order);
    coalesce(it);
    return 0;
fail:
    pct_iter_release(it);
    return -1;
}

pct_object *pct_iter_finish(pct_iter *it)
{
    pct_object *res = NULL;
    if (it->result && it->ops[0] && (pct_object *)it->ops[0] != (pct_object *)it->result) {
        if (pct_copy_((pct_tensor *)it->result, it->ops[0]) < 0) goto done;
    }
    res = (pct_object *)it->result;
    it->result = NULL;
done:
    pct_iter_release(it);
    return res;
}

/* ---- copy with conversion ---- */

int pct_copy_(pct_tensor *dst, pct_tensor *src)
{
    if (dst->numel == 0) return 0;
    pct_iter it;
    pct_iter_config cfg = {.out = dst, .inplace = true, .ninputs = 1, .inputs = {src},
                           .compute_dtype = src->dtype, .out_dtype = dst->dtype, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    if (dst->device_type != PCT_CPU || src->device_type != PCT_CPU) {
        /* the plan checked the shapes; the data moves through the backend (Note [Backends]) */
        pct_iter_release(&it);
        const pct_backend *b = pct_backend_of(dst->device_type != PCT_CPU ? dst->device_type : src->device_type);
        if (!b || b->copy(dst, src) < 0) return -1;
        pct_tensor_bump_version(dst);
        return 0;
    }
    pct_loop_fn loop = pct_copy_loop(dst->dtype, src->dtype);
    it.stream_output = true;
    if (dst->dtype != src->dtype || !pct_copy_transposed(&it, pct_dtype_itemsize[dst->dtype])) pct_iter_run(&it, loop, NULL);
    pct_iter_release(&it);
    pct_tensor_bump_version(dst);
    return 0;
}

pct_tensor *pct_to_dtype(pct_tensor *t, int dtype, bool force_copy)
{
    if (t->dtype == dtype && !force_copy) { PCT_INCREF(t); return t; }
    if ((t->flags & PCT_FLAG_UINT64_NUMBER) && pct_dtype_is_floating(dtype)) /* the value, not the int64 bits */
        return pct_tensor_scalar(dtype, (double)(uint64_t)pct_load_as_int64(pct_tensor_data(t), t->dtype), 0, true);
    pct_tensor *r = pct_tensor_empty(t->ndim, t->sizes, dtype, t->device_type, t->device_index);
    if (!r) return NULL;
    if (pct_copy_(r, t) < 0) { PCT_DECREF(r); return NULL; }
    atomic_store(&r->version->value, 0);
    return r;
}

/* c10's is_non_overlapping_and_dense: the dims of size >= 2, sorted by stride, tile memory exactly. */
bool pct_tensor_non_overlapping_and_dense(const pct_tensor *t)
{
    /* c10 sets the flag for every contiguous or channels_last-contiguous tensor first: empty ones included,
     * whose strides the test below might refuse */
    if (pct_tensor_is_contiguous(t) || pct_tensor_is_channels_last(t) || pct_tensor_is_channels_last_3d(t)) return true;
    int nd = t->ndim, perm[PCT_MAX_DIMS];
    if (nd == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
    for (int i = 0; i < nd; i++) perm[i] = i;
    for (int i = 1; i < nd; i++) {          /* by stride, size 0/1 dims last */
        for (int k = i; k > 0; k--) {
            int a = perm[k - 1], b = perm[k];
            bool b_first = t->sizes[a] < 2 ? t->sizes[b] >= 2 : (t->sizes[b] >= 2 && t->strides[b] < t->strides[a]);
            if (!b_first) break;
            perm[k - 1] = b;
            perm[k] = a;
        }
    }
    int64_t require = 1;
    for (int i = 0; i < nd; i++) {
        int64_t n = t->sizes[perm[i]];
        if (n < 2) return true;
        if (t->strides[perm[i]] != require) return false;
        require *= n;
    }
    return true;
}

/* Note [Written-tensor overlap]: as torch, a written tensor is refused when two of its elements share memory
 * (a dim of size > 1 with stride 0; an empty tensor never is), and when an input that is not the same tensor
 * meets its memory partially. Partial overlap is decided only between non-overlapping-and-dense tensors, by
 * byte ranges: the same range with the same strides is a full overlap (allowed: elementwise reads its own
 * element before writing it); other layouts are too hard to tell and pass, as in torch. */
int pct_check_written_overlap(const pct_tensor *out, int ninputs, pct_tensor *const *inputs)
{
    if (out->numel == 0) return 0;
    for (int d = 0; d < out->ndim; d++) {
        if (out->strides[d] == 0 && out->sizes[d] > 1) {
            pct_error_str(PCT_ERR_RUNTIME, "unsupported operation: more than one element of the written-to tensor "
                                                "refers to a single memory location. Please clone() the tensor before "
                                                "performing the operation.");
            return -1;
        }
    }
    int dense_out = -1; /* computed on first need */
    for (int i = 0; i < ninputs; i++) {
        const pct_tensor *in = inputs[i];
        if (in == out || in->storage != out->storage || in->numel == 0) continue;
        const char *ob = pct_tensor_data(out), *ib = pct_tensor_data(in);
        const char *oe = ob + out->numel * pct_tensor_itemsize(out), *ie = ib + in->numel * pct_tensor_itemsize(in);
        if (!(ob < ie && ib < oe)) continue; /* disjoint memory ranges: the quick exit */
        if (dense_out < 0) dense_out = pct_tensor_non_overlapping_and_dense(out);
        if (!dense_out || !pct_tensor_non_overlapping_and_dense(in)) continue;
        if (ob == ib && oe == ie && in->ndim == out->ndim &&
            memcmp(in->strides, out->strides, sizeof(int64_t) * (size_t)in->ndim) == 0)
            continue; /* full overlap */
        pct_error_str(PCT_ERR_RUNTIME, "unsupported operation: some elements of the input tensor and the written-to "
                                            "tensor refer to a single memory location. Please clone() the tensor before "
                                            "performing the operation.");
        return -1;
    }
    return 0;
}

void pct_preserved_strides(const pct_tensor *t, int64_t *out)
{
    int nd = t->ndim, perm[PCT_MAX_DIMS];
    if (pct_tensor_non_overlapping_and_dense(t)) {
        memcpy(out, t->strides, sizeof(int64_t) * (size_t)nd);
        return;
    }
    const int64_t *st[1] = {t->strides};
    pct_layout_perm(nd, t->sizes, 1, st, perm);
    int64_t cur = 1;
    for (int i = 0; i < nd; i++) {
        out[perm[i]] = cur;
        if (t->sizes[perm[i]] > 1) cur *= t->sizes[perm[i]];
    }
}

pct_tensor *pct_empty_preserving(const pct_tensor *t, int dtype)
{
    return pct_empty_preserving_on(t, dtype, t->device_type, t->device_index);
}

pct_tensor *pct_empty_preserving_on(const pct_tensor *t, int dtype, int device_type, int device_index)
{
    pct_tensor *r = pct_tensor_empty(t->ndim, t->sizes, dtype, device_type, device_index);
    /* an empty t counts as contiguous whatever its strides; torch still preserves them (empty_like) */
    if (!r || (pct_tensor_is_contiguous(t) && t->numel > 0)) return r;
    int64_t st[PCT_MAX_DIMS];
    pct_preserved_strides(t, st);
    if (pct_tensor_set_shape(r, t->ndim, t->sizes, st) < 0) PCT_CLEAR(r);
    return r;
}

pct_tensor *pct_copy_preserving(pct_tensor *t, int dtype)
{
    pct_tensor *r = pct_empty_preserving(t, dtype);
    if (!r) return NULL;
    if (pct_copy_(r, t) < 0) { PCT_DECREF(r); return NULL; }
    atomic_store(&r->version->value, 0);
    return r;
}

pct_tensor *pct_contiguous(pct_tensor *t)
{
    if (pct_tensor_is_contiguous(t)) { PCT_INCREF(t); return t; }
    return pct_to_dtype(t, t->dtype, true);
}
