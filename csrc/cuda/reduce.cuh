/* reduce.cuh: the CUDA runner of reductions (Note [Device reductions] in csrc/aten/cpu/reduce_plan.c): a
 * pct_red_call's plan walked by groups of threads with the element functors of reduce_ops.h, one op and dtype per
 * instantiation (reduce_sum.cu, reduce_minmax.cu, reduce_stats.cu instantiate the families).
 *
 * Note [CUDA reduction walk]: the outputs are split into groups of G threads (G = 1, 32 or 256, a divisor of the block)
 * and, where the outputs are too few to fill the device, each output's reduced positions into `splits` contiguous
 * chunks; group g takes output g % nout and chunk g / nout, so that neighbouring threads of a G = 1 walk (the
 * innermost kept dim the most contiguous, as x.sum(0)) read neighbouring elements. Within a group, lane l folds the
 * chunk's positions l, l + G, ... or, for the ops that report an index (ctx.ordered), a contiguous slice of it; the
 * lanes' accumulators are then combined neighbour by neighbour (l with l + 1, then l with l + 2, ...), which keeps
 * every combine's left side earlier than its right, so the first occurrence wins ties as on the CPU. With one chunk
 * lane 0 writes the result; with several, each chunk's accumulator goes to a work buffer and a second pass combines
 * them in order and writes. Launch policies (Note [Launch policies] in loops.cuh): pct_cuda_on_device queues the two
 * kernels; pct_red_on_host runs the same group folds thread by thread on the CPU, which is how the simulated device
 * (Note [Simulated CUDA device]) runs reductions, over the host views of its memory.
 */
#ifndef PCT_CUDA_REDUCE_CUH
#define PCT_CUDA_REDUCE_CUH
#include <cuda_runtime.h>
#include <math.h>
#include "loops.cuh"
#include "reduce_runner.h"

/* the exp of logsumexp on both passes of the CUDA runner (the CPU's is its vector exp) */
#define RED_EXP_FLOAT16(x) expf(x)
#define RED_EXP_BFLOAT16(x) expf(x)
#define RED_EXP_FLOAT32(x) expf(x)
#define RED_EXP_FLOAT64(x) exp(x)
#define RED_EXP(E, x) RED_EXP_##E(x)

