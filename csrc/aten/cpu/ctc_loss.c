/* ctc_loss.c: the CTC loss (torch's _ctc_loss and _ctc_loss_backward on the CPU).
 *
 * Note [CTC in log space]: Graves et al. (2006). For batch item b with input length T_b and
 * target l (length L_b), the extended target l' puts a blank before, between and after the
 * labels (2 L_b + 1 states; state s is the blank when s is even, l[s / 2] otherwise). The
 * forward variables log_alpha[b, t, s] (eq. 6, 7) and backward variables log_beta (eq. 10, 11) are
 * log-sum-exps of two or three predecessors (the third only when l'[s] differs from l'[s - 2]),
 * written as torch writes them (max subtracted, -inf guarded), so log_alpha, the loss
 * -log(alpha[T-1, 2L] + alpha[T-1, 2L-1]) (eq. 8) and the gradient with respect to log_probs
 * (eq. 16: exp(lp) - exp(log(sum over the states of label c of alpha beta) + nll - lp), times the
 * incoming gradient) are torch's. zero_infinity gives zero gradients to items whose loss is
 * infinite (no alignment exists). Batch items are independent and run on OpenMP threads. */
#include "spatial.h"
#include "norm_rows.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct ctc_geom {
    int64_t tmax, batch, labels, blank, maxl, states;
    const int64_t *il, *tl;   /* input / target lengths per item */
    const int64_t *tgt;       /* targets (int64) */
    int64_t *toff;            /* offset of item b's targets */
    int64_t tstride;          /* step between consecutive targets of one item */
} ctc_geom;

static inline int64_t prime(const ctc_geom *g, int64_t b, int64_t s)
{
    return (s % 2 == 0) ? g->blank : g->tgt[g->toff[b] + g->tstride * (s / 2)];
}

#define CTC_E FLOAT32
#define CTC_T float
#include "ctc_loss_impl.h"
#define CTC_E FLOAT64
#define CTC_T double
#include "ctc_loss_impl.h"

/* Checks (torch's texts) and the geometry; *owned receives the int64 copies to release. -1 with exception. */
/* A contiguous int64 copy of an integral tensor (a new reference). */
static pct_tensor *long_contig(pct_tensor *t) { return t->dtype == PCT_INT64 ? pct_contiguous(t) : pct_to_dtype(t, PCT_INT64, false); }

