/* special_functions.h: the scalar special functions of torch.special (ops_special.def), in double.
 *
 * The loops of ops_special.def call these for every floating dtype (float16/bfloat16/float32 widen to double
 * and the loop rounds the result), except the orthogonal polynomials (special_polynomials.h), which are
 * evaluated in the compute type as torch's are, so that overflow gives the same inf or NaN.
 * Each function is written from the mathematics, with the DLMF formula it uses; the edge values (NaN, +-inf,
 * arguments outside the domain) are torch's. Implementations in special_functions.c. */
#ifndef PCT_SPECIAL_FUNCTIONS_H
#define PCT_SPECIAL_FUNCTIONS_H
#include <stdint.h>

/* Bessel functions of the first and second kind, orders 0 and 1 */
double pct_sf_bessel_j0(double x);
double pct_sf_bessel_j1(double x);
double pct_sf_bessel_y0(double x);
double pct_sf_bessel_y1(double x);
/* modified Bessel functions; *_scaled are e^{-|x|} I(x) and e^{x} K(x) */
double pct_sf_modified_bessel_i0(double x);
double pct_sf_modified_bessel_i1(double x);
double pct_sf_bessel_i0e(double x);
double pct_sf_bessel_i1e(double x);
double pct_sf_modified_bessel_k0(double x);
double pct_sf_modified_bessel_k1(double x);
double pct_sf_scaled_modified_bessel_k0(double x);
double pct_sf_scaled_modified_bessel_k1(double x);
double pct_sf_spherical_bessel_j0(double x);
double pct_sf_airy_ai(double x);
/* error-function family */
double pct_sf_erfcx(double x);
double pct_sf_log_ndtr(double x);
double pct_sf_ndtri(double p);
/* gamma family: Hurwitz zeta, polygamma of order n, the regularized incomplete gamma functions P and Q */
double pct_sf_zeta(double s, double q);
double pct_sf_polygamma(int64_t n, double x);
double pct_sf_igamma(double a, double x);
double pct_sf_igammac(double a, double x);

#endif
