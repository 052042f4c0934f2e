/* pool.h: the window geometry of max / avg / adaptive pooling, shared by the forward kernels
 * (pool.c) and the backward kernels (pool_backward.c). See Note [Planes and grids]: a 1-d pool
 * is the 2-d pool with kh = sh = dh = 1, ph = 0 on a grid of height 1. */
#ifndef PCT_POOL_H
#define PCT_POOL_H
#include "spatial.h"
#include "../pool_call.h"
#include <stdlib.h>

typedef struct pct_pool2d {
    int64_t planes, ih, iw, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool ceil;
    bool count_pad;      /* avg: padding counts in the divisor */
    bool has_divisor;    /* avg: divisor_override given */
    int64_t divisor;
} pct_pool2d;

/* The valid rows [*lo, *hi) (step dh) of output row o of a max pool window: torch starts at
 * o * s - p and skips the positions in the padding (the range may be empty). */
static inline void pct_pool_span(int64_t o, int64_t s, int64_t p, int64_t k, int64_t d, int64_t n, int64_t *lo,
                                 int64_t *hi)
{
    int64_t a = o * s - p, b = a + (k - 1) * d + 1;
    if (b > n) b = n;
    if (a < 0) a += ((-a + d - 1) / d) * d;
    *lo = a;
    *hi = b;
}

/* Average pooling along one dim: the clipped window [*lo, *hi) and the size the window has
 * counting the padding (torch's pool_size factor). */
static inline int64_t pct_avg_span(int64_t o, int64_t s, int64_t p, int64_t k, int64_t n, int64_t *lo, int64_t *hi)
{
    int64_t a = o * s - p, b = a + k;
    if (b > n + p) b = n + p;
    int64_t padded = b - a;
    *lo = a < 0 ? 0 : a;
    *hi = b > n ? n : b;
    return padded;
}

/* torch's divide factor of avg output (oh, ow) from the per-dim spans. */
static inline int64_t pct_avg_divisor(const pct_pool2d *g, int64_t ph_sz, int64_t pw_sz, int64_t hn, int64_t wn)
{
    if (g->has_divisor) return g->divisor;
    return g->count_pad ? ph_sz * pw_sz : hn * wn;
}

/* Adaptive windows of every output row / column, computed once per call (the divisions of
 * pct_adaptive_start / _end would otherwise dominate small windows). */
typedef struct pct_adaptive_windows {
    int64_t *hs, *he, *ws, *we;
} pct_adaptive_windows;

/* -1 (no exception: callers may not hold the GIL) when out of memory. */
static inline int pct_adaptive_windows_init(pct_adaptive_windows *w, const pct_pool2d *g)
{
    int64_t *b = malloc(sizeof(int64_t) * (size_t)(2 * (g->oh + g->ow) + 1));
    w->hs = b;
    if (!b) return -1;
    w->he = b + g->oh;
    w->ws = w->he + g->oh;
    w->we = w->ws + g->ow;
    for (int64_t o = 0; o < g->oh; o++) {
        w->hs[o] = pct_adaptive_start(o, g->oh, g->ih);
        w->he[o] = pct_adaptive_end(o, g->oh, g->ih);
    }
    for (int64_t o = 0; o < g->ow; o++) {
        w->ws[o] = pct_adaptive_start(o, g->ow, g->iw);
        w->we[o] = pct_adaptive_end(o, g->ow, g->iw);
    }
    return 0;
}
static inline void pct_adaptive_windows_free(pct_adaptive_windows *w) { free(w->hs); }

/* A new output: x's leading dims, then (oh, ow) for 2-d ops or (ow) for 1-d ones. */
static inline pct_tensor *pct_pool_output(const pct_tensor *x, int nsp, const pct_pool2d *g, int dtype)
{
    int64_t sp[2] = {g->oh, g->ow};
    return pct_spatial_new(x, nsp, nsp == 2 ? sp : sp + 1, dtype);
}

/* Note [Complex adaptive average] (pool_adaptive.c): the forward (grad NULL) or backward of a complex input */
pct_object *pct_adaptive_avg_complex(pct_tensor *x, pct_tensor *grad, int nsp, const pct_pool2d *g);

/* Which pooling op is being validated (error texts and rules differ). */
enum {
    PCT_POOL_MAX2D,      /* max_pool2d, max_pool2d_with_indices (+ backward) */
    PCT_POOL_MAX1D,      /* max_pool1d (torch's own checks) */
    PCT_POOL_MAX1D_IDX,  /* max_pool1d_with_indices: 1-d lists, then the 2-d checks */
    PCT_POOL_AVG2D,      /* avg_pool2d (+ backward) */
    PCT_POOL_AVG1D,      /* avg_pool1d */
};

/* The window arguments of a pooling op, as its entry reads them from its typed arguments (Note [Typed arguments]):
 * PCT_POOL_MAX_ARGS / PCT_POOL_AVG_ARGS build one from `arg`. dilation is empty and has_dilation false for avg pools;
 * divisor is none but for avg_pool2d. */
typedef struct pct_pool_args {
    pct_int_list kernel, stride, padding, dilation;
    bool has_dilation, ceil, count_include_pad;
    pct_int_opt divisor;
} pct_pool_args;
#define PCT_POOL_MAX_ARGS(a) \
    ((pct_pool_args){(a).kernel_size, (a).stride, (a).padding, (a).dilation, true, (a).ceil_mode, false, {true, 0}})
#define PCT_POOL_AVG_ARGS(a, divisor_) \
    ((pct_pool_args){(a).kernel_size, (a).stride, (a).padding, {0}, false, (a).ceil_mode, (a).count_include_pad, divisor_})

/* Checks the window arguments of op `kind` against an input of `ndim` dims `sizes` with torch's rules and texts,
 * and fills g. -1 with exception. */
int pct_pool_setup(const pct_pool_args *a, int kind, int ndim, const int64_t *sizes, pct_pool2d *g);

/* Adaptive pooling: the output sizes osize checked with torch's rules for op `name`
 * ("adaptive_avg_pool2d" ...); fills g (kernel fields unused). -1 with exception. */
int pct_adaptive_setup(const pct_int_list *osize, int nsp, bool max, int ndim, const int64_t *sizes, pct_pool2d *g);

/* Note [Device pooling] (pool_device.c): whether the device's loops run a compute dtype (else the backend's fallback
 * takes the call: pct_pool_device_fallback), and the loops themselves over contiguous device tensors of the compute
 * dtype (kind: PCT_POOL_CALL_*; ind: the int64 indices of a max pool, or NULL). 0, or -1 with an error. */
bool pct_pool_device_runs(int compute_dtype);
pct_object *pct_pool_device_fallback(pct_call *c, int device_type);
int pct_pool_device_forward(const pct_pool2d *g, int kind, pct_tensor *xc, pct_tensor *out, pct_tensor *ind);
int pct_pool_device_backward(const pct_pool2d *g, int kind, pct_tensor *gc, pct_tensor *ind, pct_tensor *gi);

/* Output size along one dim with torch's pooling_output_shape checks (pool.c); -1 with an error. */
int pct_pool_out_dim(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil, int64_t *out);

#endif
