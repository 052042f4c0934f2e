/* pointwise.cu: the C entry points of the CUDA loops of the op table's PCT_UNARY and PCT_BINARY entries
 * (pointwise.cuh), launched on the device. */
#include "pointwise.cuh"

extern "C" int pct_cuda_pointwise_launch(int op_index, int dtype, const pct_cuda_loop *plan, pct_pw_ctx *ctx,
                                         void *stream)
{
    return pct_cuda_pw_launch<pct_cuda_on_device>(op_index, dtype, plan, ctx, (cudaStream_t)stream);
}

extern "C" int pct_cuda_pointwise_has_loop(int op_index, int dtype)
{
    return pct_cuda_pw_find<pct_cuda_on_device>(op_index, dtype) != nullptr;
}

extern "C" int pct_cuda_pointwise_has_loops(int op_index)
{
    for (int dtype = 0; dtype < PCT_NUM_DTYPES; dtype++)
        if (pct_cuda_pw_find<pct_cuda_on_device>(op_index, dtype)) return 1;
    return 0;
}
