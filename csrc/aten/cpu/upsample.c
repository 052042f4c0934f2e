/* upsample.c: nearest, nearest-exact and (bi)linear resampling of (N, C, W) and (N, C, H, W)
 * inputs, forward and backward (upsample_nearest1d/2d, _upsample_nearest_exact1d/2d,
 * upsample_linear1d, upsample_bilinear2d and their _backward ops).
 *
 * Note [Resampling index math]: the source position of output o along a dim follows torch's
 * CPU kernels exactly, including the precision they compute in: the scale is 1 / scale_factor
 * when one was given (and > 0), in / out otherwise, or (in - 1) / (out - 1) with align_corners;
 * positions are computed in the dtype's math type (double for float64, float otherwise) and
 * floored as float. Nearest backward computes its indices in float for every dtype, as torch
 * does, so the two directions agree with torch's (not always with each other). Nearest moves
 * elements through the index maps of spatial.c; linear interpolates along W first, then H,
 * with torch's weights and order (t0 * w0 + t1 * w1 per dim). */
#include "spatial.h"
#include <stdlib.h>

enum { UP_NEAREST, UP_EXACT, UP_LINEAR };

typedef struct up_op {
    int nsp, mode;
    bool backward;
    const char *name;
} up_op;

/* The arguments of one call as its op's typed entry reads them (input_size only for the backward ops,
 * align_corners only for the linear modes: false elsewhere). */
typedef struct up_args {
    pct_tensor *x;
    pct_int_list output_size, input_size;
    bool align;
    pct_float_opt scale[2]; /* scales (1-d) or scales_h, scales_w (2-d) */
} up_args;

/* One spatial dim: sizes and the scale argument (scales_h / scales_w / scales). */
typedef struct up_axis {
    int64_t in, out;
    bool has_scale;
    double scale;
} up_axis;

/* ---- index math (Note [Resampling index math]) ---- */

#define UP_SCALE(T, SUF)                                                                         \
    static T up_scale_##SUF(const up_axis *a, bool align)                                        \
    {                                                                                            \
        if (align) return a->out > 1 ? (T)(a->in - 1) / (T)(a->out - 1) : (T)0;                  \
        return (a->has_scale && a->scale > 0.) ? (T)(1.0 / a->scale) : (T)a->in / (T)a->out;     \
    }
UP_SCALE(float, f)
UP_SCALE(double, d)

/* torch's min((int64_t)floorf(f), in - 1), kept inside [0, in) for every float: a scale that
 * overflows (scale_factor near 0) or a NaN would make the cast undefined (an out-of-range read
 * in torch). */
static int64_t up_index(float f, int64_t in)
{
    float fl = floorf(f);
    if (!(fl < (float)in)) return in - 1;
    return fl < 0 ? 0 : (int64_t)fl < in - 1 ? (int64_t)fl : in - 1;
}

/* The input index each output reads (nearest, nearest-exact). torch has two recipes: its
 * generic kernel computes in the dtype's math type (`dbl`: double for float64) with no special
 * cases; its channels-last / small-output 2-d kernel and every backward use float and copy
 * outright when out == in (nearest also when out == 2 * in). */
enum { UP_RECIPE_GENERIC, UP_RECIPE_IDX };
static void up_nearest_map(int64_t *map, const up_axis *a, int mode, int recipe, bool dbl)
{
    for (int64_t o = 0; o < a->out; o++) {
        int64_t i;
        if (recipe == UP_RECIPE_IDX) {
            float s = up_scale_f(a, false);
            if (mode == UP_NEAREST && a->out == a->in) i = o;
            else if (mode == UP_NEAREST && a->out == 2 * a->in) i = o >> 1;
            else if (mode == UP_NEAREST) i = up_index((float)o * s, a->in);
            else i = up_index((float)(((double)o + 0.5) * (double)s), a->in);
        } else if (dbl) {
            double s = up_scale_d(a, false), r;
            if (mode == UP_NEAREST) r = s * (double)o;
            else {
                r = s * ((double)o + 0.5) - 0.5;
                r = (r < 0 ? 0 : r) + 0.5;
            }
            i = up_index((float)r, a->in);
        } else {
            float s = up_scale_f(a, false), r;
            if (mode == UP_NEAREST) i = up_index(s * (float)o, a->in);
            else {
                r = s * ((float)o + 0.5f) - 0.5f;
                i = up_index((float)((double)(r < 0 ? 0 : r) + 0.5), a->in);
            }
        }
        map[o] = i;
    }
}

