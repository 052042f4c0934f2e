/* loops.cuh: the CUDA runner of the loop machine: kernels that apply a device functor to every element of a plan
 * (loop_plan.h), and their launch on a stream. CUDA C++; included by the .cu files of csrc/cuda.
 *
 * Note [The CUDA loop launch]: a functor F is the work of one element:
 *     typedef ... in_t;           the storage type of every input (the plan converted the inputs to one dtype)
 *     typedef ... out_t;          the output's storage type
 *     static constexpr int nin;   how many inputs (0 for a fill)
 *     __host__ __device__ out_t operator()(const in_t *v) const;   v[0 .. nin) are the element's inputs
 * (__host__ too for the host tests of Note [Launch policies]).
 * pct_cuda_launch_elementwise(plan, f, stream) runs it with one of two kernels, both grid-stride loops of
 * PCT_CUDA_BLOCK threads over a grid capped at PCT_CUDA_BLOCKS_PER_SM blocks per SM of the current device:
 *  - the vectorized kernel, for a plan of one dim (or none) in which the output and every input either run
 *    contiguously from a pointer aligned to PCT_CUDA_VEC elements or are broadcast (stride 0, or a host scalar): a
 *    thread moves PCT_CUDA_VEC elements per operand with one vector load or store, and a broadcast input is read once;
 *    its indices are int64, so no tensor is too large for it;
 *  - the strided kernel, for any other plan: a thread finds its operands' byte offsets from the linear index with an
 *    offset calculator over the plan's dims (the innermost first, each divided off by a precomputed multiply-shift
 *    instead of a hardware division). The division is 32-bit: a plan of more than INT32_MAX elements is halved on the
 *    host along its longest dim until each part fits, as torch splits a TensorIterator into 32-bit sub-iterations, so
 *    each functor has one strided kernel, not a 32-bit and a 64-bit one. The byte offsets themselves are summed in
 *    int64, so operands larger than 2 GiB need no split. A plan of more dims than the calculator holds
 *    (PCT_CUDA_KERNEL_DIMS; iterators merge dims, so this takes a tensor of many dims no two of which merge) is
 *    launched once per index of its outer dims.
 * Host scalars (0-d CPU inputs) travel by value in the kernel's parameters. Every launch is followed by
 * cudaGetLastError(), and the first error is returned as an int (0 for success).
 */
#ifndef PCT_CUDA_LOOPS_CUH
#define PCT_CUDA_LOOPS_CUH
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <atomic>
#include "loop_plan.h"

#define PCT_CUDA_BLOCK 256
#define PCT_CUDA_VEC 4
#define PCT_CUDA_KERNEL_DIMS 10
/* 8 blocks of 256 threads fill an SM's 2048 thread slots: the cap is 4 such waves */
#define PCT_CUDA_BLOCKS_PER_SM 32
#define PCT_CUDA_SM_COUNT_SLOTS 64 /* devices whose SM count pct_cuda_on_device::grid keeps */
/* #pragma unroll for the device pass of a __host__ __device__ function (the host compiler does not know it) */
#ifdef __CUDA_ARCH__
#define PCT_CUDA_UNROLL _Pragma("unroll")
#else
#define PCT_CUDA_UNROLL
#endif

/* PCT_CUDA_VEC elements of T, moved by one aligned vector access. */
template <typename T>
struct alignas(sizeof(T) * PCT_CUDA_VEC) pct_cuda_vec {
    T v[PCT_CUDA_VEC];
};

/* n / divisor for n < 2^31 by a multiply-shift: with s the least power of two >= divisor (2^s >= divisor) and
 * magic = floor(2^32 (2^s - divisor) / divisor) + 1 (< 2^32), n / divisor = (hi32(n * magic) + n) >> s, the sum
 * fitting 32 bits because hi32(n * magic) <= n < 2^31 (Granlund and Montgomery, "Division by invariant integers
 * using multiplication", 1994). */
