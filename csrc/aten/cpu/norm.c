/* norm.c: fused layer norm, RMS norm and group norm, forward and backward (torch's
 * native_layer_norm[_backward], _fused_rms_norm[_backward], native_group_norm[_backward]),
 * and the shared row kernels of norm_rows.h.
 *
 * Layer/RMS norm view the input as M rows of D = prod(normalized_shape) elements; group norm
 * as N * group blocks of (C / group) * HxW elements. Statistics accumulate in double and are
 * two-pass (mean, then squared deviations), so float32 matches torch's Welford moments to
 * rounding. float16/bfloat16 inputs compute in float; their weights may be float32 ("mixed
 * dtype", as torch allows), and then the saved statistics are float32 too.
 *
 * Backward (row of length D, xc = x - mean, gw = grad * weight):
 *   grad_input  = rstd * (gw - sum(gw) / D - xc * rstd^2 * sum(gw * xc) / D)   (RMS: no mean term)
 *   grad_weight = sum over rows of grad * xc * rstd,  grad_bias = sum over rows of grad
 * Column sums go to per-thread double buffers that are added once at the end (no races). */
#include "simd_levels.h"
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "norm_rows.h"
#include "../backend.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#define NORM_TID() omp_get_thread_num()
#define NORM_NTH() omp_get_num_threads()
#else
#define NORM_TID() 0
#define NORM_NTH() 1
#endif

int pct_norm_threads(int64_t work, int64_t units)
{
#ifdef _OPENMP
    if (work < PCT_PARALLEL_GRAIN || units < 2 || omp_in_parallel()) return 1;
    int n = omp_get_max_threads();
    return units < n ? (int)units : n;
#else
    (void)work;
    (void)units;
    return 1;
#endif
}

/* ---- shared row kernels (norm_rows.h) ---- */

/* Note [Chunked sums]: sums run in the compute type over chunks of NORM_CHUNK elements (vector
 * lanes, so each lane adds a few dozen values) and the chunk totals add up in double: float32
 * speed with an error that does not grow with the row length. */
#define NORM_CHUNK 512

#define PCT_FOREACH_TEMPLATE "norm_loops_impl.h"
#include "dtype_foreach.h"

static const pct_norm_rows rows_table[PCT_NUM_DTYPES] = {
#define ROWS_ENTRY(E, N, T, C, S) [PCT_##E] = {rows_sum_##N, rows_sqdev_##N, rows_dot_sum_##N, rows_scale_shift_##N, rows_lin2_##N},
    PCT_FORALL_FLOAT_DTYPES(ROWS_ENTRY)
};

const pct_norm_rows *pct_norm_rows_for(int dtype)
{
    return dtype >= 0 && dtype < PCT_NUM_DTYPES && rows_table[dtype].sum ? &rows_table[dtype] : NULL;
}

/* ---- layer / RMS norm rows: weight and bias are arrays of the compute type ---- */

typedef void (*ln_affine_fn)(const void *x, void *y, int64_t d, double scale, double shift, const void *w, const void *b);
typedef void (*ln_bwd_fn)(const void *g, const void *x, void *gi, int64_t d, double mu, double rs, const void *w,
                          void *accw, void *accb, bool rms);
typedef void (*ln_flush_fn)(void *acc, double *tot, int64_t n);

#define PCT_FOREACH_TEMPLATE "layer_norm_impl.h"
#include "dtype_foreach.h"

static const ln_affine_fn ln_affine_table[PCT_NUM_DTYPES] = {
#define LN_AFFINE_ENTRY(E, N, T, C, S) [PCT_##E] = ln_affine_##N,
    PCT_FORALL_FLOAT_DTYPES(LN_AFFINE_ENTRY)
};
static const ln_bwd_fn ln_bwd_table[PCT_NUM_DTYPES] = {
#define LN_BWD_ENTRY(E, N, T, C, S) [PCT_##E] = ln_bwd_##N,
    PCT_FORALL_FLOAT_DTYPES(LN_BWD_ENTRY)
};
static const ln_flush_fn ln_flush_table[PCT_NUM_DTYPES] = {
#define LN_FLUSH_ENTRY(E, N, T, C, S) [PCT_##E] = ln_flush_##N,
    PCT_FORALL_FLOAT_DTYPES(LN_FLUSH_ENTRY)
};

/* ---- argument checks and conversions shared by the kernels ---- */

static int compute_dtype(int d) { return pct_dtype_is_reduced_float(d) ? PCT_FLOAT32 : d; }

int pct_norm_check_float_input(const pct_tensor *t, const char *kernel)
{
    if (pct_dtype_is_floating(t->dtype)) return 0;
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, pct_dtype_cpp_name[t->dtype]);
    return -1;
}

