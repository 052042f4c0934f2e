/* layer_norm_impl.h: layer norm's fused row loops (affine forward, backward, accumulator flush) for one floating
 * dtype.
 * Included by norm.c through dtype_foreach.h (PCT_TPL_E, _N, _T, _C), for the floating dtypes.
 * No include guard: by design. */
#include "template.h"
#define LN_NAME_N(base) PCT_TPL_CAT(base, PCT_TPL_N) /* base, then PCT_TPL_N: a function's name */
#define LN_FROM_COMPUTE PCT_TPL_CAT(PCT_FROM_COMPUTE_, PCT_TPL_E)
#define LN_TO_COMPUTE PCT_TPL_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)

#if PCT_TPL_FLOATING
/* y = (x * scale + shift) * w + b, torch's order of operations */
PCT_HOT static void LN_NAME_N(ln_affine_)(const void *xv, void *yv, int64_t d, double scale, double shift,
                                   const void *wv, const void *bv)
{
    const PCT_TPL_T *x = xv;
    PCT_TPL_T *y = yv;
    const PCT_TPL_C *w = wv, *b = bv;
    PCT_TPL_C a = (PCT_TPL_C)scale, s = (PCT_TPL_C)shift;
    if (w && b) {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++) y[j] = LN_FROM_COMPUTE((LN_TO_COMPUTE(x[j]) * a + s) * w[j] + b[j]);
    } else if (w) {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++) y[j] = LN_FROM_COMPUTE((LN_TO_COMPUTE(x[j]) * a + s) * w[j]);
    } else if (b) {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++) y[j] = LN_FROM_COMPUTE((LN_TO_COMPUTE(x[j]) * a + s) + b[j]);
    } else {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++) y[j] = LN_FROM_COMPUTE(LN_TO_COMPUTE(x[j]) * a + s);
    }
}
PCT_HOT static void LN_NAME_N(ln_bwd_)(const void *gv, const void *xv, void *giv, int64_t d, double mu_,
                                double rs_, const void *wv, void *accwv, void *accbv, bool rms)
{
    const PCT_TPL_T *g = gv, *x = xv;
    PCT_TPL_T *gi = giv;
    const PCT_TPL_C *w = wv;
    PCT_TPL_C *accw = accwv, *accb = accbv;
    PCT_TPL_C mu = (PCT_TPL_C)mu_, rs = (PCT_TPL_C)rs_;
    if (gi) {
        double a = 0, bb = 0;
        for (int64_t c0 = 0; c0 < d; c0 += NORM_CHUNK) {
            int64_t c1 = c0 + NORM_CHUNK < d ? c0 + NORM_CHUNK : d;
            PCT_TPL_C sa = 0, sb = 0;
            if (w) {
                _Pragma("omp simd reduction(+:sa, sb)")
                for (int64_t j = c0; j < c1; j++) {
                    PCT_TPL_C gw = LN_TO_COMPUTE(g[j]) * w[j];
                    sa += gw;
                    sb += gw * (LN_TO_COMPUTE(x[j]) - mu);
                }
            } else {
                _Pragma("omp simd reduction(+:sa, sb)")
                for (int64_t j = c0; j < c1; j++) {
                    PCT_TPL_C gw = LN_TO_COMPUTE(g[j]);
                    sa += gw;
                    sb += gw * (LN_TO_COMPUTE(x[j]) - mu);
                }
            }
            a += sa;
            bb += sb;
        }
        PCT_TPL_C c1 = rms ? (PCT_TPL_C)0 : (PCT_TPL_C)(a / (double)d);
        PCT_TPL_C c2 = (PCT_TPL_C)(bb * rs_ * rs_ / (double)d);
        if (w) {
            _Pragma("omp simd")
            for (int64_t j = 0; j < d; j++)
                gi[j] = LN_FROM_COMPUTE(rs * (LN_TO_COMPUTE(g[j]) * w[j] - c1 -
                                                   (LN_TO_COMPUTE(x[j]) - mu) * c2));
        } else {
            _Pragma("omp simd")
            for (int64_t j = 0; j < d; j++)
                gi[j] = LN_FROM_COMPUTE(rs * (LN_TO_COMPUTE(g[j]) - c1 -
                                                   (LN_TO_COMPUTE(x[j]) - mu) * c2));
        }
    }
    if (accw && accb) {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++) {
            PCT_TPL_C gj = LN_TO_COMPUTE(g[j]);
            accw[j] += gj * ((LN_TO_COMPUTE(x[j]) - mu) * rs);
            accb[j] += gj;
        }
    } else if (accw) {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++)
            accw[j] += LN_TO_COMPUTE(g[j]) * ((LN_TO_COMPUTE(x[j]) - mu) * rs);
    } else if (accb) {
        _Pragma("omp simd")
        for (int64_t j = 0; j < d; j++) accb[j] += LN_TO_COMPUTE(g[j]);
    }
}
/* adds the compute-type column sums into the double totals and clears them */
static void LN_NAME_N(ln_flush_)(void *accv, double *tot, int64_t n)
{
    PCT_TPL_C *acc = accv;
    for (int64_t j = 0; j < n; j++) {
        tot[j] += acc[j];
        acc[j] = 0;
    }
}
#endif

#undef LN_NAME_N
#undef LN_FROM_COMPUTE
#undef LN_TO_COMPUTE
