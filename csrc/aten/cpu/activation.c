/* activation.c: fused activation functions and their backward kernels (one pass each instead
 * of the chains of pointwise ops a composite would run, and no inf * 0 = NaN gradients from
 * branches that where() discards). Loops come from the extension-loop machinery
 * (pointwise_ext.h): x is the first input, y the second; p1, p2, alpha are the op's scalars.
 * Backward kernels take (grad_output, input): x = grad, y = input. */
#include "pointwise_ext.h"
#include "vecmath.h"
#include "gemm_lowp.h"
#include "gelu_erf.h"
#include "../error.h"
#include <tgmath.h>

/* GELU, exact: x Phi(x); the tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and their
 * derivatives Phi(x) + x phi(x) and 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2).
 * One function per compute type (float for float16/bfloat16/float32, double for float64), picked
 * with _Generic, so float math stays in float as torch computes it. */
#define PCT_GELU_FUNCS(T, S)                                                                       \
    static inline T pct_gelu_##S(T v, bool tanh_form)                                              \
    {                                                                                              \
        const T beta = (T)0.7978845608028654, kappa = (T)0.044715, half = (T)0.5;                  \
        if (tanh_form) return half * v * (1 + tanh(beta * (v + kappa * v * v * v)));               \
        return half * v * (1 + erf(v * (T)0.70710678118654752440));                                             \
    }                                                                                              \
    static inline T pct_gelu_grad_##S(T v, bool tanh_form)                                         \
    {                                                                                              \
        const T beta = (T)0.7978845608028654, kappa = (T)0.044715, half = (T)0.5;                  \
        if (tanh_form) {                                                                           \
            T t = tanh(beta * (v + kappa * v * v * v));                                            \
            return half * (1 + t) + half * v * (1 - t * t) * beta * (1 + 3 * kappa * v * v);        \
        }                                                                                          \
        return half * (1 + erf(v * (T)0.70710678118654752440)) + v * exp(-half * v * v) * (T)0.39894228040143267794 /* 1/sqrt(2 pi) */; \
    }
PCT_GELU_FUNCS(float, f)
PCT_GELU_FUNCS(double, d)
#define PCT_GELU(v) _Generic((v), float: pct_gelu_f, default: pct_gelu_d)(v, p1 != 0)
#define PCT_GELU_GRAD(v) _Generic((v), float: pct_gelu_grad_f, default: pct_gelu_grad_d)(v, p1 != 0)
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, gelu, PCT_GELU(x), 0, 0)
PCT_EXT_TABLE(gelu, PCT_FLOATS_PAIRED)
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, gelu_backward, x * PCT_GELU_GRAD(y), 0, 0)
PCT_EXT_TABLE(gelu_backward, PCT_FLOATS_PAIRED)

/* Note [Vector GELU]: on contiguous float32/float64 runs, GELU and its gradient go through
 * blocks: the polynomial parts in plain loops the compiler vectorizes, tanh/erf/exp through
 * the SIMD loops of vecmath.c (libmvec), except float exact GELU, which has its own loops
 * (gelu_erf.c); float16/bfloat16 runs are widened to float a block at
 * a time and take the float loops. Strided runs, and machines without them, use the scalar
 * loops above. */
#define GELU_BLOCK 256
typedef struct gelu_vec { pct_loop_fn tanh_fn, erf_fn, exp_fn; } gelu_vec;

/* out[i] = f(in[i]) over n contiguous elements through a vecmath loop */
static inline void gelu_vec_apply(pct_loop_fn fn, void *out, void *in, int64_t n, int64_t size)
{
    char *a[2] = {out, in};
    int64_t st[2] = {size, size};
    fn(a, &n, st, NULL);
}

#define GELU_T float
#define GELU_S f
#include "gelu_vec_impl.h"
#define GELU_T double
#define GELU_S d
#include "gelu_vec_impl.h"

/* The loop ctx carries the scalar loop (for strided runs) and the vector functions. */
typedef struct gelu_loop_ctx {
    pct_pw_ctx pw;       /* first: the scalar loops read it as their ctx */
    pct_loop_fn scalar;
    gelu_vec vec;
    bool is_double;
    int lowp;            /* float16/bfloat16: widened to float in blocks (0: no) */
} gelu_loop_ctx;

