/* embedding_glue.c: the CUDA backend's embedding (backend.h, Note [Device embedding] in aten/cpu/embedding.c): the
 * launch on the device's current stream, or on the simulated device the same element loops on the host over its
 * memory's host views. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "embedding_runner.h"
#include "aten/error.h"

int pct_cuda_embedding(const pct_embedding_call *e)
{
    const bool on_host = !pct_cuda_drv->has_kernels;
    pct_embedding_call call = *e;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.index = pct_cuda_sim_host_address(call.index);
        call.weight = pct_cuda_sim_host_address(call.weight);
        call.grad = pct_cuda_sim_host_address(call.grad);
        call.order = pct_cuda_sim_host_address(call.order);
        call.row_start = pct_cuda_sim_host_address(call.row_start);
        call.out = pct_cuda_sim_host_address(call.out);
    }
    int previous;
    if (pct_cuda_device_enter(e->device_index, &previous) < 0) return -1;
    const int err = pct_cuda_embedding_launch(&call, on_host, pct_cuda_current_stream_handle(e->device_index));
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, e->backward ? "embedding_dense_backward" : "embedding") : 0;
}

void pct_cuda_register_embedding(void)
{
    pct_ops[PCT_OP_embedding].kernels[PCT_CUDA] = pct_cpu_embedding;
    pct_ops[PCT_OP_embedding_dense_backward].kernels[PCT_CUDA] = pct_cpu_embedding_dense_backward;
}
