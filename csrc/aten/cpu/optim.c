/* optim.c: fused optimizer steps, torch's _fused_adam_, _fused_adamw_, _fused_sgd_ and _fused_adagrad_.
 *
 * One call updates every parameter of a param group: each element of a parameter, its
 * gradient and its state is read once and written once, instead of the ~10 passes over
 * memory of the op-by-op step. Work items are chunks of CHUNK elements of big tensors
 * and whole small tensors; OpenMP shares them out with the GIL released.
 *
 * Note [Fused optimizer numerics]: the results equal torch's for-loop (and foreach) step
 * on CPU, not torch's own fused CPU kernel (which rounds differently, ~1 ulp apart from
 * its for-loop). Each element goes through the operations of torch's single-tensor step
 * in the same order with the same roundings, as ATen's CPU kernels compute them:
 *   add(x, alpha=a)         fma(x, a, self)                               (vec::fmadd)
 *   lerp_(end, w)           |w| < 0.5 ? fma(w, end - self, self) : fma(w - 1, end - self, end)
 *   addcmul_(a, b, value=v) fma(v * a, b, self)
 *   addcdiv_(a, b, value=v) self + (v * a) / b
 *   mul_(s), div(s), add_(s), sqrt   one rounding each
 * A Python-number hyperparameter is rounded to the op's math type (float for float32 and
 * the 16-bit types, double for float64), as ATen rounds a scalar argument (add's alpha is
 * rounded to the tensor dtype first, which matters for float16/bfloat16 only), and the
 * per-step scalars (bias corrections, step size) are computed in double exactly as
 * torch's Python code computes them (pow() for `** 0.5`, not sqrt()). float16/bfloat16
 * compute in float and round each op's result to the storage dtype, as the op-by-op step
 * stores every intermediate tensor. One difference remains: torch's float32/float64
 * sqrt goes through MKL's vsSqrt/vdSqrt, which is not correctly rounded, so the
 * denominator differs by 1 ulp in some elements; that rarely reaches the parameter.
 */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define OPT_X86 1
#endif

#define CHUNK 32768 /* elements per work item of a big tensor */

/* One parameter's buffers (contiguous; stand-ins for non-contiguous tensors). */
typedef struct opt_tensor {
    char *p, *g, *s1, *s2, *s3;  /* param, grad, state (adam: exp_avg, exp_avg_sq, max_exp_avg_sq; sgd: buf) */
    int64_t n;
    double step_size, bc2_sqrt;  /* from this parameter's step count (adam: lr / bc1; adagrad: clr) */
} opt_tensor;

typedef struct opt_hyper {
    double lr, beta1, beta2, wd, eps, momentum, dampening, lr_decay, scale;
    bool amsgrad, maximize, decoupled, nesterov, first, has_scale, has_buf;
} opt_hyper;

enum { OPT_ADAM, OPT_SGD, OPT_ADAGRAD };

typedef void (*opt_chunk_fn)(const opt_hyper *h, const opt_tensor *t, int64_t lo, int64_t hi);
typedef struct opt_work { int32_t t; int64_t lo, hi; } opt_work;

#define OPT_FMA(a, b, c) _Generic((a), float: fmaf, default: fma)((a), (b), (c))
#define OPT_SQRT(a) _Generic((a), float: sqrtf, default: sqrt)(a)
/* torch.maximum: NaN if either is NaN */
#define OPT_MAXIMUM(x, v) (((x) > (v) || (x) != (x)) ? (x) : (v))

/* The start of every element step: the gradient (unscaled by grad_scale when given, the
 * unscaled value written back as torch's fused steps do; negated to maximize) and the parameter. */
#define OPT_LOAD_GRAD_PARAM(i, C, LD, ST, R)                                                   \
    C g = LD(gp[i]);                                                                           \
    if (has_scale) { g = R(g / scale); gp[i] = ST(g); }                                        \
    if (maximize) g = -g;                                                                      \
    C p = LD(pp[i])

