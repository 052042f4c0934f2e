/* blas.c: matrix products, contractions and norms (the kernels of ops_linalg.def).
 *
 * Layers, bottom up:
 *   1. GEMM core (GIL-free): gemm_run() computes C = alpha * A @ B + beta * C over a
 *      batch of strided matrices. float32/float64 go to OpenBLAS with transposes read
 *      from the strides (Note [GEMM layouts]); float16/bfloat16 are widened to float32
 *      around sgemm; integral dtypes (and everything in a build without OpenBLAS, and
 *      tiny products) use a blocked loop (Note [Blocked fallback GEMM]). Batches of
 *      small matrices run in parallel over the batch (Note [Batch parallelism]).
 *   2. Tensor helpers: views, reshape-or-copy, out= resizing, a strided reduction
 *      engine (sums and norms), elementwise multiply through the loop machine.
 *   3. Ops, each following the decomposition and the checks of its ATen counterpart
 *      (LinearAlgebra.cpp, Blas.cpp, Linear.cpp) so that errors read the same:
 *      dot, mv/addmv, mm/addmm, bmm/baddbmm, matmul, trace, outer, inner, tensordot,
 *      kron, einsum, linalg.vector_norm / matrix_norm / norm.
 *   4. The pct_cpu_* entry points named in ops_linalg.def.
 */
#include "blas.h"
#include "../iter.h"
#include "../error.h"
#include "../out.h"
#include "pointwise.h"
#include "gemm_lowp.h"
#include "gemm_f32.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef PCT_HAVE_OPENBLAS
#include <cblas.h>
#endif

/* ------------------------------------------------------------------------------------ */
/* names used in torch's messages                                                        */
/* ------------------------------------------------------------------------------------ */


/* OpenMP pragmas that vanish (without -Wunknown-pragmas noise) in builds without OpenMP */
#ifdef _OPENMP
#define PCT_OMP(x) _Pragma(#x)
#else
#define PCT_OMP(x)
#endif

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
/* the shape of a 0-d tensor (never NULL: memcpy of 0 bytes from NULL is UB) */
static const int64_t no_dims[1] = {0};
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static int num_threads(void)
{
#ifdef _OPENMP
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    return 1;
#endif
}

/* ------------------------------------------------------------------------------------ */
/* OpenBLAS set-up                                                                       */
/* ------------------------------------------------------------------------------------ */

/* Note [OpenBLAS core type]
 * OpenBLAS built with DYNAMIC_ARCH (Debian's packages are) picks its kernels from the
 * CPU model once, at load. A version older than the CPU (Debian 12 ships 0.3.21, which
 * does not know AMD Zen 5) falls back to the Haswell (AVX2) kernels even when the CPU
 * has AVX-512, which halves sgemm throughput. When the library chose an AVX2 core, the
 * CPU and the OS support AVX-512 F/CD/BW/DQ/VL, and the user has not chosen a core
 * through OPENBLAS_CORETYPE, we re-run OpenBLAS's own core selection with
 * OPENBLAS_CORETYPE=SkylakeX: the same thing setting that variable before start-up
 * does. Builds lacking the dynamic-arch entry points, builds with PCT_NO_AVX512 (for
 * valgrind), and PYCTORCH_OPENBLAS_CORETYPE=keep leave OpenBLAS as it is. */
#if defined(PCT_HAVE_OPENBLAS) && !defined(PCT_NO_AVX512) && defined(__x86_64__) && defined(__GNUC__)
#define PCT_BLAS_RETUNE 1
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));
#endif

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_init_once(void)
{
#ifdef PCT_BLAS_RETUNE
    const char *keep = getenv("PYCTORCH_OPENBLAS_CORETYPE");
    if (getenv("OPENBLAS_CORETYPE") || (keep && strcmp(keep, "keep") == 0)) return;
    if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) return;
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
          __builtin_cpu_supports("avx512vl")))
        return;
    const char *core = openblas_get_corename();
    if (!core || (strcasecmp(core, "haswell") != 0 && strcasecmp(core, "zen") != 0)) return;
    if (setenv("OPENBLAS_CORETYPE", "SkylakeX", 1) != 0) return;
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
#endif
}

void pct_blas_init(void) { pthread_once(&blas_once, blas_init_once); }

/* ------------------------------------------------------------------------------------ */
/* 1. GEMM core                                                                          */
/* ------------------------------------------------------------------------------------ */

/* alpha / beta as the kernels use them: torch converts the Scalar to the op's dtype
 * (integral dtypes truncate: beta=0.5 on int64 is 0). `zero` means "ignore C". */
typedef struct coef {
    double d;
    int64_t i;
    bool zero;
} coef;

static int64_t trunc_to_dtype(int64_t v, int dtype)
{
    switch (dtype) {
    case PCT_BOOL: return v != 0;
    case PCT_UINT8: return (uint8_t)v;
    case PCT_INT8: return (int8_t)v;
    case PCT_INT16: return (int16_t)v;
    case PCT_INT32: return (int32_t)v;
    default: return v;
    }
}

static coef coef_from_double(double v, int dtype)
{
    coef c;
    c.d = v;
    c.i = isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0;
    c.i = trunc_to_dtype(c.i, dtype);
    c.zero = pct_dtype_is_floating(dtype) ? v == 0.0 : c.i == 0;
    return c;
}

static coef coef_from_scalar(const pct_scalar *s, int dtype)
{
    if (s->kind == PCT_SCALAR_FLOAT) return coef_from_double(s->d, dtype);
    coef c;
    c.d = (double)s->i;
    c.i = trunc_to_dtype(s->i, dtype);
    c.zero = pct_dtype_is_floating(dtype) ? c.d == 0.0 : c.i == 0;
    return c;
}

/* torch's "beta.toComplexDouble() == 0": the Scalar itself, before conversion */
static bool scalar_is_zero(const pct_scalar *s) { return s->kind == PCT_SCALAR_FLOAT ? s->d == 0.0 : s->i == 0; }

/* Note [Blocked fallback GEMM]
 * Integral dtypes, products too small to be worth a BLAS call, and every dtype in a
 * build without OpenBLAS go through one blocked loop: B is packed once into a
 * contiguous k x n block of the accumulator type, then tiles of GEMM_IB rows by
 * GEMM_JB columns accumulate over GEMM_KB-deep slices of B, so a slice stays in cache
 * while the tile's rows use it and the innermost loop is a contiguous axpy the
 * compiler vectorizes. Integers accumulate in uint64_t: wrap-around arithmetic is
 * exact modulo 2^64, so truncating to the dtype gives what torch's same-width
 * accumulation gives, without signed-overflow UB. float16/bfloat16 accumulate in
 * float, float32 in float and float64 in double, as BLAS does. */
#define GEMM_IB 16
#define GEMM_JB 256
#define GEMM_KB 256
/* m * n * k at or below which a float product skips BLAS (call overhead dominates) */
#define GEMM_SMALL 2048
/* m * n * k above which one product is split across threads (OpenBLAS's own
 * threshold for threading), and rows * cols above which a gemv is */
#define GEMM_SPLIT_MIN ((int64_t)1 << 18)
#define GEMV_SPLIT_MIN ((int64_t)1 << 17)

#define PCT_INT_LOAD(x) ((uint64_t)(int64_t)(x))
/* packed B blocks up to this many bytes live on the stack */
#define GEMM_STACK_PACK 4096
/* Note: a parallel construct with a false if() clause still builds a one-thread team
 * in libgomp (a microsecond or more), so serial paths never enter one. */
