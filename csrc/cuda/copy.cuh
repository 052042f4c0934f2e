/* copy.cuh: copies within a CUDA device, with dtype conversion, and fills: loops over a pct_cuda_loop (loops.cuh) for
 * the CUDA backend's copy and fill (copy.cu's entry points, copy_glue.c). A conversion converts as the CPU's copy
 * loops do (PCT_CONVERT, dtype.h): a float truncated toward zero into an integer (the device's conversion saturates
 * where it overflows, as torch's CUDA copies do), anything nonzero true. A copy within one dtype moves bytes. A
 * header, so that host tests (Note [Launch policies] in loops.cuh) can run the same loops. */
#ifndef PCT_CUDA_COPY_CUH
#define PCT_CUDA_COPY_CUH
#include "loops.cuh"
#include "../aten/dtype.h"

/* One functor per (source, destination) pair of dtypes; the pairs of one dtype are never launched. */
#define PCT_CUDA_CONVERT_FUNCTOR(DE, DN, DT, DC, DS, SE, SN, ST, SC)                                        \
    struct pct_cuda_convert_##SN##_to_##DN {                                                               \
        typedef ST in_t;                                                                                   \
        typedef DT out_t;                                                                                  \
        static constexpr int nin = 1;                                                                      \
        static constexpr bool same_dtype = PCT_##DE == PCT_##SE;                                           \
        __host__ __device__ out_t operator()(const in_t *v) const { return PCT_CONVERT(DE, DC, SE, v[0]); } \
    };
#define PCT_CUDA_CONVERT_FROM(SE, SN, ST, SC, SS) PCT_FORALL_ALL_DTYPES_PAIRED(PCT_CUDA_CONVERT_FUNCTOR, SE, SN, ST, SC)
PCT_FORALL_ALL_DTYPES(PCT_CUDA_CONVERT_FROM)

/* Elements of U's size moved unchanged (a copy within one dtype). */
template <typename U>
struct pct_cuda_move {
    typedef U in_t;
    typedef U out_t;
    static constexpr int nin = 1;
    __host__ __device__ U operator()(const U *v) const { return v[0]; }
};

/* The bytes of one value of U's size, written everywhere (a fill). */
template <typename U>
struct pct_cuda_fill_value {
    typedef U in_t;
    typedef U out_t;
    static constexpr int nin = 0;
    U value;
    __host__ __device__ U operator()(const U *) const { return value; }
};

typedef int (*pct_cuda_convert_fn)(const pct_cuda_loop *plan, cudaStream_t stream);

template <typename L, typename F>
static int pct_cuda_convert_run(const pct_cuda_loop *plan, cudaStream_t stream)
{
    return pct_cuda_launch_elementwise<L>(plan, F(), stream);
}

template <typename L, typename F>
static constexpr pct_cuda_convert_fn pct_cuda_converter()
{
    if constexpr (F::same_dtype) return nullptr;
    else return &pct_cuda_convert_run<L, F>;
}

