/* pointwise_ext.c: elementwise ops with extra arguments (clamp bounds, where's
 * condition, lerp weights, rounding modes...). Their loops come from the same
 * per-dtype X-macro as pointwise.c: each op writes one expression. */
#include "pointwise_ext.h"
#include "../error.h"
#include "../out.h"
#include "complex_math.h"
#include <tgmath.h>

/* clamp: x to [lo, hi]; has_p1/has_p2 > 0 say which bounds exist. A NaN input or bound gives NaN, as in torch.
 * Integer loops take the bounds from p1_i/p2_i: an int64 bound through double would round (0.5 in their type is 0). */
#define PCT_CLAMP_P1 ((__typeof__(x))0.5 != 0 ? p1 : (__typeof__(x))ctx->p1_i)
#define PCT_CLAMP_P2 ((__typeof__(x))0.5 != 0 ? p2 : (__typeof__(x))ctx->p2_i)
#define PCT_CLAMP_LO ((ctx->has_p1 && (x < PCT_CLAMP_P1 || PCT_CLAMP_P1 != PCT_CLAMP_P1)) ? PCT_CLAMP_P1 : x)
PCT_NUMS_PAIRED(PCT_EXT_DEFINE, clamp,
                (ctx->has_p2 > 0 && (PCT_CLAMP_LO > PCT_CLAMP_P2 || PCT_CLAMP_P2 != PCT_CLAMP_P2)) ? PCT_CLAMP_P2 : PCT_CLAMP_LO,
                0, 0)
PCT_EXT_TABLE(clamp, PCT_NUMS_PAIRED)

/* where: y if the condition (input 1, converted to C) holds, else z; uint16/32/64 too, as in torch */
#define PCT_WHERE_DTYPES_PAIRED(X, a, b, c, d) PCT_FORALL_ALL_DTYPES_PAIRED(X, a, b, c, d) PCT_COMPLEX_PAIRED(X, a, b, c, d)
PCT_WHERE_DTYPES_PAIRED(PCT_EXT_DEFINE, where, x != 0 ? y : z, 0, 0)
PCT_EXT_TABLE(where, PCT_WHERE_DTYPES_PAIRED)

/* A complex Scalar argument (addcmul's value, lerp's weight) in a complex loop: its imaginary part rides in
 * ctx->alpha_im, as add's alpha does (Note: a real loop never reads it). */
#define PCT_CPX_WITH_IM(re) ((re) + (__typeof__(re))(ctx->alpha_im * I))

/* lerp: torch's two-sided formula keeps both endpoints exact; one fused multiply-add, as torch's
 * vectorized kernel (Note [Loop ISA clones]) */
#define PCT_LERP(w) (fabs(w) < 0.5 ? fma(w, y - x, x) : fma(w - 1, y - x, y))
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, lerp, PCT_LERP(z), 0, 0)
/* complex: the same two-sided formula, |w| deciding the side, without the fused multiply-add */
#define PCT_CLERP(w) (fabs(w) < 0.5 ? x + (w) * (y - x) : y - (y - x) * (1 - (w)))
PCT_COMPLEX_PAIRED(PCT_EXT_DEFINE, lerp, PCT_CLERP(z), 0, 0)
#define PCT_LERP_DTYPES_PAIRED(X, a, b, c, d) PCT_FLOATS_PAIRED(X, a, b, c, d) PCT_COMPLEX_PAIRED(X, a, b, c, d)
PCT_EXT_TABLE(lerp, PCT_LERP_DTYPES_PAIRED)
/* a Python number as the weight stays in the compute type (float for float16/bfloat16), as torch's */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, lerp_scalar, PCT_LERP(p1), 0, 0)
PCT_COMPLEX_PAIRED(PCT_EXT_DEFINE, lerp_scalar, PCT_CLERP(PCT_CPX_WITH_IM(p1)), 0, 0)
PCT_EXT_TABLE(lerp_scalar, PCT_LERP_DTYPES_PAIRED)

