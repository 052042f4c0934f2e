/* pointwise_special.h: scalar helpers of the special functions in ops_api.def (digamma, trigamma, the
 * modified Bessel functions I0 and I1, gcd, lcm). Included by pointwise_math.h. Everything is
 * computed in double and rounded by the loop to the output dtype; the edges follow torch
 * (digamma(+-0) = -+inf, digamma at a negative integer NaN, gcd(0, 0) = 0, results nonnegative). The CUDA runner
 * calls them on the device too (Note [One math for both devices] in ../host_device.h). */
#ifndef PCT_POINTWISE_SPECIAL_H
#define PCT_POINTWISE_SPECIAL_H
#include <math.h>
#include <stdint.h>
#include "../host_device.h"

#define PCT_PI 3.14159265358979323846

/* digamma: reflection for x < 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
 * asymptotic series log(x) - 1/(2x) - sum B_2k / (2k x^2k). */
static inline PCT_HOST_DEVICE double pct_pw_digamma_d(double x)
{
    if (x != x) return x;
    if (x == 0) return signbit(x) ? INFINITY : -INFINITY;
    if (isinf(x)) return x > 0 ? x : NAN;
    double shift = 0;
    if (x < 0) {
        if (x == floor(x)) return NAN;
        /* psi(x) = psi(1 - x) - pi / tan(pi x) */
        double r = x - floor(x);  /* tan(pi x) = tan(pi r), r in (0, 1), without huge arguments */
        shift = -PCT_PI / tan(PCT_PI * r);
        x = 1 - x;
    }
    while (x < 10) {
        shift -= 1 / x;
        x += 1;
    }
    double z = 1 / (x * x);
    double tail = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
    return shift + log(x) - 0.5 / x - tail;
}
#define pct_pw_digamma(x) pct_pw_digamma_d((double)(x))

/* trigamma (polygamma(1, x)): reflection psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x), the recurrence
 * psi1(x) = psi1(x + 1) + 1/x^2, then 1/x + 1/(2x^2) + sum B_2k / x^(2k+1). */
static inline PCT_HOST_DEVICE double pct_pw_trigamma_d(double x)
{
    if (x != x) return x;
    if (x <= 0 && x == floor(x)) return INFINITY;
    double sign = 1, acc = 0;
    if (x < 0) {
        double s = sin(PCT_PI * (x - floor(x)));
        acc = PCT_PI * PCT_PI / (s * s);
        sign = -1;
        x = 1 - x;
    }
    double rec = 0;
    while (x < 10) {
        rec += 1 / (x * x);
        x += 1;
    }
    double z = 1 / (x * x);
    double series = 1 / x + z / 2 + z / x * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66 - z * 691.0 / 2730)))));
    return acc + sign * (rec + series);
}
#define pct_pw_trigamma(x) pct_pw_trigamma_d((double)(x))

/* I_nu(x) for nu = 0 or 1, x >= 0: the power series (x/2)^nu sum (x^2/4)^k / (k! (k+nu)!) below 30 (positive
 * terms, so no cancellation), the asymptotic series e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k above. */