/* One op over one dtype: the functor macros of reduce_ops.h as static functions. */
#define PCT_RED_FUNCTOR(op, E, N, T, C)                                                                           \
    struct pct_red_##op##_##N {                                                                                    \
        typedef T in_t;                                                                                            \
        typedef C compute_t;                                                                                       \
        typedef op##_A(E, N, T, C) acc_t;                                                                          \
        static __host__ __device__ void init(acc_t &a, const red_ctx *ctx) { (void)ctx; op##_INIT(E, N, T, C, a); } \
        static __host__ __device__ void acc(acc_t &a, C x, int64_t idx, const red_ctx *ctx)                        \
        {                                                                                                          \
            (void)ctx; (void)idx;                                                                                  \
            op##_ACC(E, N, T, C, a, x, idx);                                                                       \
        }                                                                                                          \
        static __host__ __device__ void combine(acc_t &a, const acc_t &b, const red_ctx *ctx)                      \
        {                                                                                                          \
            (void)ctx;                                                                                             \
            op##_COMBINE(E, N, T, C, a, b);                                                                        \
        }                                                                                                          \
        static __host__ __device__ void finish(acc_t &a, char *o0, char *o1, const red_ctx *ctx)                   \
        {                                                                                                          \
            (void)ctx; (void)o1;                                                                                   \
            op##_FINISH(E, N, T, C, a, o0, o1);                                                                    \
        }                                                                                                          \
        static __host__ __device__ C load(const char *p) { return PCT_TO_COMPUTE_##E(*(const T *)p); }             \
    };

/* The plan and the walk's shape, passed by value to the kernels. */
struct pct_red_args {
    pct_red_call r;
    int group;       /* threads per group: 1, 32 or PCT_CUDA_BLOCK */
    int64_t splits;  /* chunks per output */
    int64_t chunk;   /* positions per chunk */
    char *work;      /* splits > 1: nout * splits accumulators, chunk-major per output */

    __host__ __device__ int64_t groups() const { return r.nout * splits; }
    /* byte offsets of output o in the input and in the two outputs */
    __host__ __device__ void kept(int64_t o, int64_t *in, int64_t *o0, int64_t *o1) const
    {
        *in = *o0 = *o1 = 0;
        for (int d = r.nk - 1; d >= 0; d--) {
            const int64_t i = o % r.ksize[d];
            o /= r.ksize[d];
            *in += i * r.kin[d];
            *o0 += i * r.kout[0][d];
            *o1 += i * r.kout[1][d];
        }
    }
    /* byte offset of reduced position p */
    __host__ __device__ int64_t reduced(int64_t p) const
    {
        if (r.nr == 1) return p * r.rin[0];
        int64_t off = 0;
        for (int d = r.nr - 1; d >= 0; d--) {
            off += (p % r.rsize[d]) * r.rin[d];
            p /= r.rsize[d];
        }
        return off;
    }
};

/* Lane `lane` of group g folds its share of g's chunk into a. */
template <class F>
__host__ __device__ void pct_red_lane_fold(const pct_red_args &a, int64_t g, int lane, typename F::acc_t &acc)
{
    const int64_t o = g % a.r.nout, s = g / a.r.nout;
    int64_t in, o0, o1;
    a.kept(o, &in, &o0, &o1);
    const char *base = a.r.in + in;
    const int64_t b = s * a.chunk, e = b + a.chunk < a.r.nred ? b + a.chunk : a.r.nred;
    if (a.r.ctx.ordered) { /* a contiguous slice per lane */
        const int64_t per = (e - b + a.group - 1) / a.group, lb = b + lane * per, le = lb + per < e ? lb + per : e;
        for (int64_t p = lb; p < le; p++) F::acc(acc, F::load(base + a.reduced(p)), p, &a.r.ctx);
    } else {
        for (int64_t p = b + lane; p < e; p += a.group) F::acc(acc, F::load(base + a.reduced(p)), p, &a.r.ctx);
    }
}

/* Lane 0 of group g with the group's accumulator: the result, or the chunk's partial. */
template <class F>
__host__ __device__ void pct_red_group_end(const pct_red_args &a, int64_t g, typename F::acc_t &acc)
{
    if (a.splits > 1) {
        const int64_t o = g % a.r.nout, s = g / a.r.nout;
        ((typename F::acc_t *)a.work)[o * a.splits + s] = acc;
        return;
    }
    int64_t in, o0, o1;
    a.kept(g, &in, &o0, &o1);
    F::finish(acc, a.r.out[0] + o0, a.r.out[1] ? a.r.out[1] + o1 : nullptr, &a.r.ctx);
}

/* The second pass for output o: its chunks' partials combined in order, then written. */
template <class F>
__host__ __device__ void pct_red_finalize(const pct_red_args &a, int64_t o)
{
    const typename F::acc_t *part = (const typename F::acc_t *)a.work + o * a.splits;
    typename F::acc_t acc = part[0];
    for (int64_t s = 1; s < a.splits; s++) F::combine(acc, part[s], &a.r.ctx);
    int64_t in, o0, o1;
    a.kept(o, &in, &o0, &o1);
    F::finish(acc, a.r.out[0] + o0, a.r.out[1] ? a.r.out[1] + o1 : nullptr, &a.r.ctx);
}

template <class F>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_red_kernel(const pct_red_args a)
{
    __shared__ typename F::acc_t lanes[PCT_CUDA_BLOCK];
    const int G = a.group, lane = threadIdx.x % G;
    const int64_t g = (int64_t)blockIdx.x * (PCT_CUDA_BLOCK / G) + threadIdx.x / G;
    typename F::acc_t acc;
    F::init(acc, &a.r.ctx);
    if (g < a.groups()) pct_red_lane_fold<F>(a, g, lane, acc);
    if (G > 1) { /* neighbour-order tree over the group's lanes (Note [CUDA reduction walk]) */
        lanes[threadIdx.x] = acc;
        __syncthreads();
        for (int w = 1; w < G; w *= 2) {
            if (lane % (2 * w) == 0) F::combine(lanes[threadIdx.x], lanes[threadIdx.x + w], &a.r.ctx);
            __syncthreads();
        }
        acc = lanes[threadIdx.x];
    }
    if (lane == 0 && g < a.groups()) pct_red_group_end<F>(a, g, acc);
}

template <class F>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_red_finalize_kernel(const pct_red_args a)
{
    const int64_t o = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x;
    if (o < a.r.nout) pct_red_finalize<F>(a, o);
}

/* Launch policies (Note [Launch policies]): the device's, and the host's of the simulated device. */
struct pct_red_on_device {
    template <class F>
    static cudaError_t run(const pct_red_args &a, cudaStream_t stream)
    {
        const int64_t per_block = PCT_CUDA_BLOCK / a.group;
        const int64_t blocks = (a.groups() + per_block - 1) / per_block;
        if (blocks > 0x7fffffff) return cudaErrorInvalidConfiguration;
        pct_red_kernel<F><<<(unsigned)blocks, PCT_CUDA_BLOCK, 0, stream>>>(a);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess || a.splits == 1) return err;
        pct_red_finalize_kernel<F><<<(unsigned)((a.r.nout + PCT_CUDA_BLOCK - 1) / PCT_CUDA_BLOCK), PCT_CUDA_BLOCK, 0,
                                     stream>>>(a);
        return cudaGetLastError();
    }
};

