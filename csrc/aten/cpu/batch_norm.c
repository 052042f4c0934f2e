/* batch_norm.c: fused batch norm, forward and backward (torch's native_batch_norm and
 * native_batch_norm_backward).
 *
 * The input (N, C, *) is walked as N * C contiguous blocks of L = prod(*) elements; statistics
 * per channel c are sums over the N blocks (n, c), computed per block in parallel (double
 * accumulation, two passes) and then added per channel. Training updates running_mean and
 * running_var in place with the unbiased variance (torch's rule); they are small buffers and
 * their version counters are left alone, so a backward formula that saved them (eval mode)
 * never sees a spurious "modified by an inplace operation".
 *
 * Backward per channel (M = N * L, xc = x - mean, dot = sum(grad * xc), sg = sum(grad)):
 *   training:  grad_input = invstd * w * (grad - sg / M - xc * invstd^2 * dot / M)
 *   eval:      grad_input = invstd * w * grad           (mean, invstd from the running stats)
 *   grad_weight = dot * invstd,  grad_bias = sg
 * Each is one linear pass grad * k1 + x * k2 + k3 per block (norm_rows.h). */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "norm_rows.h"
#include "../backend.h"
#include <math.h>
#include <stdlib.h>

/* A per-channel vector (weight, running stats...): numel C, 1-D (any stride) or contiguous. */
static int channel_vec_ok(const char *name, const pct_tensor *t, int64_t C)
{
    if (!t) return 0;
    if (t->numel != C) {
        pct_error(PCT_ERR_RUNTIME, "%s should contain %lld elements not %lld", name, (long long)C, (long long)t->numel);
        return -1;
    }
    if (t->ndim > 1 && !pct_tensor_is_contiguous(t)) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected a 1-D or contiguous tensor", name);
        return -1;
    }
    return 0;
}

static char *channel_ptr(const pct_tensor *t, int64_t i)
{
    int64_t step = t->ndim == 1 ? t->strides[0] : 1;
    return pct_tensor_data(t) + i * step * pct_dtype_itemsize[t->dtype];
}

static double channel_get(const pct_tensor *t, int64_t i, double dflt)
{
    return t ? pct_load_as_double(channel_ptr(t, i), t->dtype) : dflt;
}

/* Note [Batch norm parameter dtypes]
 * torch's CPU rule for the per-channel tensors of a batch norm (weight, bias, running and saved
 * statistics): the first defined one, in `params` order, decides. With the input's dtype,
 * every defined one must have it ("expected scalar type X but found Y", Y the first offender in
 * the kernel's reading order `order`, after grad_out). Otherwise the call is mixed: each must be
 * float32, and the input bfloat16 or float16 (the statistics and parameter gradients are then
 * float32); those checks come first. */
static int bn_check_dtypes(const pct_tensor *in, const pct_tensor *grad, pct_tensor *const *params, int n,
                           const int *order, bool *mixed)
{
    const pct_tensor *first = NULL;
    for (int k = 0; k < n && !first; k++) first = params[k];
    *mixed = first && first->dtype != in->dtype;
    if (*mixed) {
        for (int k = 0; k < n; k++)
            if (params[k] && params[k]->dtype != PCT_FLOAT32) {
                pct_error_str(PCT_ERR_RUNTIME, "mixed dtype (CPU): expect parameter to have scalar type of Float");
                return -1;
            }
        if (!pct_dtype_is_reduced_float(in->dtype)) {
            pct_error_str(PCT_ERR_RUNTIME, "mixed dtype (CPU): all inputs must share same datatype.");
            return -1;
        }
    }
    /* then the kernel's reads: grad_out (backward), and the parameters unless mixed */
    const pct_tensor *bad = grad && grad->dtype != in->dtype ? grad : NULL;
    for (int k = 0; k < n && !bad && !*mixed; k++)
        if (params[order[k]] && params[order[k]]->dtype != in->dtype) bad = params[order[k]];
    if (bad) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[in->dtype],
                     pct_dtype_cpp_name[bad->dtype]);
        return -1;
    }
    return 0;
}

typedef struct bn_shape {
    int64_t N, C, L;
} bn_shape;

