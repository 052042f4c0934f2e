/* gelu_erf.h: exact GELU, x Phi(x), and its gradient Phi(x) + x phi(x) on contiguous float32
 * runs, with a rational erf instead of libm's (Note [Rational erf]), and the tanh form through one
 * exponential (gelu_erf_impl.h). AVX-512 / AVX2 / SSE2 forms are chosen once at run time. */
#ifndef PCT_GELU_ERF_H
#define PCT_GELU_ERF_H
#include <stdint.h>

/* o[i] = x[i] Phi(x[i]) */
void pct_gelu_erf_f32(float *o, const float *x, int64_t n);
/* o[i] = g[i] (Phi(x[i]) + x[i] phi(x[i])) */
void pct_gelu_erf_backward_f32(float *o, const float *g, const float *x, int64_t n);
/* the tanh form: o[i] = x[i] (1 + tanh u) / 2, u = sqrt(2 / pi) (x + 0.044715 x^3), as x sigmoid(2u) */
void pct_gelu_tanh_f32(float *o, const float *x, int64_t n);
/* o[i] = g[i] d/dx of the above */
void pct_gelu_tanh_backward_f32(float *o, const float *g, const float *x, int64_t n);
#endif
