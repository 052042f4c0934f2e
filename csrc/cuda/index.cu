/* index.cu: the index family's loops on CUDA (the backend's index, Note [Device indexing] in
 * csrc/aten/cpu/index_device.c; index_call.h gives the rules): the index loop of gather / scatter / index_add ..., the
 * checking of index values into offsets, and scatter_reduce's mean division.
 *
 * The index loop splits the plan's dims in two: the parallel ones, a thread per position, and the serial ones (where
 * the destination's stride is 0: positions there may write one element through their indices), which each thread
 * walks in the plan's order, running i in [0, n) at each position (in parallel instead when the writes do not go
 * through j, as gather's). So a destination element is only ever written by one thread, in the CPU's order of
 * contributions: results are the CPU's bit for bit and the same on every run. A copy or a sum whose independent
 * destinations are too few to fill the device (a 1-d scatter or scatter_add, put_, index_add_ into few columns) would
 * leave the GPU idle that way; it takes the flat form instead, a thread per contribution: copies of duplicate indices
 * then keep one of the values, which one unspecified, and sums go through atomics, exact for int32 / int64, in a
 * run-dependent order for float32 / float64, as torch's CUDA scatter / scatter_add / index_add_ / put_ /
 * index_put_(accumulate=True) do (float16 / bfloat16 sums and the other reductions stay on the ordered form). The
 * simulated device runs the same element functions of both forms on the host, thread by thread: walked in turn, the
 * flat form's contributions come in the plan's order too, so there both give the CPU's results. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>
#include "loops.cuh"
#include "index_runner.h"
#include "aten/dtype.h"

/* ---- element types: storage T, compute C, as the CPU loop's PCT_TO_COMPUTE / PCT_FROM_COMPUTE ---- */
template <int E> struct ix_type;
#define IX_TYPE(E, N, T_, C_, S)                                                                   \
    template <> struct ix_type<PCT_##E> {                                                          \
        typedef T_ T;                                                                              \
        typedef C_ C;                                                                              \
        static const bool floating = PCT_##E == PCT_FLOAT16 || PCT_##E == PCT_BFLOAT16 ||           \
                                     PCT_##E == PCT_FLOAT32 || PCT_##E == PCT_FLOAT64;             \
        static __host__ __device__ C load(T v) { return (C)PCT_TO_COMPUTE_##E(v); }                \
        static __host__ __device__ T store(C v) { return (T)PCT_FROM_COMPUTE_##E(v); }             \
    };
PCT_FORALL_ALL_DTYPES(IX_TYPE)
#undef IX_TYPE

/* a * b rounded once, as the CPU computes it (on the device, not contracted into an fma with a following add) */
__host__ __device__ static inline float mul_rounded(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ static inline double mul_rounded(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
template <typename C> __host__ __device__ static inline C mul_rounded(C a, C b) { return (C)(a * b); }

/* ---- the split of a loop call ---- */
struct ix_split {
    int npar, nser;
    signed char par[PCT_INDEX_CALL_MAX_DIMS], ser[PCT_INDEX_CALL_MAX_DIMS]; /* dims, outer to inner */
    int64_t par_count, ser_count;
    bool par_i;       /* i is a parallel coordinate too (the writes do not go through j) */
    int64_t threads;  /* par_count, times n when par_i */
};

static ix_split split_of(const pct_index_call &c)
{
    ix_split s;
    s.npar = s.nser = 0;
    s.par_count = s.ser_count = 1;
    for (int d = 0; d < c.ndim; d++) {
        if (c.shape[d] > 1 && c.strides[d][0] == 0) {
            s.ser[s.nser++] = (signed char)d;
            s.ser_count *= c.shape[d];
        } else {
            s.par[s.npar++] = (signed char)d;
            s.par_count *= c.shape[d];
        }
    }
    s.par_i = c.dst_sj == 0;
    s.threads = s.par_count * (s.par_i ? c.n : 1);
    return s;
}

/* adds the byte offsets of position q (row-major over `dims`, the last fastest) to off[0..nops) */
__host__ __device__ static inline void add_offsets(const pct_index_call &c, const signed char *dims, int nd, int64_t q,
                                                   int64_t *off)
{
    for (int k = nd - 1; k >= 0; k--) {
        const int d = dims[k];
        const int64_t x = q % c.shape[d];
        q /= c.shape[d];
        for (int o = 0; o < c.noperands; o++) off[o] += x * c.strides[d][o];
    }
}

/* one contribution: op on the destination element d and the source element s (cnt: IX_MEAN's count of j) */
template <int E>
__host__ __device__ static inline void apply(const pct_index_call &c, char *d, const char *s, int64_t *cnt)
{
    typedef ix_type<E> X;
    typedef typename X::T T;
    typedef typename X::C C;
    T *dp = (T *)d;
    const T sv = *(const T *)s;
    switch (c.op) {
    case PCT_INDEX_COPY:
        *dp = sv;
        break;
    case PCT_INDEX_ADD: {
        const C alpha = X::floating ? (C)c.alpha_d : (C)c.alpha_i;
        *dp = X::store(X::load(*dp) + mul_rounded(alpha, X::load(sv)));
        break;
    }
    case PCT_INDEX_MUL:
        *dp = X::store(mul_rounded(X::load(*dp), X::load(sv)));
        break;
    case PCT_INDEX_MAX: {
        const C a = X::load(*dp), b = X::load(sv);
        if (isnan((double)b) || b > a) *dp = sv;
        break;
    }
    case PCT_INDEX_MIN: {
        const C a = X::load(*dp), b = X::load(sv);
        if (isnan((double)b) || b < a) *dp = sv;
        break;
    }
    case PCT_INDEX_MEAN:
        *dp = X::store(X::load(*dp) + X::load(sv));
        (*cnt)++;
        break;
    }
}

/* thread t of a loop call: its parallel position, then the serial ones in the plan's order, each running i */
template <int E>
__host__ __device__ static void loop_thread(const pct_index_call &c, const ix_split &s, int64_t t)
{
    int64_t i0 = 0, i1 = c.n;
    if (s.par_i) {
        i0 = t % c.n;
        i1 = i0 + 1;
        t /= c.n;
    }
    int64_t base[PCT_INDEX_CALL_OPERANDS] = {0, 0, 0, 0};
    add_offsets(c, s.par, s.npar, t, base);
    uint64_t value = c.src_value; /* the by-value source, read through a pointer as the others */
    for (int64_t q = 0; q < s.ser_count; q++) {
        int64_t off[PCT_INDEX_CALL_OPERANDS] = {base[0], base[1], base[2], base[3]};
        if (s.nser) add_offsets(c, s.ser, s.nser, q, off);
        char *dp = c.data[0] + off[0];
        const char *sp = c.src_by_value ? (const char *)&value : c.data[1] + off[1];
        const char *ip = c.data[2] + off[2];
        for (int64_t i = i0; i < i1; i++) {
            const int64_t j = *(const int64_t *)(ip + i * c.idx_step);
            const char *sv = c.src_by_value ? sp : sp + i * c.src_si + j * c.src_sj;
            int64_t *cnt = c.op == PCT_INDEX_MEAN ? (int64_t *)(c.data[3] + off[3] + j * c.cnt_sj) : (int64_t *)0;
            apply<E>(c, dp + i * c.dst_si + j * c.dst_sj, sv, cnt);
        }
    }
}

/* byte offsets of element t of the call's shape in its first two operands */
__host__ __device__ static void first_two_offsets(const pct_index_call &c, int64_t t, int64_t off[2])
{
    off[0] = off[1] = 0;
    for (int d = c.ndim - 1; d >= 0; d--) {
        const int64_t x = t % c.shape[d];
        t /= c.shape[d];
        off[0] += x * c.strides[d][0];
        off[1] += x * c.strides[d][1];
    }
}

/* element t of an OFFSETS call; a bad value's position lowers *first_bad */
__host__ __device__ static void offsets_thread(const pct_index_call &c, int64_t t, unsigned long long *first_bad)
{
    int64_t off[2];
    first_two_offsets(c, t, off);
    int64_t *out = (int64_t *)(c.data[0] + off[0]);
    const char *p = c.data[1] + off[1];
    int64_t v = c.in32 ? (int64_t) * (const int32_t *)p : *(const int64_t *)p;
    if (v < c.lo || v >= c.hi) {
#ifdef __CUDA_ARCH__
        atomicMin(first_bad, (unsigned long long)t);
#else
        if ((unsigned long long)t < *first_bad) *first_bad = (unsigned long long)t;
#endif
        *out = 0;
        return;
    }
    if (v < 0) v += c.hi;
    int64_t o;
    if (c.linear) {
        o = 0;
        for (int d = c.lin_ndim - 1; d >= 0; d--) {
            o += (v % c.lin_sizes[d]) * c.lin_strides[d];
            v /= c.lin_sizes[d];
        }
    } else {
        o = v * c.mul;
    }
    *out = c.accumulate ? *out + o : o;
}

/* element t of a MEAN_DIV call: dst /= count (0 as 1), floor division for the integral dtypes */
template <int E>
__host__ __device__ static void mean_div_thread(const pct_index_call &c, int64_t t)
{
    typedef ix_type<E> X;
    typedef typename X::T T;
    int64_t off[2];
    first_two_offsets(c, t, off);
    T *dp = (T *)(c.data[0] + off[0]);
    int64_t n = *(const int64_t *)(c.data[1] + off[1]);
    if (n == 0) n = 1;
    if (X::floating) {
        *dp = X::store((typename X::C)((double)X::load(*dp) / (double)n));
    } else {
        const int64_t a = (int64_t)X::load(*dp);
        int64_t r = a / n;
        if (a % n != 0 && a < 0) r--;
        *dp = X::store((typename X::C)r);
    }
}

/* ---- the flat form (real GPUs only): a thread per (position, i), for a sum (atomics) or a copy (plain stores: of
 * duplicate indices, one write wins, which one unspecified, as in torch's CUDA scatter / index_copy_ / put_) ---- */
/* d += v: an atomic add on the device; on the host (the simulated device walks threads in turn) a plain one */
template <typename T> __host__ __device__ static inline void atomic_add(T *d, T v)
{
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(T) == 8 && !std::is_floating_point<T>::value)
        atomicAdd((unsigned long long *)d, (unsigned long long)v); /* two's complement: the wrapped sum */
    else if constexpr (sizeof(T) == 4 && !std::is_floating_point<T>::value)
        atomicAdd((int *)d, (int)v);
    else
        atomicAdd(d, v);
#else
    *d = (T)(*d + v);
#endif
}

template <int E> constexpr bool has_atomic_add() { return E == PCT_FLOAT32 || E == PCT_FLOAT64 || E == PCT_INT32 || E == PCT_INT64; }

/* thread t of the flat form: contribution i = t % n of position t / n (the plan's order when walked in turn, so the
 * simulated device's sequential walk gives the CPU's results) */
template <int E>
__host__ __device__ static void flat_thread(const pct_index_call &c, int64_t t)
{
    typedef ix_type<E> X;
    typedef typename X::T T;
    typedef typename X::C C;
    const int64_t i = t % c.n;
    int64_t off[PCT_INDEX_CALL_OPERANDS] = {0, 0, 0, 0};
    int64_t q = t / c.n;
    for (int d = c.ndim - 1; d >= 0; d--) {
        const int64_t x = q % c.shape[d];
        q /= c.shape[d];
        for (int o = 0; o < 3; o++) off[o] += x * c.strides[d][o];
    }
    const int64_t j = *(const int64_t *)(c.data[2] + off[2] + i * c.idx_step);
    T sv;
    if (c.src_by_value) memcpy(&sv, &c.src_value, sizeof sv);
    else sv = *(const T *)(c.data[1] + off[1] + i * c.src_si + j * c.src_sj);
    T *dp = (T *)(c.data[0] + off[0] + i * c.dst_si + j * c.dst_sj);
    if constexpr (has_atomic_add<E>()) {
        if (c.op == PCT_INDEX_ADD) {
            const C alpha = X::floating ? (C)c.alpha_d : (C)c.alpha_i;
            atomic_add<T>(dp, (T)mul_rounded(alpha, X::load(sv)));
            return;
        }
    }
    *dp = sv; /* PCT_INDEX_COPY */
}

template <int E>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) ix_flat_kernel(const pct_index_call c, int64_t total)
{
    for (int64_t t = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; t < total; t += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        flat_thread<E>(c, t);
}

/* ---- launches ---- */
template <int E> struct loop_fn {
    __host__ __device__ void operator()(const pct_index_call &c, const ix_split &s, int64_t t) const { loop_thread<E>(c, s, t); }
};
template <int E> struct mean_div_fn {
    __host__ __device__ void operator()(const pct_index_call &c, const ix_split &s, int64_t t) const
    {
        (void)s;
        mean_div_thread<E>(c, t);
    }
};

template <typename F>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) ix_kernel(const pct_index_call c, const ix_split s, int64_t n, F f)
{
    for (int64_t t = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; t < n; t += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        f(c, s, t);
}

__global__ void __launch_bounds__(PCT_CUDA_BLOCK) ix_offsets_kernel(const pct_index_call c, unsigned long long *first_bad)
{
    for (int64_t t = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; t < c.numel; t += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        offsets_thread(c, t, first_bad);
}

template <typename F>
static int run(const pct_index_call &c, const ix_split &s, int64_t n, int on_host, cudaStream_t stream, F f)
{
    if (n == 0) return 0;
    if (on_host) {
        for (int64_t t = 0; t < n; t++) f(c, s, t);
        return 0;
    }
    unsigned blocks;
    cudaError_t err = pct_cuda_on_device::grid(n, &blocks);
    if (err != cudaSuccess) return (int)err;
    ix_kernel<<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(c, s, n, f);
    return (int)cudaGetLastError();
}

/* Below this many independent destinations, a copy or a sum (of a dtype with atomics) with enough serial work per
 * destination takes the flat form. */
#define IX_FLAT_BELOW 4096
#define IX_FLAT_SERIAL 32

template <int E>
static int launch_loop(const pct_index_call &c, int on_host, cudaStream_t stream)
{
    const ix_split s = split_of(c);
    const bool flat_op = c.op == PCT_INDEX_COPY || (has_atomic_add<E>() && c.op == PCT_INDEX_ADD);
    if (flat_op && c.dst_sj != 0 && s.threads < IX_FLAT_BELOW && s.ser_count * c.n >= IX_FLAT_SERIAL) {
        const int64_t total = c.numel * c.n;
        if (on_host) {
            for (int64_t t = 0; t < total; t++) flat_thread<E>(c, t);
            return 0;
        }
        unsigned blocks;
        cudaError_t err = pct_cuda_on_device::grid(total, &blocks);
        if (err != cudaSuccess) return (int)err;
        ix_flat_kernel<E><<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(c, total);
        return (int)cudaGetLastError();
    }
    return run(c, s, s.threads, on_host, stream, loop_fn<E>());
}

template <int E>
static int launch_mean_div(const pct_index_call &c, int on_host, cudaStream_t stream)
{
    const ix_split s = split_of(c);
    return run(c, s, c.numel, on_host, stream, mean_div_fn<E>());
}

extern "C" int pct_cuda_index_launch(const pct_index_call *c, int on_host, void *stream, unsigned long long *first_bad)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (c->kind == PCT_INDEX_CALL_OFFSETS) {
        if (c->numel == 0) return 0;
        if (on_host) {
            for (int64_t t = 0; t < c->numel; t++) offsets_thread(*c, t, first_bad);
            return 0;
        }
        unsigned blocks;
        cudaError_t err = pct_cuda_on_device::grid(c->numel, &blocks);
        if (err != cudaSuccess) return (int)err;
        ix_offsets_kernel<<<blocks, PCT_CUDA_BLOCK, 0, st>>>(*c, first_bad);
        return (int)cudaGetLastError();
    }
    switch (c->dtype) {
#define IX_CASE(E, N, T, C, S)                                                                             \
    case PCT_##E:                                                                                          \
        return c->kind == PCT_INDEX_CALL_LOOP ? launch_loop<PCT_##E>(*c, on_host, st)                      \
                                              : launch_mean_div<PCT_##E>(*c, on_host, st);
        PCT_FORALL_ALL_DTYPES(IX_CASE)
#undef IX_CASE
    default:
        return (int)cudaErrorInvalidValue;
    }
}
