/* pool_backward.c: backward kernels of pooling (fused: one pass over the gradient).
 *   max_pool2d_with_indices_backward, adaptive_max_pool2d_backward: each output's gradient
 *       added at its saved index (also the 1-d ops, viewed as 2-d by their formulas);
 *   avg_pool2d_backward: each output's gradient / its divisor spread over its window;
 *   _adaptive_avg_pool2d_backward: / kh / kw over its window (torch's order of division).
 * Planes are independent and run on OpenMP threads; inside a plane windows overlap, so one
 * thread owns a plane. Float16 / bfloat16 accumulate in float32. */
#include "pool.h"

#define MAX_BWD(E, T)                                                                            \
    static void max_bwd_##E(int64_t planes, int64_t iplane, int64_t oplane, const T *go, const int64_t *ind, T *gi) \
    {                                                                                            \
        _Pragma("omp parallel for if (planes > 1 && planes * oplane > PCT_SPATIAL_GRAIN)")      \
        for (int64_t p = 0; p < planes; p++) {                                                   \
            const T *g = go + p * oplane;                                                        \
            const int64_t *k = ind + p * oplane;                                                 \
            T *d = gi + p * iplane;                                                              \
            /* an index outside the plane (a window with no input element, whose output is a     \
               constant) receives nothing */                                                     \
            for (int64_t j = 0; j < oplane; j++)                                                 \
                if ((uint64_t)k[j] < (uint64_t)iplane) d[k[j]] += g[j];                          \
        }                                                                                        \
    }
MAX_BWD(FLOAT32, float)
MAX_BWD(FLOAT64, double)

