/* cross_entropy_glue.c: the CUDA backend's cross_entropy (backend.h, Note [Device cross entropy] in
 * aten/cpu/cross_entropy.c): lanes per row, and the launch on the device's current stream, or on the simulated device
 * the same passes on the host over its memory's host views. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "cross_entropy_runner.h"
#include "aten/error.h"

int pct_cuda_cross_entropy(const pct_ce_call *ce)
{
    const int group = ce->c >= 4096 ? 256 : ce->c >= 64 ? 32 : 1;
    const bool on_host = !pct_cuda_drv->has_kernels;
    pct_ce_call call = *ce;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.x = pct_cuda_sim_host_address(call.x);
        call.target = pct_cuda_sim_host_address(call.target);
        call.weight = pct_cuda_sim_host_address(call.weight);
        call.lse = pct_cuda_sim_host_address(call.lse);
        call.rows = pct_cuda_sim_host_address(call.rows);
        call.grad = pct_cuda_sim_host_address(call.grad);
        call.grad_input = pct_cuda_sim_host_address(call.grad_input);
    }
    int previous;
    if (pct_cuda_device_enter(ce->device_index, &previous) < 0) return -1;
    const int err = pct_cuda_cross_entropy_launch(&call, group, on_host, pct_cuda_current_stream_handle(ce->device_index));
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, "cross_entropy") : 0;
}

void pct_cuda_register_cross_entropy(void)
{
    pct_ops[PCT_OP_cross_entropy_loss].kernels[PCT_CUDA] = pct_cpu_cross_entropy_loss;
    pct_ops[PCT_OP_cross_entropy_loss_backward].kernels[PCT_CUDA] = pct_cpu_cross_entropy_loss_backward;
}