/* addcmul: x + (value * y) * z, the last step fused for floats (torch's compiled kernel contracts it) */
#define PCT_IS_FLOAT_T(v) ((__typeof__(v))0.5 != 0)
PCT_NUMS_PAIRED(PCT_EXT_DEFINE, addcmul, (PCT_IS_FLOAT_T(x) ? fma(alpha * y, z, x) : x + alpha * y * z), 0, 0)
/* complex: torch's products and quotient (Note [Complex products and quotients as torch's] in complex_math.h) */
#define PCT_CPX_VALUE_TIMES_Y pct_cpx_mul((__typeof__(y))PCT_CPX_WITH_IM(alpha), y)
PCT_COMPLEX_PAIRED(PCT_EXT_DEFINE, addcmul, x + pct_cpx_mul(PCT_CPX_VALUE_TIMES_Y, z), 0, 0)
#define PCT_ADDCMUL_DTYPES_PAIRED(X, a, b, c, d) PCT_NUMS_PAIRED(X, a, b, c, d) PCT_COMPLEX_PAIRED(X, a, b, c, d)
PCT_EXT_TABLE(addcmul, PCT_ADDCMUL_DTYPES_PAIRED)

PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, addcdiv, x + (alpha * y) / z, 0, 0)
PCT_COMPLEX_PAIRED(PCT_EXT_DEFINE, addcdiv, x + pct_cpx_div(PCT_CPX_VALUE_TIMES_Y, z), 0, 0)
#define PCT_ADDCDIV_DTYPES_PAIRED(X, a, b, c, d) PCT_FLOATS_PAIRED(X, a, b, c, d) PCT_COMPLEX_PAIRED(X, a, b, c, d)
PCT_EXT_TABLE(addcdiv, PCT_ADDCDIV_DTYPES_PAIRED)

/* nan_to_num: p1 replaces NaN, p2 +inf, alpha -inf */
#define PCT_NAN_TO_NUM(v, nan, pinf, ninf) ((v) != (v) ? (nan) : (isinf(v) ? ((v) > 0 ? (pinf) : (ninf)) : (v)))
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, nan_to_num, PCT_NAN_TO_NUM(x, p1, p2, alpha), 0, 0)
/* complex: the real and imaginary parts each, as torch */
#define PCT_CPX_NAN_TO_NUM(v, R)                                                                    \
    __builtin_complex((R)PCT_NAN_TO_NUM(creal(v), creal(p1), creal(p2), creal(alpha)),           \
                      (R)PCT_NAN_TO_NUM(cimag(v), creal(p1), creal(p2), creal(alpha)))
PCT_COMPLEX_PAIRED(PCT_EXT_DEFINE, nan_to_num, PCT_CPX_NAN_TO_NUM(x, __typeof__(creal(x))), 0, 0)
#define PCT_NAN_TO_NUM_DTYPES_PAIRED(X, a, b, c, d) PCT_FLOATS_PAIRED(X, a, b, c, d) PCT_COMPLEX_PAIRED(X, a, b, c, d)
PCT_EXT_TABLE(nan_to_num, PCT_NAN_TO_NUM_DTYPES_PAIRED)

/* round(decimals): nearest with ties to even, at a 10^|decimals| scale (has_p2: divide first) */
PCT_FLOATS_PAIRED(PCT_EXT_DEFINE, round,
                  (ctx->has_p1 ? (ctx->has_p2 > 0 ? nearbyint(x / p1) * p1 : nearbyint(x * p1) / p1) : nearbyint(x)), 0, 0)
PCT_EXT_TABLE(round, PCT_FLOATS_PAIRED)

/* logit: log(x / (1 - x)), x first clamped to [p1, 1 - p1] when eps is given. torch computes it in the input
 * type: for float16/bfloat16 every step (1 - x, the quotient, the bounds) is rounded to that type, which
 * PCT_RT does (the identity for float and double). */
#define PCT_RT(E, v) PCT_TO_COMPUTE_##E(PCT_FROM_COMPUTE_##E(v))
#define PCT_LOGIT_LO(E) PCT_RT(E, p1)
#define PCT_LOGIT_X(E) \
    (ctx->has_p1 ? (x < PCT_LOGIT_LO(E) ? PCT_LOGIT_LO(E) : (x > PCT_RT(E, 1 - PCT_LOGIT_LO(E)) ? PCT_RT(E, 1 - PCT_LOGIT_LO(E)) : x)) : x)