/* torch's CPU rule: parameters share the input's dtype, except float32 parameters of a
 * float16/bfloat16 input ("mixed"). Sets *mixed when that is the case. */
int pct_norm_check_param_dtype(const pct_tensor *in, const pct_tensor *p, bool *mixed)
{
    if (!p || p->dtype == in->dtype) return 0;
    if (pct_dtype_is_reduced_float(in->dtype) && p->dtype == PCT_FLOAT32) { *mixed = true; return 0; }
    if (in->dtype == PCT_FLOAT32 || pct_dtype_is_reduced_float(in->dtype))
        pct_error_str(PCT_ERR_RUNTIME, "mixed dtype (CPU): expect parameter to have scalar type of Float");
    else
        pct_error_str(PCT_ERR_RUNTIME, "mixed dtype (CPU): all inputs must share same datatype.");
    return -1;
}

/* t as a contiguous tensor of dtype d (t itself when it already is); NULL stays NULL. */
int pct_norm_as_contig(pct_tensor *t, int d, pct_tensor **out)
{
    *out = NULL;
    if (!t) return 0;
    pct_tensor *c = pct_to_dtype(t, d, false);
    if (!c) return -1;
    *out = pct_contiguous(c);
    PCT_DECREF(c);
    return *out ? 0 : -1;
}

