/* linalg_spectral_complex.h: the spectral decompositions of complex64 / complex128 matrices
 * (linalg_spectral_complex.c): Hermitian eigh (LAPACK's cheevd / zheevd), the SVD (cgesdd /
 * zgesdd) and the general eigenproblem (cgeev / zgeev). The real kernels (linalg_factor.c's
 * eigh, linalg_svd.c, linalg_eig.c) hand a complex input over to these, which follow Note
 * [LAPACK layout] in linalg_lapack.h: results column-major per matrix, batches run by lap_run.
 *
 * Ownership: the pct_tensor ** results are new references (NULL on failure, with an exception
 * set); arguments are borrowed. */
#ifndef PCT_LINALG_SPECTRAL_COMPLEX_H
#define PCT_LINALG_SPECTRAL_COMPLEX_H
#include "../tensor.h"
#include <stdbool.h>

/* The real dtype of a complex one's parts: float32 for complex64, float64 for complex128. */
int lapc_real_dtype(int complex_dtype);

/* linalg.eigh / eigvalsh of a complex A (torch's checks included): w real (batch..., n), v (with vectors) complex
 * (batch..., n, n) column-major. uplo is 'L' or 'U'. 0 or -1. */
int lapc_eigh(pct_tensor *A, char uplo, bool vectors, pct_tensor **w, pct_tensor **v);

/* The SVD of the last two dims of a complex A (rows x cols): s real (batch..., k); u (batch..., rows, ucols) and vh
 * (batch..., vtrows, cols) column-major per matrix for jobz 'S' (k columns / rows) or 'A' (full), NULL for 'N'.
 * torch's errors name `api`. 0 or -1. */
int lapc_svd(pct_tensor *A, char jobz, pct_tensor **s, pct_tensor **u, pct_tensor **vh);

/* linalg.eig / eigvals of a complex square A (checked by the caller): w (batch..., n) and, with vectors, v (batch...,
 * n, n) column-major, both of A's dtype; eigenvectors of unit 2-norm with their largest component real, as geev
 * leaves them (torch's CPU results). 0 or -1. */
int lapc_eig(pct_tensor *A, bool vectors, pct_tensor **w, pct_tensor **v);
#endif
