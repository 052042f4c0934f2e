/* special_polynomials_impl.h: the orthogonal polynomials of special_polynomials.h for one compute type: SF_T the
 * type, SF_SUFFIX the functions' suffix (f, d). Included by special_polynomials.h once per type.
 * No include guard: by design. */
#include "template.h"
#define SF_NAME(base) PCT_TPL_CAT(base, SF_SUFFIX)

/* p_n by p_{k+1} = (a_k x + b_k) p_k - c_k p_{k-1}, from p_0 = 1 and p_1 */
static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_recur_)(SF_T x, int64_t n, SF_T p1, int kind)
{
    if (n == 0) return 1;
    SF_T p = 1, q = p1;
    for (int64_t k = 1; k < n && q == q; k++) {
        SF_T kt = (SF_T)k, r;
        switch (kind) {
        case 0: r = (x + x) * q - p; break;                            /* Chebyshev */
        case 1: r = (x + x) * q - (kt + kt) * p; break;                /* Hermite H */
        case 2: r = x * q - kt * p; break;                             /* Hermite He */
        case 3: r = (((kt + kt) + 1 - x) * q - kt * p) / (kt + 1); break; /* Laguerre */
        default: r = ((kt + kt + 1) * x * q - kt * p) / (kt + 1); break; /* Legendre */
        }
        p = q;
        q = r;
    }
    return q;
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_cheb_t_)(SF_T x, int64_t n)
{
    if (n < 0) return 0;
    if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (SF_T)1, (SF_T)1);
    if (n > 6 && fabs(x) < 1) return cos((SF_T)n * acos(x));
    return SF_NAME(pct_sf_recur_)(x, n, x, 0);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_cheb_u_)(SF_T x, int64_t n)
{
    if (n < 0) return 0;
    if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (SF_T)n + 1, (SF_T)n + 1);
    if (n > 8 && fabs(x) < 1) {
        SF_T t = acos(x);
        return sin(((SF_T)n + 1) * t) / sin(t);
    }
    return SF_NAME(pct_sf_recur_)(x, n, x + x, 0);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_cheb_v_)(SF_T x, int64_t n)
{
    if (n < 0) return 0;
    if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (SF_T)1, (SF_T)n + (SF_T)n + 1);
    if (n > 8 && fabs(x) < 1) {
        SF_T t = acos(x);
        return cos(((SF_T)n + (SF_T)0.5) * t) / cos(t / 2);
    }
    return SF_NAME(pct_sf_recur_)(x, n, x + x - 1, 0);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_cheb_w_)(SF_T x, int64_t n)
{
    if (n < 0) return 0;
    if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (SF_T)n + (SF_T)n + 1, (SF_T)1);
    if (n > 8 && fabs(x) < 1) {
        SF_T t = acos(x);
        return sin(((SF_T)n + (SF_T)0.5) * t) / sin(t / 2);
    }
    return SF_NAME(pct_sf_recur_)(x, n, x + x + 1, 0);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_hermite_h_)(SF_T x, int64_t n)
{
    return n < 0 ? 0 : SF_NAME(pct_sf_recur_)(x, n, x + x, 1);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_hermite_he_)(SF_T x, int64_t n)
{
    return n < 0 ? 0 : SF_NAME(pct_sf_recur_)(x, n, x, 2);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_laguerre_l_)(SF_T x, int64_t n)
{
    if (n < 0) return 0;
    if (x == 0) return 1;
    return SF_NAME(pct_sf_recur_)(x, n, 1 - x, 3);
}

static inline PCT_HOST_DEVICE SF_T SF_NAME(pct_sf_legendre_p_)(SF_T x, int64_t n)
{
    if (n < 0) return 0;
    if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (SF_T)1, (SF_T)1);
    return SF_NAME(pct_sf_recur_)(x, n, x, 4);
}

#undef SF_NAME
