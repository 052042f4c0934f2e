/* blas.c: GEMM and its direct users (the matrix-matrix kernels of ops_linalg.def).
 *
 * Layers, bottom up:
 *   1. GEMM core (GIL-free): gemm_run() computes C = alpha * A @ B + beta * C over a
 *      batch of strided matrices. float32/float64 and complex64/complex128 go to OpenBLAS
 *      (s/d/c/z, Note [BLAS dtypes]) with transposes read from the strides (Note [GEMM
 *      layouts]); float16/bfloat16 are widened to float32 around sgemm; integral dtypes
 *      (and everything in a build without OpenBLAS, and tiny products) use a blocked loop
 *      (Note [Blocked fallback GEMM], one instance of gemm_naive_impl.h per dtype). Batches of small matrices run in parallel over the
 *      batch (Note [Batch parallelism]). The strided dot kernel sits beside it.
 *   2. pct_la_run_gemm(): the tensor-level entry the product ops share.
 *   3. mm/addmm and bmm/baddbmm, following the checks of their ATen counterparts
 *      (LinearAlgebra.cpp, Blas.cpp) so that errors read the same, and their
 *      pct_cpu_* entry points named in ops_linalg.def.
 * The vector kernels live beside it: vector_products.c (dot, mv, outer, trace) and
 * linalg_norm.c (vector norms), with their shared helpers linalg_tensor_utils.c and
 * linalg_reduce.c (blas_internal.h). The products built from these ops (matmul, einsum,
 * tensordot, inner, kron) are composites in ../composite/ (Note [Composite ops], op.h).
 */
#include "blas_internal.h"
#include "../shapes_only.h"
#include "../iter.h"
#include "../error.h"
#include "../out.h"
#include "../gemm.h"
#include "../backend.h"
#include "pointwise.h"
#include "gemm_lowp.h"
#include "gemm_f32.h"
#include "blas_complex.h"
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

/* One blocked GEMM per dtype: naive_tile_<N> and naive_gemm_<N> (gemm_naive_impl.h).
 * Note: a parallel construct with a false if() clause still builds a one-thread team
 * in libgomp (a microsecond or more), so serial paths never enter one. */
#define GEMM_NAME Byte
#define GEMM_T uint8_t
#define GEMM_ACC uint64_t
#define GEMM_LOAD PCT_INT_LOAD
#define GEMM_STORE (uint8_t)
#include "gemm_naive_impl.h"
#define GEMM_NAME Char
#define GEMM_T int8_t
#define GEMM_ACC uint64_t
#define GEMM_LOAD PCT_INT_LOAD
#define GEMM_STORE (int8_t)(int64_t)
#include "gemm_naive_impl.h"
#define GEMM_NAME Short
#define GEMM_T int16_t
#define GEMM_ACC uint64_t
#define GEMM_LOAD PCT_INT_LOAD
#define GEMM_STORE (int16_t)(int64_t)
#include "gemm_naive_impl.h"
#define GEMM_NAME Int
#define GEMM_T int32_t
#define GEMM_ACC uint64_t
#define GEMM_LOAD PCT_INT_LOAD
#define GEMM_STORE (int32_t)(int64_t)
#include "gemm_naive_impl.h"
#define GEMM_NAME Long
#define GEMM_T int64_t
#define GEMM_ACC uint64_t
#define GEMM_LOAD PCT_INT_LOAD
#define GEMM_STORE (int64_t)
#include "gemm_naive_impl.h"
#define GEMM_NAME Half
#define GEMM_T pct_half
#define GEMM_ACC float
#define GEMM_LOAD pct_half_to_float
#define GEMM_STORE pct_float_to_half
#include "gemm_naive_impl.h"
#define GEMM_NAME BFloat16
#define GEMM_T pct_bfloat16
#define GEMM_ACC float
#define GEMM_LOAD pct_bf16_to_float
#define GEMM_STORE pct_float_to_bf16
#include "gemm_naive_impl.h"
#define GEMM_NAME Float
#define GEMM_T float
#define GEMM_ACC float
#define GEMM_LOAD (float)
#define GEMM_STORE (float)
#include "gemm_naive_impl.h"
#define GEMM_NAME Double
#define GEMM_T double
#define GEMM_ACC double
#define GEMM_LOAD (double)
#define GEMM_STORE (double)
#include "gemm_naive_impl.h"
/* complex: products too small for BLAS, data whose sizes exceed BLAS's int, builds without OpenBLAS */
#define GEMM_NAME ComplexFloat
#define GEMM_T pct_cfloat
#define GEMM_ACC pct_cfloat
#define GEMM_LOAD (pct_cfloat)
#define GEMM_STORE (pct_cfloat)
#include "gemm_naive_impl.h"
#define GEMM_NAME ComplexDouble
#define GEMM_T pct_cdouble
#define GEMM_ACC pct_cdouble
#define GEMM_LOAD (pct_cdouble)
#define GEMM_STORE (pct_cdouble)
#include "gemm_naive_impl.h"

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
    case PCT_COMPLEX64:
        return naive_gemm_ComplexFloat(PCT_NAIVE_ARGS, (pct_cfloat)pct_cdouble_of(g->alpha.d, g->alpha.im),
                                       (pct_cfloat)pct_cdouble_of(g->beta.d, g->beta.im), bz, PCT_NAIVE_PTRS);
    case PCT_COMPLEX128:
        return naive_gemm_ComplexDouble(PCT_NAIVE_ARGS, pct_cdouble_of(g->alpha.d, g->alpha.im),
                                        pct_cdouble_of(g->beta.d, g->beta.im), bz, PCT_NAIVE_PTRS);
    default: return -1;
    }
