/* blas_complex.h: the dot products of complex vectors (blas_complex.c) and a complex constructor for the files
 * that do not include <complex.h>. The complex matrix products share blas.c's GEMM (Note [BLAS dtypes]). */
#ifndef PCT_CPU_BLAS_COMPLEX_H
#define PCT_CPU_BLAS_COMPLEX_H
#include "../tensor.h"
#include "../dtype.h"
#include <stdbool.h>

/* *res (one element of dtype) = sum x[i] * y[i], or sum conj(x[i]) * y[i] with conj_x (vdot); strides in elements */
void pct_complex_dot(int dtype, int64_t n, const char *x, int64_t sx, const char *y, int64_t sy, bool conj_x,
                     char *res);
/* re + i im, without <complex.h>'s I in the includer */
static inline pct_cdouble pct_cdouble_of(double re, double im)
{
    pct_cdouble z;
    ((double *)&z)[0] = re;
    ((double *)&z)[1] = im;
    return z;
}
#endif