static int ctc_setup(pct_tensor *lp, pct_tensor *targets, pct_tensor *ilt, pct_tensor *tlt, int64_t blank, ctc_geom *g,
                     pct_tensor **owned)
{
    const char *from = "(while checking arguments for ctc_loss_allocate_outputs)";
    memset(g, 0, sizeof *g);
    /* targets of any real dtype are read as int64 (torch converts them too) */
    PCT_CHECK(lp->ndim == 3, PCT_ERR_RUNTIME,
              "Expected 3-dimensional tensor, but got %d-dimensional tensor for argument #1 'log_probs' %s", lp->ndim, from);
    PCT_CHECK(targets->ndim >= 1 && targets->ndim <= 2, PCT_ERR_RUNTIME,
              "Expected 1 to 2 dimensions, but got %d-dimensional tensor for argument #2 'targets' %s", targets->ndim, from);
    PCT_CHECK(pct_dtype_is_floating(lp->dtype) && !pct_dtype_is_reduced_float(lp->dtype), PCT_ERR_NOT_IMPLEMENTED,
              "\"ctc_loss_cpu\" not implemented for '%s'", pct_dtype_cpp_name[lp->dtype]);
    PCT_CHECK(!pct_dtype_is_floating(ilt->dtype) && !pct_dtype_is_floating(tlt->dtype), PCT_ERR_RUNTIME,
              "input_lengths and target_lengths must be integral");
    g->tmax = lp->sizes[0];
    g->batch = lp->sizes[1];
    g->labels = lp->sizes[2];
    g->blank = blank;
    PCT_CHECK(blank >= 0 && blank < g->labels, PCT_ERR_RUNTIME, "blank must be in label range");
    PCT_CHECK(ilt->numel == g->batch, PCT_ERR_RUNTIME, "input_lengths must be of size batch_size");
    PCT_CHECK(tlt->numel == g->batch, PCT_ERR_RUNTIME, "target_lengths must be of size batch_size");
    PCT_TRY(owned[0] = long_contig(ilt));
    PCT_TRY(owned[1] = long_contig(tlt));
    PCT_TRY(owned[2] = long_contig(targets));
    g->il = (const int64_t *)pct_tensor_data(owned[0]);
    g->tl = (const int64_t *)pct_tensor_data(owned[1]);
    g->tgt = (const int64_t *)pct_tensor_data(owned[2]);
    g->toff = malloc(sizeof(int64_t) * (size_t)(g->batch + 1));
    if (!g->toff) { pct_error_nomem(); goto fail; }
    int64_t pos = 0;
    for (int64_t b = 0; b < g->batch; b++) {
        PCT_CHECK(g->tl[b] >= 0, PCT_ERR_RUNTIME, "Expected target_lengths to have value at least 0, but got value "
                  "%lld %s", (long long)g->tl[b], from);
        if (g->tl[b] > g->maxl) g->maxl = g->tl[b];
        if (targets->ndim == 1) {
            g->toff[b] = pos;
            pos += g->tl[b];
        } else {
            g->toff[b] = b * (targets->sizes[1]);
        }
    }
    g->tstride = 1;
    if (targets->ndim == 1) {
        PCT_CHECK(targets->sizes[0] == pos, PCT_ERR_RUNTIME, "Expected tensor to have size %lld at dimension 0, but "
                  "got size %lld for argument #2 'targets' %s", (long long)pos, (long long)targets->sizes[0], from);
    } else {
        PCT_CHECK(targets->sizes[0] == g->batch, PCT_ERR_RUNTIME, "Expected tensor to have size %lld at dimension 0, "
                  "but got size %lld for argument #2 'targets' %s", (long long)g->batch, (long long)targets->sizes[0], from);
        PCT_CHECK(targets->sizes[1] >= g->maxl, PCT_ERR_RUNTIME, "Expected tensor to have size at least %lld at "
                  "dimension 1, but got size %lld for argument #2 'targets' %s", (long long)g->maxl,
                  (long long)targets->sizes[1], from);
    }
    for (int64_t b = 0; b < g->batch; b++) {
        PCT_CHECK(g->il[b] >= 0, PCT_ERR_RUNTIME, "Expected input_lengths to have value at least 0, but got value "
                  "%lld %s", (long long)g->il[b], from);
        PCT_CHECK(g->il[b] <= g->tmax, PCT_ERR_RUNTIME, "Expected input_lengths to have value at most %lld, but got "
                  "value %lld %s", (long long)g->tmax, (long long)g->il[b], from);
    }
    /* labels read by the recursions must be valid (torch reads them unchecked) */
    for (int64_t b = 0; b < g->batch; b++)
        for (int64_t k = 0; k < g->tl[b]; k++) {
            int64_t v = g->tgt[g->toff[b] + k];
            PCT_CHECK(v >= 0 && v < g->labels, PCT_ERR_INDEX, "ctc_loss: target %lld of batch item %lld is out of "
                      "the label range [0, %lld)", (long long)v, (long long)b, (long long)g->labels);
        }
    g->states = 2 * g->maxl + 1;
    return 0;
fail:
    free(g->toff);
    g->toff = NULL;
    return -1;
}

static void release(pct_tensor **owned, int n)
{
    for (int i = 0; i < n; i++) PCT_XDECREF(owned[i]);
}

