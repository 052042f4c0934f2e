/* float_types.cuh: the floating dtypes as the row kernels (softmax.cu, row_norm.cu) see them. CUDA C++. */
#ifndef PCT_CUDA_FLOAT_TYPES_CUH
#define PCT_CUDA_FLOAT_TYPES_CUH
#include "aten/dtype.h"
/* The storage and compute types of a floating dtype and the row kernels' conversions (16-bit floats widen to float).
 * Keyed by the dtype: float16 and bfloat16 are both stored as uint16_t. */
template <int DT> struct pct_sm_type;
template <> struct pct_sm_type<PCT_FLOAT16> {
    typedef pct_half T;
    typedef float C;
    static __host__ __device__ C load(T v) { return pct_half_to_float(v); }
    static __host__ __device__ T store(C v) { return pct_float_to_half(v); }
};
template <> struct pct_sm_type<PCT_BFLOAT16> {
    typedef pct_bfloat16 T;
    typedef float C;
    static __host__ __device__ C load(T v) { return pct_bf16_to_float(v); }
    static __host__ __device__ T store(C v) { return pct_float_to_bf16(v); }
};
template <> struct pct_sm_type<PCT_FLOAT32> {
    typedef float T;
    typedef float C;
    static __host__ __device__ C load(T v) { return v; }
    static __host__ __device__ T store(C v) { return v; }
};
template <> struct pct_sm_type<PCT_FLOAT64> {
    typedef double T;
    typedef double C;
    static __host__ __device__ C load(T v) { return v; }
    static __host__ __device__ T store(C v) { return v; }
};
#endif