/* ---- the hyperparameters of one call, rounded to the math type C (R: an alpha of add) ---- */
#define ADAM_SCALARS(C, R)                                                                     \
    const C w1 = (C)(1 - h->beta1), w1m1 = w1 - (C)1, b2 = (C)h->beta2, c2 = (C)(1 - h->beta2); \
    const C wdc = R((C)h->wd), decay = (C)(1 - h->lr * h->wd), epsc = (C)h->eps;               \
    const C ssn = (C)(-t->step_size), bc2s = (C)t->bc2_sqrt, scale = (C)h->scale;              \
    const bool small = fabs((double)w1) < 0.5, wd_on = h->wd != 0, decoupled = h->decoupled;   \
    const bool maximize = h->maximize, amsgrad = h->amsgrad, has_scale = h->has_scale;         \
    (void)w1m1; (void)decay; (void)wdc; (void)scale;

/* One Adam element i. LD/ST convert storage <-> math type, R rounds to the storage dtype. */
#define ADAM_ELEM(i, C, LD, ST, R)                                                             \
    do {                                                                                       \
        OPT_LOAD_GRAD_PARAM(i, C, LD, ST, R);                                                  \
        if (wd_on) {                                                                           \
            if (decoupled) p = R(p * decay);                                                   \
            else g = R(OPT_FMA(p, wdc, g));                                                    \
        }                                                                                      \
        C m = LD(mp[i]);                                                                       \
        m = R(small ? OPT_FMA(w1, g - m, m) : OPT_FMA(w1m1, g - m, g));                        \
        mp[i] = ST(m);                                                                         \
        C v = R(LD(vp[i]) * b2);                                                               \
        v = R(OPT_FMA(c2 * g, g, v));                                                          \
        vp[i] = ST(v);                                                                         \
        if (amsgrad) {                                                                         \
            C x = LD(xp[i]);                                                                   \
            v = OPT_MAXIMUM(x, v);                                                             \
            xp[i] = ST(v);                                                                     \
        }                                                                                      \
        C den = R(R(R(OPT_SQRT(v)) / bc2s) + epsc);                                            \
        pp[i] = ST(p + (ssn * m) / den);                                                       \
    } while (0)

#define SGD_SCALARS(C, R)                                                                      \
    const C wdc = R((C)h->wd), mom = (C)h->momentum, mom_a = R((C)h->momentum),                \
            damp1 = R((C)(1 - h->dampening)), nlr = R((C)(-h->lr)), scale = (C)h->scale;       \
    const bool wd_on = h->wd != 0, maximize = h->maximize, has_scale = h->has_scale,           \
               has_buf = h->has_buf, first = h->first, nesterov = h->nesterov;                 \
    (void)scale; (void)mom; (void)mom_a; (void)damp1;

/* One SGD element i (torch's single-tensor step; buf = grad on the first step). */
#define SGD_ELEM(i, C, LD, ST, R)                                                              \
    do {                                                                                       \
        OPT_LOAD_GRAD_PARAM(i, C, LD, ST, R);                                                  \
        if (wd_on) g = R(OPT_FMA(p, wdc, g));                                                  \
        if (has_buf) {                                                                         \
            C b = first ? g : R(OPT_FMA(g, damp1, R(LD(bp[i]) * mom)));                        \
            bp[i] = ST(b);                                                                     \
            g = nesterov ? R(OPT_FMA(b, mom_a, g)) : b;                                        \
        }                                                                                      \
        pp[i] = ST(OPT_FMA(g, nlr, p));                                                        \
    } while (0)

#define ADAGRAD_SCALARS(C, R)                                                                  \
    const C wdc = R((C)h->wd), epsc = (C)h->eps, nclr = (C)(-t->step_size), scale = (C)h->scale; \
    const bool wd_on = h->wd != 0, maximize = h->maximize, has_scale = h->has_scale;           \
    (void)scale;

/* One Adagrad element i: sum.addcmul_(g, g, value=1); p.addcdiv_(g, sum.sqrt() + eps, value=-clr). */
#define ADAGRAD_ELEM(i, C, LD, ST, R)                                                          \
    do {                                                                                       \
        OPT_LOAD_GRAD_PARAM(i, C, LD, ST, R);                                                  \
        if (wd_on) g = R(OPT_FMA(p, wdc, g));                                                  \
        C s = R(OPT_FMA(g, g, LD(sp[i])));                                                     \
        sp[i] = ST(s);                                                                         \
        C std = R(R(OPT_SQRT(s)) + epsc);                                                      \
        pp[i] = ST(p + (nclr * g) / std);                                                      \
    } while (0)

#define OPT_ID(x) (x)