static bool same_shape(const pct_tensor *a, const pct_tensor *b)
{
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* Converts *t to dtype d in place of the reference (no-op when it has it). */
static int convert_owned(pct_tensor **t, int d)
{
    if (!*t || (*t)->dtype == d) return 0;
    pct_tensor *r = pct_to_dtype(*t, d, false);
    if (!r) return -1;
    PCT_SETREF(*t, r);
    return 0;
}

/* A tuple of the given tensors; NULL entries become None. Steals the references. */
pct_object *pct_norm_tuple_steal(int n, pct_tensor **ts)
{
    pct_object *items[8];
    if (n > 8) {
        for (int i = 0; i < n; i++) PCT_XDECREF(ts[i]);
        return pct_error(PCT_ERR_RUNTIME, "pyctorch internal error: %d norm results; please report a bug", n);
    }
    for (int i = 0; i < n; i++) items[i] = ts[i] ? (pct_object *)ts[i] : pct_none();
    return pct_tuple_steal(n, items);
}

/* Sums the per-thread column buffers (nth blocks of `stride` doubles, column offset `off`)
 * into a new float64 tensor of `shape`, converted to dtype. */
static pct_tensor *sum_columns(const double *acc, int nth, int64_t stride, int64_t off, int64_t d, int ndim,
                               const int64_t *shape, int dtype)
{
    pct_tensor *r = pct_tensor_empty(ndim, shape, PCT_FLOAT64, PCT_CPU, -1);
    if (!r) return NULL;
    double *o = (double *)pct_tensor_data(r);
    for (int64_t j = 0; j < d; j++) o[j] = 0;
    for (int t = 0; t < nth; t++)
        for (int64_t j = 0; j < d; j++) o[j] += acc[t * stride + off + j];
    if (convert_owned(&r, dtype) < 0) PCT_CLEAR(r);
    return r;
}

/* ---- layer norm and RMS norm ---- */

/* Validates normalized_shape against input (and weight/bias); sets M (rows) and D (row length). */
static int rows_of(const char *what, const pct_tensor *in, const pct_int_list *ns, const pct_tensor *w, const pct_tensor *b,
                   int64_t *M, int64_t *D)
{
    char s1[PCT_SHAPE_BUF], s2[PCT_SHAPE_BUF];
    int n = ns->n;
    if (n < 1) {
        pct_error(PCT_ERR_RUNTIME, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                     "least one element, but got normalized_shape = %s", pct_shape_str(s1, sizeof s1, n, ns->v));
        return -1;
    }
    const pct_tensor *ps[2] = {w, b};
    const char *pn[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) {
        if (!ps[k]) continue;
        if (ps[k]->ndim != n || memcmp(ps[k]->sizes, ns->v, sizeof(int64_t) * (size_t)n) != 0) {
            pct_error(PCT_ERR_RUNTIME, "Expected %s to be of same shape as normalized_shape, but got %s of shape "
                         "%s and normalized_shape = %s", pn[k], pn[k], pct_shape_str(s1, sizeof s1, ps[k]->ndim, ps[k]->sizes),
                         pct_shape_str(s2, sizeof s2, n, ns->v));
            return -1;
        }
    }
    int lead = in->ndim - n;
    if (lead < 0 || memcmp(in->sizes + lead, ns->v, sizeof(int64_t) * (size_t)n) != 0) {
        char star[PCT_SHAPE_BUF + 8];
        pct_shape_str(s1, sizeof s1, n, ns->v);
        /* torch prints "[*, 2, 3]" for layer_norm and "[*2, 3]" for rms_norm */
        snprintf(star, sizeof star, "[*%s%s", strcmp(what, "layer_norm") == 0 ? ", " : "", s1 + 1);
        pct_error(PCT_ERR_RUNTIME, "Given normalized_shape=%s, expected input with shape %s, but got input of size%s",
                     s1, star, pct_shape_str(s2, sizeof s2, in->ndim, in->sizes));
        return -1;
    }
    int64_t m = 1, d = 1;
    for (int i = 0; i < lead; i++) m *= in->sizes[i];
    for (int i = lead; i < in->ndim; i++) d *= in->sizes[i];
    *M = m;
    *D = d;
    return 0;
}

/* The statistics' shape: the input's leading dims, then ones. */
static void stat_shape(const pct_tensor *in, int n, int64_t *shape)
{
    for (int i = 0; i < in->ndim; i++) shape[i] = i < in->ndim - n ? in->sizes[i] : 1;
}

/* Mean and 1/sqrt(var + eps) of one row of n values (the mean taken as 0 for RMS norm). torch rounds both
   to the compute type before using them. */
static inline void row_stats(const pct_norm_rows *rows, const char *xr, int64_t n, double eps, int cdt, bool rms,
                             double *mu_out, double *rs_out)
{
    double mu = rms || n == 0 ? 0.0 : rows->sum(xr, n) / (double)n;
    double var = rows->sqdev(xr, n, mu) / (double)n;
    double rs = 1.0 / sqrt(var + eps);
    if (cdt == PCT_FLOAT32) {
        rs = (float)rs;
        mu = (float)mu;
    }
    *mu_out = mu;
    *rs_out = rs;
}

/* The end of a norm kernel; steals every reference. Drops the working tensors (NULLs allowed), then returns
   the nres results as a tuple when ok, or drops them too and returns NULL (an exception set). */
static pct_object *norm_finish(pct_tensor *const *work, int nwork, pct_tensor **res, int nres, bool ok)
{
    for (int i = 0; i < nwork; i++) PCT_XDECREF(work[i]);
    if (ok) return pct_norm_tuple_steal(nres, res);
    for (int i = 0; i < nres; i++) PCT_XDECREF(res[i]);
    return NULL;
}

/* A layer/RMS/group norm forward's end: the statistics converted to sdt (sdt < 0: failed), then
   (out, mean, rstd), or (out, rstd) without the mean. */
static pct_object *forward_finish(pct_tensor *x, pct_tensor *wc, pct_tensor *bc, pct_tensor *out, pct_tensor *mean,
                                pct_tensor *rstd, int sdt, bool with_mean)
{
    bool ok = sdt >= 0 && convert_owned(&mean, sdt) == 0 && convert_owned(&rstd, sdt) == 0;
    pct_tensor *work[4] = {x, wc, bc, with_mean ? NULL : mean};
    pct_tensor *res[3] = {out, with_mean ? mean : rstd, rstd};
    return norm_finish(work, 4, res, with_mean ? 3 : 2, ok);
}

/* A layer/RMS/group norm backward's end: (grad_input, grad_weight, grad_bias), or without grad_bias. */
static pct_object *backward_finish(pct_tensor *g, pct_tensor *x, pct_tensor *mean, pct_tensor *rstd, pct_tensor *wc,
                                 pct_tensor *gi, pct_tensor *gw, pct_tensor *gb, bool ok, bool with_bias)
{
    pct_tensor *work[6] = {g, x, mean, rstd, wc, with_bias ? NULL : gb};
    pct_tensor *res[3] = {gi, gw, gb};
    return norm_finish(work, 6, res, with_bias ? 3 : 2, ok);
}

/* Note [Device row norms]: layer norm and RMS norm's entry points are device-neutral: checks, dtypes, contiguous
 * operands and results on the input's device are the same everywhere; on a device other than the CPU the rows (and
 * the backward's column sums) are that backend's row_norm, handed a pct_row_norm_call (row_norm_call.h). */
int pct_row_norm_on_device(const pct_row_norm_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->row_norm) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "layer_norm is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->row_norm(call);
}

static char *data_or_null(const pct_tensor *t) { return t ? pct_tensor_data(t) : NULL; }

/* layer norm and RMS norm (b NULL) over the trailing normalized_shape ns; eps None (RMS norm only) is the compute
 * type's */
