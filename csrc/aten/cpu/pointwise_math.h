/* pointwise_math.h: scalar helpers used by the pointwise expressions of ops.def.
 * They are type-generic (float, double, or integral types) through <tgmath.h> and
 * macros, and follow torch's definitions at the edges (division by zero, NaN,
 * signed zero). Integer errors are reported through ctx->error, never by trapping.
 * The CUDA runner calls the same helpers on the device (Note [One math for both devices] in ../host_device.h): C++
 * picks by overloading where C uses _Generic. */
#ifndef PCT_POINTWISE_MATH_H
#define PCT_POINTWISE_MATH_H
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include "../host_device.h"

typedef struct pct_pw_ctx {
    double alpha_d;       /* the `alpha` / `value` Scalar for floating loops */
    int64_t alpha_i;      /* ... and for integral loops */
    double p1, p2;        /* extra parameters (clamp bounds, eps, ...) */
    int64_t p1_i, p2_i;   /* ... as integers, where a loop needs them exact (int64 clamp bounds) */
    int has_p1, has_p2;
    int error;            /* set by a loop on a data-dependent error (see PCT_PW_ERR_*) */
    int has_scalar_b;     /* mul/div of float16/bfloat16 by a 0-d `other`: its value before the cast to the */
    double scalar_b;      /* ... tensor's dtype, used in float as torch's original_scalar_value */
    int has_scalar_a;     /* the same for a 0-d `input`, where the runner takes it so (CUDA: */
    double scalar_a;      /* ... pct_pw_runner.cpu_scalars_in_opmath) */
    double alpha_im;      /* complex loops: the imaginary part of `alpha` */
} pct_pw_ctx;

enum { PCT_PW_ERR_ZERO_DIVISION = 1 };

/* On the CPU ctx is shared by the threads of a loop; on the device each element works on its own copy of it, which
 * the CUDA runner reports after the element (Note [Errors of CUDA loops] in csrc/cuda/pointwise.cuh). */
static inline PCT_HOST_DEVICE void pct_pw_fail(pct_pw_ctx *ctx, int code)
{
#ifdef __CUDA_ARCH__
    ctx->error = code;
#else
    __atomic_store_n(&ctx->error, code, __ATOMIC_RELAXED);
#endif
}

/* Integer helpers go through int64 functions selected by _Generic, so bool and unsigned
 * inputs never meet comparisons that -Wextra calls always-false. */
static inline PCT_HOST_DEVICE int64_t pct_pw_abs_i64(int64_t x) { return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }
static inline PCT_HOST_DEVICE int64_t pct_pw_sign_i64(int64_t x) { return (x > 0) - (x < 0); }
static inline PCT_HOST_DEVICE int64_t pct_pw_keep_i64(int64_t x) { return x; }
static inline PCT_HOST_DEVICE int64_t pct_pw_nonzero_i64(int64_t x) { return x != 0; }
static inline PCT_HOST_DEVICE int64_t pct_pw_bitnot_i64(int64_t x) { return ~x; }
static inline PCT_HOST_DEVICE int64_t pct_pw_not_i64(int64_t x) { return !x; }
#ifdef __cplusplus
/* one overload set per helper: the types _Generic names, then a template for its default */
#define PCT_PW_INT_PICK(name, on_bool, on_uint8, otherwise)                                                    \
    static inline PCT_HOST_DEVICE int64_t name(bool x) { return on_bool((int64_t)x); }                        \
    static inline PCT_HOST_DEVICE int64_t name(uint8_t x) { return on_uint8((int64_t)x); }                    \
    template <typename T> static inline PCT_HOST_DEVICE int64_t name(T x) { return otherwise((int64_t)x); }