#define AVG_BWD(E, T)                                                                            \
    static void avg_bwd_##E(const pct_pool2d *g, const T *go, T *gi)                             \
    {                                                                                            \
        int64_t iplane = g->ih * g->iw, oplane = g->oh * g->ow, iw = g->iw;                      \
        _Pragma("omp parallel for if (g->planes > 1 && g->planes * oplane * g->kh * g->kw > PCT_SPATIAL_GRAIN)") \
        for (int64_t p = 0; p < g->planes; p++) {                                                \
            T *d = gi + p * iplane;                                                              \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                             \
                int64_t hs, he, hpad = pct_avg_span(oh, g->sh, g->ph, g->kh, g->ih, &hs, &he);   \
                const T *gr = go + p * oplane + oh * g->ow;                                      \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                         \
                    int64_t ws, we, wpad = pct_avg_span(ow, g->sw, g->pw, g->kw, iw, &ws, &we);  \
                    T delta = gr[ow] / (T)pct_avg_divisor(g, hpad, wpad, he - hs, we - ws);      \
                    for (int64_t h = hs; h < he; h++)                                            \
                        for (int64_t w = ws; w < we; w++) d[h * iw + w] += delta;                \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }
AVG_BWD(FLOAT32, float)
AVG_BWD(FLOAT64, double)

/* Adaptive windows tile the input (no overlap, no gap) when the sizes divide. */
static bool adaptive_tiles(const pct_pool2d *g) { return g->ih % g->oh == 0 && g->iw % g->ow == 0; }

#define ADAPTIVE_AVG_BWD(E, T)                                                                   \
    static int adaptive_avg_bwd_##E(const pct_pool2d *g, const T *go, T *gi)                     \
    {                                                                                            \
        pct_adaptive_windows w;                                                                  \
        if (pct_adaptive_windows_init(&w, g) < 0) return -1;                                     \
        int64_t iplane = g->ih * g->iw, oplane = g->oh * g->ow, iw = g->iw;                      \
        bool set = adaptive_tiles(g); /* every input in exactly one window: write, do not add */ \
        _Pragma("omp parallel for if (g->planes > 1 && g->planes * (oplane + iplane) > PCT_SPATIAL_GRAIN)") \
        for (int64_t p = 0; p < g->planes; p++) {                                                \
            T *d = gi + p * iplane;                                                              \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                             \
                int64_t hs = w.hs[oh], he = w.he[oh];                                            \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                         \
                    int64_t ws = w.ws[ow], we = w.we[ow];                                        \
                    T delta = go[p * oplane + oh * g->ow + ow] / (T)(he - hs) / (T)(we - ws);    \
                    for (int64_t h = hs; h < he; h++)                                            \
                        for (int64_t k = h * iw + ws; k < h * iw + we; k++) d[k] = set ? delta : d[k] + delta; \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        pct_adaptive_windows_free(&w);                                                           \
        return 0;                                                                                \
    }
ADAPTIVE_AVG_BWD(FLOAT32, float)
ADAPTIVE_AVG_BWD(FLOAT64, double)

/* Checks grad_output (and indices) against the output shape g gives `input`, and makes the
 * gradient (zeroed when `zeroed`) and a contiguous grad_output in the compute dtype. -1 with
 * exception. */
static int bwd_prepare(const char *name, pct_tensor *grad, pct_tensor *input, pct_tensor *indices, const pct_pool2d *g,
                       bool zeroed, pct_tensor **gc, pct_tensor **gi)
{
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    int64_t want[PCT_MAX_DIMS];
    int nd = input->ndim;
    *gc = *gi = NULL;
    memcpy(want, input->sizes, sizeof(int64_t) * (size_t)nd);
    want[nd - 2] = g->oh;
    want[nd - 1] = g->ow;
    PCT_CHECK(grad->ndim == nd && memcmp(grad->sizes, want, sizeof(int64_t) * (size_t)nd) == 0, PCT_ERR_RUNTIME,
              "%s: expected grad_output of shape %s, but got %s", name, pct_shape_str(a, sizeof a, nd, want),
              pct_spatial_shape(b, grad));
    if (indices) {
        PCT_CHECK(indices->dtype == PCT_INT64, PCT_ERR_RUNTIME, "%s: expected indices of dtype Long, but got %s", name,
                  pct_dtype_cpp_name[indices->dtype]);
        PCT_CHECK(indices->ndim == nd && memcmp(indices->sizes, want, sizeof(int64_t) * (size_t)nd) == 0,
                  PCT_ERR_RUNTIME, "%s: expected indices of shape %s, but got %s", name,
                  pct_shape_str(a, sizeof a, nd, want), pct_spatial_shape(b, indices));
    }
    if (!pct_dtype_is_floating(grad->dtype)) { pct_spatial_no_dtype(name, grad->dtype); return -1; }
    PCT_CHECK(grad->dtype == input->dtype, PCT_ERR_RUNTIME, "%s: expected grad_output and input of one dtype, but got "
              "%s and %s", name, pct_dtype_cpp_name[grad->dtype], pct_dtype_cpp_name[input->dtype]);
    int cd = pct_spatial_compute_dtype(input->dtype);
    PCT_TRY(*gi = zeroed ? pct_tensor_zeros_on(nd, input->sizes, cd, input->device_type, input->device_index)
                         : pct_tensor_empty(nd, input->sizes, cd, input->device_type, input->device_index));
    PCT_TRY(*gc = pct_spatial_input(grad));
    return 0;
fail:
    PCT_CLEAR(*gi);
    PCT_CLEAR(*gc);
    return -1;
}

enum { BWD_MAX, BWD_AVG, BWD_ADAPTIVE_AVG };

static pct_object *pool_backward(const char *name, int kind, pct_tensor *grad, pct_tensor *input, pct_tensor *indices,
                               const pct_pool2d *g, bool adaptive_max)
{
    pct_tensor *gc, *gi;
    /* tiling adaptive windows write every element of the gradient: no zeroing pass (an empty
       output leaves nothing to write) */
    const bool device = input->device_type != PCT_CPU; /* Note [Device pooling]: the gather writes every element */
    bool zeroed = !device && (kind != BWD_ADAPTIVE_AVG || g->oh == 0 || g->ow == 0 || !adaptive_tiles(g));
    if (bwd_prepare(name, grad, input, indices, g, zeroed, &gc, &gi) < 0) return NULL;
    if (device && gi->numel) {
        static const int kinds[2][3] = {{PCT_POOL_CALL_MAX, PCT_POOL_CALL_AVG, PCT_POOL_CALL_ADAPTIVE_AVG},
                                        {PCT_POOL_CALL_ADAPTIVE_MAX, PCT_POOL_CALL_AVG, PCT_POOL_CALL_ADAPTIVE_AVG}};
        pct_tensor *ic = NULL;
        if (indices && !(ic = pct_contiguous(indices))) goto fail;
        const int rc = pct_pool_device_backward(g, kinds[adaptive_max][kind], gc, ic, gi);
        PCT_XDECREF(ic);
        if (rc < 0) goto fail;
    } else if (!device && gc->numel) {
        bool dbl = gi->dtype == PCT_FLOAT64;
        const void *go = pct_tensor_data(gc);
        void *d = pct_tensor_data(gi);
        pct_tensor *ic = NULL;
        if (indices && !(ic = pct_contiguous(indices))) goto fail;
        const int64_t *ind = ic ? (const int64_t *)pct_tensor_data(ic) : NULL;
        int r = 0;
        PCT_NOGIL_BEGIN
        switch (kind) {
        case BWD_MAX:
            if (dbl) max_bwd_FLOAT64(g->planes, g->ih * g->iw, g->oh * g->ow, go, ind, d);
            else max_bwd_FLOAT32(g->planes, g->ih * g->iw, g->oh * g->ow, go, ind, d);
            break;
        case BWD_AVG:
            if (dbl) avg_bwd_FLOAT64(g, go, d);
            else avg_bwd_FLOAT32(g, go, d);
            break;
        default:
            if (dbl) r = adaptive_avg_bwd_FLOAT64(g, go, d);
            else r = adaptive_avg_bwd_FLOAT32(g, go, d);
        }
        PCT_NOGIL_END
        PCT_XDECREF(ic);
        if (r < 0) { pct_error_nomem(); goto fail; }
    }
    PCT_DECREF(gc);
    return pct_spatial_finish(gi, input->dtype);
fail:
    PCT_DECREF(gc);
    PCT_DECREF(gi);
    return NULL;
}

pct_object *pct_cpu_max_pool2d_with_indices_backward(pct_call *c)
{
    PCT_ARGS(max_pool2d_with_indices_backward);
    pct_pool2d g;
    pct_tensor *input = arg.input;
    if (pct_pool_setup(&PCT_POOL_MAX_ARGS(arg), PCT_POOL_MAX2D, input->ndim, input->sizes, &g) < 0) return NULL;
    return pool_backward("max_pool2d_with_indices_backward", BWD_MAX, arg.grad_output, input, arg.indices, &g, false);
}

pct_object *pct_cpu_avg_pool2d_backward(pct_call *c)
{
    PCT_ARGS(avg_pool2d_backward);
    pct_pool2d g;
    pct_tensor *input = arg.input;
    if (pct_pool_setup(&PCT_POOL_AVG_ARGS(arg, arg.divisor_override), PCT_POOL_AVG2D, input->ndim, input->sizes, &g) < 0)
        return NULL;
    return pool_backward("avg_pool2d_backward", BWD_AVG, arg.grad_output, input, NULL, &g, false);
}

/* Adaptive backward: the output size is grad_output's. */
static int adaptive_bwd_setup(const char *name, pct_tensor *grad, pct_tensor *input, pct_pool2d *g)
{
    char a[PCT_SHAPE_BUF];
    memset(g, 0, sizeof *g);
    PCT_CHECK(input->ndim == 3 || input->ndim == 4, PCT_ERR_RUNTIME, "%s: expected a 3D or 4D input, but got %s", name,
              pct_spatial_shape(a, input));
    PCT_CHECK(grad->ndim == input->ndim, PCT_ERR_RUNTIME, "%s: expected grad_output of %d dimensions, but got %s", name,
              input->ndim, pct_spatial_shape(a, grad));
    for (int d = input->ndim - 2; d < input->ndim; d++)
        PCT_CHECK(input->sizes[d] > 0, PCT_ERR_RUNTIME, "%s: expected an input with non-empty spatial dims, but got %s",
                  name, pct_spatial_shape(a, input));
    for (int d = 1; d < grad->ndim; d++) /* torch refuses an empty output's gradient */
        PCT_CHECK(grad->sizes[d] != 0, PCT_ERR_RUNTIME, "%s(): Expected grad_output to have non-zero size for non-batch "
                  "dimensions, but grad_output has sizes %s with dimension %d being empty", name[0] == '_' ? name + 1 : name,
                  pct_spatial_shape(a, grad), d);
    g->ih = input->sizes[input->ndim - 2];
    g->iw = input->sizes[input->ndim - 1];
    g->oh = grad->sizes[grad->ndim - 2];
    g->ow = grad->sizes[grad->ndim - 1];
    g->planes = pct_spatial_planes(input, input->ndim - 2);
    return 0;
fail:
    return -1;
}

pct_object *pct_cpu_adaptive_avg_pool2d_backward(pct_call *c)
{
    PCT_ARGS(adaptive_avg_pool2d_backward);
    pct_pool2d g;
    if (adaptive_bwd_setup("_adaptive_avg_pool2d_backward", arg.grad_output, arg.input, &g) < 0) return NULL;
    if (pct_dtype_is_complex(arg.grad_output->dtype) && arg.grad_output->dtype == arg.input->dtype && g.planes &&
        arg.input->numel) /* Note [Complex adaptive average] */
        return pct_adaptive_avg_complex(arg.input, arg.grad_output, 2, &g);
    return pool_backward("_adaptive_avg_pool2d_backward", BWD_ADAPTIVE_AVG, arg.grad_output, arg.input, NULL, &g, false);
}

pct_object *pct_cpu_adaptive_max_pool2d_backward(pct_call *c)
{
    PCT_ARGS(adaptive_max_pool2d_backward);
    pct_pool2d g;
    if (adaptive_bwd_setup("adaptive_max_pool2d_backward", arg.grad_output, arg.input, &g) < 0) return NULL;
    return pool_backward("adaptive_max_pool2d_backward", BWD_MAX, arg.grad_output, arg.input, arg.indices, &g, true);
}
