/* pointwise_complex.c: the complex64 / complex128 loops of the pointwise table's ops, from ops_complex.def's
 * PCT_COMPLEX_UNARY and PCT_COMPLEX_BINARY lines, through the same loop bodies as the real dtypes' loops
 * (pointwise_loops.h). C11's complex types compute, <tgmath.h> picking the complex functions (cexpf, csqrt...). */
#include "pointwise_loops.h"
#include "complex_math.h"

/* torch's sgn: z / |z|, 0 at 0 */
static inline pct_cfloat cpx_sgn_f(pct_cfloat z) { const float a = cabsf(z); return a == 0 ? 0 : z / a; }
static inline pct_cdouble cpx_sgn_d(pct_cdouble z) { const double a = cabs(z); return a == 0 ? 0 : z / a; }


#define pct_cpx_sgn(x) _Generic((x), pct_cfloat: cpx_sgn_f, pct_cdouble: cpx_sgn_d)(x)
#define pct_cpx_log1p(x) _Generic((x), pct_cfloat: cpx_log1p_f, pct_cdouble: cpx_log1p_d)(x)
#define pct_cpx_expm1(x) _Generic((x), pct_cfloat: cpx_expm1_f, pct_cdouble: cpx_expm1_d)(x)
#define pct_cpx_pow(a, b) _Generic((a), pct_cfloat: cpx_pow_f, pct_cdouble: cpx_pow_d)(a, b)
#define pct_cpx_logaddexp(a, b) _Generic((a), pct_cfloat: cpx_logaddexp_f, pct_cdouble: cpx_logaddexp_d)(a, b)
/* add/sub's alpha (a complex Scalar: its imaginary part rides in ctx) */
#define pct_cpx_alpha(alpha, ctx) ((alpha) + (__typeof__(alpha))((ctx)->alpha_im * I))
/* k * b by the schoolbook formula, as torch's add computes a + alpha * b even for alpha 1: an infinite or NaN part of
 * b makes the other part NaN (1 + inf gives inf+nanj in torch; Note [Complex products and quotients as torch's]) */
#define pct_cpx_scaled(alpha, ctx, b) pct_cpx_mul((__typeof__(b))pct_cpx_alpha(alpha, ctx), b)

#define PCT_COMPLEX_UNARY(id, promo, expr)                                                                      \
    PCT_UNARY_LOOP(COMPLEX64, ComplexFloat, pct_cfloat, pct_cfloat, "complex64", id, expr, 0, promo)           \
    PCT_UNARY_LOOP(COMPLEX128, ComplexDouble, pct_cdouble, pct_cdouble, "complex128", id, expr, 0, promo)
#define PCT_COMPLEX_BINARY(id, promo, expr)                                                                     \
    PCT_BINARY_LOOP(COMPLEX64, ComplexFloat, pct_cfloat, pct_cfloat, "complex64", id, expr, 0, promo)          \
    PCT_BINARY_LOOP(COMPLEX128, ComplexDouble, pct_cdouble, pct_cdouble, "complex128", id, expr, 0, promo)
#include "../ops_complex.def"

static const pct_loop_fn complex_loops[PCT_NUM_OPS][2] = {
#define PCT_COMPLEX_UNARY(id, promo, expr) [PCT_OP_##id] = {unary_##id##_ComplexFloat, unary_##id##_ComplexDouble},
#define PCT_COMPLEX_BINARY(id, promo, expr) [PCT_OP_##id] = {binary_##id##_ComplexFloat, binary_##id##_ComplexDouble},
#include "../ops_complex.def"
};

pct_loop_fn pct_pw_complex_loop(int op_index, int dtype)
{
    if (dtype != PCT_COMPLEX64 && dtype != PCT_COMPLEX128) return NULL;
    return complex_loops[op_index][dtype == PCT_COMPLEX128];
}
