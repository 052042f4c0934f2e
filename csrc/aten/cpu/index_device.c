/* index_device.c: the index family (gather, scatter and its reductions, scatter_add, index_select, index_add / copy /
 * fill, take, put_, x[idx], x[idx] = v, index_put_) on a device other than the CPU.
 *
 * Note [Device indexing]
 * The index ops' entries (index.c, index_advanced.c) are device-neutral up to their two loops: argument checks with
 * torch's texts and types, the results and temporaries allocated on the input's device, clones and out= copies
 * through the backend. The two loops (index_common.c) hand a device's tensors to the backend's index slot
 * (index_call.h; CUDA: csrc/cuda/index.cu) with the plan the loop machine built for them, the same plan the CPU
 * runner walks:
 *  - the checking of index values into int64 element offsets (pct_ix_off_run): the device marks the position of the
 *    first bad value in a flag the host reads back after the kernel (one small copy, which waits for the stream), and
 *    the host then reads that value and raises the CPU's error with it. torch stops at a device-side assert instead,
 *    which leaves the CUDA context unusable; here the error is the CPU's, raised before anything was written;
 *  - the index loop (pct_ix_run): every destination element is written by one thread, which visits its
 *    contributions in the CPU's order, so sums, products, means and the max / min choices (NaN first) are the CPU's
 *    bit for bit and need no atomics (the exception, on a real GPU, is a copy or a sum with too few destinations to
 *    fill the device: index_call.h, index.cu). The simulated device (Note [Simulated CUDA device]) runs the same element functions on
 *    the host, thread by thread.
 * A 1-element CPU source (a Python number, a reduction's identity) is passed by value; a 1-element CPU index or count
 * is copied over. scatter_reduce's mean divides on the device too (MEAN_DIV). The dtypes are those of
 * PCT_FORALL_ALL_DTYPES (float16 / bfloat16 computing in float as on the CPU); complex and storage-only dtypes go to
 * the backend's fallback (the CUDA slots check it: index_glue.c), as do the masks of advanced indexing (their nonzero
 * runs on the host).
 */
#include "index_internal.h"
#include "../backend.h"
#include "../index_call.h"

_Static_assert((int)IX_COPY == (int)PCT_INDEX_COPY && (int)IX_ADD == (int)PCT_INDEX_ADD &&
               (int)IX_MUL == (int)PCT_INDEX_MUL && (int)IX_MAX == (int)PCT_INDEX_MAX &&
               (int)IX_MIN == (int)PCT_INDEX_MIN && (int)IX_MEAN == (int)PCT_INDEX_MEAN,
               "the device's index ops are the CPU loop's");
_Static_assert(PCT_INDEX_CALL_MAX_DIMS == PCT_MAX_DIMS, "a device index call holds as many dims as pct_iter");

int pct_index_on_device(pct_index_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->index) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "indexing is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->index(call);
}

bool pct_ix_device_dtype(int dtype) { return dtype >= 0 && dtype < PCT_COMPLEX64; }

/* the plan of a built iterator, its operands all on one device */
static void plan_of(pct_index_call *call, int kind, const pct_iter *it)
{
    memset(call, 0, sizeof *call);
    call->kind = kind;
    call->dtype = it->ops[0]->dtype;
    call->device_index = it->ops[0]->device_index;
    call->ndim = it->ndim;
    call->noperands = it->ntensors;
    call->numel = it->numel;
    memcpy(call->shape, it->shape, sizeof(int64_t) * (size_t)it->ndim);
    for (int d = 0; d < it->ndim; d++)
        for (int k = 0; k < it->ntensors; k++) call->strides[d][k] = it->strides[d][k];
    for (int k = 0; k < it->ntensors; k++) call->data[k] = it->data[k];
}

/* A copy on `like`'s device of a 1-element CPU operand (an index or a count made on the host); t itself (new
 * reference) when it is already there. */