#define PCT_GEMM_DEFINE(N, T, ACC, LOAD, STORE)                                                      \
    static void naive_tile_##N(int64_t t, int64_t m, int64_t n, int64_t k, ACC alpha, ACC beta,       \
                               bool beta_zero, const T *a, int64_t ars, int64_t acs, const ACC *bp,   \
                               int64_t bprs, T *c, int64_t crs, int64_t ccs)                          \
    {                                                                                                 \
        ACC acc[GEMM_IB * GEMM_JB];                                                                   \
        int64_t i0 = t * GEMM_IB, i1 = i0 + GEMM_IB < m ? i0 + GEMM_IB : m;                           \
        for (int64_t j0 = 0; j0 < n; j0 += GEMM_JB) {                                                 \
            int64_t jn = n - j0 < GEMM_JB ? n - j0 : GEMM_JB;                                         \
            for (int64_t i = i0; i < i1; i++)                                                         \
                for (int64_t j = 0; j < jn; j++) acc[(i - i0) * GEMM_JB + j] = 0;                     \
            for (int64_t p0 = 0; p0 < k; p0 += GEMM_KB) {                                             \
                int64_t p1 = p0 + GEMM_KB < k ? p0 + GEMM_KB : k;                                     \
                for (int64_t i = i0; i < i1; i++) {                                                   \
                    ACC *restrict ar = acc + (i - i0) * GEMM_JB;                                      \
                    const T *arow = a + i * ars;                                                      \
                    for (int64_t p = p0; p < p1; p++) {                                               \
                        const ACC av = LOAD(arow[p * acs]);                                           \
                        const ACC *restrict br = bp + p * bprs + j0;                                  \
                        for (int64_t j = 0; j < jn; j++) ar[j] += av * br[j];                         \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
            for (int64_t i = i0; i < i1; i++) {                                                       \
                const ACC *ar = acc + (i - i0) * GEMM_JB;                                             \
                T *crow = c + i * crs + j0 * ccs;                                                     \
                if (beta_zero)                                                                        \
                    for (int64_t j = 0; j < jn; j++) crow[j * ccs] = STORE(alpha * ar[j]);            \
                else                                                                                  \
                    for (int64_t j = 0; j < jn; j++)                                                  \
                        crow[j * ccs] = STORE(alpha * ar[j] + beta * LOAD(crow[j * ccs]));            \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static int naive_gemm_##N(int64_t m, int64_t n, int64_t k, ACC alpha, ACC beta, bool beta_zero,   \
                              const char *a_, int64_t ars, int64_t acs, const char *b_, int64_t brs,  \
                              int64_t bcs, char *c_, int64_t crs, int64_t ccs, bool parallel)         \
    {                                                                                                 \
        const T *a = (const T *)a_;                                                                   \
        const T *b = (const T *)b_;                                                                   \
        T *c = (T *)c_;                                                                               \
        ACC stack_pack[GEMM_STACK_PACK / sizeof(ACC)];                                                \
        const size_t pack_bytes = sizeof(ACC) * (size_t)k * (size_t)n;                                \
        const bool direct = sizeof(ACC) == sizeof(T) && (ACC)0.5 != 0 && (T)0.5 != 0 && bcs == 1;       \
        ACC *bp = direct ? (ACC *)(uintptr_t)b                                                         \
                         : pack_bytes <= sizeof stack_pack ? stack_pack : malloc(pack_bytes);          \
        const int64_t bprs = direct ? brs : n;                                                         \
        if (!bp) return -1;                                                                           \
        for (int64_t p = 0; !direct && p < k; p++) {                                                  \
            ACC *dst = bp + p * n;                                                                    \
            const T *src = b + p * brs;                                                               \
            if (bcs == 1)                                                                             \
                for (int64_t j = 0; j < n; j++) dst[j] = LOAD(src[j]);                                \
            else                                                                                      \
                for (int64_t j = 0; j < n; j++) dst[j] = LOAD(src[j * bcs]);                          \
        }                                                                                             \
        const int64_t ntiles = (m + GEMM_IB - 1) / GEMM_IB;                                           \
        if (parallel && ntiles > 1 && m * n * k >= 65536 && num_threads() > 1) {                      \
            PCT_OMP(omp parallel for schedule(static))                                              \
            for (int64_t t = 0; t < ntiles; t++)                                                      \
                naive_tile_##N(t, m, n, k, alpha, beta, beta_zero, a, ars, acs, bp, bprs, c, crs, ccs); \
        } else {                                                                                      \
            for (int64_t t = 0; t < ntiles; t++)                                                      \
                naive_tile_##N(t, m, n, k, alpha, beta, beta_zero, a, ars, acs, bp, bprs, c, crs, ccs); \
        }                                                                                             \
        if (!direct && bp != stack_pack) free(bp);                                                    \
        return 0;                                                                                     \
    }

PCT_GEMM_DEFINE(Byte, uint8_t, uint64_t, PCT_INT_LOAD, (uint8_t))
PCT_GEMM_DEFINE(Char, int8_t, uint64_t, PCT_INT_LOAD, (int8_t)(int64_t))
PCT_GEMM_DEFINE(Short, int16_t, uint64_t, PCT_INT_LOAD, (int16_t)(int64_t))
PCT_GEMM_DEFINE(Int, int32_t, uint64_t, PCT_INT_LOAD, (int32_t)(int64_t))
PCT_GEMM_DEFINE(Long, int64_t, uint64_t, PCT_INT_LOAD, (int64_t))
PCT_GEMM_DEFINE(Half, pct_half, float, pct_half_to_float, pct_float_to_half)
PCT_GEMM_DEFINE(BFloat16, pct_bfloat16, float, pct_bf16_to_float, pct_float_to_bf16)
PCT_GEMM_DEFINE(Float, float, float, (float), (float))
PCT_GEMM_DEFINE(Double, double, double, (double), (double))

typedef struct gemm_one_args {
    int dtype;
    int64_t m, n, k;
    coef alpha, beta;
    const char *a, *b;
    char *c;
    int64_t ars, acs, brs, bcs, crs, ccs; /* element strides */
} gemm_one_args;

static int naive_gemm(const gemm_one_args *g, bool parallel)
{
    uint64_t ai = (uint64_t)g->alpha.i, bi = (uint64_t)g->beta.i;
    bool bz = g->beta.zero;
#define PCT_NAIVE_ARGS g->m, g->n, g->k
#define PCT_NAIVE_PTRS g->a, g->ars, g->acs, g->b, g->brs, g->bcs, g->c, g->crs, g->ccs, parallel
    switch (g->dtype) {
    case PCT_UINT8: return naive_gemm_Byte(PCT_NAIVE_ARGS, ai, bi, bz, PCT_NAIVE_PTRS);
    case PCT_INT8: return naive_gemm_Char(PCT_NAIVE_ARGS, ai, bi, bz, PCT_NAIVE_PTRS);
    case PCT_INT16: return naive_gemm_Short(PCT_NAIVE_ARGS, ai, bi, bz, PCT_NAIVE_PTRS);
    case PCT_INT32: return naive_gemm_Int(PCT_NAIVE_ARGS, ai, bi, bz, PCT_NAIVE_PTRS);
    case PCT_INT64: return naive_gemm_Long(PCT_NAIVE_ARGS, ai, bi, bz, PCT_NAIVE_PTRS);
    case PCT_FLOAT16: return naive_gemm_Half(PCT_NAIVE_ARGS, (float)g->alpha.d, (float)g->beta.d, bz, PCT_NAIVE_PTRS);
    case PCT_BFLOAT16: return naive_gemm_BFloat16(PCT_NAIVE_ARGS, (float)g->alpha.d, (float)g->beta.d, bz, PCT_NAIVE_PTRS);
    case PCT_FLOAT32: return naive_gemm_Float(PCT_NAIVE_ARGS, (float)g->alpha.d, (float)g->beta.d, bz, PCT_NAIVE_PTRS);
    case PCT_FLOAT64: return naive_gemm_Double(PCT_NAIVE_ARGS, g->alpha.d, g->beta.d, bz, PCT_NAIVE_PTRS);
    default: return -1;
    }
#undef PCT_NAIVE_ARGS
#undef PCT_NAIVE_PTRS
}

#ifdef PCT_HAVE_OPENBLAS
/* Note [GEMM layouts]
 * A rows x cols matrix with element strides (rs, cs) is handed to row-major BLAS as is
 * when its rows are contiguous (cs == 1, ld = rs >= cols) and as the transpose of a
 * row-major matrix when its columns are (rs == 1, ld = cs >= rows); a dimension of size
 * 1 may have any stride. Anything else (broadcast stride 0, a sliced inner dimension)
 * is packed into a contiguous buffer first. The output decides the orientation: a
 * column-major C is computed as C^T = B^T A^T, so nothing is ever transposed by copy
 * when any orientation fits. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int64_t *ld)
{
    if ((cols == 1 || cs == 1) && (rows == 1 || rs >= imax(cols, 1))) {
        *trans = false;
        *ld = rows == 1 ? imax(cols, 1) : rs;
        return *ld <= INT32_MAX;
    }
    if ((rows == 1 || rs == 1) && (cols == 1 || cs >= imax(rows, 1))) {
        *trans = true;
        *ld = cols == 1 ? imax(rows, 1) : cs;
        return *ld <= INT32_MAX;
    }
    return false;
}

static void pack_matrix(void *dst, const char *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int itemsize)
{
    for (int64_t i = 0; i < rows; i++) {
        const char *s = src + i * rs * itemsize;
        char *d = (char *)dst + i * cols * itemsize;
        if (cs == 1) { memcpy(d, s, (size_t)(cols * itemsize)); continue; }
        if (itemsize == 4)
            for (int64_t j = 0; j < cols; j++) ((float *)d)[j] = *(const float *)(s + j * cs * 4);
        else
            for (int64_t j = 0; j < cols; j++) ((double *)d)[j] = *(const double *)(s + j * cs * 8);
    }
}

static void gemv_call(bool dbl, bool trans, int64_t rows, int64_t cols, double alpha, const char *mat, int64_t ld,
                      const char *x, int64_t incx, double beta, char *y, int64_t incy)
{
    enum CBLAS_TRANSPOSE tr = trans ? CblasTrans : CblasNoTrans;
    if (dbl)
        cblas_dgemv(CblasRowMajor, tr, (int)rows, (int)cols, alpha, (const double *)mat, (int)ld, (const double *)x,
                    (int)incx, beta, (double *)y, (int)incy);
    else
        cblas_sgemv(CblasRowMajor, tr, (int)rows, (int)cols, (float)alpha, (const float *)mat, (int)ld,
                    (const float *)x, (int)incx, (float)beta, (float *)y, (int)incy);
}

/* y = op(M) x through gemv. M is rows x cols row-major with leading dimension ld;
 * trans: y[cols] = M^T x[rows], else y[rows] = M x[cols]. Vector strides in elements.
 * With nt > 1 threads, y is split into blocks, one single-threaded gemv each. */
static int blas_gemv(bool dbl, bool trans, int64_t rows, int64_t cols, double alpha, const char *mat, int64_t ld,
                     const char *x, int64_t incx, double beta, bool beta_zero, char *y, int64_t incy, int nt)
{
    const int isz = dbl ? 8 : 4;
    const int64_t xlen = trans ? rows : cols, ylen = trans ? cols : rows;
    void *xbuf = NULL;
    if (xlen == 1) incx = 1;
    if (ylen == 1) incy = 1;
    if (incx == 0 || incx > INT32_MAX) {
        if (!(xbuf = malloc((size_t)(xlen * isz)))) return -1;
        pack_matrix(xbuf, x, xlen, 1, incx, 1, isz);
        x = xbuf;
        incx = 1;
    }
    if (beta_zero) { /* beta == 0 must ignore y (NaN included), whatever scal does */
        for (int64_t i = 0; i < ylen; i++) {
            if (dbl) *(double *)(y + i * incy * 8) = 0.0;
            else *(float *)(y + i * incy * 4) = 0.0f;
        }
        beta = 0.0;
    }
    if (nt > 1 && rows * cols >= GEMV_SPLIT_MIN && ylen >= 64) {
PCT_OMP(omp parallel num_threads(nt))
        {
#ifdef _OPENMP
            const int id = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
            const int id = 0, cnt = 1;
#endif
            const int64_t chunk = ((ylen + cnt - 1) / cnt + 15) & ~(int64_t)15;
            const int64_t y0 = id * chunk, y1 = imin(ylen, y0 + chunk);
            if (y0 < y1) {
                char *yb = y + y0 * incy * isz;
                if (trans) gemv_call(dbl, true, rows, y1 - y0, alpha, mat + y0 * isz, ld, x, incx, beta, yb, incy);
                else gemv_call(dbl, false, y1 - y0, cols, alpha, mat + y0 * ld * isz, ld, x, incx, beta, yb, incy);
            }
        }
    } else {
        /* a small gemv is not worth waking threads for, but OpenBLAS threads gemv from
         * 9216 elements: cap this thread's OpenMP ICV (it is per thread) for the call */
#ifdef _OPENMP
        const int saved = omp_in_parallel() ? 1 : omp_get_max_threads();
        if (saved > 1) omp_set_num_threads(1);
#endif
        gemv_call(dbl, trans, rows, cols, alpha, mat, ld, x, incx, beta, y, incy);
#ifdef _OPENMP
        if (saved > 1) omp_set_num_threads(saved);
#endif
    }
    free(xbuf);
    return 0;
}

/* Note [GEMM threading]
 * One product big enough for threads is split by the host along the larger of M and
 * N into one block per OpenMP thread, each a single-threaded BLAS call (OpenBLAS runs
 * single-threaded inside an active OpenMP region). Compared with OpenBLAS's own
 * threading, which synchronises its threads on shared packed panels, this measured
 * 10-20% faster for 128..512-sized products and much steadier when the cores are
 * shared with other processes; each block packs its own panel of the other operand,
 * which costs about 2/M of the work. */
static void gemm_call(bool dbl, bool at, bool bt, int64_t m, int64_t n, int64_t k, double alpha, const char *a,
                      int64_t lda, const char *b, int64_t ldb, double beta, char *c, int64_t ldc)
{
    if (dbl)
        cblas_dgemm(CblasRowMajor, at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, alpha, (const double *)a, (int)lda, (const double *)b, (int)ldb, beta, (double *)c, (int)ldc);
    else
        cblas_sgemm(CblasRowMajor, at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, (float)alpha, (const float *)a, (int)lda, (const float *)b, (int)ldb, (float)beta,
                    (float *)c, (int)ldc);
}

static void gemm_split(bool dbl, bool at, bool bt, int64_t m, int64_t n, int64_t k, double alpha, const char *a,
                       int64_t lda, const char *b, int64_t ldb, double beta, char *c, int64_t ldc, int nt)
{
    const int isz = dbl ? 8 : 4;
    if (nt <= 1 || m * n * k <= GEMM_SPLIT_MIN || imax(m, n) < 32) {
        gemm_call(dbl, at, bt, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    const bool by_rows = m >= n;
PCT_OMP(omp parallel num_threads(nt))
    {
#ifdef _OPENMP
        const int id = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
        const int id = 0, cnt = 1;
#endif
        const int64_t len = by_rows ? m : n;
        const int64_t chunk = ((len + cnt - 1) / cnt + 15) & ~(int64_t)15;
        const int64_t s0 = id * chunk, s1 = imin(len, s0 + chunk);
        if (s0 < s1) {
            if (by_rows) /* rows s0..s1 of A and C */
                gemm_call(dbl, at, bt, s1 - s0, n, k, alpha, a + (at ? s0 : s0 * lda) * isz, lda, b, ldb, beta,
                          c + s0 * ldc * isz, ldc);
            else         /* columns s0..s1 of B and C */
                gemm_call(dbl, at, bt, m, s1 - s0, k, alpha, a, lda, b + (bt ? s0 * ldb : s0) * isz, ldb, beta,
                          c + s0 * isz, ldc);
        }
    }
}

/* float32 / float64 through BLAS; -1 when out of memory. */
static int blas_gemm(const gemm_one_args *g, int nt)
{
    const bool dbl = g->dtype == PCT_FLOAT64;
    const int isz = dbl ? 8 : 4;
    const double alpha = g->alpha.d, beta = g->beta.zero ? 0.0 : g->beta.d;
    int64_t m = g->m, n = g->n, k = g->k;
    const char *a = g->a, *b = g->b;
    int64_t ars = g->ars, acs = g->acs, brs = g->brs, bcs = g->bcs;
    void *abuf = NULL, *bbuf = NULL, *cbuf = NULL;
    int rc = -1;
    bool ct, at, bt;
    int64_t ldc, lda, ldb;

    /* vector cases: gemv is several times faster than gemm with a dimension of 1 */
    if (n == 1 && (m == 1 || (g->crs != 0 && g->crs <= INT32_MAX))) {
        if (m == 1) { /* dot */
            if (k > 1 && (acs == 0 || brs == 0 || acs > INT32_MAX || brs > INT32_MAX)) return naive_gemm(g, false);
            double r = dbl ? cblas_ddot((int)k, (const double *)a, k == 1 ? 1 : (int)acs, (const double *)b, k == 1 ? 1 : (int)brs)
                           : (double)cblas_sdot((int)k, (const float *)a, k == 1 ? 1 : (int)acs, (const float *)b, k == 1 ? 1 : (int)brs);
            if (dbl) *(double *)g->c = alpha * r + (g->beta.zero ? 0.0 : beta * *(double *)g->c);
            else *(float *)g->c = (float)alpha * (float)r + (g->beta.zero ? 0.0f : (float)beta * *(float *)g->c);
            return 0;
        }
        if (!blas_layout(m, k, ars, acs, &at, &lda)) {
            if (!(abuf = malloc((size_t)(m * k * isz)))) return -1;
            pack_matrix(abuf, a, m, k, ars, acs, isz);
            a = abuf; at = false; lda = imax(k, 1);
        }
        rc = at ? blas_gemv(dbl, true, k, m, alpha, a, lda, b, brs, beta, g->beta.zero, g->c, g->crs, nt)
                : blas_gemv(dbl, false, m, k, alpha, a, lda, b, brs, beta, g->beta.zero, g->c, g->crs, nt);
        free(abuf);
        return rc;
    }
    if (m == 1 && g->ccs != 0 && g->ccs <= INT32_MAX) {
        if (!blas_layout(k, n, brs, bcs, &bt, &ldb)) {
            if (!(bbuf = malloc((size_t)(k * n * isz)))) return -1;
            pack_matrix(bbuf, b, k, n, brs, bcs, isz);
            b = bbuf; bt = false; ldb = imax(n, 1);
        }
        /* y[n] = B^T x: B stored row-major (k x n) is Trans; stored transposed (n x k) is NoTrans */
        rc = bt ? blas_gemv(dbl, false, n, k, alpha, b, ldb, a, acs, beta, g->beta.zero, g->c, g->ccs, nt)
                : blas_gemv(dbl, true, k, n, alpha, b, ldb, a, acs, beta, g->beta.zero, g->c, g->ccs, nt);
        free(bbuf);
        return rc;
    }

    if (!dbl && pct_gemm_f32_available()) { /* Note [float32 GEMM] in gemm_f32.c */
        const float fa = (float)alpha, fb = (float)beta;
        const float *fa_ = (const float *)a, *fb_ = (const float *)b;
        /* a column-major C is computed as C^T = B^T A^T so that tiles store rows */
        rc = g->ccs != 1 && g->crs == 1
                 ? pct_gemm_f32_native(n, m, k, fa, fb, g->beta.zero, fb_, bcs, brs, fa_, acs, ars, (float *)g->c,
                                       g->ccs, g->crs, nt)
                 : pct_gemm_f32_native(m, n, k, fa, fb, g->beta.zero, fa_, ars, acs, fb_, brs, bcs, (float *)g->c,
                                       g->crs, g->ccs, nt);
        if (rc <= 0) return rc;
    }

    /* orient by C: a column-major C is computed as C^T = B^T A^T */
    char *cc = g->c;
    if (!blas_layout(m, n, g->crs, g->ccs, &ct, &ldc)) {
        if (!(cbuf = malloc((size_t)(m * n * isz)))) goto done;
        if (!g->beta.zero) pack_matrix(cbuf, g->c, m, n, g->crs, g->ccs, isz);
        cc = cbuf;
        ct = false;
        ldc = imax(n, 1);
    }
    if (ct) {
        const char *tp = a; a = b; b = tp;
        int64_t t0 = m; m = n; n = t0;
        int64_t s0 = ars, s1 = acs;
        ars = bcs; acs = brs;
        brs = s1; bcs = s0;
    }
    if (!blas_layout(m, k, ars, acs, &at, &lda)) {
        if (!(abuf = malloc((size_t)(m * k * isz)))) goto done;
        pack_matrix(abuf, a, m, k, ars, acs, isz);
        a = abuf; at = false; lda = imax(k, 1);
    }
    if (!blas_layout(k, n, brs, bcs, &bt, &ldb)) {
        if (!(bbuf = malloc((size_t)(k * n * isz)))) goto done;
        pack_matrix(bbuf, b, k, n, brs, bcs, isz);
        b = bbuf; bt = false; ldb = imax(n, 1);
    }
    gemm_split(dbl, at, bt, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc, nt);
    if (cbuf) { /* scatter the contiguous result into the strided C */
        const int64_t om = g->m, on = g->n;
        for (int64_t i = 0; i < om; i++)
            for (int64_t j = 0; j < on; j++) {
                if (dbl) *(double *)(g->c + (i * g->crs + j * g->ccs) * 8) = ((double *)cbuf)[i * on + j];
                else *(float *)(g->c + (i * g->crs + j * g->ccs) * 4) = ((float *)cbuf)[i * on + j];
            }
    }
    rc = 0;
done:
    free(abuf);
    free(bbuf);
    free(cbuf);
    return rc;
}

/* A float16/bfloat16 matrix widened to a dense float32 copy, in whichever orientation
 * reads the source contiguously; *ors / *ocs are the copy's strides as a rows x cols matrix. */
static void widen_lowp(float *dst, const char *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int dtype,
                       int nt, int64_t *ors, int64_t *ocs)
{
    if (cs != 1 && rs == 1) { /* column-major: convert its transpose */
        pct_lowp_to_f32(dst, (const uint16_t *)src, cols, rows, cs, rs, dtype, nt);
        *ors = 1;
        *ocs = imax(rows, 1);
    } else {
        pct_lowp_to_f32(dst, (const uint16_t *)src, rows, cols, rs, cs, dtype, nt);
        *ors = imax(cols, 1);
        *ocs = 1;
    }
}

/* float16 / bfloat16: bfloat16 through the AVX512-BF16 kernel where the CPU has it (Note
 * [bfloat16 GEMM] in gemm_lowp.c); otherwise widen to float32, sgemm, round once. */
static int blas_gemm_reduced(const gemm_one_args *g, int nt)
{
    int64_t m = g->m, n = g->n, k = g->k;
    if (g->dtype == PCT_BFLOAT16) {
        int r = pct_gemm_bf16_native(m, n, k, (float)g->alpha.d, g->beta.zero ? 0.0f : (float)g->beta.d, g->beta.zero,
                                     (const uint16_t *)g->a, g->ars, g->acs, (const uint16_t *)g->b, g->brs, g->bcs,
                                     (uint16_t *)g->c, g->crs, g->ccs, nt);
        if (r <= 0) return r;
    }
    float *a = malloc(sizeof(float) * (size_t)(m * k));
    float *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n));
    int rc = -1;
    if (!a || !b || !c) goto done;
    int64_t ars, acs, brs, bcs;
    widen_lowp(a, g->a, m, k, g->ars, g->acs, g->dtype, nt, &ars, &acs);
    widen_lowp(b, g->b, k, n, g->brs, g->bcs, g->dtype, nt, &brs, &bcs);
    if (!g->beta.zero) pct_lowp_to_f32(c, (const uint16_t *)g->c, m, n, g->crs, g->ccs, g->dtype, nt);
    gemm_one_args f = {PCT_FLOAT32, m, n, k, g->alpha, g->beta, (const char *)a, (const char *)b, (char *)c,
                       ars, acs, brs, bcs, n, 1};
    if (blas_gemm(&f, nt) < 0) goto done;
    pct_f32_to_lowp((uint16_t *)g->c, c, m, n, g->crs, g->ccs, g->dtype, nt);
    rc = 0;
done:
    free(a);
    free(b);
    free(c);
    return rc;
}
#endif /* PCT_HAVE_OPENBLAS */

/* One matrix, k > 0, m > 0, n > 0. `parallel`: the product may use threads itself. */
static int gemm_one(const gemm_one_args *g, bool parallel)
{
#ifdef PCT_HAVE_OPENBLAS
    bool dims_ok = g->m <= INT32_MAX && g->n <= INT32_MAX && g->k <= INT32_MAX;
    if (dims_ok && g->m * g->n * g->k > GEMM_SMALL) {
        const int nt = parallel ? num_threads() : 1;
        if (g->dtype == PCT_FLOAT32 || g->dtype == PCT_FLOAT64) return blas_gemm(g, nt);
        if (g->dtype == PCT_FLOAT16 || g->dtype == PCT_BFLOAT16) return blas_gemm_reduced(g, nt);
    }
#endif
    return naive_gemm(g, parallel);
}

/* A batched problem: batch dimensions of any number, each operand with its own batch
 * strides (0 for a broadcast operand). Strides in elements. */
typedef struct gemm_desc {
    int dtype;
    int nb;
    int64_t bsize[PCT_MAX_DIMS];
    int64_t a_bs[PCT_MAX_DIMS], b_bs[PCT_MAX_DIMS], c_bs[PCT_MAX_DIMS];
    int64_t m, n, k;
    coef alpha, beta;
    const char *a, *b;
    char *c;
    int64_t ars, acs, brs, bcs, crs, ccs;
} gemm_desc;

static int64_t gemm_batch_count(const gemm_desc *g)
{
    int64_t b = 1;
    for (int d = 0; d < g->nb; d++) b *= g->bsize[d];
    return b;
}

/* C = beta * C (or 0 when beta is zero) for the k == 0 case. */
static void gemm_scale_c(const gemm_one_args *g)
{
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            char *p = g->c + (i * g->crs + j * g->ccs) * pct_dtype_itemsize[g->dtype];
            if (g->beta.zero) {
                memset(p, 0, (size_t)pct_dtype_itemsize[g->dtype]);
            } else if (pct_dtype_is_floating(g->dtype)) {
                pct_store_double(p, g->dtype, pct_load_as_double(p, g->dtype) * g->beta.d);
            } else {
                uint64_t v = (uint64_t)pct_load_as_int64(p, g->dtype) * (uint64_t)g->beta.i;
                pct_store_int64(p, g->dtype, (int64_t)v);
            }
        }
}

/* Note [Batch parallelism]
 * A batch of small products runs one product per thread (OpenBLAS called from inside
 * an OpenMP region stays single-threaded), which beats threading each small product;
 * a batch of large products runs one after another with BLAS threading each. */
#define GEMM_BATCH_PARALLEL_MAX ((int64_t)1 << 26)
#define GEMM_BATCH_PARALLEL_MIN ((int64_t)1 << 16)

static int gemm_item(const gemm_desc *g, int64_t t, bool inner_parallel)
{
    const int isz = pct_dtype_itemsize[g->dtype];
    int64_t rem = t, ao = 0, bo = 0, co = 0;
    for (int d = g->nb - 1; d >= 0; d--) {
        int64_t idx = rem % g->bsize[d];
        rem /= g->bsize[d];
        ao += idx * g->a_bs[d];
        bo += idx * g->b_bs[d];
        co += idx * g->c_bs[d];
    }
    gemm_one_args one = {g->dtype, g->m, g->n, g->k, g->alpha, g->beta,
                         g->a + ao * isz, g->b + bo * isz, g->c + co * isz,
                         g->ars, g->acs, g->brs, g->bcs, g->crs, g->ccs};
    if (g->k == 0) {
        gemm_scale_c(&one);
        return 0;
    }
    return gemm_one(&one, inner_parallel);
}

static int gemm_run(const gemm_desc *g)
{
    const int64_t batch = gemm_batch_count(g);
    if (batch == 0 || g->m == 0 || g->n == 0) return 0;
    pct_blas_init();
    const int64_t work = g->m * g->n * imax(g->k, 1);
    int err = 0;
    if (batch > 1 && work <= GEMM_BATCH_PARALLEL_MAX && work * batch >= GEMM_BATCH_PARALLEL_MIN && num_threads() > 1) {
PCT_OMP(omp parallel for schedule(static) reduction(| : err))
        for (int64_t t = 0; t < batch; t++) err |= gemm_item(g, t, false) < 0;
    } else {
        for (int64_t t = 0; t < batch; t++) err |= gemm_item(g, t, true) < 0;
    }
    return err ? -1 : 0;
}

/* Runs gemm_run with the GIL released when the product is big enough to matter. */
static int gemm_run_nogil(const gemm_desc *g)
{
    int rc;
    double work = (double)gemm_batch_count(g) * (double)g->m * (double)g->n * (double)imax(g->k, 1);
    if (work >= 32768.0) {
        Py_BEGIN_ALLOW_THREADS
        rc = gemm_run(g);
        Py_END_ALLOW_THREADS
    } else {
        rc = gemm_run(g);
    }
    if (rc < 0) PyErr_NoMemory();
    return rc;
}

int pct_gemm_batched(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
                     const void *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                     const void *b, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                     double beta, void *c, int64_t c_bs, int64_t c_rs, int64_t c_cs)
{
    if (dtype == PCT_BOOL || dtype < 0 || dtype >= PCT_NUM_DTYPES) return -1;
    gemm_desc g;
    g.dtype = dtype;
    g.nb = 1;
    g.bsize[0] = batch;
    g.a_bs[0] = a_bs;
    g.b_bs[0] = b_bs;
    g.c_bs[0] = c_bs;
    g.m = m; g.n = n; g.k = k;
    g.alpha = coef_from_double(alpha, dtype);
    g.beta = coef_from_double(beta, dtype);
    g.a = a; g.b = b; g.c = c;
    g.ars = a_rs; g.acs = a_cs; g.brs = b_rs; g.bcs = b_cs; g.crs = c_rs; g.ccs = c_cs;
    return gemm_run(&g);
}

int pct_gemm(int dtype, int64_t m, int64_t n, int64_t k, double alpha,
             const void *a, int64_t a_rs, int64_t a_cs,
             const void *b, int64_t b_rs, int64_t b_cs,
             double beta, void *c, int64_t c_rs, int64_t c_cs)
{
    return pct_gemm_batched(dtype, 1, m, n, k, alpha, a, 0, a_rs, a_cs, b, 0, b_rs, b_cs, beta, c, 0, c_rs, c_cs);
}

/* ---- dot products ---- */

#define PCT_DOT_DEFINE(N, T, ACC, LOAD)                                                              \
    static ACC naive_dot_##N(int64_t n, const char *x_, int64_t sx, const char *y_, int64_t sy)      \
    {                                                                                                \
        const T *x = (const T *)x_, *y = (const T *)y_;                                              \
        ACC acc = 0;                                                                                 \
        if (sx == 1 && sy == 1)                                                                      \
            for (int64_t i = 0; i < n; i++) acc += LOAD(x[i]) * LOAD(y[i]);                          \
        else                                                                                         \
            for (int64_t i = 0; i < n; i++) acc += LOAD(x[i * sx]) * LOAD(y[i * sy]);                \
        return acc;                                                                                  \
    }
PCT_DOT_DEFINE(Byte, uint8_t, uint64_t, PCT_INT_LOAD)
PCT_DOT_DEFINE(Char, int8_t, uint64_t, PCT_INT_LOAD)
PCT_DOT_DEFINE(Short, int16_t, uint64_t, PCT_INT_LOAD)
PCT_DOT_DEFINE(Int, int32_t, uint64_t, PCT_INT_LOAD)
PCT_DOT_DEFINE(Long, int64_t, uint64_t, PCT_INT_LOAD)
PCT_DOT_DEFINE(Half, pct_half, float, pct_half_to_float)
PCT_DOT_DEFINE(BFloat16, pct_bfloat16, float, pct_bf16_to_float)
PCT_DOT_DEFINE(Float, float, float, (float))
PCT_DOT_DEFINE(Double, double, double, (double))

/* res (one element of dtype) = sum x[i] * y[i]; strides in elements. */
static void dot_kernel(int dtype, int64_t n, const char *x, int64_t sx, const char *y, int64_t sy, char *res)
{
#ifdef PCT_HAVE_OPENBLAS
    pct_blas_init();
    bool blas_ok = n > 0 && n <= INT32_MAX && (n == 1 || (sx != 0 && sy != 0 && sx <= INT32_MAX && sy <= INT32_MAX));
    if (blas_ok && dtype == PCT_FLOAT32) {
        *(float *)res = cblas_sdot((int)n, (const float *)x, (int)(n == 1 ? 1 : sx), (const float *)y, (int)(n == 1 ? 1 : sy));
        return;
    }
    if (blas_ok && dtype == PCT_FLOAT64) {
        *(double *)res = cblas_ddot((int)n, (const double *)x, (int)(n == 1 ? 1 : sx), (const double *)y, (int)(n == 1 ? 1 : sy));
        return;
    }
#endif
    switch (dtype) {
    case PCT_UINT8: *(uint8_t *)res = (uint8_t)naive_dot_Byte(n, x, sx, y, sy); break;
    case PCT_INT8: *(int8_t *)res = (int8_t)(int64_t)naive_dot_Char(n, x, sx, y, sy); break;
    case PCT_INT16: *(int16_t *)res = (int16_t)(int64_t)naive_dot_Short(n, x, sx, y, sy); break;
    case PCT_INT32: *(int32_t *)res = (int32_t)(int64_t)naive_dot_Int(n, x, sx, y, sy); break;
    case PCT_INT64: *(int64_t *)res = (int64_t)naive_dot_Long(n, x, sx, y, sy); break;
    case PCT_FLOAT16: *(pct_half *)res = pct_float_to_half(naive_dot_Half(n, x, sx, y, sy)); break;
    case PCT_BFLOAT16: *(pct_bfloat16 *)res = pct_float_to_bf16(naive_dot_BFloat16(n, x, sx, y, sy)); break;
    case PCT_FLOAT32: *(float *)res = naive_dot_Float(n, x, sx, y, sy); break;
    case PCT_FLOAT64: *(double *)res = naive_dot_Double(n, x, sx, y, sy); break;
    default: break;
    }
}

/* ------------------------------------------------------------------------------------ */
/* 2. tensor helpers                                                                     */
/* ------------------------------------------------------------------------------------ */

#define SHAPE(buf, t) pct_shape_str((buf), sizeof(buf), (t)->ndim, (t)->sizes)
#define SHAPE_OF(buf, nd, s) pct_shape_str((buf), sizeof(buf), (nd), (s))

static PyObject *not_implemented_bool(const char *name)
{
    PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for 'Bool'", name);
    return NULL;
}

/* The tensor to write a result of this shape into: out= (resized; new reference) or a
 * new contiguous tensor. */
static pct_tensor *result_tensor(pct_tensor *out, int nd, const int64_t *sizes, int dtype)
{
    if (!out) return pct_tensor_empty(nd, sizes, dtype, PCT_CPU, -1);
    if (pct_out_resize(out, nd, sizes) < 0) return NULL;
    Py_INCREF(out);
    return out;
}

static int fill_zero(pct_tensor *t)
{
    if (t->numel == 0) return 0;
    if (pct_tensor_is_contiguous(t)) {
        memset(pct_tensor_data(t), 0, (size_t)(t->numel * pct_tensor_itemsize(t)));
        pct_tensor_bump_version(t);
        return 0;
    }
    pct_tensor *z = pct_tensor_zeros(0, no_dims, t->dtype);
    if (!z) return -1;
    int rc = pct_copy_(t, z);
    Py_DECREF(z);
    return rc;
}

/* a 0-d "wrapped number" tensor: it weighs like a Python scalar in type promotion */
static pct_tensor *wrapped_scalar(const pct_scalar *s)
{
    pct_tensor *t = pct_tensor_scalar(pct_scalar_dtype(s), s->d, s->i, s->kind == PCT_SCALAR_FLOAT);
    if (t) t->flags |= PCT_FLAG_WRAPPED_NUMBER;
    return t;
}

/* a * b through the elementwise loop machine (promotion, broadcasting, out= checks) */
static PyObject *pw_mul(pct_tensor *out, bool inplace, pct_tensor *a, pct_tensor *b)
{
    pct_iter it;
    pct_iter_config cfg = {.out = out, .inplace = inplace, .ninputs = 2, .inputs = {a, b},
                           .compute_dtype = -1, .out_dtype = -1};
    if (pct_iter_build(&it, &cfg) < 0) return NULL;
    if (pct_pw_check_dtype(PCT_OP_mul, it.compute_dtype, "mul") < 0) {
        pct_iter_release(&it);
        return NULL;
    }
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    pct_iter_run(&it, pct_pw_loop(PCT_OP_mul, it.compute_dtype), &ctx);
    if (inplace && out) pct_tensor_bump_version(out);
    return pct_iter_finish(&it);
}

/* t *= beta in place (torch: result.mul_(beta)) */
static int scale_inplace(pct_tensor *t, const pct_scalar *beta)
{
    pct_tensor *s = wrapped_scalar(beta);
    if (!s) return -1;
    PyObject *r = pw_mul(t, true, t, s);
    Py_DECREF(s);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

static pct_tensor *view_with(pct_tensor *t, int nd, const int64_t *sizes, const int64_t *strides)
{
    return pct_tensor_view_of(t, nd, sizes, strides, t->offset);
}

/* t with the last two dims swapped (Tensor.mT) */
static pct_tensor *view_mT(pct_tensor *t)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = t->ndim;
    memcpy(sz, t->sizes, sizeof(int64_t) * (size_t)nd);
    memcpy(st, t->strides, sizeof(int64_t) * (size_t)nd);
    sz[nd - 2] = t->sizes[nd - 1]; sz[nd - 1] = t->sizes[nd - 2];
    st[nd - 2] = t->strides[nd - 1]; st[nd - 1] = t->strides[nd - 2];
    return view_with(t, nd, sz, st);
}

static pct_tensor *view_unsqueeze(pct_tensor *t, int dim)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = t->ndim, j = 0;
    for (int i = 0; i <= nd; i++) {
        if (i == dim) {
            sz[i] = 1;
            st[i] = dim < nd ? t->sizes[dim] * t->strides[dim] : 1;
        } else {
            sz[i] = t->sizes[j];
            st[i] = t->strides[j];
            j++;
        }
    }
    return view_with(t, nd + 1, sz, st);
}

static pct_tensor *view_permute(pct_tensor *t, const int64_t *perm)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sz[i] = t->sizes[perm[i]];
        st[i] = t->strides[perm[i]];
    }
    return view_with(t, t->ndim, sz, st);
}

/* torch's expand_size(): t broadcast to `sizes`, with expand()'s errors. */
static pct_tensor *expand_to(pct_tensor *t, int nd, const int64_t *sizes)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    int64_t st[PCT_MAX_DIMS];
    if (t->ndim > nd) {
        PyErr_Format(PyExc_RuntimeError,
                     "expand(torch.%sTensor{%s}, size=%s): the number of sizes provided (%d) must be greater or equal "
                     "to the number of dimensions in the tensor (%d)",
                     pct_dtype_cpp_name[t->dtype], SHAPE(b1, t), SHAPE_OF(b2, nd, sizes), nd, t->ndim);
        return NULL;
    }
    bool same = t->ndim == nd;
    for (int i = 0; i < nd; i++) {
        int td = i - (nd - t->ndim);
        if (td < 0) { st[i] = 0; continue; }
        if (t->sizes[td] == sizes[i]) {
            st[i] = t->strides[td];
        } else if (t->sizes[td] == 1) {
            st[i] = 0;
            same = false;
        } else {
            PyErr_Format(PyExc_RuntimeError,
                         "The expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton "
                         "dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                         (long long)sizes[i], (long long)t->sizes[td], i, SHAPE_OF(b1, nd, sizes), SHAPE(b2, t));
            return NULL;
        }
    }
    if (same) {
        Py_INCREF(t);
        return t;
    }
    return view_with(t, nd, sizes, st);
}

/* Strides of a view of t with `shape`, if one exists (ATen's computeStride). */
static bool view_strides(const pct_tensor *t, int nd, const int64_t *shape, int64_t *ns)
{
    if (t->numel == 0 || t->ndim == 0) {
        pct_contiguous_strides(nd, shape, ns);
        return true;
    }
    int view_d = nd - 1;
    int64_t chunk_base_stride = t->strides[t->ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int tensor_d = t->ndim - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= t->sizes[tensor_d];
        if (tensor_d == 0 ||
            (t->sizes[tensor_d - 1] != 1 && t->strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
                ns[view_d] = view_numel * chunk_base_stride;
                view_numel *= shape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return false;
            if (tensor_d > 0) {
                chunk_base_stride = t->strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* Tensor.reshape: a view when the strides allow, else a contiguous copy. */
static pct_tensor *reshape(pct_tensor *t, int nd, const int64_t *shape)
{
    int64_t ns[PCT_MAX_DIMS];
    if (view_strides(t, nd, shape, ns)) return view_with(t, nd, shape, ns);
    pct_tensor *c = pct_to_dtype(t, t->dtype, true);
    if (!c) return NULL;
    if (pct_tensor_set_shape(c, nd, shape, NULL) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    return c;
}

static bool shares_storage(const pct_tensor *a, const pct_tensor *b) { return a->storage == b->storage; }

/* ---- reductions: sums and norms over a set of dims ---- */

enum { RED_SUM, RED_L0, RED_L1, RED_L2, RED_LP, RED_MAX_ABS, RED_MIN_ABS, RED_MAX, RED_MIN };

typedef struct red_acc {
    double s;
    uint64_t si; /* integral sums */
} red_acc;

static red_acc red_init(int kind)
{
    red_acc a = {0.0, 0};
    if (kind == RED_MIN_ABS || kind == RED_MIN) a.s = INFINITY;
    if (kind == RED_MAX) a.s = -INFINITY;
    return a;
}

#define RED_LOOP(EXPR_CONTIG, EXPR_STRIDED) \
    do {                                     \
        if (st == 1)                         \
            for (int64_t i = 0; i < n; i++) { EXPR_CONTIG; } \
        else                                 \
            for (int64_t i = 0; i < n; i++) { EXPR_STRIDED; } \
    } while (0)

#define RED_MAXUP(s, v) do { double v_ = (v); if (v_ > (s) || v_ != v_) (s) = v_; } while (0)
#define RED_MINUP(s, v) do { double v_ = (v); if (v_ < (s) || v_ != v_) (s) = v_; } while (0)

#define PCT_RED_DEFINE(N, T, LOAD, ISINT)                                                           \
    static void red_run_##N(int kind, double p, const char *ptr, int64_t n, int64_t st, red_acc *acc) \
    {                                                                                              \
        const T *x = (const T *)ptr;                                                               \
        double s = acc->s;                                                                         \
        switch (kind) {                                                                            \
        case RED_SUM:                                                                              \
            if (ISINT) {                                                                           \
                uint64_t si = acc->si;                                                             \
                RED_LOOP(si += (uint64_t)(int64_t)LOAD(x[i]), si += (uint64_t)(int64_t)LOAD(x[i * st]));     \
                acc->si = si;                                                                      \
            } else {                                                                               \
                RED_LOOP(s += (double)LOAD(x[i]), s += (double)LOAD(x[i * st]));                   \
            }                                                                                      \
            break;                                                                                 \
        case RED_L0: RED_LOOP(s += LOAD(x[i]) != 0, s += LOAD(x[i * st]) != 0); break;             \
        case RED_L1: RED_LOOP(s += fabs((double)LOAD(x[i])), s += fabs((double)LOAD(x[i * st]))); break; \
        case RED_L2:                                                                               \
            RED_LOOP(double v = (double)LOAD(x[i]); s += v * v, double v = (double)LOAD(x[i * st]); s += v * v); \
            break;                                                                                 \
        case RED_LP:                                                                               \
            RED_LOOP(s += pow(fabs((double)LOAD(x[i])), p), s += pow(fabs((double)LOAD(x[i * st])), p)); \
            break;                                                                                 \
        case RED_MAX_ABS: RED_LOOP(RED_MAXUP(s, fabs((double)LOAD(x[i]))), RED_MAXUP(s, fabs((double)LOAD(x[i * st])))); break; \
        case RED_MIN_ABS: RED_LOOP(RED_MINUP(s, fabs((double)LOAD(x[i]))), RED_MINUP(s, fabs((double)LOAD(x[i * st])))); break; \
        case RED_MAX: RED_LOOP(RED_MAXUP(s, (double)LOAD(x[i])), RED_MAXUP(s, (double)LOAD(x[i * st]))); break; \
        case RED_MIN: RED_LOOP(RED_MINUP(s, (double)LOAD(x[i])), RED_MINUP(s, (double)LOAD(x[i * st]))); break; \
        default: break;                                                                            \
        }                                                                                          \
        acc->s = s;                                                                                \
    }

#define PCT_RED_ID(x) (x)
/* bools are read as bytes, any nonzero byte true (a view of other data may hold any byte) */
#define PCT_RED_BOOL(x) ((x) != 0)
PCT_RED_DEFINE(Bool, uint8_t, PCT_RED_BOOL, 1)
PCT_RED_DEFINE(Byte, uint8_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Char, int8_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Short, int16_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Int, int32_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Long, int64_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Half, pct_half, pct_half_to_float, 0)
PCT_RED_DEFINE(BFloat16, pct_bfloat16, pct_bf16_to_float, 0)
PCT_RED_DEFINE(Float, float, PCT_RED_ID, 0)
PCT_RED_DEFINE(Double, double, PCT_RED_ID, 0)

typedef void (*red_run_fn)(int kind, double p, const char *ptr, int64_t n, int64_t st, red_acc *acc);
static const red_run_fn red_runs[PCT_NUM_DTYPES] = {
    red_run_Bool, red_run_Byte, red_run_Char, red_run_Short, red_run_Int,
    red_run_Long, red_run_Half, red_run_BFloat16, red_run_Float, red_run_Double,
};

typedef struct red_plan {
    int kind;
    double p;
    int in_dtype, out_dtype;
    const char *in;
    char *out;
    int no, ni;                                     /* outer (kept) and inner (reduced) dims */
    int64_t osize[PCT_MAX_DIMS], oin[PCT_MAX_DIMS], oout[PCT_MAX_DIMS];
    int64_t isize[PCT_MAX_DIMS], ist[PCT_MAX_DIMS];
    int64_t outer_n, inner_n;
} red_plan;

static void red_combine(int kind, red_acc *a, const red_acc *b)
{
    switch (kind) {
    case RED_MAX_ABS: case RED_MAX: RED_MAXUP(a->s, b->s); break;
    case RED_MIN_ABS: case RED_MIN: RED_MINUP(a->s, b->s); break;
    default: a->s += b->s; a->si += b->si; break;
    }
}

/* Accumulates inner elements [begin, end) (flattened) of the reduction at `base`. */
static void red_inner(const red_plan *pl, const char *base, int64_t begin, int64_t end, red_acc *acc)
{
    const int isz = pct_dtype_itemsize[pl->in_dtype];
    const red_run_fn run = red_runs[pl->in_dtype];
    if (begin >= end) return;
    if (pl->ni == 0) {
        if (begin < end) run(pl->kind, pl->p, base, 1, 1, acc);
        return;
    }
    int nd = pl->ni;
    int64_t idx[PCT_MAX_DIMS], rem = begin;
    for (int d = nd - 1; d >= 0; d--) { idx[d] = rem % pl->isize[d]; rem /= pl->isize[d]; }
    while (begin < end) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * pl->ist[d];
        int64_t n = pl->isize[nd - 1] - idx[nd - 1];
        if (n > end - begin) n = end - begin;
        run(pl->kind, pl->p, base + off * isz, n, pl->ist[nd - 1], acc);
        begin += n;
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] >= pl->isize[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
}

static void red_store(const red_plan *pl, char *dst, const red_acc *acc, const char *single)
{
    double v;
    switch (pl->kind) {
    case RED_SUM:
        if (!pct_dtype_is_floating(pl->in_dtype)) { pct_store_int64(dst, pl->out_dtype, (int64_t)acc->si); return; }
        v = acc->s;
        break;
    case RED_L2: v = sqrt(acc->s); break;
    case RED_LP: v = pow(acc->s, 1.0 / pl->p); break;
    case RED_MAX: case RED_MIN: v = pl->inner_n == 0 ? 0.0 : acc->s; break; /* matrix norms of empty matrices are 0 */
    default: v = acc->s; break;
    }
    if (single && pl->kind != RED_SUM && pl->kind != RED_MAX && pl->kind != RED_MIN) {
        /* a norm over one element is |x| (x != 0 for ord 0), as torch's shortcut computes it */
        double x = pct_load_as_double(single, pl->in_dtype);
        v = pl->kind == RED_L0 ? (double)(x != 0) : fabs(x);
    }
    pct_store_double(dst, pl->out_dtype, v);
}

/* Plans a reduction of `in` over the dims in mask into `out` (contiguous; with or
 * without the reduced dims as given by keepdim). */
static void red_build(red_plan *pl, const pct_tensor *in, const bool *mask, bool keepdim, pct_tensor *out, int kind,
                      double p)
{
    pl->kind = kind;
    pl->p = p;
    pl->in_dtype = in->dtype;
    pl->out_dtype = out->dtype;
    pl->in = pct_tensor_data(in);
    pl->out = pct_tensor_data(out);
    pl->no = pl->ni = 0;
    pl->outer_n = pl->inner_n = 1;
    int j = 0;
    int64_t pairs_size[PCT_MAX_DIMS], pairs_st[PCT_MAX_DIMS];
    int np = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (mask[d]) {
            pl->inner_n *= in->sizes[d];
            if (keepdim) j++;
            if (in->sizes[d] != 1) { pairs_size[np] = in->sizes[d]; pairs_st[np] = in->strides[d]; np++; }
        } else {
            pl->osize[pl->no] = in->sizes[d];
            pl->oin[pl->no] = in->strides[d];
            pl->oout[pl->no] = out->strides[j++];
            pl->outer_n *= in->sizes[d];
            pl->no++;
        }
    }
    /* inner dims by decreasing stride, then merge neighbours that are contiguous */
    for (int a = 1; a < np; a++)
        for (int b = a; b > 0 && pairs_st[b] > pairs_st[b - 1]; b--) {
            int64_t ts = pairs_size[b], tt = pairs_st[b];
            pairs_size[b] = pairs_size[b - 1]; pairs_st[b] = pairs_st[b - 1];
            pairs_size[b - 1] = ts; pairs_st[b - 1] = tt;
        }
    for (int a = 0; a < np; a++) {
        if (pl->ni > 0 && pl->ist[pl->ni - 1] == pairs_st[a] * pairs_size[a]) {
            pl->isize[pl->ni - 1] *= pairs_size[a];
            pl->ist[pl->ni - 1] = pairs_st[a];
            continue;
        }
        pl->isize[pl->ni] = pairs_size[a];
        pl->ist[pl->ni] = pairs_st[a];
        pl->ni++;
    }
}

static void red_outer(const red_plan *pl, int64_t o, int isz, int osz)
{
    int64_t rem = o, ioff = 0, ooff = 0;
    for (int d = pl->no - 1; d >= 0; d--) {
        int64_t i = rem % pl->osize[d];
        rem /= pl->osize[d];
        ioff += i * pl->oin[d];
        ooff += i * pl->oout[d];
    }
    red_acc acc = red_init(pl->kind);
    const char *base = pl->in + ioff * isz;
    red_inner(pl, base, 0, pl->inner_n, &acc);
    red_store(pl, pl->out + ooff * osz, &acc, pl->inner_n == 1 ? base : NULL);
}

static void red_execute(const red_plan *pl)
{
    const int isz = pct_dtype_itemsize[pl->in_dtype], osz = pct_dtype_itemsize[pl->out_dtype];
    if (pl->outer_n == 0) return;
    const int nt = num_threads();
    const int64_t total = pl->outer_n * pl->inner_n;
    if (pl->outer_n == 1 && pl->inner_n >= 65536 && nt > 1) {
        red_acc parts[256];
        int used = nt < 256 ? nt : 256;
        for (int t = 0; t < used; t++) parts[t] = red_init(pl->kind);
        const int64_t n = pl->inner_n;
PCT_OMP(omp parallel num_threads(used))
        {
#ifdef _OPENMP
            int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
            int tid = 0, cnt = 1;
#endif
            int64_t chunk = (n + cnt - 1) / cnt, b = tid * chunk, e = b + chunk < n ? b + chunk : n;
            if (b < e) red_inner(pl, pl->in, b, e, &parts[tid]);
        }
        for (int t = 1; t < used; t++) red_combine(pl->kind, &parts[0], &parts[t]);
        red_store(pl, pl->out, &parts[0], pl->inner_n == 1 ? pl->in : NULL);
        return;
    }
    if (nt > 1 && total >= 65536 && pl->outer_n > 1) {
PCT_OMP(omp parallel for schedule(static))
        for (int64_t o = 0; o < pl->outer_n; o++) red_outer(pl, o, isz, osz);
    } else {
        for (int64_t o = 0; o < pl->outer_n; o++) red_outer(pl, o, isz, osz);
    }
}

/* Output shape of a reduction over mask. */
static int red_shape(const pct_tensor *in, const bool *mask, bool keepdim, int64_t *shape)
{
    int nd = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!mask[d]) shape[nd++] = in->sizes[d];
        else if (keepdim) shape[nd++] = 1;
    }
    return nd;
}

/* Reduces `in` over mask into a new contiguous tensor of out_dtype. */
static pct_tensor *reduce(pct_tensor *in, const bool *mask, bool keepdim, int out_dtype, int kind, double p)
{
    int64_t shape[PCT_MAX_DIMS];
    int nd = red_shape(in, mask, keepdim, shape);
    pct_tensor *out = pct_tensor_empty(nd, shape, out_dtype, PCT_CPU, -1);
    if (!out) return NULL;
    red_plan pl;
    red_build(&pl, in, mask, keepdim, out, kind, p);
    if (pl.outer_n * pl.inner_n >= 65536) {
        Py_BEGIN_ALLOW_THREADS
        red_execute(&pl);
        Py_END_ALLOW_THREADS
    } else {
        red_execute(&pl);
    }
    return out;
}

/* Tensor.sum(dims, keepdim=True): integral and bool sums are int64, as in torch. */
static pct_tensor *sum_keepdim(pct_tensor *t, const bool *mask)
{
    int od = pct_dtype_is_floating(t->dtype) ? t->dtype : PCT_INT64;
    return reduce(t, mask, true, od, RED_SUM, 0.0);
}

/* Parses a dim list (wrapping negatives, rejecting repeats) into a mask. */
static int dims_to_mask(const int64_t *dims, int n, int ndim, bool *mask)
{
    for (int d = 0; d < (ndim > 0 ? ndim : 1); d++) mask[d] = false;
    for (int i = 0; i < n; i++) {
        int d = pct_wrap_dim(dims[i], ndim);
        if (d < 0) return -1;
        if (mask[d]) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", d);
            return -1;
        }
        mask[d] = true;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* 3. ops                                                                                */
/* ------------------------------------------------------------------------------------ */

/* C[batch..., m, n] = alpha * A @ B + beta * C over tensors read with explicit strides
 * (elements; batch strides 0 for broadcast operands). When C shares memory with an
 * input the product goes through a temporary. 0, or -1 with an exception. */
static int run_gemm(pct_tensor *c, const int64_t *c_bs, int64_t crs, int64_t ccs,
                    pct_tensor *a, const int64_t *a_bs, int64_t ars, int64_t acs,
                    pct_tensor *b, const int64_t *b_bs, int64_t brs, int64_t bcs,
                    int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k, coef alpha, coef beta)
{
    gemm_desc g;
    g.dtype = c->dtype;
    g.nb = nb;
    for (int d = 0; d < nb; d++) {
        g.bsize[d] = bsize[d];
        g.a_bs[d] = a_bs[d];
        g.b_bs[d] = b_bs[d];
        g.c_bs[d] = c_bs[d];
    }
    g.m = m; g.n = n; g.k = k;
    g.alpha = alpha; g.beta = beta;
    g.a = pct_tensor_data(a);
    g.b = pct_tensor_data(b);
    g.ars = ars; g.acs = acs; g.brs = brs; g.bcs = bcs;
    if (!shares_storage(c, a) && !shares_storage(c, b)) {
        g.c = pct_tensor_data(c);
        g.crs = crs; g.ccs = ccs;
        int rc = gemm_run_nogil(&g);
        pct_tensor_bump_version(c);
        return rc;
    }
    /* C overlaps an input: compute into a contiguous temporary */
    int64_t shape[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    for (int d = 0; d < nb; d++) { shape[d] = bsize[d]; st[d] = c_bs[d]; }
    shape[nb] = m; shape[nb + 1] = n;
    st[nb] = crs; st[nb + 1] = ccs;
    int rc = -1;
    pct_tensor *cv = pct_tensor_view_of(c, nb + 2, shape, st, c->offset);
    pct_tensor *tmp = cv ? pct_tensor_empty(nb + 2, shape, c->dtype, PCT_CPU, -1) : NULL;
    if (!tmp) goto done;
    if (!beta.zero && pct_copy_(tmp, cv) < 0) goto done;
    g.c = pct_tensor_data(tmp);
    pct_contiguous_strides(nb + 2, shape, st);
    for (int d = 0; d < nb; d++) g.c_bs[d] = st[d];
    g.crs = st[nb]; g.ccs = st[nb + 1];
    if (gemm_run_nogil(&g) < 0) goto done;
    rc = pct_copy_(cv, tmp);
done:
    Py_XDECREF(cv);
    Py_XDECREF(tmp);
    return rc;
}

/* ---- dot / vdot ---- */

static PyObject *dot_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    if (out) {
        if (pct_out_resize(out, 0, no_dims) < 0) return NULL;
        if (out->dtype != a->dtype) {
            PyErr_Format(PyExc_RuntimeError, "result dtype %s does not match input dtype %s", pct_dtype_cpp_name[out->dtype],
                         pct_dtype_cpp_name[a->dtype]);
            return NULL;
        }
    }
    if (a->ndim != 1 || b->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
        return NULL;
    }
    if (a->dtype != b->dtype) {
        PyErr_Format(PyExc_RuntimeError, "dot : expected both vectors to have same dtype, but found %s and %s",
                     pct_dtype_cpp_name[a->dtype], pct_dtype_cpp_name[b->dtype]);
        return NULL;
    }
    if (a->numel != b->numel) {
        PyErr_Format(PyExc_RuntimeError,
                     "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                     "elements, but got %lld and %lld elements respectively",
                     (long long)a->numel, (long long)b->numel, (long long)a->numel, (long long)b->numel);
        return NULL;
    }
    if (a->dtype == PCT_BOOL) return not_implemented_bool("dot");
    pct_tensor *r = out ? (Py_INCREF(out), out) : pct_tensor_empty(0, no_dims, a->dtype, PCT_CPU, -1);
    if (!r) return NULL;
    char res[8];
    int64_t n = a->numel;
    const char *x = pct_tensor_data(a), *y = pct_tensor_data(b);
    int64_t sx = a->strides[0], sy = b->strides[0];
    if (n >= 65536) {
        Py_BEGIN_ALLOW_THREADS
        dot_kernel(a->dtype, n, x, sx, y, sy, res);
        Py_END_ALLOW_THREADS
    } else {
        dot_kernel(a->dtype, n, x, sx, y, sy, res);
    }
    memcpy(pct_tensor_data(r), res, (size_t)pct_dtype_itemsize[a->dtype]);
    pct_tensor_bump_version(r);
    return (PyObject *)r;
}

/* ---- addmv / mv ---- */

/* torch's addmv: result = beta * self + alpha * mat @ vec. `result` is the out= or
 * in-place target (NULL: allocate); self_is_result when they are the same tensor. */
static PyObject *addmv_op(pct_tensor *self, pct_tensor *mat, pct_tensor *vec, const pct_scalar *beta_s,
                          const pct_scalar *alpha_s, pct_tensor *result_in, bool inplace)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (!(mat->ndim == 2 && vec->ndim == 1 && self->ndim <= 1)) {
        PyErr_Format(PyExc_RuntimeError, "vector + matrix @ vector expected, got %d, %d, %d", self->ndim, mat->ndim,
                     vec->ndim);
        return NULL;
    }
    const int64_t m = mat->sizes[0], k = mat->sizes[1];
    if (!(k == vec->sizes[0] && (m == self->numel || self->numel == 1))) {
        if (self->ndim == 0) { /* torch's message reads self.size(0), which a 0-d self does not have */
            PyErr_SetString(PyExc_IndexError, "Dimension specified as 0 but tensor has no dimensions");
            return NULL;
        }
        PyErr_Format(PyExc_RuntimeError, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                     (long long)self->sizes[0], (long long)m, (long long)k, (long long)vec->sizes[0]);
        return NULL;
    }
    if (!(self->dtype == mat->dtype && mat->dtype == vec->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                     pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[mat->dtype], pct_dtype_cpp_name[vec->dtype]);
        return NULL;
    }
    if (inplace) {
        if (!(self->ndim == 1 && self->sizes[0] == m)) {
            int64_t os[1] = {m};
            PyErr_Format(PyExc_RuntimeError, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                         SHAPE(b1, self), SHAPE_OF(b2, 1, os));
            return NULL;
        }
    } else if (pct_out_check_dtype(result_in, vec->dtype) < 0) {
        return NULL;
    }
    const int dtype = vec->dtype;
    const coef beta = coef_from_scalar(beta_s, dtype), alpha = coef_from_scalar(alpha_s, dtype);
    const bool beta_scalar_zero = scalar_is_zero(beta_s);
    const int64_t msz[1] = {m};
    pct_tensor *self_ = NULL, *result = NULL;
    /* self as seen before the out= resize (self may be the out tensor itself) */
    if (!(self_ = expand_to(self, 1, msz))) return NULL;
    if (inplace) { Py_INCREF(self); result = self; }
    else if (!(result = result_tensor(result_in, 1, msz, dtype))) goto fail;
    if (self == result && self_ != self) {
        /* out= was also the input: re-expand after its resize */
        Py_DECREF(self_);
        if (!(self_ = expand_to(self, 1, msz))) goto fail;
    }
    if (mat->numel == 0) {
        if (beta_scalar_zero) {
            PCT_TRY_INT(fill_zero(result));
        } else {
            if (self_ != result) PCT_TRY_INT(pct_copy_(result, self_));
            PCT_TRY_INT(scale_inplace(result, beta_s));
        }
    } else {
        if (!beta_scalar_zero && self_ != result && self != result) PCT_TRY_INT(pct_copy_(result, self_));
        if (result->numel != 0) {
            if (dtype == PCT_BOOL) { not_implemented_bool("addmv_impl_cpu"); goto fail; }
            const int64_t zero[1] = {0};
            coef be = beta;
            if (beta_scalar_zero) be.zero = true;
            PCT_TRY_INT(run_gemm(result, zero, result->strides[0], 0, mat, zero, mat->strides[0], mat->strides[1], vec,
                                 zero, vec->strides[0], 0, 0, NULL, m, 1, k, alpha, be));
        }
    }
    Py_DECREF(self_);
    return (PyObject *)result;
fail:
    Py_XDECREF(self_);
    Py_XDECREF(result);
    return NULL;
}

static const pct_scalar scalar_zero = {PCT_SCALAR_INT, 0, 0.0, 0};
static const pct_scalar scalar_one = {PCT_SCALAR_INT, 1, 1.0, 0};

/* torch's mv / mv_out: addmv with beta = 0 into a fresh (or the out=) vector */
static PyObject *mv_op(pct_tensor *mat, pct_tensor *vec, pct_tensor *out)
{
    if (mat->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "Dimension specified as 0 but tensor has no dimensions");
        return NULL;
    }
    const int64_t m = mat->sizes[0];
    if (!out || out->ndim > 1 || (out->numel != m && out->numel != 1)) {
        pct_tensor *self = pct_tensor_empty(1, &m, vec->dtype, PCT_CPU, -1);
        if (!self) return NULL;
        PyObject *r = out ? addmv_op(self, mat, vec, &scalar_zero, &scalar_one, out, false)
                          : addmv_op(self, mat, vec, &scalar_zero, &scalar_one, self, true);
        Py_DECREF(self);
        return r;
    }
    return addmv_op(out, mat, vec, &scalar_zero, &scalar_one, out, false);
}

/* ---- addmm / mm ---- */

/* torch's float/double GEMM (MKL) applies alpha to the products: a non-finite alpha makes inf * 0 NaN and mixes
 * signs per product, where OpenBLAS scales the sums. For such an alpha, *a becomes a copy of *a times alpha (owned by
 * the caller through *owned) and alpha 1. */
static int prescale_nonfinite_alpha(pct_tensor **a, coef *alpha, const pct_scalar *alpha_s, pct_tensor **owned)
{
    *owned = NULL;
    if (((*a)->dtype != PCT_FLOAT32 && (*a)->dtype != PCT_FLOAT64) || isfinite(alpha->d)) return 0;
    pct_tensor *t = pct_to_dtype(*a, (*a)->dtype, true);
    if (!t || scale_inplace(t, alpha_s) < 0) { Py_XDECREF(t); return -1; }
    *a = *owned = t;
    *alpha = coef_from_double(1.0, t->dtype);
    return 0;
}

/* torch's addmm_impl_cpu_: result = beta * self + alpha * m1 @ m2 (self already
 * expanded to the result's shape; NULL for mm). `target` is the out= or in-place
 * tensor or NULL. */
static PyObject *addmm_impl(pct_tensor *target, bool inplace, pct_tensor *self, pct_tensor *m1, pct_tensor *m2,
                            const pct_scalar *beta_s, const pct_scalar *alpha_s)
{
    if (m1->dtype != m2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                     pct_dtype_cpp_type_name[m1->dtype], pct_dtype_cpp_type_name[m2->dtype]);
        return NULL;
    }
    const int dtype = m1->dtype;
    const int64_t m = m1->sizes[0], k = m1->sizes[1], n = m2->sizes[1];
    const int64_t shape[2] = {m, n};
    coef alpha = coef_from_scalar(alpha_s, dtype);
    coef beta = coef_from_scalar(beta_s, dtype);
    const bool beta_scalar_zero = scalar_is_zero(beta_s);
    pct_tensor *m1_scaled = NULL;
    if (!self || beta_scalar_zero) beta.zero = true;
    pct_tensor *result = NULL, *out_final = NULL;
    if (inplace) {
        Py_INCREF(target);
        result = target;
    } else {
        if (!(result = result_tensor(target, 2, shape, dtype))) return NULL;
        /* out= overlapping an operand: compute aside, copy at the end */
        if (target && (shares_storage(target, m1) || shares_storage(target, m2) ||
                       (self && shares_storage(target, self)))) {
            out_final = result;
            if (!(result = pct_tensor_empty(2, shape, dtype, PCT_CPU, -1))) goto fail;
        }
    }
    if (result->numel == 0) goto done;
    if (k == 0) {
        if (beta_scalar_zero || !self) {
            PCT_TRY_INT(fill_zero(result));
        } else {
            if (self != result) PCT_TRY_INT(pct_copy_(result, self));
            PCT_TRY_INT(scale_inplace(result, beta_s));
        }
        goto done;
    }
    if (!beta_scalar_zero && self && self != result && !(inplace && self->storage == result->storage &&
                                                           self->offset == result->offset &&
                                                           self->strides[0] == result->strides[0] &&
                                                           self->strides[1] == result->strides[1]))
        PCT_TRY_INT(pct_copy_(result, self));
    if (dtype == PCT_BOOL) { not_implemented_bool("addmm_impl_cpu_"); goto fail; }
    {
        const int64_t z[1] = {0};
        PCT_TRY_INT(prescale_nonfinite_alpha(&m1, &alpha, alpha_s, &m1_scaled));
        int rc = run_gemm(result, z, result->strides[0], result->strides[1], m1, z, m1->strides[0], m1->strides[1],
                          m2, z, m2->strides[0], m2->strides[1], 0, NULL, m, n, k, alpha, beta);
        Py_XDECREF(m1_scaled);
        PCT_TRY_INT(rc);
    }
done:
    if (out_final) {
        PCT_TRY_INT(pct_copy_(out_final, result));
        Py_DECREF(result);
        return (PyObject *)out_final;
    }
    return (PyObject *)result;
fail:
    Py_XDECREF(result);
    Py_XDECREF(out_final);
    return NULL;
}

static PyObject *mm_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    if (a->ndim != 2) { PyErr_SetString(PyExc_RuntimeError, "self must be a matrix"); return NULL; }
    if (b->ndim != 2) { PyErr_SetString(PyExc_RuntimeError, "mat2 must be a matrix"); return NULL; }
    if (a->sizes[1] != b->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                     (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
        return NULL;
    }
    if (pct_out_check_dtype(out, a->dtype) < 0) return NULL;
    return addmm_impl(out, false, NULL, a, b, &scalar_zero, &scalar_one);
}

static PyObject *addmm_op(pct_tensor *self, pct_tensor *m1, pct_tensor *m2, const pct_scalar *beta,
                          const pct_scalar *alpha, pct_tensor *out, bool inplace)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (self->dtype != m2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "self and mat2 must have the same dtype, but got %s and %s",
                     pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[m2->dtype]);
        return NULL;
    }
    if (m1->dtype != m2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "mat1 and mat2 must have the same dtype, but got %s and %s",
                     pct_dtype_cpp_name[m1->dtype], pct_dtype_cpp_name[m2->dtype]);
        return NULL;
    }
    if (m1->ndim != 2) { PyErr_Format(PyExc_RuntimeError, "mat1 must be a matrix, got %d-D tensor", m1->ndim); return NULL; }
    if (m2->ndim != 2) { PyErr_Format(PyExc_RuntimeError, "mat2 must be a matrix, got %d-D tensor", m2->ndim); return NULL; }
    if (m1->sizes[1] != m2->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                     (long long)m1->sizes[0], (long long)m1->sizes[1], (long long)m2->sizes[0], (long long)m2->sizes[1]);
        return NULL;
    }
    const int64_t shape[2] = {m1->sizes[0], m2->sizes[1]};
    if (inplace) {
        if (!(self->ndim == 2 && self->sizes[0] == shape[0] && self->sizes[1] == shape[1])) {
            PyErr_Format(PyExc_RuntimeError, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                         SHAPE(b1, self), SHAPE_OF(b2, 2, shape));
            return NULL;
        }
        return addmm_impl(self, true, self, m1, m2, beta, alpha);
    }
    if (pct_out_check_dtype(out, m1->dtype) < 0) return NULL;
    pct_tensor *b_self = expand_to(self, 2, shape);
    if (!b_self) return NULL;
    PyObject *r = addmm_impl(out, false, b_self, m1, m2, beta, alpha);
    Py_DECREF(b_self);
    return r;
}