#define PCT_LOGIT_DEFINE(E, N, T, C, S, name, expr, y, z) \
    PCT_EXT_LOOP(name, E, N, T, C, log(PCT_RT(E, PCT_LOGIT_X(E) / PCT_RT(E, 1 - PCT_LOGIT_X(E)))))
PCT_FLOATS_PAIRED(PCT_LOGIT_DEFINE, logit, 0, 0, 0)
PCT_EXT_TABLE(logit, PCT_FLOATS_PAIRED)

pct_object *pct_pw_run_ext(pct_call *c, const char *name, pct_loop_fn (*pick)(int), int nin, pct_tensor **in,
                         pct_pw_ctx *ctx, int compute_dtype, bool int_to_float)
{
    pct_iter it;
    pct_iter_config cfg = {.out = c->out, .inplace = c->inplace, .ninputs = nin, .compute_dtype = compute_dtype,
                           .out_dtype = -1, .int_to_float = int_to_float, .check_overlap = true};
    for (int i = 0; i < nin; i++) cfg.inputs[i] = in[i];
    if (pct_iter_build(&it, &cfg) < 0) return NULL;
    pct_loop_fn loop = pick(it.compute_dtype);
    if (!loop) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'", name, pct_dtype_cpp_name[it.compute_dtype]);
        pct_iter_release(&it);
        return NULL;
    }
    /* the loop reads y and z only when the op has them (has_p2 < 0 marks 2 or 3 inputs) */
    if (nin >= 2) ctx->has_p2 = nin == 3 ? -2 : -1;
    pct_iter_run(&it, loop, ctx);
    return pct_iter_finish(&it);
}

