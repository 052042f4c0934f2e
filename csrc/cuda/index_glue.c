/* index_glue.c: the CUDA backend's index (backend.h, Note [Device indexing] in aten/cpu/index_device.c): the launch on
 * the device's current stream, or on the simulated device the same element loops on the host over its memory's host
 * views; the flag of the first bad index read back after the checking kernel; and the index ops' CUDA slots, which
 * take the device-neutral kernels of cpu/index*.c for the dtypes the device runs and the fallback for the others. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "index_runner.h"
#include "aten/error.h"
#include "aten/index.h"
#include "aten/iter.h"
#include "aten/runtime.h"
#include <limits.h>

/* the bytes of operand k's element at position pos (row-major over the plan, its last dim fastest), from the device:
 * 0, or -1 with an error */
static int read_element(const pct_index_call *p, const pct_index_call *host_view, int k, int64_t pos, void *out,
                        size_t nbytes, bool on_host)
{
    int64_t off = 0;
    for (int d = p->ndim - 1; d >= 0; d--) {
        off += pos % p->shape[d] * p->strides[d][k];
        pos /= p->shape[d];
    }
    if (on_host) {
        memcpy(out, host_view->data[k] + off, nbytes);
        return 0;
    }
    return pct_cuda_memcpy(out, p->data[k] + off, nbytes, PCT_COPY_D2H, p->device_index);
}

int pct_cuda_index(pct_index_call *p)
{
    const bool on_host = !pct_cuda_drv->has_kernels;
    const bool offsets = p->kind == PCT_INDEX_CALL_OFFSETS;
    pct_index_call call = *p;
    if (on_host) /* Note [Simulated CUDA device] */
        for (int k = 0; k < PCT_INDEX_CALL_OPERANDS; k++) call.data[k] = pct_cuda_sim_host_address(call.data[k]);
    int previous, rc = -1;
    if (pct_cuda_device_enter(p->device_index, &previous) < 0) return -1;
    void *stream = pct_cuda_current_stream_handle(p->device_index);
    unsigned long long first_bad = ULLONG_MAX, *flag = &first_bad;
    pct_storage *flag_memory = NULL;
    int err = 0;
    if (offsets && !on_host) { /* the device's flag: the position of the first bad value, all ones for none */
        if (!(flag_memory = pct_cuda_storage_new(sizeof first_bad, p->device_index))) goto done;
        flag = flag_memory->data;
        err = pct_cuda_drv->memset_async(flag, 0xff, sizeof first_bad, stream);
    }
    if (!err) err = pct_cuda_index_launch(&call, on_host, stream, flag);
    if (err) {
        pct_cuda_raise(err, offsets ? "index check" : "index loop");
        goto done;
    }
    if (offsets) {
        /* the one wait of an index op: its indices are known good (or the error is the CPU's) before it goes on */
        if (!on_host && pct_cuda_memcpy(&first_bad, flag, sizeof first_bad, PCT_COPY_D2H, p->device_index) < 0) goto done;
        if (first_bad != ULLONG_MAX) {
            int32_t v32 = 0;
            int64_t v64 = 0;
            if (read_element(p, &call, 1, (int64_t)first_bad, p->in32 ? (void *)&v32 : (void *)&v64,
                             p->in32 ? sizeof v32 : sizeof v64, on_host) < 0)
                goto done;
            p->found_bad = true;
            p->bad = p->in32 ? v32 : v64;
        }
    }
    rc = 0;
done:
    if (flag_memory) pct_storage_decref(flag_memory);
    pct_cuda_device_restore(previous);
    return rc;
}

/* ---- the ops' CUDA slots ---- */

/* Note [Device indexing]: the device runs the dtypes before complex (PCT_FORALL_ALL_DTYPES); the others take the
 * fallback */
static bool device_dtype(int dtype) { return dtype >= 0 && dtype < PCT_COMPLEX64; }

/* every index op's CUDA slot: its CPU kernel, device-neutral, or the fallback for a dtype the device does not run */
static pct_object *index_op(pct_call *c)
{
    if (!device_dtype(pct_cuda_call_self(c)->dtype)) return pct_cuda_fallback(c);
    return c->op->kernels[PCT_CPU](c);
}

/* advanced indexing runs on the device with integer indices; masks (their nonzero runs on the host) and the dtypes
 * the device does not run take the fallback */
static bool integer_indices(const pct_tensor *self, int n, pct_tensor **indices)
{
    if (!device_dtype(self->dtype)) return false;
    for (int i = 0; i < n; i++)
        if (indices[i] && indices[i]->dtype != PCT_INT64 && indices[i]->dtype != PCT_INT32) return false;
    return true;
}

pct_object *pct_cuda_index_get_native(pct_tensor *self, int nindices, pct_tensor **indices)
{
    if (!integer_indices(self, nindices, indices)) return pct_cuda_index_get(self, nindices, indices);
    return pct_cpu_index_get(self, nindices, indices);
}

int pct_cuda_index_put_native(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    if (!integer_indices(self, nindices, indices) || values->dtype != self->dtype)
        return pct_cuda_index_put_(self, nindices, indices, values, accumulate);
    /* values of another device (a CPU tensor; one element goes by value) are read from a copy on self's */
    pct_tensor *moved = NULL;
    if (values->numel > 1 && (values->device_type != self->device_type || values->device_index != self->device_index)) {
        if (!(moved = pct_tensor_empty(values->ndim, values->sizes, values->dtype, self->device_type, self->device_index)))
            return -1;
        if (pct_copy_(moved, values) < 0) {
            PCT_DECREF(moved);
            return -1;
        }
        values = moved;
    }
    const int rc = pct_cpu_index_put_(self, nindices, indices, values, accumulate);
    PCT_XDECREF(moved);
    return rc;
}

/* index_put(input, indices, values, accumulate): on the device when every index is an integer tensor (a mask, or
 * anything the CPU kernel refuses with its error, goes to the fallback, which raises the same) */
static pct_object *index_put_op(pct_call *c)
{
    PCT_ARGS(index_put);
    const pct_tensor *self = arg.input, *values = arg.values;
    pct_object *const *items;
    int64_t n;
    bool native = device_dtype(self->dtype) && values->device_type == self->device_type &&
                  values->device_index == self->device_index && pct_sequence_items(arg.indices, &items, &n);
    for (int64_t i = 0; native && i < n; i++) {
        native = pct_is_tensor(items[i]);
        const pct_tensor *t = (const pct_tensor *)items[i];
        native = native && (t->dtype == PCT_INT64 || t->dtype == PCT_INT32);
    }
    return native ? c->op->kernels[PCT_CPU](c) : pct_cuda_fallback(c);
}

void pct_cuda_register_index(void)
{
    pct_ops[PCT_OP_index_put].kernels[PCT_CUDA] = index_put_op;
    static const int ops[] = {
        PCT_OP_index_select, PCT_OP_gather, PCT_OP_scatter_src, PCT_OP_scatter_value, PCT_OP_scatter_src_reduce,
        PCT_OP_scatter_value_reduce, PCT_OP_scatter_add, PCT_OP_scatter_reduce, PCT_OP_index_add, PCT_OP_index_copy,
        PCT_OP_index_fill, PCT_OP_take, PCT_OP_put,
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) pct_ops[ops[i]].kernels[PCT_CUDA] = index_op;
}