/* float16/bfloat16 runs through the float vector loops, a block at a time (one rounding) */
static void gelu_vec_lowp(const gelu_loop_ctx *c, bool bwd, char **args, int64_t n)
{
    float x[GELU_BLOCK], g[GELU_BLOCK], o[GELU_BLOCK];
    const bool tanh_form = c->pw.p1 != 0;
    for (int64_t k0 = 0; k0 < n; k0 += GELU_BLOCK) {
        int64_t m = n - k0 < GELU_BLOCK ? n - k0 : GELU_BLOCK;
        if (bwd) {
            pct_lowp_to_f32(g, (const uint16_t *)args[1] + k0, 1, m, 0, 1, c->lowp, 1);
            pct_lowp_to_f32(x, (const uint16_t *)args[2] + k0, 1, m, 0, 1, c->lowp, 1);
            gelu_vec_bwd_f(&c->vec, tanh_form, o, g, x, m);
        } else {
            pct_lowp_to_f32(x, (const uint16_t *)args[1] + k0, 1, m, 0, 1, c->lowp, 1);
            gelu_vec_fwd_f(&c->vec, tanh_form, o, x, m);
        }
        pct_f32_to_lowp((uint16_t *)args[0] + k0, o, 1, m, 0, 1, c->lowp, 1);
    }
}

static void gelu_vec_loop(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    gelu_loop_ctx *c = vctx;
    bool bwd = c->pw.has_p2 < 0; /* the runner marks two-input loops */
    int64_t size = c->lowp ? 2 : c->is_double ? 8 : 4, n = *dims;
    bool contiguous = steps[0] == size && steps[1] == size && (!bwd || steps[2] == size);
    if (!contiguous) {
        c->scalar(args, dims, steps, vctx);
        return;
    }
    bool tanh_form = c->pw.p1 != 0;
    if (c->lowp) {
        gelu_vec_lowp(c, bwd, args, n);
    } else if (c->is_double) {
        if (bwd) gelu_vec_bwd_d(&c->vec, tanh_form, (double *)args[0], (const double *)args[1], (const double *)args[2], n);
        else gelu_vec_fwd_d(&c->vec, tanh_form, (double *)args[0], (const double *)args[1], n);
    } else {
        if (bwd) gelu_vec_bwd_f(&c->vec, tanh_form, (float *)args[0], (const float *)args[1], (const float *)args[2], n);
        else gelu_vec_fwd_f(&c->vec, tanh_form, (float *)args[0], (const float *)args[1], n);
    }
}

/* SiLU: x sigmoid(x); d/dx: s (1 + x (1 - s)). Complex inputs too, as torch's (the same formula, <tgmath.h>'s cexp);
 * their gradient is the formula's complex variant (silu_backward_complex in pyctorch/autograd/_formulas.py) */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, silu, x / (1 + exp(-x)), 0, 0)
PCT_COMPLEX_PAIRED(PCT_EXT_DEFINE, silu, x / (1 + exp(-x)), 0, 0)
#define PCT_SILU_DTYPES_PAIRED(X, a, b, c, d) PCT_FLOATS_PAIRED(X, a, b, c, d) PCT_COMPLEX_PAIRED(X, a, b, c, d)
PCT_EXT_TABLE(silu, PCT_SILU_DTYPES_PAIRED)
#define PCT_SIGMOID(v) (1 / (1 + exp(-(v))))
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, silu_backward, x * PCT_SIGMOID(y) * (1 + y * (1 - PCT_SIGMOID(y))), 0, 0)
PCT_EXT_TABLE(silu_backward, PCT_FLOATS_PAIRED)

/* Softplus (beta p1, threshold p2): linear above the threshold, log1p(exp(beta x)) / beta below */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, softplus, (x * p1 > p2 ? x : log1p(exp(x * p1)) / p1), 0, 0)
PCT_EXT_TABLE(softplus, PCT_FLOATS_PAIRED)
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, softplus_backward, (y * p1 > p2 ? x : x * PCT_SIGMOID(y * p1)), 0, 0)
PCT_EXT_TABLE(softplus_backward, PCT_FLOATS_PAIRED)

/* ELU family (alpha p1, scale p2, input_scale alpha): x > 0 ? scale x : alpha scale (exp(input_scale x) - 1) */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, elu, (x > 0 ? x * p2 : expm1(x * alpha) * p1 * p2), 0, 0)
PCT_EXT_TABLE(elu, PCT_FLOATS_PAIRED)
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, elu_backward, (y > 0 ? x * p2 : x * alpha * p1 * p2 * exp(y * alpha)), 0, 0)
PCT_EXT_TABLE(elu_backward, PCT_FLOATS_PAIRED)

/* leaky ReLU (slope p1) and its backward */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, leaky_relu, (x > 0 ? x : x * p1), 0, 0)
PCT_EXT_TABLE(leaky_relu, PCT_FLOATS_PAIRED)
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, leaky_relu_backward, (y > 0 ? x : x * p1), 0, 0)
PCT_EXT_TABLE(leaky_relu_backward, PCT_FLOATS_PAIRED)

/* threshold_backward (relu's gradient): grad where input > threshold p1, else 0 */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, threshold_backward, (y <= p1 ? 0 : x), 0, 0)
PCT_EXT_TABLE(threshold_backward, PCT_FLOATS_PAIRED)

