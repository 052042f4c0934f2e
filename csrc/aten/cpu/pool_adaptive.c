/* pool_adaptive.c: adaptive average and max pooling (adaptive_avg_pool1d/2d,
 * adaptive_max_pool1d/2d): argument checks with torch's rules and texts, and forward kernels.
 * Output (oh, ow) covers the window [start, end) of torch's rounding per dim (pool.h); the
 * windows of a call are computed once. Backward kernels are in pool_backward.c. */
#include "pool.h"
#include <stdlib.h>

int pct_adaptive_setup(const pct_int_list *osize, int nsp, bool max, int ndim, const int64_t *sizes, pct_pool2d *g)
{
    char buf[PCT_SHAPE_BUF];
    const char *name1 = max ? "adaptive_max_pool1d" : "adaptive_avg_pool1d";
    const char *name2 = max ? "adaptive_max_pool2d" : "adaptive_avg_pool2d";
    int64_t sz[PCT_MAX_DIMS], oh, ow;
    int nd = ndim;
    memset(g, 0, sizeof *g);
    memcpy(sz, sizes, sizeof(int64_t) * (size_t)ndim);
    if (nsp == 1) {
        PCT_CHECK(ndim == 2 || ndim == 3, PCT_ERR_RUNTIME, "Expected 2 to 3 dimensions, but got %d-dimensional tensor "
                  "for argument #1 'self' (while checking arguments for %s)", ndim, name1);
        PCT_CHECK(osize->n == 1, PCT_ERR_RUNTIME, "%s() argument 'output_size' should contain one int (got %d)", name1,
                  osize->n);
        for (int d = 1; max && d < ndim; d++)
            PCT_CHECK(sizes[d] != 0, PCT_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch "
                      "dimensions, but input has sizes %s with dimension %d being empty", name1,
                      pct_shape_str(buf, sizeof buf, ndim, sizes), d);
        oh = 1;
        ow = osize->v[0];
        sz[ndim] = sz[ndim - 1];
        sz[ndim - 1] = 1;
        nd = ndim + 1;
    } else {
        PCT_CHECK(osize->n == 2, PCT_ERR_RUNTIME, max ? "adaptive_max_pool2d(): output_size must have 2 elements"
                                                         : "adaptive_avg_pool2d: output_size must be 2");
        oh = osize->v[0];
        ow = osize->v[1];
    }
    PCT_CHECK(max || (oh >= 0 && ow >= 0), PCT_ERR_RUNTIME, "adaptive_avg_pool2d: elements of output_size must be greater "
              "than or equal to 0 but received {%lld, %lld}", (long long)oh, (long long)ow);
    PCT_CHECK(nd == 3 || nd == 4, PCT_ERR_RUNTIME, max ? "%s(): Expected 3D or 4D tensor, but got: %s"
                                                          : "%s(): Expected 3D or 4D tensor, but got %s",
              name2, pct_shape_str(buf, sizeof buf, nd, sz));
    for (int d = max ? 1 : nd - 2; d < nd; d++) /* max: every non-batch dim; avg: the spatial dims */
        PCT_CHECK(sz[d] != 0, PCT_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, "
                  "but input has sizes %s with dimension %d being empty", name2, pct_shape_str(buf, sizeof buf, nd, sz), d);
    g->ih = sz[nd - 2];
    g->iw = sz[nd - 1];
    g->oh = oh;
    g->ow = ow;
    g->planes = 1;
    for (int i = 0; i < nd - 2; i++) g->planes *= sz[i];
    return 0;
fail:
    return -1;
}

/* Sum of n contiguous values: eight running sums (vectorizable) for long runs. */
#define CONTIG_SUM(E, T)                                                                         \
    static inline __attribute__((always_inline)) T contig_sum_##E(const T *p, int64_t n)         \
    {                                                                                            \
        T s = 0;                                                                                 \
        int64_t i = 0;                                                                           \
        if (n >= 16) {                                                                           \
            T acc[8] = {0};                                                                      \
            for (; i + 8 <= n; i += 8)                                                           \
                for (int l = 0; l < 8; l++) acc[l] += p[i + l];                                  \
            s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])); \
        }                                                                                        \
        for (; i < n; i++) s += p[i];                                                            \
        return s;                                                                                \
    }