#undef PCT_NAIVE_ARGS
#undef PCT_NAIVE_PTRS
}

#ifdef PCT_HAVE_OPENBLAS
/* Note [BLAS dtypes]
 * The four dtypes OpenBLAS multiplies natively share one path: float32 / float64 (s, d) and complex64 / complex128
 * (c, z). Everything below (layout choice, packing, gemv for a vector operand, the threading split) is written once
 * over the dtype; only the innermost calls (gemm_call, gemv_call, the dot of a 1 x 1 product) switch on it. Complex
 * alpha / beta go to c/z by address as (re, im) pairs. Complex data must be naturally aligned for OpenBLAS's c/z
 * kernels (a complex view of a real tensor may start half an element off): an operand whose address is not a
 * multiple of its item size is packed like an operand of unsupported strides.
 * What stays off BLAS, and why: products of at most GEMM_SMALL multiply-adds (the call costs more than the loop),
 * sizes or leading dimensions past BLAS's int, and a build without OpenBLAS run the blocked loop; a 1 x 1 product
 * whose vectors have stride 0 or past int runs it too (dot takes no other layout). Every other layout reaches BLAS,
 * packed first where its strides are not a row-major or transposed matrix with a leading dimension (broadcast
 * stride 0, a sliced inner dimension, a negative stride). CblasConjTrans has no caller: pyctorch's conj() is
 * conj_physical (no lazy conjugate bit, is_conj() is False, pyctorch/_composites.py), so a conjugate operand is
 * always plain data by the time it gets here. */
typedef struct blas_coef {
    double re, im;
} blas_coef;

static bool blas_dtype(int dtype)
{
    return dtype == PCT_FLOAT32 || dtype == PCT_FLOAT64 || dtype == PCT_COMPLEX64 || dtype == PCT_COMPLEX128;
}

static bool blas_aligned(const void *p, int isz) { return ((uintptr_t)p & (uintptr_t)(isz - 1)) == 0; }

/* pct_gemm_layout for a BLAS operand: also false for data the c/z kernels cannot read (Note [BLAS dtypes]) */
static bool blas_layout(const void *p, int isz, int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans,
                        int64_t *ld)
{
    return blas_aligned(p, isz) && pct_gemm_layout(rows, cols, rs, cs, trans, ld);
}

static inline void copy_item(char *d, const char *s, int isz)
{
    switch (isz) { /* constant sizes: memcpy becomes one move, safe at any alignment */
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, 16); break;
    }
}

/* Note [GEMM layouts] (gemm.h): the output decides the orientation: a column-major C is computed as C^T = B^T A^T,
 * so nothing is ever transposed by copy when any orientation fits. */
static void pack_matrix(void *dst, const char *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int itemsize)
{
    for (int64_t i = 0; i < rows; i++) {
        const char *s = src + i * rs * itemsize;
        char *d = (char *)dst + i * cols * itemsize;
        if (cs == 1) { memcpy(d, s, (size_t)(cols * itemsize)); continue; }
        for (int64_t j = 0; j < cols; j++) copy_item(d + j * itemsize, s + j * cs * itemsize, itemsize);
    }
}

static void gemv_call(int dtype, bool trans, int64_t rows, int64_t cols, blas_coef alpha, const char *mat, int64_t ld,
                      const char *x, int64_t incx, blas_coef beta, char *y, int64_t incy)
{
    const enum CBLAS_TRANSPOSE tr = trans ? CblasTrans : CblasNoTrans;
    switch (dtype) {
    case PCT_FLOAT64:
        cblas_dgemv(CblasRowMajor, tr, (int)rows, (int)cols, alpha.re, (const double *)mat, (int)ld, (const double *)x,
                    (int)incx, beta.re, (double *)y, (int)incy);
        break;
    case PCT_FLOAT32:
        cblas_sgemv(CblasRowMajor, tr, (int)rows, (int)cols, (float)alpha.re, (const float *)mat, (int)ld,
                    (const float *)x, (int)incx, (float)beta.re, (float *)y, (int)incy);
        break;
    case PCT_COMPLEX64: {
        const float al[2] = {(float)alpha.re, (float)alpha.im}, be[2] = {(float)beta.re, (float)beta.im};
        cblas_cgemv(CblasRowMajor, tr, (int)rows, (int)cols, al, mat, (int)ld, x, (int)incx, be, y, (int)incy);
        break;
    }
    default: {
        const double al[2] = {alpha.re, alpha.im}, be[2] = {beta.re, beta.im};
        cblas_zgemv(CblasRowMajor, tr, (int)rows, (int)cols, al, mat, (int)ld, x, (int)incx, be, y, (int)incy);
        break;
    }
    }
}

