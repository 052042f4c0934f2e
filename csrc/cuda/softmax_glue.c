/* softmax_glue.c: the CUDA backend's softmax (backend.h, Note [Device softmax] in aten/cpu/softmax.c): the lanes per
 * row, and the launch on the device's current stream, or on the simulated device the same passes on the host over its
 * memory's host views. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "softmax_runner.h"
#include "aten/error.h"

int pct_cuda_softmax(const pct_softmax_call *s)
{
    if (s->outer * s->inner == 0 || s->len == 0) return 0;
    /* wide inner dims: a thread per row (neighbouring rows are neighbouring elements); else lanes along the row */
    const int group = s->inner >= 32 ? 1 : s->len >= 4096 ? 256 : s->len >= 64 ? 32 : 1;
    const bool on_host = !pct_cuda_drv->has_kernels;
    pct_softmax_call call = *s;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.x = pct_cuda_sim_host_address(call.x);
        call.grad = pct_cuda_sim_host_address(call.grad);
        call.out = pct_cuda_sim_host_address(call.out);
    }
    int previous;
    if (pct_cuda_device_enter(s->device_index, &previous) < 0) return -1;
    const int err = pct_cuda_softmax_launch(&call, group, on_host, pct_cuda_current_stream_handle(s->device_index));
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, s->log ? "log_softmax" : "softmax") : 0;
}

void pct_cuda_register_softmax(void)
{
    pct_ops[PCT_OP_softmax].kernels[PCT_CUDA] = pct_cpu_softmax;
    pct_ops[PCT_OP_log_softmax].kernels[PCT_CUDA] = pct_cpu_log_softmax;
    pct_ops[PCT_OP_softmax_backward_data].kernels[PCT_CUDA] = pct_cpu_softmax_backward_data;
    pct_ops[PCT_OP_log_softmax_backward_data].kernels[PCT_CUDA] = pct_cpu_log_softmax_backward_data;
}