/* The conversion from dtype src to dtype dst (distinct) through launch policy L, or NULL. */
template <typename L>
static pct_cuda_convert_fn pct_cuda_convert_find(int dst, int src)
{
#define PCT_CUDA_CONVERT_CASE(DE, DN, DT, DC, DS, SE, SN, ST, SC) \
    if (dst == PCT_##DE && src == PCT_##SE) return pct_cuda_converter<L, pct_cuda_convert_##SN##_to_##DN>();
#define PCT_CUDA_CONVERT_CASES(SE, SN, ST, SC, SS) PCT_FORALL_ALL_DTYPES_PAIRED(PCT_CUDA_CONVERT_CASE, SE, SN, ST, SC)
    PCT_FORALL_ALL_DTYPES(PCT_CUDA_CONVERT_CASES)
    return nullptr;
}

/* Whether the plan's operands (one or two) all run contiguously with elements of `size` bytes, with no host scalar. */
static inline bool pct_cuda_plan_dense(const pct_cuda_loop *plan, int64_t size)
{
    if (plan->ndim > 1 || plan->host_scalars) return false;
    for (int k = 0; k < plan->ntensors; k++)
        if (plan->ndim == 1 && plan->strides[0][k] != size) return false;
    return true;
}

/* U-sized elements of the plan's input moved into its output: one memcpy where both are dense. */
template <typename L, typename U>
static int pct_cuda_move_run(const pct_cuda_loop *plan, cudaStream_t stream)
{
    if (pct_cuda_plan_dense(plan, sizeof(U)))
        return (int)L::copy_bytes(plan->data[0], plan->data[1], (size_t)plan->numel * sizeof(U), stream);
    return pct_cuda_launch_elementwise<L>(plan, pct_cuda_move<U>(), stream);
}

/* value (size bytes at `bits`) into every element of the plan's one operand: one memset where the operand is dense
 * and the value's bytes are all alike (zeros, any one-byte value). */
template <typename L, typename U>
static int pct_cuda_fill_bytes(const pct_cuda_loop *plan, const unsigned char *bits, cudaStream_t stream)
{
    bool alike = true;
    for (size_t b = 1; b < sizeof(U); b++) alike = alike && bits[b] == bits[0];
    if (alike && pct_cuda_plan_dense(plan, sizeof(U)))
        return (int)L::set_bytes(plan->data[0], bits[0], (size_t)plan->numel * sizeof(U), stream);
    pct_cuda_fill_value<U> f;
    memcpy(&f.value, bits, sizeof(U));
    return pct_cuda_launch_elementwise<L>(plan, f, stream);
}

/* The launches of pct_cuda_copy_launch and pct_cuda_fill_launch (loop_plan.h) through launch policy L. */
template <typename L>
static int pct_cuda_copy_run(const pct_cuda_loop *plan, int dst_dtype, int src_dtype, cudaStream_t stream)
{
    if (plan->numel <= 0) return 0;
    if (!pct_dtype_valid(dst_dtype) || !pct_dtype_valid(src_dtype)) return (int)cudaErrorInvalidValue;
    if (dst_dtype != src_dtype) {
        const pct_cuda_convert_fn run = pct_cuda_convert_find<L>(dst_dtype, src_dtype);
        return run ? run(plan, stream) : (int)cudaErrorInvalidValue;
    }
    switch (pct_dtype_itemsize[dst_dtype]) {
    case 1: return pct_cuda_move_run<L, uint8_t>(plan, stream);
    case 2: return pct_cuda_move_run<L, uint16_t>(plan, stream);
    case 4: return pct_cuda_move_run<L, uint32_t>(plan, stream);
    case 8: return pct_cuda_move_run<L, uint64_t>(plan, stream);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <typename L>
static int pct_cuda_fill_run(const pct_cuda_loop *plan, int dtype, double value_d, int64_t value_i, cudaStream_t stream)
{
    if (plan->numel <= 0) return 0;
    if (!pct_dtype_valid(dtype)) return (int)cudaErrorInvalidValue;
    /* the element's bytes, converted on the host as the CPU's scalar tensors are (dtype.c) */
    unsigned char bits[8] = {0};
    if (pct_dtype_is_floating(dtype)) pct_store_double(bits, dtype, value_d);
    else pct_store_int64(bits, dtype, value_i);
    switch (pct_dtype_itemsize[dtype]) {
    case 1: return pct_cuda_fill_bytes<L, uint8_t>(plan, bits, stream);
    case 2: return pct_cuda_fill_bytes<L, uint16_t>(plan, bits, stream);
    case 4: return pct_cuda_fill_bytes<L, uint32_t>(plan, bits, stream);
    case 8: return pct_cuda_fill_bytes<L, uint64_t>(plan, bits, stream);
    default: return (int)cudaErrorInvalidValue;
    }
}

#endif