static void bn_shape_of(const pct_tensor *in, bn_shape *s)
{
    s->N = in->ndim > 0 ? in->sizes[0] : 1;
    s->C = in->ndim > 1 ? in->sizes[1] : 0;
    s->L = 1;
    for (int i = 2; i < in->ndim; i++) s->L *= in->sizes[i];
}

/* Per-channel sums over the N blocks: out[c] = sum_n f(block (n, c)), computed per block in
 * parallel into `part` (N * C doubles) and added in block order (deterministic). */
static void channel_sums(const pct_norm_rows *rows, const char *xd, int64_t isz, bn_shape s, const double *mean,
                         double *part, double *out)
{
    int64_t units = s.N * s.C;
    int nth = pct_norm_threads(units * s.L, units);
    _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
    for (int64_t nc = 0; nc < units; nc++) {
        const char *blk = xd + nc * s.L * isz;
        part[nc] = mean ? rows->sqdev(blk, s.L, mean[nc % s.C]) : rows->sum(blk, s.L);
    }
    for (int64_t c = 0; c < s.C; c++) out[c] = 0;
    for (int64_t nc = 0; nc < units; nc++) out[nc % s.C] += part[nc];
}

/* y = x * a[c] + b[c] over every block. */
static void channel_affine(const pct_norm_rows *rows, const char *xd, char *yd, int64_t isz, bn_shape s, const double *a,
                           const double *b)
{
    int64_t units = s.N * s.C;
    int nth = pct_norm_threads(units * s.L, units);
    _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
    for (int64_t nc = 0; nc < units; nc++)
        rows->scale_shift(xd + nc * s.L * isz, yd + nc * s.L * isz, s.L, a[nc % s.C], b[nc % s.C]);
}

/* Note [Device batch norm]: the entry points are device-neutral up to the loops: checks, dtypes, results on the
 * input's device. On another device the per-channel vectors go to the backend's batch_norm as float64 arrays (made
 * here, and the running statistics copied back into their own dtype with their version counters left alone, as the
 * CPU's in-place update leaves them), so one kernel serves every parameter dtype. */
int pct_batch_norm_on_device(const pct_bn_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->batch_norm) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "batch_norm is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->batch_norm(call);
}

/* a per-channel vector as C contiguous float64 values on like's device (NULL stays NULL); 0, or -1 with an error */
static int channel_f64(pct_tensor *t, pct_tensor **out)
{
    *out = NULL;
    if (!t) return 0;
    pct_tensor *flat = pct_tensor_view_of(t, 1, &t->numel, t->ndim == 1 ? t->strides : (const int64_t[]){1}, t->offset);
    int rc = flat ? pct_norm_as_contig(flat, PCT_FLOAT64, out) : -1;
    PCT_XDECREF(flat);
    return rc;
}

static double *f64_data(const pct_tensor *t) { return t ? (double *)pct_tensor_data(t) : NULL; }

/* the running statistic t = its float64 copy f, version counter unchanged (Note [Device batch norm]) */
static int write_back_running(pct_tensor *t, pct_tensor *f)
{
    if (!t) return 0;
    pct_tensor *flat = pct_tensor_view_of(t, 1, &t->numel, t->ndim == 1 ? t->strides : (const int64_t[]){1}, t->offset);
    if (!flat) return -1;
    const long version = atomic_load(&t->version->value);
    int rc = pct_copy_(flat, f);
    atomic_store(&t->version->value, version);
    PCT_DECREF(flat);
    return rc;
}

