/* gemm_lowp.h: bfloat16 / float16 GEMM pieces used by blas.c (gemm_lowp.c).
 *
 *   pct_gemm_bf16_native  C = alpha * A @ B + beta * C for bfloat16 A, B, C on CPUs with
 *                         AVX512-BF16 (vdpbf16ps), float32 accumulation over all of K and
 *                         one rounding at the end. Returns 1 without touching anything
 *                         when the CPU lacks the instructions, else 0, or -1 when out of
 *                         memory.
 *   pct_gemm_bf16_f32out  the same with a float32 C (alpha * A @ B + beta * C rounded to
 *                         float32 only): products that accumulate over several calls.
 *   pct_lowp_to_f32 / pct_f32_to_lowp
 *                         strided 2-D conversions between float16/bfloat16 and a dense
 *                         row-major float32 matrix (vectorized, split across nt threads),
 *                         for the path that widens around sgemm.
 * None of them needs the GIL.
 */
#ifndef PCT_GEMM_LOWP_H
#define PCT_GEMM_LOWP_H
#include <stdbool.h>
#include <stdint.h>

/* Whether pct_gemm_bf16_native runs here (the CPU has AVX512-BF16, not turned off). */
bool pct_gemm_bf16_available(void);
int pct_gemm_bf16_native(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero,
                         const uint16_t *a, int64_t ars, int64_t acs, const uint16_t *b, int64_t brs, int64_t bcs,
                         uint16_t *c, int64_t crs, int64_t ccs, int nt);
int pct_gemm_bf16_f32out(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero,
                         const uint16_t *a, int64_t ars, int64_t acs, const uint16_t *b, int64_t brs, int64_t bcs,
                         float *c, int64_t crs, int64_t ccs, int nt);

/* dst[i * cols + j] = src(i, j), src(i, j) at src + (i * rs + j * cs) elements of `dtype`. */
void pct_lowp_to_f32(float *dst, const uint16_t *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                     int dtype, int nt);
/* dst(i, j) = round(src[i * cols + j]) (round to nearest even). */
void pct_f32_to_lowp(uint16_t *dst, const float *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                     int dtype, int nt);

#endif