/* ---- bmm / baddbmm ---- */

static int check_bmm_shapes(const pct_tensor *b1, const pct_tensor *b2)
{
    if (b1->ndim != 3) { PyErr_SetString(PyExc_RuntimeError, "batch1 must be a 3D tensor"); return -1; }
    if (b2->ndim != 3) { PyErr_SetString(PyExc_RuntimeError, "batch2 must be a 3D tensor"); return -1; }
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2]) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                     (long long)b1->sizes[0], (long long)b1->sizes[2], (long long)b2->sizes[0], (long long)b2->sizes[1]);
        return -1;
    }
    return 0;
}

/* The shared body of bmm_out and baddbmm (ATen's bmm_out_or_baddbmm_): `result`
 * already holds beta-scaled self where needed (beta.zero says to ignore it). */
static int bmm_compute(pct_tensor *result, pct_tensor *b1, pct_tensor *b2, const pct_scalar *beta_s, bool is_bmm,
                       coef alpha, coef beta, const char *name)
{
    const int64_t bs = b1->sizes[0], m = b1->sizes[1], k = b1->sizes[2], n = b2->sizes[2];
    if (result->numel == 0) return 0;
    if (k == 0) {
        if (is_bmm || scalar_is_zero(beta_s)) return fill_zero(result);
        return scale_inplace(result, beta_s);
    }
    if (b1->dtype != b2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", pct_dtype_cpp_name[b1->dtype],
                     pct_dtype_cpp_name[b2->dtype]);
        return -1;
    }
    if (b1->dtype == PCT_BOOL) { not_implemented_bool(name); return -1; }
    const int64_t cb[1] = {result->strides[0]}, ab[1] = {b1->strides[0]}, bb[1] = {b2->strides[0]};
    return run_gemm(result, cb, result->strides[1], result->strides[2], b1, ab, b1->strides[1], b1->strides[2], b2, bb,
                    b2->strides[1], b2->strides[2], 1, &bs, m, n, k, alpha, beta);
}

