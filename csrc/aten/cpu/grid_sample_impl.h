/* grid_sample_impl.h: grid_sample's kernels (coordinate unnormalization, padding, bilinear, nearest and bicubic
 * sampling, forward and backward, 2-d and 3-d) for one floating dtype (GS_E: the dtype's enum suffix, GS_T: its C
 * type).
 * Included by grid_sample.c once per instantiation, with
 *   GS_E, GS_T defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define GS_NAME(base) PCT_TPL_CAT(base, GS_E) /* base, then GS_E: a function's name */

static inline GS_T GS_NAME(unnorm_)(GS_T coord, int64_t size, bool align, GS_T *g)
{
    if (align) { *g = (GS_T)(size - 1) / 2; return ((coord + 1) / 2) * (GS_T)(size - 1); }
    *g = (GS_T)size / 2;
    return ((coord + 1) * (GS_T)size - 1) / 2;
}
static inline GS_T GS_NAME(clip_)(GS_T in, int64_t limit, GS_T *g)
{
    if (in <= 0) { *g = 0; return 0; }
    GS_T max = (GS_T)(limit - 1);
    if (in >= max) { *g = 0; return max; }
    *g = 1;
    return in;
}
static inline GS_T GS_NAME(reflect_)(GS_T in, int64_t twice_low, int64_t twice_high, GS_T *g)
{
    if (twice_low == twice_high) { *g = 0; return 0; }
    GS_T min = (GS_T)twice_low / 2, span = (GS_T)(twice_high - twice_low) / 2, mult = 1;
    in = in - min;
    if (in < 0) { mult = -1; in = -in; }
    GS_T extra = fmod(in, span);
    int64_t flips = (int64_t)floor(in / span);
    if (flips % 2 == 0) { *g = mult; return extra + min; }
    *g = -mult;
    return span - extra + min;
}
/* the padding mode's map of an unnormalized coordinate (and its derivative) */
static inline GS_T GS_NAME(coords_)(GS_T x, int64_t size, int pad, bool align, GS_T *g)
{
    GS_T g1 = 1, g2 = 1;
    if (pad == 1) x = GS_NAME(clip_)(x, size, &g1);
    else if (pad == 2) {
        x = align ? GS_NAME(reflect_)(x, 0, 2 * (size - 1), &g1) : GS_NAME(reflect_)(x, -1, 2 * size - 1, &g1);
        x = GS_NAME(clip_)(x, size, &g2);
    }
    *g = g1 * g2;
    /* torch's safe_downgrade_to_int_range: far or non-finite coordinates read nothing */
    if (!(x > -(GS_T)INT32_MAX && x < (GS_T)INT32_MAX)) x = -100;
    return x;
}
static inline GS_T GS_NAME(source_)(GS_T coord, int64_t size, int pad, bool align, GS_T *g)
{
    GS_T g1, g2;
    GS_T x = GS_NAME(coords_)(GS_NAME(unnorm_)(coord, size, align, &g1), size, pad, align, &g2);
    *g = g1 * g2;
    return x;
}
static inline void GS_NAME(cubic_coeffs_)(GS_T c[4], GS_T t)
{
    const GS_T A = (GS_T)-0.75;
    GS_T x1 = t, x2 = 1 - t;
    c[0] = ((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A;
    c[1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;
    c[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
    c[3] = ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A;
}
static inline void GS_NAME(cubic_coeffs_grad_)(GS_T c[4], GS_T t)
{
    const GS_T A = (GS_T)-0.75;
    GS_T x = -1 - t;
    c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
    x = -t;
    c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
    x = 1 - t;
    c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
    x = 2 - t;
    c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}
/* bicubic's bounded read position: -1 when it reads nothing */
static inline int64_t GS_NAME(bounded_)(const gs_geom *g, int64_t x, int64_t y)
{
    GS_T gd;
    GS_T fx = GS_NAME(coords_)((GS_T)x, g->in[2], g->pad, g->align, &gd);
    GS_T fy = GS_NAME(coords_)((GS_T)y, g->in[1], g->pad, g->align, &gd);
    int64_t ix = (int64_t)fx, iy = (int64_t)fy;
    if (ix < 0 || ix >= g->in[2] || iy < 0 || iy >= g->in[1]) return -1;
    return iy * g->in[2] + ix;
}
/* One output point of batch b: forward (out != NULL) or backward (gin / ggrid). */
static void GS_NAME(point_)(const gs_geom *g, const GS_T *x, const GS_T *gp, GS_T *out, int64_t ostride,
                      const GS_T *go, GS_T *gin, GS_T *ggrid)
{
    int nd = g->nd;
    int64_t iplane = g->in[0] * g->in[1] * g->in[2];
    GS_T src[3], mult[3] = {1, 1, 1};
    for (int k = 0; k < nd; k++) { /* grid's k-th coordinate is spatial dim nd - 1 - k */
        int64_t size = g->in[2 - k];
        if (g->mode == 2) src[k] = GS_NAME(unnorm_)(gp[k], size, g->align, &mult[k]);
        else src[k] = GS_NAME(source_)(gp[k], size, g->pad, g->align, &mult[k]);
    }
    if (g->mode == 1) { /* nearest */
        int64_t pos = 0;
        bool inside = true;
        for (int k = nd - 1; k >= 0; k--) {
            int64_t i = (int64_t)nearbyint(src[k]), size = g->in[2 - k];
            inside = inside && i >= 0 && i < size;
            pos = pos * size + i;
        }
        for (int64_t ch = 0; ch < g->c; ch++) {
            if (out) out[ch * ostride] = inside ? x[ch * iplane + pos] : 0;
            else if (gin && inside) gin[ch * iplane + pos] += go[ch * ostride];
        }
        if (ggrid) for (int k = 0; k < nd; k++) ggrid[k] = 0;
        return;
    }
    if (g->mode == 0) { /* bilinear / trilinear */
        int64_t i0[3];
        GS_T lo[3], hi[3]; /* torch's distances: (i0 + 1 - src) and (src - i0) */
        for (int k = 0; k < nd; k++) {
            GS_T f = floor(src[k]);
            i0[k] = (int64_t)f;
            lo[k] = f + 1 - src[k];
            hi[k] = src[k] - f;
        }
        int ncorner = 1 << nd;
        int64_t pos[8];
        GS_T w[8], dw[8][3];
        for (int cn = 0; cn < ncorner; cn++) {
            /* corner bits: x is bit 0 (fastest), y bit 1, z bit 2 */
            GS_T part[3] = {1, 1, 1};
            int64_t p = 0;
            bool inside = true;
            for (int k = 0; k < nd; k++) {
                part[k] = ((cn >> k) & 1) ? hi[k] : lo[k];
            }
            for (int k = nd - 1; k >= 0; k--) {
                int64_t i = i0[k] + ((cn >> k) & 1), size = g->in[2 - k];
                inside = inside && i >= 0 && i < size;
                p = p * size + i;
            }
            pos[cn] = inside ? p : -1;
            w[cn] = part[0] * part[1];
            if (nd == 3) w[cn] *= part[2];
            for (int k = 0; k < nd; k++) { /* d w / d src[k] */
                GS_T d = ((cn >> k) & 1) ? 1 : -1;
                for (int j = 0; j < nd; j++) if (j != k) d *= part[j];
                dw[cn][k] = d;
            }
        }
        GS_T gs[3] = {0, 0, 0};
        for (int64_t ch = 0; ch < g->c; ch++) {
            const GS_T *xc = x + ch * iplane;
            if (out) {
                GS_T acc = 0;
                for (int cn = 0; cn < ncorner; cn++) if (pos[cn] >= 0) acc += xc[pos[cn]] * w[cn];
                out[ch * ostride] = acc;
                continue;
            }
            GS_T gov = go[ch * ostride];
            for (int cn = 0; cn < ncorner; cn++) {
                if (pos[cn] < 0) continue;
                if (gin) gin[ch * iplane + pos[cn]] += gov * w[cn];
                if (ggrid) for (int k = 0; k < nd; k++) gs[k] += xc[pos[cn]] * dw[cn][k] * gov;
            }
        }
        if (ggrid) for (int k = 0; k < nd; k++) ggrid[k] = mult[k] * gs[k];
        return;
    }
    /* bicubic (2-d) */
    GS_T fx = floor(src[0]), fy = floor(src[1]);
    int64_t ix = (int64_t)fx, iy = (int64_t)fy;
    GS_T tx = src[0] - fx, ty = src[1] - fy, cx[4], cy[4], dcx[4], dcy[4];
    GS_NAME(cubic_coeffs_)(cx, tx);
    GS_NAME(cubic_coeffs_)(cy, ty);
    int64_t pos[4][4];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) pos[j][i] = GS_NAME(bounded_)(g, ix - 1 + i, iy - 1 + j);
    if (out) {
        for (int64_t ch = 0; ch < g->c; ch++) {
            const GS_T *xc = x + ch * iplane;
            GS_T row[4];
            for (int j = 0; j < 4; j++) {
                GS_T v[4];
                for (int i = 0; i < 4; i++) v[i] = pos[j][i] >= 0 ? xc[pos[j][i]] : 0;
                row[j] = v[0] * cx[0] + v[1] * cx[1] + v[2] * cx[2] + v[3] * cx[3];
            }
            out[ch * ostride] = row[0] * cy[0] + row[1] * cy[1] + row[2] * cy[2] + row[3] * cy[3];
        }
        return;
    }
    GS_NAME(cubic_coeffs_grad_)(dcx, tx);
    GS_NAME(cubic_coeffs_grad_)(dcy, ty);
    GS_T gx = 0, gy = 0;
    for (int64_t ch = 0; ch < g->c; ch++) {
        const GS_T *xc = x + ch * iplane;
        GS_T gov = go[ch * ostride];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                int64_t p = pos[j][i];
                if (p < 0) continue;
                if (gin) gin[ch * iplane + p] += gov * cx[i] * cy[j];
                GS_T v = xc[p];
                gx -= v * dcx[i] * cy[j] * gov;
                gy -= v * dcy[j] * cx[i] * gov;
            }
    }
    if (ggrid) { ggrid[0] = mult[0] * gx; ggrid[1] = mult[1] * gy; }
}
/* 2-d bilinear forward, blocked: the corners and weights of GS_BLOCK points first, then each
   channel over the block (contiguous writes); the same sums in the same order as point_ */
static void GS_NAME(bilinear2d_)(const gs_geom *g, const GS_T *x, const GS_T *grid, GS_T *out)
{
    int64_t H = g->in[1], W = g->in[2], iplane = H * W, opts = g->out[1] * g->out[2];
    _Pragma("omp parallel for if (g->n > 1 && g->n * opts * g->c > PCT_SPATIAL_GRAIN)")
    for (int64_t b = 0; b < g->n; b++) {
        int64_t pos[4 * GS_BLOCK];
        GS_T w[4 * GS_BLOCK];
        for (int64_t q0 = 0; q0 < opts; q0 += GS_BLOCK) {
            int64_t nq = opts - q0 < GS_BLOCK ? opts - q0 : GS_BLOCK;
            for (int64_t j = 0; j < nq; j++) {
                const GS_T *gp = grid + (b * opts + q0 + j) * 2;
                GS_T m, sx = GS_NAME(source_)(gp[0], W, g->pad, g->align, &m);
                GS_T sy = GS_NAME(source_)(gp[1], H, g->pad, g->align, &m);
                GS_T fx = floor(sx), fy = floor(sy);
                int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
                GS_T lx = fx + 1 - sx, hx = sx - fx, ly = fy + 1 - sy, hy = sy - fy;
                for (int cn = 0; cn < 4; cn++) {
                    int64_t xi = x0 + (cn & 1), yi = y0 + (cn >> 1);
                    bool in = xi >= 0 && xi < W && yi >= 0 && yi < H;
                    pos[4 * j + cn] = in ? yi * W + xi : -1;
                    w[4 * j + cn] = ((cn & 1) ? hx : lx) * ((cn >> 1) ? hy : ly);
                }
            }
            for (int64_t ch = 0; ch < g->c; ch++) {
                const GS_T *xc = x + (b * g->c + ch) * iplane;
                GS_T *oc = out + (b * g->c + ch) * opts + q0;
                for (int64_t j = 0; j < nq; j++) {
                    GS_T acc = 0;
                    for (int cn = 0; cn < 4; cn++)
                        if (pos[4 * j + cn] >= 0) acc += xc[pos[4 * j + cn]] * w[4 * j + cn];
                    oc[j] = acc;
                }
            }
        }
    }
}
static void GS_NAME(run_)(const gs_geom *g, const GS_T *x, const GS_T *grid, GS_T *out, const GS_T *go, GS_T *gin, GS_T *ggrid)
{
    if (out && g->nd == 2 && g->mode == 0) {
        GS_NAME(bilinear2d_)(g, x, grid, out);
        return;
    }
    int64_t iplane = g->in[0] * g->in[1] * g->in[2], opts = g->out[0] * g->out[1] * g->out[2];
    int nd = g->nd;
    _Pragma("omp parallel for if (g->n > 1 && g->n * opts * g->c > PCT_SPATIAL_GRAIN)")
    for (int64_t b = 0; b < g->n; b++) {
        const GS_T *xb = x + b * g->c * iplane;
        for (int64_t q = 0; q < opts; q++) {
            const GS_T *gp = grid + (b * opts + q) * nd;
            int64_t o = b * g->c * opts + q;
            GS_NAME(point_)(g, xb, gp, out ? out + o : NULL, opts, go ? go + o : NULL,
                      gin ? gin + b * g->c * iplane : NULL, ggrid ? ggrid + (b * opts + q) * nd : NULL);
        }
    }
}

#undef GS_NAME
#undef GS_E
#undef GS_T
