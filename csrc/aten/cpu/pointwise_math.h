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

/* Inverse error function: a polynomial first guess in w = -log(1 - y^2) (one for w < 5, one in
 * sqrt(w) - 3 beyond; coefficients highest power first), times y, refined by two Newton steps.
 * The float32 vector form (vecmath.c) evaluates polynomials of its own in double instead. */
#define PCT_ERFINV_CENTRAL                                                                          \
    { 2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, \
      -0.00417768164, 0.246640727, 1.50140941 }
#define PCT_ERFINV_TAIL                                                                             \
    { -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,   \
      0.00943887047, 1.00167406, 2.83297682 }
#define PCT_ERFINV_TERMS 9
#define PCT_TWO_OVER_SQRT_PI 1.1283791670955126
static inline PCT_HOST_DEVICE double pct_pw_erfinv_d(double y)
{
    if (y != y || y < -1 || y > 1) return NAN;
    if (y == 1) return INFINITY;
    if (y == -1) return -INFINITY;
    const double central[PCT_ERFINV_TERMS] = PCT_ERFINV_CENTRAL, tail[PCT_ERFINV_TERMS] = PCT_ERFINV_TAIL;
    double w = -log((1.0 - y) * (1.0 + y));
    const double *c = w < 5.0 ? central : tail;
    w = w < 5.0 ? w - 2.5 : sqrt(w) - 3.0;
    double x = c[0];
    for (int i = 1; i < PCT_ERFINV_TERMS; i++) x = c[i] + x * w;
    x *= y;
    for (int i = 0; i < 2; i++) /* Newton: f(x) = erf(x) - y, f'(x) = 2/sqrt(pi) exp(-x^2) */
        x -= (erf(x) - y) / (PCT_TWO_OVER_SQRT_PI * exp(-x * x));
    return x;
}
#define pct_pw_erfinv(x) pct_pw_erfinv_d((double)(x))

#include "pointwise_special.h"

#endif
