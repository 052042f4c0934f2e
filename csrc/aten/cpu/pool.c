/* pool.c: argument checks (torch's rules and texts) and forward kernels of max and avg
 * pooling: max_pool1d/2d (+ _with_indices), avg_pool1d/2d. Adaptive pooling is in
 * pool_adaptive.c, backward kernels in pool_backward.c.
 *
 * Note [Pooling rows]: work is split into output rows (one plane, one output row). Columns
 * whose windows lie inside the input are computed pass by pass (one kernel tap at a time over
 * the whole stretch of columns: contiguous or strided loads the compiler vectorizes); the few
 * border columns use torch's window scan output by output. Both visit a window in torch's order
 * (row-major) with torch's update rule, so values, tie-breaking (the first maximum) and NaN
 * handling (the last NaN wins) are torch's. */
#include "pool.h"
#include <stdlib.h>

/* ------------------------------------------------------------------------------------ */
/* argument checks                                                                       */


/* Output size along one dim with torch's pooling_output_shape checks; -1 with exception. */
int pct_pool_out_dim(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil, int64_t *out)
{
    int64_t eff;
    PCT_CHECK(s != 0, PCT_ERR_RUNTIME, "stride should not be zero");
    PCT_CHECK(p >= 0, PCT_ERR_RUNTIME, "pad must be non-negative, but got pad: %lld", (long long)p);
    if (__builtin_mul_overflow(k - 1, d, &eff) || __builtin_add_overflow(eff, 1, &eff))
        PCT_FAIL(PCT_ERR_RUNTIME, "pooling window of kernel_size=%lld and dilation=%lld is too large", (long long)k,
                 (long long)d);
    PCT_CHECK(p <= eff / 2, PCT_ERR_RUNTIME,
              "pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld and dilation=%lld",
              (long long)p, (long long)k, (long long)d);
    *out = pct_pool_out_size(in, k, p, s, d, ceil);
    PCT_CHECK(*out != INT64_MIN, PCT_ERR_RUNTIME, "pooling output size overflows for input size %lld", (long long)in);
    return 0;
fail:
    return -1;
}

/* A 1-or-2-element list of a 2-d op as (h, w); false when the length is wrong. */
static bool pool_pair(const pct_int_list *v, int64_t *h, int64_t *w)
{
    if (v->n != 1 && v->n != 2) return false;
    *h = v->v[0];
    *w = v->v[v->n - 1];
    return true;
}

/* max_pool1d's own checks (torch's check_max_pool1d): the geometry of a grid of height 1. */
static int max_pool1d_checks(const pct_pool_args *a, int ndim, const int64_t *sizes, pct_pool2d *g)
{
    char buf[PCT_SHAPE_BUF];
    const pct_int_list *kv = &a->kernel, *sv = &a->stride, *pv = &a->padding, *dv = &a->dilation;
    int sn = sv->none ? 0 : sv->n;
    PCT_CHECK((ndim == 2 && sizes[0] && sizes[1]) || (ndim == 3 && sizes[1] && sizes[2]), PCT_ERR_RUNTIME,
              "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:%s",
              pct_shape_str(buf, sizeof buf, ndim, sizes));
    PCT_CHECK(kv->n == 1, PCT_ERR_RUNTIME,
              "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size %d", kv->n);
    PCT_CHECK(sn <= 1, PCT_ERR_RUNTIME,
              "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size %d", sn);
    PCT_CHECK(pv->n == 1, PCT_ERR_RUNTIME,
              "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size %d", pv->n);
    PCT_CHECK(dv->n == 1, PCT_ERR_RUNTIME,
              "max_pool1d() dilation must be an int, list of ints, or tuple of ints of size 1 but got size %d", dv->n);
    g->kw = kv->v[0];
    g->sw = sn ? sv->v[0] : g->kw;
    g->pw = pv->v[0];
    g->dw = dv->v[0];
    PCT_CHECK(g->kw > 0, PCT_ERR_RUNTIME, "max_pool1d() kernel_size must be greater than zero, but got %lld", (long long)g->kw);
    PCT_CHECK(g->sw > 0, PCT_ERR_RUNTIME, "max_pool1d() stride must be greater than zero, but got %lld", (long long)g->sw);
    PCT_CHECK(g->pw >= 0, PCT_ERR_RUNTIME, "max_pool1d() padding must be non-negative, but got %lld", (long long)g->pw);
    PCT_CHECK(g->pw <= g->kw / 2, PCT_ERR_RUNTIME,
              "max_pool1d() padding should be at most half of kernel size, but got padding=%lld and kernel_size=%lld",
              (long long)g->pw, (long long)g->kw);
    PCT_CHECK(g->dw > 0, PCT_ERR_RUNTIME, "max_pool1d() dilation must be greater than zero, but got %lld", (long long)g->dw);
    if (pct_pool_out_dim(sizes[ndim - 1], g->kw, g->pw, g->sw, g->dw, g->ceil, &g->ow) < 0) return -1;
    PCT_CHECK(g->ow > 0, PCT_ERR_RUNTIME, "max_pool1d() Invalid computed output size: %lld", (long long)g->ow);
    g->kh = g->sh = g->dh = 1;
    g->ph = 0;
    g->ih = g->oh = 1;
    g->iw = sizes[ndim - 1];
    g->planes = 1;
    for (int i = 0; i < ndim - 1; i++) g->planes *= sizes[i];
    return 0;
fail:
    return -1;
}