static PyObject *bmm_op(pct_tensor *b1, pct_tensor *b2, pct_tensor *out)
{
    if (check_bmm_shapes(b1, b2) < 0) return NULL;
    if (pct_out_check_dtype(out, b2->dtype) < 0) return NULL;
    const int64_t shape[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    pct_tensor *result = result_tensor(out, 3, shape, b2->dtype), *target = result;
    if (!result) return NULL;
    if (out && (shares_storage(out, b1) || shares_storage(out, b2))) {
        if (!(target = pct_tensor_empty(3, shape, b2->dtype, PCT_CPU, -1))) goto fail;
    }
    {
        coef alpha = coef_from_double(1.0, b2->dtype), beta = coef_from_double(0.0, b2->dtype);
        if (bmm_compute(target, b1, b2, &scalar_zero, true, alpha, beta, "bmm") < 0) goto fail;
    }
    if (target != result) {
        if (pct_copy_(result, target) < 0) goto fail;
        Py_DECREF(target);
    }
    return (PyObject *)result;
fail:
    if (target != result) Py_XDECREF(target);
    Py_DECREF(result);
    return NULL;
}

static PyObject *baddbmm_op(pct_tensor *self, pct_tensor *b1, pct_tensor *b2, const pct_scalar *beta_s,
                            const pct_scalar *alpha_s, pct_tensor *out, bool inplace)
{
    char sb1[PCT_SHAPE_BUF], sb2[PCT_SHAPE_BUF];
    if (b1->ndim != 3 || b2->ndim != 3) {
        check_bmm_shapes(b1, b2);
        return NULL;
    }
    const int64_t shape[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    pct_tensor *self_ = expand_to(self, 3, shape), *result = NULL, *target = NULL;
    if (!self_) return NULL;
    if (self->dtype != b1->dtype) {
        PyErr_Format(PyExc_RuntimeError, "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                     pct_dtype_cpp_type_name[self->dtype], pct_dtype_cpp_type_name[b1->dtype], pct_dtype_cpp_type_name[b2->dtype]);
        goto fail;
    }
    if (check_bmm_shapes(b1, b2) < 0) goto fail;
    if (inplace) {
        if (!(self->ndim == 3 && memcmp(self->sizes, shape, sizeof shape) == 0)) {
            PyErr_Format(PyExc_RuntimeError, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                         SHAPE(sb1, self), SHAPE_OF(sb2, 3, shape));
            goto fail;
        }
        Py_INCREF(self);
        result = self;
    } else {
        if (pct_out_check_dtype(out, b2->dtype) < 0) goto fail;
        if (!(result = result_tensor(out, 3, shape, b2->dtype))) goto fail;
    }
    target = result;
    if (shares_storage(result, b1) || shares_storage(result, b2)) {
        if (!(target = pct_tensor_empty(3, shape, result->dtype, PCT_CPU, -1))) goto fail;
        if (!scalar_is_zero(beta_s) && pct_copy_(target, self_) < 0) goto fail;
    } else if (!scalar_is_zero(beta_s) && self_ != result && !inplace) {
        if (pct_copy_(result, self_) < 0) goto fail;
    }
    {
        const int dt = result->dtype;
        coef alpha = coef_from_scalar(alpha_s, dt), beta = coef_from_scalar(beta_s, dt);
        if (scalar_is_zero(beta_s)) beta.zero = true;
        if (bmm_compute(target, b1, b2, beta_s, false, alpha, beta, "baddbmm") < 0) goto fail;
    }
    if (target != result) {
        if (pct_copy_(result, target) < 0) goto fail;
        Py_DECREF(target);
    }
    Py_DECREF(self_);
    return (PyObject *)result;
fail:
    if (target && target != result) Py_DECREF(target);
    Py_XDECREF(result);
    Py_XDECREF(self_);
    return NULL;
}

/* ---- matmul ---- */

/* ATen's should_fold: fold the batch of the larger (>= 3-D) operand into the rows of
 * one mm/mv when that needs no copy (or the smaller operand requires grad). */
static bool should_fold(const pct_tensor *t1, const pct_tensor *t2, bool has_out)
{
    const bool t1_larger = t1->ndim >= t2->ndim;
    const pct_tensor *big = t1_larger ? t1 : t2;
    const int dim_big = big->ndim, dim_small = t1_larger ? t2->ndim : t1->ndim;
    if (!(dim_big >= 3 && dim_small <= 2)) return false;
    const pct_tensor *small = t1_larger ? t2 : t1;
    if (pct_tensor_requires_grad(small) && !has_out) return true;
    if (t1->ndim == 2) return false;
    if (big->numel == 0) return true;
    /* sizes / strides of big, with the last two swapped when it is t2 (mT) */
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    memcpy(sz, big->sizes, sizeof(int64_t) * (size_t)dim_big);
    memcpy(st, big->strides, sizeof(int64_t) * (size_t)dim_big);
    if (!t1_larger) {
        sz[dim_big - 2] = big->sizes[dim_big - 1]; sz[dim_big - 1] = big->sizes[dim_big - 2];
        st[dim_big - 2] = big->strides[dim_big - 1]; st[dim_big - 1] = big->strides[dim_big - 2];
    }
    for (int i = 0; i < dim_big - 2; i++)
        if (st[i] != st[i + 1] * sz[i + 1]) return false;
    return true;
}

static PyObject *matmul_fold(pct_tensor *tensor1, pct_tensor *tensor2, pct_tensor *out)
{
    const bool transpose = tensor2->ndim > tensor1->ndim;
    pct_tensor *t1 = NULL, *t2 = NULL, *t1f = NULL, *prod = NULL, *res = NULL;
    PyObject *r = NULL;
    int64_t oshape[PCT_MAX_DIMS], fshape[2];
    if (transpose) {
        if (!(t1 = view_mT(tensor2))) return NULL;
        if (tensor1->ndim == 2) { if (!(t2 = view_mT(tensor1))) goto fail; }
        else { Py_INCREF(tensor1); t2 = tensor1; }
    } else {
        Py_INCREF(tensor1); t1 = tensor1;
        Py_INCREF(tensor2); t2 = tensor2;
    }
    int ond = t1->ndim - 1;
    int64_t folded = 1;
    for (int i = 0; i < ond; i++) { oshape[i] = t1->sizes[i]; folded *= t1->sizes[i]; }
    const bool t2_matrix = t2->ndim == 2;
    if (t2_matrix) oshape[ond++] = t2->sizes[1];
    fshape[0] = folded;
    fshape[1] = t1->sizes[t1->ndim - 1];
    if (!(t1f = reshape(t1, 2, fshape))) goto fail;
    if (!out) {
        prod = (pct_tensor *)(t2_matrix ? mm_op(t1f, t2, NULL) : mv_op(t1f, t2, NULL));
        if (!prod) goto fail;
        /* the product is contiguous: give it the output shape */
        if (pct_tensor_set_shape(prod, ond, oshape, NULL) < 0) goto fail;
        if (transpose && t2_matrix) {
            pct_tensor *mt = view_mT(prod);
            if (!mt) goto fail;
            res = pct_contiguous(mt);
            Py_DECREF(mt);
            if (!res) goto fail;
            r = (PyObject *)res;
        } else {
            r = (PyObject *)prod;
            prod = NULL;
        }
    } else {
        if (pct_out_resize(out, ond, oshape) < 0) goto fail;
        int64_t rs[2] = {folded, t2->sizes[t2->ndim - 1]};
        pct_tensor *ro = reshape(out, t2_matrix ? 2 : 1, rs);
        if (!ro) goto fail;
        PyObject *x = t2_matrix ? mm_op(t1f, t2, ro) : mv_op(t1f, t2, ro);
        if (x && ro->storage != out->storage && pct_copy_(out, ro) < 0) Py_CLEAR(x);
        Py_DECREF(ro);
        if (!x) goto fail;
        Py_DECREF(x);
        Py_INCREF(out);
        r = (PyObject *)out;
    }
fail:
    Py_XDECREF(t1);
    Py_XDECREF(t2);
    Py_XDECREF(t1f);
    Py_XDECREF(prod);
    return r;
}

/* The batched case: broadcast batch dims are read with stride 0 and run as one
 * batched GEMM (no expand-and-copy as in ATen's reshape of the expanded operands). */
static PyObject *matmul_batched(pct_tensor *t1, pct_tensor *t2, pct_tensor *out)
{
    const int d1 = t1->ndim, d2 = t2->ndim;
    const int64_t n = d1 > 1 ? t1->sizes[d1 - 2] : 1, m1 = t1->sizes[d1 - 1];
    const int64_t m2 = d2 > 1 ? t2->sizes[d2 - 2] : t2->sizes[0], p = d2 > 1 ? t2->sizes[d2 - 1] : 1;
    const int nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 > 2 ? d2 - 2 : 0;
    int nb;
    int64_t bshape[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(nb1, t1->sizes, nb2, t2->sizes, &nb, bshape) < 0) return NULL;
    int64_t B = 1;
    for (int i = 0; i < nb; i++) B *= bshape[i];
    if (m1 != m2) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                     (long long)B, (long long)m1, (long long)B, (long long)m2);
        return NULL;
    }
    int64_t oshape[PCT_MAX_DIMS];
    int ond = nb;
    memcpy(oshape, bshape, sizeof(int64_t) * (size_t)nb);
    if (d1 > 1) oshape[ond++] = n;
    if (d2 > 1) oshape[ond++] = p;
    const int dtype = t2->dtype;
    if (pct_out_check_dtype(out, dtype) < 0) return NULL;
    pct_tensor *result = result_tensor(out, ond, oshape, dtype), *target = result;
    if (!result) return NULL;
    if (out && (!pct_tensor_is_contiguous(out) || shares_storage(out, t1) || shares_storage(out, t2))) {
        if (!(target = pct_tensor_empty(ond, oshape, dtype, PCT_CPU, -1))) goto fail;
    }
    if (target->numel == 0) goto done;
    if (m1 == 0) {
        if (fill_zero(target) < 0) goto fail;
        goto done;
    }
    if (t1->dtype != t2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", pct_dtype_cpp_name[t1->dtype],
                     pct_dtype_cpp_name[t2->dtype]);
        goto fail;
    }
    if (dtype == PCT_BOOL) { not_implemented_bool("bmm"); goto fail; }
    {
        int64_t a_bs[PCT_MAX_DIMS], b_bs[PCT_MAX_DIMS], c_bs[PCT_MAX_DIMS], full[PCT_MAX_DIMS + 2], cst[PCT_MAX_DIMS + 2];
        for (int i = 0; i < nb; i++) {
            int i1 = i - (nb - nb1), i2 = i - (nb - nb2);
            a_bs[i] = (i1 >= 0 && t1->sizes[i1] != 1) ? t1->strides[i1] : 0;
            b_bs[i] = (i2 >= 0 && t2->sizes[i2] != 1) ? t2->strides[i2] : 0;
            full[i] = bshape[i];
        }
        full[nb] = n;
        full[nb + 1] = p;
        pct_contiguous_strides(nb + 2, full, cst);
        for (int i = 0; i < nb; i++) c_bs[i] = cst[i];
        const int64_t ars = d1 > 1 ? t1->strides[d1 - 2] : 0, acs = t1->strides[d1 - 1];
        const int64_t brs = d2 > 1 ? t2->strides[d2 - 2] : t2->strides[0], bcs = d2 > 1 ? t2->strides[d2 - 1] : 0;
        coef alpha = coef_from_double(1.0, dtype), beta = coef_from_double(0.0, dtype);
        if (run_gemm(target, c_bs, cst[nb], cst[nb + 1], t1, a_bs, ars, acs, t2, b_bs, brs, bcs, nb, bshape, n, p, m1,
                     alpha, beta) < 0)
            goto fail;
    }
done:
    if (target != result) {
        if (pct_copy_(result, target) < 0) goto fail;
        Py_DECREF(target);
    }
    return (PyObject *)result;
fail:
    if (target != result) Py_XDECREF(target);
    Py_DECREF(result);
    return NULL;
}

