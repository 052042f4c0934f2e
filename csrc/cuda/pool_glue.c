/* pool_glue.c: the CUDA backend's pool (backend.h, Note [Device pooling] in aten/cpu/pool_device.c): the launch on the
 * device's current stream, or on the simulated device the same element loops on the host over its memory's host
 * views; and the pooling ops' CUDA slots, which take the device-neutral kernels of cpu/pool*.c. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "pool_runner.h"
#include "aten/error.h"

int pct_cuda_pool(const pct_pool_call *p)
{
    const bool on_host = !pct_cuda_drv->has_kernels;
    pct_pool_call call = *p;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.src = pct_cuda_sim_host_address(call.src);
        call.indices = pct_cuda_sim_host_address(call.indices);
        call.dst = pct_cuda_sim_host_address(call.dst);
        call.dst_indices = pct_cuda_sim_host_address(call.dst_indices);
    }
    int previous;
    if (pct_cuda_device_enter(p->device_index, &previous) < 0) return -1;
    const int err = pct_cuda_pool_launch(&call, on_host, pct_cuda_current_stream_handle(p->device_index));
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, p->backward ? "pool2d_backward" : "pool2d") : 0;
}

void pct_cuda_register_pool(void)
{
    static const struct { int op; pct_kernel_fn kernel; } ops[] = {
        {PCT_OP_max_pool1d, pct_cpu_max_pool1d}, {PCT_OP_max_pool2d, pct_cpu_max_pool2d},
        {PCT_OP_max_pool1d_with_indices, pct_cpu_max_pool1d_with_indices},
        {PCT_OP_max_pool2d_with_indices, pct_cpu_max_pool2d_with_indices},
        {PCT_OP_max_pool2d_with_indices_backward, pct_cpu_max_pool2d_with_indices_backward},
        {PCT_OP_avg_pool1d, pct_cpu_avg_pool1d}, {PCT_OP_avg_pool2d, pct_cpu_avg_pool2d},
        {PCT_OP_avg_pool2d_backward, pct_cpu_avg_pool2d_backward},
        {PCT_OP_adaptive_avg_pool1d, pct_cpu_adaptive_avg_pool1d},
        {PCT_OP_adaptive_avg_pool2d, pct_cpu_adaptive_avg_pool2d},
        {PCT_OP_adaptive_avg_pool2d_backward, pct_cpu_adaptive_avg_pool2d_backward},
        {PCT_OP_adaptive_max_pool1d, pct_cpu_adaptive_max_pool1d},
        {PCT_OP_adaptive_max_pool2d, pct_cpu_adaptive_max_pool2d},
        {PCT_OP_adaptive_max_pool2d_backward, pct_cpu_adaptive_max_pool2d_backward},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) pct_ops[ops[i].op].kernels[PCT_CUDA] = ops[i].kernel;
}