/* Linear: the two inputs (i0, i1) and weights (w0, w1) of each output, in precision T. */
#define UP_LINEAR_AXIS(T, SUF)                                                                   \
    static void up_linear_axis_##SUF(const up_axis *a, bool align, int64_t *i0, int64_t *i1, T *w0, T *w1) \
    {                                                                                            \
        T s = up_scale_##SUF(a, align);                                                          \
        for (int64_t o = 0; o < a->out; o++) {                                                   \
            if (a->in == a->out) {                                                               \
                i0[o] = i1[o] = o;                                                               \
                w0[o] = 1;                                                                       \
                w1[o] = 0;                                                                       \
                continue;                                                                        \
            }                                                                                    \
            T r = align ? s * (T)o : s * ((T)o + (T)0.5) - (T)0.5;                               \
            if (!align && r < 0) r = 0;                                                          \
            int64_t k = up_index((float)r, a->in);                                               \
            T l = r - (T)k;                                                                      \
            l = l < 0 ? 0 : l > 1 ? 1 : l;                                                       \
            i0[o] = k;                                                                           \
            i1[o] = k + (k < a->in - 1 ? 1 : 0);                                                 \
            w1[o] = l;                                                                           \
            w0[o] = (T)1 - l;                                                                    \
        }                                                                                        \
    }
UP_LINEAR_AXIS(float, f)
UP_LINEAR_AXIS(double, d)

/* ---- linear kernels: W first (rows of the input), then H ---- */

#define UP_E FLOAT32
#define UP_T float
#define UP_SUF f
#include "upsample_linear_impl.h"
#define UP_E FLOAT64
#define UP_T double
#define UP_SUF d
#include "upsample_linear_impl.h"

/* ---- ops ---- */

/* Reads output_size, the scales and align_corners; checks with torch's texts against an input of `nd` dims `isz`
 * (the input_size argument for backward ops). */
static int up_setup(const up_args *a, const up_op *op, int nd, const int64_t *isz, up_axis *ax, bool *align,
                    int64_t *planes)
{
    const pct_int_list *os = &a->output_size;
    PCT_CHECK(os->n == op->nsp, PCT_ERR_RUNTIME, "It is expected output_size equals to %d, but got size %d", op->nsp, os->n);
    PCT_CHECK(nd == op->nsp + 2, PCT_ERR_RUNTIME, "It is expected input_size equals to %d, but got size %d", op->nsp + 2, nd);
    *align = a->align;
    for (int d = 0; d < op->nsp; d++) {
        ax[d].in = isz[2 + d];
        ax[d].out = os->v[d];
        ax[d].has_scale = !a->scale[d].none;
        ax[d].scale = a->scale[d].v;
    }
    if (op->nsp == 1)
        PCT_CHECK(ax[0].in > 0 && ax[0].out > 0, PCT_ERR_RUNTIME, "Input and output sizes should be greater than 0, but "
                  "got input (W: %lld) and output (W: %lld)", (long long)ax[0].in, (long long)ax[0].out);
    else
        PCT_CHECK(ax[0].in > 0 && ax[1].in > 0 && ax[0].out > 0 && ax[1].out > 0, PCT_ERR_RUNTIME,
                  "Input and output sizes should be greater than 0, but got input (H: %lld, W: %lld) output (H: %lld, W: %lld)",
                  (long long)ax[0].in, (long long)ax[1].in, (long long)ax[0].out, (long long)ax[1].out);
    PCT_CHECK(isz[0] >= 0 && isz[1] >= 0 && !__builtin_mul_overflow(isz[0], isz[1], planes), PCT_ERR_RUNTIME,
              "%s: invalid batch and channel sizes %lld and %lld", op->name, (long long)isz[0], (long long)isz[1]);
    return 0;
fail:
    return -1;
}

/* The linear kernels of either direction in the compute dtype, without the GIL; -1 when out of memory. */
static int up_linear_run(const up_op *op, const up_axis *ax, bool align, int64_t planes, int cd, bool backward,
                         const void *src, void *dst)
{
    const up_axis *ah = op->nsp == 2 ? &ax[0] : NULL, *aw = &ax[op->nsp - 1];
    int r;
    PCT_NOGIL_BEGIN
    if (cd == PCT_FLOAT64)
        r = backward ? up_linear_bwd_FLOAT64(planes, ah, aw, align, src, dst) : up_linear_fwd_FLOAT64(planes, ah, aw, align, src, dst);
    else
        r = backward ? up_linear_bwd_FLOAT32(planes, ah, aw, align, src, dst) : up_linear_fwd_FLOAT32(planes, ah, aw, align, src, dst);
    PCT_NOGIL_END
    return r;
}

