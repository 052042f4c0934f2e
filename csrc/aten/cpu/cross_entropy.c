/* cross_entropy.c: fused cross-entropy with class-index targets over (N, C) logits:
 * log_softmax and nll in one pass forward, and a one-pass backward that recomputes the
 * softmax from the saved per-row logsumexp (no (N, C) log-probabilities are kept).
 *
 * For row i with target t (rows whose target is ignore_index contribute nothing), class
 * weights w (all ones without weight), label smoothing e and lse = logsumexp(x_i):
 *   loss_i = (1 - e) * w_t * (lse - x_t) + e / C * sum_c w_c * (lse - x_c)
 *   d loss_i / d x_c = p_c * ((1 - e) * w_t + e / C * sum(w)) - e / C * w_c - [c == t] * (1 - e) * w_t
 * with p = softmax(x_i). reduction: 0 none, 1 mean (divided by the summed weight of the
 * non-ignored targets, as torch), 2 sum. */
#include "simd_levels.h"
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "norm_rows.h"
#include "fast_exp.h"
#include "../backend.h"
#include "../composite/composite.h"
#include <math.h>
#include <stdlib.h>

#define CE_EXP_float(x) pct_fast_expf(x)
#define CE_EXP_double(x) exp(x)

typedef struct ce_args {
    const char *x;       /* (N, C) logits, contiguous */
    const int64_t *t;    /* N targets */
    const double *w;     /* C class weights or NULL */
    int64_t n, c, ignore;
    double eps, wsum;    /* label smoothing; sum of the class weights (C without weight) */
} ce_args;

typedef double (*ce_row_fwd_fn)(const ce_args *a, int64_t i, double *lse);
typedef void (*ce_row_bwd_fn)(const ce_args *a, int64_t i, double lse, double coef, void *gi);

/* Note: the row max skips NaN (a NaN logit makes the sum, and so the loss, NaN anyway). */
#define PCT_FOREACH_TEMPLATE "cross_entropy_impl.h"
#include "dtype_foreach.h"

static const ce_row_fwd_fn ce_fwd_table[PCT_NUM_DTYPES] = {
#define CE_FWD_ENTRY(E, N, T, C, S) [PCT_##E] = ce_fwd_##N,
    PCT_FORALL_FLOAT_DTYPES(CE_FWD_ENTRY)
};
static const ce_row_bwd_fn ce_bwd_table[PCT_NUM_DTYPES] = {
#define CE_BWD_ENTRY(E, N, T, C, S) [PCT_##E] = ce_bwd_##N,
    PCT_FORALL_FLOAT_DTYPES(CE_BWD_ENTRY)
};

/* The shared checks and conversions: x (N, C) floating, targets (N) Long/Byte in range or
 * ignore_index, weight C values. Fills *a and the owned tensors (released by ce_release). */
typedef struct ce_owned {
    pct_tensor *x, *t, *w;
    pct_tensor *t_host, *w_host; /* another device's targets and weights, copied for the checks and sums (a sync) */
} ce_owned;

static void ce_release(ce_owned *o)
{
    PCT_CLEAR(o->x);
    PCT_CLEAR(o->t);
    PCT_CLEAR(o->w);
    PCT_CLEAR(o->t_host);
    PCT_CLEAR(o->w_host);
}

/* A CPU copy of a device tensor (NULL stays NULL); 0, or -1 with an error. */
static int host_copy(pct_tensor *t, pct_tensor **out)
{
    *out = NULL;
    if (!t) return 0;
    if (!(*out = pct_tensor_empty(t->ndim, t->sizes, t->dtype, PCT_CPU, -1))) return -1;
    if (pct_copy_(*out, t) < 0) { PCT_CLEAR(*out); return -1; }
    return 0;
}