pct_object *pct_cpu_div_mode(pct_call *c)
{
    PCT_ARGS(div_mode);
    pct_tensor *in[2] = {arg.input, arg.other};
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    const char *m = arg.rounding_mode;
    int op = PCT_OP_div;
    if (m) {
        if (strcmp(m, "trunc") == 0) op = PCT_OP_div_trunc;
        else if (strcmp(m, "floor") == 0) op = PCT_OP_floor_divide;
        else {
            pct_error(PCT_ERR_RUNTIME, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", m);
            return NULL;
        }
    }
    return pct_pw_run(c, op, 2, in, &ctx);
}

/* dtype of a tensor combined with optional Python-number bounds (torch promotes them as wrapped numbers) */
static int promote_with_scalars(pct_tensor *t, const pct_scalar *a, const pct_scalar *b)
{
    pct_result_type_state st = PCT_RESULT_TYPE_STATE_INIT;
    pct_result_type_update(&st, t->dtype, t->ndim == 0 ? 1 : 0);
    if (a) pct_result_type_update(&st, pct_scalar_dtype(a), 2);
    if (b) pct_result_type_update(&st, pct_scalar_dtype(b), 2);
    return pct_result_type_finish(&st);
}

pct_object *pct_clamp_run(pct_call *c, pct_tensor *x, const pct_scalar *lo, const pct_scalar *hi)
{
    if (!lo && !hi) {
        pct_error_str(PCT_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
        return NULL;
    }
    pct_pw_ctx ctx = {0};
    int dtype = promote_with_scalars(x, lo, hi);
    if (x->dtype == PCT_BOOL && dtype == PCT_BOOL) {
        pct_error_str(PCT_ERR_NOT_IMPLEMENTED, "\"clamp_cpu\" not implemented for 'Bool'");
        return NULL;
    }
    bool fl = pct_dtype_is_floating(dtype);
    /* a NaN bound makes the result NaN: torch then checks neither bound */
    bool nan_bound = (lo && lo->kind == PCT_SCALAR_FLOAT && isnan(lo->d)) ||
                     (hi && hi->kind == PCT_SCALAR_FLOAT && isnan(hi->d));
    if (lo) {
        if (!nan_bound && !lo->from_tensor && pct_scalar_check_fits(lo, dtype) < 0) return NULL; /* Tensor overload: no check */
        ctx.has_p1 = 1; ctx.p1 = fl ? lo->d : 0; ctx.p1_i = lo->i; /* integer loops read p1_i */
    }
    if (hi) {
        if (!nan_bound && !hi->from_tensor && pct_scalar_check_fits(hi, dtype) < 0) return NULL;
        ctx.has_p2 = 1; ctx.p2 = fl ? hi->d : 0; ctx.p2_i = hi->i;
    }
    if (c->inplace) {
        if (dtype != x->dtype && !pct_can_cast(dtype, x->dtype)) {
            /* torch's clamp names the output type as C++ does (typeid) */
            pct_error(PCT_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                         pct_dtype_cpp_name[dtype], pct_dtype_cpp_type_name[x->dtype]);
            return NULL;
        }
        dtype = x->dtype;
    } else if (c->out && c->out->dtype != dtype) {
        pct_error(PCT_ERR_RUNTIME, "Found dtype %s but expected %s", pct_dtype_cpp_name[c->out->dtype],
                     pct_dtype_cpp_name[dtype]);
        return NULL;
    }
    return pct_pw_run_ext(c, "clamp", clamp_loop, 1, &x, &ctx, dtype, false);
}

pct_object *pct_cpu_clamp(pct_call *c) { PCT_ARGS(clamp); return pct_clamp_run(c, arg.input, arg.min, arg.max); }
pct_object *pct_cpu_clip(pct_call *c) { PCT_ARGS(clip); return pct_clamp_run(c, arg.input, arg.min, arg.max); }

pct_object *pct_cpu_where(pct_call *c)
{
    PCT_ARGS(where);
    pct_tensor *cond = arg.condition;
    if (cond->dtype != PCT_BOOL && cond->dtype != PCT_UINT8) {
        pct_error(PCT_ERR_RUNTIME, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                     pct_dtype_cpp_name[cond->dtype]);
        return NULL;
    }
    pct_tensor *in[3] = {cond, arg.input, arg.other};
    pct_pw_ctx ctx = {0};
    pct_tensor *ab[2] = {in[1], in[2]};
    int dtype = pct_result_type_of(2, ab);
    if (dtype < 0) return NULL;
    /* a Python number is converted to the result dtype with torch's range check (float16/bfloat16: unchecked) */
    for (int k = 1; k < 3 && !pct_dtype_is_reduced_float(dtype); k++) {
        if (!(in[k]->flags & PCT_FLAG_WRAPPED_NUMBER)) continue;
        pct_scalar s;
        pct_tensor_item_scalar(in[k], &s);
        if (pct_scalar_check_fits(&s, dtype) < 0) return NULL;
    }
    if (c->out && !c->inplace && c->out->dtype != dtype) {
        pct_error(PCT_ERR_RUNTIME, "Expected out type to be %s but got %s", pct_dtype_cpp_name[dtype], pct_dtype_cpp_name[c->out->dtype]);
        return NULL;
    }
    return pct_pw_run_ext(c, "where", where_loop, 3, in, &ctx, dtype, false);
}

pct_object *pct_cpu_lerp(pct_call *c)
{
    PCT_ARGS(lerp);
    pct_tensor *in[3] = {arg.input, arg.end, arg.weight};
    if (in[0]->dtype != in[1]->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected dtype %s for `end` but got dtype %s", pct_dtype_cpp_type_name[in[0]->dtype],
                     pct_dtype_cpp_type_name[in[1]->dtype]);
        return NULL;
    }
    /* a weight tensor must match too; a Python number or a 0-d tensor is taken as a Scalar weight, as in torch */
    if (!(in[2]->flags & PCT_FLAG_WRAPPED_NUMBER) && in[2]->ndim > 0 && in[2]->dtype != in[0]->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected dtype %s for `weight` but got dtype %s", pct_dtype_cpp_type_name[in[0]->dtype],
                     pct_dtype_cpp_type_name[in[2]->dtype]);
        return NULL;
    }
    if (!pct_dtype_is_floating(in[0]->dtype) && !pct_dtype_is_complex(in[0]->dtype)) { /* before the weight's range check, as torch */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                     in[2]->flags & PCT_FLAG_WRAPPED_NUMBER ? "lerp_kernel_scalar" : "lerp_kernel_tensor",
                     pct_dtype_cpp_name[in[0]->dtype]);
        return NULL;
    }
    pct_pw_ctx ctx = {0};
    if (in[2]->flags & PCT_FLAG_WRAPPED_NUMBER && in[2]->numel == 1) {
        /* torch's lerp(Scalar weight) converts it to the compute type with its range check */
        pct_scalar w;
        pct_tensor_item_scalar(in[2], &w);
        if (pct_scalar_check_opmath(&w, in[0]->dtype) < 0) return NULL;
        ctx.p1 = w.d;
        ctx.alpha_im = w.kind == PCT_SCALAR_COMPLEX ? w.im : 0;
        return pct_pw_run_ext(c, "lerp_kernel_scalar", lerp_scalar_loop, 2, in, &ctx, in[0]->dtype, false);
    }
    return pct_pw_run_ext(c, "lerp_kernel_scalar", lerp_loop, 3, in, &ctx, in[0]->dtype, false);
}

