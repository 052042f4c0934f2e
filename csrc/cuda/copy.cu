/* copy.cu: the C entry points of the CUDA backend's copies and fills within a device (copy.cuh), launched on the
 * device. */
#include "copy.cuh"

extern "C" int pct_cuda_copy_launch(const pct_cuda_loop *plan, int dst_dtype, int src_dtype, void *stream)
{
    return pct_cuda_copy_run<pct_cuda_on_device>(plan, dst_dtype, src_dtype, (cudaStream_t)stream);
}

extern "C" int pct_cuda_fill_launch(const pct_cuda_loop *plan, int dtype, double value_d, int64_t value_i, void *stream)
{
    return pct_cuda_fill_run<pct_cuda_on_device>(plan, dtype, value_d, value_i, (cudaStream_t)stream);
}