struct pct_cuda_divider {
    uint32_t divisor, magic, shift;
    __host__ __device__ uint32_t quotient(uint32_t n) const
    {
#ifdef __CUDA_ARCH__
        const uint32_t hi = __umulhi(n, magic);
#else
        const uint32_t hi = (uint32_t)(((uint64_t)n * magic) >> 32);
#endif
        return (hi + n) >> shift;
    }
};

static inline pct_cuda_divider pct_cuda_divider_of(uint32_t divisor)
{
    uint32_t s = 0;
    while (((uint64_t)1 << s) < divisor) s++;
    const uint64_t magic = (((uint64_t)1 << 32) * (((uint64_t)1 << s) - divisor)) / divisor + 1;
    return pct_cuda_divider{divisor, (uint32_t)magic, s};
}

/* The byte offsets of NT operands at a linear index of a plan of at most PCT_CUDA_KERNEL_DIMS dims, dim 0 the
 * innermost here (the reverse of the plan's order). Passed by value in a kernel's parameters. */
template <int NT>
struct pct_cuda_offsets {
    int ndim;
    pct_cuda_divider size[PCT_CUDA_KERNEL_DIMS];
    int64_t stride[PCT_CUDA_KERNEL_DIMS][NT];

    __host__ __device__ void at(uint32_t linear, int64_t *off) const
    {
PCT_CUDA_UNROLL
        for (int k = 0; k < NT; k++) off[k] = 0;
PCT_CUDA_UNROLL
        for (int d = 0; d < PCT_CUDA_KERNEL_DIMS; d++) {
            if (d == ndim) break;
            /* the outermost dim's index is what is left of the linear index: no division */
            const uint32_t q = d + 1 == ndim ? 0 : size[d].quotient(linear);
            const uint32_t r = linear - q * size[d].divisor;
PCT_CUDA_UNROLL
            for (int k = 0; k < NT; k++) off[k] += (int64_t)r * stride[d][k];
            linear = q;
        }
    }
};

/* The operands of one launch: the output's and the inputs' pointers, and the values of host-scalar inputs. Passed by
 * value in a kernel's parameters; the pointers are borrowed from the plan. */
template <typename F>
struct pct_cuda_operands {
    static constexpr int nt = F::nin + 1;
    static constexpr int nv = F::nin > 0 ? F::nin : 1; /* arrays of the inputs (one unused slot for a fill) */
    char *data[nt];
    typename F::in_t scalar[nv];  /* scalar[j]: input j's value where it is a host scalar */
    unsigned by_value;            /* bit j + 1: input j is scalar[j] (the plan's host_scalars) */

    __host__ __device__ typename F::in_t input(int j, int64_t offset) const
    {
        return (by_value >> (j + 1)) & 1u ? scalar[j] : *(const typename F::in_t *)(data[j + 1] + offset);
    }
};

/* The kernels' bodies: what one thread does, `first` being its index in the grid and `step` the grid's size in
 * threads. The kernels below are these; host tests run them thread by thread (Note [Launch policies]). */
template <typename F>
__host__ __device__ void pct_cuda_strided_thread(const F &f, const pct_cuda_operands<F> &ops,
                                                 const pct_cuda_offsets<F::nin + 1> &offsets, uint32_t numel,
                                                 uint32_t first, uint32_t step)
{
    typedef typename F::in_t in_t;
    typedef typename F::out_t out_t;
    /* numel <= INT32_MAX and the grid is far below 2^31 threads: i + step never wraps */
    for (uint32_t i = first; i < numel; i += step) {
        int64_t off[F::nin + 1];
        offsets.at(i, off);
        in_t v[pct_cuda_operands<F>::nv];
PCT_CUDA_UNROLL
        for (int j = 0; j < F::nin; j++) v[j] = ops.input(j, off[j + 1]);
        *(out_t *)(ops.data[0] + off[0]) = f(v);
    }
}