static pct_object *addc(pct_call *c, bool is_div, pct_tensor *input, pct_tensor *t1, pct_tensor *t2, const pct_scalar *v)
{
    pct_tensor *in[3] = {input, t1, t2};
    int dtype = pct_result_type_of(3, in);
    if (dtype < 0) return NULL;
    /* torch refuses two integral (or bool) divisor operands, whatever self's dtype */
    if (is_div && pct_dtype_is_integral(in[1]->dtype, true) && pct_dtype_is_integral(in[2]->dtype, true)) {
        pct_error_str(PCT_ERR_RUNTIME, "Integer division with addcdiv is no longer supported, and in a future  release "
                                            "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                                            "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                                            "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                                            "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                                            "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
        return NULL;
    }
    if (pct_scalar_check_opmath(v, dtype) < 0) return NULL;
    pct_pw_ctx ctx = {.alpha_d = v->d, .alpha_i = v->kind == PCT_SCALAR_FLOAT ? (int64_t)v->d : v->i,
                      .alpha_im = v->kind == PCT_SCALAR_COMPLEX ? v->im : 0};
    return pct_pw_run_ext(c, is_div ? "addcdiv" : "addcmul", is_div ? addcdiv_loop : addcmul_loop, 3, in, &ctx, -1, false);
}
pct_object *pct_cpu_addcmul(pct_call *c)
{
    PCT_ARGS(addcmul);
    return addc(c, false, arg.input, arg.tensor1, arg.tensor2, &arg.value);
}

pct_object *pct_cpu_addcdiv(pct_call *c)
{
    PCT_ARGS(addcdiv);
    return addc(c, true, arg.input, arg.tensor1, arg.tensor2, &arg.value);
}

/* out= of an op that is the identity for x's dtype: resized to x's shape (as any out=), then written */
static pct_object *copy_to_out(pct_tensor *out, pct_tensor *x, bool check_overlap)
{
    if (pct_out_resize(out, x->ndim, x->sizes) < 0) return NULL;
    if ((check_overlap && pct_check_written_overlap(out, 1, &x) < 0) || pct_copy_(out, x) < 0) return NULL;
    PCT_INCREF(out);
    return (pct_object *)out;
}

pct_object *pct_cpu_nan_to_num(pct_call *c)
{
    PCT_ARGS(nan_to_num);
    pct_tensor *x = arg.input;
    if (c->out && !c->inplace && c->out->dtype != x->dtype) {
        pct_error(PCT_ERR_RUNTIME, "nan_to_num: dtype of out: %s should be same as input: %s",
                     pct_dtype_cpp_name[c->out->dtype], pct_dtype_cpp_name[x->dtype]);
        return NULL;
    }
    if (!pct_dtype_is_floating(x->dtype) && !pct_dtype_is_complex(x->dtype)) {
        if (c->out) return copy_to_out(c->out, x, !c->inplace); /* torch: nan_to_num_ of ints is a no-op */
        return (pct_object *)pct_to_dtype(x, x->dtype, !c->inplace);
    }
    const double big = pct_dtype_infos[x->dtype].highest, lowest = pct_dtype_infos[x->dtype].lowest;
    pct_pw_ctx ctx = {.p1 = arg.nan.none ? 0.0 : arg.nan.v, .p2 = arg.posinf.none ? big : arg.posinf.v,
                      .alpha_d = arg.neginf.none ? lowest : arg.neginf.v};
    return pct_pw_run_ext(c, "nan_to_num", nan_to_num_loop, 1, &x, &ctx, x->dtype, false);
}

pct_object *pct_cpu_round(pct_call *c)
{
    PCT_ARGS(round);
    pct_tensor *x = arg.input;
    const bool explicit_decimals = !arg.decimals.none; /* torch's round.decimals overload, even for 0 */
    int64_t decimals = explicit_decimals ? arg.decimals.v : 0;
    if (c->out && !c->inplace && pct_pw_check_out_dtype(PCT_OP_neg, c->out, x) < 0) return NULL; /* as neg: same dtype */
    if (!pct_dtype_is_floating(x->dtype)) {
        /* torch has no integral kernel for decimals, nor a bool one at all */
        if (explicit_decimals || x->dtype == PCT_BOOL) {
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                         decimals != 0 ? "round_cpu" : "round_vml_cpu", pct_dtype_cpp_name[x->dtype]);
            return NULL;
        }
        if (c->out) return copy_to_out(c->out, x, true);
        return (pct_object *)pct_to_dtype(x, x->dtype, !c->inplace);
    }
    pct_pw_ctx ctx = {0};
    if (decimals != 0) {
        ctx.has_p1 = 1;
        ctx.p1 = pow(10.0, (double)(decimals > 0 ? decimals : -decimals));
        ctx.has_p2 = decimals < 0; /* negative decimals divide first */
    }
    return pct_pw_run_ext(c, "round", round_loop, 1, &x, &ctx, x->dtype, false);
}

