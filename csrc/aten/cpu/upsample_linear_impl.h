/* upsample_linear_impl.h: the linear (bilinear, trilinear) upsampling kernels, rows of the input first then columns,
 * forward and backward, for one floating dtype (UP_E: the dtype's enum suffix, UP_T: its C type, UP_SUF: the libm
 * suffix of its math).
 * Included by upsample.c once per instantiation, with
 *   UP_E, UP_T, UP_SUF defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define UP_NAME_E(base) PCT_TPL_CAT(base, UP_E) /* base, then UP_E: a function's name */
#define UP_NAME_SUF(base) PCT_TPL_CAT(base, UP_SUF) /* base, then UP_SUF: a function's name */

PCT_HOT_AVX2 static void UP_NAME_E(up_hrow_)(const UP_T *r, UP_T *t, int64_t n, const int64_t *i0, const int64_t *i1,
                                        const UP_T *w0, const UP_T *w1)
{
    for (int64_t q = 0; q < n; q++) t[q] = r[i0[q]] * w0[q] + r[i1[q]] * w1[q];
}
PCT_HOT_AVX2 static void UP_NAME_E(up_vrow_)(const UP_T *t0, const UP_T *t1, UP_T *y, int64_t n, UP_T a, UP_T b)
{
    for (int64_t q = 0; q < n; q++) y[q] = t0[q] * a + t1[q] * b;
}
PCT_HOT_AVX2 static void UP_NAME_E(up_vrow_back_)(const UP_T *g, UP_T *t0, UP_T *t1, int64_t n, UP_T a, UP_T b)
{
    for (int64_t q = 0; q < n; q++) t0[q] += g[q] * a;
    for (int64_t q = 0; q < n; q++) t1[q] += g[q] * b;
}
static void UP_NAME_E(up_hrow_back_)(const UP_T *t, UP_T *d, int64_t n, const int64_t *i0, const int64_t *i1, const UP_T *w0,
                             const UP_T *w1)
{
    for (int64_t q = 0; q < n; q++) {
        d[i0[q]] += t[q] * w0[q];
        d[i1[q]] += t[q] * w1[q];
    }
}
/* forward: y (planes x oh x ow) from x (planes x ih x iw); a 1-d op has ih = oh = 1 and no H
   weights. Each thread interpolates the input rows of its plane into tmp (ih x ow). */
static int UP_NAME_E(up_linear_fwd_)(int64_t planes, const up_axis *ah, const up_axis *aw, bool align, const void *xv,
                             void *yv)
{
    const UP_T *x = xv;
    UP_T *y = yv;
    int64_t ih = ah ? ah->in : 1, oh = ah ? ah->out : 1, iw = aw->in, ow = aw->out;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(2 * (ow + oh)));
    UP_T *wts = malloc(sizeof(UP_T) * (size_t)(2 * (ow + oh)));
    bool *used = calloc((size_t)ih, 1);
    int nomem = !idx || !wts || !used;
    if (!nomem) {
        int64_t *wi0 = idx, *wi1 = idx + ow, *hi0 = idx + 2 * ow, *hi1 = hi0 + oh;
        UP_T *ww0 = wts, *ww1 = wts + ow, *hw0 = wts + 2 * ow, *hw1 = hw0 + oh;
        UP_NAME_SUF(up_linear_axis_)(aw, align, wi0, wi1, ww0, ww1);
        if (ah) UP_NAME_SUF(up_linear_axis_)(ah, align, hi0, hi1, hw0, hw1);
        else { hi0[0] = hi1[0] = 0; hw0[0] = 1; hw1[0] = 0; }
        for (int64_t o = 0; o < oh; o++) used[hi0[o]] = used[hi1[o]] = true;
        _Pragma("omp parallel if (planes > 1 && planes * oh * ow > PCT_SPATIAL_GRAIN)")
        {
            UP_T *tmp = malloc(sizeof(UP_T) * (size_t)(ih * ow));
            if (!tmp) nomem = 1;
            _Pragma("omp for schedule(static)")
            for (int64_t p = 0; p < planes; p++) {
                if (!tmp) continue;
                const UP_T *xp = x + p * ih * iw;
                UP_T *yp = y + p * oh * ow;
                if (!ah) { UP_NAME_E(up_hrow_)(xp, yp, ow, wi0, wi1, ww0, ww1); continue; }
                for (int64_t h = 0; h < ih; h++)
                    if (used[h]) UP_NAME_E(up_hrow_)(xp + h * iw, tmp + h * ow, ow, wi0, wi1, ww0, ww1);
                for (int64_t o = 0; o < oh; o++)
                    UP_NAME_E(up_vrow_)(tmp + hi0[o] * ow, tmp + hi1[o] * ow, yp + o * ow, ow, hw0[o], hw1[o]);
            }
            free(tmp);
        }
    }
    free(idx);
    free(wts);
    free(used);
    return nomem ? -1 : 0;
}
/* backward: gi (zeroed) += the gradient g of every output, through the same weights */
static int UP_NAME_E(up_linear_bwd_)(int64_t planes, const up_axis *ah, const up_axis *aw, bool align, const void *gv,
                             void *giv)
{
    const UP_T *g = gv;
    UP_T *gi = giv;
    int64_t ih = ah ? ah->in : 1, oh = ah ? ah->out : 1, iw = aw->in, ow = aw->out;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(2 * (ow + oh)));
    UP_T *wts = malloc(sizeof(UP_T) * (size_t)(2 * (ow + oh)));
    int nomem = !idx || !wts;
    if (!nomem) {
        int64_t *wi0 = idx, *wi1 = idx + ow, *hi0 = idx + 2 * ow, *hi1 = hi0 + oh;
        UP_T *ww0 = wts, *ww1 = wts + ow, *hw0 = wts + 2 * ow, *hw1 = hw0 + oh;
        UP_NAME_SUF(up_linear_axis_)(aw, align, wi0, wi1, ww0, ww1);
        if (ah) UP_NAME_SUF(up_linear_axis_)(ah, align, hi0, hi1, hw0, hw1);
        _Pragma("omp parallel if (planes > 1 && planes * oh * ow > PCT_SPATIAL_GRAIN)")
        {
            UP_T *tmp = ah ? calloc((size_t)(ih * ow), sizeof(UP_T)) : NULL;
            if (ah && !tmp) nomem = 1;
            _Pragma("omp for schedule(static)")
            for (int64_t p = 0; p < planes; p++) {
                const UP_T *gp = g + p * oh * ow;
                UP_T *dp = gi + p * ih * iw;
                if (!ah) { UP_NAME_E(up_hrow_back_)(gp, dp, ow, wi0, wi1, ww0, ww1); continue; }
                if (!tmp) continue;
                memset(tmp, 0, sizeof(UP_T) * (size_t)(ih * ow));
                for (int64_t o = 0; o < oh; o++)
                    UP_NAME_E(up_vrow_back_)(gp + o * ow, tmp + hi0[o] * ow, tmp + hi1[o] * ow, ow, hw0[o], hw1[o]);
                for (int64_t h = 0; h < ih; h++)
                    UP_NAME_E(up_hrow_back_)(tmp + h * ow, dp + h * iw, ow, wi0, wi1, ww0, ww1);
            }
            free(tmp);
        }
    }
    free(idx);
    free(wts);
    return nomem ? -1 : 0;
}

#undef UP_NAME_E
#undef UP_NAME_SUF
#undef UP_E
#undef UP_T
#undef UP_SUF