/* y = op(M) x through gemv. M is rows x cols row-major with leading dimension ld;
 * trans: y[cols] = M^T x[rows], else y[rows] = M x[cols]. Vector strides in elements.
 * With nt > 1 threads, y is split into blocks, one single-threaded gemv each. */
static int blas_gemv(int dtype, bool trans, int64_t rows, int64_t cols, blas_coef alpha, const char *mat, int64_t ld,
                     const char *x, int64_t incx, blas_coef beta, bool beta_zero, char *y, int64_t incy, int nt)
{
    const int isz = pct_dtype_itemsize[dtype];
    const int64_t xlen = trans ? rows : cols, ylen = trans ? cols : rows;
    void *xbuf = NULL;
    if (xlen == 1) incx = 1;
    if (ylen == 1) incy = 1;
    if (incx == 0 || incx > INT32_MAX || !blas_aligned(x, isz)) {
        if (!(xbuf = malloc((size_t)(xlen * isz)))) return -1;
        pack_matrix(xbuf, x, xlen, 1, incx, 1, isz);
        x = xbuf;
        incx = 1;
    }
    if (beta_zero) { /* beta == 0 must ignore y (NaN included), whatever scal does */
        for (int64_t i = 0; i < ylen; i++) memset(y + i * incy * isz, 0, (size_t)isz);
        beta = (blas_coef){0.0, 0.0};
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
                if (trans) gemv_call(dtype, true, rows, y1 - y0, alpha, mat + y0 * isz, ld, x, incx, beta, yb, incy);
                else gemv_call(dtype, false, y1 - y0, cols, alpha, mat + y0 * ld * isz, ld, x, incx, beta, yb, incy);
            }
        }
    } else {
        /* a small gemv is not worth waking threads for, but OpenBLAS threads gemv from
         * 9216 elements: cap this thread's OpenMP ICV (it is per thread) for the call */
#ifdef _OPENMP
        const int saved = omp_in_parallel() ? 1 : omp_get_max_threads();
        if (saved > 1) omp_set_num_threads(1);
#endif
        gemv_call(dtype, trans, rows, cols, alpha, mat, ld, x, incx, beta, y, incy);
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
static void gemm_call(int dtype, bool at, bool bt, int64_t m, int64_t n, int64_t k, blas_coef alpha, const char *a,
                      int64_t lda, const char *b, int64_t ldb, blas_coef beta, char *c, int64_t ldc)
{
    const enum CBLAS_TRANSPOSE ta = at ? CblasTrans : CblasNoTrans, tb = bt ? CblasTrans : CblasNoTrans;
    switch (dtype) {
    case PCT_FLOAT64:
        cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, alpha.re, (const double *)a, (int)lda,
                    (const double *)b, (int)ldb, beta.re, (double *)c, (int)ldc);
        break;
    case PCT_FLOAT32:
        cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, (float)alpha.re, (const float *)a, (int)lda,
                    (const float *)b, (int)ldb, (float)beta.re, (float *)c, (int)ldc);
        break;
    case PCT_COMPLEX64: {
        const float al[2] = {(float)alpha.re, (float)alpha.im}, be[2] = {(float)beta.re, (float)beta.im};
        cblas_cgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, al, a, (int)lda, b, (int)ldb, be, c, (int)ldc);
        break;
    }
    default: {
        const double al[2] = {alpha.re, alpha.im}, be[2] = {beta.re, beta.im};
        cblas_zgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, al, a, (int)lda, b, (int)ldb, be, c, (int)ldc);
        break;
    }
    }
}

static void gemm_split(int dtype, bool at, bool bt, int64_t m, int64_t n, int64_t k, blas_coef alpha, const char *a,
                       int64_t lda, const char *b, int64_t ldb, blas_coef beta, char *c, int64_t ldc, int nt)
{
    const int isz = pct_dtype_itemsize[dtype];
    /* a complex multiply-add is four real ones: the threshold counts real flops */
    const int64_t work = m * n * k * (pct_dtype_is_complex(dtype) ? 4 : 1);
    if (nt <= 1 || work <= GEMM_SPLIT_MIN || imax(m, n) < 32) {
        gemm_call(dtype, at, bt, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
                gemm_call(dtype, at, bt, s1 - s0, n, k, alpha, a + (at ? s0 : s0 * lda) * isz, lda, b, ldb, beta,
                          c + s0 * ldc * isz, ldc);
            else         /* columns s0..s1 of B and C */
                gemm_call(dtype, at, bt, m, s1 - s0, k, alpha, a, lda, b + (bt ? s0 * ldb : s0) * isz, ldb, beta,
                          c + s0 * isz, ldc);
        }
    }
}

