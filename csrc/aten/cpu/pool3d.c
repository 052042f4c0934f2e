/* pool3d.c: 3-d pooling (max_pool3d_with_indices, avg_pool3d, adaptive_avg_pool3d,
 * adaptive_max_pool3d) and their backward kernels, with torch's argument checks and texts.
 *
 * Note [Pooling volumes]: as the 2-d kernels (Note [Planes and grids] in spatial.h), a contiguous
 * input is `planes` (the leading dims flattened: N * C, or C for an unbatched 4-d input) of a
 * (D, H, W) grid. Each output element scans its window in torch's order (depth, then rows, then
 * columns) with torch's update rule, so tie-breaking (the first maximum), NaN handling (the last
 * NaN wins), the flat index within a plane (d * H * W + h * W + w), the summation order of the
 * averages and the divisor are torch's. float16 / bfloat16 compute in float32 (rounded once at
 * the end). Work is split over (plane, output depth) slices on OpenMP threads; the backward
 * kernels split over planes (windows overlap inside a plane). */
#include "pool.h"
#include "norm_rows.h"
#include <stdlib.h>

typedef struct pool3d {
    int64_t planes, id, ih, iw, od, oh, ow;
    int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
    bool ceil, count_pad, has_divisor;
    int64_t divisor;
} pool3d;

/* A 1-or-3-element list as (t, h, w); false when the length is wrong. */
static bool triple(const pct_int_list *v, int64_t *t, int64_t *h, int64_t *w)
{
    if (v->n != 1 && v->n != 3) return false;
    *t = v->v[0];
    *h = v->v[v->n == 3 ? 1 : 0];
    *w = v->v[v->n - 1];
    return true;
}