int pct_pool_setup(const pct_pool_args *a, int kind, int ndim, const int64_t *sizes, pct_pool2d *g)
{
    char buf[PCT_SHAPE_BUF];
    bool avg = kind == PCT_POOL_AVG2D || kind == PCT_POOL_AVG1D;
    bool one = kind == PCT_POOL_MAX1D || kind == PCT_POOL_MAX1D_IDX || kind == PCT_POOL_AVG1D;
    const char *name = avg ? (one ? "avg_pool1d" : "avg_pool2d") : (one ? "max_pool1d" : "max_pool2d");
    const pct_int_list *kv = &a->kernel, *sv = &a->stride, *pv = &a->padding, *dv = a->has_dilation ? &a->dilation : NULL;
    int sn = sv->none ? 0 : sv->n;
    int64_t sz[PCT_MAX_DIMS];
    int nd = ndim;
    memset(g, 0, sizeof *g);
    g->ceil = a->ceil;
    g->count_pad = avg && a->count_include_pad;
    if (kind == PCT_POOL_AVG2D && !a->divisor.none) {
        g->has_divisor = true;
        g->divisor = a->divisor.v;
    }
    if (kind == PCT_POOL_MAX1D) return max_pool1d_checks(a, ndim, sizes, g);
    memcpy(sz, sizes, sizeof(int64_t) * (size_t)ndim);
    if (one) { /* rank first, then one int per list, then the 2-d checks on (..., 1, W) */
        PCT_CHECK(ndim == 2 || ndim == 3, PCT_ERR_RUNTIME, "Expected 2 to 3 dimensions, but got %d-dimensional tensor "
                  "for argument #1 'self' (while checking arguments for %s)", ndim, name);
        const pct_int_list *lists[4] = {kv, sn ? sv : kv, pv, dv};
        const char *what[4] = {"kernel_size", "stride", "padding", "dilation"};
        for (int i = 0; i < 4; i++)
            PCT_CHECK(!lists[i] || lists[i]->n == 1, PCT_ERR_RUNTIME, "%s() argument '%s' should contain one int (got %d)",
                      name, what[i], lists[i]->n);
        g->kh = g->sh = g->dh = 1;
        g->ph = 0;
        g->kw = kv->v[0];
        g->sw = sn ? sv->v[0] : g->kw;
        g->pw = pv->v[0];
        g->dw = dv ? dv->v[0] : 1;
        sz[ndim] = sz[ndim - 1];
        sz[ndim - 1] = 1;
        nd = ndim + 1;
    } else {
        PCT_CHECK(pool_pair(kv, &g->kh, &g->kw), PCT_ERR_RUNTIME,
                  "%s: kernel_size must either be a single int, or a tuple of two ints", name);
        PCT_CHECK(sn == 0 || pool_pair(sv, &g->sh, &g->sw), PCT_ERR_RUNTIME,
                  "%s: stride must either be omitted, a single int, or a tuple of two ints", name);
        if (sn == 0) { g->sh = g->kh; g->sw = g->kw; }
        PCT_CHECK(pool_pair(pv, &g->ph, &g->pw), PCT_ERR_RUNTIME,
                  "%s: padding must either be a single int, or a tuple of two ints", name);
        g->dh = g->dw = 1;
        PCT_CHECK(!dv || pool_pair(dv, &g->dh, &g->dw), PCT_ERR_RUNTIME,
                  "max_pool2d: dilation must be either a single int, or a tuple of two ints");
        PCT_CHECK(!g->has_divisor || g->divisor != 0, PCT_ERR_RUNTIME, "divisor must be not zero");
    }
    if (avg && nd < 3) {
        pct_wrap_dim(-3, nd); /* torch reads size(-3) first: its IndexError */
        return -1;
    }
    PCT_CHECK(avg || nd == 3 || nd == 4, PCT_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
    g->ih = sz[nd - 2];
    g->iw = sz[nd - 1];
    if (pct_pool_out_dim(g->ih, g->kh, g->ph, g->sh, g->dh, g->ceil, &g->oh) < 0 ||
        pct_pool_out_dim(g->iw, g->kw, g->pw, g->sw, g->dw, g->ceil, &g->ow) < 0)
        return -1;
    /* torch's pool2d_shape_check */
    PCT_CHECK(g->kw > 0 && g->kh > 0, PCT_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
              (long long)g->kh, (long long)g->kw);
    PCT_CHECK(g->sw > 0 && g->sh > 0, PCT_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld",
              (long long)g->sh, (long long)g->sw);
    PCT_CHECK(g->dw > 0 && g->dh > 0, PCT_ERR_RUNTIME,
              "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld", (long long)g->dh, (long long)g->dw);
    PCT_CHECK((nd == 3 && sz[0] && sz[1] && sz[2]) || (nd == 4 && sz[1] && sz[2] && sz[3]), PCT_ERR_RUNTIME,
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:%s",
              pct_shape_str(buf, sizeof buf, nd, sz));
    PCT_CHECK(g->kw / 2 >= g->pw && g->kh / 2 >= g->ph, PCT_ERR_RUNTIME,
              "pad should be smaller than or equal to half of kernel size, but got padW = %lld, padH = %lld, kW = %lld, kH = %lld",
              (long long)g->pw, (long long)g->ph, (long long)g->kw, (long long)g->kh);
    PCT_CHECK(g->ow >= 1 && g->oh >= 1, PCT_ERR_RUNTIME,
              "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too small",
              (long long)sz[nd - 3], (long long)g->ih, (long long)g->iw, (long long)sz[nd - 3], (long long)g->oh,
              (long long)g->ow);
    g->planes = 1;
    for (int i = 0; i < nd - 2; i++) g->planes *= sz[i];
    return 0;
fail:
    return -1;
}

/* ------------------------------------------------------------------------------------ */
/* kernels                                                                               */

/* The columns [*a, *b) whose windows lie inside the input (no padding, no clipping). */
static void pool_inner_cols(const pct_pool2d *g, int64_t *a, int64_t *b)
{
    int64_t lo = (g->pw + g->sw - 1) / g->sw, last = g->iw - 1 + g->pw - (g->kw - 1) * g->dw;
    int64_t hi = last < 0 ? 0 : last / g->sw + 1;
    if (hi > g->ow) hi = g->ow;
    *a = lo < hi ? lo : 0;
    *b = lo < hi ? hi : 0;
}

#define NAN_FLOAT(v) ((v) != (v))
#define NAN_INT(v) 0

/* max pool: X(dtype, T, lowest value, NaN test, kernel-tap index type) */
#define MAX_TYPES(X)                                      \
    X(UINT8, uint8_t, 0, NAN_INT, int32_t)                \
    X(INT8, int8_t, INT8_MIN, NAN_INT, int32_t)           \
    X(INT16, int16_t, INT16_MIN, NAN_INT, int32_t)        \
    X(INT32, int32_t, INT32_MIN, NAN_INT, int32_t)        \
    X(INT64, int64_t, INT64_MIN, NAN_INT, int64_t)        \
    X(FLOAT32, float, -INFINITY, NAN_FLOAT, int32_t)      \
    X(FLOAT64, double, -INFINITY, NAN_FLOAT, int64_t)

/* One pass of the inner columns over one kernel tap (Note [Pooling rows]); S is the stride
 * (a constant for the common strides, so the loads vectorize). */
#define MAX_PASS(T, NANT, S)                                                                     \
    do {                                                                                         \
        if (bk)                                                                                  \
            for (int64_t q = a; q < b; q++) {                                                    \
                T v = r[q * (S)];                                                                \
                bool take = (v > o[q]) | NANT(v);                                                \
                o[q] = take ? v : o[q];                                                          \
                bk[q] = take ? kk : bk[q];                                                       \
            }                                                                                    \
        else                                                                                     \
            for (int64_t q = a; q < b; q++) {                                                    \
                T v = r[q * (S)];                                                                \
                o[q] = ((v > o[q]) | NANT(v)) ? v : o[q];                                        \
            }                                                                                    \
    } while (0)

#define MAX_ROW(E, T, LOW, NANT, KT)                                                             \
    PCT_HOT_AVX2 static void maxrow_##E(const pct_pool2d *g, const T *x, int64_t oh, T *o, int64_t *ix,     \
                                           KT *bk, int64_t a, int64_t b)                         \
    {                                                                                            \
        int64_t h0, h1, iw = g->iw;                                                              \
        pct_pool_span(oh, g->sh, g->ph, g->kh, g->dh, g->ih, &h0, &h1);                          \
        for (int64_t ow = 0; ow < g->ow; ow++) { /* border columns: torch's scan */             \
            if (ow == a && b > a) ow = b;                                                        \
            if (ow >= g->ow) break;                                                              \
            int64_t w0, w1;                                                                      \
            pct_pool_span(ow, g->sw, g->pw, g->kw, g->dw, iw, &w0, &w1);                         \
            T best = LOW;                                                                        \
            int64_t at = h0 * iw + w0;                                                           \
            for (int64_t h = h0; h < h1; h += g->dh)                                             \
                for (int64_t w = w0; w < w1; w += g->dw) {                                       \
                    T v = x[h * iw + w];                                                         \
                    if ((v > best) || NANT(v)) { best = v; at = h * iw + w; }                    \
                }                                                                                \
            o[ow] = best;                                                                        \
            if (ix) ix[ow] = at;                                                                 \
        }                                                                                        \
        if (b <= a) return;                                                                      \
        for (int64_t q = a; q < b; q++) o[q] = LOW;                                              \
        if (bk) for (int64_t q = a; q < b; q++) bk[q] = -1;                                      \
        KT kk = 0;                                                                               \
        for (int64_t h = h0; h < h1; h += g->dh)                                                 \
            for (int64_t j = 0; j < g->kw; j++, kk++) {                                          \
                const T *r = x + h * iw - g->pw + j * g->dw;                                     \
                if (g->sw == 1) MAX_PASS(T, NANT, 1);                                            \
                else if (g->sw == 2) MAX_PASS(T, NANT, 2);                                       \
                else MAX_PASS(T, NANT, g->sw);                                                   \
            }                                                                                    \
        if (!ix) return;                                                                         \
        for (int64_t q = a; q < b; q++) {                                                        \
            int64_t w0 = q * g->sw - g->pw, k = (int64_t)bk[q];                                  \
            ix[q] = k < 0 ? h0 * iw + w0 : (h0 + (k / g->kw) * g->dh) * iw + w0 + (k % g->kw) * g->dw; \
        }                                                                                        \
    }                                                                                            \
    static void maxpool_##E(const pct_pool2d *g, const T *x, T *out, int64_t *ind, int *nomem)   \
    {                                                                                            \
        int64_t a, b, rows = g->planes * g->oh;                                                  \
        pool_inner_cols(g, &a, &b);                                                              \
        _Pragma("omp parallel if (rows * g->ow * g->kh * g->kw > PCT_SPATIAL_GRAIN)")           \
        {                                                                                        \
            KT *bk = ind && b > a ? malloc((size_t)g->ow * sizeof(KT)) : NULL;                   \
            if (ind && b > a && !bk) *nomem = 1;                                                 \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t u = 0; u < rows; u++) {                                                 \
                if (ind && b > a && !bk) continue;                                               \
                int64_t p = u / g->oh, oh = u % g->oh;                                           \
                maxrow_##E(g, x + p * g->ih * g->iw, oh, out + u * g->ow, ind ? ind + u * g->ow : NULL, bk, a, b); \
            }                                                                                    \
            free(bk);                                                                            \
        }                                                                                        \
    }
