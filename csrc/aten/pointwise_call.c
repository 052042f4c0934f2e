/* pointwise_call.c: the device-neutral half of a call of a PCT_UNARY / PCT_BINARY op (pointwise_call.h). */
#include "pointwise_call.h"
#include "error.h"
#include "out.h"
#include <string.h>

int pct_pw_refuse_dtype(int op_index, int dtype, const char *name, const char *device)
{
    if (dtype == PCT_BOOL && op_index == PCT_OP_neg)
        pct_error_str(PCT_ERR_RUNTIME, "Negation, the `-` operator, on a bool tensor is not supported. "
                                            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    else if (dtype == PCT_BOOL && op_index == PCT_OP_relu)
        pct_error_str(PCT_ERR_RUNTIME, "Boolean inputs not supported for relu");
    else if (pct_unsigned_refusal_name(op_index)) /* torch's kernel name, the same for every dtype */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", pct_unsigned_refusal_name(op_index),
                     pct_dtype_cpp_name[dtype]);
    else /* torch names the kernels of torch.special without the prefix its function names carry */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_%s\" not implemented for '%s'",
                  strncmp(name, "special_", 8) == 0 ? name + 8 : name, device, pct_dtype_cpp_name[dtype]);
    return -1;
}

/* The table ops whose complex loop gives a real result (abs, angle: ops_complex.def's PCT_CPX_REAL). */
#define PCT_IS_REAL_PCT_CPX_REAL 1
#define PCT_IS_REAL_PCT_PROMOTE_DEFAULT 0
#define PCT_IS_REAL_PCT_PROMOTE_INT_TO_FLOAT 0
#define PCT_IS_REAL_PCT_PROMOTE_COMPARE 0
#define PCT_IS_REAL_PCT_PROMOTE_BOOL_OUT 0
static const bool complex_real_result[PCT_NUM_OPS] = {
#define PCT_COMPLEX_UNARY(id, promo, expr) [PCT_OP_##id] = PCT_IS_REAL_##promo,
#include "ops_complex.def"
};

/* The dtype of a unary table op's result for an input of dtype d where it is not d's own: float32 for abs(complex64) */
static int unary_result_dtype(int op_index, int d)
{
    return pct_dtype_is_complex(d) && complex_real_result[op_index] ? pct_dtype_to_real(d) : d;
}

int pct_pw_raise(const pct_pw_ctx *ctx)
{
    if (ctx->error == PCT_PW_ERR_ZERO_DIVISION) {
        pct_error_str(PCT_ERR_RUNTIME, "ZeroDivisionError");
        return -1;
    }
    return 0;
}

void pct_pw_config(pct_iter_config *cfg, int promotion)
{
    if (promotion == PCT_PROMOTE_INT_TO_FLOAT) cfg->int_to_float = true;
    else if (promotion == PCT_PROMOTE_COMPARE || promotion == PCT_PROMOTE_BOOL_OUT) cfg->out_dtype = PCT_BOOL;
}

/* torch builds unary ops that keep their input's dtype (neg, abs, sign, floor, ...) with all dtypes required
 * equal: out= may not be another dtype; signbit's out must be bool. */
int pct_pw_check_out_dtype(int op_index, const pct_tensor *out, const pct_tensor *in)
{
    const pct_op *op = &pct_ops[op_index];
    if (op->kind != PCT_KIND_UNARY) return 0;
    if (op_index == PCT_OP_signbit && out->dtype != PCT_BOOL) {
        pct_error_str(PCT_ERR_RUNTIME, "signbit does not support non-boolean outputs.");
        return -1;
    }
    const int expected = unary_result_dtype(op_index, in->dtype);
    if (pct_dtype_is_complex(in->dtype) && !pct_dtype_is_complex(expected)) {
        /* a real result of a complex input (abs, angle): torch casts it into out= under the usual rule (checked
         * torch.can_cast), except that abs wants a complex out= of its input's own dtype */
        if (op_index == PCT_OP_abs && pct_dtype_is_complex(out->dtype) && out->dtype != in->dtype) {
            pct_error(PCT_ERR_RUNTIME, "Found dtype %s but expected %s", pct_dtype_cpp_name[out->dtype],
                      pct_dtype_cpp_name[in->dtype]);
            return -1;
        }
        return pct_out_check_cast(expected, out);
    }
    if ((op->promotion == PCT_PROMOTE_DEFAULT || expected != in->dtype) && out->dtype != expected) {
        pct_error(PCT_ERR_RUNTIME, "Found dtype %s but expected %s", pct_dtype_cpp_name[out->dtype],
                     pct_dtype_cpp_name[expected]);
        return -1;
    }
    return 0;
}

