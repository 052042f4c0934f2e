/* blas_complex.h: matrix products of complex tensors (blas_complex.c). */
#ifndef PCT_CPU_BLAS_COMPLEX_H
#define PCT_CPU_BLAS_COMPLEX_H
#include "../tensor.h"

/* b1 @ b2 for [bs, m, k] and [bs, k, n] complex tensors of one dtype: a new contiguous [bs, m, n] tensor, or NULL with
 * torch's error (dtypes that differ). */
pct_tensor *pct_complex_bmm(pct_tensor *b1, pct_tensor *b2);
#endif