static int ce_prepare(pct_tensor *input, pct_tensor *target, pct_tensor *weight, int64_t ignore, double eps, ce_args *a,
                      ce_owned *o)
{
    char s1[PCT_SHAPE_BUF];
    memset(o, 0, sizeof *o);
    if (input->ndim != 2) {
        pct_error(PCT_ERR_RUNTIME, "_cross_entropy_loss: expected input of shape (N, C), got %s",
                     pct_shape_str(s1, sizeof s1, input->ndim, input->sizes));
        return -1;
    }
    if (pct_norm_check_float_input(input, "cross_entropy") < 0) return -1;
    if (target->dtype != PCT_INT64 && target->dtype != PCT_UINT8) {
        pct_error(PCT_ERR_RUNTIME, "expected target dtype to be Long or Byte, but got %s", pct_dtype_cpp_name[target->dtype]);
        return -1;
    }
    int64_t n = input->sizes[0], c = input->sizes[1];
    if (target->ndim != 1 || target->sizes[0] != n) {
        pct_error(PCT_ERR_VALUE, "Expected input batch_size (%lld) to match target batch_size (%lld).", (long long)n,
                     (long long)(target->ndim ? target->sizes[0] : 0));
        return -1;
    }
    if (weight && (weight->ndim != 1 || weight->numel != c)) {
        pct_error(PCT_ERR_RUNTIME, "weight tensor should be defined either for all %lld classes or no classes but got "
                     "weight tensor of shape: %s", (long long)c, pct_shape_str(s1, sizeof s1, weight->ndim, weight->sizes));
        return -1;
    }
    if (weight && weight->dtype != input->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[input->dtype],
                     pct_dtype_cpp_name[weight->dtype]);
        return -1;
    }
    if (pct_norm_as_contig(input, input->dtype, &o->x) < 0 || pct_norm_as_contig(target, PCT_INT64, &o->t) < 0 ||
        pct_norm_as_contig(weight, PCT_FLOAT64, &o->w) < 0)
        goto fail;
    if (input->device_type != PCT_CPU &&
        (host_copy(o->t, &o->t_host) < 0 || host_copy(o->w, &o->w_host) < 0))
        goto fail;
    const int64_t *tp = (const int64_t *)pct_tensor_data(o->t_host ? o->t_host : o->t);
    for (int64_t i = 0; i < n; i++)
        if (tp[i] != ignore && (tp[i] < 0 || tp[i] >= c)) {
            pct_error(PCT_ERR_INDEX, "Target %lld is out of bounds.", (long long)tp[i]);
            goto fail;
        }
    a->x = pct_tensor_data(o->x);
    a->t = tp;
    a->w = o->w ? (const double *)pct_tensor_data(o->w_host ? o->w_host : o->w) : NULL;
    a->n = n;
    a->c = c;
    a->ignore = ignore;
    a->eps = eps;
    a->wsum = (double)c;
    if (a->w) {
        a->wsum = 0;
        for (int64_t j = 0; j < c; j++) a->wsum += a->w[j];
    }
    return 0;
fail:
    ce_release(o);
    return -1;
}

/* The summed weight of the rows whose target is not ignored (the mean's divisor). */
static double ce_total_weight(const ce_args *a)
{
    double s = 0;
    for (int64_t i = 0; i < a->n; i++)
        if (a->t[i] != a->ignore) s += a->w ? a->w[a->t[i]] : 1.0;
    return s;
}

static int ce_reduction(int64_t r)
{
    if (r < 0 || r > 2) {
        pct_error(PCT_ERR_VALUE, "%lld is not a valid value for reduction", (long long)r);
        return -1;
    }
    return (int)r;
}

/* Note [Device cross entropy]: the entry points are device-neutral up to the rows: the checks (a device's targets and
 * class weights are copied to the host for the bounds check and the sums, as few bytes as there are rows), the
 * results on the input's device and the reduction (sum through the device's own kernels) are the same everywhere; on
 * a device other than the CPU the rows are that backend's cross_entropy, handed a pct_ce_call
 * (cross_entropy_call.h). */
