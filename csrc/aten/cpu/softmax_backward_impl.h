/* softmax_backward_impl.h: softmax's and log_softmax's backward for one floating dtype: contiguous rows (a row sum
 * in SMB_NACC double accumulators, then one vectorized pass) and strided lanes.
 * Included by softmax_backward.c through dtype_foreach.h (PCT_TPL_E, _N, _T, _C), for the floating dtypes.
 * No include guard: by design. */
#include "template.h"
#define SMB_NAME_N(base) PCT_TPL_CAT(base, PCT_TPL_N) /* base, then PCT_TPL_N: a function's name */
#define SMB_FROM_COMPUTE PCT_TPL_CAT(PCT_FROM_COMPUTE_, PCT_TPL_E)
#define SMB_IS_F32 PCT_TPL_CAT(SMB_IS_F32_, PCT_TPL_E)
#define SMB_TO_COMPUTE PCT_TPL_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)

#if PCT_TPL_FLOATING
PCT_HOT static double SMB_NAME_N(rowsum_)(const PCT_TPL_T *restrict g, const PCT_TPL_T *restrict y, int64_t len, bool lg)
{
    double acc[SMB_NACC] = {0};
    int64_t k = 0;
    if (lg) {
        for (; k + SMB_NACC <= len; k += SMB_NACC)
            for (int j = 0; j < SMB_NACC; j++) acc[j] += SMB_TO_COMPUTE(g[k + j]);
        for (int j = 0; k < len; k++, j++) acc[j] += SMB_TO_COMPUTE(g[k]);
    } else {
        for (; k + SMB_NACC <= len; k += SMB_NACC)
            for (int j = 0; j < SMB_NACC; j++)
                acc[j] += SMB_TO_COMPUTE(g[k + j]) * SMB_TO_COMPUTE(y[k + j]);
        for (int j = 0; k < len; k++, j++) acc[j] += SMB_TO_COMPUTE(g[k]) * SMB_TO_COMPUTE(y[k]);
    }
    for (int w = SMB_NACC / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) acc[j] += acc[j + w];
    return acc[0];
}
PCT_HOT static void SMB_NAME_N(rowout_)(const PCT_TPL_T *restrict g, const PCT_TPL_T *restrict y, PCT_TPL_T *restrict o, int64_t len,
                               PCT_TPL_C s, bool lg, const pct_attn_rows_f32 *vr)
{
    if (!lg) {
        for (int64_t k = 0; k < len; k++)
            o[k] = SMB_FROM_COMPUTE(SMB_TO_COMPUTE(y[k]) * (SMB_TO_COMPUTE(g[k]) - s));
    } else if (SMB_IS_F32) {
        float *of = (float *)o;
        memcpy(of, y, sizeof(float) * (size_t)len);
        vr->exp_sum(of, len, 0.0f);
        for (int64_t k = 0; k < len; k++) of[k] = (float)SMB_TO_COMPUTE(g[k]) - of[k] * (float)s;
    } else {
        for (int64_t k = 0; k < len; k++)
            o[k] = SMB_FROM_COMPUTE(SMB_TO_COMPUTE(g[k]) - exp(SMB_TO_COMPUTE(y[k])) * s);
    }
}
static void SMB_NAME_N(rows_)(const PCT_TPL_T *g, const PCT_TPL_T *y, PCT_TPL_T *o, int64_t outer, int64_t len, bool lg)
{
    const pct_attn_rows_f32 *vr = pct_attn_rows_f32_get();
    _Pragma("omp parallel for schedule(static) if (outer > 1 && outer * len > 32768)")
    for (int64_t r = 0; r < outer; r++) {
        const PCT_TPL_T *gr = g + r * len, *yr = y + r * len;
        SMB_NAME_N(rowout_)(gr, yr, o + r * len, len, (PCT_TPL_C)SMB_NAME_N(rowsum_)(gr, yr, len, lg), lg, vr);
    }
}
static void SMB_NAME_N(lanes_)(const void *gv, const void *yv, void *ov, int64_t outer, int64_t len,
                      int64_t inner, bool lg)
{
    const PCT_TPL_T *g = gv, *y = yv;
    PCT_TPL_T *o = ov;
    if (inner == 1) {
        SMB_NAME_N(rows_)(g, y, o, outer, len, lg);
        return;
    }
    int64_t lanes = outer * inner;
    _Pragma("omp parallel for if (lanes * len > 32768)")
    for (int64_t l = 0; l < lanes; l++) {
        int64_t base = (l / inner) * len * inner + l % inner;
        PCT_TPL_C s = 0;
        for (int64_t k = 0; k < len; k++) {
            int64_t at = base + k * inner;
            PCT_TPL_C gk = SMB_TO_COMPUTE(g[at]);
            s += lg ? gk : gk * SMB_TO_COMPUTE(y[at]);
        }
        for (int64_t k = 0; k < len; k++) {
            int64_t at = base + k * inner;
            PCT_TPL_C gk = SMB_TO_COMPUTE(g[at]), yk = SMB_TO_COMPUTE(y[at]);
            o[at] = SMB_FROM_COMPUTE(lg ? gk - exp(yk) * s : yk * (gk - s));
        }
    }
}
#endif

#undef SMB_NAME_N
#undef SMB_FROM_COMPUTE
#undef SMB_IS_F32
#undef SMB_TO_COMPUTE
