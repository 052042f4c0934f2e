/* special_polynomials.h: the orthogonal polynomials of torch.special (ops_special.def) at degree n, evaluated in the
 * loop's compute type (float for float16/bfloat16/float32, double for float64) as torch evaluates them, so that
 * overflow gives the same inf or NaN. Every function is written once as a template header (special_polynomials_impl.h)
 * and instantiated for float and double; pct_sf_<name>(x, n) picks the instance by the type of x.
 *
 * The degree is n truncated toward zero (torch converts it to an integer); a negative, NaN or out-of-range n gives 0.
 * Chebyshev polynomials of degree above a few with |x| < 1 use their trigonometric forms (DLMF 18.5.1-2 and the third
 * and fourth kinds V_n(cos t) = cos((n+1/2)t) / cos(t/2), W_n(cos t) = sin((n+1/2)t) / sin(t/2)); otherwise the
 * three-term recurrences of DLMF 18.9.1 (Chebyshev), 18.9.2 (Legendre), 18.9.13 (Laguerre), 18.9.20 (Hermite), which
 * stop early once the value is NaN (it stays NaN). */
#ifndef PCT_SPECIAL_POLYNOMIALS_H
#define PCT_SPECIAL_POLYNOMIALS_H
#include <stdint.h>
#include "../host_device.h"
#ifdef __cplusplus
#include <math.h> /* C++ overloads fabs, cos, acos, sin by the instance's type */
#else
#include <tgmath.h> /* fabs, cos, acos, sin in the instance's type */
#endif

/* the degree torch uses: trunc(n) when it fits an int64, else -1 (x86's conversion of NaN and overflow is INT64_MIN) */
static inline PCT_HOST_DEVICE int64_t pct_sf_poly_degree(double n)
{
    return (n != n || n >= 9.2233720368547758e18 || n < -9.2233720368547758e18) ? -1 : (int64_t)n;
}

/* value at x = +-1 of a Chebyshev-like polynomial: at_one if x > 0, else (-1)^n at_minus_one_even */
#define PCT_SF_AT_PM_ONE(x, n, at_one, at_minus_one) ((x) > 0 ? (at_one) : ((n) % 2 == 0 ? (at_minus_one) : -(at_minus_one)))

/* C names the two instances apart (suffixes f and d); C++ (the CUDA runner, Note [One math for both devices] in
 * ../host_device.h) lets them share a name and overloads it by the argument's type */
#ifdef __cplusplus
#define SF_SUFFIX_FLOAT
#define SF_SUFFIX_DOUBLE
#else
#define SF_SUFFIX_FLOAT f
#define SF_SUFFIX_DOUBLE d
#endif
#define SF_T float
#define SF_SUFFIX SF_SUFFIX_FLOAT
#include "special_polynomials_impl.h"
#undef SF_T
#undef SF_SUFFIX
#define SF_T double
#define SF_SUFFIX SF_SUFFIX_DOUBLE
#include "special_polynomials_impl.h"
#undef SF_T
#undef SF_SUFFIX

/* the polynomial `name` at x of degree n (both in the compute type); the shifted Chebyshev polynomials are the
 * Chebyshev ones at 2x - 1 (T*_n(x) = T_n(2x - 1), DLMF section 18.7) */
#ifdef __cplusplus
#define PCT_SF_POLY(name, x, n) pct_sf_##name##_((x), pct_sf_poly_degree((double)(n)))
#else
#define PCT_SF_POLY(name, x, n) \
    _Generic((x), float: pct_sf_##name##_f, default: pct_sf_##name##_d)((x), pct_sf_poly_degree((double)(n)))
#endif
#define PCT_SF_SHIFTED(name, x, n) PCT_SF_POLY(name, (x) + (x) - 1, n)

#endif
