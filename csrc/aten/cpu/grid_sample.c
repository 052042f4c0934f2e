/* grid_sample.c: grid_sampler_2d / grid_sampler_3d and their backward kernels (torch's
 * F.grid_sample; the Python front does torch's argument checks, these kernels the shapes).
 *
 * Note [Grid sampling]: an output point reads the input at the grid's normalized coordinates
 * (-1 .. 1, x first), unnormalized with align_corners and mapped through the padding mode
 * (zeros: points outside read 0; border: clipped; reflection: reflected, then clipped), as
 * torch's GridSampler.h. Bilinear (trilinear in 3-d) sums the 2^d corners in torch's order
 * (x fastest, then y, then z) with weights that are products of the per-dim distances; nearest
 * rounds half to even (nearbyint); bicubic (2-d only) is torch's A = -0.75 convolution with its
 * bounded reads through the padding mode. The backward kernel is the same walk: each corner's
 * weight times grad_output is added into grad_input, and the derivative of the weights with
 * respect to the source coordinate, times the unnormalize / padding derivative, gives grad_grid.
 * Batches run on OpenMP threads (grad_input is per batch, so no two threads add into one place).
 * float16 / bfloat16 compute in float32 (rounded once at the end). */
#include "spatial.h"
#include "norm_rows.h"

typedef struct gs_geom {
    int nd;                  /* spatial dims: 2 or 3 */
    int64_t n, c;
    int64_t in[3];           /* input sizes (D, H, W) or (1, H, W) */
    int64_t out[3];          /* output sizes */
    int mode, pad;
    bool align;
} gs_geom;

#define GS_BLOCK 64

