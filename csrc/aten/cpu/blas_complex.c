/* blas_complex.c: dot / vdot of complex64 / complex128 vectors with OpenBLAS's cdotu / cdotc / zdotu / zdotc, or a
 * plain loop for strides BLAS does not take (0, negative, past its int) and in a build without OpenBLAS (Note [Complex
 * and float8 dtypes] in ../dtype.h). The complex matrix products (mm, addmm, bmm, baddbmm, addmv, mv and matmul
 * through them) are not here: they share the float32 / float64 GEMM of blas.c (Note [BLAS dtypes]). torch's checks of
 * shapes run in vector_products.c before. */
#include "blas_complex.h"
#include "blas.h"
#include <complex.h>
#include <stdint.h>
#ifdef PCT_HAVE_OPENBLAS
#include <cblas.h>
#endif

void pct_complex_dot(int dtype, int64_t n, const char *x, int64_t sx, const char *y, int64_t sy, bool conj_x,
                     char *res)
{
#ifdef PCT_HAVE_OPENBLAS
    /* OpenBLAS's c/z kernels need naturally aligned data (Note [BLAS dtypes] in blas.c) */
    const uintptr_t align = (uintptr_t)pct_dtype_itemsize[dtype] - 1;
    if (n > 0 && n <= INT32_MAX && sx > 0 && sy > 0 && sx <= INT32_MAX && sy <= INT32_MAX &&
        !((uintptr_t)x & align) && !((uintptr_t)y & align)) {
        pct_blas_init();
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
