/* cuda_blas.h: the cuBLAS calls the CUDA backend makes, as a table, like the driver's (cuda_driver.h).
 *
 * Note [cuBLAS table]: cuBLAS is loaded on first use, not linked: cuda_blas_real.c opens libcublas (the toolkit's or
 * the nvidia-cublas wheel's found at build time) with dlopen when the backend loads and reads the few entry points
 * below, so a build whose GPU machine lacks the library still runs everything else (the products then take the
 * CPU fallback). On the simulated device (Note [Simulated CUDA device]) cuda_blas_sim.c computes the same calls with
 * a reference loop over the device memory's host view, so CI tests the layouts, transposes, leading dimensions,
 * batch strides, dtypes and the TF32 rounding the backend asks cuBLAS for, everything but cuBLAS itself.
 *
 * The numbers are cuBLAS's own (cudaDataType, cublasOperation_t, cublasComputeType_t, cublasMath_t values; the real
 * table checks them against cuBLAS's header at compile time). Handles and streams are opaque pointers. Every
 * function returns a cublasStatus_t (0: success).
 */
#ifndef PCT_CUDA_BLAS_H
#define PCT_CUDA_BLAS_H
#include <stdbool.h>
#include <stddef.h>

enum {
    PCT_BLAS_R_32F = 0, PCT_BLAS_R_64F = 1, PCT_BLAS_R_16F = 2, PCT_BLAS_R_16BF = 14, /* cudaDataType */
    PCT_BLAS_OP_N = 0, PCT_BLAS_OP_T = 1,                                              /* cublasOperation_t */
    PCT_BLAS_COMPUTE_32F = 68, PCT_BLAS_COMPUTE_32F_FAST_TF32 = 77, PCT_BLAS_COMPUTE_64F = 70,
    PCT_BLAS_DEFAULT_MATH = 0, PCT_BLAS_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,    /* cublasMath_t */
    PCT_BLAS_STATUS_NOT_INITIALIZED = 1,
};

typedef struct pct_cuda_blas {
    const char *name;   /* "cuBLAS" or "simulated" */
    /* a handle of the current device */
    int (*create)(void **handle);
    int (*set_stream)(void *handle, void *stream);
    int (*set_math_mode)(void *handle, int mode);
    /* column-major C[i] = alpha * op(A[i]) @ op(B[i]) + beta * C[i] for i < batch, the matrices stride_* elements apart
     * (cublasGemmStridedBatchedEx; cublasGemmEx where batch is 1); alpha and beta point to a float for the 32F compute
     * types, to a double for 64F */
    int (*gemm)(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
                const void *a, int a_type, int lda, long long stride_a,
                const void *b, int b_type, int ldb, long long stride_b, const void *beta,
                void *c, int c_type, int ldc, long long stride_c, int batch, int compute_type);
    const char *(*status_string)(int status);
} pct_cuda_blas;

/* The table for the driver in use (the simulated one on the simulated device), or NULL where cuBLAS could not be
 * loaded; *why then says why. Loads the library on its first call. */
const pct_cuda_blas *pct_cuda_blas_load(const char **why);
extern const pct_cuda_blas pct_cuda_blas_sim;
const pct_cuda_blas *pct_cuda_blas_real_load(const char **why);

/* The simulated device's host view of [ptr, ptr + nbytes) of its memory; NULL outside one allocation. */
char *pct_cuda_sim_host_view(const void *ptr, size_t nbytes);
/* The host address of a device address for the launch policies that run on the host (the reduction and row walks):
 * its host view, or ptr itself where it lies in no allocation (NULL, or an empty tensor's pointer, never read). */
void *pct_cuda_sim_host_address(const void *ptr);

#endif