/* The 1 x 1 product of a row of A and a column of B: c = alpha * dot + beta * c (c not read when beta is zero). The
 * caller has checked that the strides fit BLAS. */
static void blas_dot_one(const gemm_one_args *g, int64_t incx, int64_t incy)
{
    const int k = (int)g->k;
    switch (g->dtype) {
    case PCT_FLOAT64: {
        const double r = cblas_ddot(k, (const double *)g->a, (int)incx, (const double *)g->b, (int)incy);
        *(double *)g->c = g->alpha.d * r + (g->beta.zero ? 0.0 : g->beta.d * *(double *)g->c);
        break;
    }
    case PCT_FLOAT32: {
        const float r = cblas_sdot(k, (const float *)g->a, (int)incx, (const float *)g->b, (int)incy);
        *(float *)g->c = (float)g->alpha.d * r + (g->beta.zero ? 0.0f : (float)g->beta.d * *(float *)g->c);
        break;
    }
    default: { /* complex: the sum in the dtype's precision, alpha and beta applied in double */
        double r[2] = {0, 0}, cr = 0, ci = 0;
        if (g->dtype == PCT_COMPLEX64) {
            float rf[2];
            cblas_cdotu_sub(k, g->a, (int)incx, g->b, (int)incy, rf);
            r[0] = rf[0];
            r[1] = rf[1];
        } else {
            cblas_zdotu_sub(k, g->a, (int)incx, g->b, (int)incy, r);
        }
        const pct_cdouble al = pct_cdouble_of(g->alpha.d, g->alpha.im), be = pct_cdouble_of(g->beta.d, g->beta.im);
        pct_cdouble v = al * pct_cdouble_of(r[0], r[1]);
        if (!g->beta.zero) {
            pct_load_as_complex(g->c, g->dtype, &cr, &ci);
            v += be * pct_cdouble_of(cr, ci);
        }
        pct_store_complex(g->c, g->dtype, __real__ v, __imag__ v);
        break;
    }
    }
}

