/* blas_complex.c: batched matrix products of complex64 / complex128 tensors (mm, bmm, and matmul through them) with
 * OpenBLAS's cgemm / zgemm, or a plain triple loop in a build without OpenBLAS (Note [Complex and float8 dtypes] in
 * ../dtype.h). The operands are made contiguous first; torch's checks of shapes run in blas.c before. */
#include "blas_complex.h"
#include "../error.h"
#include "../iter.h"
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