pct_tensor *pct_ix_on_device_of(pct_tensor *t, const pct_tensor *like)
{
    if (t->device_type == like->device_type && t->device_index == like->device_index) {
        PCT_INCREF(t);
        return t;
    }
    if (t->device_type != PCT_CPU) {
        pct_error(PCT_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, "
                  "%s:%d and %s:%d!", pct_device_type_name(like->device_type), like->device_index,
                  pct_device_type_name(t->device_type), t->device_index);
        return NULL;
    }
    pct_tensor *d = pct_tensor_empty(t->ndim, t->sizes, t->dtype, like->device_type, like->device_index);
    if (d && pct_copy_(d, t) < 0) PCT_CLEAR(d);
    return d;
}

int pct_ix_device_loop(const ix_ctx *ctx, pct_iter *it, bool src_by_value, uint64_t src_value)
{
    if (!pct_ix_device_dtype(it->ops[0]->dtype)) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"index_%s\" not implemented for '%s'", it->ops[0]->device_type == PCT_CUDA ? "cuda" : "device",
                  pct_dtype_cpp_name[it->ops[0]->dtype]);
        return -1;
    }
    if (it->numel == 0 || ctx->n == 0) return 0;
    pct_index_call call;
    plan_of(&call, PCT_INDEX_CALL_LOOP, it);
    call.src_by_value = src_by_value;
    call.src_value = src_value;
    if (src_by_value) call.data[1] = NULL;
    call.op = ctx->op;
    call.n = ctx->n;
    call.idx_step = ctx->idx_step;
    call.dst_si = ctx->dst_si;
    call.dst_sj = ctx->dst_sj;
    call.src_si = ctx->src_si;
    call.src_sj = ctx->src_sj;
    call.cnt_sj = ctx->cnt_sj;
    call.alpha_d = ctx->alpha_d;
    call.alpha_i = ctx->alpha_i;
    return pct_index_on_device(&call, it->ops[0]->device_type);
}

int pct_ix_device_offsets(pct_tensor *out, pct_tensor *in, off_ctx *c)
{
    pct_tensor *ind = pct_ix_on_device_of(in, out);
    if (!ind) return -1;
    pct_iter it;
    pct_iter_config cfg = {.out = out, .inplace = true, .ninputs = 1, .inputs = {ind}, .compute_dtype = PCT_INT64,
                           .out_dtype = PCT_INT64, .mixed_dtypes = true};
    int rc = pct_iter_build(&it, &cfg);
    PCT_DECREF(ind);
    if (rc < 0) return -1;
    pct_index_call call;
    plan_of(&call, PCT_INDEX_CALL_OFFSETS, &it);
    call.in32 = c->in32;
    call.accumulate = c->accumulate;
    call.linear = c->linear;
    call.lo = c->lo;
    call.hi = c->hi;
    call.mul = c->mul;
    if (c->linear) {
        call.lin_ndim = c->ndim;
        memcpy(call.lin_sizes, c->sizes, sizeof(int64_t) * (size_t)c->ndim);
        memcpy(call.lin_strides, c->strides, sizeof(int64_t) * (size_t)c->ndim);
    }
    rc = it.numel ? pct_index_on_device(&call, out->device_type) : 0;
    pct_iter_release(&it);
    if (rc < 0) return -1;
    if (call.found_bad) {
        atomic_store(&c->err, 1);
        c->bad = call.bad;
    }
    return 0;
}

int pct_ix_device_mean_div(pct_tensor *target, pct_tensor *counts)
{
    pct_iter it;
    pct_iter_config cfg = {.out = target, .inplace = true, .ninputs = 1, .inputs = {counts}, .compute_dtype = target->dtype,
                           .out_dtype = target->dtype, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    pct_index_call call;
    plan_of(&call, PCT_INDEX_CALL_MEAN_DIV, &it);
    int rc = it.numel ? pct_index_on_device(&call, target->device_type) : 0;
    pct_iter_release(&it);
    return rc;
}