PCT_PW_INT_PICK(pct_pw_abs_int, pct_pw_keep_i64, pct_pw_keep_i64, pct_pw_abs_i64)
PCT_PW_INT_PICK(pct_pw_sign_int, pct_pw_keep_i64, pct_pw_nonzero_i64, pct_pw_sign_i64)
PCT_PW_INT_PICK(pct_pw_bitnot, pct_pw_not_i64, pct_pw_bitnot_i64, pct_pw_bitnot_i64)
#else
#define pct_pw_abs_int(x) _Generic((x), bool: pct_pw_keep_i64, uint8_t: pct_pw_keep_i64, default: pct_pw_abs_i64)((int64_t)(x))
#define pct_pw_sign_int(x) _Generic((x), bool: pct_pw_keep_i64, uint8_t: pct_pw_nonzero_i64, default: pct_pw_sign_i64)((int64_t)(x))
#define pct_pw_bitnot(x) _Generic((x), bool: pct_pw_not_i64, default: pct_pw_bitnot_i64)((int64_t)(x))
#endif
/* torch: sign(nan) is 0 */
#define pct_pw_sign(x) ((x) > 0 ? 1 : ((x) < 0 ? -1 : 0))
/* torch.angle of a real number: pi below zero, NaN kept, else 0 */
#define pct_pw_angle(x) ((x) != (x) ? (x) : (x) < 0 ? 3.14159265358979323846 : 0.0)
#define pct_pw_nanmin(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : ((a) < (b) ? (a) : (b)))
#define pct_pw_nanmax(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : ((a) > (b) ? (a) : (b)))
/* Not inlined: GCC 12 miscompiles (ICE) a vectorized signbit on SSE2 (a CPU loop's trouble; device code inlines it). */
#ifdef __CUDACC__
static inline PCT_HOST_DEVICE bool pct_pw_signbit(double x) { return signbit(x) != 0; }
#else
__attribute__((noinline, unused)) static bool pct_pw_signbit(double x) { return signbit(x) != 0; }
#endif
/* Shifts by a negative or too large amount give 0 (left) or the sign fill (right), as in torch. */
static inline PCT_HOST_DEVICE int64_t pct_pw_shl_i64(int64_t a, int64_t b, int bits) { return (b < 0 || b >= bits) ? 0 : (int64_t)((uint64_t)a << b); }
static inline PCT_HOST_DEVICE int64_t pct_pw_shr_i64(int64_t a, int64_t b, int bits) { return (b < 0 || b >= bits) ? (a < 0 ? -1 : 0) : a >> b; }
#define pct_pw_shl(a, b) pct_pw_shl_i64((int64_t)(a), (int64_t)(b), 8 * (int)sizeof(a))
#define pct_pw_shr(a, b) pct_pw_shr_i64((int64_t)(a), (int64_t)(b), 8 * (int)sizeof(a))