/* ---- portable loops, every floating dtype ---- */
/* One chunk function: the pointer declarations (...), the optimizer's SCALARS, then ELEM on lo..hi. */
#define OPT_CHUNK(NAME, SCALARS, ELEM, C, LD, ST, R, ...)                                      \
    static void NAME(const opt_hyper *h, const opt_tensor *t, int64_t lo, int64_t hi)          \
    {                                                                                          \
        __VA_ARGS__;                                                                           \
        SCALARS(C, R)                                                                          \
        for (int64_t i = lo; i < hi; i++)                                                      \
            ELEM(i, C, LD, ST, R);                                                             \
    }
#define OPT_SCALAR_LOOPS(E, N, T, C, S)                                                        \
    OPT_CHUNK(adam_chunk_##N, ADAM_SCALARS, ADAM_ELEM, C, PCT_TO_COMPUTE_##E, PCT_FROM_COMPUTE_##E, \
              OPT_ROUND_##E, T *pp = (T *)t->p, *gp = (T *)t->g, *mp = (T *)t->s1, *vp = (T *)t->s2, \
              *xp = (T *)t->s3)                                                                \
    OPT_CHUNK(sgd_chunk_##N, SGD_SCALARS, SGD_ELEM, C, PCT_TO_COMPUTE_##E, PCT_FROM_COMPUTE_##E, \
              OPT_ROUND_##E, T *pp = (T *)t->p, *gp = (T *)t->g, *bp = (T *)t->s1)             \
    OPT_CHUNK(adagrad_chunk_##N, ADAGRAD_SCALARS, ADAGRAD_ELEM, C, PCT_TO_COMPUTE_##E,         \
              PCT_FROM_COMPUTE_##E, OPT_ROUND_##E, T *pp = (T *)t->p, *gp = (T *)t->g, *sp = (T *)t->s1)
#define OPT_ROUND_FLOAT16(x) pct_half_to_float(pct_float_to_half(x))
#define OPT_ROUND_BFLOAT16(x) pct_bf16_to_float(pct_float_to_bf16(x))
#define OPT_ROUND_FLOAT32(x) (x)
#define OPT_ROUND_FLOAT64(x) (x)
PCT_FORALL_FLOAT_DTYPES(OPT_SCALAR_LOOPS)

#ifdef OPT_X86
/* ---- AVX2 + FMA loops for float32 / float64 (the same operations, 8 or 4 lanes) ----
 * VT: vector type, X: intrinsic suffix (ps/pd), W: lanes. The scalar tail uses ADAM_ELEM,
 * whose fma/fmaf compile to the same vfmadd instruction in this target. */

#define OPT_N Float
#define OPT_T float
#define OPT_VT __m256
#define OPT_X ps
#define OPT_W 8
#include "optim_avx2_impl.h"
#define OPT_N Double
#define OPT_T double
#define OPT_VT __m256d
#define OPT_X pd
#define OPT_W 4
#include "optim_avx2_impl.h"

static bool have_avx2_fma(void)
{
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return cached;
}
#endif

static opt_chunk_fn chunk_fn(int dtype, int kind)
{
#define OPT_PICK(N) (kind == OPT_SGD ? sgd_chunk_##N : kind == OPT_ADAGRAD ? adagrad_chunk_##N : adam_chunk_##N)
#ifdef OPT_X86
    if (have_avx2_fma()) {
        if (dtype == PCT_FLOAT32) return OPT_PICK(Float_avx2);
        if (dtype == PCT_FLOAT64) return OPT_PICK(Double_avx2);
    }
#endif
    switch (dtype) {
#define OPT_CASE(E, N, T, C, S) case PCT_##E: return OPT_PICK(N);
    PCT_FORALL_FLOAT_DTYPES(OPT_CASE)
#undef OPT_CASE
    default: return NULL;
    }
#undef OPT_PICK
}

/* ---- argument checks and the shared driver ---- */

/* Contiguous stand-ins made for non-contiguous tensors; written ones are copied back. */
typedef struct opt_temps {
    pct_tensor **tmp, **orig;
    int n;
} opt_temps;

static pct_tensor *list_item(const pct_tensor_list *v, ptrdiff_t i)
{
    return v->items[i];
}

static int check_list_len(const char *op, const pct_tensor_list *v, const char *name, ptrdiff_t n)
{
    ptrdiff_t k = v->n;
    if (k != n) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected %s to hold %td tensors (one per parameter), but got %td",
                     op, name, n, k);
        return -1;
    }
    return 0;
}