/* Checks the window arguments a (pool.h) against `x` with torch's rules and texts and fills g. */
static int pool3d_setup(const pct_pool_args *a, bool avg, const pct_tensor *x, pool3d *g)
{
    char buf[PCT_SHAPE_BUF];
    const pct_int_list *kv = &a->kernel, *sv = &a->stride, *pv = &a->padding;
    int sn = sv->none ? 0 : sv->n, nd = x->ndim;
    const int64_t *sz = x->sizes;
    memset(g, 0, sizeof *g);
    g->ceil = a->ceil;
    if (avg) {
        g->count_pad = a->count_include_pad;
        if (!a->divisor.none) {
            g->has_divisor = true;
            g->divisor = a->divisor.v;
        }
    }
    PCT_CHECK(triple(kv, &g->kd, &g->kh, &g->kw), PCT_ERR_RUNTIME,
              avg ? "avg_pool3d: kernel_size must be a single int, or a tuple of three ints"
                  : "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
    PCT_CHECK(sn == 0 || triple(sv, &g->sd, &g->sh, &g->sw), PCT_ERR_RUNTIME,
              avg ? "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints"
                  : "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
    if (sn == 0) { g->sd = g->kd; g->sh = g->kh; g->sw = g->kw; }
    PCT_CHECK(triple(pv, &g->pd, &g->ph, &g->pw), PCT_ERR_RUNTIME,
              avg ? "avg_pool3d: padding must be a single int, or a tuple of three ints"
                  : "max_pool3d: padding must either be a single int, or a tuple of three ints");
    g->dd = g->dh = g->dw = 1;
    if (!avg)
        PCT_CHECK(triple(&a->dilation, &g->dd, &g->dh, &g->dw), PCT_ERR_RUNTIME,
                  "max_pool3d: dilation must be either a single int, or a tuple of three ints");
    PCT_CHECK(nd == 4 || nd == 5, PCT_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    PCT_CHECK(!g->has_divisor || g->divisor != 0, PCT_ERR_RUNTIME, "divisor must be not zero");
    g->id = sz[nd - 3];
    g->ih = sz[nd - 2];
    g->iw = sz[nd - 1];
    if (pct_pool_out_dim(g->id, g->kd, g->pd, g->sd, g->dd, g->ceil, &g->od) < 0 ||
        pct_pool_out_dim(g->ih, g->kh, g->ph, g->sh, g->dh, g->ceil, &g->oh) < 0 ||
        pct_pool_out_dim(g->iw, g->kw, g->pw, g->sw, g->dw, g->ceil, &g->ow) < 0)
        return -1;
    /* torch's pool3d_shape_check */
    PCT_CHECK(g->kd > 0 && g->kw > 0 && g->kh > 0, PCT_ERR_RUNTIME,
              "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld", (long long)g->kd,
              (long long)g->kh, (long long)g->kw);
    PCT_CHECK(g->sd > 0 && g->sw > 0 && g->sh > 0, PCT_ERR_RUNTIME,
              "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld", (long long)g->sd, (long long)g->sh,
              (long long)g->sw);
    PCT_CHECK(g->dd > 0 && g->dw > 0 && g->dh > 0, PCT_ERR_RUNTIME,
              "dilation should be greater than zero, but got dilationT: %lld dilationH: %lld dilationW: %lld",
              (long long)g->dd, (long long)g->dh, (long long)g->dw);
    for (int i = nd == 5 ? 1 : 0; i < nd; i++)
        PCT_CHECK(sz[i] > 0, PCT_ERR_RUNTIME, "%s: Expected input's non-batch dimensions to have positive length, but "
                  "input has a shape of %s and non-batch dimension %lld has length zero!",
                  avg ? "avg_pool3d()" : "max_pool3d_with_indices_out_cpu_template()", pct_shape_str(buf, sizeof buf, nd, sz),
                  (long long)sz[i]);
    PCT_CHECK(!avg || (g->id >= g->kd && g->ih >= g->kh && g->iw >= g->kw), PCT_ERR_RUNTIME,
              "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld kH: %lld kW: %lld)",
              (long long)g->id, (long long)g->ih, (long long)g->iw, (long long)g->kd, (long long)g->kh, (long long)g->kw);
    PCT_CHECK(g->kd / 2 >= g->pd && g->kw / 2 >= g->pw && g->kh / 2 >= g->ph, PCT_ERR_RUNTIME,
              "pad should be smaller than or equal to half of kernel size, but got kT: %lld kW: %lld kH: %lld padT: %lld "
              "padW: %lld padH: %lld", (long long)g->kd, (long long)g->kw, (long long)g->kh, (long long)g->pd,
              (long long)g->pw, (long long)g->ph);
    PCT_CHECK(g->od >= 1 && g->ow >= 1 && g->oh >= 1, PCT_ERR_RUNTIME,
              "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lldx%lld). Output size is too small",
              (long long)sz[nd - 4], (long long)g->id, (long long)g->ih, (long long)g->iw, (long long)sz[nd - 4],
              (long long)g->od, (long long)g->oh, (long long)g->ow);
    g->planes = 1;
    for (int i = 0; i < nd - 3; i++) g->planes *= sz[i];
    return 0;
fail:
    return -1;
}

/* Adaptive pooling: output_size (3 ints) checked with torch's rules. */
static int adaptive3d_setup(const pct_int_list *osize, bool max, const pct_tensor *x, pool3d *g)
{
    char buf[PCT_SHAPE_BUF];
    const char *name = max ? "adaptive_max_pool3d" : "adaptive_avg_pool3d";
    int nd = x->ndim;
    const int64_t *sz = x->sizes;
    memset(g, 0, sizeof *g);
    if (max) {
        PCT_CHECK(nd == 4 || nd == 5, PCT_ERR_RUNTIME, "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: %s",
                  pct_shape_str(buf, sizeof buf, nd, sz));
    } else {
        PCT_CHECK(osize->n == 3, PCT_ERR_RUNTIME, "adaptive_avg_pool3d: output_size must be 3");
        PCT_CHECK(osize->v[0] >= 0 && osize->v[1] >= 0 && osize->v[2] >= 0, PCT_ERR_RUNTIME,
                  "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but received {%lld, "
                  "%lld,%lld}", (long long)osize->v[0], (long long)osize->v[1], (long long)osize->v[2]);
    }
    for (int i = 1; i < nd; i++)
        PCT_CHECK(sz[i] > 0, PCT_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, "
                  "but input has sizes %s with dimension %d being empty", name, pct_shape_str(buf, sizeof buf, nd, sz), i);
    PCT_CHECK(nd == 4 || nd == 5, PCT_ERR_RUNTIME, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got %s",
              pct_shape_str(buf, sizeof buf, nd, sz));
    PCT_CHECK(osize->n == 3, PCT_ERR_RUNTIME, "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
    g->id = sz[nd - 3];
    g->ih = sz[nd - 2];
    g->iw = sz[nd - 1];
    g->od = osize->v[0];
    g->oh = osize->v[1];
    g->ow = osize->v[2];
    g->planes = 1;
    for (int i = 0; i < nd - 3; i++) g->planes *= sz[i];
    return 0;
fail:
    return -1;
}

/* ------------------------------------------------------------------------------------ */
/* kernels (T: float or double; the window [a, b) step s per dim)                          */

static inline void max_span(int64_t o, int64_t s, int64_t p, int64_t k, int64_t d, int64_t n, int64_t *lo, int64_t *hi)
{
    pct_pool_span(o, s, p, k, d, n, lo, hi);
}

/* Window of output o along one dim: adaptive (ad) or strided with dilation (max) */
typedef struct win3 {
    int64_t d0, d1, h0, h1, w0, w1, sd, sh, sw;
} win3;

static inline void max_window(const pool3d *g, int64_t od, int64_t oh, int64_t ow, win3 *w)
{
    max_span(od, g->sd, g->pd, g->kd, g->dd, g->id, &w->d0, &w->d1);
    max_span(oh, g->sh, g->ph, g->kh, g->dh, g->ih, &w->h0, &w->h1);
    max_span(ow, g->sw, g->pw, g->kw, g->dw, g->iw, &w->w0, &w->w1);
    w->sd = g->dd;
    w->sh = g->dh;
    w->sw = g->dw;
}

static inline void adaptive_window(const pool3d *g, int64_t od, int64_t oh, int64_t ow, win3 *w)
{
    w->d0 = pct_adaptive_start(od, g->od, g->id);
    w->d1 = pct_adaptive_end(od, g->od, g->id);
    w->h0 = pct_adaptive_start(oh, g->oh, g->ih);
    w->h1 = pct_adaptive_end(oh, g->oh, g->ih);
    w->w0 = pct_adaptive_start(ow, g->ow, g->iw);
    w->w1 = pct_adaptive_end(ow, g->ow, g->iw);
    w->sd = w->sh = w->sw = 1;
}

/* torch's avg window: the divisor and the clipped window. */
static inline int64_t avg_window(const pool3d *g, int64_t od, int64_t oh, int64_t ow, win3 *w)
{
    int64_t pd = pct_avg_span(od, g->sd, g->pd, g->kd, g->id, &w->d0, &w->d1);
    int64_t ph = pct_avg_span(oh, g->sh, g->ph, g->kh, g->ih, &w->h0, &w->h1);
    int64_t pw = pct_avg_span(ow, g->sw, g->pw, g->kw, g->iw, &w->w0, &w->w1);
    w->sd = w->sh = w->sw = 1;
    if (g->has_divisor) return g->divisor;
    if (g->count_pad) return pd * ph * pw;
    return (w->d1 - w->d0) * (w->h1 - w->h0) * (w->w1 - w->w0);
}

#define NAN_FLOAT(v) ((v) != (v))
#define NAN_INT(v) 0
#define POOL3D_MAX(E, T, LOW, NANT)                                                              \
    /* max (adaptive or strided): values and flat indices */                                     \
    static void max3d_##E(const pool3d *g, bool adaptive, const T *x, T *out, int64_t *ind)       \
    {                                                                                            \
        int64_t slices = g->planes * g->od, iplane = g->id * g->ih * g->iw, ohw = g->oh * g->ow;  \
        _Pragma("omp parallel for if (slices > 1 && slices * ohw * 8 > PCT_SPATIAL_GRAIN)")      \
        for (int64_t s = 0; s < slices; s++) {                                                   \
            int64_t p = s / g->od, od = s % g->od;                                               \
            const T *xp = x + p * iplane;                                                        \
            for (int64_t oh = 0; oh < g->oh; oh++)                                               \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                         \
                    win3 w;                                                                      \
                    if (adaptive) adaptive_window(g, od, oh, ow, &w);                            \
                    else max_window(g, od, oh, ow, &w);                                          \
                    T best = LOW;                                                          \
                    int64_t at = (w.d0 * g->ih + w.h0) * g->iw + w.w0;                           \
                    for (int64_t d = w.d0; d < w.d1; d += w.sd)                                  \
                        for (int64_t h = w.h0; h < w.h1; h += w.sh)                              \
                            for (int64_t c = w.w0; c < w.w1; c += w.sw) {                        \
                                int64_t k = (d * g->ih + h) * g->iw + c;                         \
                                T v = xp[k];                                                     \
                                if (v > best || NANT(v)) { best = v; at = k; }                    \
                            }                                                                    \
                    out[s * ohw + oh * g->ow + ow] = best;                                       \
                    ind[s * ohw + oh * g->ow + ow] = at;                                         \
                }                                                                                \
        }                                                                                        \
    }
POOL3D_MAX(FLOAT32, float, -INFINITY, NAN_FLOAT)
POOL3D_MAX(FLOAT64, double, -INFINITY, NAN_FLOAT)
POOL3D_MAX(UINT8, uint8_t, 0, NAN_INT)
POOL3D_MAX(INT8, int8_t, INT8_MIN, NAN_INT)
POOL3D_MAX(INT16, int16_t, INT16_MIN, NAN_INT)
POOL3D_MAX(INT32, int32_t, INT32_MIN, NAN_INT)
POOL3D_MAX(INT64, int64_t, INT64_MIN, NAN_INT)

#define P3_E FLOAT32
#define P3_T float
#include "pool3d_impl.h"
#define P3_E FLOAT64
#define P3_T double
#include "pool3d_impl.h"

/* ------------------------------------------------------------------------------------ */
/* ops                                                                                   */

static pct_tensor *new_output(const pct_tensor *x, const pool3d *g, int dtype)
{
    int64_t sp[3] = {g->od, g->oh, g->ow};
    return pct_spatial_new(x, 3, sp, dtype);
}

/* NotImplementedError for the dtypes torch's CPU kernels refuse. */
static bool float_dtype(const pct_tensor *x, const char *name, bool ints, bool reduced)
{
    if (pct_dtype_is_floating(x->dtype) && (reduced || !pct_dtype_is_reduced_float(x->dtype))) return true;
    if (ints && x->dtype >= PCT_UINT8 && x->dtype <= PCT_INT64) return true;
    pct_spatial_no_dtype(name, x->dtype);
    return false;
}

/* Forward of every 3-d pool: kind 0 max, 1 avg (window arguments a), 2 adaptive avg, 3 adaptive max (output size
 * osize). */
static pct_object *pool3d_forward(int kind, pct_tensor *x, const pct_pool_args *a, const pct_int_list *osize)
{
    pct_tensor *xc = NULL, *out = NULL, *ind = NULL;
    pool3d g;
    bool max = kind == 0 || kind == 3, adaptive = kind >= 2;
    static const char *names[4] = {"max_pool3d", "avg_pool3d_out_frame", "adaptive_avg_pool3d_cpu",
                                   "adaptive_max_pool3d_cpu"};
    if (adaptive ? adaptive3d_setup(osize, max, x, &g) < 0 : pool3d_setup(a, kind == 1, x, &g) < 0) return NULL;
    /* torch: adaptive avg pooling to 1 x 1 x 1 is mean(), which refuses integers its own way */
    PCT_CHECK(kind != 2 || pct_dtype_is_floating(x->dtype) || g.od != 1 || g.oh != 1 || g.ow != 1, PCT_ERR_RUNTIME,
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
              "Got: %s", pct_dtype_cpp_name[x->dtype]);
    if (!float_dtype(x, names[kind], kind == 0, kind != 1)) return NULL; /* torch: no reduced floats in avg_pool3d */
    int cd = pct_spatial_compute_dtype(x->dtype);
    PCT_TRY(out = new_output(x, &g, cd));
    if (max) PCT_TRY(ind = new_output(x, &g, PCT_INT64));
    if (out->numel) {
        PCT_TRY(xc = pct_spatial_input(x));
        const void *xd = pct_tensor_data(xc);
        void *od = pct_tensor_data(out);
        int64_t *id = ind ? (int64_t *)pct_tensor_data(ind) : NULL;
        switch (cd) {
        case PCT_UINT8: max3d_UINT8(&g, adaptive, xd, od, id); break;
        case PCT_INT8: max3d_INT8(&g, adaptive, xd, od, id); break;
        case PCT_INT16: max3d_INT16(&g, adaptive, xd, od, id); break;
        case PCT_INT32: max3d_INT32(&g, adaptive, xd, od, id); break;
        case PCT_INT64: max3d_INT64(&g, adaptive, xd, od, id); break;
        case PCT_FLOAT32:
            if (max) max3d_FLOAT32(&g, adaptive, xd, od, id);
            else avg3d_FLOAT32(&g, adaptive, xd, od);
            break;
        default:
            if (max) max3d_FLOAT64(&g, adaptive, xd, od, id);
            else avg3d_FLOAT64(&g, adaptive, xd, od);
        }
        PCT_CLEAR(xc);
    }
    pct_object *r = pct_spatial_finish(out, x->dtype);
    out = NULL;
    if (!max) return r;
    if (!r) goto fail;
    pct_tensor *two[2] = {(pct_tensor *)r, ind};
    return pct_norm_tuple_steal(2, two);
fail:
    PCT_XDECREF(xc);
    PCT_XDECREF(out);
    PCT_XDECREF(ind);
    return NULL;
}

pct_object *pct_cpu_max_pool3d_with_indices(pct_call *c)
{
    PCT_ARGS(max_pool3d_with_indices);
    return pool3d_forward(0, arg.input, &PCT_POOL_MAX_ARGS(arg), NULL);
}

pct_object *pct_cpu_avg_pool3d(pct_call *c)
{
    PCT_ARGS(avg_pool3d);
    return pool3d_forward(1, arg.input, &PCT_POOL_AVG_ARGS(arg, arg.divisor_override), NULL);
}

pct_object *pct_cpu_adaptive_avg_pool3d(pct_call *c)
{
    PCT_ARGS(adaptive_avg_pool3d);
    return pool3d_forward(2, arg.input, NULL, &arg.output_size);
}

pct_object *pct_cpu_adaptive_max_pool3d(pct_call *c)
{
    PCT_ARGS(adaptive_max_pool3d);
    return pool3d_forward(3, arg.input, NULL, &arg.output_size);
}

/* Backward of every 3-d pool (kind as pool3d_forward; a for kinds 0 and 1, indices for the max pools). */
static pct_object *pool3d_backward(int kind, pct_tensor *go, pct_tensor *x, const pct_pool_args *a, pct_tensor *indices)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    pct_tensor *gc = NULL, *gi = NULL, *ic = NULL;
    pool3d g;
    bool max = kind == 0 || kind == 3, adaptive = kind >= 2;
    static const char *names[4] = {"max_pool3d_with_indices_backward_cpu", "avg_pool3d_backward_out_frame",
                                   "adaptive_avg_pool3d_backward_cpu", "adaptive_max_pool3d_backward_cpu"};
    if (kind == 0 || kind == 1) {
        if (pool3d_setup(a, kind == 1, x, &g) < 0) return NULL;
    } else {
        int64_t os_sizes[3];
        const pct_int_list os = {os_sizes, 3, false};
        int nd = go->ndim;
        PCT_CHECK(nd >= 3, PCT_ERR_RUNTIME, "%s(): Expected 4D or 5D tensor for grad_output, but got %s",
                  kind == 2 ? "adaptive_avg_pool3d_backward" : "adaptive_max_pool3d_backward", pct_spatial_shape(b1, go));
        for (int i = 0; i < 3; i++) os_sizes[i] = go->sizes[nd - 3 + i];
        if (adaptive3d_setup(&os, kind == 3, x, &g) < 0) return NULL;
    }
    if (!float_dtype(x, names[kind], false, kind != 1)) return NULL;
    /* grad_output (and indices) must have the output's shape */
    {
        int nd = x->ndim;
        bool ok = go->ndim == nd && go->sizes[nd - 3] == g.od && go->sizes[nd - 2] == g.oh && go->sizes[nd - 1] == g.ow;
        for (int i = 0; ok && i < nd - 3; i++) ok = go->sizes[i] == x->sizes[i];
        PCT_CHECK(ok, PCT_ERR_RUNTIME, "Expected grad_output of shape %s with the pooled sizes (%lld, %lld, %lld), but "
                  "got %s", pct_spatial_shape(b1, x), (long long)g.od, (long long)g.oh, (long long)g.ow,
                  pct_spatial_shape(b2, go));
        PCT_CHECK(go->dtype == x->dtype, PCT_ERR_RUNTIME, "expected grad_output and input to have the same dtype");
        if (max) {
            bool same = indices->ndim == go->ndim;
            for (int i = 0; same && i < go->ndim; i++) same = indices->sizes[i] == go->sizes[i];
            PCT_CHECK(same, PCT_ERR_RUNTIME, "Expected indices of shape %s, but got %s", pct_spatial_shape(b1, go),
                      pct_spatial_shape(b2, indices));
            PCT_CHECK(indices->dtype == PCT_INT64, PCT_ERR_RUNTIME, "expected indices of dtype Long, but got %s",
                      pct_dtype_cpp_name[indices->dtype]);
        }
    }
    int cd = pct_spatial_compute_dtype(x->dtype);
    PCT_TRY(gi = pct_tensor_zeros(x->ndim, x->sizes, cd));
    if (go->numel && gi->numel) {
        PCT_TRY(gc = pct_spatial_input(go));
        if (max) PCT_TRY(ic = pct_contiguous(indices));
        int64_t iplane = g.id * g.ih * g.iw, oplane = g.od * g.oh * g.ow;
        const void *gd = pct_tensor_data(gc);
        void *gid = pct_tensor_data(gi);
        if (cd == PCT_FLOAT32) {
            if (max) index_bwd3d_FLOAT32(g.planes, iplane, oplane, gd, (const int64_t *)pct_tensor_data(ic), gid);
            else avg_bwd3d_FLOAT32(&g, adaptive, gd, gid);
        } else {
            if (max) index_bwd3d_FLOAT64(g.planes, iplane, oplane, gd, (const int64_t *)pct_tensor_data(ic), gid);
            else avg_bwd3d_FLOAT64(&g, adaptive, gd, gid);
        }
    }
    PCT_XDECREF(gc);
    PCT_XDECREF(ic);
    return pct_spatial_finish(gi, x->dtype);
fail:
    PCT_XDECREF(gc);
    PCT_XDECREF(ic);
    PCT_XDECREF(gi);
    return NULL;
}

pct_object *pct_cpu_max_pool3d_with_indices_backward(pct_call *c)
{
    PCT_ARGS(max_pool3d_with_indices_backward);
    return pool3d_backward(0, arg.grad_output, arg.input, &PCT_POOL_MAX_ARGS(arg), arg.indices);
}

pct_object *pct_cpu_avg_pool3d_backward(pct_call *c)
{
    PCT_ARGS(avg_pool3d_backward);
    return pool3d_backward(1, arg.grad_output, arg.input, &PCT_POOL_AVG_ARGS(arg, arg.divisor_override), NULL);
}

pct_object *pct_cpu_adaptive_avg_pool3d_backward(pct_call *c)
{
    PCT_ARGS(adaptive_avg_pool3d_backward);
    return pool3d_backward(2, arg.grad_output, arg.input, NULL, NULL);
}

pct_object *pct_cpu_adaptive_max_pool3d_backward(pct_call *c)
{
    PCT_ARGS(adaptive_max_pool3d_backward);
    return pool3d_backward(3, arg.grad_output, arg.input, NULL, arg.indices);
}
