/* gemm_f32.h: float32 GEMM with pyctorch's own AVX-512 kernel (gemm_f32.c, Note [float32 GEMM]).
 *
 *   pct_gemm_f32_available  whether the kernel runs here (AVX-512 F/BW/VL/DQ, and
 *                           PYCTORCH_GEMM is not "openblas").
 *   pct_gemm_f32_native     C = alpha * A @ B + beta * C (strides in elements, any layout;
 *                           beta_zero ignores C's contents). Returns 1 without touching
 *                           anything when the kernel is not available, else 0, or -1 when
 *                           out of memory. Needs no GIL; uses up to nt OpenMP threads.
 *   pct_gemm_f32_problem    the same for a product as gemm_packed.h describes it (hooks
 *                           allowed), with the same return values.
 *   pct_sgemm_small         C[m x n] = alpha * A @ B + beta * C with no packing and no
 *                           threads, for small products inside parallel regions (the
 *                           attention tiles): A(i, p) = a[i * ars + p * acs] (any strides),
 *                           B(p, j) = b[p * ldb + j], C(i, j) = c[i * ldc + j]; beta is 0 (C
 *                           is not read) or 1. Callable only where
 *                           pct_sgemm_small_available() (AVX-512, not PCT_NO_AVX512).
 */
#ifndef PCT_GEMM_F32_H
#define PCT_GEMM_F32_H
#include <stdbool.h>
#include <stdint.h>

bool pct_gemm_f32_available(void);
int pct_gemm_f32_native(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero, const float *a,
                        int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c, int64_t crs,
                        int64_t ccs, int nt);

struct pct_gemm_problem;
int pct_gemm_f32_problem(const struct pct_gemm_problem *p, int nt);

bool pct_sgemm_small_available(void);
void pct_sgemm_small(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                     const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

#endif
