/* special_functions.c: the scalar special functions of special_functions.h, in double.
 *
 * Formula numbers are those of the NIST Digital Library of Mathematical Functions (DLMF). Where several methods
 * cover an argument range, each is used only where it converges to full double precision:
 *   - Bessel J0, J1, Y0, Y1: power series (10.2.2, 10.8.1) for |x| <= 4, Miller's backward recurrence normalised
 *     by 10.12.4 (with Neumann's series, A&S 9.1.88, for Y) up to 25, Hankel's expansion (10.17.3-4) above;
 *   - K0, K1 (and Ai for x > 1, through 9.6.1): power series (10.31.1) below 2, the integral 10.32.9 by the
 *     trapezoidal rule (exponentially convergent for this analytic, doubly exponentially decaying integrand)
 *     up to 30, the asymptotic series 10.40.2 above;
 *   - Ai for x <= 1: Taylor steps of Ai'' = x Ai (9.2.1) from Ai(0), Ai'(0) (9.2.3-4) down to -10, the
 *     asymptotic form 9.7.9 below. */
#include "special_functions.h"
#include "pointwise_special.h"
#include <float.h>
#include <math.h>

#define PCT_SF_EULER_GAMMA 0.57721566490153286061
#define PCT_SF_SQRT_PI 1.77245385090551602730
#define PCT_SF_SQRT_2 1.41421356237309504880

/* ---- Bessel J and Y of order 0 and 1 ---- */

typedef struct { double j0, j1, y0, y1; } bessel_jy;

/* DLMF 10.2.2 and 10.8.1 for n = nu (0 or 1), x > 0: J_nu and Y_nu from their power series in -x^2/4 */
static double bessel_j_series(int nu, double x)
{
    double q = -x * x / 4, term = nu ? x / 2 : 1, sum = term;
    for (int k = 1; k < 200 && fabs(term) > 1e-18 * fabs(sum); k++) {
        term *= q / ((double)k * (double)(k + nu));
        sum += term;
    }
    return sum;
}

/* sum_k (psi(k+1) + psi(n+k+1)) q^k (x/2)^n / (k! (n+k)!), n = nu (0 or 1): the series that Y_n (q = -x^2/4, DLMF
 * 10.8.1) and K_n (q = x^2/4, 10.31.1) share */
static double bessel_psi_series(int nu, double x, double q)
{
    double term = nu ? x / 2 : 1;
    double psi_k = -PCT_SF_EULER_GAMMA, psi_nk = nu ? 1 - PCT_SF_EULER_GAMMA : -PCT_SF_EULER_GAMMA;
    double sum = term * (psi_k + psi_nk);
    for (int k = 1; k < 200; k++) {
        term *= q / ((double)k * (double)(k + nu));
        psi_k += 1.0 / k;
        psi_nk += 1.0 / (k + nu);
        double add = term * (psi_k + psi_nk);
        sum += add;
        if (fabs(add) < 1e-18 * fabs(sum)) break;
    }
    return sum;
}

static double bessel_y_series(int nu, double x, double jnu)
{
    /* Y_n = -(x/2)^-n / pi sum_{k<n} (n-k-1)!/k! (x^2/4)^k + (2/pi) ln(x/2) J_n
     *       - (x/2)^n / pi sum_k (psi(k+1) + psi(n+k+1)) (-x^2/4)^k / (k! (n+k)!) */
    double sum = bessel_psi_series(nu, x, -x * x / 4);
    double y = (2 / PCT_PI) * log(x / 2) * jnu - sum / PCT_PI;
    return nu ? y - 2 / (PCT_PI * x) : y;
}

/* Miller's algorithm: J_n(x) / J_N(x) by the backward recurrence J_{n-1} = (2n/x) J_n - J_{n+1} from a start N
 * well above x, normalised by 1 = J_0 + 2 sum J_2k (10.12.4). Y_0 from Neumann's series
 * Y_0 = (2/pi)(ln(x/2) + gamma) J_0 - (4/pi) sum_k (-1)^k J_2k / k (Abramowitz & Stegun 9.1.88), and Y_1 = -Y_0'
 * from differentiating it term by term with J_m' = (J_{m-1} - J_{m+1}) / 2. */
