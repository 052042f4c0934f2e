/* attention_gemm.h: the float32 GEMM of the attention tiles (attention.c) on AVX-512.
 *
 *   C[m x n] = alpha * A @ B + beta * C, A(i, p) = a[i * ars + p * acs] (any strides),
 *   B(p, j) = b[p * ldb + j] (unit stride along j), C(i, j) = c[i * ldc + j]; beta is 0
 *   (C is not read) or 1.
 *
 * No packing: B rows are read as vectors where they lie, A elements are broadcast. The
 * products of attention tiles are small (64..256 on a side), where a BLAS call spends a
 * good part of its time packing both operands. Callable from OpenMP threads (no state).
 * pct_attn_sgemm_available() is false on CPUs without AVX-512F and in builds with
 * PCT_NO_AVX512; then pct_attn_sgemm must not be called. */
#ifndef PCT_ATTENTION_GEMM_H
#define PCT_ATTENTION_GEMM_H
#include <stdbool.h>
#include <stdint.h>

bool pct_attn_sgemm_available(void);
void pct_attn_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                    const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

#endif