static pct_object *row_norm_forward(bool rms, pct_tensor *in, const pct_int_list *ns, pct_tensor *w, pct_tensor *b,
                                    pct_float_opt eps_arg)
{
    const char *what = rms ? "rms_norm" : "layer_norm";
    pct_tensor *x = NULL, *wc = NULL, *bc = NULL, *out = NULL, *mean = NULL, *rstd = NULL;
    int64_t M, D, sshape[PCT_MAX_DIMS];
    bool mixed = false;
    if (rows_of(what, in, ns, w, b, &M, &D) < 0) return NULL;
    if (pct_norm_check_float_input(in, rms ? "rms_norm" : "LayerNormKernelImpl") < 0) return NULL;
    if (pct_norm_check_param_dtype(in, w, &mixed) < 0 || pct_norm_check_param_dtype(in, b, &mixed) < 0) return NULL;
    int cdt = compute_dtype(in->dtype);
    /* saved statistics: the input's dtype, float32 for mixed (layer norm) or reduced (RMS) inputs */
    int sdt = (mixed || (rms && pct_dtype_is_reduced_float(in->dtype))) ? PCT_FLOAT32 : in->dtype;
    double eps;
    if (eps_arg.none) eps = cdt == PCT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON; /* torch: the compute type's eps */
    else eps = eps_arg.v;
    stat_shape(in, ns->n, sshape);
    PCT_TRY_INT(pct_norm_as_contig(in, in->dtype, &x));
    PCT_TRY_INT(pct_norm_as_contig(w, cdt, &wc));
    PCT_TRY_INT(pct_norm_as_contig(b, cdt, &bc));
    PCT_TRY(out = pct_tensor_empty(in->ndim, in->sizes, in->dtype, in->device_type, in->device_index));
    PCT_TRY(rstd = pct_tensor_empty(in->ndim, sshape, cdt, in->device_type, in->device_index));
    if (!rms) PCT_TRY(mean = pct_tensor_empty(in->ndim, sshape, cdt, in->device_type, in->device_index));
    if (in->device_type != PCT_CPU) { /* Note [Device row norms] */
        const pct_row_norm_call call = {.dtype = in->dtype, .device_index = in->device_index, .rms = rms, .M = M,
                                        .D = D, .eps = eps, .x = pct_tensor_data(x), .weight = data_or_null(wc),
                                        .bias = data_or_null(bc), .mean = data_or_null(mean),
                                        .rstd = pct_tensor_data(rstd), .out = pct_tensor_data(out)};
        if (M > 0 && pct_row_norm_on_device(&call, in->device_type) < 0) goto fail;
    } else {
        const pct_norm_rows *rows = pct_norm_rows_for(in->dtype);
        ln_affine_fn affine = ln_affine_table[in->dtype];
        const char *xd = pct_tensor_data(x);
        char *yd = pct_tensor_data(out), *md = mean ? pct_tensor_data(mean) : NULL, *rd = pct_tensor_data(rstd);
        const void *wd = wc ? pct_tensor_data(wc) : NULL, *bd = bc ? pct_tensor_data(bc) : NULL;
        int64_t isz = pct_dtype_itemsize[in->dtype], ssz = pct_dtype_itemsize[cdt];
        int nth = pct_norm_threads(M * D, M);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t i = 0; i < M; i++) {
            const char *xr = xd + i * D * isz;
            double mu, rs;
            row_stats(rows, xr, D, eps, cdt, rms, &mu, &rs);
            if (D > 0) affine(xr, yd + i * D * isz, D, rs, -rs * mu, wd, bd);
            if (md) pct_store_double(md + i * ssz, cdt, mu);
            pct_store_double(rd + i * ssz, cdt, rs);
        }
        PCT_NOGIL_END
    }
    return forward_finish(x, wc, bc, out, mean, rstd, sdt, !rms);
fail:
    return forward_finish(x, wc, bc, out, mean, rstd, -1, !rms);
}

pct_object *pct_cpu_native_layer_norm(pct_call *c)
{
    PCT_ARGS(native_layer_norm);
    const pct_float_opt eps = {false, arg.eps};
    return row_norm_forward(false, arg.input, &arg.normalized_shape, arg.weight, arg.bias, eps);
}

pct_object *pct_cpu_fused_rms_norm(pct_call *c)
{
    PCT_ARGS(fused_rms_norm);
    return row_norm_forward(true, arg.input, &arg.normalized_shape, arg.weight, NULL, arg.eps);
}

/* A saved statistic: M values, as a contiguous array of the compute type. */
static int stat_arg(const char *what, const char *name, pct_tensor *t, int64_t M, int cdt, pct_tensor **out)
{
    if (t->numel != M) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected %s to have %lld elements, but got %lld", what, name, (long long)M,
                     (long long)t->numel);
        return -1;
    }
    if (!pct_dtype_is_floating(t->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected %s to be floating point, but got %s", what, name,
                     pct_dtype_cpp_name[t->dtype]);
        return -1;
    }
    return pct_norm_as_contig(t, cdt, out);
}

