/* conv_cols_glue.c: the CUDA backend's conv_cols (backend.h, Note [Device convolution] in aten/cpu/conv_device.c): the
 * launch on the device's current stream, or on the simulated device the same element loops on the host over its
 * memory's host views; and the convolution ops' CUDA slots, which take the device-neutral kernels of conv.c. */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "conv_cols_runner.h"
#include "aten/error.h"

int pct_cuda_conv_cols(const pct_conv_cols_call *g)
{
    const bool on_host = !pct_cuda_drv->has_kernels;
    pct_conv_cols_call call = *g;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.src = pct_cuda_sim_host_address(call.src);
        call.dst = pct_cuda_sim_host_address(call.dst);
    }
    int previous;
    if (pct_cuda_device_enter(g->device_index, &previous) < 0) return -1;
    const int err = pct_cuda_conv_cols_launch(&call, on_host, pct_cuda_current_stream_handle(g->device_index));
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, g->to_cols ? "im2col" : "col2im") : 0;
}

/* The convolutions run on the backend's gemm too: where cuBLAS cannot be loaded they stay on the fallback. */
void pct_cuda_register_conv(void)
{
    const char *why = NULL;
    if (!pct_cuda_blas_load(&why)) return;
    pct_ops[PCT_OP_convolution].kernels[PCT_CUDA] = pct_cpu_convolution;
    pct_ops[PCT_OP_convolution_backward].kernels[PCT_CUDA] = pct_cpu_convolution_backward;
}