int pct_cross_entropy_on_device(const pct_ce_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->cross_entropy) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "cross_entropy is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->cross_entropy(call);
}

/* the rows' losses (float64 on the device) reduced as torch: none, mean over `total` weight, sum; in dtype */
static pct_tensor *device_loss(pct_tensor *rows, int red, double total, int dtype)
{
    if (red == 0) return pct_to_dtype(rows, dtype, false);
    /* the device's own sum and mul (Note [Composite ops]: no autograd is recorded inside a kernel) */
    pct_tensor *sum = pct_comp_call1(PCT_OP_sum, rows), *scaled = sum, *scale = NULL;
    if (sum && red == 1) {
        scale = pct_tensor_scalar(PCT_FLOAT64, 1.0 / total, 0, true);
        scaled = scale ? pct_comp_mul(sum, scale, NULL) : NULL;
        PCT_DECREF(sum);
    }
    PCT_XDECREF(scale);
    pct_tensor *r = scaled ? pct_to_dtype(scaled, dtype, false) : NULL;
    PCT_XDECREF(scaled);
    return r;
}

pct_object *pct_cpu_cross_entropy_loss(pct_call *c)
{
    PCT_ARGS(cross_entropy_loss);
    pct_tensor *input = arg.input, *target = arg.target, *weight = (arg.weight == NULL) ? NULL : arg.weight;
    int red = ce_reduction(arg.reduction);
    if (red < 0) return NULL;
    ce_args a;
    ce_owned o;
    pct_tensor *loss = NULL, *lse = NULL, *rows = NULL;
    if (ce_prepare(input, target, weight, arg.ignore_index, arg.label_smoothing, &a, &o) < 0) return NULL;
    int ldt = pct_dtype_is_reduced_float(input->dtype) ? PCT_FLOAT32 : input->dtype;
    PCT_TRY(lse = pct_tensor_empty(1, &a.n, ldt, input->device_type, input->device_index));
    PCT_TRY(rows = pct_tensor_empty(1, &a.n, PCT_FLOAT64, input->device_type, input->device_index));
    if (input->device_type != PCT_CPU) { /* Note [Device cross entropy] */
        const pct_ce_call call = {.dtype = input->dtype, .device_index = input->device_index, .n = a.n, .c = a.c,
                                  .ignore = a.ignore, .eps = a.eps, .wsum = a.wsum, .x = pct_tensor_data(o.x),
                                  .target = (const int64_t *)pct_tensor_data(o.t),
                                  .weight = o.w ? (const double *)pct_tensor_data(o.w) : NULL,
                                  .lse = pct_tensor_data(lse), .rows = (double *)pct_tensor_data(rows)};
        if (a.n > 0 && pct_cross_entropy_on_device(&call, input->device_type) < 0) goto fail;
        PCT_TRY(loss = device_loss(rows, red, red == 1 ? ce_total_weight(&a) : 1.0, input->dtype));
    } else {
        ce_row_fwd_fn fwd = ce_fwd_table[input->dtype];
        double *lv = (double *)pct_tensor_data(rows);
        char *ld = pct_tensor_data(lse);
        int64_t lsz = pct_dtype_itemsize[ldt], n = a.n;
        int nth = pct_norm_threads(a.n * a.c, a.n);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t i = 0; i < n; i++) {
            double l;
            lv[i] = fwd(&a, i, &l);
            pct_store_double(ld + i * lsz, ldt, l);
        }
        PCT_NOGIL_END
        if (red == 0) {
            PCT_TRY(loss = pct_to_dtype(rows, input->dtype, false));
        } else {
            double s = 0;
            for (int64_t i = 0; i < n; i++) s += lv[i];
            if (red == 1) s /= ce_total_weight(&a);
            PCT_TRY(loss = pct_tensor_scalar(input->dtype, s, 0, true));
        }
    }
    PCT_DECREF(rows);
    ce_release(&o);
    return pct_norm_tuple_steal(2, (pct_tensor *[]){loss, lse});
