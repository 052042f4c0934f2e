/* pool_adaptive_avg_impl.h: adaptive average pooling's rows (general windows and the global average) for one
 * floating dtype (AA_E: the dtype's enum suffix, AA_T: its C type).
 * Included by pool_adaptive.c once per instantiation, with
 *   AA_E, AA_T defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define AA_NAME(base) PCT_TPL_CAT(base, AA_E) /* base, then AA_E: a function's name */

PCT_HOT_AVX2 static void AA_NAME(adaptive_avg_rows_)(const pct_pool2d *g, const pct_adaptive_windows *w,
                                                  const AA_T *x, AA_T *out, int64_t b, int64_t e)
{
    int64_t iw = g->iw, iplane = g->ih * g->iw, oh = b % g->oh;
    const AA_T *xp = x + (b / g->oh) * iplane;
    for (int64_t u = b; u < e; u++, oh++) {
        if (oh == g->oh) { oh = 0; xp += iplane; }
        int64_t hs = w->hs[oh], he = w->he[oh];
        for (int64_t ow = 0; ow < g->ow; ow++) {
            int64_t ws = w->ws[ow], we = w->we[ow];
            AA_T sum = 0;
            if (ws == 0 && we == iw) sum = AA_NAME(contig_sum_)(xp + hs * iw, (he - hs) * iw);
            else for (int64_t h = hs; h < he; h++) sum += AA_NAME(contig_sum_)(xp + h * iw + ws, we - ws);
            out[u * g->ow + ow] = sum / (AA_T)(he - hs) / (AA_T)(we - ws);
        }
    }
}
/* global pooling (a 1 x 1 output): eight planes at a time, eight running sums each */
PCT_HOT_AVX2 static void AA_NAME(global_avg_)(const AA_T *x, AA_T *out, int64_t b, int64_t e, int64_t ih, int64_t iw)
{
    int64_t n = ih * iw, p = b;
    AA_T kh = (AA_T)ih, kw = (AA_T)iw;
    typedef AA_T vt __attribute__((vector_size(32)));
    const int L = (int)(32 / sizeof(AA_T));
    for (; n >= L && p + 8 <= e; p += 8) {
        vt acc[8], v;
        memset(acc, 0, sizeof acc);
        const AA_T *xs = x + p * n;
        int64_t i = 0;
        for (; i + L <= n; i += L)
            for (int k = 0; k < 8; k++) {
                memcpy(&v, xs + k * n + i, sizeof v);
                acc[k] += v;
            }
        for (int k = 0; k < 8; k++) {
            AA_T s = 0;
            for (int l = 0; l < L; l++) s += acc[k][l];
            for (int64_t j = i; j < n; j++) s += xs[k * n + j];
            out[p + k] = s / kh / kw;
        }
    }
    for (; p < e; p++) out[p] = AA_NAME(contig_sum_)(x + p * n, n) / kh / kw;
}
static int AA_NAME(adaptive_avg_)(const pct_pool2d *g, const AA_T *x, AA_T *out)
{
    pct_adaptive_windows w;
    if (pct_adaptive_windows_init(&w, g) < 0) return -1;
    int64_t rows = g->planes * g->oh;
    bool global = g->oh == 1 && g->ow == 1;
    int nt = pct_spatial_threads(rows * g->ow + g->planes * g->ih * g->iw, rows);
    _Pragma("omp parallel for num_threads(nt) if (nt > 1)")
    for (int t = 0; t < nt; t++) {
        if (global) AA_NAME(global_avg_)(x, out, rows * t / nt, rows * (t + 1) / nt, g->ih, g->iw);
        else AA_NAME(adaptive_avg_rows_)(g, &w, x, out, rows * t / nt, rows * (t + 1) / nt);
    }
    pct_adaptive_windows_free(&w);
    return 0;
}

#undef AA_NAME
#undef AA_E
#undef AA_T