pct_object *pct_cpu_logit(pct_call *c)
{
    PCT_ARGS(logit);
    pct_tensor *x = arg.input;
    pct_pw_ctx ctx = {0};
    if (!arg.eps.none) {
        /* torch converts eps to the result dtype with its range check */
        pct_scalar eps = {PCT_SCALAR_FLOAT, 0, arg.eps.v, 0, 0};
        if (pct_scalar_check_fits(&eps, pct_dtype_is_floating(x->dtype) ? x->dtype : pct_default_dtype) < 0) return NULL;
        ctx.has_p1 = 1;
        ctx.p1 = arg.eps.v;
    }
    return pct_pw_run_ext(c, "logit", logit_loop, 1, &x, &ctx, -1, true);
}

pct_object *pct_cpu_square(pct_call *c)
{
    PCT_ARGS(square);
    pct_tensor *x = arg.input;
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    if (x->dtype == PCT_BOOL) {
        pct_tensor *l = pct_to_dtype(x, PCT_INT64, false);
        if (!l) return NULL;
        pct_tensor *in[2] = {l, l};
        pct_object *r = pct_pw_run(c, PCT_OP_mul, 2, in, &ctx);
        PCT_DECREF(l);
        return r;
    }
    pct_tensor *in[2] = {x, x};
    return pct_pw_run(c, PCT_OP_mul, 2, in, &ctx);
}

/* float_power: always in float64 (torch's definition), through pow's loops */
pct_object *pct_cpu_float_power(pct_call *c)
{
    PCT_ARGS(float_power);
    pct_tensor *a = arg.input, *b = arg.exponent;
    /* complex128 where either operand is complex, else float64 */
    const int rd = pct_dtype_is_complex(a->dtype) || pct_dtype_is_complex(b->dtype) ? PCT_COMPLEX128 : PCT_FLOAT64;
    if (c->inplace && a->dtype != rd) {
        pct_error(PCT_ERR_RUNTIME, "the base given to float_power_ has dtype %s but the operation's result requires dtype %s",
                     pct_dtype_cpp_name[a->dtype], pct_dtype_cpp_name[rd]);
        return NULL;
    }
    if (c->out && c->out->dtype != rd) {
        pct_error(PCT_ERR_RUNTIME, "the output given to float_power has dtype %s but the operation's result requires dtype %s",
                     pct_dtype_cpp_name[c->out->dtype], pct_dtype_cpp_name[rd]);
        return NULL;
    }
    pct_tensor *in[2] = {pct_to_dtype(a, rd, false), pct_to_dtype(b, rd, false)};
    pct_object *r = NULL;
    if (in[0] && in[1]) {
        pct_pw_ctx ctx = {0};
        r = pct_pw_run(c, PCT_OP_pow, 2, in, &ctx);
    }
    PCT_XDECREF(in[0]);
    PCT_XDECREF(in[1]);
    return r;
}