PyObject *pct_matmul(pct_tensor *t1, pct_tensor *t2, pct_tensor *out)
{
    const int d1 = t1->ndim, d2 = t2->ndim;
    if (d1 == 0 || d2 == 0) {
        PyErr_Format(PyExc_RuntimeError, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", d1,
                     d2);
        return NULL;
    }
    if (d1 == 1 && d2 == 1) return dot_op(t1, t2, out);
    if (d1 == 2 && d2 == 1) return mv_op(t1, t2, out);
    if (d1 == 1 && d2 == 2) {
        pct_tensor *u = view_unsqueeze(t1, 0);
        if (!u) return NULL;
        pct_tensor *r = (pct_tensor *)mm_op(u, t2, out);
        Py_DECREF(u);
        if (!r) return NULL;
        /* squeeze_(0) of the [1, n] result, out= included */
        int64_t sz = r->sizes[1], st = r->strides[1];
        if (pct_tensor_set_shape(r, 1, &sz, &st) < 0) { Py_DECREF(r); return NULL; }
        return (PyObject *)r;
    }
    if (d1 == 2 && d2 == 2) return mm_op(t1, t2, out);
    if (should_fold(t1, t2, out != NULL)) return matmul_fold(t1, t2, out);
    return matmul_batched(t1, t2, out);
}