MAX_TYPES(MAX_ROW)

typedef void (*maxpool_fn)(const pct_pool2d *, const void *, void *, int64_t *, int *);
static maxpool_fn maxpool_for(int dtype)
{
    switch (dtype) {
#define MAX_CASE(E, T, LOW, NANT, KT) case PCT_##E: return (maxpool_fn)maxpool_##E;
        MAX_TYPES(MAX_CASE)
    default: return NULL;
    }
}

/* avg pool (float32 / float64: sums in the dtype, as torch's opmath for them; int64 sums wrap) */
#define AVG_ROW(E, T)                                                                            \
    PCT_HOT_AVX2 static void avgrow_##E(const pct_pool2d *g, const T *x, int64_t oh, T *o, int64_t a, int64_t b)    \
    {                                                                                            \
        int64_t hs, he, iw = g->iw;                                                              \
        int64_t hpad = pct_avg_span(oh, g->sh, g->ph, g->kh, g->ih, &hs, &he);                   \
        for (int64_t ow = 0; ow < g->ow; ow++) {                                                 \
            if (ow == a && b > a) ow = b;                                                        \
            if (ow >= g->ow) break;                                                              \
            int64_t ws, we, wpad = pct_avg_span(ow, g->sw, g->pw, g->kw, iw, &ws, &we);          \
            T sum = 0;                                                                           \
            for (int64_t h = hs; h < he; h++)                                                    \
                for (int64_t w = ws; w < we; w++) sum += x[h * iw + w];                          \
            o[ow] = sum / (T)pct_avg_divisor(g, hpad, wpad, he - hs, we - ws);                   \
        }                                                                                        \
        if (b <= a) return;                                                                      \
        for (int64_t q = a; q < b; q++) o[q] = 0;                                                \
        for (int64_t h = hs; h < he; h++)                                                        \
            for (int64_t j = 0; j < g->kw; j++) {                                                \
                const T *r = x + h * iw - g->pw + j;                                             \
                if (g->sw == 1) for (int64_t q = a; q < b; q++) o[q] += r[q];                    \
                else if (g->sw == 2) for (int64_t q = a; q < b; q++) o[q] += r[2 * q];           \
                else for (int64_t q = a; q < b; q++) o[q] += r[q * g->sw];                       \
            }                                                                                    \
        T div = (T)pct_avg_divisor(g, hpad, g->kw, he - hs, g->kw);                              \
        for (int64_t q = a; q < b; q++) o[q] = o[q] / div;                                       \
    }