static bessel_jy bessel_jy_miller(double x)
{
    int start = 2 * (int)((x + 44) / 2);
    double j[160];
    j[start + 1] = 0;
    j[start] = 1e-200;
    for (int n = start; n >= 1; n--) j[n - 1] = (2.0 * n / x) * j[n] - j[n + 1];
    double norm = j[0];
    for (int k = 2; k <= start; k += 2) norm += 2 * j[k];
    double neumann = 0, derived = 0;
    for (int k = 1; 2 * k <= start; k++) {
        double sign = (k & 1) ? -1 : 1;
        neumann += sign * j[2 * k] / k;
        derived += sign * (j[2 * k - 1] - j[2 * k + 1]) / k;
    }
    bessel_jy r;
    r.j0 = j[0] / norm;
    r.j1 = j[1] / norm;
    double lg = log(x / 2) + PCT_SF_EULER_GAMMA;
    r.y0 = (2 / PCT_PI) * lg * r.j0 - (4 / PCT_PI) * neumann / norm;
    r.y1 = -(2 / (PCT_PI * x)) * r.j0 + (2 / PCT_PI) * lg * r.j1 + (2 / PCT_PI) * derived / norm;
    return r;
}

/* Hankel's expansion (10.17.3-4): J = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y = sqrt(2/(pi x)) (P sin chi +
 * Q cos chi), chi = x - (nu/2 + 1/4) pi, with a_k(nu) = prod_{j<=k} (4nu^2 - (2j-1)^2) / (k! 8^k). cos chi and sin chi
 * are formed from cos x and sin x, exact for any x, rather than from x - 3pi/4. */
static void bessel_hankel(int nu, double x, double *jv, double *yv)
{
    double mu = 4.0 * nu * nu, term = 1, p = 1, q = 0;
    for (int k = 1; k < 60; k++) {
        double next = term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
        if (fabs(next) >= fabs(term) || next == 0) break;
        term = next;
        /* a_k / x^k enters P (even k) or Q (odd k), with the sign (-1)^floor(k/2) */
        double signed_term = ((k / 2) & 1) ? -term : term;
        if (k & 1) q += signed_term; else p += signed_term;
        if (fabs(term) < 1e-17) break;
    }
    double c = cos(x), s = sin(x), cchi, schi;
    if (nu == 0) { cchi = (c + s) / PCT_SF_SQRT_2; schi = (s - c) / PCT_SF_SQRT_2; }
    else { cchi = (s - c) / PCT_SF_SQRT_2; schi = -(s + c) / PCT_SF_SQRT_2; }
    double amp = sqrt(2 / (PCT_PI * x));
    *jv = amp * (p * cchi - q * schi);
    *yv = amp * (p * schi + q * cchi);
}

/* J_nu (parity (-1)^nu in x) and, for x > 0, Y_nu */
static double bessel_jy_eval(int nu, double x, int want_y)
{
    if (x <= 4) {
        double jv = bessel_j_series(nu, x);
        return want_y ? bessel_y_series(nu, x, jv) : jv;
    }
    if (x <= 25) {
        bessel_jy r = bessel_jy_miller(x);
        return want_y ? (nu ? r.y1 : r.y0) : (nu ? r.j1 : r.j0);
    }
    double jv, yv;
    bessel_hankel(nu, x, &jv, &yv);
    return want_y ? yv : jv;
}

double pct_sf_bessel_j0(double x)
{
    if (isinf(x)) return NAN;  /* torch's value at +-inf */
    return x != x ? x : bessel_jy_eval(0, fabs(x), 0);
}

double pct_sf_bessel_j1(double x)
{
    if (isinf(x)) return NAN;
    if (x != x) return x;
    double v = bessel_jy_eval(1, fabs(x), 0);
    return x < 0 ? -v : v;
}

