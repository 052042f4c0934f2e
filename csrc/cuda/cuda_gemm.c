/* cuda_gemm.c: the CUDA backend's GEMM (the backend's gemm, Note [Device GEMM] in gemm.h) through the cuBLAS table
 * (Note [cuBLAS table] in cuda_blas.h).
 *
 * The call arrives row-major with BLAS-able operands (blas_device.c packed the others). cuBLAS is column-major: a
 * row-major C = A @ B is the column-major C^T = B^T @ A^T, so B goes first, A second and m, n swap; a column-major C
 * (its columns contiguous) is first turned into a row-major C^T = B^T A^T by swapping the operands and every
 * matrix's strides. Batches: the innermost batch dim is one strided-batched call, the outer ones a loop of calls.
 * Precision follows torch: float32 computes in TF32 when torch.set_float32_matmul_precision is "high" or "medium"
 * (backends.cuda.matmul.allow_tf32); float16 and bfloat16 accumulate in float32, with the reduced-precision
 * reduction cuBLAS may use unless allow_fp16/bf16_reduced_precision_reduction is False.
 *
 * Ownership: one cuBLAS handle per device and thread, created on first use and kept for the life of the thread (as
 * torch's handle pool does); cuBLAS frees them at exit.
 */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "aten/error.h"
#include "aten/gemm.h"
#include <limits.h>

static _Thread_local void *handles[PCT_CUDA_MAX_DEVICES];

const pct_cuda_blas *pct_cuda_blas_load(const char **why)
{
    return pct_cuda_sim_requested() ? &pct_cuda_blas_sim : pct_cuda_blas_real_load(why);
}

static int blas_raise(const pct_cuda_blas *blas, int status, const char *what)
{
    pct_error(PCT_ERR_RUNTIME, "CUDA error: %s when calling `%s`", blas->status_string(status), what);
    return -1;
}

static void *handle_for(const pct_cuda_blas *blas, int device)
{
    if (!handles[device]) {
        int rc = blas->create(&handles[device]);
        if (rc) { handles[device] = NULL; blas_raise(blas, rc, "cublasCreate(handle)"); return NULL; }
    }
    return handles[device];
}

static int blas_type_of(int dtype)
{
    switch (dtype) {
    case PCT_FLOAT32: return PCT_BLAS_R_32F;
    case PCT_FLOAT64: return PCT_BLAS_R_64F;
    case PCT_FLOAT16: return PCT_BLAS_R_16F;
    case PCT_BFLOAT16: return PCT_BLAS_R_16BF;
    default: return -1;
    }
}

typedef struct matrix {
    const char *data;
    int64_t rs, cs, bs_inner; /* strides (elements) of the rows, columns and innermost batch dim */
} matrix;

/* op and leading dimension of a rows x cols row-major-BLAS matrix for a column-major call (Note [GEMM layouts]):
 * rows contiguous (trans false) is, to cuBLAS, the column-major transpose stored as is: op N for the operand the
 * column-major product wants transposed */
static bool col_major_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *op, int *ld)
{
    bool trans;
    int64_t ld64;
    if (!pct_gemm_layout(rows, cols, rs, cs, &trans, &ld64)) return false;
    *op = trans ? PCT_BLAS_OP_T : PCT_BLAS_OP_N;
    *ld = (int)ld64;
    return true;
}

