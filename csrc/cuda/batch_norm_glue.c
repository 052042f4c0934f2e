/* batch_norm_glue.c: the CUDA backend's batch_norm (backend.h, Note [Device batch norm] in aten/cpu/batch_norm.c):
 * lanes per channel, and the launch on the device's current stream, or on the simulated device the same passes on the
 * host over its memory's host views. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "batch_norm_runner.h"
#include "aten/error.h"

int pct_cuda_batch_norm(const pct_bn_call *bn)
{
    const int64_t m = bn->N * bn->L;
    const int group = m >= 4096 ? 256 : m >= 64 ? 32 : 1;
    const bool on_host = !pct_cuda_drv->has_kernels;
    pct_bn_call call = *bn;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.x = pct_cuda_sim_host_address(call.x);
        call.grad = pct_cuda_sim_host_address(call.grad);
        call.out = pct_cuda_sim_host_address(call.out);
        call.weight = pct_cuda_sim_host_address(call.weight);
        call.bias = pct_cuda_sim_host_address(call.bias);
        call.running_mean = pct_cuda_sim_host_address(call.running_mean);
        call.running_var = pct_cuda_sim_host_address(call.running_var);
        call.mean = pct_cuda_sim_host_address(call.mean);
        call.invstd = pct_cuda_sim_host_address(call.invstd);
        call.grad_weight = pct_cuda_sim_host_address(call.grad_weight);
        call.grad_bias = pct_cuda_sim_host_address(call.grad_bias);
        call.k = pct_cuda_sim_host_address(call.k);
    }
    int previous;
    if (pct_cuda_device_enter(bn->device_index, &previous) < 0) return -1;
    const int err = pct_cuda_batch_norm_launch(&call, group, on_host, pct_cuda_current_stream_handle(bn->device_index));
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, bn->backward ? "batch_norm_backward" : "batch_norm") : 0;
}

void pct_cuda_register_batch_norm(void)
{
    pct_ops[PCT_OP_native_batch_norm].kernels[PCT_CUDA] = pct_cpu_native_batch_norm;
    pct_ops[PCT_OP_native_batch_norm_backward].kernels[PCT_CUDA] = pct_cpu_native_batch_norm_backward;
}
