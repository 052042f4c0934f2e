/* gelu_erf.h: exact GELU, x Phi(x), and its gradient Phi(x) + x phi(x) on contiguous float32
 * runs, with a rational erf instead of libm's (Note [Rational erf]). AVX-512 / AVX2 / SSE2
 * forms are chosen once at run time. */
#ifndef PCT_GELU_ERF_H
#define PCT_GELU_ERF_H
#include <stdint.h>

/* o[i] = x[i] Phi(x[i]) */
void pct_gelu_erf_f32(float *o, const float *x, int64_t n);
/* o[i] = g[i] (Phi(x[i]) + x[i] phi(x[i])) */
void pct_gelu_erf_backward_f32(float *o, const float *g, const float *x, int64_t n);
#endif