/* grad_out checked against input: same shape; converted to the input's dtype, contiguous. */
static int grad_arg(const char *what, pct_tensor *g, const pct_tensor *in, pct_tensor **out)
{
    char s1[PCT_SHAPE_BUF], s2[PCT_SHAPE_BUF];
    if (!same_shape(g, in)) {
        pct_error(PCT_ERR_RUNTIME, "%s: grad_out of shape %s does not match input of shape %s", what,
                     pct_shape_str(s1, sizeof s1, g->ndim, g->sizes), pct_shape_str(s2, sizeof s2, in->ndim, in->sizes));
        return -1;
    }
    if (!pct_dtype_is_floating(g->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected grad_out to be floating point, but got %s", what,
                     pct_dtype_cpp_name[g->dtype]);
        return -1;
    }
    return pct_norm_as_contig(g, in->dtype, out);
}

/* Runs the row backward over M rows; column sums of grad * xhat and grad into the
 * param-shaped results when asked. Each thread adds its rows' columns into compute-type
 * buffers that go into double totals every NORM_FLUSH rows (Note [Chunked sums]). */
#define NORM_FLUSH 32
static int row_norm_backward_run(pct_tensor *g, pct_tensor *x, pct_tensor *mean, pct_tensor *rstd, pct_tensor *wc,
                                 pct_tensor *gi, bool want_w, bool want_b, int64_t M, int64_t D, int pndim,
                                 const int64_t *pshape, int pdtype, pct_tensor **gw, pct_tensor **gb)
{
    int nth = pct_norm_threads(M * D, M);
    int cdt = compute_dtype(x->dtype);
    int64_t csz = pct_dtype_itemsize[cdt], isz = pct_dtype_itemsize[x->dtype];
    int64_t stride = 2 * (D ? D : 1); /* per thread: D weight columns, then D bias columns */
    double *acc = NULL;
    char *part = NULL;
    if (want_w || want_b) {
        acc = calloc((size_t)nth * (size_t)stride, sizeof(double));
        part = calloc((size_t)nth * (size_t)stride, (size_t)csz);
        if (!acc || !part) {
            free(acc);
            free(part);
            pct_error_nomem();
            return -1;
        }
    }
    ln_bwd_fn bwd = ln_bwd_table[x->dtype];
    ln_flush_fn flush = ln_flush_table[x->dtype];
    const char *gd = pct_tensor_data(g), *xd = pct_tensor_data(x);
    const char *md = mean ? pct_tensor_data(mean) : NULL, *rd = pct_tensor_data(rstd);
    char *gid = gi ? pct_tensor_data(gi) : NULL;
    const void *wd = wc ? pct_tensor_data(wc) : NULL;
    bool rms = mean == NULL;
    PCT_NOGIL_BEGIN
    _Pragma("omp parallel num_threads(nth) if (nth > 1)")
    {
        int t = NORM_TID(), nt = NORM_NTH();
        int64_t r0 = M * t / nt, r1 = M * (t + 1) / nt;
        char *pw = want_w ? part + t * stride * csz : NULL, *pb = want_b ? part + (t * stride + D) * csz : NULL;
        for (int64_t i = r0; i < r1; i++) {
            double mu = md ? pct_load_as_double(md + i * csz, cdt) : 0.0;
            double rs = pct_load_as_double(rd + i * csz, cdt);
            bwd(gd + i * D * isz, xd + i * D * isz, gid ? gid + i * D * isz : NULL, D, mu, rs, wd, pw, pb, rms);
            if ((pw || pb) && ((i - r0) % NORM_FLUSH == NORM_FLUSH - 1 || i == r1 - 1)) {
                if (pw) flush(pw, acc + t * stride, D);
                if (pb) flush(pb, acc + t * stride + D, D);
            }
        }
    }
    PCT_NOGIL_END
    free(part);
    if (want_w && !(*gw = sum_columns(acc, nth, stride, 0, D, pndim, pshape, pdtype))) goto fail;
    if (want_b && !(*gb = sum_columns(acc, nth, stride, D, D, pndim, pshape, pdtype))) goto fail;
    free(acc);
    return 0;
fail:
    free(acc);
    return -1;
}

