/* host_runner.cu: the CUDA runner's loops (csrc/cuda/pointwise.cuh, copy.cuh) run on the CPU through a launch policy
 * that plays every thread of a grid in turn (Note [Launch policies] in csrc/cuda/loops.cuh), so that the launch logic
 * (kernel choice, parts, grid-stride loops, offsets, host scalars) and the functors' math are checked on a machine
 * without a GPU. tests/test_cuda_host.py builds it with nvcc into a shared library and drives it through ctypes. No
 * kernel is instantiated here: nothing runs on a device. */
#include "../../csrc/cuda/pointwise.cuh"
#include "../../csrc/cuda/copy.cuh"
#include <stdlib.h>

/* Grids of at most this many blocks (one), so that threads walk the grid-stride loops more than once. */
static int64_t host_max_blocks = 1;
/* What was launched since the last host_take_counts: vector launches, strided launches, elements of strided launches. */
static int64_t host_counts[3];
/* When set, strided launches are only counted (for plans too large to run). */
static int host_dry = 0;

struct pct_cuda_on_host {
    static cudaError_t grid(int64_t threads, unsigned *blocks)
    {
        const int64_t want = (threads + PCT_CUDA_BLOCK - 1) / PCT_CUDA_BLOCK;
        *blocks = (unsigned)(want < host_max_blocks ? want : host_max_blocks);
        return cudaSuccess;
    }
    template <typename F>
    static cudaError_t vector(unsigned blocks, cudaStream_t, const F &f, const pct_cuda_operands<F> &ops,
                              unsigned broadcast, int64_t numel)
    {
        host_counts[0]++;
        const int64_t threads = (int64_t)blocks * PCT_CUDA_BLOCK;
        for (int64_t t = 0; t < threads; t++) pct_cuda_vector_thread(f, ops, broadcast, numel, t, threads);
        return cudaSuccess;
    }
    template <typename F>
    static cudaError_t strided(unsigned blocks, cudaStream_t, const F &f, const pct_cuda_operands<F> &ops,
                               const pct_cuda_offsets<F::nin + 1> &offsets, uint32_t numel)
    {
        host_counts[1]++;
        host_counts[2] += numel;
        if (host_dry) return cudaSuccess;
        const uint32_t threads = blocks * PCT_CUDA_BLOCK;
        for (uint32_t t = 0; t < threads; t++) pct_cuda_strided_thread(f, ops, offsets, numel, t, threads);
        return cudaSuccess;
    }
    static cudaError_t copy_bytes(void *dst, const void *src, size_t bytes, cudaStream_t)
    {
        memmove(dst, src, bytes);
        return cudaSuccess;
    }
    static cudaError_t set_bytes(void *dst, int value, size_t bytes, cudaStream_t)
    {
        memset(dst, value, bytes);
        return cudaSuccess;
    }
    static cudaError_t flag_new(int **flag, cudaStream_t)
    {
        *flag = (int *)calloc(1, sizeof(int));
        return *flag ? cudaSuccess : cudaErrorMemoryAllocation;
    }
    static cudaError_t flag_take(int *flag, int *value, cudaStream_t)
    {
        *value = *flag;
        free(flag);
        return cudaSuccess;
    }
};

extern "C" int host_pointwise(int op_index, int dtype, const pct_cuda_loop *plan, pct_pw_ctx *ctx)
{
    return pct_cuda_pw_launch<pct_cuda_on_host>(pct_cuda_pw_find<pct_cuda_on_host>, op_index, dtype, plan, ctx,
                                                nullptr);
}

extern "C" int host_has_loop(int op_index, int dtype) { return pct_cuda_pw_find<pct_cuda_on_host>(op_index, dtype) != nullptr; }

extern "C" int host_copy(const pct_cuda_loop *plan, int dst_dtype, int src_dtype)
{
    return pct_cuda_copy_run<pct_cuda_on_host>(plan, dst_dtype, src_dtype, nullptr);
}

extern "C" int host_fill(const pct_cuda_loop *plan, int dtype, double value_d, int64_t value_i)
{
    return pct_cuda_fill_run<pct_cuda_on_host>(plan, dtype, value_d, value_i, nullptr);
}

extern "C" void host_configure(int64_t max_blocks, int dry)
{
    host_max_blocks = max_blocks;
    host_dry = dry;
}

extern "C" void host_take_counts(int64_t *counts)
{
    for (int i = 0; i < 3; i++) {
        counts[i] = host_counts[i];
        host_counts[i] = 0;
    }
}

/* The multiply-shift division against `/` for divisors d and numerators n below 2^31: every n for small d, and the
 * edges (0, d - 1, d, multiples around 2^31) with many others for any d given; the first wrong (d, n) or -1. */
extern "C" int64_t host_check_divider(uint32_t d, uint32_t n_all)
{
    const pct_cuda_divider div = pct_cuda_divider_of(d);
    for (uint32_t n = 0; n < n_all; n++)
        if (div.quotient(n) != n / d) return n;
    const uint32_t top = 0x7fffffffu;
    const uint32_t edges[] = {0, 1, d - 1, d, d + 1, top, top - 1, top - top % d, top - top % d - 1};
    for (uint32_t n : edges)
        if (n <= top && div.quotient(n) != n / d) return n;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ d;
    for (int i = 0; i < 4096; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const uint32_t n = (uint32_t)x & top;
        if (div.quotient(n) != n / d) return n;
    }
    return -1;
}