CONTIG_SUM(FLOAT32, float)
CONTIG_SUM(FLOAT64, double)

/* adaptive avg: the window of output (oh, ow) is [start, end) per dim; sum / kh / kw (torch).
 * Rows [b, e) of the (plane, output row) list in one call, so the sums inline into the clones. */
#define AA_E FLOAT32
#define AA_T float
#include "pool_adaptive_avg_impl.h"
#define AA_E FLOAT64
#define AA_T double
#include "pool_adaptive_avg_impl.h"

/* torch's max scan (a larger value or any NaN takes over: the first maximum, the last NaN) of the
 * n contiguous values at p (flat indices base ..), continuing from (*best, *at). Long runs use
 * one vector of L lanes (GCC vector extensions; L * sizeof(T) = 32 bytes), each lane the same
 * scan over every L-th value; the lanes' results combine into the sequential one: the NaN of
 * highest index if any lane holds one, else the largest value at its lowest index (a lane that
 * took nothing holds -inf at index -1). */
#define MAX_SCAN(E, T, IT, L)                                                                    \
    static inline __attribute__((always_inline)) void max_scan_##E(const T *p, int64_t n, int64_t base, T *best, \
                                                                   int64_t *at)                  \
    {                                                                                            \
        typedef T vt __attribute__((vector_size(32)));                                           \
        typedef IT vi __attribute__((vector_size(32)));                                          \
        int64_t i = 0;                                                                           \
        if (n >= 2 * L && n < INT32_MAX) {                                                       \
            vt lb, v;                                                                            \
            vi li, idx, step;                                                                    \
            for (int l = 0; l < L; l++) { lb[l] = -INFINITY; li[l] = -1; idx[l] = l; step[l] = L; } \
            for (; i + L <= n; i += L, idx += step) {                                            \
                memcpy(&v, p + i, sizeof v);                                                     \
                vi take = (v > lb) | (v != v);                                                   \
                lb = (vt)(((vi)v & take) | ((vi)lb & ~take));                                    \
                li = (idx & take) | (li & ~take);                                                \
            }                                                                                    \
            T m = -INFINITY;                                                                     \
            int64_t k = -1;                                                                      \
            for (int l = 0; l < L; l++) {                                                        \
                T lv = lb[l];                                                                    \
                int64_t lk = li[l];                                                              \
                bool wins;                                                                       \
                if (lv != lv) wins = m != m ? lk > k : true; /* NaN: the last one */             \
                else if (m != m || lk < 0) wins = false;                                         \
                else wins = lv > m || (lv == m && (k < 0 || lk < k)); /* max: the first */       \
                if (wins) { m = lv; k = lk; }                                                    \
            }                                                                                    \
            if (k >= 0 && (m > *best || m != m)) { *best = m; *at = base + k; }                  \
        }                                                                                        \
        for (; i < n; i++) {                                                                     \
            T x = p[i];                                                                          \
            if (x > *best || x != x) { *best = x; *at = base + i; }                              \
        }                                                                                        \
    }
MAX_SCAN(FLOAT32, float, int32_t, 8)
MAX_SCAN(FLOAT64, double, int64_t, 4)

