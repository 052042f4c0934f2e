/* special_polynomials.h: the orthogonal polynomials of torch.special (ops_special.def) at degree n, evaluated in the
 * loop's compute type (float for float16/bfloat16/float32, double for float64) as torch evaluates them, so that
 * overflow gives the same inf or NaN. Every function is written once as a template (PCT_SF_POLYNOMIALS) and
 * instantiated for float and double; pct_sf_<name>(x, n) picks the instance by the type of x.
 *
 * The degree is n truncated toward zero (torch converts it to an integer); a negative, NaN or out-of-range n gives 0.
 * Chebyshev polynomials of degree above a few with |x| < 1 use their trigonometric forms (DLMF 18.5.1-2 and the third
 * and fourth kinds V_n(cos t) = cos((n+1/2)t) / cos(t/2), W_n(cos t) = sin((n+1/2)t) / sin(t/2)); otherwise the
 * three-term recurrences of DLMF 18.9.1 (Chebyshev), 18.9.2 (Legendre), 18.9.13 (Laguerre), 18.9.20 (Hermite), which
 * stop early once the value is NaN (it stays NaN). */
#ifndef PCT_SPECIAL_POLYNOMIALS_H
#define PCT_SPECIAL_POLYNOMIALS_H
#include <stdint.h>
#include <tgmath.h> /* fabs, cos, acos, sin in the instance's type */

/* the degree torch uses: trunc(n) when it fits an int64, else -1 (x86's conversion of NaN and overflow is INT64_MIN) */
static inline int64_t pct_sf_poly_degree(double n)
{
    return (n != n || n >= 9.2233720368547758e18 || n < -9.2233720368547758e18) ? -1 : (int64_t)n;
}

/* value at x = +-1 of a Chebyshev-like polynomial: at_one if x > 0, else (-1)^n at_minus_one_even */
#define PCT_SF_AT_PM_ONE(x, n, at_one, at_minus_one) ((x) > 0 ? (at_one) : ((n) % 2 == 0 ? (at_minus_one) : -(at_minus_one)))

#define PCT_SF_POLYNOMIALS(T, S)                                                                                  \
    /* p_n by p_{k+1} = (a_k x + b_k) p_k - c_k p_{k-1}, from p_0 = 1 and p_1 */                                  \
    static inline T pct_sf_recur_##S(T x, int64_t n, T p1, int kind)                                                 \
    {                                                                                                             \
        if (n == 0) return 1;                                                                                     \
        T p = 1, q = p1;                                                                                          \
        for (int64_t k = 1; k < n && q == q; k++) {                                                               \
            T kt = (T)k, r;                                                                                       \
            switch (kind) {                                                                                       \
            case 0: r = (x + x) * q - p; break;                            /* Chebyshev */                        \
            case 1: r = (x + x) * q - (kt + kt) * p; break;                /* Hermite H */                        \
            case 2: r = x * q - kt * p; break;                             /* Hermite He */                       \
            case 3: r = (((kt + kt) + 1 - x) * q - kt * p) / (kt + 1); break; /* Laguerre */                      \
            default: r = ((kt + kt + 1) * x * q - kt * p) / (kt + 1); break; /* Legendre */                      \
            }                                                                                                     \
            p = q;                                                                                                \
            q = r;                                                                                                \
        }                                                                                                         \
        return q;                                                                                                 \
    }                                                                                                             \
    static inline T pct_sf_cheb_t_##S(T x, int64_t n)                                                             \
    {                                                                                                             \
        if (n < 0) return 0;                                                                                      \
        if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (T)1, (T)1);                                              \
        if (n > 6 && fabs(x) < 1) return cos((T)n * acos(x));                                                     \
        return pct_sf_recur_##S(x, n, x, 0);                                                                      \
    }                                                                                                             \
    static inline T pct_sf_cheb_u_##S(T x, int64_t n)                                                             \
    {                                                                                                             \
        if (n < 0) return 0;                                                                                      \
        if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (T)n + 1, (T)n + 1);                                      \
        if (n > 8 && fabs(x) < 1) {                                                                               \
            T t = acos(x);                                                                                        \
            return sin(((T)n + 1) * t) / sin(t);                                                                  \
        }                                                                                                         \
        return pct_sf_recur_##S(x, n, x + x, 0);                                                                  \
    }                                                                                                             \
    static inline T pct_sf_cheb_v_##S(T x, int64_t n)                                                             \
    {                                                                                                             \
        if (n < 0) return 0;                                                                                      \
        if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (T)1, (T)n + (T)n + 1);                                   \
        if (n > 8 && fabs(x) < 1) {                                                                               \
            T t = acos(x);                                                                                        \
            return cos(((T)n + (T)0.5) * t) / cos(t / 2);                                                         \
        }                                                                                                         \
        return pct_sf_recur_##S(x, n, x + x - 1, 0);                                                              \
    }                                                                                                             \
    static inline T pct_sf_cheb_w_##S(T x, int64_t n)                                                             \
    {                                                                                                             \
        if (n < 0) return 0;                                                                                      \
        if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (T)n + (T)n + 1, (T)1);                                   \
        if (n > 8 && fabs(x) < 1) {                                                                               \
            T t = acos(x);                                                                                        \
            return sin(((T)n + (T)0.5) * t) / sin(t / 2);                                                         \
        }                                                                                                         \
        return pct_sf_recur_##S(x, n, x + x + 1, 0);                                                              \
    }                                                                                                             \
    static inline T pct_sf_hermite_h_##S(T x, int64_t n) { return n < 0 ? 0 : pct_sf_recur_##S(x, n, x + x, 1); }  \
    static inline T pct_sf_hermite_he_##S(T x, int64_t n) { return n < 0 ? 0 : pct_sf_recur_##S(x, n, x, 2); }     \
    static inline T pct_sf_laguerre_l_##S(T x, int64_t n)                                                         \
    {                                                                                                             \
        if (n < 0) return 0;                                                                                      \
        if (x == 0) return 1;                                                                                     \
        return pct_sf_recur_##S(x, n, 1 - x, 3);                                                                  \
    }                                                                                                             \
    static inline T pct_sf_legendre_p_##S(T x, int64_t n)                                                         \
    {                                                                                                             \
        if (n < 0) return 0;                                                                                      \
        if (fabs(x) == 1) return PCT_SF_AT_PM_ONE(x, n, (T)1, (T)1);                                              \
        return pct_sf_recur_##S(x, n, x, 4);                                                                      \
    }

PCT_SF_POLYNOMIALS(float, f)
PCT_SF_POLYNOMIALS(double, d)

/* the polynomial `name` at x of degree n (both in the compute type); the shifted Chebyshev polynomials are the
 * Chebyshev ones at 2x - 1 (T*_n(x) = T_n(2x - 1), DLMF section 18.7) */
#define PCT_SF_POLY(name, x, n) \
    _Generic((x), float: pct_sf_##name##_f, default: pct_sf_##name##_d)((x), pct_sf_poly_degree((double)(n)))
#define PCT_SF_SHIFTED(name, x, n) PCT_SF_POLY(name, (x) + (x) - 1, n)

#endif