AVG_ROW(FLOAT32, float)
AVG_ROW(FLOAT64, double)

/* int64: wrapping sums and truncating division, never the fast path */
static void avgrow_INT64(const pct_pool2d *g, const int64_t *x, int64_t oh, int64_t *o, int64_t a, int64_t b)
{
    (void)a; (void)b;
    int64_t hs, he, iw = g->iw, hpad = pct_avg_span(oh, g->sh, g->ph, g->kh, g->ih, &hs, &he);
    for (int64_t ow = 0; ow < g->ow; ow++) {
        int64_t ws, we, wpad = pct_avg_span(ow, g->sw, g->pw, g->kw, iw, &ws, &we);
        uint64_t sum = 0;
        for (int64_t h = hs; h < he; h++)
            for (int64_t w = ws; w < we; w++) sum += (uint64_t)x[h * iw + w];
        int64_t s = (int64_t)sum, d = pct_avg_divisor(g, hpad, wpad, he - hs, we - ws);
        o[ow] = d == -1 ? (int64_t)(0 - sum) : s / d; /* INT64_MIN / -1 would trap */
    }
}

#define AVG_DRIVER(E, T)                                                                         \
    static void avgpool_##E(const pct_pool2d *g, const T *x, T *out)                             \
    {                                                                                            \
        int64_t a, b, rows = g->planes * g->oh;                                                  \
        pool_inner_cols(g, &a, &b);                                                              \
        _Pragma("omp parallel for if (rows * g->ow * g->kh * g->kw > PCT_SPATIAL_GRAIN)")       \
        for (int64_t u = 0; u < rows; u++)                                                       \
            avgrow_##E(g, x + (u / g->oh) * g->ih * g->iw, u % g->oh, out + u * g->ow, a, b);    \
    }