/* t must live on the CPU with param's dtype and shape. */
static int check_like(const char *op, pct_tensor *t, const char *name, ptrdiff_t i, const pct_tensor *param)
{
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    if (t->device_type != PCT_CPU) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected all tensors on the CPU, but %s[%zd] is not", op, name, i);
        return -1;
    }
    if (t->dtype != param->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s (%s: %s[%zd])",
                     pct_dtype_cpp_name[param->dtype], pct_dtype_cpp_name[t->dtype], op, name, i);
        return -1;
    }
    if (t->ndim != param->ndim || memcmp(t->sizes, param->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0) {
        pct_error(PCT_ERR_RUNTIME, "%s: %s[%zd] has shape %s but self[%zd] has shape %s", op, name, i,
                     pct_shape_str(a, sizeof a, t->ndim, t->sizes), i,
                     pct_shape_str(b, sizeof b, param->ndim, param->sizes));
        return -1;
    }
    return 0;
}

/* The value of a one-element tensor (a step count, grad_scale, found_inf). */
static int one_value(const char *op, const pct_tensor *t, const char *name, double *out)
{
    if (t->numel != 1) {
        pct_error(PCT_ERR_RUNTIME, "%s: a Tensor with %lld elements cannot be converted to Scalar (%s)", op,
                     (long long)t->numel, name);
        return -1;
    }
    if (t->device_type != PCT_CPU) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected %s on the CPU", op, name);
        return -1;
    }
    *out = pct_load_as_double(pct_tensor_data(t), t->dtype);
    return 0;
}

/* The data of t as a contiguous buffer: t's own, or a copy recorded in temps. */
static char *data_of(pct_tensor *t, bool written, opt_temps *temps)
{
    if (pct_tensor_is_contiguous(t)) return pct_tensor_data(t);
    pct_tensor *c = pct_contiguous(t);
    if (!c) return NULL;
    temps->tmp[temps->n] = c;
    temps->orig[temps->n++] = written ? t : NULL;
    return pct_tensor_data(c);
}

/* The tensor lists of a call, in slot order (a NULL list is absent). */
enum { L_PARAM, L_GRAD, L_S1, L_S2, L_S3, L_NUM };

/* Runs fn over all parameters (chunks of big tensors, whole small ones) with the GIL
 * released, then copies the stand-ins back and bumps the version of every written tensor. */
static int run_step(const opt_hyper *h, opt_tensor *ts, ptrdiff_t n, opt_chunk_fn fn)
{
    int64_t nwork = 0, total = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        nwork += (ts[i].n + CHUNK - 1) / CHUNK;
        total += ts[i].n;
    }
    if (nwork == 0) return 0;
    opt_work *work = malloc(sizeof(opt_work) * (size_t)nwork);
    if (!work) { pct_error_nomem(); return -1; }
    int64_t w = 0;
    for (ptrdiff_t i = 0; i < n; i++)
        for (int64_t lo = 0; lo < ts[i].n; lo += CHUNK)
            work[w++] = (opt_work){(int32_t)i, lo, lo + CHUNK < ts[i].n ? lo + CHUNK : ts[i].n};
    PCT_NOGIL_BEGIN
    _Pragma("omp parallel for schedule(dynamic, 1) if (total > PCT_PARALLEL_GRAIN && nwork > 1)")
    for (int64_t k = 0; k < nwork; k++) fn(h, &ts[work[k].t], work[k].lo, work[k].hi);
    PCT_NOGIL_END
    free(work);
    return 0;
}

/* Shared by the ops: checks the lists (one tensor per param in each list that is used) and
 * the scalars, reads the per-parameter step counts, and runs the step. */