static double bessel_y(int nu, double x)
{
    if (x != x || x < 0 || isinf(x)) return NAN;
    if (x == 0) return -INFINITY;
    return bessel_jy_eval(nu, x, 1);
}
double pct_sf_bessel_y0(double x) { return bessel_y(0, x); }
double pct_sf_bessel_y1(double x) { return bessel_y(1, x); }

/* ---- modified Bessel functions ---- */

double pct_sf_modified_bessel_i0(double x) { return pct_pw_i0_d(x); }
double pct_sf_modified_bessel_i1(double x) { return pct_pw_i1_d(x); }
double pct_sf_bessel_i0e(double x)
{
    if (isinf(x)) return 0;
    return x != x ? x : pct_pw_bessel_i_scaled(0, fabs(x));
}
double pct_sf_bessel_i1e(double x)
{
    if (isinf(x)) return x > 0 ? 0.0 : -0.0;
    if (x != x) return x;
    double v = pct_pw_bessel_i_scaled(1, fabs(x));
    return x < 0 ? -v : v;
}

/* e^x K_nu(x) for x >= 1/2 (any real nu): the integral e^x K_nu(x) = int_0^inf e^{-x (cosh t - 1)} cosh(nu t) dt
 * (DLMF 10.32.9) by the trapezoidal rule of step 1/10 up to x = 30 (its error is about e^{0.3 x - 49}), the
 * asymptotic series sqrt(pi / (2x)) sum_k a_k(nu) / x^k (10.40.2) above (smallest term about e^{-2x}). */
static double bessel_k_scaled(double nu, double x)
{
    if (x > 30) {
        double mu = 4 * nu * nu, term = 1, sum = 1;
        for (int k = 1; k < 80; k++) {
            double next = term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
            if (fabs(next) >= fabs(term)) break;
            term = next;
            sum += term;
            if (fabs(term) < 1e-17 * fabs(sum)) break;
        }
        return sqrt(PCT_PI / (2 * x)) * sum;
    }
    const double h = 0.1;
    double sum = 0.5;  /* the t = 0 node, halved (the integrand is even in t) */
    for (int k = 1; k < 2000; k++) {
        double t = k * h, f = exp(-x * (cosh(t) - 1)) * cosh(nu * t);
        sum += f;
        if (f < 1e-18 * sum) break;
    }
    return sum * h;
}

/* K_nu(x), nu = 0 or 1, for 0 < x <= 2 from 10.31.1:
 * K_n = (1/2)(x/2)^-n sum_{k<n} (n-k-1)!/k! (-x^2/4)^k + (-1)^{n+1} ln(x/2) I_n(x)
 *       + (-1)^n (1/2)(x/2)^n sum_k (psi(k+1) + psi(n+k+1)) (x^2/4)^k / (k! (n+k)!) */
static double bessel_k_series(int nu, double x)
{
    double sum = bessel_psi_series(nu, x, x * x / 4);
    double inu = pct_pw_bessel_i(nu, x);
    if (nu == 0) return -log(x / 2) * inu + sum / 2;
    return 1 / x + log(x / 2) * inu - sum / 2;
}

/* K_nu(x) (scaled: e^x K_nu(x)), with torch's edges: NaN below 0, inf at 0, 0 at inf */
static double bessel_k(int nu, double x, int scaled)
{
    if (x != x || x < 0) return NAN;
    if (x == 0) return INFINITY;
    if (isinf(x)) return 0;
    if (x <= 2) return scaled ? bessel_k_series(nu, x) * exp(x) : bessel_k_series(nu, x);
    double ks = bessel_k_scaled(nu, x);
    if (scaled) return ks;
    double half = exp(-x / 2);  /* e^-x in two halves: K underflows gradually, as the true value does */
    return ks * half * half;
}
double pct_sf_modified_bessel_k0(double x) { return bessel_k(0, x, 0); }
double pct_sf_modified_bessel_k1(double x) { return bessel_k(1, x, 0); }
double pct_sf_scaled_modified_bessel_k0(double x) { return bessel_k(0, x, 1); }
double pct_sf_scaled_modified_bessel_k1(double x) { return bessel_k(1, x, 1); }

