/* pool3d_impl.h: the 3-d average pooling kernels, forward and backward, for one floating dtype (P3_E: the dtype's
 * enum suffix, P3_T: its C type).
 * Included by pool3d.c once per instantiation, with
 *   P3_E, P3_T defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define P3_NAME(base) PCT_TPL_CAT(base, P3_E) /* base, then P3_E: a function's name */

/* avg (adaptive: sum / kd / kh / kw; strided: sum / torch's divide factor) */
static void P3_NAME(avg3d_)(const pool3d *g, bool adaptive, const P3_T *x, P3_T *out)
{
    int64_t slices = g->planes * g->od, iplane = g->id * g->ih * g->iw, ohw = g->oh * g->ow;
    _Pragma("omp parallel for if (slices > 1 && slices * ohw * 8 > PCT_SPATIAL_GRAIN)")
    for (int64_t s = 0; s < slices; s++) {
        int64_t p = s / g->od, od = s % g->od;
        const P3_T *xp = x + p * iplane;
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t ow = 0; ow < g->ow; ow++) {
                win3 w;
                int64_t div = 1;
                if (adaptive) adaptive_window(g, od, oh, ow, &w);
                else div = avg_window(g, od, oh, ow, &w);
                P3_T sum = 0;
                for (int64_t d = w.d0; d < w.d1; d++)
                    for (int64_t h = w.h0; h < w.h1; h++)
                        for (int64_t c = w.w0; c < w.w1; c++) sum += xp[(d * g->ih + h) * g->iw + c];
                P3_T r;
                if (adaptive) r = sum / (P3_T)(w.d1 - w.d0) / (P3_T)(w.h1 - w.h0) / (P3_T)(w.w1 - w.w0);
                else if (w.d0 >= w.d1 || w.h0 >= w.h1 || w.w0 >= w.w1) r = 0;
                else r = sum / (P3_T)div;
                out[s * ohw + oh * g->ow + ow] = r;
            }
    }
}
/* gradient at saved flat indices (max and adaptive max) */
static void P3_NAME(index_bwd3d_)(int64_t planes, int64_t iplane, int64_t oplane, const P3_T *go, const int64_t *ind, P3_T *gi)
{
    _Pragma("omp parallel for if (planes > 1 && planes * oplane > PCT_SPATIAL_GRAIN)")
    for (int64_t p = 0; p < planes; p++)
        for (int64_t j = 0; j < oplane; j++) {
            int64_t k = ind[p * oplane + j];
            if ((uint64_t)k < (uint64_t)iplane) gi[p * iplane + k] += go[p * oplane + j];
        }
}
static void P3_NAME(avg_bwd3d_)(const pool3d *g, bool adaptive, const P3_T *go, P3_T *gi)
{
    int64_t iplane = g->id * g->ih * g->iw, oplane = g->od * g->oh * g->ow;
    _Pragma("omp parallel for if (g->planes > 1 && g->planes * oplane * 8 > PCT_SPATIAL_GRAIN)")
    for (int64_t p = 0; p < g->planes; p++) {
        P3_T *gp = gi + p * iplane;
        for (int64_t od = 0; od < g->od; od++)
            for (int64_t oh = 0; oh < g->oh; oh++)
                for (int64_t ow = 0; ow < g->ow; ow++) {
                    win3 w;
                    P3_T gv = go[p * oplane + (od * g->oh + oh) * g->ow + ow], delta;
                    if (adaptive) {
                        adaptive_window(g, od, oh, ow, &w);
                        delta = gv / (P3_T)(w.d1 - w.d0) / (P3_T)(w.h1 - w.h0) / (P3_T)(w.w1 - w.w0);
                    } else {
                        delta = gv / (P3_T)avg_window(g, od, oh, ow, &w);
                    }
                    for (int64_t d = w.d0; d < w.d1; d++)
                        for (int64_t h = w.h0; h < w.h1; h++)
                            for (int64_t c = w.w0; c < w.w1; c++) gp[(d * g->ih + h) * g->iw + c] += delta;
                }
    }
}

#undef P3_NAME
#undef P3_E
#undef P3_T