PyObject *pct_mm(pct_tensor *a, pct_tensor *b, pct_tensor *out) { return mm_op(a, b, out); }
PyObject *pct_bmm(pct_tensor *a, pct_tensor *b, pct_tensor *out) { return bmm_op(a, b, out); }

static pct_scalar scalar_of_double(double v)
{
    pct_scalar s;
    if (v == (double)(int64_t)v && fabs(v) < 9e15) { s.kind = PCT_SCALAR_INT; s.i = (int64_t)v; s.d = v; }
    else { s.kind = PCT_SCALAR_FLOAT; s.i = 0; s.d = v; }
    return s;
}

PyObject *pct_addmm(pct_tensor *self, pct_tensor *m1, pct_tensor *m2, double beta, double alpha, pct_tensor *out)
{
    pct_scalar b = scalar_of_double(beta), a = scalar_of_double(alpha);
    return addmm_op(self, m1, m2, &b, &a, out, false);
}

PyObject *pct_baddbmm(pct_tensor *self, pct_tensor *b1, pct_tensor *b2, double beta, double alpha, pct_tensor *out)
{
    pct_scalar b = scalar_of_double(beta), a = scalar_of_double(alpha);
    return baddbmm_op(self, b1, b2, &b, &a, out, false);
}

/* ---- trace ---- */

static PyObject *trace_op(pct_tensor *t)
{
    if (t->dtype == PCT_BOOL) return not_implemented_bool("trace"); /* torch dispatches on dtype first */
    if (t->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "trace: expected a matrix, but got tensor with dim %d", t->ndim);
        return NULL;
    }
    const bool fl = pct_dtype_is_floating(t->dtype);
    pct_tensor *r = pct_tensor_empty(0, no_dims, fl ? t->dtype : PCT_INT64, PCT_CPU, -1);
    if (!r) return NULL;
    const int64_t n = imin(t->sizes[0], t->sizes[1]), step = t->strides[0] + t->strides[1];
    const char *p = pct_tensor_data(t);
    const int isz = pct_tensor_itemsize(t);
    if (fl) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += pct_load_as_double(p + i * step * isz, t->dtype);
        pct_store_double(pct_tensor_data(r), r->dtype, s);
    } else {
        uint64_t s = 0;
        for (int64_t i = 0; i < n; i++) s += (uint64_t)pct_load_as_int64(p + i * step * isz, t->dtype);
        *(int64_t *)pct_tensor_data(r) = (int64_t)s;
    }
    return (PyObject *)r;
}

/* ---- outer / inner / tensordot / kron ---- */

static PyObject *outer_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    if (a->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "outer: Expected 1-D argument self, but got %d-D", a->ndim);
        return NULL;
    }
    if (b->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "outer: Expected 1-D argument vec2, but got %d-D", b->ndim);
        return NULL;
    }
    const int64_t sz[2] = {a->sizes[0], 1}, st[2] = {a->strides[0], 1};
    pct_tensor *col = view_with(a, 2, sz, st);
    if (!col) return NULL;
    PyObject *r = pw_mul(out, false, col, b);
    Py_DECREF(col);
    return r;
}

/* ATen's tensordot(input1, input2, dims1, dims2) (and tensordot_out) */
static PyObject *tensordot_impl(pct_tensor *a, pct_tensor *b, const int64_t *dims1, int n1, const int64_t *dims2, int n2,
                                pct_tensor *out)
{
    if (n1 != n2) {
        PyErr_SetString(PyExc_RuntimeError, "both dimension lists should have same length");
        return NULL;
    }
    if (a->dtype != b->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "both inputs should have same dtype");
        return NULL;
    }
    pct_tensor *t1 = a, *t2 = b, *t1p = NULL, *t2p = NULL, *prod = NULL;
    Py_INCREF(t1);
    Py_INCREF(t2);
    bool c1[PCT_MAX_DIMS + 1], c2[PCT_MAX_DIMS + 1];
    int64_t p1[PCT_MAX_DIMS], p2[PCT_MAX_DIMS], rsizes[2 * PCT_MAX_DIMS], csize = 1, size1 = 1, size2 = 1;
    int np1 = 0, np2 = 0, nr = 0;
    for (int i = 0; i < n1; i++) {
        /* Tensor.size(dim): a 0-d tensor has no dim to give */
        if (a->ndim == 0 || b->ndim == 0) {
            PyErr_Format(PyExc_IndexError, "Dimension specified as %lld but tensor has no dimensions",
                         (long long)(a->ndim == 0 ? dims1[i] : dims2[i]));
            goto fail;
        }
        int d1 = pct_wrap_dim(dims1[i], a->ndim), d2;
        if (d1 < 0 || (d2 = pct_wrap_dim(dims2[i], b->ndim)) < 0) goto fail;
        int64_t s1 = a->sizes[d1], s2 = b->sizes[d2];
        /* a contracted dim of size 1 on one side is summed away on the other, in its
         * own dtype (torch's tensordot keeps int32 int32, unlike Tensor.sum) */
        if (s2 == 1) {
            bool mask[PCT_MAX_DIMS + 1] = {false};
            mask[d1] = true;
            pct_tensor *s = reduce(t1, mask, true, t1->dtype, RED_SUM, 0.0);
            if (!s) goto fail;
            Py_SETREF(t1, s);
        } else if (s1 == 1) {
            bool mask[PCT_MAX_DIMS + 1] = {false};
            mask[d2] = true;
            pct_tensor *s = reduce(t2, mask, true, t2->dtype, RED_SUM, 0.0);
            if (!s) goto fail;
            Py_SETREF(t2, s);
        } else if (s1 != s2) {
            PyErr_Format(PyExc_RuntimeError,
                         "contracted dimensions need to match, but first has size %lld in dim %lld and second has size "
                         "%lld in dim %lld",
                         (long long)s1, (long long)dims1[i], (long long)s2, (long long)dims2[i]);
            goto fail;
        } else {
            csize *= s1;
        }
    }
    if (dims_to_mask(dims1, n1, a->ndim, c1) < 0 || dims_to_mask(dims2, n2, b->ndim, c2) < 0) goto fail;
    for (int i = 0; i < a->ndim; i++)
        if (!c1[i]) { p1[np1++] = i; size1 *= t1->sizes[i]; rsizes[nr++] = t1->sizes[i]; }
    for (int i = 0; i < n1; i++) p1[np1++] = pct_wrap_dim(dims1[i], a->ndim);
    for (int i = 0; i < n2; i++) p2[np2++] = pct_wrap_dim(dims2[i], b->ndim);
    for (int i = 0; i < b->ndim; i++)
        if (!c2[i]) { p2[np2++] = i; size2 *= t2->sizes[i]; rsizes[nr++] = t2->sizes[i]; }
    {
        pct_tensor *v1 = view_permute(t1, p1), *v2 = v1 ? view_permute(t2, p2) : NULL;
        const int64_t s1[2] = {size1, csize}, s2[2] = {csize, size2};
        if (v1 && v2) {
            t1p = reshape(v1, 2, s1);
            if (t1p) t2p = reshape(v2, 2, s2);
        }
        Py_XDECREF(v1);
        Py_XDECREF(v2);
        if (!t1p || !t2p) goto fail;
    }
    /* torch 2.13 contracts a 1 x 1 product (two vectors, or every dim contracted) with dot, which has no bool
     * kernel even for empty inputs */
    if (size1 == 1 && size2 == 1 && t1p->dtype == PCT_BOOL) { not_implemented_bool("dot"); goto fail; }
    if (!(prod = (pct_tensor *)mm_op(t1p, t2p, NULL))) goto fail;
    if (pct_tensor_set_shape(prod, nr, rsizes, NULL) < 0) goto fail;
    Py_DECREF(t1); Py_DECREF(t2); Py_DECREF(t1p); Py_DECREF(t2p);
    if (!out) return (PyObject *)prod;
    if (prod->dtype != out->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "tensordot: Expected the output tensor to have dtype %s, but got an output tensor with dtype %s",
                     pct_dtype_cpp_name[prod->dtype], pct_dtype_cpp_name[out->dtype]);
        Py_DECREF(prod);
        return NULL;
    }
    if (pct_out_resize(out, nr, rsizes) < 0 || pct_copy_(out, prod) < 0) {
        Py_DECREF(prod);
        return NULL;
    }
    Py_DECREF(prod);
    Py_INCREF(out);
    return (PyObject *)out;
fail:
    Py_XDECREF(t1);
    Py_XDECREF(t2);
    Py_XDECREF(t1p);
    Py_XDECREF(t2p);
    Py_XDECREF(prod);
    return NULL;
}

static PyObject *inner_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (a->ndim == 0 || b->ndim == 0) return pw_mul(out, false, a, b);
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1]) {
        PyErr_Format(PyExc_RuntimeError,
                     "inner() the last dimension must match on both input tensors but got shapes %s and %s",
                     SHAPE(b1, a), SHAPE(b2, b));
        return NULL;
    }
    const int64_t d = -1;
    return tensordot_impl(a, b, &d, 1, &d, 1, out);
}

/* One of tensordot's dims lists: a list or tuple of ints. */
static int int_list(PyObject *o, int64_t *dst, int *n, const char *argname, int pos)
{
    if (!PyList_Check(o) && !PyTuple_Check(o)) {
        PyErr_Format(PyExc_TypeError, "tensordot(): argument '%s' (position %d) must be tuple of ints, not %s", argname,
                     pos, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
    if (len > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "tensordot(): too many dims (%zd)", len);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(o, i);
        PyObject *idx = PCT_TENSOR_CHECK(it) ? NULL : PyNumber_Index(it);
        if (!idx) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "tensordot(): argument '%s' (position %d) must be tuple of ints, but found "
                         "element of type %s at pos %zd", argname, pos, Py_TYPE(it)->tp_name, i);
            return -1;
        }
        dst[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (dst[i] == -1 && PyErr_Occurred()) return -1;
    }
    *n = (int)len;
    return 0;
}

/* torch.functional.tensordot's handling of `dims`: an int, a pair of lists, or a tensor. */
static PyObject *tensordot_op(pct_tensor *a, pct_tensor *b, PyObject *dims, pct_tensor *out)
{
    int64_t d1[PCT_MAX_DIMS], d2[PCT_MAX_DIMS];
    int n1 = 0, n2 = 0;
    if (dims && dims != Py_None && !PyLong_Check(dims) && !PyList_Check(dims) && !PyTuple_Check(dims) &&
        !PCT_TENSOR_CHECK(dims)) {
        PyErr_Format(PyExc_RuntimeError,
                     "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
                     "lists, but got dims=%S", dims);
        return NULL;
    }
    int64_t k = 2;
    bool have_k = !dims || dims == Py_None;
    if (dims && (PyList_Check(dims) || PyTuple_Check(dims))) {
        Py_ssize_t len = PySequence_Fast_GET_SIZE(dims);
        if (len != 2) {
            if (len < 2) PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected 2, got %zd)", len);
            else PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 2)");
            return NULL;
        }
        if (int_list(PySequence_Fast_GET_ITEM(dims, 0), d1, &n1, "dims_self", 3) < 0 ||
            int_list(PySequence_Fast_GET_ITEM(dims, 1), d2, &n2, "dims_other", 4) < 0)
            return NULL;
    } else if (dims && PCT_TENSOR_CHECK(dims)) {
        pct_tensor *t = (pct_tensor *)dims;
        if (t->numel > 1) {
            if (t->ndim != 2 || t->sizes[0] != 2 || t->sizes[1] > PCT_MAX_DIMS) {
                PyErr_SetString(PyExc_RuntimeError, "tensordot expects a dims tensor of shape (2, n)");
                return NULL;
            }
            const char *p = pct_tensor_data(t);
            const int isz = pct_tensor_itemsize(t);
            n1 = n2 = (int)t->sizes[1];
            for (int i = 0; i < n1; i++) {
                d1[i] = pct_load_as_int64(p + (i * t->strides[1]) * isz, t->dtype);
                d2[i] = pct_load_as_int64(p + (t->strides[0] + i * t->strides[1]) * isz, t->dtype);
            }
        } else {
            int64_t v = t->numel == 1 ? pct_load_as_int64(pct_tensor_data(t), t->dtype) : 0;
            if (v < 0) {
                PyErr_Format(PyExc_RuntimeError, "tensordot expects dims >= 0, but got dims=%S", dims);
                return NULL;
            }
            if (v > PCT_MAX_DIMS) v = PCT_MAX_DIMS + 1;
            for (int64_t i = 0; i < v && i < PCT_MAX_DIMS; i++) { d1[i] = i - v; d2[i] = i; }
            n1 = n2 = (int)imin(v, PCT_MAX_DIMS);
        }
    } else {
        if (!have_k) {
            int overflow = 0;
            k = PyLong_AsLongLongAndOverflow(dims, &overflow);
            if (k == -1 && PyErr_Occurred()) return NULL;
            if (overflow) k = overflow > 0 ? INT64_MAX : -1;
        }
        if (k < 0) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims >= 0, but got dims=%lld", (long long)k);
            return NULL;
        }
        if (k > imin(a->ndim, b->ndim)) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=%lld", (long long)k);
            return NULL;
        }
        for (int64_t i = 0; i < k; i++) { d1[i] = i - k; d2[i] = i; }
        n1 = n2 = (int)k;
    }
    return tensordot_impl(a, b, d1, n1, d2, n2, out);
}

