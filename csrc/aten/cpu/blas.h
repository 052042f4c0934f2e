/* blas.h: matrix products for the rest of the CPU backend.
 *
 * The kernels of ops_linalg.def live in blas.c (GEMM, mm, bmm) and the files beside it
 * (vector_products.c, linalg_norm.c; what they share is blas_internal.h); this header exposes the pieces other kernel files (linear, attention,
 * conv) build on:
 *
 *   pct_gemm / pct_gemm_batched  GIL-free C = alpha * A @ B + beta * C on raw strided
 *                                data of any dtype but bool (float32/64 and complex64/128
 *                                through OpenBLAS; a complex alpha/beta only through
 *                                the tensor-level products).
 *   pct_mm, pct_addmm, pct_bmm, pct_baddbmm
 *                                tensor-level products with torch's checks and
 *                                errors; they return new references or NULL with an
 *                                exception set, and take the GIL as held.
 *   pct_blas_init                one-time OpenBLAS setup (see Note [OpenBLAS core type]);
 *                                called lazily by the first product, and cheap to call
 *                                again. The module init may call it early.
 */
#ifndef PCT_BLAS_H
#define PCT_BLAS_H
#include "../tensor.h"
#include "../op.h"

void pct_blas_init(void);

/* The norms of complex tensors (linalg.vector_norm, torch.norm) are those of the moduli: |x| as a new real tensor
 * (float32 for complex64), computed in `dtype` (a complex dtype x converts to without narrowing, torch's checks and
 * messages for `api`) or in x's own with PCT_NO_DTYPE. linalg_norm.c. */
pct_tensor *pct_complex_modulus(pct_tensor *x, int dtype, const char *api);

/* One GEMM: C[m,n] = alpha * A[m,k] @ B[k,n] + beta * C, where element (i, j) of X
 * lives at X + (i * x_rs + j * x_cs) * itemsize (strides in elements, any layout).
 * beta == 0 ignores C's contents (NaN included). Integral dtypes accumulate in 64
 * bits with wrap-around, float16/bfloat16 in float32. Needs no GIL; releasing it is
 * the caller's business. Returns 0, or -1 when out of memory (no exception set). */
int pct_gemm(int dtype, int64_t m, int64_t n, int64_t k, double alpha,
             const void *a, int64_t a_rs, int64_t a_cs,
             const void *b, int64_t b_rs, int64_t b_cs,
             double beta, void *c, int64_t c_rs, int64_t c_cs);

/* The same over a batch: matrix t of X starts at X + t * x_bs elements. */
int pct_gemm_batched(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
                     const void *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                     const void *b, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                     double beta, void *c, int64_t c_bs, int64_t c_rs, int64_t c_cs);

/* Tensor-level products (torch semantics; out may be NULL). */
pct_object *pct_mm(pct_tensor *a, pct_tensor *b, pct_tensor *out);
pct_object *pct_addmm(pct_tensor *self, pct_tensor *m1, pct_tensor *m2, double beta, double alpha,
                    pct_tensor *out);
pct_object *pct_bmm(pct_tensor *a, pct_tensor *b, pct_tensor *out);
pct_object *pct_baddbmm(pct_tensor *self, pct_tensor *b1, pct_tensor *b2, double beta, double alpha,
                      pct_tensor *out);

#endif
