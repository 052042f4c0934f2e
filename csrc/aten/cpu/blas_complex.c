/* blas_complex.c: the products of complex64 / complex128 tensors with OpenBLAS's cgemm / zgemm and cdot / zdot, or
 * plain loops in a build without OpenBLAS (Note [Complex and float8 dtypes] in ../dtype.h): the batched mm / bmm (and
 * matmul through them), the strided alpha / beta product that pct_la_run_gemm hands over for addmm, addmv, baddbmm
 * and mv, and dot / vdot. The operands are packed contiguous first; torch's checks of shapes run in blas.c and
 * vector_products.c before. */
#include "blas_complex.h"
#include "../error.h"
#include "../iter.h"
#include <stdlib.h>
#include <string.h>
#include <complex.h>
#ifdef PCT_HAVE_OPENBLAS
#include <cblas.h>
#endif

/* c[i] = a[i] @ b[i] for i < bs, row-major contiguous m x k, k x n and m x n matrices */
static void gemm_batches(int dtype, int64_t bs, int64_t m, int64_t n, int64_t k, const char *a, const char *b, char *c)
{
    const int64_t isz = pct_dtype_itemsize[dtype];
    for (int64_t i = 0; i < bs; i++) {
        const char *ai = a + i * m * k * isz, *bi = b + i * k * n * isz;
        char *ci = c + i * m * n * isz;
#ifdef PCT_HAVE_OPENBLAS
        if (dtype == PCT_COMPLEX64) {
            const pct_cfloat one = 1, zero = 0;
            cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &one, ai, (int)k, bi, (int)n,
                        &zero, ci, (int)n);
        } else {
            const pct_cdouble one = 1, zero = 0;
            cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &one, ai, (int)k, bi, (int)n,
                        &zero, ci, (int)n);
        }
#else
        for (int64_t r = 0; r < m; r++)
            for (int64_t col = 0; col < n; col++) {
                pct_cdouble acc = 0;
                for (int64_t t = 0; t < k; t++) {
                    double ar, aim, br, bim;
                    pct_load_as_complex(ai + (r * k + t) * isz, dtype, &ar, &aim);
                    pct_load_as_complex(bi + (t * n + col) * isz, dtype, &br, &bim);
                    acc += CMPLX(ar, aim) * CMPLX(br, bim);
                }
                pct_store_complex(ci + (r * n + col) * isz, dtype, creal(acc), cimag(acc));
            }
#endif
    }
}

pct_tensor *pct_complex_bmm(pct_tensor *b1, pct_tensor *b2)
{
    if (b1->dtype != b2->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                  pct_dtype_cpp_type_name[b1->dtype], pct_dtype_cpp_type_name[b2->dtype]);
        return NULL;
    }
    const int64_t bs = b1->sizes[0], m = b1->sizes[1], k = b1->sizes[2], n = b2->sizes[2];
    const int64_t shape[3] = {bs, m, n};
    pct_tensor *r = pct_tensor_empty(3, shape, b1->dtype, PCT_CPU, -1);
    pct_tensor *a = r ? pct_contiguous(b1) : NULL, *b = a ? pct_contiguous(b2) : NULL;
    if (!b) {
        PCT_XDECREF(a);
        PCT_XDECREF(r);
        return NULL;
    }
    if (r->numel) {
        if (k == 0) memset(pct_tensor_data(r), 0, (size_t)(r->numel * pct_dtype_itemsize[r->dtype]));
        else gemm_batches(r->dtype, bs, m, n, k, pct_tensor_data(a), pct_tensor_data(b), pct_tensor_data(r));
    }
    PCT_DECREF(a);
    PCT_DECREF(b);
    return r;
}

/* ---- the strided product of pct_la_run_gemm and the dot products ---- */

/* Packs the rows x cols matrix at src (element strides rs, cs) into dst, row-major contiguous. */
static void pack_rows(char *dst, const char *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t isz)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            memcpy(dst + (i * cols + j) * isz, src + (i * rs + j * cs) * isz, (size_t)isz);
}

static void unpack_rows(char *dst, const char *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t isz)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            memcpy(dst + (i * rs + j * cs) * isz, src + (i * cols + j) * isz, (size_t)isz);
}

/* c = alpha * a @ b + beta * c for one contiguous row-major m x k, k x n, m x n triple (c read only without
 * beta_zero) */
static void gemm_scaled(int dtype, int64_t m, int64_t n, int64_t k, pct_cdouble alpha, pct_cdouble beta,
                        bool beta_zero, const char *a, const char *b, char *c)
{
#ifdef PCT_HAVE_OPENBLAS
    if (dtype == PCT_COMPLEX64) {
        const pct_cfloat al = (pct_cfloat)alpha, be = beta_zero ? 0 : (pct_cfloat)beta;
        cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &al, a, (int)k, b, (int)n, &be,
                    c, (int)n);
    } else {
        const pct_cdouble be = beta_zero ? 0 : beta;
        cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &alpha, a, (int)k, b, (int)n,
                    &be, c, (int)n);
    }