/* adaptive max: torch's scan of each window, row by row (rows of a window are contiguous) */
#define ADAPTIVE_MAX(E, T)                                                                       \
    PCT_HOT_AVX2 static void adaptive_max_rows_##E(const pct_pool2d *g, const pct_adaptive_windows *w,    \
                                                      const T *x, T *out, int64_t *ind, int64_t b, int64_t e) \
    {                                                                                            \
        int64_t iw = g->iw, iplane = g->ih * g->iw, oh = b % g->oh;                              \
        const T *xp = x + (b / g->oh) * iplane;                                                  \
        for (int64_t u = b; u < e; u++, oh++) {                                                  \
            if (oh == g->oh) { oh = 0; xp += iplane; }                                           \
            int64_t hs = w->hs[oh], he = w->he[oh];                                              \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                             \
                int64_t ws = w->ws[ow], we = w->we[ow];                                          \
                T best = -INFINITY;                                                              \
                int64_t at = hs * iw + ws;                                                       \
                if (ws == 0 && we == iw) max_scan_##E(xp + hs * iw, (he - hs) * iw, hs * iw, &best, &at); \
                else for (int64_t h = hs; h < he; h++) max_scan_##E(xp + h * iw + ws, we - ws, h * iw + ws, &best, &at); \
                out[u * g->ow + ow] = best;                                                      \
                ind[u * g->ow + ow] = at;                                                        \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    static int adaptive_max_##E(const pct_pool2d *g, const T *x, T *out, int64_t *ind)           \
    {                                                                                            \
        pct_adaptive_windows w;                                                                  \
        if (pct_adaptive_windows_init(&w, g) < 0) return -1;                                     \
        int64_t rows = g->planes * g->oh;                                                        \
        int nt = pct_spatial_threads(rows * g->ow + g->planes * g->ih * g->iw, rows);            \
        _Pragma("omp parallel for num_threads(nt) if (nt > 1)")                                  \
        for (int t = 0; t < nt; t++) adaptive_max_rows_##E(g, &w, x, out, ind, rows * t / nt, rows * (t + 1) / nt); \
        pct_adaptive_windows_free(&w);                                                           \
        return 0;                                                                                \
    }
ADAPTIVE_MAX(FLOAT32, float)
ADAPTIVE_MAX(FLOAT64, double)

/* Note [Complex adaptive average]: torch pools a complex input only to one element per plane (its
 * adaptive_avg_pool2d is mean() over the spatial dims there; its kernel refuses complex otherwise). The forward is
 * that mean (summed in double), the backward each plane's gradient divided by the plane's size. On the CPU only: a
 * complex tensor on another device gets the kernel's NotImplementedError. grad is NULL for the forward. */
pct_object *pct_adaptive_avg_complex(pct_tensor *x, pct_tensor *grad, int nsp, const pct_pool2d *g)
{
    if (g->oh != 1 || g->ow != 1 || x->device_type != PCT_CPU)
        return pct_spatial_no_dtype(grad ? "adaptive_avg_pool2d_backward_cpu" : "adaptive_avg_pool2d", x->dtype);
    pct_tensor *src = pct_contiguous(grad ? grad : x);
    if (!src) return NULL;
    pct_tensor *out = grad ? pct_tensor_empty(x->ndim, x->sizes, x->dtype, PCT_CPU, -1)
                           : pct_pool_output(x, nsp, g, x->dtype);
    if (!out) { PCT_DECREF(src); return NULL; }
    const int64_t n = g->ih * g->iw, isz = pct_dtype_itemsize[x->dtype];
    const char *sd = pct_tensor_data(src);
    char *od = pct_tensor_data(out);
    for (int64_t p = 0; p < g->planes; p++) {
        double re = 0, im = 0, r, i;
        if (grad) {
            pct_load_as_complex(sd + p * isz, x->dtype, &re, &im);
            for (int64_t k = 0; k < n; k++)
                pct_store_complex(od + (p * n + k) * isz, x->dtype, re / (double)n, im / (double)n);
        } else {
            for (int64_t k = 0; k < n; k++) {
                pct_load_as_complex(sd + (p * n + k) * isz, x->dtype, &r, &i);
                re += r;
                im += i;
            }
            pct_store_complex(od + p * isz, x->dtype, re / (double)n, im / (double)n);
        }
    }
    PCT_DECREF(src);
    return (pct_object *)out;
}

static pct_object *adaptive_pool(pct_tensor *x, const pct_int_list *output_size, int nsp, bool max)
{
    pct_tensor *xc = NULL, *out = NULL, *ind = NULL;
    pct_pool2d g;
    if (pct_adaptive_setup(output_size, nsp, max, x->ndim, x->sizes, &g) < 0) return NULL;
    if (!max && pct_dtype_is_complex(x->dtype) && g.planes && g.oh && g.ow)
        return pct_adaptive_avg_complex(x, NULL, nsp, &g);
    if (!pct_dtype_is_floating(x->dtype)) {
        /* torch: avg pooling to 1 x 1 is mean(), which refuses integers its own way; an empty
           output never reaches the (floating-only) kernel */
        if (!max && g.oh == 1 && g.ow == 1 && !pct_dtype_is_complex(x->dtype)) {
            pct_error(PCT_ERR_RUNTIME, "mean(): could not infer output dtype. Input dtype must be either a floating "
                         "point or complex dtype. Got: %s", pct_dtype_cpp_name[x->dtype]);
            return NULL;
        }
        if (!max && (g.planes == 0 || g.oh == 0 || g.ow == 0)) return (pct_object *)pct_pool_output(x, nsp, &g, x->dtype);
        return pct_spatial_no_dtype(max ? "adaptive_max_pool2d" : "adaptive_avg_pool2d", x->dtype);
    }
    int cd = pct_spatial_compute_dtype(x->dtype);
    PCT_TRY(out = pct_pool_output(x, nsp, &g, cd));
    if (max) PCT_TRY(ind = pct_pool_output(x, nsp, &g, PCT_INT64));
    if (out->numel && x->device_type != PCT_CPU) { /* Note [Device pooling] */
        PCT_TRY(xc = pct_spatial_input(x));
        if (pct_pool_device_forward(&g, max ? PCT_POOL_CALL_ADAPTIVE_MAX : PCT_POOL_CALL_ADAPTIVE_AVG, xc, out, ind) < 0)
            goto fail;
        PCT_CLEAR(xc);
    } else if (out->numel) {
        PCT_TRY(xc = pct_spatial_input(x));
        const void *xd = pct_tensor_data(xc);
        void *od = pct_tensor_data(out);
        int r;
        PCT_NOGIL_BEGIN
        if (max && cd == PCT_FLOAT32) r = adaptive_max_FLOAT32(&g, xd, od, (int64_t *)pct_tensor_data(ind));
        else if (max) r = adaptive_max_FLOAT64(&g, xd, od, (int64_t *)pct_tensor_data(ind));
        else if (cd == PCT_FLOAT32) r = adaptive_avg_FLOAT32(&g, xd, od);
        else r = adaptive_avg_FLOAT64(&g, xd, od);
        PCT_NOGIL_END
        PCT_CLEAR(xc);
        if (r < 0) { pct_error_nomem(); goto fail; }
    }
    pct_object *r = pct_spatial_finish(out, x->dtype);
    out = NULL;
    if (!max || !r) return r;
    pct_object *t = pct_tuple_pack2(r, ind);
    PCT_DECREF(r);
    PCT_DECREF(ind);
    return t;
fail:
    PCT_XDECREF(xc);
    PCT_XDECREF(out);
    PCT_XDECREF(ind);
    return NULL;
}

#define ADAPTIVE_POOL_ENTRY(op, nsp, max)                                                                              \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return adaptive_pool(arg.input, &arg.output_size, nsp, max);                                                  \
    }
ADAPTIVE_POOL_ENTRY(adaptive_avg_pool1d, 1, false)
ADAPTIVE_POOL_ENTRY(adaptive_avg_pool2d, 2, false)
ADAPTIVE_POOL_ENTRY(adaptive_max_pool1d, 1, true)
ADAPTIVE_POOL_ENTRY(adaptive_max_pool2d, 2, true)
