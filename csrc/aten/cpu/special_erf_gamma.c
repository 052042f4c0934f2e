/* special_erf_gamma.c: the error-function and gamma families of special_functions.h (erfcx, log_ndtr, ndtri,
 * the Hurwitz zeta function, polygamma, the regularized incomplete gamma functions), in double.
 * Formula numbers are those of the NIST Digital Library of Mathematical Functions (DLMF). */
#include "special_functions.h"
#include "pointwise_math.h" /* erfinv, digamma, trigamma */
#include <math.h>

#define PCT_SF_SQRT_PI 1.77245385090551602730
#define PCT_SF_SQRT_2 1.41421356237309504880
#define PCT_SF_SQRT_2PI 2.50662827463100050242

/* ---- erfcx, log_ndtr, ndtri ---- */

/* exp(x^2) with x^2 split into its rounded value and the rounding error (fma), so that large x lose nothing */
static double exp_of_square(double x)
{
    double hi = x * x, lo = fma(x, x, -hi);
    return exp(hi) * (1 + lo);
}

/* erfc(x) e^{x^2} = (1/sqrt(pi)) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + 2 / (x + ...))))) for x > 0 (DLMF 7.9.2),
 * evaluated by Lentz's method */
static double erfcx_continued_fraction(double x)
{
    const double tiny = 1e-300;
    double f = x, c = x, d = 0;
    for (int k = 1; k < 5000; k++) {
        double a = k / 2.0;
        d = x + a * d;
        d = d == 0 ? tiny : 1 / d;
        c = x + a / c;
        if (c == 0) c = tiny;
        double delta = c * d;
        f *= delta;
        if (fabs(delta - 1) < 1e-16) break;
    }
    return 1 / (PCT_SF_SQRT_PI * f);
}

double pct_sf_erfcx(double x)
{
    if (x != x) return x;
    if (x < 0) {
        /* erfcx(x) = 2 e^{x^2} - erfcx(-x) (from erfc(-x) = 2 - erfc(x), DLMF 7.4.2) */
        if (x < -26.7) return INFINITY;
        return 2 * exp_of_square(x) - pct_sf_erfcx(-x);
    }
    if (isinf(x)) return 0;
    if (x < 2) return exp_of_square(x) * erfc(x);
    return erfcx_continued_fraction(x);
}

/* log Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: for x < -1, Phi = erfcx(t) e^{-t^2} / 2 with t = -x / sqrt 2, so
 * log Phi = log(erfcx(t) / 2) - t^2 never underflows; for x > 0, log1p(-erfc(x / sqrt 2) / 2) keeps the tiny
 * difference from 0 */
double pct_sf_log_ndtr(double x)
{
    if (x != x) return x;
    if (x < -1) {
        double t = -x / PCT_SF_SQRT_2;
        return log(pct_sf_erfcx(t) / 2) - t * t;
    }
    if (x > 0) return log1p(-erfc(x / PCT_SF_SQRT_2) / 2);
    return log(erfc(-x / PCT_SF_SQRT_2) / 2);
}

/* ndtri(p), the x with Phi(x) = p. Near the middle (1/4 <= p <= 3/4) x = sqrt2 erfinv(2p - 1), 2p - 1 exact, refined
 * by Newton on erf(x / sqrt 2) = 2p - 1. In the tails (by symmetry p < 1/4; 1 - p is exact for p >= 1/2), Newton on
 * log Phi(x) = log p, whose terms stay finite for the smallest subnormal p: with t = -x / sqrt 2,
 * log Phi = log(erfcx(t) / 2) - t^2 and (log Phi)' = sqrt(2/pi) / erfcx(t). The start is the tail asymptote
 * x^2 ~ L - log(2 pi L), L = -2 log p, or erfinv where it is accurate. */
double pct_sf_ndtri(double p)
{
    if (p != p || p < 0 || p > 1) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    if (p > 0.75) return -pct_sf_ndtri(1 - p);
    if (p >= 0.25) {
        double y = 2 * p - 1, x = PCT_SF_SQRT_2 * pct_pw_erfinv_d(y);
        for (int i = 0; i < 2; i++) x -= (erf(x / PCT_SF_SQRT_2) - y) / (2 * exp(-x * x / 2) / PCT_SF_SQRT_2PI);
        return x;
    }
    double logp = log(p), x;
    if (p > 1e-10) {
        x = PCT_SF_SQRT_2 * pct_pw_erfinv_d(2 * p - 1);
    } else {
        double l = -2 * logp;
        x = -sqrt(l - log(2 * PCT_PI * l));
    }
    for (int i = 0; i < 60; i++) {
        double t = -x / PCT_SF_SQRT_2, e = pct_sf_erfcx(t);
        double step = (log(e / 2) - t * t - logp) * e * (PCT_SF_SQRT_PI / PCT_SF_SQRT_2);
        x -= step;
        if (fabs(step) <= 1e-16 * fabs(x)) break;
    }
    return x;
}

/* ---- Hurwitz zeta and polygamma ---- */

/* B_2j / (2j)!, j = 1..12 (the Bernoulli numbers of DLMF 24.2.1 over factorials) */
static const double bernoulli_over_factorial[12] = {
    1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160, -691.0 / 1307674368000.0,
    1.0 / 74724249600.0, -3617.0 / 10670622842880000.0, 43867.0 / 5109094217170944000.0,
    -174611.0 / 802857662698291200000.0, 77683.0 / 14101100039391805440000.0,
    -236364091.0 / 1693824136731743669452800000.0,
};