/* The gradients of row_norm_forward; mean_in and b are NULL for RMS norm. */
static pct_object *row_norm_backward(bool rms, pct_tensor *grad, pct_tensor *in, const pct_int_list *ns,
                                     pct_tensor *mean_in, pct_tensor *rstd_in, pct_tensor *w, pct_tensor *b,
                                     const pct_int_list *mask)
{
    const char *what = rms ? "_fused_rms_norm_backward" : "native_layer_norm_backward";
    pct_tensor *g = NULL, *x = NULL, *mean = NULL, *rstd = NULL, *wc = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    int64_t M, D;
    bool mixed = false;
    if (rows_of(rms ? "rms_norm" : "layer_norm", in, ns, w, b, &M, &D) < 0) return NULL;
    if (pct_norm_check_float_input(in, rms ? "rms_norm" : "LayerNormBackwardKernelImpl") < 0) return NULL;
    if (pct_norm_check_param_dtype(in, w, &mixed) < 0 || pct_norm_check_param_dtype(in, b, &mixed) < 0) return NULL;
    int cdt = compute_dtype(in->dtype);
    bool want_i = mask->v[0] != 0, want_w = mask->n > 1 && mask->v[1] != 0 && w;
    bool want_b = !rms && mask->n > 2 && mask->v[2] != 0 && b;
    PCT_TRY_INT(grad_arg(what, grad, in, &g));
    PCT_TRY_INT(pct_norm_as_contig(in, in->dtype, &x));
    if (!rms) PCT_TRY_INT(stat_arg(what, "mean", mean_in, M, cdt, &mean));
    PCT_TRY_INT(stat_arg(what, "rstd", rstd_in, M, cdt, &rstd));
    PCT_TRY_INT(pct_norm_as_contig(w, cdt, &wc));
    if (want_i) PCT_TRY(gi = pct_tensor_empty(in->ndim, in->sizes, in->dtype, in->device_type, in->device_index));
    if (in->device_type != PCT_CPU) { /* Note [Device row norms]: the column sums in the compute dtype, then w's */
        if (want_w) PCT_TRY(gw = pct_tensor_empty(ns->n, ns->v, cdt, in->device_type, in->device_index));
        if (want_b) PCT_TRY(gb = pct_tensor_empty(ns->n, ns->v, cdt, in->device_type, in->device_index));
        const pct_row_norm_call call = {.dtype = in->dtype, .device_index = in->device_index, .rms = rms,
                                        .backward = true, .M = M, .D = D, .x = pct_tensor_data(x),
                                        .weight = data_or_null(wc), .mean = data_or_null(mean),
                                        .rstd = pct_tensor_data(rstd), .out = data_or_null(gi),
                                        .grad = pct_tensor_data(g), .grad_weight = data_or_null(gw),
                                        .grad_bias = data_or_null(gb)};
        if ((M * D > 0 || want_w || want_b) && pct_row_norm_on_device(&call, in->device_type) < 0) goto fail;
        const int pdtype = w ? w->dtype : in->dtype;
        if (convert_owned(&gw, pdtype) < 0 || convert_owned(&gb, pdtype) < 0) goto fail;
    } else if (M * D > 0 || want_w || want_b)
        PCT_TRY_INT(row_norm_backward_run(g, x, mean, rstd, wc, gi, want_w, want_b, M, D, ns->n, ns->v,
                                          w ? w->dtype : in->dtype, &gw, want_b ? &gb : NULL));
    return backward_finish(g, x, mean, rstd, wc, gi, gw, gb, true, !rms);
fail:
    return backward_finish(g, x, mean, rstd, wc, gi, gw, gb, false, !rms);
}

pct_object *pct_cpu_native_layer_norm_backward(pct_call *c)
{
    PCT_ARGS(native_layer_norm_backward);
    return row_norm_backward(false, arg.grad_out, arg.input, &arg.normalized_shape, arg.mean, arg.rstd, arg.weight,
                             arg.bias, &arg.output_mask);
}

pct_object *pct_cpu_fused_rms_norm_backward(pct_call *c)
{
    PCT_ARGS(fused_rms_norm_backward);
    return row_norm_backward(true, arg.grad_out, arg.input, &arg.normalized_shape, NULL, arg.rstd, arg.weight, NULL,
                             &arg.output_mask);
}

/* ---- group norm: x viewed as (N, C, HxW), statistics per (n, group) ---- */