static PyObject *kron_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    const int maxdim = a->ndim > b->ndim ? a->ndim : b->ndim;
    const int pa = maxdim - a->ndim, pb = maxdim - b->ndim;
    int64_t asz[2 * PCT_MAX_DIMS], ast[2 * PCT_MAX_DIMS], bsz[2 * PCT_MAX_DIMS], bst[2 * PCT_MAX_DIMS], rsz[PCT_MAX_DIMS];
    if (2 * maxdim > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "kron: inputs with more than %d dimensions are not supported", PCT_MAX_DIMS / 2);
        return NULL;
    }
    for (int i = 0; i < maxdim; i++) {
        asz[2 * i] = i >= pa ? a->sizes[i - pa] : 1;
        ast[2 * i] = i >= pa ? a->strides[i - pa] : 0;
        asz[2 * i + 1] = 1; ast[2 * i + 1] = 0;
        bsz[2 * i] = 1; bst[2 * i] = 0;
        bsz[2 * i + 1] = i >= pb ? b->sizes[i - pb] : 1;
        bst[2 * i + 1] = i >= pb ? b->strides[i - pb] : 0;
        rsz[i] = asz[2 * i] * bsz[2 * i + 1];
    }
    pct_tensor *av = view_with(a, 2 * maxdim, asz, ast), *bv = av ? view_with(b, 2 * maxdim, bsz, bst) : NULL;
    pct_tensor *r = bv ? (pct_tensor *)pw_mul(NULL, false, av, bv) : NULL;
    Py_XDECREF(av);
    Py_XDECREF(bv);
    if (!r) return NULL;
    if (!pct_tensor_is_contiguous(r)) { /* the product follows its inputs' memory order; the reshape needs C order */
        pct_tensor *cr = pct_contiguous(r);
        Py_DECREF(r);
        if (!(r = cr)) return NULL;
    }
    if (pct_tensor_set_shape(r, maxdim, rsz, NULL) < 0) goto fail;
    if (!out) return (PyObject *)r;
    if (!pct_can_cast(r->dtype, out->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     pct_dtype_cpp_name[r->dtype], pct_dtype_cpp_name[out->dtype]);
        goto fail;
    }
    if (pct_out_resize(out, maxdim, rsz) < 0 || pct_copy_(out, r) < 0) goto fail;
    Py_DECREF(r);
    Py_INCREF(out);
    return (PyObject *)out;
fail:
    Py_DECREF(r);
    return NULL;
}

/* ---- einsum ---- */

#define EIN_LETTERS 26
#define EIN_TOTAL 52
#define EIN_ELLIPSIS 52
#define EIN_MAX_LABELS (PCT_MAX_DIMS + 2)

static bool ein_isalpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int ein_sub(unsigned char c) { return c <= 'Z' ? c - 'A' : c - 'a' + EIN_LETTERS; }
static char ein_label(int s) { return (char)(s < EIN_LETTERS ? 'A' + s : 'a' + s - EIN_LETTERS); }

/* ATen's sumproduct_pair: (left * right).sum(sum_dims) through permute + bmm, keepdim. */
static pct_tensor *sumproduct_pair(pct_tensor *left_in, pct_tensor *right_in, const int64_t *sum_dims, int nsum)
{
    if (nsum == 0) return (pct_tensor *)pw_mul(NULL, false, left_in, right_in);
    const int dim = left_in->ndim;
    bool is_sum[PCT_MAX_DIMS] = {false};
    for (int i = 0; i < nsum; i++) is_sum[sum_dims[i]] = true;
    int64_t lro[PCT_MAX_DIMS], lo[PCT_MAX_DIMS], ro[PCT_MAX_DIMS];
    int nlro = 0, nlo = 0, nro = 0;
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    pct_tensor *left = left_in, *right = right_in, *lv = NULL, *rv = NULL, *l3 = NULL, *r3 = NULL, *res = NULL,
               *result = NULL;
    Py_INCREF(left);
    Py_INCREF(right);
    for (int i = 0; i < dim; i++) {
        bool sl = left->sizes[i] != 1, sr = right->sizes[i] != 1;
        if (is_sum[i]) {
            if (sl && sr) {
                if (left->sizes[i] != right->sizes[i]) {
                    PyErr_SetString(PyExc_RuntimeError, "non-broadcast dimensions must match");
                    goto fail;
                }
                sum_size *= left->sizes[i];
            } else if (sl || sr) {
                bool mask[PCT_MAX_DIMS] = {false};
                mask[i] = true;
                pct_tensor **t = sl ? &left : &right;
                pct_tensor *s = sum_keepdim(*t, mask);
                if (!s) goto fail;
                Py_SETREF(*t, s);
            }
        } else if (sl && sr) {
            if (left->sizes[i] != right->sizes[i]) {
                PyErr_SetString(PyExc_RuntimeError, "non-broadcast dimensions must match");
                goto fail;
            }
            lro[nlro++] = i;
            lro_size *= left->sizes[i];
        } else if (sl) {
            lo[nlo++] = i;
            lo_size *= left->sizes[i];
        } else {
            ro[nro++] = i;
            ro_size *= right->sizes[i];
        }
    }
    {
        int64_t out_size[PCT_MAX_DIMS], lperm[PCT_MAX_DIMS], rperm[PCT_MAX_DIMS], operm[PCT_MAX_DIMS];
        int no = 0, nl = 0, nr = 0;
        for (int i = 0; i < nlro; i++) out_size[no++] = left->sizes[lro[i]];
        for (int i = 0; i < nlo; i++) out_size[no++] = left->sizes[lo[i]];
        for (int i = 0; i < nsum; i++) out_size[no++] = 1;
        for (int i = 0; i < nro; i++) out_size[no++] = right->sizes[ro[i]];
        for (int i = 0; i < nlro; i++) { lperm[nl++] = lro[i]; rperm[nr++] = lro[i]; }
        for (int i = 0; i < nlo; i++) lperm[nl++] = lo[i];
        for (int i = 0; i < nsum; i++) lperm[nl++] = sum_dims[i];
        for (int i = 0; i < nro; i++) lperm[nl++] = ro[i];
        for (int i = 0; i < nsum; i++) rperm[nr++] = sum_dims[i];
        for (int i = 0; i < nro; i++) rperm[nr++] = ro[i];
        for (int i = 0; i < nlo; i++) rperm[nr++] = lo[i];
        int k = 0;
        for (int i = 0; i < nlro; i++) operm[lro[i]] = k++;
        for (int i = 0; i < nlo; i++) operm[lo[i]] = k++;
        for (int i = 0; i < nsum; i++) operm[sum_dims[i]] = k++;
        for (int i = 0; i < nro; i++) operm[ro[i]] = k++;
        const int64_t ls[3] = {lro_size, lo_size, sum_size}, rs[3] = {lro_size, sum_size, ro_size};
        if (!(lv = view_permute(left, lperm)) || !(rv = view_permute(right, rperm))) goto fail;
        if (!(l3 = reshape(lv, 3, ls)) || !(r3 = reshape(rv, 3, rs))) goto fail;
        if (!(res = (pct_tensor *)bmm_op(l3, r3, NULL))) goto fail;
        if (pct_tensor_set_shape(res, no, out_size, NULL) < 0) goto fail;
        result = view_permute(res, operm);
    }
fail:
    Py_XDECREF(left);
    Py_XDECREF(right);
    Py_XDECREF(lv);
    Py_XDECREF(rv);
    Py_XDECREF(l3);
    Py_XDECREF(r3);
    Py_XDECREF(res);
    return result;
}

static PyObject *einsum_op(PyObject *eq_obj, PyObject *operands)
{
    Py_ssize_t len;
    const char *eq = PyUnicode_AsUTF8AndSize(eq_obj, &len);
    if (!eq) return NULL;
    const Py_ssize_t num_ops = PySequence_Fast_GET_SIZE(operands);
    PyObject **items = PySequence_Fast_ITEMS(operands);
    if (num_ops == 0) {
        PyErr_SetString(PyExc_RuntimeError, "einsum(): must provide at least one operand");
        return NULL;
    }
    uint8_t(*labels)[EIN_MAX_LABELS] = calloc((size_t)num_ops, sizeof *labels);
    int *nlab = calloc((size_t)num_ops, sizeof(int));
    pct_tensor **ops = calloc((size_t)num_ops, sizeof(pct_tensor *));
    PyObject *result = NULL;
    if (!labels || !nlab || !ops) { PyErr_NoMemory(); goto done; }

    const char *arrow = strstr(eq, "->");
    const Py_ssize_t lhs_len = arrow ? arrow - eq : len;
    {
        bool ell_in_input = false;
        Py_ssize_t curr = 0;
        for (Py_ssize_t i = 0; i < lhs_len; i++) {
            unsigned char c = (unsigned char)eq[i];
            if (c == ' ') continue;
            if (c == '.') {
                if (ell_in_input) {
                    PyErr_Format(PyExc_RuntimeError, "einsum(): found '.' for operand %zd for which an ellipsis was already found", curr);
                    goto done;
                }
                if (!(i + 2 < lhs_len && eq[++i] == '.' && eq[++i] == '.')) {
                    PyErr_Format(PyExc_RuntimeError, "einsum(): found '.' for operand %zd that is not part of any ellipsis", curr);
                    goto done;
                }
                if (nlab[curr] < EIN_MAX_LABELS) labels[curr][nlab[curr]] = EIN_ELLIPSIS;
                nlab[curr]++;
                ell_in_input = true;
            } else if (c == ',') {
                if (++curr >= num_ops) {
                    PyErr_SetString(PyExc_RuntimeError, "einsum(): fewer operands were provided than specified in the equation");
                    goto done;
                }
                ell_in_input = false;
            } else {
                if (!ein_isalpha(c)) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "einsum(): invalid subscript given at index %zd in the equation string, subscripts must be in [a-zA-Z]", i);
                    goto done;
                }
                if (nlab[curr] < EIN_MAX_LABELS) labels[curr][nlab[curr]] = (uint8_t)ein_sub(c);
                nlab[curr]++;
            }
        }
        if (curr != num_ops - 1) {
            PyErr_SetString(PyExc_RuntimeError, "einsum(): more operands were provided than specified in the equation");
            goto done;
        }
    }

    int64_t label_count[EIN_TOTAL] = {0};
    int ell_num_dim = 0;
    for (Py_ssize_t i = 0; i < num_ops; i++) {
        const pct_tensor *t = (const pct_tensor *)items[i];
        int nlabels = nlab[i];
        bool has_ell = false;
        for (int j = 0; j < imin(nlab[i], EIN_MAX_LABELS); j++) {
            if (labels[i][j] == EIN_ELLIPSIS) {
                nlabels--;
                has_ell = true;
                if (t->ndim - nlabels > ell_num_dim) ell_num_dim = t->ndim - nlabels;
            } else {
                label_count[labels[i][j]]++;
            }
        }
        if (has_ell ? nlabels > t->ndim : nlabels != t->ndim) {
            if (has_ell)
                PyErr_Format(PyExc_RuntimeError,
                             "einsum(): the number of subscripts in the equation (%d) is more than the number of "
                             "dimensions (%d) for operand %zd", nlabels, t->ndim, i);
            else
                PyErr_Format(PyExc_RuntimeError,
                             "einsum(): the number of subscripts in the equation (%d) does not match the number of "
                             "dimensions (%d) for operand %zd and no ellipsis was given", nlabels, t->ndim, i);
            goto done;
        }
    }

    int label_perm_index[EIN_TOTAL];
    for (int l = 0; l < EIN_TOTAL; l++) label_perm_index[l] = -1;
    int perm_index = 0, ell_index = 0;
    bool ell_in_output = false;
    if (!arrow) {
        perm_index = ell_num_dim;
        ell_in_output = true;
        for (int l = 0; l < EIN_TOTAL; l++)
            if (label_count[l] == 1) label_perm_index[l] = perm_index++;
    } else {
        const char *rhs = arrow + 2;
        const Py_ssize_t rhs_len = len - lhs_len - 2;
        for (Py_ssize_t i = 0; i < rhs_len; i++) {
            unsigned char c = (unsigned char)rhs[i];
            if (c == ' ') continue;
            if (c == '.') {
                if (ell_in_output) {
                    PyErr_SetString(PyExc_RuntimeError, "einsum(): found '.' for output but an ellipsis (...) was already found");
                    goto done;
                }
                if (!(i + 2 < rhs_len && rhs[++i] == '.' && rhs[++i] == '.')) {
                    PyErr_SetString(PyExc_RuntimeError, "einsum(): found '.' for output that is not part of any ellipsis (...)");
                    goto done;
                }
                ell_index = perm_index;
                perm_index += ell_num_dim;
                ell_in_output = true;
            } else {
                if (!ein_isalpha(c)) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "einsum(): invalid subscript given at index %zd in the equation string, subscripts must be in [a-zA-Z]",
                                 lhs_len + 2 + i);
                    goto done;
                }
                int idx = ein_sub(c);
                if (!(label_count[idx] > 0 && label_perm_index[idx] == -1)) {
                    PyErr_Format(PyExc_RuntimeError, "einsum(): output subscript %c%s", c,
                                 label_perm_index[idx] > -1 ? " appears more than once in the output"
                                                            : " does not appear in the equation for any input operand");
                    goto done;
                }
                label_perm_index[idx] = perm_index++;
            }
        }
    }
    const int out_num_dim = perm_index;
    if (!ell_in_output) {
        ell_index = perm_index;
        perm_index += ell_num_dim;
    }
    for (int l = 0; l < EIN_TOTAL; l++)
        if (label_count[l] > 0 && label_perm_index[l] == -1) label_perm_index[l] = perm_index++;
    if (perm_index > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "einsum(): too many dimensions (%d; at most %d are supported)", perm_index, PCT_MAX_DIMS);
        goto done;
    }

    /* align every operand to perm_index dims: diagonals for repeated labels, size-1
     * dims for missing ones, then one permutation */
    int64_t label_size[EIN_TOTAL], ell_sizes[PCT_MAX_DIMS], dim_counts[PCT_MAX_DIMS] = {0};
    for (int l = 0; l < EIN_TOTAL; l++) label_size[l] = 1;
    for (int j = 0; j < ell_num_dim; j++) ell_sizes[j] = 1;
    for (Py_ssize_t i = 0; i < num_ops; i++) {
        pct_tensor *t = (pct_tensor *)items[i];
        int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS], perm[PCT_MAX_DIMS];
        int nd = t->ndim, dim = 0;
        memcpy(sz, t->sizes, sizeof(int64_t) * (size_t)nd);
        memcpy(st, t->strides, sizeof(int64_t) * (size_t)nd);
        for (int j = 0; j < perm_index; j++) perm[j] = -1;
        for (int j = 0; j < nlab[i]; j++) {
            const int s = labels[i][j];
            if (s == EIN_ELLIPSIS) {
                const int ndim = t->ndim - (nlab[i] - 1);
                for (int e = ell_num_dim - ndim; e < ell_num_dim; e++) {
                    if (sz[dim] != 1) {
                        if (!(ell_sizes[e] == 1 || ell_sizes[e] == sz[dim])) {
                            PyErr_Format(PyExc_RuntimeError,
                                         "einsum(): dimension %d covered by ellipsis in operand %zdhas size %lld which does "
                                         "not broadcast with previously seen ellipsis with size %lld for the respective dimension",
                                         dim, i, (long long)sz[dim], (long long)ell_sizes[e]);
                            goto done;
                        }
                        ell_sizes[e] = sz[dim];
                        dim_counts[ell_index + e]++;
                    }
                    perm[ell_index + e] = dim++;
                }
            } else if (perm[label_perm_index[s]] == -1) {
                if (sz[dim] != 1) {
                    if (!(label_size[s] == 1 || label_size[s] == sz[dim])) {
                        PyErr_Format(PyExc_RuntimeError,
                                     "einsum(): subscript %c has size %lld for operand %zd which does not broadcast with "
                                     "previously seen size %lld", ein_label(s), (long long)sz[dim], i, (long long)label_size[s]);
                        goto done;
                    }
                    label_size[s] = sz[dim];
                    dim_counts[label_perm_index[s]]++;
                }
                perm[label_perm_index[s]] = dim++;
            } else {
                /* repeated label: take the diagonal (dims prev and dim become one, at prev) */
                const int64_t prev = perm[label_perm_index[s]];
                if (sz[dim] != sz[prev]) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "einsum(): subscript %c is repeated for operand %zd but the sizes don't match, %lld != %lld",
                                 ein_label(s), i, (long long)sz[dim], (long long)sz[prev]);
                    goto done;
                }
                st[prev] += st[dim];
                for (int q = dim; q < nd - 1; q++) { sz[q] = sz[q + 1]; st[q] = st[q + 1]; }
                nd--;
            }
        }
        for (int j = 0; j < perm_index; j++) {
            if (perm[j] == -1) { /* unsqueeze at the end */
                sz[nd] = 1;
                st[nd] = 1;
                nd++;
                perm[j] = dim++;
            }
        }
        int64_t psz[PCT_MAX_DIMS], pst[PCT_MAX_DIMS];
        for (int j = 0; j < perm_index; j++) { psz[j] = sz[perm[j]]; pst[j] = st[perm[j]]; }
        if (!(ops[i] = view_with(t, perm_index, psz, pst))) goto done;
    }

    /* contract left to right */
    Py_ssize_t nops = num_ops;
    while (nops > 1) {
        pct_tensor *a = ops[0], *b = ops[1];
        for (Py_ssize_t q = 2; q < nops; q++) ops[q - 2] = ops[q];
        ops[nops - 2] = ops[nops - 1] = NULL;
        nops -= 2;
        int64_t sum_dims[PCT_MAX_DIMS];
        int nsum = 0;
        bool amask[PCT_MAX_DIMS] = {false}, bmask[PCT_MAX_DIMS] = {false}, asum = false, bsum = false;
        for (int d = out_num_dim; d < perm_index; d++) {
            if (a->sizes[d] != 1 && b->sizes[d] != 1) {
                if (--dim_counts[d] == 1) {
                    sum_dims[nsum++] = d;
                    dim_counts[d] = 0;
                }
            } else if (dim_counts[d] == 1) {
                if (a->sizes[d] != 1) { amask[d] = asum = true; dim_counts[d] = 0; }
                else if (b->sizes[d] != 1) { bmask[d] = bsum = true; dim_counts[d] = 0; }
            }
        }
        pct_tensor *r = NULL;
        if (asum) { pct_tensor *s = sum_keepdim(a, amask); Py_SETREF(a, s); }
        if (a && bsum) { pct_tensor *s = sum_keepdim(b, bmask); Py_SETREF(b, s); }
        if (a && b) r = sumproduct_pair(a, b, sum_dims, nsum);
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (!r) goto done;
        for (Py_ssize_t q = nops; q > 0; q--) ops[q] = ops[q - 1];
        ops[0] = r;
        nops++;
    }

    if (perm_index - out_num_dim > 0) {
        if (num_ops > 1) {
            result = (PyObject *)view_with(ops[0], out_num_dim, ops[0]->sizes, ops[0]->strides);
        } else {
            bool mask[PCT_MAX_DIMS] = {false};
            for (int d = out_num_dim; d < perm_index; d++) mask[d] = true;
            int od = pct_dtype_is_floating(ops[0]->dtype) ? ops[0]->dtype : PCT_INT64;
            result = (PyObject *)reduce(ops[0], mask, false, od, RED_SUM, 0.0);
        }
    } else {
        result = (PyObject *)ops[0];
        ops[0] = NULL;
    }