static pct_object *device_forward(pct_tensor *in, pct_tensor *x, pct_tensor *w, pct_tensor *b, pct_tensor *rm,
                                  pct_tensor *rv, bool training, double momentum, double eps, bn_shape s, int sdt,
                                  bool f32)
{
    pct_tensor *w64 = NULL, *b64 = NULL, *rm64 = NULL, *rv64 = NULL, *mean = NULL, *inv = NULL, *out = NULL;
    pct_tensor *smean = NULL, *sinv = NULL;
    pct_object *r = NULL;
    int64_t C = s.C, zero = 0;
    if (channel_f64(w, &w64) < 0 || channel_f64(b, &b64) < 0 || channel_f64(rm, &rm64) < 0 ||
        channel_f64(rv, &rv64) < 0)
        goto done;
    if (!(mean = pct_tensor_empty(1, &C, PCT_FLOAT64, in->device_type, in->device_index)) ||
        !(inv = pct_tensor_empty(1, &C, PCT_FLOAT64, in->device_type, in->device_index)) ||
        !(out = pct_tensor_empty(in->ndim, in->sizes, in->dtype, in->device_type, in->device_index)))
        goto done;
    const pct_bn_call call = {.dtype = in->dtype, .device_index = in->device_index, .training = training, .f32 = f32,
                              .N = s.N, .C = s.C, .L = s.L, .eps = eps, .momentum = momentum,
                              .x = pct_tensor_data(x), .out = pct_tensor_data(out), .weight = f64_data(w64),
                              .bias = f64_data(b64), .running_mean = f64_data(rm64), .running_var = f64_data(rv64),
                              .mean = f64_data(mean), .invstd = f64_data(inv)};
    if (C > 0 && pct_batch_norm_on_device(&call, in->device_type) < 0) goto done;
    if (training && (write_back_running(rm, rm64) < 0 || write_back_running(rv, rv64) < 0)) goto done;
    if (training) {
        if (!(smean = pct_to_dtype(mean, sdt, false)) || !(sinv = pct_to_dtype(inv, sdt, false))) goto done;
    } else if (!(smean = pct_tensor_empty(1, &zero, sdt, in->device_type, in->device_index)) ||
               !(sinv = pct_tensor_empty(1, &zero, sdt, in->device_type, in->device_index))) {
        goto done;
    }
    r = pct_norm_tuple_steal(3, (pct_tensor *[]){out, smean, sinv});
    out = smean = sinv = NULL;
done:
    PCT_XDECREF(w64); PCT_XDECREF(b64); PCT_XDECREF(rm64); PCT_XDECREF(rv64);
    PCT_XDECREF(mean); PCT_XDECREF(inv); PCT_XDECREF(out); PCT_XDECREF(smean); PCT_XDECREF(sinv);
    return r;
}

