/* cuda_blas_sim.c: the cuBLAS table of the simulated device (Note [cuBLAS table] in cuda_blas.h): the calls computed
 * by a reference loop over the host view of the simulated device's memory, with cuBLAS's column-major conventions
 * and its TF32 rounding, so that what the backend asks of cuBLAS is tested where no GPU is.
 *
 * Ownership: a handle is a malloc'ed sim_handle owned by its creator (the backend keeps one per device and thread
 * for the life of the process).
 */
#include "cuda_blas.h"
#include "aten/dtype.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SIM_STATUS_ALLOC_FAILED 3
#define SIM_STATUS_INVALID_VALUE 7
#define SIM_STATUS_EXECUTION_FAILED 13

typedef struct sim_handle {
    int math_mode;
    void *stream;
} sim_handle;

static int sim_create(void **handle)
{
    sim_handle *h = calloc(1, sizeof *h);
    if (!h) return SIM_STATUS_ALLOC_FAILED;
    *handle = h;
    return 0;
}

static int sim_set_stream(void *handle, void *stream) { ((sim_handle *)handle)->stream = stream; return 0; }
static int sim_set_math_mode(void *handle, int mode) { ((sim_handle *)handle)->math_mode = mode; return 0; }

static int itemsize_of(int type)
{
    switch (type) {
    case PCT_BLAS_R_32F: return 4;
    case PCT_BLAS_R_64F: return 8;
    case PCT_BLAS_R_16F: case PCT_BLAS_R_16BF: return 2;
    default: return 0;
    }
}

/* float32 rounded to TF32 (10 explicit mantissa bits, to nearest even), as the tensor cores read it */
static float to_tf32(float v)
{
    if (!isfinite(v)) return v;
    uint32_t bits;
    memcpy(&bits, &v, 4);
    bits += 0xFFFu + ((bits >> 13) & 1u);
    bits &= ~0x1FFFu;
    memcpy(&v, &bits, 4);
    return v;
}

static double load(const char *p, int type, bool tf32)
{
    switch (type) {
    case PCT_BLAS_R_32F: { float v; memcpy(&v, p, 4); return tf32 ? to_tf32(v) : v; }
    case PCT_BLAS_R_64F: { double v; memcpy(&v, p, 8); return v; }
    case PCT_BLAS_R_16F: { pct_half v; memcpy(&v, p, 2); return pct_half_to_float(v); }
    default: { pct_bfloat16 v; memcpy(&v, p, 2); return pct_bf16_to_float(v); }
    }
}

static void store(char *p, int type, double v)
{
    switch (type) {
    case PCT_BLAS_R_32F: { float f = (float)v; memcpy(p, &f, 4); break; }
    case PCT_BLAS_R_64F: memcpy(p, &v, 8); break;
    case PCT_BLAS_R_16F: { pct_half h = pct_float_to_half((float)v); memcpy(p, &h, 2); break; }
    default: { pct_bfloat16 h = pct_float_to_bf16((float)v); memcpy(p, &h, 2); break; }
    }
}

/* The host view of a batch of column-major rows x cols matrices (leading dimension ld) starting at ptr. */
static char *view(const void *ptr, int type, int rows, int cols, int ld, long long stride, int batch)
{
    const long long last = (long long)(batch - 1) * stride + (long long)(cols - 1) * ld + rows;
    return pct_cuda_sim_host_view(ptr, (size_t)last * (size_t)itemsize_of(type));
}

static int sim_gemm(void *handle, int transa, int transb, int m, int n, int k, const void *alpha_p,
                    const void *a, int a_type, int lda, long long stride_a,
                    const void *b, int b_type, int ldb, long long stride_b, const void *beta_p,
                    void *c, int c_type, int ldc, long long stride_c, int batch, int compute_type)
{
    (void)handle;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || !itemsize_of(a_type) || a_type != b_type || a_type != c_type ||
        lda < (transa == PCT_BLAS_OP_N ? m : k) || ldb < (transb == PCT_BLAS_OP_N ? k : n) || ldc < m || lda < 1 ||
        ldb < 1 || ldc < 1)
        return SIM_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0 || batch == 0) return 0;
    const bool dbl = compute_type == PCT_BLAS_COMPUTE_64F, tf32 = compute_type == PCT_BLAS_COMPUTE_32F_FAST_TF32;
    if (dbl != (a_type == PCT_BLAS_R_64F)) return SIM_STATUS_INVALID_VALUE;
    const double alpha = dbl ? *(const double *)alpha_p : *(const float *)alpha_p;
    const double beta = dbl ? *(const double *)beta_p : *(const float *)beta_p;
    const int isz = itemsize_of(a_type);
    const char *ha = k ? view(a, a_type, transa == PCT_BLAS_OP_N ? m : k, transa == PCT_BLAS_OP_N ? k : m, lda,
                              stride_a, batch) : NULL;
    const char *hb = k ? view(b, b_type, transb == PCT_BLAS_OP_N ? k : n, transb == PCT_BLAS_OP_N ? n : k, ldb,
                              stride_b, batch) : NULL;
    char *hc = view(c, c_type, m, n, ldc, stride_c, batch);
    if ((k && (!ha || !hb)) || !hc) return SIM_STATUS_EXECUTION_FAILED; /* not device memory: an illegal address */
    for (int t = 0; t < batch; t++) {
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                double acc = 0;
                float facc = 0;
                for (int l = 0; l < k; l++) {
                    const long long ai = transa == PCT_BLAS_OP_N ? i + (long long)l * lda : l + (long long)i * lda;
                    const long long bi = transb == PCT_BLAS_OP_N ? l + (long long)j * ldb : j + (long long)l * ldb;
                    const double x = load(ha + (t * stride_a + ai) * isz, a_type, tf32);
                    const double y = load(hb + (t * stride_b + bi) * isz, b_type, tf32);
                    if (dbl) acc += x * y;
                    else facc += (float)x * (float)y; /* the 32F compute types accumulate in float */
                }
                char *out = hc + (t * stride_c + i + (long long)j * ldc) * isz;
                double r = alpha * (dbl ? acc : (double)facc);
                if (beta != 0) r += beta * load(out, c_type, false); /* beta 0: C is not read (NaN stays out) */
                store(out, c_type, dbl ? r : (double)(float)r);
            }
        }
    }
    return 0;
}

static const char *sim_status_string(int status)
{
    switch (status) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case PCT_BLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case SIM_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case SIM_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case SIM_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const pct_cuda_blas pct_cuda_blas_sim = {
    .name = "simulated",
    .create = sim_create,
    .set_stream = sim_set_stream,
    .set_math_mode = sim_set_math_mode,
    .gemm = sim_gemm,
    .status_string = sim_status_string,
};