/* hardtanh's gradient passes strictly inside (min p1, max p2), unlike clamp's */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, hardtanh_backward, ((y <= p1 || y >= p2) ? 0 : x), 0, 0)
PCT_EXT_TABLE(hardtanh_backward, PCT_FLOATS_PAIRED)

static int gelu_mode(const char *mode, double *tanh_form)
{
    if (strcmp(mode, "none") != 0 && strcmp(mode, "tanh") != 0) {
        pct_error_str(PCT_ERR_RUNTIME, "approximate argument must be either none or tanh.");
        return -1;
    }
    *tanh_form = strcmp(mode, "tanh") == 0;
    return 0;
}

static pct_loop_fn pick_silu(int dtype);

/* Runs a one-input activation (x; grad NULL) or a backward kernel (grad, x) in the input's dtype. */
static pct_object *run_activation(pct_call *c, const char *name, pct_loop_fn (*pick)(int), pct_tensor *grad,
                                  pct_tensor *x, pct_pw_ctx *ctx)
{
    if (!grad) {
        const bool complex_ok = pct_dtype_is_complex(x->dtype) && pick == pick_silu; /* silu alone takes complex */
        if (!pct_dtype_is_floating(x->dtype) && !complex_ok) { /* torch has no integer or bool kernel for these */
            const bool gelu = strcmp(name, "GeluKernelImpl") == 0;
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s%s\" not implemented for '%s'", name, gelu ? "" : "_cpu",
                         pct_dtype_cpp_name[x->dtype]);
            return NULL;
        }
        return pct_pw_run_ext(c, name, pick, 1, &x, ctx, c->inplace ? x->dtype : -1, true);
    }
    pct_tensor *in[2] = {grad, x};
    return pct_pw_run_ext(c, name, pick, 2, in, ctx, -1, true);
}

/* The dtype the runner will compute in is only known inside it, so the vector path is picked
 * per dtype through these selectors (they read the thread's pending gelu ctx). */
static _Thread_local gelu_loop_ctx *pending_gelu;

static pct_loop_fn pick_gelu(int dtype, pct_loop_fn (*scalar_pick)(int))
{
    pct_loop_fn scalar = scalar_pick(dtype);
    gelu_loop_ctx *g = pending_gelu;
    if (!scalar || !g || !pct_dtype_is_floating(dtype)) return scalar;
    g->is_double = dtype == PCT_FLOAT64;
    g->lowp = pct_dtype_is_reduced_float(dtype) ? dtype : 0;
    const int vdt = g->lowp ? PCT_FLOAT32 : dtype;
    g->vec.tanh_fn = pct_vec_loop(PCT_OP_tanh, vdt);
    g->vec.erf_fn = pct_vec_loop(PCT_OP_erf, vdt);
    g->vec.exp_fn = pct_vec_loop(PCT_OP_exp, vdt);
    if (!g->vec.tanh_fn || !g->vec.erf_fn || !g->vec.exp_fn) return scalar;
    g->scalar = scalar;
    return gelu_vec_loop;
}
static pct_loop_fn pick_gelu_fwd(int dtype) { return pick_gelu(dtype, gelu_loop); }
static pct_loop_fn pick_gelu_bwd(int dtype) { return pick_gelu(dtype, gelu_backward_loop); }

pct_object *pct_cpu_gelu(pct_call *c)
{
    PCT_ARGS(gelu);
    gelu_loop_ctx ctx = {{0}, NULL, {NULL, NULL, NULL}, false, 0};
    if (gelu_mode(arg.approximate, &ctx.pw.p1) < 0) return NULL;
    pending_gelu = &ctx;
    pct_object *r = run_activation(c, "GeluKernelImpl", pick_gelu_fwd, NULL, arg.input, &ctx.pw);
    pending_gelu = NULL;
    return r;
}

pct_object *pct_cpu_gelu_backward(pct_call *c)
{
    PCT_ARGS(gelu_backward);
    gelu_loop_ctx ctx = {{0}, NULL, {NULL, NULL, NULL}, false, 0};
    if (gelu_mode(arg.approximate, &ctx.pw.p1) < 0) return NULL;
    pending_gelu = &ctx;
    pct_object *r = run_activation(c, "GeluBackwardKernelImpl", pick_gelu_bwd, arg.grad_output, arg.input, &ctx.pw);
    pending_gelu = NULL;
    return r;
}

/* float32/float64 silu through the vector exp where libmvec is (vecmath.c), else the loop above */
static pct_loop_fn pick_silu(int dtype)
{
    pct_loop_fn v = pct_vec_loop(PCT_OP_silu, dtype);
    return v ? v : silu_loop(dtype);
}