/* The nearest modes' source index of every output position, per spatial axis. */
static int up_nearest_maps(pct_index_maps *m, const up_op *op, const up_axis *ax, int recipe, bool f64)
{
    int64_t in[2] = {ax[0].in, ax[op->nsp - 1].in}, out[2] = {ax[0].out, ax[op->nsp - 1].out};
    if (pct_index_maps_alloc(m, op->nsp, in, out) < 0) return -1;
    for (int d = 0; d < op->nsp; d++) up_nearest_map(m->map[d], &ax[d], op->mode, recipe, f64);
    return 0;
}

static pct_object *up_forward(const up_args *a, const up_op *op)
{
    pct_tensor *x = a->x, *xc = NULL, *out = NULL;
    up_axis ax[2];
    bool align;
    int64_t planes, osz[2];
    char buf[PCT_SHAPE_BUF];
    pct_index_maps m = {0};
    if (up_setup(a, op, x->ndim, x->sizes, ax, &align, &planes) < 0) return NULL;
    if (x->numel == 0) { /* an empty batch is fine; empty channels are not (torch) */
        int64_t rest = 1;
        for (int d = 1; d < x->ndim; d++) rest *= x->sizes[d];
        PCT_CHECK(rest != 0, PCT_ERR_RUNTIME, "Non-empty %dD data tensor expected but got a tensor with sizes %s",
                  op->nsp + 2, pct_spatial_shape(buf, x));
    }
    bool ok = pct_dtype_is_floating(x->dtype) || (op->mode != UP_LINEAR && x->dtype == PCT_UINT8);
    if (!ok) {
        if (x->dtype == PCT_UINT8) {
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "%s: uint8 input is not supported by pyctorch (torch rounds it "
                         "with its own fixed-point kernel); convert the input to a floating dtype", op->name);
            return NULL;
        }
        return pct_spatial_no_dtype(op->name, x->dtype);
    }
    for (int d = 0; d < op->nsp; d++) osz[d] = ax[d].out;
    int cd = op->mode == UP_LINEAR ? pct_spatial_compute_dtype(x->dtype) : x->dtype;
    PCT_TRY(out = pct_spatial_new(x, op->nsp, osz, cd));
    if (out->numel == 0) return pct_spatial_finish(out, x->dtype);
    PCT_TRY(xc = op->mode == UP_LINEAR ? pct_spatial_input(x) : pct_contiguous(x));
    int r;
    if (op->mode == UP_LINEAR) {
        r = up_linear_run(op, ax, align, planes, cd, false, pct_tensor_data(xc), pct_tensor_data(out));
    } else {
        /* torch's 2-d forward takes its channels-last kernel for small outputs (oh + ow <= 128) or
           channels-last inputs with more than 3 channels: the other index recipe */
        bool idx = op->nsp == 2 && (osz[0] + osz[1] <= 128 || (pct_tensor_is_channels_last(x) && x->sizes[1] > 3));
        PCT_TRY_INT(up_nearest_maps(&m, op, ax, idx ? UP_RECIPE_IDX : UP_RECIPE_GENERIC, x->dtype == PCT_FLOAT64));
        uint64_t zero = 0;
        PCT_NOGIL_BEGIN
        r = pct_index_gather(&m, planes, pct_tensor_data(xc), pct_tensor_data(out), (int)pct_tensor_itemsize(x), &zero);
        PCT_NOGIL_END
        pct_index_maps_free(&m);
    }
    if (r < 0) { pct_error_nomem(); goto fail; }
    PCT_DECREF(xc);
    return pct_spatial_finish(out, x->dtype);
fail:
    pct_index_maps_free(&m);
    PCT_XDECREF(xc);
    PCT_XDECREF(out);
    return NULL;
}