AVG_DRIVER(FLOAT32, float)
AVG_DRIVER(FLOAT64, double)
AVG_DRIVER(INT64, int64_t)

/* ------------------------------------------------------------------------------------ */
/* ops                                                                                   */



static pct_object *max_pool(pct_call *c, pct_tensor *x, const pct_pool_args *a, int kind, bool with_indices)
{
    pct_tensor *xc = NULL, *out = NULL, *ind = NULL;
    pct_pool2d g;
    int nsp = kind == PCT_POOL_MAX2D ? 2 : 1, nomem = 0;
    if (pct_pool_setup(a, kind, x->ndim, x->sizes, &g) < 0) return NULL;
    int cd = pct_spatial_compute_dtype(x->dtype);
    bool floats_only = kind == PCT_POOL_MAX1D;
    if (!maxpool_for(cd) || (floats_only && !pct_dtype_is_floating(x->dtype)))
        return pct_spatial_no_dtype(kind == PCT_POOL_MAX1D ? "max_pool1d_impl" : "max_pool2d", x->dtype);
    const bool device = x->device_type != PCT_CPU; /* Note [Device pooling] */
    if (device && !pct_pool_device_runs(cd)) return pct_pool_device_fallback(c, x->device_type);
    PCT_TRY(xc = pct_spatial_input(x));
    PCT_TRY(out = pct_pool_output(x, nsp, &g, cd));
    if (with_indices) PCT_TRY(ind = pct_pool_output(x, nsp, &g, PCT_INT64));
    if (out->numel && device) {
        if (pct_pool_device_forward(&g, PCT_POOL_CALL_MAX, xc, out, ind) < 0) goto fail;
    } else if (out->numel) {
        maxpool_fn fn = maxpool_for(cd);
        PCT_NOGIL_BEGIN
        fn(&g, pct_tensor_data(xc), pct_tensor_data(out), ind ? (int64_t *)pct_tensor_data(ind) : NULL, &nomem);
        PCT_NOGIL_END
        if (nomem) { pct_error_nomem(); goto fail; }
    }
    PCT_CLEAR(xc);
    pct_object *r = pct_spatial_finish(out, x->dtype);
    out = NULL;
    if (!with_indices || !r) return r;
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

#define MAX_POOL_ENTRY(op, kind, with_indices)                                                                         \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return max_pool(c, arg.input, &PCT_POOL_MAX_ARGS(arg), kind, with_indices);                                      \
    }
