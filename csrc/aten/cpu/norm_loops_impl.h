/* norm_loops_impl.h: the normalizations' row loops (sums, squared deviations, dot sums, scale and shift, the two-
 * term linear map) for one floating dtype, in chunks of NORM_CHUNK.
 * Included by norm.c through dtype_foreach.h (PCT_TPL_E, _N, _T, _C), for the floating dtypes.
 * No include guard: by design. */
#include "template.h"
#define NORM_NAME_N(base) PCT_TPL_CAT(base, PCT_TPL_N) /* base, then PCT_TPL_N: a function's name */
#define NORM_FROM_COMPUTE PCT_TPL_CAT(PCT_FROM_COMPUTE_, PCT_TPL_E)
#define NORM_TO_COMPUTE PCT_TPL_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)

#if PCT_TPL_FLOATING
PCT_HOT static double NORM_NAME_N(rows_sum_)(const void *xv, int64_t n)
{
    const PCT_TPL_T *x = xv;
    double total = 0;
    for (int64_t c0 = 0; c0 < n; c0 += NORM_CHUNK) {
        int64_t c1 = c0 + NORM_CHUNK < n ? c0 + NORM_CHUNK : n;
        PCT_TPL_C s = 0;
        _Pragma("omp simd reduction(+:s)")
        for (int64_t j = c0; j < c1; j++) s += NORM_TO_COMPUTE(x[j]);
        total += s;
    }
    return total;
}
PCT_HOT static double NORM_NAME_N(rows_sqdev_)(const void *xv, int64_t n, double mu_)
{
    const PCT_TPL_T *x = xv;
    PCT_TPL_C mu = (PCT_TPL_C)mu_;
    double total = 0;
    for (int64_t c0 = 0; c0 < n; c0 += NORM_CHUNK) {
        int64_t c1 = c0 + NORM_CHUNK < n ? c0 + NORM_CHUNK : n;
        PCT_TPL_C s = 0;
        _Pragma("omp simd reduction(+:s)")
        for (int64_t j = c0; j < c1; j++) {
            PCT_TPL_C d = NORM_TO_COMPUTE(x[j]) - mu;
            s += d * d;
        }
        total += s;
    }
    return total;
}
PCT_HOT static void NORM_NAME_N(rows_dot_sum_)(const void *gv, const void *xv, int64_t n, double *sgx,
                                      double *sg)
{
    const PCT_TPL_T *g = gv, *x = xv;
    double ta = 0, tb = 0;
    for (int64_t c0 = 0; c0 < n; c0 += NORM_CHUNK) {
        int64_t c1 = c0 + NORM_CHUNK < n ? c0 + NORM_CHUNK : n;
        PCT_TPL_C a = 0, b = 0;
        _Pragma("omp simd reduction(+:a, b)")
        for (int64_t j = c0; j < c1; j++) {
            PCT_TPL_C gj = NORM_TO_COMPUTE(g[j]);
            a += gj * NORM_TO_COMPUTE(x[j]);
            b += gj;
        }
        ta += a;
        tb += b;
    }
    *sgx = ta;
    *sg = tb;
}
PCT_HOT static void NORM_NAME_N(rows_scale_shift_)(const void *xv, void *yv, int64_t n, double a, double b)
{
    const PCT_TPL_T *x = xv;
    PCT_TPL_T *y = yv;
    PCT_TPL_C ca = (PCT_TPL_C)a, cb = (PCT_TPL_C)b;
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++) y[j] = NORM_FROM_COMPUTE(NORM_TO_COMPUTE(x[j]) * ca + cb);
}
PCT_HOT static void NORM_NAME_N(rows_lin2_)(const void *gv, const void *xv, void *ov, int64_t n, double k1,
                                   double k2, double k3)
{
    const PCT_TPL_T *g = gv, *x = xv;
    PCT_TPL_T *o = ov;
    PCT_TPL_C c1 = (PCT_TPL_C)k1, c2 = (PCT_TPL_C)k2, c3 = (PCT_TPL_C)k3;
    _Pragma("omp simd")
    for (int64_t j = 0; j < n; j++)
        o[j] = NORM_FROM_COMPUTE(NORM_TO_COMPUTE(g[j]) * c1 + NORM_TO_COMPUTE(x[j]) * c2 + c3);
}
#endif

#undef NORM_NAME_N
#undef NORM_FROM_COMPUTE
#undef NORM_TO_COMPUTE
