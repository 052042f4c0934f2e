/* cuda_blas_real.c: the cuBLAS table over the real library, opened with dlopen on first use (Note [cuBLAS table] in
 * cuda_blas.h). Without cuBLAS at build time (no PCT_HAVE_CUBLAS) the table is never available.
 *
 * Ownership: the library handle stays open for the life of the process (cuBLAS handles live as long).
 */
#include "cuda_blas.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#ifdef PCT_HAVE_CUBLAS
#include <cublas_v2.h>

_Static_assert(PCT_BLAS_R_32F == (int)CUDA_R_32F && PCT_BLAS_R_64F == (int)CUDA_R_64F && PCT_BLAS_R_16F == (int)CUDA_R_16F &&
               PCT_BLAS_R_16BF == (int)CUDA_R_16BF, "cudaDataType values");
_Static_assert(PCT_BLAS_OP_N == (int)CUBLAS_OP_N && PCT_BLAS_OP_T == (int)CUBLAS_OP_T, "cublasOperation_t values");
_Static_assert(PCT_BLAS_COMPUTE_32F == (int)CUBLAS_COMPUTE_32F && PCT_BLAS_COMPUTE_32F_FAST_TF32 == (int)CUBLAS_COMPUTE_32F_FAST_TF32 &&
               PCT_BLAS_COMPUTE_64F == (int)CUBLAS_COMPUTE_64F, "cublasComputeType_t values");
_Static_assert(PCT_BLAS_DEFAULT_MATH == (int)CUBLAS_DEFAULT_MATH &&
               PCT_BLAS_DISALLOW_REDUCED_PRECISION_REDUCTION == (int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
               "cublasMath_t values");
_Static_assert(PCT_BLAS_STATUS_NOT_INITIALIZED == (int)CUBLAS_STATUS_NOT_INITIALIZED, "cublasStatus_t values");

static struct {
    __typeof__(&cublasCreate_v2) create;
    __typeof__(&cublasSetStream_v2) set_stream;
    __typeof__(&cublasSetMathMode) set_math_mode;
    __typeof__(&cublasGemmEx) gemm_ex;
    __typeof__(&cublasGemmStridedBatchedEx) gemm_strided_batched_ex;
    __typeof__(&cublasGetStatusString) status_string;
} lib;

static int real_create(void **handle) { return (int)lib.create((cublasHandle_t *)handle); }
static int real_set_stream(void *handle, void *stream) { return (int)lib.set_stream(handle, (cudaStream_t)stream); }
static int real_set_math_mode(void *handle, int mode) { return (int)lib.set_math_mode(handle, (cublasMath_t)mode); }

static int real_gemm(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
                     const void *a, int a_type, int lda, long long stride_a,
                     const void *b, int b_type, int ldb, long long stride_b, const void *beta,
                     void *c, int c_type, int ldc, long long stride_c, int batch, int compute_type)
{
    if (batch == 1)
        return (int)lib.gemm_ex(handle, (cublasOperation_t)transa, (cublasOperation_t)transb, m, n, k, alpha,
                                a, (cudaDataType)a_type, lda, b, (cudaDataType)b_type, ldb, beta,
                                c, (cudaDataType)c_type, ldc, (cublasComputeType_t)compute_type, CUBLAS_GEMM_DEFAULT);
    return (int)lib.gemm_strided_batched_ex(handle, (cublasOperation_t)transa, (cublasOperation_t)transb, m, n, k, alpha,
                                            a, (cudaDataType)a_type, lda, stride_a, b, (cudaDataType)b_type, ldb,
                                            stride_b, beta, c, (cudaDataType)c_type, ldc, stride_c, batch,
                                            (cublasComputeType_t)compute_type, CUBLAS_GEMM_DEFAULT);
}

static const char *real_status_string(int status) { return lib.status_string((cublasStatus_t)status); }

static const pct_cuda_blas real_blas = {
    .name = "cuBLAS",
    .create = real_create,
    .set_stream = real_set_stream,
    .set_math_mode = real_set_math_mode,
    .gemm = real_gemm,
    .status_string = real_status_string,
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_error = "cuBLAS was not loaded";
static bool loaded;

/* The library where the build found it (setup.py: PCT_CUBLAS_PATH), else by name on the loader's search path. */
static void load_library(void)
{
    void *h = NULL;
#ifdef PCT_CUBLAS_PATH
    h = dlopen(PCT_CUBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!h) h = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) { load_error = "libcublas could not be opened (pip install nvidia-cublas, or the CUDA toolkit's)"; return; }
#define PCT_SYM(field, name) \
    if (!(*(void **)&lib.field = dlsym(h, name))) { load_error = "libcublas lacks " name; return; }
    PCT_SYM(create, "cublasCreate_v2")
    PCT_SYM(set_stream, "cublasSetStream_v2")
    PCT_SYM(set_math_mode, "cublasSetMathMode")
    PCT_SYM(gemm_ex, "cublasGemmEx")
    PCT_SYM(gemm_strided_batched_ex, "cublasGemmStridedBatchedEx")
    PCT_SYM(status_string, "cublasGetStatusString")
#undef PCT_SYM
    loaded = true;
}

const pct_cuda_blas *pct_cuda_blas_real_load(const char **why)
{
    pthread_once(&load_once, load_library);
    if (loaded) return &real_blas;
    *why = load_error;
    return NULL;
}

#else

const pct_cuda_blas *pct_cuda_blas_real_load(const char **why)
{
    *why = "pyctorch was built without cuBLAS (pip install nvidia-cublas, then rebuild)";
    return NULL;
}

#endif