MAX_POOL_ENTRY(max_pool1d, PCT_POOL_MAX1D, false)
MAX_POOL_ENTRY(max_pool2d, PCT_POOL_MAX2D, false)
MAX_POOL_ENTRY(max_pool1d_with_indices, PCT_POOL_MAX1D_IDX, true)
MAX_POOL_ENTRY(max_pool2d_with_indices, PCT_POOL_MAX2D, true)

static pct_object *avg_pool(pct_call *c, pct_tensor *x, const pct_pool_args *a, int kind)
{
    pct_tensor *xc = NULL, *out = NULL;
    pct_pool2d g;
    int nsp = kind == PCT_POOL_AVG2D ? 2 : 1;
    if (pct_pool_setup(a, kind, x->ndim, x->sizes, &g) < 0) return NULL;
    int cd = pct_spatial_compute_dtype(x->dtype);
    if (cd != PCT_FLOAT32 && cd != PCT_FLOAT64 && cd != PCT_INT64) return pct_spatial_no_dtype("avg_pool2d", x->dtype);
    const bool device = x->device_type != PCT_CPU; /* Note [Device pooling] */
    if (device && !pct_pool_device_runs(cd)) return pct_pool_device_fallback(c, x->device_type);
    PCT_TRY(xc = pct_spatial_input(x));
    PCT_TRY(out = pct_pool_output(x, nsp, &g, cd));
    if (out->numel && device) {
        if (pct_pool_device_forward(&g, PCT_POOL_CALL_AVG, xc, out, NULL) < 0) goto fail;
    } else if (out->numel) {
        PCT_NOGIL_BEGIN
        if (cd == PCT_FLOAT32) avgpool_FLOAT32(&g, (const float *)pct_tensor_data(xc), (float *)pct_tensor_data(out));
        else if (cd == PCT_FLOAT64) avgpool_FLOAT64(&g, (const double *)pct_tensor_data(xc), (double *)pct_tensor_data(out));
        else avgpool_INT64(&g, (const int64_t *)pct_tensor_data(xc), (int64_t *)pct_tensor_data(out));
        PCT_NOGIL_END
    }
    PCT_DECREF(xc);
    return pct_spatial_finish(out, x->dtype);
fail:
    PCT_XDECREF(xc);
    PCT_XDECREF(out);
    return NULL;
}

pct_object *pct_cpu_avg_pool1d(pct_call *c)
{
    PCT_ARGS(avg_pool1d);
    return avg_pool(c, arg.input, &PCT_POOL_AVG_ARGS(arg, ((pct_int_opt){true, 0})), PCT_POOL_AVG1D);
}

pct_object *pct_cpu_avg_pool2d(pct_call *c)
{
    PCT_ARGS(avg_pool2d);
    return avg_pool(c, arg.input, &PCT_POOL_AVG_ARGS(arg, arg.divisor_override), PCT_POOL_AVG2D);
}