/* torch multiplies and divides a float16/bfloat16 tensor by a 0-d `other` (a Python number, or a 0-d tensor
 * of any dtype) in float with the value as it was before the cast to the tensor's dtype
 * (BinaryOpsKernel's original_scalar_value): 1.7019 stays 1.7019, not the float16 1.7021, and 2**63 - 1
 * does not overflow to inf. The loops read it from ctx where `other` is broadcast (stride 0). On a runner with
 * cpu_scalars_in_opmath (Note [CPU scalars in opmath] in pointwise_call.h) the same holds for add and sub and for a
 * 0-d `input`, where the scalar is on the CPU; a 0-d tensor on a device is never read back to the host for it. */
static void scalars_in_opmath(const pct_pw_runner *r, int op_index, int ninputs, pct_tensor *const *inputs,
                              int compute_dtype, pct_pw_ctx *ctx)
{
    const bool mul_div = op_index == PCT_OP_mul || op_index == PCT_OP_multiply || op_index == PCT_OP_div ||
                         op_index == PCT_OP_divide || op_index == PCT_OP_true_divide;
    const bool add_sub = op_index == PCT_OP_add || op_index == PCT_OP_sub || op_index == PCT_OP_subtract ||
                         op_index == PCT_OP_rsub;
    if (!(mul_div || (add_sub && r->cpu_scalars_in_opmath)) || ninputs != 2 || !pct_dtype_is_reduced_float(compute_dtype))
        return;
    for (int i = r->cpu_scalars_in_opmath ? 0 : 1; i < 2; i++) {
        const pct_tensor *t = inputs[i];
        if (t->ndim != 0 || inputs[1 - i]->ndim == 0 || t->device_type != PCT_CPU) continue;
        /* a Python int in [2**63, 2**64) is its value, not its int64 bits */
        const double v = t->flags & PCT_FLAG_UINT64_NUMBER ? (double)*(const uint64_t *)pct_tensor_data(t)
                                                           : pct_load_as_double(pct_tensor_data(t), t->dtype);
        if (i == 0) {
            ctx->has_scalar_a = 1;
            ctx->scalar_a = v;
        } else {
            ctx->has_scalar_b = 1;
            ctx->scalar_b = v;
        }
    }
}

