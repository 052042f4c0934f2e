/* lanes.cuh: the lanes of a group of G threads (a power of two dividing the block, consecutive threads) combining one
 * value each, neighbour by neighbour (l with l + 1, then l with l + 2, ...), so that every combine's left side holds the
 * earlier lanes (Note [CUDA reduction walk] in reduce.cuh); every lane gets the group's value. The host form plays the
 * same tree over an array, for the launch policies of the simulated device. CUDA C++. */
#ifndef PCT_CUDA_LANES_CUH
#define PCT_CUDA_LANES_CUH

/* This thread's group (the row it walks) among groups of `group` lanes filling each block, and its lane in it. */
__device__ inline int64_t pct_lanes_group(int group, int *lane)
{
    *lane = (int)(threadIdx.x % group);
    return (int64_t)blockIdx.x * (blockDim.x / group) + threadIdx.x / group;
}

/* `shared` holds a value per thread of the block; every thread of the block must call it (it synchronizes). */
template <typename V, typename Op>
__device__ V pct_lanes_combine(V *shared, V v, int lane, int group, Op op)
{
    if (group == 1) return v;
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int k = 1; k < group; k *= 2) {
        if (lane % (2 * k) == 0) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + k]);
        __syncthreads();
    }
    const V r = shared[threadIdx.x - lane];
    __syncthreads();
    return r;
}

template <typename V, typename Op>
static V pct_lanes_combine_host(V *values, int group, Op op)
{
    for (int k = 1; k < group; k *= 2)
        for (int l = 0; l < group; l += 2 * k) values[l] = op(values[l], values[l + k]);
    return values[0];
}

#endif