pct_object *pct_cpu_native_batch_norm(pct_call *c)
{
    PCT_ARGS(native_batch_norm);
    pct_tensor *in = arg.input;
    pct_tensor *w = (arg.weight == NULL) ? NULL : arg.weight, *b = (arg.bias == NULL) ? NULL : arg.bias;
    pct_tensor *rm = (arg.running_mean == NULL) ? NULL : arg.running_mean, *rv = (arg.running_var == NULL) ? NULL : arg.running_var;
    bool training = arg.training;
    double momentum = arg.momentum, eps = arg.eps;
    pct_tensor *x = NULL, *out = NULL, *smean = NULL, *sinv = NULL;
    double *buf = NULL;
    bn_shape s;
    bool mixed = false;
    if (!rm != !rv) { /* torch's first check, before any shape */
        pct_error_str(PCT_ERR_VALUE, "running_mean and running_var must either both be None or neither be None");
        return NULL;
    }
    /* torch's order: the channel dim (input.size(1)), the dtype, then the parameters' sizes */
    if (in->ndim == 1) {
        pct_error_str(PCT_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
        return NULL;
    }
    if (in->ndim < 2) {
        pct_error(PCT_ERR_RUNTIME, "batch_norm: expected an input with at least 2 dimensions (N, C, ...), got %d",
                     in->ndim);
        return NULL;
    }
    if (pct_norm_check_float_input(in, "batch_norm") < 0) return NULL;
    bn_shape_of(in, &s);
    if (channel_vec_ok("running_mean", rm, s.C) < 0 || channel_vec_ok("running_var", rv, s.C) < 0 ||
        channel_vec_ok("weight", w, s.C) < 0 || channel_vec_ok("bias", b, s.C) < 0)
        return NULL;
    pct_tensor *params[4] = {w, b, rm, rv};
    /* (training reads the running statistics first) */
    if (bn_check_dtypes(in, NULL, params, 4, training ? (const int[]){2, 3, 0, 1} : (const int[]){0, 1, 2, 3}, &mixed) <
        0)
        return NULL;
    if (!training && (!rm || !rv)) {
        pct_error(PCT_ERR_RUNTIME, "%s must be defined in evaluation mode", rm ? "running_var" : "running_mean");
        return NULL;
    }
    int sdt = mixed ? PCT_FLOAT32 : in->dtype;
    bool f32 = pct_dtype_is_reduced_float(in->dtype) || in->dtype == PCT_FLOAT32;
    int64_t C = s.C, zero = 0, M = s.N * s.L;
    PCT_TRY_INT(pct_norm_as_contig(in, in->dtype, &x));
    if (in->device_type != PCT_CPU) { /* Note [Device batch norm] */
        pct_object *r = device_forward(in, x, w, b, rm, rv, training, momentum, eps, s, sdt, f32);
        PCT_DECREF(x);
        return r;
    }
    PCT_TRY(out = pct_tensor_empty(in->ndim, in->sizes, in->dtype, PCT_CPU, -1));
    PCT_TRY(smean = pct_tensor_empty(1, training ? &C : &zero, sdt, PCT_CPU, -1));
    PCT_TRY(sinv = pct_tensor_empty(1, training ? &C : &zero, sdt, PCT_CPU, -1));
    /* mean, invstd, a, b (C each), then N * C partial sums */
    buf = malloc(sizeof(double) * (size_t)(4 * C + s.N * C + 1));
    if (!buf) { pct_error_nomem(); goto fail; }
    {
        const pct_norm_rows *rows = pct_norm_rows_for(in->dtype);
        double *mean = buf, *inv = buf + C, *ka = buf + 2 * C, *kb = buf + 3 * C, *part = buf + 4 * C;
        int64_t isz = pct_dtype_itemsize[in->dtype];
        const char *xd = pct_tensor_data(x);
        double *var = ka; /* scratch until the affine constants are made */
        if (training) {
            PCT_NOGIL_BEGIN
            channel_sums(rows, xd, isz, s, NULL, part, mean);
            for (int64_t ch = 0; ch < C; ch++) mean[ch] = M ? mean[ch] / (double)M : NAN;
            channel_sums(rows, xd, isz, s, mean, part, var);
            PCT_NOGIL_END
            for (int64_t ch = 0; ch < C; ch++) {
                double vs = var[ch];
                inv[ch] = 1.0 / sqrt(vs / (double)M + eps);
                if (f32) {
                    inv[ch] = (float)inv[ch];
                    mean[ch] = (float)mean[ch];
                }
                pct_store_double(pct_tensor_data(smean) + ch * pct_dtype_itemsize[sdt], sdt, mean[ch]);
                pct_store_double(pct_tensor_data(sinv) + ch * pct_dtype_itemsize[sdt], sdt, inv[ch]);
                if (rm) {
                    char *p = channel_ptr(rm, ch);
                    pct_store_double(p, rm->dtype, momentum * mean[ch] + (1 - momentum) * pct_load_as_double(p, rm->dtype));
                }
                if (rv) {
                    char *p = channel_ptr(rv, ch);
                    double unbiased = vs / (double)(M - 1);
                    pct_store_double(p, rv->dtype, momentum * unbiased + (1 - momentum) * pct_load_as_double(p, rv->dtype));
                }
            }
        } else {
            for (int64_t ch = 0; ch < C; ch++) {
                mean[ch] = channel_get(rm, ch, 0);
                inv[ch] = 1.0 / sqrt(channel_get(rv, ch, 1) + eps);
                if (f32) inv[ch] = (float)inv[ch];
            }
        }
        for (int64_t ch = 0; ch < C; ch++) {
            ka[ch] = inv[ch] * channel_get(w, ch, 1.0);
            kb[ch] = channel_get(b, ch, 0.0) - mean[ch] * ka[ch];
        }
        PCT_NOGIL_BEGIN
        channel_affine(rows, xd, pct_tensor_data(out), isz, s, ka, kb);
        PCT_NOGIL_END
    }
    free(buf);
    PCT_DECREF(x);
    return pct_norm_tuple_steal(3, (pct_tensor *[]){out, smean, sinv});
fail:
    free(buf);
    PCT_XDECREF(x);
    PCT_XDECREF(out);
    PCT_XDECREF(smean);
    PCT_XDECREF(sinv);
    return NULL;
}

pct_object *pct_cpu_native_batch_norm_backward(pct_call *c)
{
    PCT_ARGS(native_batch_norm_backward);
    char s1[PCT_SHAPE_BUF], s2[PCT_SHAPE_BUF];
    pct_tensor *grad = arg.grad_out, *in = arg.input;
    pct_tensor *w = (arg.weight == NULL) ? NULL : arg.weight;
    pct_tensor *rm = (arg.running_mean == NULL) ? NULL : arg.running_mean, *rv = (arg.running_var == NULL) ? NULL : arg.running_var;
    pct_tensor *sm = (arg.save_mean == NULL) ? NULL : arg.save_mean, *si = (arg.save_invstd == NULL) ? NULL : arg.save_invstd;
    bool train = arg.train;
    double eps = arg.eps;
    const pct_int_list *mask = &arg.output_mask;
    pct_tensor *g = NULL, *x = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    double *buf = NULL;
    bn_shape s;
    bool mixed = false;
    bn_shape_of(in, &s);
    int64_t C = s.C, M = s.N * s.L;
    if (in->ndim < 2) {
        pct_error(PCT_ERR_RUNTIME, "native_batch_norm_backward: expected an input with at least 2 dimensions, got %d",
                     in->ndim);
        return NULL;
    }
    if (pct_norm_check_float_input(in, "batch_norm_backward") < 0) return NULL;
    pct_tensor *stats_mean = train ? sm : rm, *stats_var = train ? si : rv;
    if (!stats_mean || !stats_var) {
        pct_error(PCT_ERR_RUNTIME, "native_batch_norm_backward: %s are required in %s mode",
                     train ? "save_mean and save_invstd" : "running_mean and running_var", train ? "training" : "evaluation");
        return NULL;
    }
    if (channel_vec_ok("weight", w, C) < 0 || channel_vec_ok(train ? "save_mean" : "running_mean", stats_mean, C) < 0 ||
        channel_vec_ok(train ? "save_invstd" : "running_var", stats_var, C) < 0)
        return NULL;
    pct_tensor *params[5] = {w, rm, rv, sm, si}; /* the kernel reads the saved statistics first in training */
    const int *order = train ? (const int[]){3, 4, 1, 2, 0} : (const int[]){1, 2, 3, 4, 0};
    if (bn_check_dtypes(in, grad, params, 5, order, &mixed) < 0) return NULL;
    if (grad->ndim != in->ndim || memcmp(grad->sizes, in->sizes, sizeof(int64_t) * (size_t)in->ndim) != 0) {
        pct_error(PCT_ERR_RUNTIME, "native_batch_norm_backward: grad_out of shape %s does not match input of shape %s",
                     pct_shape_str(s1, sizeof s1, grad->ndim, grad->sizes), pct_shape_str(s2, sizeof s2, in->ndim, in->sizes));
        return NULL;
    }
    bool want_i = mask->v[0] != 0, want_w = mask->v[1] != 0, want_b = mask->v[2] != 0;
    int pdt = mixed ? PCT_FLOAT32 : in->dtype;
    PCT_TRY_INT(pct_norm_as_contig(grad, in->dtype, &g));
    PCT_TRY_INT(pct_norm_as_contig(in, in->dtype, &x));
    if (want_i) PCT_TRY(gi = pct_tensor_empty(in->ndim, in->sizes, in->dtype, in->device_type, in->device_index));
    if (want_w) PCT_TRY(gw = pct_tensor_empty(1, &C, PCT_FLOAT64, in->device_type, in->device_index));
    if (want_b) PCT_TRY(gb = pct_tensor_empty(1, &C, PCT_FLOAT64, in->device_type, in->device_index));
    if (in->device_type != PCT_CPU) { /* Note [Device batch norm] */
        pct_tensor *w64 = NULL, *m64 = NULL, *v64 = NULL, *k = NULL;
        const int64_t C3 = 3 * C;
        int rc = -1;
        if (channel_f64(w, &w64) == 0 && channel_f64(stats_mean, &m64) == 0 && channel_f64(stats_var, &v64) == 0 &&
            (k = pct_tensor_empty(1, &C3, PCT_FLOAT64, in->device_type, in->device_index))) {
            const pct_bn_call call = {.dtype = in->dtype, .device_index = in->device_index, .backward = true,
                                      .training = train, .N = s.N, .C = C, .L = s.L, .eps = eps,
                                      .x = pct_tensor_data(x), .grad = pct_tensor_data(g),
                                      .out = gi ? pct_tensor_data(gi) : NULL, .weight = f64_data(w64),
                                      .mean = f64_data(m64), .invstd = f64_data(v64), .invert_var = !train,
                                      .grad_weight = f64_data(gw), .grad_bias = f64_data(gb), .k = f64_data(k)};
            rc = C > 0 ? pct_batch_norm_on_device(&call, in->device_type) : 0;
        }
        PCT_XDECREF(w64); PCT_XDECREF(m64); PCT_XDECREF(v64); PCT_XDECREF(k);
        if (rc < 0) goto fail;
        goto convert;
    }
    /* mean, invstd, dot, sg, k1, k2, k3 (C each), then 2 * N * C block sums */
    buf = malloc(sizeof(double) * (size_t)(7 * C + 2 * s.N * C + 1));
    if (!buf) { pct_error_nomem(); goto fail; }
    {
        const pct_norm_rows *rows = pct_norm_rows_for(in->dtype);
        double *mean = buf, *inv = buf + C, *dot = buf + 2 * C, *sg = buf + 3 * C;
        double *k1 = buf + 4 * C, *k2 = buf + 5 * C, *k3 = buf + 6 * C, *ds = buf + 7 * C, *db = ds + s.N * C;
        int64_t isz = pct_dtype_itemsize[in->dtype], units = s.N * C;
        const char *gd = pct_tensor_data(g), *xd = pct_tensor_data(x);
        for (int64_t ch = 0; ch < C; ch++) {
            mean[ch] = channel_get(stats_mean, ch, 0);
            inv[ch] = train ? channel_get(stats_var, ch, 1) : 1.0 / sqrt(channel_get(stats_var, ch, 1) + eps);
        }
        int nth = pct_norm_threads(units * s.L, units);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t nc = 0; nc < units; nc++)
            rows->dot_sum(gd + nc * s.L * isz, xd + nc * s.L * isz, s.L, &ds[nc], &db[nc]);
        PCT_NOGIL_END
        for (int64_t ch = 0; ch < C; ch++) dot[ch] = sg[ch] = 0;
        for (int64_t nc = 0; nc < units; nc++) {
            dot[nc % C] += ds[nc];
            sg[nc % C] += db[nc];
        }
        for (int64_t ch = 0; ch < C; ch++) {
            dot[ch] -= mean[ch] * sg[ch];
            double wc = channel_get(w, ch, 1.0);
            k1[ch] = inv[ch] * wc;
            if (train && M > 0) {
                k2[ch] = -inv[ch] * inv[ch] * inv[ch] * wc * dot[ch] / (double)M;
                k3[ch] = -inv[ch] * wc * sg[ch] / (double)M - mean[ch] * k2[ch];
            } else {
                k2[ch] = 0;
                k3[ch] = 0;
            }
            if (gw) ((double *)pct_tensor_data(gw))[ch] = dot[ch] * inv[ch];
            if (gb) ((double *)pct_tensor_data(gb))[ch] = sg[ch];
        }
        if (gi) {
            char *gid = pct_tensor_data(gi);
            PCT_NOGIL_BEGIN
            _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
            for (int64_t nc = 0; nc < units; nc++)
                rows->lin2(gd + nc * s.L * isz, xd + nc * s.L * isz, gid + nc * s.L * isz, s.L, k1[nc % C], k2[nc % C],
                           k3[nc % C]);
            PCT_NOGIL_END
        }
    }
    free(buf);
    buf = NULL;
convert:;
    pct_tensor **outs[2] = {&gw, &gb};
    for (int k = 0; k < 2; k++)
        if (*outs[k]) {
            pct_tensor *t = pct_to_dtype(*outs[k], pdt, false);
            PCT_SETREF(*outs[k], t);
            if (!t) goto fail;
        }
    PCT_DECREF(g);
    PCT_DECREF(x);
    return pct_norm_tuple_steal(3, (pct_tensor *[]){gi, gw, gb});
fail:
    free(buf);
    PCT_XDECREF(g);
    PCT_XDECREF(x);
    PCT_XDECREF(gi);
    PCT_XDECREF(gw);
    PCT_XDECREF(gb);
    return NULL;
}
