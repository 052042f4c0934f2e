/* cross_entropy_impl.h: cross entropy's row loops (the forward's max, log-sum-exp and loss, the backward's gradient
 * row) for one floating dtype.
 * Included by cross_entropy.c through dtype_foreach.h (PCT_TPL_E, _N, _T, _C), for the floating dtypes.
 * No include guard: by design. */
#include "template.h"
#define CE_NAME_N(base) PCT_TPL_CAT(base, PCT_TPL_N) /* base, then PCT_TPL_N: a function's name */
#define CE_EXP PCT_TPL_CAT(CE_EXP_, PCT_TPL_C)
#define CE_FROM_COMPUTE PCT_TPL_CAT(PCT_FROM_COMPUTE_, PCT_TPL_E)
#define CE_TO_COMPUTE PCT_TPL_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)

#if PCT_TPL_FLOATING
PCT_HOT static double CE_NAME_N(ce_fwd_)(const ce_args *a, int64_t i, double *lse_out)
{
    const PCT_TPL_T *x = (const PCT_TPL_T *)a->x + i * a->c;
    int64_t n = a->c;
    PCT_TPL_C mx = -INFINITY;
    _Pragma("omp simd reduction(max:mx)")
    for (int64_t j = 0; j < n; j++) {
        PCT_TPL_C v = CE_TO_COMPUTE(x[j]);
        mx = v > mx ? v : mx;
    }
    if (isinf(mx)) mx = 0; /* all -inf (or +inf): the sum below gives the right inf/NaN */
    double total = 0;
    for (int64_t c0 = 0; c0 < n; c0 += 1024) {
        int64_t c1 = c0 + 1024 < n ? c0 + 1024 : n;
        PCT_TPL_C s = 0;
        _Pragma("omp simd reduction(+:s)")
        for (int64_t j = c0; j < c1; j++) s += CE_EXP(CE_TO_COMPUTE(x[j]) - mx);
        total += s;
    }
    double lse = (double)mx + log(total);
    *lse_out = lse;
    int64_t t = a->t[i];
    if (t == a->ignore) return 0;
    double wt = a->w ? a->w[t] : 1.0;
    double loss = (1 - a->eps) * wt * (lse - (double)CE_TO_COMPUTE(x[t]));
    if (a->eps > 0) {
        double sx = 0;
        if (a->w) {
            for (int64_t j = 0; j < n; j++) sx += a->w[j] * (double)CE_TO_COMPUTE(x[j]);
        } else {
            _Pragma("omp simd reduction(+:sx)")
            for (int64_t j = 0; j < n; j++) sx += (double)CE_TO_COMPUTE(x[j]);
        }
        loss += a->eps / (double)n * (lse * a->wsum - sx);
    }
    return loss;
}
PCT_HOT static void CE_NAME_N(ce_bwd_)(const ce_args *a, int64_t i, double lse_, double coef, void *giv)
{
    const PCT_TPL_T *x = (const PCT_TPL_T *)a->x + i * a->c;
    PCT_TPL_T *gi = (PCT_TPL_T *)giv + i * a->c;
    int64_t n = a->c, t = a->t[i];
    if (t == a->ignore) {
        PCT_TPL_C z = 0;
        for (int64_t j = 0; j < n; j++) gi[j] = CE_FROM_COMPUTE(z);
        return;
    }
    double wt = a->w ? a->w[t] : 1.0, e = a->eps;
    PCT_TPL_C lse = (PCT_TPL_C)lse_;
    PCT_TPL_C pa = (PCT_TPL_C)(coef * ((1 - e) * wt + e / (double)n * a->wsum));
    PCT_TPL_C sub = (PCT_TPL_C)(coef * e / (double)n);
    if (a->w && e > 0) {
        for (int64_t j = 0; j < n; j++)
            gi[j] = CE_FROM_COMPUTE(CE_EXP(CE_TO_COMPUTE(x[j]) - lse) * pa - sub * (PCT_TPL_C)a->w[j]);
    } else {
        _Pragma("omp simd")
        for (int64_t j = 0; j < n; j++)
            gi[j] = CE_FROM_COMPUTE(CE_EXP(CE_TO_COMPUTE(x[j]) - lse) * pa - sub);
    }
    gi[t] = CE_FROM_COMPUTE(CE_TO_COMPUTE(gi[t]) - (PCT_TPL_C)(coef * (1 - e) * wt));
}
#endif

#undef CE_NAME_N
#undef CE_EXP
#undef CE_FROM_COMPUTE
#undef CE_TO_COMPUTE