pct_object *pct_cpu_silu(pct_call *c)
{
    PCT_ARGS(silu);
    pct_pw_ctx ctx = {0};
    return run_activation(c, "silu", pick_silu, NULL, arg.input, &ctx);
}

pct_object *pct_cpu_silu_backward(pct_call *c)
{
    PCT_ARGS(silu_backward);
    pct_pw_ctx ctx = {0};
    return run_activation(c, "silu_backward", silu_backward_loop, arg.grad_output, arg.input, &ctx);
}

pct_object *pct_cpu_softplus(pct_call *c)
{
    PCT_ARGS(softplus);
    pct_pw_ctx ctx = {.p1 = arg.beta.d, .p2 = arg.threshold.d};
    return run_activation(c, "softplus", softplus_loop, NULL, arg.input, &ctx);
}

pct_object *pct_cpu_softplus_backward(pct_call *c)
{
    PCT_ARGS(softplus_backward);
    pct_pw_ctx ctx = {.p1 = arg.beta.d, .p2 = arg.threshold.d};
    return run_activation(c, "softplus_backward", softplus_backward_loop, arg.grad_output, arg.input, &ctx);
}

pct_object *pct_cpu_elu(pct_call *c)
{
    PCT_ARGS(elu);
    pct_pw_ctx ctx = {.p1 = arg.alpha.d, .p2 = arg.scale.d, .alpha_d = arg.input_scale.d};
    return run_activation(c, "elu", elu_loop, NULL, arg.input, &ctx);
}

pct_object *pct_cpu_elu_backward(pct_call *c)
{
    PCT_ARGS(elu_backward);
    pct_pw_ctx ctx = {.p1 = arg.alpha.d, .p2 = arg.scale.d, .alpha_d = arg.input_scale.d};
    return run_activation(c, "elu_backward", elu_backward_loop, arg.grad_output, arg.input, &ctx);
}

pct_object *pct_cpu_leaky_relu(pct_call *c)
{
    PCT_ARGS(leaky_relu);
    pct_pw_ctx ctx = {.p1 = arg.negative_slope.d};
    return run_activation(c, "leaky_relu", leaky_relu_loop, NULL, arg.input, &ctx);
}

pct_object *pct_cpu_leaky_relu_backward(pct_call *c)
{
    PCT_ARGS(leaky_relu_backward);
    pct_pw_ctx ctx = {.p1 = arg.negative_slope.d};
    return run_activation(c, "leaky_relu_backward", leaky_relu_backward_loop, arg.grad_output, arg.input, &ctx);
}

pct_object *pct_cpu_hardtanh_backward(pct_call *c)
{
    PCT_ARGS(hardtanh_backward);
    pct_pw_ctx ctx = {.p1 = arg.min_val.d, .p2 = arg.max_val.d};
    return run_activation(c, "hardtanh_backward", hardtanh_backward_loop, arg.grad_output, arg.input, &ctx);
}

/* hardtanh(input, min_val, max_val) is clamp, with torch's own checks; only its gradient differs. Integral inputs
 * clamp in their dtype, the limits truncated to integers (torch's hardtanh casts them to the input type). */
pct_object *pct_cpu_hardtanh(pct_call *c)
{
    PCT_ARGS(hardtanh);
    const int dt = arg.input->dtype;
    if (dt == PCT_BOOL) {
        pct_error_str(PCT_ERR_RUNTIME, "Bool inputs not supported for hardtanh");
        return NULL;
    }
    pct_scalar limits[2] = {arg.min_val, arg.max_val};
    if (pct_dtype_is_floating(dt)) return pct_clamp_run(c, arg.input, &limits[0], &limits[1]);
    for (int i = 0; i < 2; i++) {
        pct_scalar *s = &limits[i];
        if (s->kind == PCT_SCALAR_FLOAT) {
            if (!(fabs(s->d) < 9.2e18)) { /* inf/NaN/huge: let clamp's range check name it */
                if (pct_scalar_check_fits(s, dt) < 0) return NULL;
            }
            s->i = (int64_t)s->d;
            s->d = (double)s->i;
            s->kind = PCT_SCALAR_INT;
        }
    }
    /* after the truncation: -0.5 is a 0 limit */
    if (dt == PCT_UINT8 && (limits[0].i < 0 || limits[1].i < 0)) {
        pct_error_str(PCT_ERR_RUNTIME, "cannot do hardtanh on an unsigned type with negative limits");
        return NULL;
    }
    return pct_clamp_run(c, arg.input, &limits[0], &limits[1]);
}

pct_object *pct_cpu_threshold_backward(pct_call *c)
{
    PCT_ARGS(threshold_backward);
    pct_pw_ctx ctx = {.p1 = arg.threshold.d};
    return run_activation(c, "threshold_backward", threshold_backward_loop, arg.grad_output, arg.input, &ctx);
}