/* float32 / float64 / complex64 / complex128 through BLAS (Note [BLAS dtypes]); -1 when out of memory. */
static int blas_gemm(const gemm_one_args *g, int nt)
{
    const int dtype = g->dtype;
    const int isz = pct_dtype_itemsize[dtype];
    const blas_coef alpha = {g->alpha.d, g->alpha.im};
    const blas_coef beta = g->beta.zero ? (blas_coef){0.0, 0.0} : (blas_coef){g->beta.d, g->beta.im};
    int64_t m = g->m, n = g->n, k = g->k;
    const char *a = g->a, *b = g->b;
    int64_t ars = g->ars, acs = g->acs, brs = g->brs, bcs = g->bcs;
    void *abuf = NULL, *bbuf = NULL, *cbuf = NULL;
    int rc = -1;
    bool ct, at, bt;
    int64_t ldc, lda, ldb;
    const bool c_aligned = blas_aligned(g->c, isz);

    /* vector cases: gemv is several times faster than gemm with a dimension of 1 */
    if (c_aligned && n == 1 && (m == 1 || (g->crs != 0 && g->crs <= INT32_MAX))) {
        if (m == 1) { /* dot */
            const int64_t incx = k == 1 ? 1 : acs, incy = k == 1 ? 1 : brs;
            if (k > 1 && (acs == 0 || brs == 0 || acs > INT32_MAX || brs > INT32_MAX)) return naive_gemm(g, false);
            if (!blas_aligned(a, isz) || !blas_aligned(b, isz)) return naive_gemm(g, false);
            blas_dot_one(g, incx, incy);
            return 0;
        }
        if (!blas_layout(a, isz, m, k, ars, acs, &at, &lda)) {
            if (!(abuf = malloc((size_t)(m * k * isz)))) return -1;
            pack_matrix(abuf, a, m, k, ars, acs, isz);
            a = abuf; at = false; lda = imax(k, 1);
        }
        rc = at ? blas_gemv(dtype, true, k, m, alpha, a, lda, b, brs, beta, g->beta.zero, g->c, g->crs, nt)
                : blas_gemv(dtype, false, m, k, alpha, a, lda, b, brs, beta, g->beta.zero, g->c, g->crs, nt);
        free(abuf);
        return rc;
    }
    if (c_aligned && m == 1 && g->ccs != 0 && g->ccs <= INT32_MAX) {
        if (!blas_layout(b, isz, k, n, brs, bcs, &bt, &ldb)) {
            if (!(bbuf = malloc((size_t)(k * n * isz)))) return -1;
            pack_matrix(bbuf, b, k, n, brs, bcs, isz);
            b = bbuf; bt = false; ldb = imax(n, 1);
        }
        /* y[n] = B^T x: B stored row-major (k x n) is Trans; stored transposed (n x k) is NoTrans */
        rc = bt ? blas_gemv(dtype, false, n, k, alpha, b, ldb, a, acs, beta, g->beta.zero, g->c, g->ccs, nt)
                : blas_gemv(dtype, true, k, n, alpha, b, ldb, a, acs, beta, g->beta.zero, g->c, g->ccs, nt);
        free(bbuf);
        return rc;
    }

    if (dtype == PCT_FLOAT32 && pct_gemm_f32_available()) { /* Note [float32 GEMM] in gemm_f32.c */
        const float fa = (float)alpha.re, fb = (float)beta.re;
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
    if (!blas_layout(g->c, isz, m, n, g->crs, g->ccs, &ct, &ldc)) {
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
    if (!blas_layout(a, isz, m, k, ars, acs, &at, &lda)) {
        if (!(abuf = malloc((size_t)(m * k * isz)))) goto done;
        pack_matrix(abuf, a, m, k, ars, acs, isz);
        a = abuf; at = false; lda = imax(k, 1);
    }
    if (!blas_layout(b, isz, k, n, brs, bcs, &bt, &ldb)) {
        if (!(bbuf = malloc((size_t)(k * n * isz)))) goto done;
        pack_matrix(bbuf, b, k, n, brs, bcs, isz);
        b = bbuf; bt = false; ldb = imax(n, 1);
    }
    gemm_split(dtype, at, bt, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc, nt);
    if (cbuf) { /* scatter the contiguous result into the strided C */
        const int64_t om = g->m, on = g->n;
        for (int64_t i = 0; i < om; i++)
            for (int64_t j = 0; j < on; j++)
                copy_item(g->c + (i * g->crs + j * g->ccs) * isz, (const char *)cbuf + (i * on + j) * isz, isz);
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
        if (blas_dtype(g->dtype)) return blas_gemm(g, nt);
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
            } else if (pct_dtype_is_complex(g->dtype)) {
                double re, im;
                pct_load_as_complex(p, g->dtype, &re, &im);
                const pct_cdouble v = pct_cdouble_of(g->beta.d, g->beta.im) * pct_cdouble_of(re, im);
                pct_store_complex(p, g->dtype, __real__ v, __imag__ v);
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
    if (batch == 0 || g->m == 0 || g->n == 0 || pct_shapes_only) return 0; /* Note [Shapes-only runs] */
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
        PCT_NOGIL_BEGIN
        rc = gemm_run(g);
        PCT_NOGIL_END
    } else {
        rc = gemm_run(g);
    }
    if (rc < 0) pct_error_nomem();
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
void pct_la_dot_kernel(int dtype, int64_t n, const char *x, int64_t sx, const char *y, int64_t sy, char *res)
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
/* 2. the tensor-level GEMM                                                              */
/* ------------------------------------------------------------------------------------ */

/* C[batch..., m, n] = alpha * A @ B + beta * C over tensors read with explicit strides
 * (elements; batch strides 0 for broadcast operands). When C shares memory with an
 * input the product goes through a temporary. 0, or -1 with an exception. */
int pct_la_run_gemm(pct_tensor *c, const int64_t *c_bs, int64_t crs, int64_t ccs,
                    pct_tensor *a, const int64_t *a_bs, int64_t ars, int64_t acs,
                    pct_tensor *b, const int64_t *b_bs, int64_t brs, int64_t bcs,
                    int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k, coef alpha, coef beta)
{
    if (c->device_type != PCT_CPU) /* Note [Device GEMM] */
        return pct_la_device_gemm(c, c_bs, crs, ccs, a, a_bs, ars, acs, b, b_bs, brs, bcs, nb, bsize, m, n, k, alpha, beta);
    if (a->dtype != c->dtype || b->dtype != c->dtype) { /* the callers check first: an internal slip must not misread */
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[c->dtype],
                  pct_dtype_cpp_name[a->dtype != c->dtype ? a->dtype : b->dtype]);
        return -1;
    }
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
    PCT_XDECREF(cv);
    PCT_XDECREF(tmp);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* 3. mm / addmm / bmm / baddbmm                                                         */
/* ------------------------------------------------------------------------------------ */

/* ---- addmm / mm ---- */

/* torch's float/double GEMM (MKL) applies alpha to the products: a non-finite alpha makes inf * 0 NaN and mixes
 * signs per product, where OpenBLAS scales the sums. For such an alpha, *a becomes a copy of *a times alpha (owned by
 * the caller through *owned) and alpha 1. */
static int prescale_nonfinite_alpha(pct_tensor **a, coef *alpha, const pct_scalar *alpha_s, pct_tensor **owned)
{
    *owned = NULL;
    if (((*a)->dtype != PCT_FLOAT32 && (*a)->dtype != PCT_FLOAT64) || isfinite(alpha->d)) return 0;
    pct_tensor *t = pct_to_dtype(*a, (*a)->dtype, true);
    if (!t || pct_la_scale_inplace(t, alpha_s) < 0) { PCT_XDECREF(t); return -1; }
    *a = *owned = t;
    *alpha = coef_from_double(1.0, t->dtype);
    return 0;
}

/* The dtypes a product runs in: every one but bool on the CPU (torch's "<cpu_name>" refusal), the floating ones on
 * another device (torch's CUDA kernels dispatch over floating types only: "<device_name>" not implemented for 'Int').
 * 0, or -1 with the error. */
static int refuse_dtype(int dtype, const pct_tensor *on, const char *cpu_name, const char *device_name)
{
    if (on->device_type == PCT_CPU) {
        if (dtype != PCT_BOOL) return 0;
        pct_la_not_implemented_bool(cpu_name);
        return -1;
    }
    if (pct_dtype_is_floating(dtype)) return 0;
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", device_name, pct_dtype_cpp_name[dtype]);
    return -1;
}

/* torch's addmm_impl_cpu_: result = beta * self + alpha * m1 @ m2 (self already
 * expanded to the result's shape; NULL for mm). `target` is the out= or in-place
 * tensor or NULL. */
static pct_object *addmm_impl(pct_tensor *target, bool inplace, pct_tensor *self, pct_tensor *m1, pct_tensor *m2,
                            const pct_scalar *beta_s, const pct_scalar *alpha_s)
{
    if (m1->dtype != m2->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
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
        PCT_INCREF(target);
        result = target;
    } else {
        if (!(result = pct_la_result_on(target, 2, shape, dtype, m1))) return NULL;
        /* out= overlapping an operand: compute aside, copy at the end */
        if (target && (shares_storage(target, m1) || shares_storage(target, m2) ||
                       (self && shares_storage(target, self)))) {
            out_final = result;
            if (!(result = pct_tensor_empty(2, shape, dtype, m1->device_type, m1->device_index))) goto fail;
        }
    }
    if (result->numel == 0) goto done;
    if (k == 0) {
        if (beta_scalar_zero || !self) {
            PCT_TRY_INT(pct_la_fill_zero(result));
        } else {
            if (self != result) PCT_TRY_INT(pct_copy_(result, self));
            PCT_TRY_INT(pct_la_scale_inplace(result, beta_s));
        }
        goto done;
    }
    if (!beta_scalar_zero && self && self != result && !(inplace && self->storage == result->storage &&
                                                           self->offset == result->offset &&
                                                           self->strides[0] == result->strides[0] &&
                                                           self->strides[1] == result->strides[1]))
        PCT_TRY_INT(pct_copy_(result, self));
    if (refuse_dtype(dtype, m1, "addmm_impl_cpu_", "addmm_cuda") < 0) goto fail;
    {
        const int64_t z[1] = {0};
        if (m1->device_type == PCT_CPU) PCT_TRY_INT(prescale_nonfinite_alpha(&m1, &alpha, alpha_s, &m1_scaled));
        int rc = pct_la_run_gemm(result, z, result->strides[0], result->strides[1], m1, z, m1->strides[0], m1->strides[1],
                          m2, z, m2->strides[0], m2->strides[1], 0, NULL, m, n, k, alpha, beta);
        PCT_XDECREF(m1_scaled);
        PCT_TRY_INT(rc);
    }
done:
    if (out_final) {
        PCT_TRY_INT(pct_copy_(out_final, result));
        PCT_DECREF(result);
        return (pct_object *)out_final;
    }
    return (pct_object *)result;
fail:
    PCT_XDECREF(result);
    PCT_XDECREF(out_final);
    return NULL;
}

static pct_object *mm_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    if (a->ndim != 2) { pct_error_str(PCT_ERR_RUNTIME, "self must be a matrix"); return NULL; }
    if (b->ndim != 2) { pct_error_str(PCT_ERR_RUNTIME, "mat2 must be a matrix"); return NULL; }
    if (a->sizes[1] != b->sizes[0]) {
        pct_error(PCT_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                     (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
        return NULL;
    }
    if (pct_out_check_dtype(out, a->dtype) < 0) return NULL;
    return addmm_impl(out, false, NULL, a, b, &scalar_zero, &scalar_one);
}

static pct_object *addmm_op(pct_tensor *self, pct_tensor *m1, pct_tensor *m2, const pct_scalar *beta,
                          const pct_scalar *alpha, pct_tensor *out, bool inplace)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (self->dtype != m2->dtype) {
        pct_error(PCT_ERR_RUNTIME, "self and mat2 must have the same dtype, but got %s and %s",
                     pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[m2->dtype]);
        return NULL;
    }
    if (m1->dtype != m2->dtype) {
        pct_error(PCT_ERR_RUNTIME, "mat1 and mat2 must have the same dtype, but got %s and %s",
                     pct_dtype_cpp_name[m1->dtype], pct_dtype_cpp_name[m2->dtype]);
        return NULL;
    }
    if (m1->ndim != 2) { pct_error(PCT_ERR_RUNTIME, "mat1 must be a matrix, got %d-D tensor", m1->ndim); return NULL; }
    if (m2->ndim != 2) { pct_error(PCT_ERR_RUNTIME, "mat2 must be a matrix, got %d-D tensor", m2->ndim); return NULL; }
    if (m1->sizes[1] != m2->sizes[0]) {
        pct_error(PCT_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                     (long long)m1->sizes[0], (long long)m1->sizes[1], (long long)m2->sizes[0], (long long)m2->sizes[1]);
        return NULL;
    }
    const int64_t shape[2] = {m1->sizes[0], m2->sizes[1]};
    if (inplace) {
        if (!(self->ndim == 2 && self->sizes[0] == shape[0] && self->sizes[1] == shape[1])) {
            pct_error(PCT_ERR_RUNTIME, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                         SHAPE(b1, self), SHAPE_OF(b2, 2, shape));
            return NULL;
        }
        return addmm_impl(self, true, self, m1, m2, beta, alpha);
    }
    if (pct_out_check_dtype(out, m1->dtype) < 0) return NULL;
    pct_tensor *b_self = pct_la_expand_to(self, 2, shape);
    if (!b_self) return NULL;
    pct_object *r = addmm_impl(out, false, b_self, m1, m2, beta, alpha);
    PCT_DECREF(b_self);
    return r;
}

/* ---- bmm / baddbmm ---- */

static int check_bmm_shapes(const pct_tensor *b1, const pct_tensor *b2)
{
    if (b1->ndim != 3) { pct_error_str(PCT_ERR_RUNTIME, "batch1 must be a 3D tensor"); return -1; }
    if (b2->ndim != 3) { pct_error_str(PCT_ERR_RUNTIME, "batch2 must be a 3D tensor"); return -1; }
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2]) {
        pct_error(PCT_ERR_RUNTIME,
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
        if (is_bmm || scalar_is_zero(beta_s)) return pct_la_fill_zero(result);
        return pct_la_scale_inplace(result, beta_s);
    }
    if (b1->dtype != b2->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[b1->dtype],
                     pct_dtype_cpp_name[b2->dtype]);
        return -1;
    }
    if (refuse_dtype(b1->dtype, b1, name, is_bmm ? "bmm_cuda" : "baddbmm_cuda") < 0) return -1;
    const int64_t cb[1] = {result->strides[0]}, ab[1] = {b1->strides[0]}, bb[1] = {b2->strides[0]};
    return pct_la_run_gemm(result, cb, result->strides[1], result->strides[2], b1, ab, b1->strides[1], b1->strides[2], b2, bb,
                    b2->strides[1], b2->strides[2], 1, &bs, m, n, k, alpha, beta);
}

static pct_object *bmm_op(pct_tensor *b1, pct_tensor *b2, pct_tensor *out)
{
    if (check_bmm_shapes(b1, b2) < 0) return NULL;
    if (pct_dtype_is_complex(b1->dtype) || pct_dtype_is_complex(b2->dtype)) {
        if (b1->dtype != b2->dtype) {
            pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[b1->dtype],
                      pct_dtype_cpp_name[b2->dtype]);
            return NULL;
        }
    }
    if (pct_out_check_dtype(out, b2->dtype) < 0) return NULL;
    const int64_t shape[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    pct_tensor *result = pct_la_result_on(out, 3, shape, b2->dtype, b1), *target = result;
    if (!result) return NULL;
    if (out && (shares_storage(out, b1) || shares_storage(out, b2))) {
        if (!(target = pct_tensor_empty(3, shape, b2->dtype, b1->device_type, b1->device_index))) goto fail;
    }
    {
        coef alpha = coef_from_double(1.0, b2->dtype), beta = coef_from_double(0.0, b2->dtype);
        if (bmm_compute(target, b1, b2, &scalar_zero, true, alpha, beta, "bmm") < 0) goto fail;
    }
    if (target != result) {
        if (pct_copy_(result, target) < 0) goto fail;
        PCT_DECREF(target);
    }
    return (pct_object *)result;
fail:
    if (target != result) PCT_XDECREF(target);
    PCT_DECREF(result);
    return NULL;
}

static pct_object *baddbmm_op(pct_tensor *self, pct_tensor *b1, pct_tensor *b2, const pct_scalar *beta_s,
                            const pct_scalar *alpha_s, pct_tensor *out, bool inplace)
{
    char sb1[PCT_SHAPE_BUF], sb2[PCT_SHAPE_BUF];
    if (b1->ndim != 3 || b2->ndim != 3) {
        check_bmm_shapes(b1, b2);
        return NULL;
    }
    const int64_t shape[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    pct_tensor *self_ = pct_la_expand_to(self, 3, shape), *result = NULL, *target = NULL;
    if (!self_) return NULL;
    if (self->dtype != b1->dtype) {
        pct_error(PCT_ERR_RUNTIME, "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                     pct_dtype_cpp_type_name[self->dtype], pct_dtype_cpp_type_name[b1->dtype], pct_dtype_cpp_type_name[b2->dtype]);
        goto fail;
    }
    if (check_bmm_shapes(b1, b2) < 0) goto fail;
    if (inplace) {
        if (!(self->ndim == 3 && memcmp(self->sizes, shape, sizeof shape) == 0)) {
            pct_error(PCT_ERR_RUNTIME, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                         SHAPE(sb1, self), SHAPE_OF(sb2, 3, shape));
            goto fail;
        }
        PCT_INCREF(self);
        result = self;
    } else {
        if (pct_out_check_dtype(out, b2->dtype) < 0) goto fail;
        if (!(result = pct_la_result_on(out, 3, shape, b2->dtype, b1))) goto fail;
    }
    target = result;
    if (shares_storage(result, b1) || shares_storage(result, b2)) {
        if (!(target = pct_tensor_empty(3, shape, result->dtype, b1->device_type, b1->device_index))) goto fail;
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
        PCT_DECREF(target);
    }
    PCT_DECREF(self_);
    return (pct_object *)result;
fail:
    if (target && target != result) PCT_DECREF(target);
    PCT_XDECREF(result);
    PCT_XDECREF(self_);
    return NULL;
}

pct_object *pct_mm(pct_tensor *a, pct_tensor *b, pct_tensor *out) { return mm_op(a, b, out); }
pct_object *pct_bmm(pct_tensor *a, pct_tensor *b, pct_tensor *out) { return bmm_op(a, b, out); }

static pct_scalar scalar_of_double(double v)
{
    pct_scalar s;
    if (v == (double)(int64_t)v && fabs(v) < 9e15) { s.kind = PCT_SCALAR_INT; s.i = (int64_t)v; s.d = v; }
    else { s.kind = PCT_SCALAR_FLOAT; s.i = 0; s.d = v; }
    return s;
}

pct_object *pct_addmm(pct_tensor *self, pct_tensor *m1, pct_tensor *m2, double beta, double alpha, pct_tensor *out)
{
    pct_scalar b = scalar_of_double(beta), a = scalar_of_double(alpha);
    return addmm_op(self, m1, m2, &b, &a, out, false);
}

pct_object *pct_baddbmm(pct_tensor *self, pct_tensor *b1, pct_tensor *b2, double beta, double alpha, pct_tensor *out)
{
    pct_scalar b = scalar_of_double(beta), a = scalar_of_double(alpha);
    return baddbmm_op(self, b1, b2, &b, &a, out, false);
}

/* ---- kernels (ops_linalg.def) ---- */

#define OUT (c->inplace ? NULL : c->out)

pct_object *pct_cpu_mm(pct_call *c)
{
    PCT_ARGS(mm);
    return mm_op(arg.input, arg.mat2, c->out);
}

pct_object *pct_cpu_bmm(pct_call *c)
{
    PCT_ARGS(bmm);
    return bmm_op(arg.input, arg.mat2, c->out);
}

pct_object *pct_cpu_addmm(pct_call *c)
{
    PCT_ARGS(addmm);
    if (pct_scalar_check_opmath(&arg.beta, arg.mat1->dtype) < 0 || pct_scalar_check_opmath(&arg.alpha, arg.mat1->dtype) < 0)
        return NULL;
    return addmm_op(arg.input, arg.mat1, arg.mat2, &arg.beta, &arg.alpha, OUT, c->inplace);
}
/* t.size(dim) in torch: IndexError where t has no such dim */
static int torch_size_access(const pct_tensor *t, int dim)
{
    if (dim < t->ndim) return 0;
    if (t->ndim == 0) pct_error(PCT_ERR_INDEX, "Dimension specified as %d but tensor has no dimensions", dim);
    else pct_error(PCT_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                      -t->ndim, t->ndim - 1, dim);
    return -1;
}

pct_object *pct_cpu_baddbmm(pct_call *c)
{
    PCT_ARGS(baddbmm);
    /* torch first sizes self's expansion from batch1.size(0), batch1.size(1), batch2.size(2), then checks ranks */
    if (torch_size_access(arg.batch1, 0) < 0 || torch_size_access(arg.batch1, 1) < 0 || torch_size_access(arg.batch2, 2) < 0)
        return NULL;
    if (pct_scalar_check_opmath(&arg.beta, arg.batch1->dtype) < 0 ||
        pct_scalar_check_opmath(&arg.alpha, arg.batch1->dtype) < 0)
        return NULL;
    return baddbmm_op(arg.input, arg.batch1, arg.batch2, &arg.beta, &arg.alpha, OUT, c->inplace);
}

#undef OUT