/* Checks the sizes a native_group_norm(_backward) call gives against the input. */
static int group_sizes_ok(const char *what, const pct_tensor *in, const pct_tensor *w, const pct_tensor *b, int64_t N,
                          int64_t C, int64_t HW, int64_t G)
{
    if (N < 0 || C < 0 || HW < 0 || G <= 0) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected non-negative N, C, HxW and a positive group, got N=%lld, C=%lld, "
                     "HxW=%lld, group=%lld", what, (long long)N, (long long)C, (long long)HW, (long long)G);
        return -1;
    }
    if (C % G != 0) {
        pct_error(PCT_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but got "
                     "C=%lld and num_groups=%lld", (long long)C, (long long)G);
        return -1;
    }
    int64_t nc, total;
    if (__builtin_mul_overflow(N, C, &nc) || __builtin_mul_overflow(nc, HW, &total) || total != in->numel) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected input with N * C * HxW = %lld * %lld * %lld elements, but got %lld",
                     what, (long long)N, (long long)C, (long long)HW, (long long)in->numel);
        return -1;
    }
    const pct_tensor *ps[2] = {w, b};
    const char *pn[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++)
        if (ps[k] && (ps[k]->ndim != 1 || ps[k]->numel != C)) {
            char s[PCT_SHAPE_BUF];
            pct_error(PCT_ERR_RUNTIME, "Expected %s to be a vector of size equal to the number of channels in "
                         "input, but got %s of shape %s and C=%lld", pn[k], pn[k],
                         pct_shape_str(s, sizeof s, ps[k]->ndim, ps[k]->sizes), (long long)C);
            return -1;
        }
    return 0;
}

pct_object *pct_cpu_native_group_norm(pct_call *c)
{
    PCT_ARGS(native_group_norm);
    pct_tensor *in = arg.input, *w = (arg.weight == NULL) ? NULL : arg.weight, *b = (arg.bias == NULL) ? NULL : arg.bias;
    int64_t N = arg.N, C = arg.C, HW = arg.HxW, G = arg.group;
    double eps = arg.eps;
    pct_tensor *x = NULL, *wc = NULL, *bc = NULL, *out = NULL, *mean = NULL, *rstd = NULL;
    bool mixed = false;
    if (group_sizes_ok("native_group_norm", in, w, b, N, C, HW, G) < 0) return NULL;
    if (pct_norm_check_float_input(in, "GroupNormKernelImpl") < 0) return NULL;
    if (pct_norm_check_param_dtype(in, w, &mixed) < 0 || pct_norm_check_param_dtype(in, b, &mixed) < 0) return NULL;
    int cdt = compute_dtype(in->dtype), sdt = mixed ? PCT_FLOAT32 : in->dtype;
    int64_t sshape[2] = {N, G};
    PCT_TRY_INT(pct_norm_as_contig(in, in->dtype, &x));
    PCT_TRY_INT(pct_norm_as_contig(w, PCT_FLOAT64, &wc));
    PCT_TRY_INT(pct_norm_as_contig(b, PCT_FLOAT64, &bc));
    PCT_TRY(out = pct_tensor_empty(in->ndim, in->sizes, in->dtype, PCT_CPU, -1));
    PCT_TRY(mean = pct_tensor_empty(2, sshape, cdt, PCT_CPU, -1));
    PCT_TRY(rstd = pct_tensor_empty(2, sshape, cdt, PCT_CPU, -1));
    {
        const pct_norm_rows *rows = pct_norm_rows_for(in->dtype);
        int64_t cg = C / G, K = cg * HW, units = N * G, isz = pct_dtype_itemsize[in->dtype], ssz = pct_dtype_itemsize[cdt];
        const char *xd = pct_tensor_data(x);
        char *yd = pct_tensor_data(out), *md = pct_tensor_data(mean), *rd = pct_tensor_data(rstd);
        const double *wd = wc ? (const double *)pct_tensor_data(wc) : NULL, *bd = bc ? (const double *)pct_tensor_data(bc) : NULL;
        int nth = pct_norm_threads(in->numel, units);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t ng = 0; ng < units; ng++) {
            const char *xr = xd + ng * K * isz;
            double mu, rs;
            row_stats(rows, xr, K, eps, cdt, false, &mu, &rs);
            pct_store_double(md + ng * ssz, cdt, mu);
            pct_store_double(rd + ng * ssz, cdt, rs);
            for (int64_t k = 0; k < cg; k++) {
                int64_t ch = (ng % G) * cg + k;
                double a = rs * (wd ? wd[ch] : 1.0);
                rows->scale_shift(xr + k * HW * isz, yd + (ng * K + k * HW) * isz, HW, a, (bd ? bd[ch] : 0.0) - mu * a);
            }
        }
        PCT_NOGIL_END
    }
    return forward_finish(x, wc, bc, out, mean, rstd, sdt, true);
fail:
    return forward_finish(x, wc, bc, out, mean, rstd, -1, true);
}