/* j0(x) = sin(x) / x (DLMF 10.49.3), its Maclaurin series 1 - x^2/6 + x^4/120 near 0 */
double pct_sf_spherical_bessel_j0(double x)
{
    if (isinf(x)) return 0;
    if (x != x) return x;
    if (fabs(x) < 0.5) {
        double z = x * x;
        return 1 - z / 6 * (1 - z / 20 * (1 - z / 42 * (1 - z / 72 * (1 - z / 110 * (1 - z / 156)))));
    }
    return sin(x) / x;
}

/* ---- Airy Ai ---- */

/* One Taylor step of y'' = x y from x0 to x0 + h: with y = sum a_k t^k about x0,
 * (k+2)(k+1) a_{k+2} = x0 a_k + a_{k-1} */
static void airy_taylor_step(double x0, double h, double *y, double *dy)
{
    double a[80];
    a[0] = *y;
    a[1] = *dy;
    a[2] = x0 * a[0] / 2;
    double value = a[0] + a[1] * h + a[2] * h * h, slope = a[1] + 2 * a[2] * h, hk = h * h;
    for (int k = 3; k < 80; k++) {
        a[k] = (x0 * a[k - 2] + a[k - 3]) / (k * (k - 1.0));
        slope += k * a[k] * hk;
        hk *= h;
        value += a[k] * hk;
        if (k > 8 && fabs(a[k] * hk) + fabs(a[k - 1] * hk / h) < 1e-18 * (fabs(value) + fabs(slope))) break;
    }
    *y = value;
    *dy = slope;
}

double pct_sf_airy_ai(double x)
{
    if (x != x || isinf(x)) return NAN;  /* torch's value at +-inf */
    if (x > 1) {
        /* Ai(x) = (1/pi) sqrt(x/3) K_{1/3}(zeta), zeta = (2/3) x^{3/2} (DLMF 9.6.1) */
        double zeta = 2.0 / 3.0 * x * sqrt(x);
        if (zeta > 745) return 0;
        double half = exp(-zeta / 2);
        return sqrt(x / 3) / PCT_PI * bessel_k_scaled(1.0 / 3.0, zeta) * half * half;
    }
    if (x >= -10) {
        /* Ai(0) = 3^{-2/3} / Gamma(2/3), Ai'(0) = -3^{-1/3} / Gamma(1/3) (DLMF 9.2.3-4); steps of at most 1 */
        double y = 0.35502805388781723926, dy = -0.25881940379280679840;
        int steps = (int)ceil(fabs(x));
        if (steps < 1) steps = 1;
        double h = x / steps, x0 = 0;
        for (int i = 0; i < steps; i++, x0 += h) airy_taylor_step(x0, h, &y, &dy);
        return y;
    }
    /* Ai(-z) ~ pi^{-1/2} z^{-1/4} (cos(zeta - pi/4) sum (-1)^k u_2k / zeta^2k + sin(zeta - pi/4) sum (-1)^k
     * u_{2k+1} / zeta^{2k+1}) (DLMF 9.7.9), u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!) (9.7.2) */
    double z = -x, zeta = 2.0 / 3.0 * z * sqrt(z), term = 1, p = 1, q = 0;
    for (int k = 1; k < 60; k++) {
        double next = term * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k * zeta);
        if (fabs(next) >= fabs(term)) break;
        term = next;
        double signed_term = ((k / 2) & 1) ? -term : term;
        if (k & 1) q += signed_term; else p += signed_term;
        if (term < 1e-17) break;
    }
    double c = cos(zeta), s = sin(zeta);
    double cphase = (c + s) / PCT_SF_SQRT_2, sphase = (s - c) / PCT_SF_SQRT_2;
    return (p * cphase + q * sphase) / (PCT_SF_SQRT_PI * sqrt(sqrt(z)));
}
