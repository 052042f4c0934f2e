/* complex_math.h: the complex helpers torch's kernels have and C11 lacks (log1p, expm1, pow's special exponents,
 * logaddexp), for complex64 (_f) and complex128 (_d): the complex pointwise loops (pointwise_complex.c) and the
 * complex scans (scan.c) share them. C only. */
#ifndef PCT_CPU_COMPLEX_MATH_H
#define PCT_CPU_COMPLEX_MATH_H
#include "../dtype.h"
#include <tgmath.h>
#include "complex_arith.h"

/* log1p and expm1 keep their precision near 0, where log(1 + z) and exp(z) - 1 would cancel:
 * log|1 + z| = log1p(x (x + 2) + y^2) / 2, arg(1 + z) = atan2(y, 1 + x); and
 * exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y / 2)) + i exp(x) sin y */
#define PCT_CPX_FUNCS(T, R, sfx)                                                                  \
    static inline T cpx_log1p_##sfx(T z)                                                          \
    {                                                                                             \
        const R x = creal(z), y = cimag(z);                                                       \
        if (fabs(z) >= (R)0.5) return log(1 + z);                                                 \
        return CMPLX((R)0.5 * log1p(x * (x + 2) + y * y), atan2(y, 1 + x));                       \
    }                                                                                             \
    static inline T cpx_expm1_##sfx(T z)                                                          \
    {                                                                                             \
        const R x = creal(z), y = cimag(z), s = sin(y / 2);                                       \
        return CMPLX(expm1(x) * cos(y) - 2 * s * s, exp(x) * sin(y));                             \
    }                                                                                             \
    /* torch's pow: the small integral and half exponents by products and roots, else exp(b log a) */ \
    static inline T cpx_pow_##sfx(T a, T b)                                                       \
    {                                                                                             \
        if (b == 2) return a * a;                                                                 \
        if (b == 3) return a * a * a;                                                             \
        if (b == (R)0.5) return sqrt(a);                                                          \
        if (b == -1) return 1 / a;                                                                \
        if (b == 0) return 1;                                                                     \
        return pow(a, b);                                                                         \
    }                                                                                             \
    /* torch's complex logaddexp: the operands ordered by real part (a NaN part wins), then        \
     * log1p(exp(min - max)) + max; equal infinite real parts: min for -inf, else log(e^min + e^max) */ \
    static inline T cpx_logaddexp_##sfx(T x, T y)                                                 \
    {                                                                                             \
        T mn, mx;                                                                                 \
        if (isnan(creal(y)) || isnan(cimag(y))) mn = mx = y;                                      \
        else if (isnan(creal(x)) || isnan(cimag(x))) mn = mx = x;                                 \
        else if (creal(x) < creal(y)) { mn = x; mx = y; }                                         \
        else { mn = y; mx = x; }                                                                  \
        const R mnr = creal(mn), mxr = creal(mx);                                                 \
        if (isnan(mnr) || isnan(cimag(mn))) return CMPLX(NAN, NAN);                               \
        if (!isfinite(mnr) && mnr == mxr) return mnr < 0 ? mn : log(exp(mn) + exp(mx));          \
        return cpx_log1p_##sfx(exp(mn - mx)) + mx;                                                \
    }
PCT_CPX_FUNCS(pct_cfloat, float, f)
PCT_CPX_FUNCS(pct_cdouble, double, d)


#endif