fail:
    ce_release(&o);
    PCT_XDECREF(rows);
    PCT_XDECREF(lse);
    PCT_XDECREF(loss);
    return NULL;
}

pct_object *pct_cpu_cross_entropy_loss_backward(pct_call *c)
{
    PCT_ARGS(cross_entropy_loss_backward);
    pct_tensor *grad = arg.grad_output, *input = arg.input, *target = arg.target, *weight = (arg.weight == NULL) ? NULL : arg.weight;
    pct_tensor *lse_in = arg.lse, *lse = NULL, *g = NULL, *gi = NULL;
    int red = ce_reduction(arg.reduction);
    if (red < 0) return NULL;
    ce_args a;
    ce_owned o;
    if (ce_prepare(input, target, weight, arg.ignore_index, arg.label_smoothing, &a, &o) < 0) return NULL;
    if (lse_in->numel != a.n || !pct_dtype_is_floating(lse_in->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "_cross_entropy_loss_backward: expected %lld floating point logsumexp values, got %lld",
                     (long long)a.n, (long long)lse_in->numel);
        goto fail;
    }
    if (!pct_dtype_is_floating(grad->dtype) || (red == 0 ? grad->numel != a.n : grad->numel != 1)) {
        pct_error(PCT_ERR_RUNTIME, "_cross_entropy_loss_backward: expected a floating point gradient of %lld values, got %lld",
                     (long long)(red == 0 ? a.n : 1), (long long)grad->numel);
        goto fail;
    }
    PCT_TRY_INT(pct_norm_as_contig(lse_in, PCT_FLOAT64, &lse));
    PCT_TRY_INT(pct_norm_as_contig(grad, PCT_FLOAT64, &g));
    PCT_TRY(gi = pct_tensor_empty(2, input->sizes, input->dtype, input->device_type, input->device_index));
    if (input->device_type != PCT_CPU) { /* Note [Device cross entropy] */
        const pct_ce_call call = {.dtype = input->dtype, .device_index = input->device_index, .backward = true,
                                  .n = a.n, .c = a.c, .ignore = a.ignore, .eps = a.eps, .wsum = a.wsum,
                                  .x = pct_tensor_data(o.x), .target = (const int64_t *)pct_tensor_data(o.t),
                                  .weight = o.w ? (const double *)pct_tensor_data(o.w) : NULL,
                                  .lse = pct_tensor_data(lse), .grad = (const double *)pct_tensor_data(g),
                                  .grad_stride = red == 0 ? 1 : 0, .scale = red == 1 ? 1.0 / ce_total_weight(&a) : 1.0,
                                  .grad_input = pct_tensor_data(gi)};
        if (a.n * a.c > 0 && pct_cross_entropy_on_device(&call, input->device_type) < 0) goto fail;
    } else {
        ce_row_bwd_fn bwd = ce_bwd_table[input->dtype];
        const double *lv = (const double *)pct_tensor_data(lse), *gv = (const double *)pct_tensor_data(g);
        double scale = red == 1 ? 1.0 / ce_total_weight(&a) : 1.0;
        void *gd = pct_tensor_data(gi);
        int64_t n = a.n;
        int nth = pct_norm_threads(a.n * a.c, a.n);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t i = 0; i < n; i++) bwd(&a, i, lv[i], (red == 0 ? gv[i] : gv[0]) * scale, gd);
        PCT_NOGIL_END
    }
    PCT_DECREF(lse);
    PCT_DECREF(g);
    ce_release(&o);
    return (pct_object *)gi;
fail:
    ce_release(&o);
    PCT_XDECREF(lse);
    PCT_XDECREF(g);
    PCT_XDECREF(gi);
    return NULL;
}