static pct_object *fused_step(const char *op, opt_hyper *h, int kind, const pct_tensor_list *lists[L_NUM],
                            const char *const names[L_NUM], const pct_tensor_list *steps, pct_tensor *grad_scale,
                            pct_tensor *found_inf)
{
    ptrdiff_t n = lists[L_PARAM]->n;
    opt_tensor *ts = NULL;
    pct_tensor **held = NULL;
    opt_temps temps = {NULL, NULL, 0};
    pct_object *result = NULL;
    if (n == 0) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED,
                     "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), "
                     "but no fallback function is registered for schema aten::%s.", op);
        return NULL;
    }
    for (int l = 1; l < L_NUM; l++)
        if (lists[l] && check_list_len(op, lists[l], names[l], n) < 0) return NULL;
    if (steps && check_list_len(op, steps, "state_steps", n) < 0) return NULL;
    if (found_inf) {
        double v;
        if (one_value(op, found_inf, "found_inf", &v) < 0) return NULL;
        if (v == 1.0) return pct_none(); /* an inf/NaN gradient was found: skip the step */
    }
    h->has_scale = grad_scale != NULL;
    h->scale = 1.0;
    if (h->has_scale && one_value(op, grad_scale, "grad_scale", &h->scale) < 0) return NULL;

    int dtype = list_item(lists[L_PARAM], 0)->dtype;
    for (ptrdiff_t i = 0; i < n; i++) {
        pct_tensor *p = list_item(lists[L_PARAM], i);
        if (p->dtype != dtype) {
            pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s (%s: self[%zd])",
                         pct_dtype_cpp_name[dtype], pct_dtype_cpp_name[p->dtype], op, i);
            return NULL;
        }
        for (int l = 0; l < L_NUM; l++)
            if (lists[l] && check_like(op, list_item(lists[l], i), names[l], i, p) < 0) return NULL;
    }
    opt_chunk_fn fn = chunk_fn(dtype, kind);
    if (!fn) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_kernel\" not implemented for '%s'", op + 1,
                     pct_dtype_cpp_name[dtype]);
        return NULL;
    }
    /* the tensors are held (not borrowed from the lists) while the GIL is released: another
     * thread may change the lists meanwhile */
    PCT_TRY(held = calloc((size_t)n * L_NUM, sizeof(pct_tensor *)));
    PCT_TRY(ts = calloc((size_t)n, sizeof(opt_tensor)));
    PCT_TRY(temps.tmp = calloc((size_t)n * L_NUM, sizeof(pct_tensor *)));
    PCT_TRY(temps.orig = calloc((size_t)n * L_NUM, sizeof(pct_tensor *)));
    for (ptrdiff_t i = 0; i < n; i++)
        for (int l = 0; l < L_NUM; l++)
            if (lists[l]) held[i * L_NUM + l] = (pct_tensor *)PCT_NEWREF(list_item(lists[l], i));
    for (ptrdiff_t i = 0; i < n; i++) {
        opt_tensor *t = &ts[i];
        char **slot[L_NUM] = {&t->p, &t->g, &t->s1, &t->s2, &t->s3};
        t->n = held[i * L_NUM + L_PARAM]->numel;
        if (t->n == 0) continue;
        for (int l = 0; l < L_NUM; l++) {
            if (!held[i * L_NUM + l]) continue;
            bool written = l != L_GRAD || h->has_scale;
            PCT_TRY(*slot[l] = data_of(held[i * L_NUM + l], written, &temps));
        }
        if (steps) {
            double step;
            PCT_TRY_INT(one_value(op, list_item(steps, i), "state_steps", &step));
            /* A zero divisor (adam: step 0, adagrad: 1 + (step - 1) * lr_decay == 0) gives inf/NaN
             * steps, as torch's fused kernels; its Python steps raise ZeroDivisionError instead,
             * which the callers in pyctorch/optim check for before coming here. */
            if (kind == OPT_ADAGRAD) {
                /* as torch's Python step: clr = lr / (1 + (step - 1) * lr_decay) */
                t->step_size = h->lr / (1 + (step - 1) * h->lr_decay);
            } else {
                /* as torch's Python step: 1 - beta ** step, lr / bc1, bc2 ** 0.5 */
                double bc1 = 1 - pow(h->beta1, step), bc2 = 1 - pow(h->beta2, step);
                t->step_size = h->lr / bc1;
                t->bc2_sqrt = pow(bc2, 0.5);
            }
        }
    }
    PCT_TRY_INT(run_step(h, ts, n, fn));
    for (int k = 0; k < temps.n; k++)
        if (temps.orig[k]) PCT_TRY_INT(pct_copy_(temps.orig[k], temps.tmp[k]));
    for (ptrdiff_t k = 0; k < n * L_NUM; k++)
        if (held[k] && (k % L_NUM != L_GRAD || h->has_scale)) pct_tensor_bump_version(held[k]);
    result = pct_none();