pct_object *pct_cpu_native_group_norm_backward(pct_call *c)
{
    PCT_ARGS(native_group_norm_backward);
    const char *what = "native_group_norm_backward";
    pct_tensor *grad = arg.grad_out, *in = arg.input, *w = (arg.weight == NULL) ? NULL : arg.weight;
    int64_t N = arg.N, C = arg.C, HW = arg.HxW, G = arg.group;
    const pct_int_list *mask = &arg.output_mask;
    pct_tensor *g = NULL, *x = NULL, *mean = NULL, *rstd = NULL, *wc = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    double *sums = NULL;
    bool mixed = false;
    if (group_sizes_ok(what, in, w, NULL, N, C, HW, G) < 0) return NULL;
    if (pct_norm_check_float_input(in, "GroupNormBackwardKernelImpl") < 0) return NULL;
    if (pct_norm_check_param_dtype(in, w, &mixed) < 0) return NULL;
    bool want_i = mask->v[0] != 0, want_w = mask->v[1] != 0 && w, want_b = mask->v[2] != 0 && w;
    int64_t pshape[1] = {C};
    int pdt = w ? w->dtype : in->dtype;
    PCT_TRY_INT(grad_arg(what, grad, in, &g));
    PCT_TRY_INT(pct_norm_as_contig(in, in->dtype, &x));
    PCT_TRY_INT(stat_arg(what, "mean", arg.mean, N * G, PCT_FLOAT64, &mean));
    PCT_TRY_INT(stat_arg(what, "rstd", arg.rstd, N * G, PCT_FLOAT64, &rstd));
    PCT_TRY_INT(pct_norm_as_contig(w, PCT_FLOAT64, &wc));
    if (want_i) PCT_TRY(gi = pct_tensor_empty(in->ndim, in->sizes, in->dtype, PCT_CPU, -1));
    if (want_w) PCT_TRY(gw = pct_tensor_zeros(1, pshape, PCT_FLOAT64));
    if (want_b) PCT_TRY(gb = pct_tensor_zeros(1, pshape, PCT_FLOAT64));
    sums = malloc(sizeof(double) * 2 * (size_t)(N * C > 0 ? N * C : 1));
    if (!sums) { pct_error_nomem(); goto fail; }
    {
        const pct_norm_rows *rows = pct_norm_rows_for(in->dtype);
        int64_t cg = C / G, K = cg * HW, isz = pct_dtype_itemsize[in->dtype];
        const char *gd = pct_tensor_data(g), *xd = pct_tensor_data(x);
        char *gid = gi ? pct_tensor_data(gi) : NULL;
        const double *md = (const double *)pct_tensor_data(mean), *rd = (const double *)pct_tensor_data(rstd);
        const double *wd = wc ? (const double *)pct_tensor_data(wc) : NULL;
        double *ds = sums, *db = sums + N * C;
        int nth = pct_norm_threads(in->numel, N * C);
        PCT_NOGIL_BEGIN
        /* per (n, c): sum of grad * x and of grad */
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t nc = 0; nc < N * C; nc++) rows->dot_sum(gd + nc * HW * isz, xd + nc * HW * isz, HW, &ds[nc], &db[nc]);
        if (gid && K > 0) {
            int nth2 = pct_norm_threads(in->numel, N * G);
            _Pragma("omp parallel for num_threads(nth2) if (nth2 > 1) schedule(static)")
            for (int64_t ng = 0; ng < N * G; ng++) {
                int64_t n = ng / G, c0 = (ng % G) * cg;
                double mu = md[ng], rs = rd[ng], s1 = 0, s2 = 0;
                for (int64_t k = 0; k < cg; k++) {
                    int64_t nc = n * C + c0 + k;
                    double wk = wd ? wd[c0 + k] : 1.0;
                    s1 += wk * db[nc];
                    s2 += wk * (ds[nc] - mu * db[nc]);
                }
                double k2 = -rs * rs * rs * s2 / (double)K, k3 = -rs * s1 / (double)K - mu * k2;
                for (int64_t k = 0; k < cg; k++) {
                    int64_t nc = n * C + c0 + k;
                    rows->lin2(gd + nc * HW * isz, xd + nc * HW * isz, gid + nc * HW * isz, HW,
                               rs * (wd ? wd[c0 + k] : 1.0), k2, k3);
                }
            }
        }
        PCT_NOGIL_END
        double *ow = gw ? (double *)pct_tensor_data(gw) : NULL, *ob = gb ? (double *)pct_tensor_data(gb) : NULL;
        for (int64_t n = 0; n < N; n++)
            for (int64_t ch = 0; ch < C; ch++) {
                int64_t nc = n * C + ch, ng = n * G + ch / cg;
                if (ow) ow[ch] += rd[ng] * (ds[nc] - md[ng] * db[nc]);
                if (ob) ob[ch] += db[nc];
            }
    }
    free(sums);
    sums = NULL;
    PCT_TRY_INT(convert_owned(&gw, pdt));
    PCT_TRY_INT(convert_owned(&gb, pdt));
    return backward_finish(g, x, mean, rstd, wc, gi, gw, gb, true, true);
fail:
    free(sums);
    return backward_finish(g, x, mean, rstd, wc, gi, gw, gb, false, true);
}
