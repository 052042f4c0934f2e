/* embedding.cu: embedding's lookup and dense backward on CUDA (the backend's embedding, Note [Device embedding] in
 * csrc/aten/cpu/embedding.c; embedding_call.h gives the formulas). A thread per output element: the lookup copies one
 * element of the picked row (by its size, so every dtype, complex included); the backward sums one column of one
 * weight row over that row's positions in index order (the host grouped them), so the result is the same on every
 * run, without atomics. The simulated device runs the same element functions on the host. */
#include <cuda_runtime.h>
#include <stdint.h>
#include "loops.cuh"
#include "embedding_runner.h"
#include "aten/dtype.h"

template <typename U>
__host__ __device__ static void lookup_element(const pct_embedding_call &e, int64_t t)
{
    const int64_t i = t / e.D, j = t % e.D;
    ((U *)e.out)[t] = ((const U *)e.weight)[e.index[i] * e.ws0 + j * e.ws1];
}

template <typename C>
__host__ __device__ static void backward_element(const pct_embedding_call &e, int64_t t)
{
    const int64_t r = t / e.D, j = t % e.D, b = e.row_start[r], n = e.row_start[r + 1] - b;
    C acc = 0;
    if (r != e.padding_idx && n > 0) {
        const C s = e.by_freq ? (C)1 / (C)n : (C)1;
        const C *g = (const C *)e.grad;
        for (int64_t p = b; p < b + n; p++) acc += e.by_freq ? g[e.order[p] * e.D + j] * s : g[e.order[p] * e.D + j];
    }
    ((C *)e.out)[t] = acc;
}

template <typename F>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_emb_kernel(const pct_embedding_call e, int64_t n, F f)
{
    for (int64_t t = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; t < n; t += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        f(e, t);
}

template <typename F>
static int run(const pct_embedding_call *e, int64_t n, int on_host, cudaStream_t stream, F f)
{
    if (n == 0) return 0;
    if (on_host) {
        for (int64_t t = 0; t < n; t++) f(*e, t);
        return 0;
    }
    unsigned blocks;
    cudaError_t err = pct_cuda_on_device::grid(n, &blocks);
    if (err != cudaSuccess) return (int)err;
    pct_emb_kernel<<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(*e, n, f);
    return (int)cudaGetLastError();
}

/* a 16-byte element (complex128), copied whole */
struct alignas(16) pct_emb_bytes16 {
    uint64_t lo, hi;
};

/* the element functions as functors a kernel can take */
template <typename U> struct lookup_fn {
    __host__ __device__ void operator()(const pct_embedding_call &e, int64_t t) const { lookup_element<U>(e, t); }
};
template <typename C> struct backward_fn {
    __host__ __device__ void operator()(const pct_embedding_call &e, int64_t t) const { backward_element<C>(e, t); }
};

extern "C" int pct_cuda_embedding_launch(const pct_embedding_call *e, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (e->backward) {
        const int64_t n = e->V * e->D;
        if (e->dtype == PCT_FLOAT64) return run(e, n, on_host, st, backward_fn<double>());
        if (e->dtype == PCT_FLOAT32) return run(e, n, on_host, st, backward_fn<float>());
        return (int)cudaErrorInvalidValue;
    }
    const int64_t n = e->k * e->D;
    switch (pct_dtype_itemsize[e->dtype]) {
    case 1: return run(e, n, on_host, st, lookup_fn<uint8_t>());
    case 2: return run(e, n, on_host, st, lookup_fn<uint16_t>());
    case 4: return run(e, n, on_host, st, lookup_fn<uint32_t>());
    case 8: return run(e, n, on_host, st, lookup_fn<uint64_t>());
    case 16: return run(e, n, on_host, st, lookup_fn<pct_emb_bytes16>());
    default: return (int)cudaErrorInvalidValue;
    }
}
