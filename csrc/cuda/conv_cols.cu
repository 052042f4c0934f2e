/* conv_cols.cu: im2col and col2im on CUDA (the backend's conv_cols, Note [Device convolution] in
 * csrc/aten/cpu/conv_device.c; conv_cols_call.h gives the formulas). A thread per element of the result: im2col copies
 * one column entry (by its size, so every dtype), col2im gathers one big element's column entries over the kernel
 * offsets in a fixed order, so its sums are the same on every run, without atomics. The simulated device runs the same
 * element functions on the host. */
#include <cuda_runtime.h>
#include <stdint.h>
#include "loops.cuh"
#include "conv_cols_runner.h"
#include "aten/dtype.h"

/* column entry t of the (channels * kvol) x svol matrix */
template <typename U>
__host__ __device__ static void im2col_element(const pct_conv_cols_call &g, int64_t t)
{
    const int64_t svol = g.small[0] * g.small[1] * g.small[2], kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
    const int64_t row = t / svol, j = t % svol, c = row / kvol, k = row % kvol;
    const int64_t kk[3] = {k / (g.kernel[1] * g.kernel[2]), k / g.kernel[2] % g.kernel[1], k % g.kernel[2]};
    const int64_t o[3] = {j / (g.small[1] * g.small[2]), j / g.small[2] % g.small[1], j % g.small[2]};
    int64_t at = c;
    for (int d = 0; d < 3; d++) {
        const int64_t i = o[d] * g.stride[d] - g.pad[d] + kk[d] * g.dil[d];
        if (i < 0 || i >= g.big[d]) {
            ((U *)g.dst)[t] = (U)0;
            return;
        }
        at = at * g.big[d] + i;
    }
    ((U *)g.dst)[t] = ((const U *)g.src)[at];
}

/* big element t (channel-major, channels * bvol): the sum of the column entries that read it */
template <typename C>
__host__ __device__ static void col2im_element(const pct_conv_cols_call &g, int64_t t)
{
    const int64_t bvol = g.big[0] * g.big[1] * g.big[2], svol = g.small[0] * g.small[1] * g.small[2];
    const int64_t c = t / bvol, p = t % bvol;
    const int64_t i[3] = {p / (g.big[1] * g.big[2]), p / g.big[2] % g.big[1], p % g.big[2]};
    const C *cols = (const C *)g.src;
    C acc = 0;
    for (int64_t kd = 0; kd < g.kernel[0]; kd++) {
        const int64_t nd = i[0] + g.pad[0] - kd * g.dil[0];
        if (nd < 0 || nd % g.stride[0] != 0 || nd / g.stride[0] >= g.small[0]) continue;
        for (int64_t kh = 0; kh < g.kernel[1]; kh++) {
            const int64_t nh = i[1] + g.pad[1] - kh * g.dil[1];
            if (nh < 0 || nh % g.stride[1] != 0 || nh / g.stride[1] >= g.small[1]) continue;
            for (int64_t kw = 0; kw < g.kernel[2]; kw++) {
                const int64_t nw = i[2] + g.pad[2] - kw * g.dil[2];
                if (nw < 0 || nw % g.stride[2] != 0 || nw / g.stride[2] >= g.small[2]) continue;
                const int64_t k = (kd * g.kernel[1] + kh) * g.kernel[2] + kw;
                const int64_t j = (nd / g.stride[0] * g.small[1] + nh / g.stride[1]) * g.small[2] + nw / g.stride[2];
                acc += cols[(c * g.kernel[0] * g.kernel[1] * g.kernel[2] + k) * svol + j];
            }
        }
    }
    ((C *)g.dst)[t] = acc;
}

template <typename F>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_cols_kernel(const pct_conv_cols_call g, int64_t n, F f)
{
    for (int64_t t = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; t < n; t += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        f(g, t);
}

template <typename F>
static int run(const pct_conv_cols_call *g, int64_t n, int on_host, cudaStream_t stream, F f)
{
    if (n == 0) return 0;
    if (on_host) {
        for (int64_t t = 0; t < n; t++) f(*g, t);
        return 0;
    }
    unsigned blocks;
    cudaError_t err = pct_cuda_on_device::grid(n, &blocks);
    if (err != cudaSuccess) return (int)err;
    pct_cols_kernel<<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(*g, n, f);
    return (int)cudaGetLastError();
}

/* the element functions as functors a kernel can take */
template <typename U> struct im2col_fn {
    __host__ __device__ void operator()(const pct_conv_cols_call &g, int64_t t) const { im2col_element<U>(g, t); }
};
template <typename C> struct col2im_fn {
    __host__ __device__ void operator()(const pct_conv_cols_call &g, int64_t t) const { col2im_element<C>(g, t); }
};

extern "C" int pct_cuda_conv_cols_launch(const pct_conv_cols_call *g, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    const int64_t kvol = g->kernel[0] * g->kernel[1] * g->kernel[2];
    if (!g->to_cols) {
        const int64_t n = g->channels * g->big[0] * g->big[1] * g->big[2];
        if (g->dtype == PCT_FLOAT64) return run(g, n, on_host, st, col2im_fn<double>());
        if (g->dtype == PCT_FLOAT32) return run(g, n, on_host, st, col2im_fn<float>());
        return (int)cudaErrorInvalidValue;
    }
    const int64_t n = g->channels * kvol * g->small[0] * g->small[1] * g->small[2];
    switch (g->itemsize) {
    case 1: return run(g, n, on_host, st, im2col_fn<uint8_t>());
    case 2: return run(g, n, on_host, st, im2col_fn<uint16_t>());
    case 4: return run(g, n, on_host, st, im2col_fn<uint32_t>());
    case 8: return run(g, n, on_host, st, im2col_fn<uint64_t>());
    default: return (int)cudaErrorInvalidValue;
    }
}