int pct_cuda_gemm(const pct_gemm_call *call)
{
    const char *why = NULL;
    const pct_cuda_blas *blas = pct_cuda_blas_load(&why);
    if (!blas) { pct_error(PCT_ERR_RUNTIME, "CUDA matrix products need cuBLAS: %s", why); return -1; }
    const int type = blas_type_of(call->dtype);
    if (type < 0) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"addmm_cuda\" not implemented for '%s'", pct_dtype_cpp_name[call->dtype]);
        return -1;
    }
    pct_gemm_call g = *call;
    bool trans;
    int64_t ld;
    if (!pct_gemm_layout(g.m, g.n, g.crs, g.ccs, &trans, &ld)) {
        pct_error_str(PCT_ERR_RUNTIME, "internal error: a CUDA GEMM output without a BLAS layout");
        return -1;
    }
    if (trans) { /* C column-major: compute C^T = B^T A^T, whose output is row-major */
        const void *t = g.a; g.a = g.b; g.b = t;
        int64_t s = g.m; g.m = g.n; g.n = s;
        int64_t ars = g.ars, acs = g.acs;
        g.ars = g.bcs; g.acs = g.brs; g.brs = acs; g.bcs = ars;
        s = g.crs; g.crs = g.ccs; g.ccs = s;
        for (int d = 0; d < g.nb; d++) { s = g.a_bs[d]; g.a_bs[d] = g.b_bs[d]; g.b_bs[d] = s; }
        pct_gemm_layout(g.m, g.n, g.crs, g.ccs, &trans, &ld);
    }
    int op_a, op_b, lda, ldb;
    if (!col_major_operand(g.m, g.k, g.ars, g.acs, &op_a, &lda) || !col_major_operand(g.k, g.n, g.brs, g.bcs, &op_b, &ldb) ||
        g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX) {
        pct_error(PCT_ERR_RUNTIME, "CUDA matrix products of sizes beyond 2^31 are not supported (m=%lld, n=%lld, k=%lld)",
                  (long long)g.m, (long long)g.n, (long long)g.k);
        return -1;
    }
    /* the column-major product: C^T (n x m, ldc) = op(B) (n x k) @ op(A) (k x m) */
    const int ldc = (int)ld;
    int compute = PCT_BLAS_COMPUTE_32F, math = PCT_BLAS_DEFAULT_MATH;
    if (g.dtype == PCT_FLOAT64) compute = PCT_BLAS_COMPUTE_64F;
    else if (g.dtype == PCT_FLOAT32 && pct_matmul.float32_precision != PCT_MATMUL_HIGHEST) compute = PCT_BLAS_COMPUTE_32F_FAST_TF32;
    else if ((g.dtype == PCT_FLOAT16 && !pct_matmul.fp16_reduced_reduction) ||
             (g.dtype == PCT_BFLOAT16 && !pct_matmul.bf16_reduced_reduction))
        math = PCT_BLAS_DISALLOW_REDUCED_PRECISION_REDUCTION;
    const float alpha_f = (float)g.alpha, beta_f = g.beta_zero ? 0.0f : (float)g.beta;
    const double beta_d = g.beta_zero ? 0.0 : g.beta;
    const void *alpha = compute == PCT_BLAS_COMPUTE_64F ? (const void *)&g.alpha : (const void *)&alpha_f;
    const void *beta = compute == PCT_BLAS_COMPUTE_64F ? (const void *)&beta_d : (const void *)&beta_f;

    int previous, rc = -1;
    if (pct_cuda_device_enter(g.device_index, &previous) < 0) return -1;
    void *handle = handle_for(blas, g.device_index);
    if (!handle) goto done;
    int st = blas->set_stream(handle, pct_cuda_current_stream_handle(g.device_index));
    if (!st) st = blas->set_math_mode(handle, math);
    if (st) { blas_raise(blas, st, "cublasSetStream(handle, stream)"); goto done; }
    /* the innermost batch dim in one call; the outer ones loop */
    const int inner = g.nb > 0 ? g.nb - 1 : -1;
    const int64_t batch = inner >= 0 ? g.bsize[inner] : 1;
    int64_t outer = 1;
    for (int d = 0; d < inner; d++) outer *= g.bsize[d];
    if (batch > INT_MAX) {
        pct_error(PCT_ERR_RUNTIME, "CUDA batched matrix products of more than 2^31 matrices are not supported (%lld)",
                  (long long)batch);
        goto done;
    }
    const int isz = pct_dtype_itemsize[g.dtype];
    for (int64_t t = 0; t < outer; t++) {
        int64_t rem = t, ao = 0, bo = 0, co = 0;
        for (int d = inner - 1; d >= 0; d--) {
            const int64_t idx = rem % g.bsize[d];
            rem /= g.bsize[d];
            ao += idx * g.a_bs[d];
            bo += idx * g.b_bs[d];
            co += idx * g.c_bs[d];
        }
        st = blas->gemm(handle, op_b, op_a, (int)g.n, (int)g.m, (int)g.k, alpha,
                        (const char *)g.b + bo * isz, type, ldb, inner >= 0 ? g.b_bs[inner] : 0,
                        (const char *)g.a + ao * isz, type, lda, inner >= 0 ? g.a_bs[inner] : 0, beta,
                        (char *)g.c + co * isz, type, ldc, inner >= 0 ? g.c_bs[inner] : 0, (int)batch, compute);
        if (st) {
            blas_raise(blas, st, batch == 1 ? "cublasGemmEx(handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)"
                                            : "cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, &alpha, a, lda, "
                                              "stridea, b, ldb, strideb, &beta, c, ldc, stridec, num_batches)");
            goto done;
        }
    }
    rc = 0;
done:
    pct_cuda_device_restore(previous);
    return rc;
}