#else
    const int64_t isz = pct_dtype_itemsize[dtype];
    for (int64_t r = 0; r < m; r++)
        for (int64_t col = 0; col < n; col++) {
            pct_cdouble acc = 0;
            for (int64_t t = 0; t < k; t++) {
                double ar, aim, br, bim;
                pct_load_as_complex(a + (r * k + t) * isz, dtype, &ar, &aim);
                pct_load_as_complex(b + (t * n + col) * isz, dtype, &br, &bim);
                acc += CMPLX(ar, aim) * CMPLX(br, bim);
            }
            pct_cdouble v = alpha * acc;
            if (!beta_zero) {
                double cr, cim;
                pct_load_as_complex(c + (r * n + col) * isz, dtype, &cr, &cim);
                v += beta * CMPLX(cr, cim);
            }
            pct_store_complex(c + (r * n + col) * isz, dtype, creal(v), cimag(v));
        }
#endif
}

int pct_complex_gemm_strided(int dtype, char *c, const int64_t *c_bs, int64_t crs, int64_t ccs, const char *a,
                             const int64_t *a_bs, int64_t ars, int64_t acs, const char *b, const int64_t *b_bs,
                             int64_t brs, int64_t bcs, int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k,
                             pct_cdouble alpha, pct_cdouble beta, bool beta_zero)
{
    const int64_t isz = pct_dtype_itemsize[dtype];
    int64_t batch = 1;
    for (int d = 0; d < nb; d++) batch *= bsize[d];
    if (batch == 0 || m == 0 || n == 0) return 0;
    char *pa = malloc((size_t)((m * k + k * n + m * n) * isz) + 1);
    if (!pa) return -1;
    char *pb = pa + m * k * isz, *pc = pb + k * n * isz;
    for (int64_t t = 0; t < batch; t++) {
        int64_t ao = 0, bo = 0, co = 0, rem = t;
        for (int d = nb - 1; d >= 0; d--) {
            const int64_t i = rem % bsize[d];
            rem /= bsize[d];
            ao += i * a_bs[d];
            bo += i * b_bs[d];
            co += i * c_bs[d];
        }
        pack_rows(pa, a + ao * isz, m, k, ars, acs, isz);
        pack_rows(pb, b + bo * isz, k, n, brs, bcs, isz);
        if (!beta_zero) pack_rows(pc, c + co * isz, m, n, crs, ccs, isz);
        if (k == 0) {
            /* alpha * (empty sum) + beta * c */
            for (int64_t i = 0; i < m * n; i++) {
                double re = 0, im = 0;
                if (!beta_zero) pct_load_as_complex(pc + i * isz, dtype, &re, &im);
                const pct_cdouble v = beta_zero ? 0 : beta * CMPLX(re, im);
                pct_store_complex(pc + i * isz, dtype, creal(v), cimag(v));
            }
        } else {
            gemm_scaled(dtype, m, n, k, alpha, beta, beta_zero, pa, pb, pc);
        }
        unpack_rows(c + co * isz, pc, m, n, crs, ccs, isz);
    }
    free(pa);
    return 0;
}

void pct_complex_dot(int dtype, int64_t n, const char *x, int64_t sx, const char *y, int64_t sy, bool conj_x,
                     char *res)
{
#ifdef PCT_HAVE_OPENBLAS
    if (n > 0 && n <= INT32_MAX && sx > 0 && sy > 0 && sx <= INT32_MAX && sy <= INT32_MAX) {
        if (dtype == PCT_COMPLEX64) {
            if (conj_x) cblas_cdotc_sub((int)n, x, (int)sx, y, (int)sy, res);
            else cblas_cdotu_sub((int)n, x, (int)sx, y, (int)sy, res);
        } else {
            if (conj_x) cblas_zdotc_sub((int)n, x, (int)sx, y, (int)sy, res);
            else cblas_zdotu_sub((int)n, x, (int)sx, y, (int)sy, res);
        }
        return;
    }
#endif
    const int64_t isz = pct_dtype_itemsize[dtype];
    pct_cdouble acc = 0;
    for (int64_t i = 0; i < n; i++) {
        double xr, xi, yr, yi;
        pct_load_as_complex(x + i * sx * isz, dtype, &xr, &xi);
        pct_load_as_complex(y + i * sy * isz, dtype, &yr, &yi);
        acc += CMPLX(xr, conj_x ? -xi : xi) * CMPLX(yr, yi);
    }
    pct_store_complex(res, dtype, creal(acc), cimag(acc));
}
