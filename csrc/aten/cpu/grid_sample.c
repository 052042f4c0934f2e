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

#define GS_E FLOAT32
#define GS_T float
#include "grid_sample_impl.h"
#define GS_E FLOAT64
#define GS_T double
#include "grid_sample_impl.h"

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