pct_object *pct_pw_run_on(const pct_pw_runner *r, pct_call *c, int op_index, int ninputs, pct_tensor **inputs,
                          pct_pw_ctx *ctx)
{
    const pct_op *op = &pct_ops[op_index];
    pct_iter it;
    pct_iter_config cfg = {.out = c->out, .inplace = c->inplace, .ninputs = ninputs, .compute_dtype = -1, .out_dtype = -1,
                           .check_overlap = true};
    for (int i = 0; i < ninputs; i++) cfg.inputs[i] = inputs[i];
    pct_pw_config(&cfg, op->promotion);
    if (ninputs == 1 && unary_result_dtype(op_index, inputs[0]->dtype) != inputs[0]->dtype)
        cfg.out_dtype = unary_result_dtype(op_index, inputs[0]->dtype); /* abs, angle of a complex tensor */
    if (op_index == PCT_OP_sub || op_index == PCT_OP_subtract || op_index == PCT_OP_rsub) {
        for (int i = 0; i < ninputs; i++) {
            if (inputs[i]->dtype != PCT_BOOL) continue;
            pct_error_str(PCT_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
            return NULL;
        }
    }
    if (c->out && !c->inplace && pct_pw_check_out_dtype(op_index, c->out, inputs[0]) < 0) return NULL;
    if (pct_iter_build(&it, &cfg) < 0) return NULL;
    if (!r->has_loop(op_index, it.compute_dtype)) {
        pct_pw_refuse_dtype(op_index, it.compute_dtype, op->sig.name, r->device);
        pct_iter_release(&it);
        return NULL;
    }
    scalars_in_opmath(r, op_index, ninputs, inputs, it.compute_dtype, ctx);
    if (r->run(&it, op_index, ctx) < 0 || pct_pw_raise(ctx) < 0) { pct_iter_release(&it); return NULL; }
    return pct_iter_finish(&it);
}

pct_object *pct_pw_unary_call(const pct_pw_runner *r, pct_call *c, pct_tensor *x)
{
    pct_pw_ctx ctx = {0};
    /* a real tensor is its own conjugate: torch's conj_physical (and conj_physical_) return it, not a copy, and
       autograd records nothing (the result is the input); with out= the values are copied */
    if (c->op_index == PCT_OP_conj_physical && !pct_dtype_is_complex(x->dtype) && (!c->out || c->inplace)) {
        PCT_INCREF(x);
        return (pct_object *)x;
    }
    return pct_pw_run_on(r, c, c->op_index, 1, &x, &ctx);
}

/* torch's pow(Tensor, Scalar): an integral base refuses a negative integral exponent; an exponent other than 0 and 1
 * (which are a fill and a copy) is range-checked against the result dtype (float and double take any); bool has a
 * kernel only there (x ** True is x, x ** False is 1, which the bool loop computes). */
static int pow_checks(pct_tensor *base, pct_tensor *exp)
{
    bool base_scalar = base->flags & PCT_FLAG_WRAPPED_NUMBER, exp_scalar = exp->flags & PCT_FLAG_WRAPPED_NUMBER;
    pct_tensor *ab[2] = {base, exp};
    int rt = pct_result_type_of(2, ab);
    if (rt < 0) return -1;
    if (!exp_scalar || base_scalar) {
        if (rt != PCT_BOOL) return 0;
        pct_error_str(PCT_ERR_NOT_IMPLEMENTED, "\"pow\" not implemented for 'Bool'");
        return -1;
    }
    pct_scalar s;
    pct_tensor_item_scalar(exp, &s);
    if (s.kind != PCT_SCALAR_FLOAT && pct_dtype_is_integral(base->dtype, true) && s.d < 0) {
        pct_error_str(PCT_ERR_RUNTIME, "Integers to negative integer powers are not allowed.");
        return -1;
    }
    if (s.d == 0 || s.d == 1 || rt == PCT_FLOAT32 || rt == PCT_FLOAT64) return 0;
    return pct_scalar_check_fits(&s, rt);
}

/* torch's pow(Tensor, Scalar) with a float32, float64 or bfloat16 result (on CUDA, float16 too) runs the sqrt, rsqrt
 * and reciprocal kernels for the exponents 0.5, -0.5 and -1: the op index to run instead, or -1. Elsewhere those
 * exponents go through pow, whose values differ at -inf and -0 (pow(-inf, 0.5) is inf, sqrt(-inf) NaN). */
static int pow_as_unary_op(const pct_pw_runner *r, pct_tensor *base, pct_tensor *exp)
{
    if (!(exp->flags & PCT_FLAG_WRAPPED_NUMBER) || (base->flags & PCT_FLAG_WRAPPED_NUMBER)) return -1;
    pct_tensor *ab[2] = {base, exp};
    const int rt = pct_result_type_of(2, ab);
    if (rt != PCT_FLOAT32 && rt != PCT_FLOAT64 && rt != PCT_BFLOAT16 && !(rt == PCT_FLOAT16 && r->pow_unary_for_float16))
        return -1;
    pct_scalar s;
    pct_tensor_item_scalar(exp, &s);
    if (s.kind == PCT_SCALAR_COMPLEX) return -1;
    return s.d == 0.5 ? PCT_OP_sqrt : s.d == -0.5 ? PCT_OP_rsqrt : s.d == -1 ? PCT_OP_reciprocal : -1;
}

pct_object *pct_pw_binary_call(const pct_pw_runner *r, pct_call *c, const pct_binary_args *args)
{
    pct_tensor *a = args->a, *b = args->b;
    if (c->op_index == PCT_OP_pow) {
        if (pow_checks(a, b) < 0) return NULL;
        const int unary = pow_as_unary_op(r, a, b);
        if (unary >= 0) {
            pct_pw_ctx uctx = {0};
            return pct_pw_run_on(r, c, unary, 1, &a, &uctx);
        }
    }
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    if (args->has_alpha) { /* add/sub */
        const pct_scalar *s = &args->alpha;
        if (s->kind != PCT_SCALAR_INT || s->i != 1) { /* the default alpha needs no check */
            pct_tensor *ab[2] = {a, b};
            int rt = pct_result_type_of(2, ab);
            if (rt < 0) return NULL;
            if (s->kind == PCT_SCALAR_COMPLEX && !pct_dtype_is_complex(rt)) {
                pct_error(PCT_ERR_RUNTIME, "For non-complex input tensors, argument alpha must not be a complex number.");
                return NULL;
            }
            if (s->kind == PCT_SCALAR_FLOAT && !pct_dtype_is_floating(rt) && !pct_dtype_is_complex(rt)) {
                pct_error(PCT_ERR_RUNTIME, "For integral input tensors, argument alpha must not be a floating point number.");
                return NULL;
            }
            if (s->kind == PCT_SCALAR_BOOL && rt != PCT_BOOL) {
                pct_error_str(PCT_ERR_RUNTIME, "Boolean alpha only supported for Boolean results.");
                return NULL;
            }
            if (pct_scalar_check_fits(s, rt) < 0) return NULL;
        }
        ctx.alpha_d = s->d;
        ctx.alpha_im = s->kind == PCT_SCALAR_COMPLEX ? s->im : 0;
        ctx.alpha_i = s->kind == PCT_SCALAR_FLOAT ? (int64_t)s->d : s->i;
        /* torch subtracts by adding -alpha, negated as an int64: -(-2^63) wraps to -2^63 */
        if (s->kind == PCT_SCALAR_INT && s->i == INT64_MIN && s->d < 0 &&
            (c->op_index == PCT_OP_sub || c->op_index == PCT_OP_subtract || c->op_index == PCT_OP_rsub))
            ctx.alpha_d = -s->d;
    }
    pct_tensor *in[2] = {a, b};
    return pct_pw_run_on(r, c, c->op_index, 2, in, &ctx);
}