static inline PCT_HOST_DEVICE double pct_pw_bessel_i_series(int nu, double x)
{
    double q = x * x / 4, term = nu ? x / 2 : 1, sum = term;
    for (int k = 1; k < 500 && term > sum * 1e-17; k++) {
        term *= q / ((double)k * (double)(k + nu));
        sum += term;
    }
    return sum;
}
/* e^{-x} I_nu(x) for x > 30 (the asymptotic series) */
static inline PCT_HOST_DEVICE double pct_pw_bessel_i_asymptotic_scaled(int nu, double x)
{
    double mu = 4.0 * nu * nu, term = 1, sum = 1;
    for (int k = 1; k < 60; k++) {
        double next = term * -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
        if (fabs(next) >= fabs(term)) break;  /* the series is asymptotic: stop at its smallest term */
        term = next;
        sum += term;
        if (fabs(term) < 1e-17 * fabs(sum)) break;
    }
    return sum / sqrt(2 * PCT_PI * x);
}
static inline PCT_HOST_DEVICE double pct_pw_bessel_i(int nu, double x)
{
    if (x != x) return x;
    if (isinf(x)) return INFINITY;
    if (x <= 30) return pct_pw_bessel_i_series(nu, x);
    /* e^x split in two so that the prefactor overflows only where the result does */
    double half = exp(x / 2);
    return half * pct_pw_bessel_i_asymptotic_scaled(nu, x) * half;
}
/* e^{-x} I_nu(x), x >= 0 finite (torch.special.i0e, i1e) */
static inline PCT_HOST_DEVICE double pct_pw_bessel_i_scaled(int nu, double x)
{
    return x <= 30 ? pct_pw_bessel_i_series(nu, x) * exp(-x) : pct_pw_bessel_i_asymptotic_scaled(nu, x);
}
/* torch's Chebyshev evaluation gives NaN at +-inf (exp(|x|) times a series at 0 / sqrt(inf)); so do we */
static inline PCT_HOST_DEVICE double pct_pw_i0_d(double x) { return isinf(x) ? NAN : pct_pw_bessel_i(0, fabs(x)); }
static inline PCT_HOST_DEVICE double pct_pw_i1_d(double x)
{
    return isinf(x) ? NAN : x < 0 ? -pct_pw_bessel_i(1, -x) : pct_pw_bessel_i(1, x);
}
#define pct_pw_i0(x) pct_pw_i0_d((double)(x))
#define pct_pw_i1(x) pct_pw_i1_d((double)(x))

/* gcd and lcm as torch computes them, in the element type of `bytes` bytes: abs() keeps the type's minimum
 * negative, and Euclid's signed remainders then give negative results (gcd(6, INT8_MIN) = -2,
 * gcd(INT32_MAX, INT32_MIN) = -1). lcm's a / g * b is computed in C's promoted type (int for
 * int8/int16, exact here; the element type itself for int32/int64, where it wraps) and its abs() taken
 * there; the store wraps it into the element type. No step is undefined in C: a remainder b % -1 never
 * meets b = INT64_MIN (b is the minimum only while a is nonnegative or the minimum), and a / -1 is
 * negated in unsigned arithmetic (torch's int32/int64 kernels trap on INT_MIN / -1). */
static inline PCT_HOST_DEVICE int64_t pct_pw_int_wrap(int64_t x, int bytes)
{
    if (bytes >= 8) return x;
    const int shift = 64 - 8 * bytes;
    return (int64_t)((uint64_t)x << shift) >> shift;
}
static inline PCT_HOST_DEVICE int64_t pct_pw_int_abs(int64_t x, int bytes) { return pct_pw_int_wrap(x < 0 ? (int64_t)(0 - (uint64_t)x) : x, bytes); }
static inline PCT_HOST_DEVICE int64_t pct_pw_gcd_i64(int64_t a, int64_t b, int bytes)
{
    a = pct_pw_int_abs(a, bytes);
    b = pct_pw_int_abs(b, bytes);
    while (a != 0) {
        const int64_t r = b % a;
        b = a;
        a = r;
    }
    return b;
}
static inline PCT_HOST_DEVICE int64_t pct_pw_lcm_i64(int64_t a, int64_t b, int bytes)
{
    const int64_t g = pct_pw_gcd_i64(a, b, bytes);
    if (g == 0) return 0;
    const int64_t q = g == -1 ? (int64_t)(0 - (uint64_t)a) : a / g;
    const int wide = bytes < 4 ? 4 : bytes;
    return pct_pw_int_abs(pct_pw_int_wrap((int64_t)((uint64_t)q * (uint64_t)b), wide), wide);
}
/* the width for the helpers above: a signed element type's own; unsigned types never wrap an abs(), and their
 * values are exact in int64 (the store wraps lcm as their own arithmetic would) */
#define PCT_PW_INT_BYTES ((OT)-1 < (OT)0 ? (int)sizeof(OT) : 8)
#define pct_pw_gcd(a, b) pct_pw_gcd_i64((int64_t)(a), (int64_t)(b), PCT_PW_INT_BYTES)
#define pct_pw_lcm(a, b) pct_pw_lcm_i64((int64_t)(a), (int64_t)(b), PCT_PW_INT_BYTES)

#endif