fail:
    if (!held || !ts || !temps.tmp || !temps.orig) {
        if (!pct_error_occurred()) pct_error_nomem();
    }
    for (int k = 0; k < temps.n; k++) PCT_DECREF(temps.tmp[k]);
    if (held)
        for (ptrdiff_t k = 0; k < n * L_NUM; k++) PCT_XDECREF(held[k]);
    free(held);
    free(temps.tmp);
    free(temps.orig);
    free(ts);
    return result;
}

/* _fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
 * weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None): the state steps are
 * read (already incremented by the caller, as torch's Python does), not written. */
static pct_object *fused_adam(opt_hyper *h, const pct_tensor_list *params, const pct_tensor_list *grads,
                              const pct_tensor_list *exp_avgs, const pct_tensor_list *exp_avg_sqs,
                              const pct_tensor_list *max_exp_avg_sqs, const pct_tensor_list *steps,
                              pct_tensor *grad_scale, pct_tensor *found_inf)
{
    const char *op = h->decoupled ? "_fused_adamw_" : "_fused_adam_";
    const pct_tensor_list *lists[L_NUM] = {params, grads, exp_avgs, exp_avg_sqs, h->amsgrad ? max_exp_avg_sqs : NULL};
    static const char *const names[L_NUM] = {"self", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs"};
    if (!h->amsgrad && max_exp_avg_sqs->n != 0) {
        pct_error_str(PCT_ERR_RUNTIME, "Expected max_exp_avg_sqs.empty() to be true, but got false.  (Could this "
                        "error message be improved?  If so, please report an enhancement request to PyTorch.)");
        return NULL;
    }
    return fused_step(op, h, OPT_ADAM, lists, names, steps, grad_scale, found_inf);
}

/* adam and adamw have the same schema: one entry each, read as its own op's arguments */
#define FUSED_ADAM_ENTRY(id, is_decoupled)                                                                            \
    pct_object *pct_cpu_##id(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(id);                                                                                                 \
        opt_hyper h = {.lr = arg.lr, .beta1 = arg.beta1, .beta2 = arg.beta2, .wd = arg.weight_decay,                  \
                       .eps = arg.eps, .amsgrad = arg.amsgrad, .maximize = arg.maximize, .decoupled = is_decoupled};  \
        return fused_adam(&h, &arg.self, &arg.grads, &arg.exp_avgs, &arg.exp_avg_sqs, &arg.max_exp_avg_sqs,           \
                          &arg.state_steps, arg.grad_scale, arg.found_inf);                                           \
    }
FUSED_ADAM_ENTRY(fused_adam_, false)
FUSED_ADAM_ENTRY(fused_adamw_, true)
#undef FUSED_ADAM_ENTRY

/* _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
 * maximize, is_first_step, grad_scale=None, found_inf=None): momentum_buffer_list is empty when
 * momentum == 0; on the first step the buffers (allocated by the caller) receive the gradient. */
pct_object *pct_cpu_fused_sgd_(pct_call *c)
{
    PCT_ARGS(fused_sgd_);
    opt_hyper h = {.wd = arg.weight_decay, .momentum = arg.momentum, .lr = arg.lr, .dampening = arg.dampening,
                   .nesterov = arg.nesterov, .maximize = arg.maximize, .first = arg.is_first_step};
    h.has_buf = h.momentum != 0;
    const pct_tensor_list *lists[L_NUM] = {&arg.self, &arg.grads, h.has_buf ? &arg.momentum_buffer_list : NULL, NULL, NULL};
    static const char *const names[L_NUM] = {"self", "grads", "momentum_buffer_list", "", ""};
    return fused_step("_fused_sgd_", &h, OPT_SGD, lists, names, NULL, arg.grad_scale, arg.found_inf);
}

/* _fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize,
 * grad_scale=None, found_inf=None): the state steps are read (incremented by the caller). */
pct_object *pct_cpu_fused_adagrad_(pct_call *c)
{
    PCT_ARGS(fused_adagrad_);
    opt_hyper h = {.lr = arg.lr, .lr_decay = arg.lr_decay, .wd = arg.weight_decay, .eps = arg.eps, .maximize = arg.maximize};
    const pct_tensor_list *lists[L_NUM] = {&arg.self, &arg.grads, &arg.state_sums, NULL, NULL};
    static const char *const names[L_NUM] = {"self", "grads", "state_sums", "", ""};
    return fused_step("_fused_adagrad_", &h, OPT_ADAGRAD, lists, names, &arg.state_steps, arg.grad_scale, arg.found_inf);
}