template <typename F>
__host__ __device__ void pct_cuda_vector_thread(const F &f, const pct_cuda_operands<F> &ops, unsigned broadcast,
                                                int64_t numel, int64_t first, int64_t step)
{
    typedef typename F::in_t in_t;
    typedef typename F::out_t out_t;
    constexpr int NV = pct_cuda_operands<F>::nv;
    in_t fixed[NV]; /* the broadcast inputs' values (bit j + 1 of `broadcast`), read once */
PCT_CUDA_UNROLL
    for (int j = 0; j < NV; j++) fixed[j] = j < F::nin && ((broadcast >> (j + 1)) & 1u) ? ops.input(j, 0) : in_t();
    out_t *out = (out_t *)ops.data[0];
    for (int64_t base = first * PCT_CUDA_VEC; base < numel; base += step * PCT_CUDA_VEC) {
        if (base + PCT_CUDA_VEC <= numel) {
            in_t v[PCT_CUDA_VEC][NV];
PCT_CUDA_UNROLL
            for (int j = 0; j < F::nin; j++) {
                if ((broadcast >> (j + 1)) & 1u) {
PCT_CUDA_UNROLL
                    for (int e = 0; e < PCT_CUDA_VEC; e++) v[e][j] = fixed[j];
                } else {
                    const pct_cuda_vec<in_t> x = *((const pct_cuda_vec<in_t> *)ops.data[j + 1] + base / PCT_CUDA_VEC);
PCT_CUDA_UNROLL
                    for (int e = 0; e < PCT_CUDA_VEC; e++) v[e][j] = x.v[e];
                }
            }
            pct_cuda_vec<out_t> o;
PCT_CUDA_UNROLL
            for (int e = 0; e < PCT_CUDA_VEC; e++) o.v[e] = f(v[e]);
            *((pct_cuda_vec<out_t> *)out + base / PCT_CUDA_VEC) = o;
        } else { /* the last, partial vector */
            for (int64_t e = base; e < numel; e++) {
                in_t v[NV];
PCT_CUDA_UNROLL
                for (int j = 0; j < F::nin; j++)
                    v[j] = (broadcast >> (j + 1)) & 1u ? fixed[j] : ((const in_t *)ops.data[j + 1])[e];
                out[e] = f(v);
            }
        }
    }
}