done:
    if (ops)
        for (Py_ssize_t i = 0; i < num_ops; i++) Py_XDECREF(ops[i]);
    free(ops);
    free(labels);
    free(nlab);
    return result;
}

/* ---- linalg.vector_norm / matrix_norm / norm ---- */

/* a Scalar as torch prints it in messages ("2", "inf", "-1.5") */
static const char *scalar_str(char *buf, size_t n, const pct_scalar *s)
{
    if (s->kind != PCT_SCALAR_FLOAT) snprintf(buf, n, "%lld", (long long)s->i);
    else snprintf(buf, n, "%g", s->d);
    return buf;
}

static int check_norm_dtype(bool has_dtype, int dtype, int self_dtype, const char *name)
{
    if (!has_dtype) return 0;
    if (!pct_dtype_is_floating(dtype)) {
        PyErr_Format(PyExc_RuntimeError, "%s: dtype should be floating point or complex, but got %s", name, pct_dtype_cpp_name[dtype]);
        return -1;
    }
    if (pct_promote_types(self_dtype, dtype) != dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: the dtype of the input (%s) should be convertible without narrowing to the specified dtype (%s)",
                     name, pct_dtype_cpp_name[self_dtype], pct_dtype_cpp_name[dtype]);
        return -1;
    }
    return 0;
}

static int check_floating(const pct_tensor *t, const char *name)
{
    if (!pct_dtype_is_floating(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "%s: Expected a floating point or complex tensor as input. Got %s", name,
                     pct_dtype_cpp_name[t->dtype]);
        return -1;
    }
    return 0;
}

static int ord_kind(double ord)
{
    if (ord == 0.0) return RED_L0;
    if (ord == 1.0) return RED_L1;
    if (ord == 2.0) return RED_L2;
    if (ord == INFINITY) return RED_MAX_ABS;
    if (ord == -INFINITY) return RED_MIN_ABS;
    return RED_LP;
}

/* Copies a computed result into out= (torch's resize_output + copy_), or returns it. */
static PyObject *deliver(pct_tensor *r, pct_tensor *out)
{
    if (!r || !out) return (PyObject *)r;
    if (pct_out_resize(out, r->ndim, r->sizes) < 0 || pct_copy_(out, r) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    Py_DECREF(r);
    Py_INCREF(out);
    return (PyObject *)out;
}

/* dims: NULL for None (all dims); n may be 0 (also all dims) */
static pct_tensor *vector_norm_impl(pct_tensor *x, const pct_scalar *ord_s, const int64_t *dims, int ndims, bool keepdim,
                                    bool has_dtype, int dtype, pct_tensor *out)
{
    char ob[64];
    if (check_floating(x, "linalg.vector_norm") < 0) return NULL;
    const double ord = ord_s->d;
    if (x->numel == 0 && (ord < 0.0 || ord == INFINITY)) {
        if (!dims || ndims == 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "linalg.vector_norm cannot compute the %s norm on an empty tensor because the operation does not "
                         "have an identity", scalar_str(ob, sizeof ob, ord_s));
            return NULL;
        }
        for (int i = 0; i < ndims; i++) {
            int d = pct_wrap_dim(dims[i], x->ndim);
            if (d < 0) return NULL;
            if ((x->ndim ? x->sizes[d] : 1) == 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "linalg.vector_norm cannot compute the %s norm on the dimension %lldbecause this dimension "
                             "is empty and the operation does not have an identity",
                             scalar_str(ob, sizeof ob, ord_s), (long long)dims[i]);
                return NULL;
            }
        }
    }
    if (check_norm_dtype(has_dtype, dtype, x->dtype, "linalg.vector_norm") < 0) return NULL;
    bool mask[PCT_MAX_DIMS + 1];
    if (!dims || ndims == 0) {
        for (int d = 0; d < x->ndim; d++) mask[d] = true;
    } else if (dims_to_mask(dims, ndims, x->ndim, mask) < 0) {
        return NULL;
    }
    const int odt = has_dtype ? dtype : x->dtype;
    if (pct_out_check_dtype(out, odt) < 0) return NULL;
    pct_tensor *r = reduce(x, mask, keepdim, odt, ord_kind(ord), ord);
    return (pct_tensor *)deliver(r, out);
}

/* ord_str: "fro"/"nuc" or NULL (then ord_s is the numeric order) */
static pct_tensor *matrix_norm_impl(pct_tensor *A, const pct_scalar *ord_s, const char *ord_str, const int64_t *dims_in,
                                    int ndims, bool keepdim, bool has_dtype, int dtype)
{
    char ob[64], db[PCT_SHAPE_BUF];
    double ord = 0, abs_ord = 0;
    if (!ord_str) {
        ord = ord_s->d;
        abs_ord = fabs(ord);
        if (!(abs_ord == 2.0 || abs_ord == 1.0 || abs_ord == INFINITY)) {
            PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: Order %s not supported.", scalar_str(ob, sizeof ob, ord_s));
            return NULL;
        }
    } else if (strcmp(ord_str, "fro") != 0 && strcmp(ord_str, "nuc") != 0) {
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: Order %s not supported.", ord_str);
        return NULL;
    }
    const bool low_precision_ok = ord_str ? strcmp(ord_str, "nuc") != 0 : abs_ord != 2.0;
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
        return NULL;
    }
    if (check_floating(A, "linalg.matrix_norm") < 0) return NULL;
    if (!low_precision_ok && pct_dtype_is_reduced_float(A->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: Low precision dtypes not supported. Got %s", pct_dtype_cpp_name[A->dtype]);
        return NULL;
    }
    if (ndims != 2) {
        /* torch prints the dims space-separated */
        size_t at = 0;
        db[0] = 0;
        for (int i = 0; i < ndims && at < sizeof db; i++)
            at += (size_t)snprintf(db + at, sizeof db - at, "%s%lld", i ? " " : "", (long long)dims_in[i]);
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", db);
        return NULL;
    }
    int d0 = pct_wrap_dim(dims_in[0], A->ndim), d1 = d0 < 0 ? -1 : pct_wrap_dim(dims_in[1], A->ndim);
    if (d0 < 0 || d1 < 0) return NULL;
    if (d0 == d1) {
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: dims must be different. Got (%d, %d)", d0, d1);
        return NULL;
    }
    if (check_norm_dtype(has_dtype, dtype, A->dtype, "linalg.matrix_norm") < 0) return NULL;
    const int odt = has_dtype ? dtype : A->dtype;
    if (ord_str && strcmp(ord_str, "fro") == 0) {
        const int64_t dd[2] = {d0, d1};
        const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0};
        return vector_norm_impl(A, &two, dd, 2, keepdim, has_dtype, dtype, NULL);
    }
    if (ord_str) return pct_svd_norm(A, d0, d1, 0, keepdim, odt);
    if (abs_ord == 2.0) return pct_svd_norm(A, d0, d1, ord > 0 ? 2 : -2, keepdim, odt);
    /* 1, -1, inf, -inf: max / min over one dim of the abs-sums over the other */
    if (abs_ord == INFINITY) { int t = d0; d0 = d1; d1 = t; }
    if (!keepdim && d0 < d1) d1--;
    const int64_t dd[1] = {d0};
    const pct_scalar one = {PCT_SCALAR_INT, 1, 1.0, 0};
    pct_tensor *s = vector_norm_impl(A, &one, dd, 1, keepdim, has_dtype, dtype, NULL);
    if (!s) return NULL;
    if (ord < 0 && s->sizes[d1] == 0) { /* torch's amin rejects an empty dim (amax gives 0) */
        Py_DECREF(s);
        PyErr_Format(PyExc_IndexError, "amin(): Expected reduction dim %d to have non-zero size.", d1);
        return NULL;
    }
    bool mask[PCT_MAX_DIMS] = {false};
    mask[d1] = true;
    pct_tensor *r = reduce(s, mask, keepdim, s->dtype, ord > 0 ? RED_MAX : RED_MIN, 0.0);
    Py_DECREF(s);
    return r;
}

static PyObject *deliver_checked(pct_tensor *r, pct_tensor *out, const char *api)
{
    if (r && out && r->dtype != out->dtype) {
        PyErr_Format(PyExc_RuntimeError, "%s expected out tensor dtype %s but got: %s", api, pct_dtype_cpp_name[r->dtype],
                     pct_dtype_cpp_name[out->dtype]);
        Py_DECREF(r);
        return NULL;
    }
    return deliver(r, out);
}

/* linalg.norm: ord_s NULL for None; ord_str for the string overload; dims NULL for None */
static PyObject *linalg_norm_impl(pct_tensor *X, const pct_scalar *ord_s, const char *ord_str, const int64_t *dims,
                                  int ndims, bool keepdim, bool has_dtype, int dtype, pct_tensor *out)
{
    char db[PCT_SHAPE_BUF];
    if (dims) {
        if (ndims != 1 && ndims != 2) {
            PyErr_Format(PyExc_RuntimeError, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s",
                         SHAPE_OF(db, ndims, dims));
            return NULL;
        }
    } else if ((ord_s || ord_str) && X->ndim != 1 && X->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.",
                     X->ndim);
        return NULL;
    }
    const int64_t d01[2] = {0, 1};
    pct_tensor *r;
    if (ord_str || (ord_s && ((dims && ndims == 2) || (!dims && X->ndim == 2)))) {
        r = matrix_norm_impl(X, ord_s, ord_str, dims ? dims : d01, dims ? ndims : 2, keepdim, has_dtype, dtype);
    } else {
        const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0};
        r = vector_norm_impl(X, ord_s ? ord_s : &two, dims, ndims, keepdim, has_dtype, dtype, NULL);
    }
    return deliver_checked(r, out, "linalg.norm");
}

/* ------------------------------------------------------------------------------------ */
/* 4. kernels (ops_linalg.def)                                                           */
/* ------------------------------------------------------------------------------------ */

#define T(i) (c->v[i].t)
#define OUT (c->inplace ? NULL : c->out)

PyObject *pct_cpu_matmul(pct_call *c) { return pct_matmul(T(0), T(1), c->out); }
PyObject *pct_cpu_mm(pct_call *c) { return mm_op(T(0), T(1), c->out); }
PyObject *pct_cpu_bmm(pct_call *c) { return bmm_op(T(0), T(1), c->out); }
PyObject *pct_cpu_mv(pct_call *c) { return mv_op(T(0), T(1), c->out); }
PyObject *pct_cpu_dot(pct_call *c) { return dot_op(T(0), T(1), c->out); }
PyObject *pct_cpu_inner(pct_call *c) { return inner_op(T(0), T(1), c->out); }
PyObject *pct_cpu_outer(pct_call *c) { return outer_op(T(0), T(1), c->out); }
PyObject *pct_cpu_trace(pct_call *c) { return trace_op(T(0)); }
PyObject *pct_cpu_kron(pct_call *c) { return kron_op(T(0), T(1), c->out); }

PyObject *pct_cpu_addmm(pct_call *c)
{
    if (pct_scalar_check_opmath(&c->v[3].s, T(1)->dtype) < 0 || pct_scalar_check_opmath(&c->v[4].s, T(1)->dtype) < 0)
        return NULL;
    return addmm_op(T(0), T(1), T(2), &c->v[3].s, &c->v[4].s, OUT, c->inplace);
}

PyObject *pct_cpu_addmv(pct_call *c)
{
    if (c->inplace) return addmv_op(T(0), T(1), T(2), &c->v[3].s, &c->v[4].s, T(0), true);
    return addmv_op(T(0), T(1), T(2), &c->v[3].s, &c->v[4].s, c->out, false);
}

/* t.size(dim) in torch: IndexError where t has no such dim */
static int torch_size_access(const pct_tensor *t, int dim)
{
    if (dim < t->ndim) return 0;
    if (t->ndim == 0) PyErr_Format(PyExc_IndexError, "Dimension specified as %d but tensor has no dimensions", dim);
    else PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                      -t->ndim, t->ndim - 1, dim);
    return -1;
}

PyObject *pct_cpu_baddbmm(pct_call *c)
{
    /* torch first sizes self's expansion from batch1.size(0), batch1.size(1), batch2.size(2), then checks ranks */
    if (torch_size_access(T(1), 0) < 0 || torch_size_access(T(1), 1) < 0 || torch_size_access(T(2), 2) < 0) return NULL;
    if (pct_scalar_check_opmath(&c->v[3].s, T(1)->dtype) < 0 || pct_scalar_check_opmath(&c->v[4].s, T(1)->dtype) < 0)
        return NULL;
    return baddbmm_op(T(0), T(1), T(2), &c->v[3].s, &c->v[4].s, OUT, c->inplace);
}

PyObject *pct_cpu_tensordot(pct_call *c)
{
    if (c->v[2].none && c->v[2].obj == Py_None) { /* the default is 2; an explicit None is refused */
        PyErr_SetString(PyExc_RuntimeError, "tensordot expects dims to be int or tuple[list[int], list[int]] or "
                                            "list[list[int]] containing two lists, but got dims=None");
        return NULL;
    }
    return tensordot_op(T(0), T(1), c->v[2].none ? NULL : c->v[2].obj, c->out);
}

PyObject *pct_cpu_einsum(pct_call *c) { return einsum_op(c->v[0].obj, c->v[1].obj); }

/* linalg_vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) */
PyObject *pct_cpu_linalg_vector_norm(pct_call *c)
{
    /* Real floating inputs take reduce.c's norm (vectorized, float accumulation in a cascade
     * as torch; the signatures share their argument positions): the double loops below cost
     * 7x torch on a (256, 256) gradient, which clip_grad_norm_ runs once per parameter. Empty
     * inputs, dtype= and out= stay here, for linalg's own error messages. */
    if (pct_dtype_is_floating(T(0)->dtype) && T(0)->numel > 0 && c->v[4].none && !c->out) return pct_cpu_norm(c);
    const pct_value *dim = &c->v[2];
    return (PyObject *)vector_norm_impl(T(0), &c->v[1].s, dim->none ? NULL : dim->list, dim->none ? 0 : dim->n, c->v[3].b,
                                        !c->v[4].none, c->v[4].dtype, c->out);
}

/* linalg_matrix_norm(input, ord, dim=[-2, -1], keepdim=False, *, dtype=None, out=None) */
static PyObject *matrix_norm_entry(pct_call *c, const char *ord_str)
{
    const pct_value *dim = &c->v[2];
    pct_tensor *r = matrix_norm_impl(T(0), &c->v[1].s, ord_str, dim->list, dim->n, c->v[3].b, !c->v[4].none, c->v[4].dtype);
    return deliver_checked(r, c->out, "linalg.matrix_norm");
}

PyObject *pct_linalg_matrix_norm_str(pct_tensor *A, const char *ord_str, const int64_t *dims, int ndims, bool keepdim,
                                     bool has_dtype, int dtype, pct_tensor *out)
{
    pct_tensor *r = matrix_norm_impl(A, NULL, ord_str, dims, ndims, keepdim, has_dtype, dtype);
    return deliver_checked(r, out, "linalg.matrix_norm");
}

PyObject *pct_cpu_linalg_matrix_norm(pct_call *c) { return matrix_norm_entry(c, NULL); }

PyObject *pct_cpu_linalg_matrix_norm_str(pct_call *c)
{
    const char *ord = c->v[1].obj ? PyUnicode_AsUTF8(c->v[1].obj) : "fro";
    if (!ord) return NULL;
    return matrix_norm_entry(c, ord);
}

/* linalg_norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None) */
PyObject *pct_cpu_linalg_norm(pct_call *c)
{
    const pct_value *dim = &c->v[2];
    return linalg_norm_impl(T(0), c->v[1].none ? NULL : &c->v[1].s, NULL, dim->none ? NULL : dim->list,
                            dim->none ? 0 : dim->n, c->v[3].b, !c->v[4].none, c->v[4].dtype, c->out);
}

PyObject *pct_cpu_linalg_norm_str(pct_call *c)
{
    const pct_value *dim = &c->v[2];
    const char *ord = PyUnicode_AsUTF8(c->v[1].obj);
    if (!ord) return NULL;
    return linalg_norm_impl(T(0), NULL, ord, dim->none ? NULL : dim->list, dim->none ? 0 : dim->n, c->v[3].b,
                            !c->v[4].none, c->v[4].dtype, c->out);
}

#undef T
#undef OUT