/* zeta(s, q) = sum_{k>=0} (q + k)^-s for s > 1: the first N terms summed, the rest by Euler-Maclaurin
 * (the Euler-Maclaurin formula, DLMF 2.10.1): (q+N)^{1-s}/(s-1) + (q+N)^{-s}/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) (q+N)^{-s-2j+1}.
 * Edges as torch: s = 1 gives inf, s < 1 NaN; q <= 0 an integer gives inf, and a non-integer q <= 0 needs an
 * integer s ((q+k)^-s is real only then). */
double pct_sf_zeta(double s, double q)
{
    /* in torch's order: s = 1 gives inf even for a NaN q, a pole q gives inf even for a NaN s */
    if (s == 1) return INFINITY;
    if (s < 1) return NAN;
    if (q <= 0) {
        if (q == floor(q)) return INFINITY;
        if (s != floor(s)) return NAN;
    }
    if (s != s || q != q) return NAN;
    if (isinf(q)) return NAN;  /* torch: inf^-s - inf^{1-s} terms */
    if (isinf(s)) return q == 1 ? 1 : (q < 1 ? INFINITY : NAN);  /* torch's: (q + k)^-inf summed as 0 * inf */
    double sum = 0, a = q;
    int n = 0;
    /* direct terms until a >= 9 (at least 9 of them), or until they stop mattering */
    while (n < 9 || a <= 9) {
        double term = pow(a, -s);
        sum += term;
        n++;
        a += 1;
        if (fabs(term) < 1e-17 * fabs(sum) && n >= 9) return sum;
    }
    double w = pow(a, -s);
    sum += w * a / (s - 1) + w / 2;
    double rising = s, apow = w / a, inv_a2 = 1 / (a * a);
    for (int j = 0; j < 12; j++) {
        double add = bernoulli_over_factorial[j] * rising * apow;
        sum += add;
        if (fabs(add) < 1e-17 * fabs(sum)) break;
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
        apow *= inv_a2;
    }
    return sum;
}

/* psi^(n)(x) = (-1)^{n+1} n! zeta(n + 1, x) (DLMF 25.11.12) for n >= 2; digamma and trigamma for n = 0, 1 */
double pct_sf_polygamma(int64_t n, double x)
{
    if (n == 0) return pct_pw_digamma_d(x);
    if (n == 1) return x == -INFINITY ? NAN : pct_pw_trigamma_d(x);
    double nd = (double)n;
    return ((n & 1) ? 1.0 : -1.0) * exp(lgamma(nd + 1)) * pct_sf_zeta(nd + 1, x);
}

/* ---- regularized incomplete gamma functions P(a, x) and Q(a, x) ---- */

/* x^a e^{-x} / Gamma(a + 1). For large a, with Stirling's series ln Gamma(a + 1) = (a + 1/2) ln a - a + ln(2 pi)/2 + S(a),
 * S(a) = 1/(12a) - 1/(360a^3) + 1/(1260a^5) - 1/(1680a^7) + 1/(1188a^9) (DLMF 5.11.1), the exponent becomes
 * -a (t - ln(1 + t)) - ln(2 pi a)/2 - S(a) with t = (x - a)/a: no cancellation between terms of size a ln x. */
static double igamma_prefactor(double a, double x)
{
    if (a < 10) return exp(a * log(x) - x - lgamma(a + 1));
    double t = (x - a) / a, r = 1 / (a * a);
    double stirling = (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / a;
    return exp(-a * (t - log1p(t)) - stirling) / sqrt(2 * PCT_PI * a);
}

/* P(a, x) = x^a e^{-x} / Gamma(a+1) sum_k x^k / ((a+1)(a+2)...(a+k)) (DLMF 8.7.1 with 8.2.4), for x < a + 1 */
static double igamma_series(double a, double x)
{
    double term = 1, sum = 1;
    for (int k = 1; k < 100000; k++) {
        term *= x / (a + k);
        sum += term;
        if (term < 1e-17 * sum) break;
    }
    return igamma_prefactor(a, x) * sum;
}

/* Q(a, x) = x^a e^{-x} / Gamma(a) * 1/(x + 1 - a - 1(1 - a)/(x + 3 - a - 2(2 - a)/(x + 5 - a - ...))) (DLMF 8.9.2),
 * for x >= a + 1, by Lentz's method */
static double igammac_continued_fraction(double a, double x)
{
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, f = d;
    for (int k = 1; k < 100000; k++) {
        double an = -k * (k - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double delta = d * c;
        f *= delta;
        if (fabs(delta - 1) < 1e-16) break;
    }
    return igamma_prefactor(a, x) * a * f;  /* x^a e^-x / Gamma(a) = prefactor * a */
}

/* the domain and edges shared by P and Q; returns 1 with *p set to P where they decide the value */
static int igamma_edges(double a, double x, double *p)
{
    /* in torch's order, so that a NaN argument decides nothing where an earlier test does: P(NaN, 0) = 0 */
    if (a < 0 || x < 0) { *p = NAN; return 1; }
    if (a == 0) { *p = x > 0 ? 1 : NAN; return 1; }
    if (x == 0) { *p = 0; return 1; }
    if (isinf(a)) { *p = isinf(x) ? NAN : 0; return 1; }
    if (isinf(x)) { *p = 1; return 1; }
    return 0;
}

double pct_sf_igamma(double a, double x)
{
    double p;
    if (igamma_edges(a, x, &p)) return p;
    return x < a + 1 ? igamma_series(a, x) : 1 - igammac_continued_fraction(a, x);
}

double pct_sf_igammac(double a, double x)
{
    double p;
    if (igamma_edges(a, x, &p)) return p != p ? p : 1 - p;
    return x < a + 1 ? 1 - igamma_series(a, x) : igammac_continued_fraction(a, x);
}