#define GS_KERNELS(E, T)                                                                         \
    static inline T unnorm_##E(T coord, int64_t size, bool align, T *g)                          \
    {                                                                                            \
        if (align) { *g = (T)(size - 1) / 2; return ((coord + 1) / 2) * (T)(size - 1); }        \
        *g = (T)size / 2;                                                                        \
        return ((coord + 1) * (T)size - 1) / 2;                                                  \
    }                                                                                            \
    static inline T clip_##E(T in, int64_t limit, T *g)                                          \
    {                                                                                            \
        if (in <= 0) { *g = 0; return 0; }                                                       \
        T max = (T)(limit - 1);                                                                  \
        if (in >= max) { *g = 0; return max; }                                                   \
        *g = 1;                                                                                  \
        return in;                                                                               \
    }                                                                                            \
    static inline T reflect_##E(T in, int64_t twice_low, int64_t twice_high, T *g)               \
    {                                                                                            \
        if (twice_low == twice_high) { *g = 0; return 0; }                                       \
        T min = (T)twice_low / 2, span = (T)(twice_high - twice_low) / 2, mult = 1;              \
        in = in - min;                                                                           \
        if (in < 0) { mult = -1; in = -in; }                                                     \
        T extra = fmod(in, span);                                                                \
        int64_t flips = (int64_t)floor(in / span);                                               \
        if (flips % 2 == 0) { *g = mult; return extra + min; }                                   \
        *g = -mult;                                                                              \
        return span - extra + min;                                                               \
    }                                                                                            \
    /* the padding mode's map of an unnormalized coordinate (and its derivative) */            \
    static inline T coords_##E(T x, int64_t size, int pad, bool align, T *g)                     \
    {                                                                                            \
        T g1 = 1, g2 = 1;                                                                        \
        if (pad == 1) x = clip_##E(x, size, &g1);                                                \
        else if (pad == 2) {                                                                     \
            x = align ? reflect_##E(x, 0, 2 * (size - 1), &g1) : reflect_##E(x, -1, 2 * size - 1, &g1); \
            x = clip_##E(x, size, &g2);                                                          \
        }                                                                                        \
        *g = g1 * g2;                                                                            \
        /* torch's safe_downgrade_to_int_range: far or non-finite coordinates read nothing */    \
        if (!(x > -(T)INT32_MAX && x < (T)INT32_MAX)) x = -100;                                  \
        return x;                                                                                \
    }                                                                                            \
    static inline T source_##E(T coord, int64_t size, int pad, bool align, T *g)                 \
    {                                                                                            \
        T g1, g2;                                                                                \
        T x = coords_##E(unnorm_##E(coord, size, align, &g1), size, pad, align, &g2);            \
        *g = g1 * g2;                                                                            \
        return x;                                                                                \
    }                                                                                            \
    static inline void cubic_coeffs_##E(T c[4], T t)                                             \
    {                                                                                            \
        const T A = (T)-0.75;                                                                    \
        T x1 = t, x2 = 1 - t;                                                                    \
        c[0] = ((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A;                  \
        c[1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;                                           \
        c[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;                                           \
        c[3] = ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A;                  \
    }                                                                                            \
    static inline void cubic_coeffs_grad_##E(T c[4], T t)                                        \
    {                                                                                            \
        const T A = (T)-0.75;                                                                    \
        T x = -1 - t;                                                                            \
        c[0] = (-3 * A * x - 10 * A) * x - 8 * A;                                                \
        x = -t;                                                                                  \
        c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;                                             \
        x = 1 - t;                                                                               \
        c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;                                              \
        x = 2 - t;                                                                               \
        c[3] = (3 * A * x - 10 * A) * x + 8 * A;                                                 \
    }                                                                                            \
    /* bicubic's bounded read position: -1 when it reads nothing */                              \
    static inline int64_t bounded_##E(const gs_geom *g, int64_t x, int64_t y)                    \
    {                                                                                            \
        T gd;                                                                                    \
        T fx = coords_##E((T)x, g->in[2], g->pad, g->align, &gd);                                \
        T fy = coords_##E((T)y, g->in[1], g->pad, g->align, &gd);                                \
        int64_t ix = (int64_t)fx, iy = (int64_t)fy;                                              \
        if (ix < 0 || ix >= g->in[2] || iy < 0 || iy >= g->in[1]) return -1;                    \
        return iy * g->in[2] + ix;                                                               \
    }                                                                                            \
    /* One output point of batch b: forward (out != NULL) or backward (gin / ggrid). */          \
    static void point_##E(const gs_geom *g, const T *x, const T *gp, T *out, int64_t ostride,    \
                          const T *go, T *gin, T *ggrid)                                         \
    {                                                                                            \
        int nd = g->nd;                                                                          \
        int64_t iplane = g->in[0] * g->in[1] * g->in[2];                                         \
        T src[3], mult[3] = {1, 1, 1};                                                           \
        for (int k = 0; k < nd; k++) { /* grid's k-th coordinate is spatial dim nd - 1 - k */    \
            int64_t size = g->in[2 - k];                                                         \
            if (g->mode == 2) src[k] = unnorm_##E(gp[k], size, g->align, &mult[k]);             \
            else src[k] = source_##E(gp[k], size, g->pad, g->align, &mult[k]);                   \
        }                                                                                        \
        if (g->mode == 1) { /* nearest */                                                        \
            int64_t pos = 0;                                                                     \
            bool inside = true;                                                                  \
            for (int k = nd - 1; k >= 0; k--) {                                                  \
                int64_t i = (int64_t)nearbyint(src[k]), size = g->in[2 - k];                     \
                inside = inside && i >= 0 && i < size;                                           \
                pos = pos * size + i;                                                            \
            }                                                                                    \
            for (int64_t ch = 0; ch < g->c; ch++) {                                              \
                if (out) out[ch * ostride] = inside ? x[ch * iplane + pos] : 0;                  \
                else if (gin && inside) gin[ch * iplane + pos] += go[ch * ostride];              \
            }                                                                                    \
            if (ggrid) for (int k = 0; k < nd; k++) ggrid[k] = 0;                                \
            return;                                                                              \
        }                                                                                        \
        if (g->mode == 0) { /* bilinear / trilinear */                                           \
            int64_t i0[3];                                                                       \
            T lo[3], hi[3]; /* torch's distances: (i0 + 1 - src) and (src - i0) */              \
            for (int k = 0; k < nd; k++) {                                                       \
                T f = floor(src[k]);                                                             \
                i0[k] = (int64_t)f;                                                              \
                lo[k] = f + 1 - src[k];                                                          \
                hi[k] = src[k] - f;                                                              \
            }                                                                                    \
            int ncorner = 1 << nd;                                                               \
            int64_t pos[8];                                                                      \
            T w[8], dw[8][3];                                                                    \
            for (int cn = 0; cn < ncorner; cn++) {                                               \
                /* corner bits: x is bit 0 (fastest), y bit 1, z bit 2 */                        \
                T part[3] = {1, 1, 1};                                                                     \
                int64_t p = 0;                                                                   \
                bool inside = true;                                                              \
                for (int k = 0; k < nd; k++) {                                                   \
                    part[k] = ((cn >> k) & 1) ? hi[k] : lo[k];                                   \
                }                                                                                \
                for (int k = nd - 1; k >= 0; k--) {                                              \
                    int64_t i = i0[k] + ((cn >> k) & 1), size = g->in[2 - k];                    \
                    inside = inside && i >= 0 && i < size;                                       \
                    p = p * size + i;                                                            \
                }                                                                                \
                pos[cn] = inside ? p : -1;                                                       \
                w[cn] = part[0] * part[1];                                                       \
                if (nd == 3) w[cn] *= part[2];                                                   \
                for (int k = 0; k < nd; k++) { /* d w / d src[k] */                              \
                    T d = ((cn >> k) & 1) ? 1 : -1;                                              \
                    for (int j = 0; j < nd; j++) if (j != k) d *= part[j];                       \
                    dw[cn][k] = d;                                                               \
                }                                                                                \
            }                                                                                    \
            T gs[3] = {0, 0, 0};                                                                 \
            for (int64_t ch = 0; ch < g->c; ch++) {                                              \
                const T *xc = x + ch * iplane;                                                   \
                if (out) {                                                                       \
                    T acc = 0;                                                                   \
                    for (int cn = 0; cn < ncorner; cn++) if (pos[cn] >= 0) acc += xc[pos[cn]] * w[cn]; \
                    out[ch * ostride] = acc;                                                     \
                    continue;                                                                    \
                }                                                                                \
                T gov = go[ch * ostride];                                                        \
                for (int cn = 0; cn < ncorner; cn++) {                                           \
                    if (pos[cn] < 0) continue;                                                   \
                    if (gin) gin[ch * iplane + pos[cn]] += gov * w[cn];                          \
                    if (ggrid) for (int k = 0; k < nd; k++) gs[k] += xc[pos[cn]] * dw[cn][k] * gov; \
                }                                                                                \
            }                                                                                    \
            if (ggrid) for (int k = 0; k < nd; k++) ggrid[k] = mult[k] * gs[k];                  \
            return;                                                                              \
        }                                                                                        \
        /* bicubic (2-d) */                                                                      \
        T fx = floor(src[0]), fy = floor(src[1]);                                                \
        int64_t ix = (int64_t)fx, iy = (int64_t)fy;                                              \
        T tx = src[0] - fx, ty = src[1] - fy, cx[4], cy[4], dcx[4], dcy[4];                     \
        cubic_coeffs_##E(cx, tx);                                                                \
        cubic_coeffs_##E(cy, ty);                                                                \
        int64_t pos[4][4];                                                                       \
        for (int j = 0; j < 4; j++)                                                              \
            for (int i = 0; i < 4; i++) pos[j][i] = bounded_##E(g, ix - 1 + i, iy - 1 + j);      \
        if (out) {                                                                               \
            for (int64_t ch = 0; ch < g->c; ch++) {                                              \
                const T *xc = x + ch * iplane;                                                   \
                T row[4];                                                                        \
                for (int j = 0; j < 4; j++) {                                                    \
                    T v[4];                                                                      \
                    for (int i = 0; i < 4; i++) v[i] = pos[j][i] >= 0 ? xc[pos[j][i]] : 0;       \
                    row[j] = v[0] * cx[0] + v[1] * cx[1] + v[2] * cx[2] + v[3] * cx[3];          \
                }                                                                                \
                out[ch * ostride] = row[0] * cy[0] + row[1] * cy[1] + row[2] * cy[2] + row[3] * cy[3]; \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        cubic_coeffs_grad_##E(dcx, tx);                                                          \
        cubic_coeffs_grad_##E(dcy, ty);                                                          \
        T gx = 0, gy = 0;                                                                        \
        for (int64_t ch = 0; ch < g->c; ch++) {                                                  \
            const T *xc = x + ch * iplane;                                                       \
            T gov = go[ch * ostride];                                                            \
            for (int i = 0; i < 4; i++)                                                          \
                for (int j = 0; j < 4; j++) {                                                    \
                    int64_t p = pos[j][i];                                                       \
                    if (p < 0) continue;                                                         \
                    if (gin) gin[ch * iplane + p] += gov * cx[i] * cy[j];                        \
                    T v = xc[p];                                                                 \
                    gx -= v * dcx[i] * cy[j] * gov;                                              \
                    gy -= v * dcy[j] * cx[i] * gov;                                              \
                }                                                                                \
        }                                                                                        \
        if (ggrid) { ggrid[0] = mult[0] * gx; ggrid[1] = mult[1] * gy; }                         \
    }                                                                                            \
    /* 2-d bilinear forward, blocked: the corners and weights of GS_BLOCK points first, then each  \
       channel over the block (contiguous writes); the same sums in the same order as point_ */    \
    static void bilinear2d_##E(const gs_geom *g, const T *x, const T *grid, T *out)              \
    {                                                                                            \
        int64_t H = g->in[1], W = g->in[2], iplane = H * W, opts = g->out[1] * g->out[2];         \
        _Pragma("omp parallel for if (g->n > 1 && g->n * opts * g->c > PCT_SPATIAL_GRAIN)")     \
        for (int64_t b = 0; b < g->n; b++) {                                                     \
            int64_t pos[4 * GS_BLOCK];                                                           \
            T w[4 * GS_BLOCK];                                                                   \
            for (int64_t q0 = 0; q0 < opts; q0 += GS_BLOCK) {                                    \
                int64_t nq = opts - q0 < GS_BLOCK ? opts - q0 : GS_BLOCK;                         \
                for (int64_t j = 0; j < nq; j++) {                                               \
                    const T *gp = grid + (b * opts + q0 + j) * 2;                                \
                    T m, sx = source_##E(gp[0], W, g->pad, g->align, &m);                        \
                    T sy = source_##E(gp[1], H, g->pad, g->align, &m);                           \
                    T fx = floor(sx), fy = floor(sy);                                            \
                    int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;                                  \
                    T lx = fx + 1 - sx, hx = sx - fx, ly = fy + 1 - sy, hy = sy - fy;            \
                    for (int cn = 0; cn < 4; cn++) {                                             \
                        int64_t xi = x0 + (cn & 1), yi = y0 + (cn >> 1);                         \
                        bool in = xi >= 0 && xi < W && yi >= 0 && yi < H;                        \
                        pos[4 * j + cn] = in ? yi * W + xi : -1;                                 \
                        w[4 * j + cn] = ((cn & 1) ? hx : lx) * ((cn >> 1) ? hy : ly);            \
                    }                                                                            \
                }                                                                                \
                for (int64_t ch = 0; ch < g->c; ch++) {                                          \
                    const T *xc = x + (b * g->c + ch) * iplane;                                  \
                    T *oc = out + (b * g->c + ch) * opts + q0;                                   \
                    for (int64_t j = 0; j < nq; j++) {                                           \
                        T acc = 0;                                                               \
                        for (int cn = 0; cn < 4; cn++)                                           \
                            if (pos[4 * j + cn] >= 0) acc += xc[pos[4 * j + cn]] * w[4 * j + cn]; \
                        oc[j] = acc;                                                             \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    static void run_##E(const gs_geom *g, const T *x, const T *grid, T *out, const T *go, T *gin, T *ggrid) \
    {                                                                                            \
        if (out && g->nd == 2 && g->mode == 0) {                                                 \
            bilinear2d_##E(g, x, grid, out);                                                     \
            return;                                                                              \
        }                                                                                        \
        int64_t iplane = g->in[0] * g->in[1] * g->in[2], opts = g->out[0] * g->out[1] * g->out[2]; \
        int nd = g->nd;                                                                          \
        _Pragma("omp parallel for if (g->n > 1 && g->n * opts * g->c > PCT_SPATIAL_GRAIN)")     \
        for (int64_t b = 0; b < g->n; b++) {                                                     \
            const T *xb = x + b * g->c * iplane;                                                 \
            for (int64_t q = 0; q < opts; q++) {                                                 \
                const T *gp = grid + (b * opts + q) * nd;                                        \
                int64_t o = b * g->c * opts + q;                                                 \
                point_##E(g, xb, gp, out ? out + o : NULL, opts, go ? go + o : NULL,             \
                          gin ? gin + b * g->c * iplane : NULL, ggrid ? ggrid + (b * opts + q) * nd : NULL); \
            }                                                                                    \
        }                                                                                        \
    }
GS_KERNELS(FLOAT32, float)
GS_KERNELS(FLOAT64, double)

/* The arguments the 2-d and 3-d samplers and their backward ops share (read from each op's typed arguments). */
typedef struct gs_args {
    pct_tensor *input, *grid;
    int64_t mode, pad;
    bool align;
} gs_args;

/* Shapes of (input, grid) for an nd-d sampler with torch's texts; fills g. -1 with exception. */
static int gs_setup(const gs_args *a, int nd, gs_geom *g)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    const pct_tensor *x = a->input, *grid = a->grid;
    memset(g, 0, sizeof *g);
    g->nd = nd;
    g->mode = (int)a->mode;
    g->pad = (int)a->pad;
    g->align = a->align;
    /* torch's order: batch size, the grid's last dim, empty spatial dims, ranks, bicubic, dtypes */
    PCT_CHECK(x->ndim >= 1 && grid->ndim >= 1 && x->sizes[0] == grid->sizes[0], PCT_ERR_RUNTIME,
              "grid_sampler(): expected grid and input to have same batch size, but got input with sizes %s and grid "
              "with sizes %s", pct_spatial_shape(b1, x), pct_spatial_shape(b2, grid));
    PCT_CHECK(grid->sizes[grid->ndim - 1] == x->ndim - 2, PCT_ERR_RUNTIME, "grid_sampler(): expected grid to have "
              "size %d in last dimension, but got grid with sizes %s", x->ndim - 2, pct_spatial_shape(b1, grid));
    for (int i = 2; i < x->ndim; i++)
        PCT_CHECK(x->sizes[i] > 0, PCT_ERR_RUNTIME, "grid_sampler(): expected input to have non-empty spatial "
                  "dimensions, but input has sizes %s with dimension %d being empty", pct_spatial_shape(b1, x), i);
    PCT_CHECK(x->ndim == nd + 2 && grid->ndim == nd + 2, PCT_ERR_RUNTIME,
              "grid_sampler(): expected %dD input and grid with same number of dimensions, but got input with sizes %s "
              "and grid with sizes %s", nd + 2, pct_spatial_shape(b1, x), pct_spatial_shape(b2, grid));
    PCT_CHECK(g->mode >= 0 && g->mode <= 2, PCT_ERR_RUNTIME, "grid_sampler(): unknown interpolation mode %d", g->mode);
    PCT_CHECK(g->pad >= 0 && g->pad <= 2, PCT_ERR_RUNTIME, "grid_sampler(): unknown padding mode %d", g->pad);
    PCT_CHECK(nd == 2 || g->mode != 2, PCT_ERR_RUNTIME, "grid_sampler(): bicubic interpolation only supports 4D input");
    PCT_CHECK(x->dtype == grid->dtype, PCT_ERR_RUNTIME, "expected scalar type %s but found %s",
              pct_dtype_cpp_name[x->dtype], pct_dtype_cpp_name[grid->dtype]);
    PCT_CHECK(pct_dtype_is_floating(x->dtype), PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
              nd == 2 ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler3d_cpu", pct_dtype_cpp_name[x->dtype]);
    g->n = x->sizes[0];
    g->c = x->sizes[1];
    g->in[0] = nd == 3 ? x->sizes[2] : 1;
    g->in[1] = x->sizes[nd];
    g->in[2] = x->sizes[nd + 1];
    g->out[0] = nd == 3 ? grid->sizes[1] : 1;
    g->out[1] = grid->sizes[nd - 1];
    g->out[2] = grid->sizes[nd];
    return 0;
fail:
    return -1;
}

static pct_object *grid_sampler(const gs_args *a, int nd)
{
    gs_geom g;
    pct_tensor *xc = NULL, *gc = NULL, *out = NULL;
    if (gs_setup(a, nd, &g) < 0) return NULL;
    int64_t sizes[5] = {g.n, g.c, g.out[0], g.out[1], g.out[2]};
    if (nd == 2) { sizes[2] = g.out[1]; sizes[3] = g.out[2]; }
    int dtype = a->input->dtype, cd = pct_spatial_compute_dtype(dtype);
    PCT_TRY(out = pct_tensor_empty(nd + 2, sizes, cd, PCT_CPU, -1));
    if (out->numel) {
        PCT_TRY(xc = pct_spatial_input(a->input));
        PCT_TRY(gc = pct_spatial_input(a->grid));
        if (cd == PCT_FLOAT32)
            run_FLOAT32(&g, (const float *)pct_tensor_data(xc), (const float *)pct_tensor_data(gc),
                        (float *)pct_tensor_data(out), NULL, NULL, NULL);
        else
            run_FLOAT64(&g, (const double *)pct_tensor_data(xc), (const double *)pct_tensor_data(gc),
                        (double *)pct_tensor_data(out), NULL, NULL, NULL);
    }
    PCT_XDECREF(xc);
    PCT_XDECREF(gc);
    return pct_spatial_finish(out, dtype);
fail:
    PCT_XDECREF(xc);
    PCT_XDECREF(gc);
    PCT_XDECREF(out);
    return NULL;
}

/* (grad_output, input, grid, mode, padding, align_corners, output_mask) -> (grad_input, grad_grid) */
static pct_object *grid_sampler_backward(pct_tensor *go, const gs_args *a, const pct_int_list *mask, int nd)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    gs_geom g;
    pct_tensor *xc = NULL, *gc = NULL, *goc = NULL, *res[2] = {NULL, NULL};
    if (gs_setup(a, nd, &g) < 0) return NULL;
    PCT_CHECK(mask->n == 2, PCT_ERR_RUNTIME, "grid_sampler_%dd_backward: output_mask must have 2 elements", nd);
    {
        bool ok = go->ndim == nd + 2 && go->sizes[0] == g.n && go->sizes[1] == g.c;
        for (int k = 0; ok && k < nd; k++) ok = go->sizes[2 + k] == g.out[3 - nd + k];
        PCT_CHECK(ok, PCT_ERR_RUNTIME, "grid_sampler_%dd_backward: expected grad_output of the output's shape, but "
                  "got %s for grid %s", nd, pct_spatial_shape(b1, go), pct_spatial_shape(b2, a->grid));
        PCT_CHECK(go->dtype == a->input->dtype, PCT_ERR_RUNTIME, "grid_sampler_%dd_backward: expected grad_output "
                  "of dtype %s, but got %s", nd, pct_dtype_cpp_name[a->input->dtype], pct_dtype_cpp_name[go->dtype]);
    }
    int dtype = go->dtype, cd = pct_spatial_compute_dtype(dtype);
    if (mask->v[0]) PCT_TRY(res[0] = pct_tensor_zeros(a->input->ndim, a->input->sizes, cd));
    PCT_TRY(res[1] = pct_tensor_zeros(a->grid->ndim, a->grid->sizes, cd));
    if (go->numel) {
        PCT_TRY(xc = pct_spatial_input(a->input));
        PCT_TRY(gc = pct_spatial_input(a->grid));
        PCT_TRY(goc = pct_spatial_input(go));
        bool want_grid = mask->v[1];
        if (cd == PCT_FLOAT32)
            run_FLOAT32(&g, (const float *)pct_tensor_data(xc), (const float *)pct_tensor_data(gc), NULL,
                        (const float *)pct_tensor_data(goc), res[0] ? (float *)pct_tensor_data(res[0]) : NULL,
                        want_grid ? (float *)pct_tensor_data(res[1]) : NULL);
        else
            run_FLOAT64(&g, (const double *)pct_tensor_data(xc), (const double *)pct_tensor_data(gc), NULL,
                        (const double *)pct_tensor_data(goc), res[0] ? (double *)pct_tensor_data(res[0]) : NULL,
                        want_grid ? (double *)pct_tensor_data(res[1]) : NULL);
    }
    PCT_XDECREF(xc);
    PCT_XDECREF(gc);
    PCT_XDECREF(goc);
    for (int k = 0; k < 2; k++) {
        if (!res[k]) continue;
        res[k] = (pct_tensor *)pct_spatial_finish(res[k], dtype);
        if (!res[k]) {
            PCT_XDECREF(res[1 - k]);
            return NULL;
        }
    }
    return pct_norm_tuple_steal(2, res);
fail:
    PCT_XDECREF(xc);
    PCT_XDECREF(gc);
    PCT_XDECREF(goc);
    PCT_XDECREF(res[0]);
    PCT_XDECREF(res[1]);
    return NULL;
}

#define GS_ARGS {arg.input, arg.grid, arg.interpolation_mode, arg.padding_mode, arg.align_corners}

pct_object *pct_cpu_grid_sampler_2d(pct_call *c)
{
    PCT_ARGS(grid_sampler_2d);
    return grid_sampler(&(gs_args)GS_ARGS, 2);
}

pct_object *pct_cpu_grid_sampler_3d(pct_call *c)
{
    PCT_ARGS(grid_sampler_3d);
    return grid_sampler(&(gs_args)GS_ARGS, 3);
}

pct_object *pct_cpu_grid_sampler_2d_backward(pct_call *c)
{
    PCT_ARGS(grid_sampler_2d_backward);
    return grid_sampler_backward(arg.grad_output, &(gs_args)GS_ARGS, &arg.output_mask, 2);
}

pct_object *pct_cpu_grid_sampler_3d_backward(pct_call *c)
{
    PCT_ARGS(grid_sampler_3d_backward);
    return grid_sampler_backward(arg.grad_output, &(gs_args)GS_ARGS, &arg.output_mask, 3);
}

#undef GS_ARGS
