/* pointwise.cu: one shard of the CUDA loops of the op table's PCT_UNARY and PCT_BINARY entries (pointwise.cuh),
 * launched on the device. setup.py compiles this file once per shard with -DPCT_CUDA_PW_SHARD=k (Note [Shards of the
 * pointwise loops]); pointwise_entry.cu holds the C entry points. */
#include "pointwise.cuh"

#ifndef PCT_CUDA_PW_SHARD
#error "pointwise.cu is compiled once per shard, with -DPCT_CUDA_PW_SHARD=k (Note [Shards of the pointwise loops])"
#endif
static_assert(PCT_CUDA_PW_SHARD >= 0 && PCT_CUDA_PW_SHARD < PCT_CUDA_PW_SHARDS, "shard out of range");

extern "C" pct_cuda_pw_launcher PCT_CUDA_PW_SHARD_FIND(PCT_CUDA_PW_SHARD)(int op_index, int dtype)
{
    return pct_cuda_pw_find<pct_cuda_on_device, PCT_CUDA_PW_SHARD>(op_index, dtype);
}
