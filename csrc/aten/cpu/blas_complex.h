/* blas_complex.h: matrix products of complex tensors (blas_complex.c). */
#ifndef PCT_CPU_BLAS_COMPLEX_H
#define PCT_CPU_BLAS_COMPLEX_H
#include "../tensor.h"
#include "../dtype.h"
#include <stdbool.h>

/* b1 @ b2 for [bs, m, k] and [bs, k, n] complex tensors of one dtype: a new contiguous [bs, m, n] tensor, or NULL with
 * torch's error (dtypes that differ). */
pct_tensor *pct_complex_bmm(pct_tensor *b1, pct_tensor *b2);
/* c[batch..., m, n] = alpha * a @ b + beta * c (c not read when beta_zero) over raw data of one complex dtype read with
 * element strides (batch strides 0 for broadcast operands); c must not overlap a or b (pct_la_run_gemm sees to it).
 * Runs without the GIL: 0, or -1 when out of memory (no exception set). */
int pct_complex_gemm_strided(int dtype, char *c, const int64_t *c_bs, int64_t crs, int64_t ccs, const char *a,
                             const int64_t *a_bs, int64_t ars, int64_t acs, const char *b, const int64_t *b_bs,
                             int64_t brs, int64_t bcs, int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k,
                             pct_cdouble alpha, pct_cdouble beta, bool beta_zero);
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