struct pct_red_on_host {
    template <class F>
    static cudaError_t run(const pct_red_args &a, cudaStream_t)
    {
        typename F::acc_t lanes[PCT_CUDA_BLOCK];
        for (int64_t g = 0; g < a.groups(); g++) {
            for (int l = 0; l < a.group; l++) {
                F::init(lanes[l], &a.r.ctx);
                pct_red_lane_fold<F>(a, g, l, lanes[l]);
            }
            for (int w = 1; w < a.group; w *= 2)
                for (int l = 0; l < a.group; l += 2 * w) F::combine(lanes[l], lanes[l + w], &a.r.ctx);
            pct_red_group_end<F>(a, g, lanes[0]);
        }
        if (a.splits > 1)
            for (int64_t o = 0; o < a.r.nout; o++) pct_red_finalize<F>(a, o);
        return cudaSuccess;
    }
};

/* The size of F's accumulator, for the work buffer. */
template <class F>
static size_t pct_red_acc_size() { return sizeof(typename F::acc_t); }

/* One family's dispatch: its ops' functors over their dtypes, as a table of (op, dtype) -> (run on device, run on
 * host, accumulator size). */
typedef cudaError_t (*pct_red_run_fn)(const pct_red_args &, cudaStream_t);
struct pct_red_entry {
    pct_red_run_fn device, host;
    size_t acc_size;
};
#define PCT_RED_ENTRY(op, N) \
    {&pct_red_on_device::run<pct_red_##op##_##N>, &pct_red_on_host::run<pct_red_##op##_##N>, sizeof(pct_red_##op##_##N::acc_t)}

/* Instantiation: a functor per (op, dtype) of a subset, and the cases of a family's lookup. The X-macros are
 * dtype.h's PAIRED lists, the op passed along; _FLT keeps the floating dtypes, as the CPU's RED_TABLE_FLT. */
#define PCT_RED_FLT_BOOL(x)
#define PCT_RED_FLT_UINT8(x)
#define PCT_RED_FLT_INT8(x)
#define PCT_RED_FLT_INT16(x)
#define PCT_RED_FLT_INT32(x)
#define PCT_RED_FLT_INT64(x)
#define PCT_RED_FLT_FLOAT16(x) x
#define PCT_RED_FLT_BFLOAT16(x) x
#define PCT_RED_FLT_FLOAT32(x) x
#define PCT_RED_FLT_FLOAT64(x) x
#define PCT_RED_DEF_ALL(E, N, T, C, S, op, b, c, d) PCT_RED_FUNCTOR(op, E, N, T, C)
#define PCT_RED_DEF_FLT(E, N, T, C, S, op, b, c, d) PCT_RED_FLT_##E(PCT_RED_FUNCTOR(op, E, N, T, C))
#define PCT_RED_CASE_ALL(E, N, T, C, S, op, b, c, d) \
    case PCT_##E: { static const pct_red_entry entry = PCT_RED_ENTRY(op, N); return &entry; }
#define PCT_RED_CASE_FLT(E, N, T, C, S, op, b, c, d) PCT_RED_FLT_##E(PCT_RED_CASE_ALL(E, N, T, C, S, op, b, c, d))
/* the functors of op over every dtype (ALL), the floating ones (FLT), or every dtype with uint16/32/64 (ALLU) */
#define PCT_RED_FUNCTORS_ALL(op) PCT_FORALL_DTYPES_PAIRED(PCT_RED_DEF_ALL, op, 0, 0, 0)
#define PCT_RED_FUNCTORS_FLT(op) PCT_FORALL_DTYPES_PAIRED(PCT_RED_DEF_FLT, op, 0, 0, 0)
#define PCT_RED_FUNCTORS_ALLU(op) PCT_FORALL_ALL_DTYPES_PAIRED(PCT_RED_DEF_ALL, op, 0, 0, 0)
/* a family lookup's case for op: its entry for dtype, or nullptr */
#define PCT_RED_LOOKUP_ALL(op) \
    case PCT_RED_OP_##op: switch (dtype) { PCT_FORALL_DTYPES_PAIRED(PCT_RED_CASE_ALL, op, 0, 0, 0) default: return nullptr; }
#define PCT_RED_LOOKUP_FLT(op) \
    case PCT_RED_OP_##op: switch (dtype) { PCT_FORALL_DTYPES_PAIRED(PCT_RED_CASE_FLT, op, 0, 0, 0) default: return nullptr; }
#define PCT_RED_LOOKUP_ALLU(op) \
    case PCT_RED_OP_##op: switch (dtype) { PCT_FORALL_ALL_DTYPES_PAIRED(PCT_RED_CASE_ALL, op, 0, 0, 0) default: return nullptr; }

/* the families' lookups (reduce_sum.cu, reduce_minmax.cu, reduce_stats.cu): nullptr for an op or dtype not theirs */
const pct_red_entry *pct_red_sum_family(int op, int dtype);
const pct_red_entry *pct_red_minmax_family(int op, int dtype);
const pct_red_entry *pct_red_stats_family(int op, int dtype);

#endif
