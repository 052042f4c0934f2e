/* gemm.h: the matrix product a device backend computes for the product ops, and torch's matmul precision settings.
 *
 * Note [Device GEMM]: mm, addmm, bmm and baddbmm are one device-neutral kernel (cpu/blas.c): the shape checks, the
 * result and out= tensors, overlaps, k == 0 and the beta * input term are the same on every device. Only the product
 * itself, C = alpha * A @ B + beta * C over a batch of strided matrices, is the device's: on the CPU it is the GEMM
 * core of blas.c; elsewhere blas.c hands a pct_gemm_call to the backend's gemm (backend.h), after packing every
 * operand whose strides no BLAS accepts (pct_gemm_layout) into a contiguous copy on the device and computing an
 * overlapping or unsuitable output through a contiguous temporary. A backend's gemm therefore sees only matrices
 * whose rows or columns are contiguous, and an output that shares no memory with its inputs.
 *
 * Ownership: a pct_gemm_call borrows every pointer in it for the duration of the call.
 */
#ifndef PCT_GEMM_H
#define PCT_GEMM_H
#include <stdbool.h>
#include <stdint.h>
#include "tensor.h"

typedef struct pct_gemm_call {
    int dtype;         /* of A, B and C alike */
    int device_index;
    int nb;            /* batch dims, outermost first (0: one product) */
    int64_t bsize[PCT_MAX_DIMS];
    int64_t a_bs[PCT_MAX_DIMS], b_bs[PCT_MAX_DIMS], c_bs[PCT_MAX_DIMS]; /* batch strides, elements (0: broadcast) */
    const void *a, *b; /* device addresses of the first elements */
    void *c;
    int64_t ars, acs, brs, bcs, crs, ccs; /* row and column strides, elements */
    int64_t m, n, k;   /* A is m x k, B is k x n, C is m x n; m, n, k > 0 */
    double alpha, beta;
    bool beta_zero;    /* ignore C's old values (NaN included), as BLAS does for beta == 0 */
} pct_gemm_call;

/* Note [GEMM layouts]: a rows x cols matrix with element strides (rs, cs) goes to a row-major BLAS as is when its
 * rows are contiguous (cs == 1, ld = rs >= cols: *trans false) and as the transpose of a row-major matrix when its
 * columns are (rs == 1, ld = cs >= rows: *trans true); a dimension of size 1 may have any stride. Anything else
 * (broadcast stride 0, a sliced inner dimension) must be packed first: false. BLAS takes ld as an int. */
static inline bool pct_gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int64_t *ld)
{
    const int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
    if ((cols == 1 || cs == 1) && (rows == 1 || rs >= c1)) {
        *trans = false;
        *ld = rows == 1 ? c1 : rs;
        return *ld <= INT32_MAX;
    }
    if ((rows == 1 || rs == 1) && (cols == 1 || cs >= r1)) {
        *trans = true;
        *ld = cols == 1 ? r1 : cs;
        return *ld <= INT32_MAX;
    }
    return false;
}

/* torch.set_float32_matmul_precision and backends.cuda.matmul's reduced-precision flags, read by the device GEMMs
 * (the CPU computes float32 products in float32 whatever they say). */
enum { PCT_MATMUL_HIGHEST = 0, PCT_MATMUL_HIGH = 1, PCT_MATMUL_MEDIUM = 2 };
typedef struct pct_matmul_settings {
    int float32_precision;       /* PCT_MATMUL_*: HIGH and MEDIUM allow TF32 */
    bool fp16_reduced_reduction; /* allow_fp16_reduced_precision_reduction (torch's default: true) */
    bool bf16_reduced_reduction; /* allow_bf16_reduced_precision_reduction (torch's default: true) */
} pct_matmul_settings;
extern pct_matmul_settings pct_matmul;

#endif