template <typename F>
__global__ void
pct_cuda_strided_kernel(const F f, const pct_cuda_operands<F> ops, const pct_cuda_offsets<F::nin + 1> offsets,
                        uint32_t numel)
{
    pct_cuda_strided_thread(f, ops, offsets, numel, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

template <typename F>
__global__ void
pct_cuda_vector_kernel(const F f, const pct_cuda_operands<F> ops, unsigned broadcast, int64_t numel)
{
    pct_cuda_vector_thread(f, ops, broadcast, numel, (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                           (int64_t)gridDim.x * blockDim.x);
}

/* Note [Launch policies]: the launch functions below decide how to cover a plan (which kernel, which parts of the
 * plan, how many blocks) and leave the starting of work to a policy L, a struct of static functions.
 * pct_cuda_on_device, the only one the library uses, queues kernels, copies and fills on a stream; the host tests of
 * tests/cuda run the same kernel bodies and functors thread by thread on the CPU through theirs, so the launch logic
 * and the math are checked on machines without a GPU. */
struct pct_cuda_on_device {
    /* blocks for `threads` threads of work on the current device: at most PCT_CUDA_BLOCKS_PER_SM per SM */
    static cudaError_t grid(int64_t threads, unsigned *blocks)
    {
        static std::atomic<int> sm_count[PCT_CUDA_SM_COUNT_SLOTS]; /* 0: not asked yet */
        int device = 0, sms = 0;
        cudaError_t err = cudaGetDevice(&device);
        if (err != cudaSuccess) return err;
        if (device < PCT_CUDA_SM_COUNT_SLOTS) sms = sm_count[device].load(std::memory_order_relaxed);
        if (sms == 0) {
            err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
            if (err != cudaSuccess) return err;
            if (device < PCT_CUDA_SM_COUNT_SLOTS) sm_count[device].store(sms, std::memory_order_relaxed);
        }
        const int64_t want = (threads + PCT_CUDA_BLOCK - 1) / PCT_CUDA_BLOCK, cap = (int64_t)sms * PCT_CUDA_BLOCKS_PER_SM;
        *blocks = (unsigned)(want < cap ? want : cap);
        return cudaSuccess;
    }
    template <typename F>
    static cudaError_t vector(unsigned blocks, cudaStream_t stream, const F &f, const pct_cuda_operands<F> &ops,
                              unsigned broadcast, int64_t numel)
    {
        pct_cuda_vector_kernel<F><<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(f, ops, broadcast, numel);
        return cudaGetLastError();
    }
    template <typename F>
    static cudaError_t strided(unsigned blocks, cudaStream_t stream, const F &f, const pct_cuda_operands<F> &ops,
                               const pct_cuda_offsets<F::nin + 1> &offsets, uint32_t numel)
    {
        pct_cuda_strided_kernel<F><<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(f, ops, offsets, numel);
        return cudaGetLastError();
    }
    static cudaError_t copy_bytes(void *dst, const void *src, size_t bytes, cudaStream_t stream)
    {
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
    }
    static cudaError_t set_bytes(void *dst, int value, size_t bytes, cudaStream_t stream)
    {
        return cudaMemsetAsync(dst, value, bytes, stream);
    }
    /* a device int holding 0, for the work queued after it on `stream` to write */
    static cudaError_t flag_new(int **flag, cudaStream_t stream)
    {
        cudaError_t err = cudaMallocAsync((void **)flag, sizeof(int), stream);
        if (err != cudaSuccess) return err;
        err = cudaMemsetAsync(*flag, 0, sizeof(int), stream);
        if (err != cudaSuccess) (void)cudaFreeAsync(*flag, stream);
        return err;
    }
    /* its value once the work queued so far has run (the host waits for the stream); the int is freed */
    static cudaError_t flag_take(int *flag, int *value, cudaStream_t stream)
    {
        cudaError_t err = cudaMemcpyAsync(value, flag, sizeof(int), cudaMemcpyDeviceToHost, stream);
        const cudaError_t freed = cudaFreeAsync(flag, stream);
        if (err == cudaSuccess) err = freed;
        return err == cudaSuccess ? cudaStreamSynchronize(stream) : err;
    }
};

/* A piece of a plan that the strided kernel takes whole: at most PCT_CUDA_KERNEL_DIMS dims, in the plan's order
 * (outermost first). Host-side; the pointers are borrowed from the plan (NULL for host scalars). */
struct pct_cuda_part {
    int ndim;
    int64_t numel;
    int64_t shape[PCT_CUDA_KERNEL_DIMS];
    int64_t strides[PCT_CUDA_KERNEL_DIMS][PCT_CUDA_LOOP_MAX_OPERANDS];
    char *data[PCT_CUDA_LOOP_MAX_OPERANDS];
};

template <typename L, typename F>
static cudaError_t pct_cuda_launch_part(const F &f, pct_cuda_operands<F> ops, const pct_cuda_part &p,
                                        cudaStream_t stream)
{
    constexpr int NT = F::nin + 1;
    if (p.numel > INT32_MAX) { /* halve the longest dim (>= 2: the part has more than one element) */
        int d = 0;
        for (int e = 1; e < p.ndim; e++)
            if (p.shape[e] > p.shape[d]) d = e;
        pct_cuda_part lo = p, hi = p;
        lo.shape[d] = p.shape[d] / 2;
        hi.shape[d] = p.shape[d] - lo.shape[d];
        lo.numel = p.numel / p.shape[d] * lo.shape[d];
        hi.numel = p.numel / p.shape[d] * hi.shape[d];
        for (int k = 0; k < NT; k++)
            if (hi.data[k]) hi.data[k] += lo.shape[d] * p.strides[d][k];
        const cudaError_t err = pct_cuda_launch_part<L>(f, ops, lo, stream);
        return err != cudaSuccess ? err : pct_cuda_launch_part<L>(f, ops, hi, stream);
    }
    pct_cuda_offsets<NT> offsets;
    offsets.ndim = p.ndim;
    for (int e = 0; e < p.ndim; e++) {
        const int d = p.ndim - 1 - e;
        offsets.size[e] = pct_cuda_divider_of((uint32_t)p.shape[d]);
        for (int k = 0; k < NT; k++) offsets.stride[e][k] = p.strides[d][k];
    }
    for (int k = 0; k < NT; k++) ops.data[k] = p.data[k];
    unsigned blocks = 0;
    const cudaError_t err = L::grid(p.numel, &blocks);
    return err != cudaSuccess ? err : L::strided(blocks, stream, f, ops, offsets, (uint32_t)p.numel);
}

/* Runs f over every element of plan on `stream` (Note [The CUDA loop launch]) through policy L (Note [Launch
 * policies]); the plan's operands must hold F's types. 0, or the first CUDA error as an int. */
template <typename L = pct_cuda_on_device, typename F>
static int pct_cuda_launch_elementwise(const pct_cuda_loop *plan, const F &f, cudaStream_t stream)
{
    typedef typename F::in_t in_t;
    typedef typename F::out_t out_t;
    constexpr int NT = F::nin + 1;
    if (plan->ntensors != NT || (plan->host_scalars & 1u)) return (int)cudaErrorInvalidValue;
    if (plan->numel <= 0) return 0;
    pct_cuda_operands<F> ops;
    ops.by_value = plan->host_scalars;
    for (int k = 0; k < NT; k++) ops.data[k] = plan->data[k];
    for (int j = 0; j < pct_cuda_operands<F>::nv; j++) {
        ops.scalar[j] = in_t();
        if (j < F::nin && ((plan->host_scalars >> (j + 1)) & 1u)) memcpy(&ops.scalar[j], &plan->scalar[j + 1], sizeof(in_t));
    }

    /* the vectorized kernel: one dim or none, each operand contiguous from an aligned pointer or broadcast */
    bool vectorized = plan->ndim <= 1;
    unsigned broadcast = plan->host_scalars;
    for (int k = 0; k < NT && vectorized; k++) {
        if ((plan->host_scalars >> k) & 1u) continue;
        const int64_t size = k == 0 ? (int64_t)sizeof(out_t) : (int64_t)sizeof(in_t);
        const int64_t stride = plan->ndim == 1 ? plan->strides[0][k] : size;
        if (k > 0 && stride == 0) {
            broadcast |= 1u << k;
            continue;
        }
        vectorized = stride == size && (uintptr_t)plan->data[k] % (uintptr_t)(size * PCT_CUDA_VEC) == 0;
    }
    if (vectorized) {
        unsigned blocks = 0;
        cudaError_t err = L::grid((plan->numel + PCT_CUDA_VEC - 1) / PCT_CUDA_VEC, &blocks);
        if (err == cudaSuccess) err = L::vector(blocks, stream, f, ops, broadcast, plan->numel);
        return (int)err;
    }

    /* the strided kernel, once per index of the dims beyond PCT_CUDA_KERNEL_DIMS (the outer ones) */
    const int outer = plan->ndim > PCT_CUDA_KERNEL_DIMS ? plan->ndim - PCT_CUDA_KERNEL_DIMS : 0;
    pct_cuda_part part;
    part.ndim = plan->ndim - outer;
    part.numel = 1;
    for (int e = 0; e < part.ndim; e++) {
        part.shape[e] = plan->shape[outer + e];
        part.numel *= part.shape[e];
        for (int k = 0; k < NT; k++) part.strides[e][k] = plan->strides[outer + e][k];
    }
    int64_t index[PCT_CUDA_LOOP_MAX_DIMS] = {0}; /* the outer dims' index */
    for (;;) {
        for (int k = 0; k < NT; k++) {
            part.data[k] = plan->data[k];
            for (int d = 0; d < outer && part.data[k]; d++) part.data[k] += index[d] * plan->strides[d][k];
        }
        const cudaError_t err = pct_cuda_launch_part<L>(f, ops, part, stream);
        if (err != cudaSuccess) return (int)err;
        int d = outer - 1;
        while (d >= 0 && ++index[d] == plan->shape[d]) index[d--] = 0;
        if (d < 0) return 0;
    }
}

#endif
