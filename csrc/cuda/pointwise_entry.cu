/* pointwise_entry.cu: the C entry points of the CUDA pointwise loops (loop_plan.h), which ask the shard of an op
 * (pointwise.cu, Note [Shards of the pointwise loops] in pointwise.cuh) for its loop. */
#include "pointwise.cuh"

#define PCT_CUDA_PW_DECLARE_SHARD(k) extern "C" pct_cuda_pw_launcher PCT_CUDA_PW_SHARD_FIND(k)(int op_index, int dtype);
PCT_CUDA_PW_FOR_EACH_SHARD(PCT_CUDA_PW_DECLARE_SHARD)
#define PCT_CUDA_PW_COUNT_SHARD(k) +1
static_assert(0 PCT_CUDA_PW_FOR_EACH_SHARD(PCT_CUDA_PW_COUNT_SHARD) == PCT_CUDA_PW_SHARDS,
              "PCT_CUDA_PW_FOR_EACH_SHARD names every shard");

/* The device loop of op op_index for dtype, or NULL: from the one shard that holds the op's loops. */
static pct_cuda_pw_launcher pct_cuda_device_find(int op_index, int dtype)
{
    if (op_index < 0) return nullptr;
    switch (op_index % PCT_CUDA_PW_SHARDS) {
#define PCT_CUDA_PW_ASK_SHARD(k) \
    case k: return PCT_CUDA_PW_SHARD_FIND(k)(op_index, dtype);
        PCT_CUDA_PW_FOR_EACH_SHARD(PCT_CUDA_PW_ASK_SHARD)
    default: return nullptr;
    }
}

extern "C" int pct_cuda_pointwise_launch(int op_index, int dtype, const pct_cuda_loop *plan, pct_pw_ctx *ctx,
                                         void *stream)
{
    return pct_cuda_pw_launch<pct_cuda_on_device>(pct_cuda_device_find, op_index, dtype, plan, ctx,
                                                  (cudaStream_t)stream);
}

extern "C" int pct_cuda_pointwise_has_loop(int op_index, int dtype)
{
    return pct_cuda_device_find(op_index, dtype) != nullptr;
}

extern "C" int pct_cuda_pointwise_has_loops(int op_index)
{
    for (int dtype = 0; dtype < PCT_NUM_DTYPES; dtype++)
        if (pct_cuda_device_find(op_index, dtype)) return 1;
    return 0;
}