static inline PCT_HOST_DEVICE double pct_pw_floordiv_d(double a, double b)
{
    if (b == 0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
    if (div == 0) return copysign(0.0, a / b);
    double fl = floor(div);
    if (div - fl > 0.5) fl += 1;
    return fl;
}
static inline PCT_HOST_DEVICE float pct_pw_floordiv_f(float a, float b)
{
    if (b == 0) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
    if (div == 0) return copysignf(0.0f, a / b);
    float fl = floorf(div);
    if (div - fl > 0.5f) fl += 1;
    return fl;
}
#ifdef __cplusplus
static inline PCT_HOST_DEVICE float pct_pw_floordiv(float a, float b) { return pct_pw_floordiv_f(a, b); }
static inline PCT_HOST_DEVICE double pct_pw_floordiv(double a, double b) { return pct_pw_floordiv_d(a, b); }
#else
#define pct_pw_floordiv(a, b) _Generic((a), float: pct_pw_floordiv_f, default: pct_pw_floordiv_d)((a), (b))
#endif

#define pct_pw_remainder(a, b) pct_pw_remainder_impl((a), (b), fmod((a), (b)))
#define pct_pw_remainder_impl(a, b, m) (((m) != 0 && (((b) < 0) != ((m) < 0))) ? (m) + (b) : (m))

/* Integer division family: b == 0 is an error; b == -1 avoids INT_MIN / -1 trapping. */
static inline PCT_HOST_DEVICE int64_t pct_pw_floordiv_i64(int64_t a, int64_t b, pct_pw_ctx *ctx)
{
    if (b == 0) { pct_pw_fail(ctx, PCT_PW_ERR_ZERO_DIVISION); return 0; }
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
    return q;
}
static inline PCT_HOST_DEVICE int64_t pct_pw_div_trunc_i64(int64_t a, int64_t b, pct_pw_ctx *ctx)
{
    if (b == 0) { pct_pw_fail(ctx, PCT_PW_ERR_ZERO_DIVISION); return 0; }
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    return a / b;
}
static inline PCT_HOST_DEVICE int64_t pct_pw_fmod_i64(int64_t a, int64_t b, pct_pw_ctx *ctx)
{
    if (b == 0) { pct_pw_fail(ctx, PCT_PW_ERR_ZERO_DIVISION); return 0; }
    if (b == -1) return 0;
    return a % b;
}
static inline PCT_HOST_DEVICE int64_t pct_pw_remainder_i64(int64_t a, int64_t b, pct_pw_ctx *ctx)
{
    int64_t m = pct_pw_fmod_i64(a, b, ctx);
    return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
#define pct_pw_floordiv_int(a, b, ctx) pct_pw_floordiv_i64((int64_t)(a), (int64_t)(b), (ctx))
#define pct_pw_div_trunc_int(a, b, ctx) pct_pw_div_trunc_i64((int64_t)(a), (int64_t)(b), (ctx))
#define pct_pw_fmod_int(a, b, ctx) pct_pw_fmod_i64((int64_t)(a), (int64_t)(b), (ctx))
#define pct_pw_remainder_int(a, b, ctx) pct_pw_remainder_i64((int64_t)(a), (int64_t)(b), (ctx))

/* Integer powers by squaring; negative exponents give 0 except for bases 1 and -1. */
static inline PCT_HOST_DEVICE int64_t pct_pw_pow_i64(int64_t a, int64_t b)
{
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
    }
    uint64_t result = 1, base = (uint64_t)a;
    while (b) {
        if (b & 1) result *= base;
        base *= base;
        b >>= 1;
    }
    return (int64_t)result;
}
#define pct_pw_pow_int(a, b) pct_pw_pow_i64((int64_t)(a), (int64_t)(b))
/* torch's kernel for an exponent it recognises: 2, 3 and -2 by products in the compute type (x * x * x rounds twice,
 * as torch's); pow otherwise (<tgmath.h>: powf for float; pow(x, 1) is x). A float32/float64/bfloat16 pow by a scalar
 * 0.5, -0.5 or -1 runs the sqrt, rsqrt or reciprocal op instead, as torch's (pointwise_call.c), and the CPU loops fold
 * 2, 3 and -2 over a scalar exponent into loops of their own (Note [pow by a constant] in pointwise_loops.h). */
#define pct_pw_pow(a, b) ((b) == 2 ? (a) * (a) : (b) == 3 ? (a) * (a) * (a) : (b) == -2 ? 1 / ((a) * (a)) : pow((a), (b)))

static inline PCT_HOST_DEVICE double pct_pw_logaddexp_d(double a, double b)
{
    double m = a > b ? a : b;
    if (isinf(m) && a == b) return a;
    if (a != a || b != b) return NAN;
    return m + log1p(exp(-fabs(a - b)));
}
#define pct_pw_logaddexp(a, b) pct_pw_logaddexp_d((a), (b))
#define pct_pw_xlogy(a, b) ((b) != (b) ? (b) : (a) == 0 ? 0 * (a) : (a) * log(b))

/* Inverse error function: erfinv(y) = y g(w), w = -log((1 - y)(1 + y)), g a polynomial in u, with
 *   u = (w - 2.5) / 2.5                      for w < 5  (|y| < 0.9966), degree 20,
 *   u = (sqrt(w) - 3.1796) / 0.94352         for w < 17 (every float below 1), degree 20,
 *   u = (sqrt(w) - 5.1029) / 0.97983         beyond, to 37 (every double below 1), degree 16.
 * The coefficients (highest power first) are our fit: g at the Chebyshev nodes of each interval, from mpmath's
 * erfinv at 40 digits, interpolated and turned into powers of u; evaluated in double the relative error stays
 * below 6e-16. No Newton step follows: with a double erf it would add, not remove, error (a rounding of erf near
 * 1 moves x by that rounding over erf'(x) = 2/sqrt(pi) exp(-x^2), 1e-9 at x = 4). The float32 vector form
 * (vecmath.c) evaluates the first two the same way. */
#define PCT_ERFINV_DEGREE 20
#define PCT_ERFINV_CENTRAL                                                                               \
    { 2.1429472902311662e-10, -7.7188351140484286e-10, -1.3935964273638089e-09, 1.0579498703941364e-08,     \
      -7.5683226552747089e-09, -7.0317781360937727e-08, 2.0031259253513393e-07, 1.353874205456846e-07,      \
      -1.8543174128265833e-06, 2.8518679804225912e-06, 8.6528879028133712e-06, -4.1432135639552622e-05,     \
      2.0472379331231509e-05, 0.00029219069639802497, -0.00083413563847984284, -0.0004878983993674618,      \
      0.0085254009505814632, -0.019573561059506937, -0.02610823577738897, 0.6166006918604171,               \
      1.501409351110792 }
#define PCT_ERFINV_TAIL                                                                                  \
    { 1.7044048049956228e-09, -8.1303783567892781e-09, 5.2669386597877308e-09, 5.0658475323269243e-08,      \
      -1.6776137121921952e-07, 1.4679604916625614e-07, 5.9492596540094037e-07, -2.5417487199516241e-06,     \
      3.6018062093640814e-06, 4.3586894854090857e-06, -3.107589674664341e-05, 6.2047095788622081e-05,       \
      -1.9139824972531061e-05, -0.00023584922817935724, 0.00079677844608581395, -0.0015913659591703744,     \
      0.0025051781974573016, -0.0038163801725287876, 0.0055583083927734922, 0.9477109806671401,             \
      3.0131301142790483 }
#define PCT_ERFINV_TAIL_MID 3.179586801558725   /* (sqrt(5) + sqrt(17)) / 2 */
#define PCT_ERFINV_TAIL_HALF 0.9435188240589354 /* (sqrt(17) - sqrt(5)) / 2 */
#define PCT_ERFINV_FAR_DEGREE 16
#define PCT_ERFINV_FAR                                                                                     \
    { 1.956197926033056e-11, -1.8761003820018282e-10, 6.7782913091017896e-10, -1.5779095697060499e-09,      \
      3.2127300410879527e-09, -6.3599623744152962e-09, 1.3333020922802141e-08, -3.7438272042292634e-08,     \
      1.5115521626142983e-07, -7.1695132391852042e-07, 3.4271921174399498e-06, -1.5438377254355278e-05,     \
      6.1339513875808622e-05, -0.00017471628303476758, -0.00019249005849267362, 0.98988677623825017,        \
      4.9538990522207795 }
#define PCT_ERFINV_FAR_MID 5.10293407795794     /* (sqrt(17) + sqrt(37)) / 2 */
#define PCT_ERFINV_FAR_HALF 0.9798284523402794  /* (sqrt(37) - sqrt(17)) / 2 */
static inline PCT_HOST_DEVICE double pct_pw_erfinv_d(double y)
{
    if (y != y || y < -1 || y > 1) return NAN;
    if (y == 1) return INFINITY;
    if (y == -1) return -INFINITY;
    const double central[PCT_ERFINV_DEGREE + 1] = PCT_ERFINV_CENTRAL, tail[PCT_ERFINV_DEGREE + 1] = PCT_ERFINV_TAIL;
    const double far[PCT_ERFINV_FAR_DEGREE + 1] = PCT_ERFINV_FAR;
    const double w = -log((1.0 - y) * (1.0 + y));
    const double *c = w < 5.0 ? central : w < 17.0 ? tail : far;
    const int degree = w < 17.0 ? PCT_ERFINV_DEGREE : PCT_ERFINV_FAR_DEGREE;
    const double u = w < 5.0 ? (w - 2.5) * 0.4
                   : w < 17.0 ? (sqrt(w) - PCT_ERFINV_TAIL_MID) * (1.0 / PCT_ERFINV_TAIL_HALF)
                              : (sqrt(w) - PCT_ERFINV_FAR_MID) * (1.0 / PCT_ERFINV_FAR_HALF);
    double g = c[0];
    for (int i = 1; i <= degree; i++) g = c[i] + g * u;
    return g * y;
}
#define pct_pw_erfinv(x) pct_pw_erfinv_d((double)(x))

#include "pointwise_special.h"

#endif