static pct_object *up_backward(const up_args *a, const up_op *op)
{
    pct_tensor *g = a->x, *gc = NULL, *gi = NULL;
    const int64_t *isz = a->input_size.v;
    int nd = a->input_size.n;
    up_axis ax[2];
    bool align;
    int64_t planes, want[4];
    char sa[PCT_SHAPE_BUF], sb[PCT_SHAPE_BUF];
    pct_index_maps m = {0};
    if (up_setup(a, op, nd, isz, ax, &align, &planes) < 0) return NULL;
    want[0] = isz[0];
    want[1] = isz[1];
    for (int d = 0; d < op->nsp; d++) want[2 + d] = ax[d].out;
    PCT_CHECK(g->ndim == nd && memcmp(g->sizes, want, sizeof(int64_t) * (size_t)nd) == 0, PCT_ERR_RUNTIME,
              "%s: expected grad_output of shape %s, but got %s", op->name, pct_shape_str(sa, sizeof sa, nd, want),
              pct_spatial_shape(sb, g));
    if (!pct_dtype_is_floating(g->dtype)) return pct_spatial_no_dtype(op->name, g->dtype);
    int cd = pct_spatial_compute_dtype(g->dtype);
    PCT_TRY(gi = pct_tensor_zeros(nd, isz, cd));
    if (gi->numel == 0) return pct_spatial_finish(gi, g->dtype);
    PCT_TRY(gc = pct_spatial_input(g));
    int r;
    if (op->mode == UP_LINEAR) {
        r = up_linear_run(op, ax, align, planes, cd, true, pct_tensor_data(gc), pct_tensor_data(gi));
    } else {
        PCT_TRY_INT(up_nearest_maps(&m, op, ax, UP_RECIPE_IDX, false));
        PCT_NOGIL_BEGIN
        r = pct_index_scatter_add(&m, planes, pct_tensor_data(gc), pct_tensor_data(gi), cd);
        PCT_NOGIL_END
        pct_index_maps_free(&m);
    }
    if (r < 0) { pct_error_nomem(); goto fail; }
    PCT_DECREF(gc);
    return pct_spatial_finish(gi, g->dtype);
fail:
    pct_index_maps_free(&m);
    PCT_XDECREF(gc);
    PCT_XDECREF(gi);
    return NULL;
}

/* One typed entry per op: `tensor` is its input or grad_output, `isz` its input_size (backward ops), `align` its
 * align_corners (linear modes), then its scales. */
#define UP_ENTRY(id, nsp, mode, backward, tensor, isz, align, ...)                                                  \
    pct_object *pct_cpu_##id(pct_call *c)                                                                        \
    {                                                                                                             \
        PCT_ARGS(id);                                                                                             \
        const up_args a = {arg.tensor, arg.output_size, isz, align, {__VA_ARGS__}};                              \
        const up_op op = {nsp, mode, backward, c->op->sig.name};                                        \
        return backward ? up_backward(&a, &op) : up_forward(&a, &op);                                            \
    }
#define UP_FWD (pct_int_list){0}
UP_ENTRY(upsample_nearest1d, 1, UP_NEAREST, false, input, UP_FWD, false, arg.scales)
UP_ENTRY(upsample_nearest2d, 2, UP_NEAREST, false, input, UP_FWD, false, arg.scales_h, arg.scales_w)
UP_ENTRY(upsample_nearest_exact1d, 1, UP_EXACT, false, input, UP_FWD, false, arg.scales)
UP_ENTRY(upsample_nearest_exact2d, 2, UP_EXACT, false, input, UP_FWD, false, arg.scales_h, arg.scales_w)
UP_ENTRY(upsample_linear1d, 1, UP_LINEAR, false, input, UP_FWD, arg.align_corners, arg.scales)
UP_ENTRY(upsample_bilinear2d, 2, UP_LINEAR, false, input, UP_FWD, arg.align_corners, arg.scales_h, arg.scales_w)
UP_ENTRY(upsample_nearest1d_backward, 1, UP_NEAREST, true, grad_output, arg.input_size, false, arg.scales)
UP_ENTRY(upsample_nearest2d_backward, 2, UP_NEAREST, true, grad_output, arg.input_size, false, arg.scales_h,
         arg.scales_w)
UP_ENTRY(upsample_nearest_exact1d_backward, 1, UP_EXACT, true, grad_output, arg.input_size, false, arg.scales)
UP_ENTRY(upsample_nearest_exact2d_backward, 2, UP_EXACT, true, grad_output, arg.input_size, false, arg.scales_h,
         arg.scales_w)
UP_ENTRY(upsample_linear1d_backward, 1, UP_LINEAR, true, grad_output, arg.input_size, arg.align_corners, arg.scales)
UP_ENTRY(upsample_bilinear2d_backward, 2, UP_LINEAR, true, grad_output, arg.input_size, arg.align_corners,
         arg.scales_h, arg.scales_w)
