/* complex_arith.h: torch's product and quotient of complex64 / complex128 values (Note [Complex products and quotients
 * as torch's]), without <tgmath.h>, so that files whose real math must keep C's double functions (reduce.c) can use
 * them too. C only. */
#ifndef PCT_CPU_COMPLEX_ARITH_H
#define PCT_CPU_COMPLEX_ARITH_H
#include "../dtype.h"
#include <complex.h>
#include <math.h>

/* Note [Complex products and quotients as torch's]: C's `*` and `/` on complex values follow Annex G, which turns
 * some NaN results back into infinities ((inf + nan i) / 2 is inf + inf i there); torch's kernels do not. Its
 * product is the schoolbook formula (an infinite part meeting a zero part gives NaN: (inf + 1i)(1 + 0i) is
 * inf + nan i), and its quotient Smith's algorithm: divide through by the larger part of the divisor, and where the
 * divisor is 0 + 0i, each part of the dividend by a zero (so 1 / 0 is inf + nan i). Computed in the element's own
 * precision, like torch's. */
#define PCT_CPX_ARITH(T, R, sfx, MAKE)                                                            \
    static inline T cpx_mul_##sfx(T x, T y)                                                       \
    {                                                                                             \
        const R a = creal(x), b = cimag(x), c = creal(y), d = cimag(y);                           \
        return MAKE(a * c - b * d, a * d + b * c);                                                \
    }                                                                                             \
    static inline T cpx_div_##sfx(T x, T y)                                                       \
    {                                                                                             \
        const R a = creal(x), b = cimag(x), c = creal(y), d = cimag(y);                           \
        const R ac = fabs(c), ad = fabs(d);                                                       \
        if (ac >= ad) {                                                                           \
            if (ac == 0 && ad == 0) return MAKE(a / ac, b / ad);                                  \
            const R ratio = d / c, scale = (R)1 / (c + d * ratio);                                \
            return MAKE((a + b * ratio) * scale, (b - a * ratio) * scale);                        \
        }                                                                                         \
        const R ratio = c / d, scale = (R)1 / (d + c * ratio);                                    \
        return MAKE((a * ratio + b) * scale, (b * ratio - a) * scale);                            \
    }
PCT_CPX_ARITH(pct_cfloat, float, f, CMPLXF)
PCT_CPX_ARITH(pct_cdouble, double, d, CMPLX)
#define pct_cpx_mul(a, b) _Generic((a), pct_cfloat: cpx_mul_f, pct_cdouble: cpx_mul_d)(a, b)
#define pct_cpx_div(a, b) _Generic((a), pct_cfloat: cpx_div_f, pct_cdouble: cpx_div_d)(a, b)

#endif