pct_object *pct_cpu_ctc_loss(pct_call *c)
{
    PCT_ARGS(ctc_loss);
    pct_tensor *owned[4] = {NULL, NULL, NULL, NULL}, *res[2] = {NULL, NULL};
    ctc_geom g;
    pct_tensor *lp = arg.log_probs;
    if (ctc_setup(lp, arg.targets, arg.input_lengths, arg.target_lengths, arg.blank, &g, owned) < 0) goto fail;
    {
        int64_t asz[3] = {g.batch, g.tmax, g.states};
        PCT_TRY(res[0] = pct_tensor_empty(1, &g.batch, lp->dtype, PCT_CPU, -1));
        PCT_TRY(res[1] = pct_tensor_empty(3, asz, lp->dtype, PCT_CPU, -1));
        PCT_TRY(owned[3] = pct_contiguous(lp));
        if (lp->dtype == PCT_FLOAT32)
            ctc_fwd_FLOAT32(&g, (const float *)pct_tensor_data(owned[3]), (float *)pct_tensor_data(res[1]),
                            (float *)pct_tensor_data(res[0]));
        else
            ctc_fwd_FLOAT64(&g, (const double *)pct_tensor_data(owned[3]), (double *)pct_tensor_data(res[1]),
                            (double *)pct_tensor_data(res[0]));
    }
    free(g.toff);
    release(owned, 4);
    return pct_norm_tuple_steal(2, res);
fail:
    free(g.toff);
    release(owned, 4);
    PCT_XDECREF(res[0]);
    PCT_XDECREF(res[1]);
    return NULL;
}

/* (grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha, blank, zero_infinity) */
pct_object *pct_cpu_ctc_loss_backward(pct_call *c)
{
    PCT_ARGS(ctc_loss_backward);
    char b1[PCT_SHAPE_BUF];
    pct_tensor *owned[7] = {NULL}, *out = NULL;
    ctc_geom g;
    pct_tensor *gr = arg.grad, *lp = arg.log_probs, *nll = arg.neg_log_likelihood, *la = arg.log_alpha;
    g.toff = NULL;
    if (ctc_setup(lp, arg.targets, arg.input_lengths, arg.target_lengths, arg.blank, &g, owned) < 0) goto fail;
    PCT_CHECK(gr->numel == g.batch && nll->numel == g.batch && gr->dtype == lp->dtype && nll->dtype == lp->dtype,
              PCT_ERR_RUNTIME, "_ctc_loss_backward: expected grad and neg_log_likelihood of %lld %s values, got %s",
              (long long)g.batch, pct_dtype_cpp_name[lp->dtype], pct_spatial_shape(b1, gr));
    PCT_CHECK(la->ndim == 3 && la->sizes[0] == g.batch && la->sizes[1] == g.tmax && la->sizes[2] >= g.states &&
              la->dtype == lp->dtype, PCT_ERR_RUNTIME, "_ctc_loss_backward: log_alpha of shape %s does not match "
              "log_probs and the targets", pct_spatial_shape(b1, la));
    PCT_TRY(out = pct_tensor_empty(3, lp->sizes, lp->dtype, PCT_CPU, -1));
    PCT_TRY(owned[3] = pct_contiguous(lp));
    PCT_TRY(owned[4] = pct_contiguous(nll));
    PCT_TRY(owned[5] = pct_contiguous(gr));
    PCT_TRY(owned[6] = pct_contiguous(la));
    g.states = la->sizes[2];
    {
        int r;
        if (lp->dtype == PCT_FLOAT32)
            r = ctc_bwd_FLOAT32(&g, (const float *)pct_tensor_data(owned[3]), (const float *)pct_tensor_data(owned[6]),
                                (const float *)pct_tensor_data(owned[4]), (const float *)pct_tensor_data(owned[5]),
                                arg.zero_infinity, (float *)pct_tensor_data(out));
        else
            r = ctc_bwd_FLOAT64(&g, (const double *)pct_tensor_data(owned[3]), (const double *)pct_tensor_data(owned[6]),
                                (const double *)pct_tensor_data(owned[4]), (const double *)pct_tensor_data(owned[5]),
                                arg.zero_infinity, (double *)pct_tensor_data(out));
        if (r < 0) { pct_error_nomem(); goto fail; }
    }
    free(g.toff);
    release(owned, 7);
    return (pct_object *)out;
fail:
    free(g.toff);
    release(owned, 7);
    PCT_XDECREF(out);
    return NULL;
}
