/* pointwise.c: the elementwise loops of ops.def's PCT_UNARY and PCT_BINARY entries,
 * and the two generic kernels that run them through the loop machine.
 *
 * Each loop has three shapes the compiler vectorizes (all operands contiguous; one
 * input a broadcast scalar; the other) and a strided fallback. Loops exist for every
 * dtype; the entry's dtype mask decides which are reachable. */
#include "../iter.h"
#include <tgmath.h>
#include "../op.h"
#include "../error.h"
#include "pointwise_math.h"
#include "special_functions.h"
#include "special_polynomials.h"
#include "pointwise.h"
#include "vecmath.h"

/* float expressions for floating dtypes, integer expressions for the rest */
#define PCT_PICK_BOOL(f, i) i
#define PCT_PICK_UINT8(f, i) i
#define PCT_PICK_INT8(f, i) i
#define PCT_PICK_INT16(f, i) i
#define PCT_PICK_INT32(f, i) i
#define PCT_PICK_INT64(f, i) i
#define PCT_PICK_FLOAT16(f, i) f
#define PCT_PICK_BFLOAT16(f, i) f
#define PCT_PICK_FLOAT32(f, i) f
#define PCT_PICK_FLOAT64(f, i) f
#define PCT_PICK_UINT16(f, i) i
#define PCT_PICK_UINT32(f, i) i
#define PCT_PICK_UINT64(f, i) i

#define PCT_OUT_T_PCT_PROMOTE_DEFAULT(T) T
#define PCT_OUT_T_PCT_PROMOTE_INT_TO_FLOAT(T) T
#define PCT_OUT_T_PCT_PROMOTE_COMPARE(T) bool
#define PCT_OUT_T_PCT_PROMOTE_BOOL_OUT(T) bool
#define PCT_STORE_PCT_PROMOTE_DEFAULT(E, v) PCT_FROM_COMPUTE_##E(v)
#define PCT_STORE_PCT_PROMOTE_INT_TO_FLOAT(E, v) PCT_FROM_COMPUTE_##E(v)
#define PCT_STORE_PCT_PROMOTE_COMPARE(E, v) ((bool)(v))
#define PCT_STORE_PCT_PROMOTE_BOOL_OUT(E, v) ((bool)(v))

#define PCT_UNARY_LOOP(E, N, T, C, S, id, fexpr, iexpr, promo)                                \
    PCT_HOT_X86_64_V3 static void unary_##id##_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                         \
        pct_pw_ctx *ctx = vctx;                                                               \
        (void)ctx;                                                                            \
        typedef PCT_OUT_T_##promo(T) OT;                                                      \
        int64_t n = *dims, so = steps[0], si = steps[1];                                      \
        if (so == (int64_t)sizeof(OT) && si == (int64_t)sizeof(T)) {                         \
            OT *restrict op = (OT *)args[0];                                                  \
            const T *restrict ip = (const T *)args[1];                                        \
            for (int64_t k = 0; k < n; k++) {                                                 \
                C x = PCT_TO_COMPUTE_##E(ip[k]); (void)x;                                     \
                op[k] = PCT_STORE_##promo(E, PCT_PICK_##E(fexpr, iexpr));                     \
            }                                                                                 \
        } else {                                                                              \
            for (int64_t k = 0; k < n; k++) {                                                 \
                C x = PCT_TO_COMPUTE_##E(*(const T *)(args[1] + k * si)); (void)x;            \
                *(OT *)(args[0] + k * so) = PCT_STORE_##promo(E, PCT_PICK_##E(fexpr, iexpr)); \
            }                                                                                 \
        }                                                                                     \
    }

#define PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, LOAD_A, LOAD_B, STORE)                     \
    for (int64_t k = 0; k < n; k++) {                                                         \
        C a = LOAD_A, b = LOAD_B; (void)a; (void)b;                                           \
        STORE = PCT_STORE_##promo(E, PCT_PICK_##E(fexpr, iexpr));                             \
    }

#define PCT_BINARY_LOOP(E, N, T, C, S, id, fexpr, iexpr, promo)                               \
    PCT_HOT_X86_64_V3 static void binary_##id##_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                         \
        pct_pw_ctx *ctx = vctx;                                                               \
        const C alpha = (C)PCT_PICK_##E(PCT_SCALAR_AS_T(E, (C)ctx->alpha_d), ctx->alpha_i);   \
        (void)alpha;                                                                          \
        typedef PCT_OUT_T_##promo(T) OT;                                                      \
        int64_t n = *dims, so = steps[0], sa = steps[1], sb = steps[2];                       \
        OT *restrict op = (OT *)args[0];                                                      \
        const T *restrict ap = (const T *)args[1];                                            \
        const T *restrict bp = (const T *)args[2];                                            \
        if (so == (int64_t)sizeof(OT) && sa == (int64_t)sizeof(T) && sb == (int64_t)sizeof(T)) { \
            PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, PCT_TO_COMPUTE_##E(ap[k]), PCT_TO_COMPUTE_##E(bp[k]), op[k]) \
        } else if (so == (int64_t)sizeof(OT) && sa == (int64_t)sizeof(T) && sb == 0) {        \
            const C bs = ctx->has_scalar_b ? (C)ctx->scalar_b : PCT_TO_COMPUTE_##E(bp[0]);    \
            PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, PCT_TO_COMPUTE_##E(ap[k]), bs, op[k])  \
        } else if (so == (int64_t)sizeof(OT) && sa == 0 && sb == (int64_t)sizeof(T)) {        \
            const C as = PCT_TO_COMPUTE_##E(ap[0]);                                           \
            PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, as, PCT_TO_COMPUTE_##E(bp[k]), op[k])  \
        } else {                                                                              \
            PCT_BINARY_BODY(E, C, fexpr, iexpr, promo,                                        \
                            PCT_TO_COMPUTE_##E(*(const T *)(args[1] + k * sa)),               \
                            PCT_TO_COMPUTE_##E(*(const T *)(args[2] + k * sb)),               \
                            *(OT *)(args[0] + k * so))                                        \
        }                                                                                     \
    }


/* Which loops exist: PCT_SEL_<set>_<category>(then, else), category CBOOL, CINT, CFLT (float32/64), CRED
 * (float16/bfloat16), CUNS (uint16/32/64; not I or F: <complex.h> defines I). The set FLT32 is float32 and float64
 * only (torch has no reduced-precision kernel for most of torch.special). */
#define PCT_CAT_BOOL CBOOL
#define PCT_CAT_UINT8 CINT
#define PCT_CAT_INT8 CINT
#define PCT_CAT_INT16 CINT
#define PCT_CAT_INT32 CINT
#define PCT_CAT_INT64 CINT
#define PCT_CAT_FLOAT16 CRED
#define PCT_CAT_BFLOAT16 CRED
#define PCT_CAT_FLOAT32 CFLT
#define PCT_CAT_FLOAT64 CFLT
#define PCT_CAT_UINT16 CUNS
#define PCT_CAT_UINT32 CUNS
#define PCT_CAT_UINT64 CUNS
#define PCT_SEL_ALL_CBOOL(t, e) t
#define PCT_SEL_ALL_CINT(t, e) t
#define PCT_SEL_ALL_CFLT(t, e) t
#define PCT_SEL_NUM_CBOOL(t, e) e
#define PCT_SEL_NUM_CINT(t, e) t
#define PCT_SEL_NUM_CFLT(t, e) t
#define PCT_SEL_FLOAT_CBOOL(t, e) e
#define PCT_SEL_FLOAT_CINT(t, e) e
#define PCT_SEL_FLOAT_CFLT(t, e) t
#define PCT_SEL_INT_CBOOL(t, e) e
#define PCT_SEL_INT_CINT(t, e) t
#define PCT_SEL_INT_CFLT(t, e) e
#define PCT_SEL_INTB_CBOOL(t, e) t
#define PCT_SEL_INTB_CINT(t, e) t
#define PCT_SEL_INTB_CFLT(t, e) e
#define PCT_SEL_ALL_CUNS(t, e) e
#define PCT_SEL_NUM_CUNS(t, e) e
#define PCT_SEL_FLOAT_CUNS(t, e) e
#define PCT_SEL_INT_CUNS(t, e) e
#define PCT_SEL_INTB_CUNS(t, e) e
/* the sets with the unsigned dtypes */
#define PCT_SEL_ALLU_CBOOL(t, e) t
#define PCT_SEL_ALLU_CINT(t, e) t
#define PCT_SEL_ALLU_CFLT(t, e) t
#define PCT_SEL_ALLU_CUNS(t, e) t
#define PCT_SEL_NUMU_CBOOL(t, e) e
#define PCT_SEL_NUMU_CINT(t, e) t
#define PCT_SEL_NUMU_CFLT(t, e) t
#define PCT_SEL_NUMU_CUNS(t, e) t
#define PCT_SEL_INTBU_CBOOL(t, e) t
#define PCT_SEL_INTBU_CINT(t, e) t
#define PCT_SEL_INTBU_CFLT(t, e) e
#define PCT_SEL_INTBU_CUNS(t, e) t
/* the reduced floats are in every set that has the other floats, except FLT32 */
#define PCT_SEL_ALL_CRED(t, e) t
#define PCT_SEL_NUM_CRED(t, e) t
#define PCT_SEL_FLOAT_CRED(t, e) t
#define PCT_SEL_INT_CRED(t, e) e
#define PCT_SEL_INTB_CRED(t, e) e
#define PCT_SEL_ALLU_CRED(t, e) t
#define PCT_SEL_NUMU_CRED(t, e) t
#define PCT_SEL_INTBU_CRED(t, e) e
#define PCT_SEL_FLT32_CBOOL(t, e) e
#define PCT_SEL_FLT32_CINT(t, e) e
#define PCT_SEL_FLT32_CFLT(t, e) t
#define PCT_SEL_FLT32_CRED(t, e) e
#define PCT_SEL_FLT32_CUNS(t, e) e
#define PCT_SEL_CAT(set, cat, t, e) PCT_SEL_##set##_##cat(t, e)
#define PCT_SEL_CAT2(set, cat, t, e) PCT_SEL_CAT(set, cat, t, e)
#define PCT_SEL(set, E, t, e) PCT_SEL_CAT2(set, PCT_CAT_##E, t, e)

/* Generate the loops: for each entry, one loop per dtype of its set. */
/* The dtype set rides along in the `promo` slot as a (set, promotion) pair. */
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    PCT_FORALL_ALL_DTYPES_PAIRED(PCT_UNARY_LOOP_PAIRED, id, fexpr, iexpr, (dtypes, promo))
#define PCT_UNARY_LOOP_PAIRED(E, N, T, C, S, id, fexpr, iexpr, sp) PCT_UNARY_LOOP_SP(E, N, T, C, S, id, fexpr, iexpr, PCT_FIRST sp, PCT_SECOND sp)
#define PCT_UNARY_LOOP_SP(E, N, T, C, S, id, fexpr, iexpr, set, promo) \
    PCT_SEL(set, E, PCT_UNARY_LOOP, PCT_NO_LOOP)(E, N, T, C, S, id, fexpr, iexpr, promo)
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    PCT_FORALL_ALL_DTYPES_PAIRED(PCT_BINARY_LOOP_PAIRED, id, fexpr, iexpr, (dtypes, promo))
#define PCT_BINARY_LOOP_PAIRED(E, N, T, C, S, id, fexpr, iexpr, sp) PCT_BINARY_LOOP_SP(E, N, T, C, S, id, fexpr, iexpr, PCT_FIRST sp, PCT_SECOND sp)
#define PCT_BINARY_LOOP_SP(E, N, T, C, S, id, fexpr, iexpr, set, promo) \
    PCT_SEL(set, E, PCT_BINARY_LOOP, PCT_NO_LOOP)(E, N, T, C, S, id, fexpr, iexpr, promo)
#define PCT_NO_LOOP(...)
#define PCT_FIRST_(a, b) a
#define PCT_SECOND_(a, b) b
#define PCT_FIRST PCT_FIRST_
#define PCT_SECOND PCT_SECOND_
#include "../ops.def"

/* Loop tables, indexed [op][dtype], and dtype masks. */
#define PCT_UNARY_ENTRY(E, N, T, C, S, id, set, b, c) PCT_SEL(set, E, unary_##id##_##N, NULL),
#define PCT_BINARY_ENTRY(E, N, T, C, S, id, set, b, c) PCT_SEL(set, E, binary_##id##_##N, NULL),
static const pct_loop_fn loop_table[PCT_NUM_OPS][PCT_NUM_DTYPES] = {
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {PCT_FORALL_ALL_DTYPES_PAIRED(PCT_UNARY_ENTRY, id, dtypes, 0, 0)},
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {PCT_FORALL_ALL_DTYPES_PAIRED(PCT_BINARY_ENTRY, id, dtypes, 0, 0)},
#include "../ops.def"
};
int pct_pw_check_dtype(int op_index, int dtype, const char *name)
{
    if (loop_table[op_index][dtype]) return 0;
    if (dtype == PCT_BOOL && op_index == PCT_OP_neg)
        pct_error_str(PCT_ERR_RUNTIME, "Negation, the `-` operator, on a bool tensor is not supported. "
                                            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    else if (dtype == PCT_BOOL && op_index == PCT_OP_relu)
        pct_error_str(PCT_ERR_RUNTIME, "Boolean inputs not supported for relu");
    else if (pct_unsigned_refusal_name(op_index)) /* torch's kernel name, the same for every dtype */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", pct_unsigned_refusal_name(op_index),
                     pct_dtype_cpp_name[dtype]);
    else /* torch names the kernels of torch.special without the prefix its function names carry */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'",
                  strncmp(name, "special_", 8) == 0 ? name + 8 : name, pct_dtype_cpp_name[dtype]);
    return -1;
}

pct_loop_fn pct_pw_loop(int op_index, int dtype) { return loop_table[op_index][dtype]; }

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
    if (op->promotion == PCT_PROMOTE_DEFAULT && out->dtype != in->dtype) {
        pct_error(PCT_ERR_RUNTIME, "Found dtype %s but expected %s", pct_dtype_cpp_name[out->dtype],
                     pct_dtype_cpp_name[in->dtype]);
        return -1;
    }
    return 0;
}

/* torch multiplies and divides a float16/bfloat16 tensor by a 0-d `other` (a Python number, or a 0-d tensor
 * of any dtype) in float with the value as it was before the cast to the tensor's dtype
 * (BinaryOpsKernel's original_scalar_value): 1.7019 stays 1.7019, not the float16 1.7021, and 2**63 - 1
 * does not overflow to inf. The loops read it from ctx where `other` is broadcast (stride 0). */
static void scalar_other_in_opmath(int op_index, int ninputs, pct_tensor *const *inputs, int compute_dtype, pct_pw_ctx *ctx)
{
    const bool op = op_index == PCT_OP_mul || op_index == PCT_OP_multiply || op_index == PCT_OP_div ||
                    op_index == PCT_OP_divide || op_index == PCT_OP_true_divide;
    if (!op || ninputs != 2 || !pct_dtype_is_reduced_float(compute_dtype) || inputs[1]->ndim != 0 || inputs[0]->ndim == 0)
        return;
    if (inputs[1]->flags & PCT_FLAG_UINT64_NUMBER) /* a Python int in [2**63, 2**64): its value, not its int64 bits */
        ctx->scalar_b = (double)*(const uint64_t *)pct_tensor_data(inputs[1]);
    else
        ctx->scalar_b = pct_load_as_double(pct_tensor_data(inputs[1]), inputs[1]->dtype);
    ctx->has_scalar_b = 1;
}

pct_object *pct_pw_run(pct_call *c, int op_index, int ninputs, pct_tensor **inputs, pct_pw_ctx *ctx)
{
    const pct_op *op = &pct_ops[op_index];
    pct_iter it;
    pct_iter_config cfg = {.out = c->out, .inplace = c->inplace, .ninputs = ninputs, .compute_dtype = -1, .out_dtype = -1,
                           .check_overlap = true};
    for (int i = 0; i < ninputs; i++) cfg.inputs[i] = inputs[i];
    pct_pw_config(&cfg, op->promotion);
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
    if (pct_pw_check_dtype(op_index, it.compute_dtype, op->sig.name) < 0) { pct_iter_release(&it); return NULL; }
    scalar_other_in_opmath(op_index, ninputs, inputs, it.compute_dtype, ctx);
    pct_loop_fn loop = op->kind == PCT_KIND_UNARY ? pct_vec_loop(op_index, it.compute_dtype) : NULL;
    it.stream_output = true; /* the table's loops only write their output */
    pct_iter_run(&it, loop ? loop : loop_table[op_index][it.compute_dtype], ctx);
    if (pct_pw_raise(ctx) < 0) { pct_iter_release(&it); return NULL; }
    return pct_iter_finish(&it);
}

/* One typed entry per unary op of the table (all take `Tensor input`). */
static pct_object *unary_run(pct_call *c, pct_tensor *x)
{
    pct_pw_ctx ctx = {0};
    return pct_pw_run(c, c->op_index, 1, &x, &ctx);
}
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    pct_object *pct_cpu_unary_##id(pct_call *c) { PCT_ARGS(id); return unary_run(c, arg.input); }
#include "../ops.def"

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

static pct_object *binary_run(pct_call *c, const pct_binary_args *args)
{
    pct_tensor *a = args->a, *b = args->b;
    if (c->op_index == PCT_OP_pow && pow_checks(a, b) < 0) return NULL;
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    if (args->has_alpha) { /* add/sub */
        const pct_scalar *s = &args->alpha;
        if (s->kind != PCT_SCALAR_INT || s->i != 1) { /* the default alpha needs no check */
            pct_tensor *ab[2] = {a, b};
            int rt = pct_result_type_of(2, ab);
            if (rt < 0) return NULL;
            if (s->kind == PCT_SCALAR_FLOAT && !pct_dtype_is_floating(rt)) {
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
        ctx.alpha_i = s->kind == PCT_SCALAR_FLOAT ? (int64_t)s->d : s->i;
        /* torch subtracts by adding -alpha, negated as an int64: -(-2^63) wraps to -2^63 */
        if (s->kind == PCT_SCALAR_INT && s->i == INT64_MIN && s->d < 0 &&
            (c->op_index == PCT_OP_sub || c->op_index == PCT_OP_subtract || c->op_index == PCT_OP_rsub))
            ctx.alpha_d = -s->d;
    }
    pct_tensor *in[2] = {a, b};
    return pct_pw_run(c, c->op_index, 2, in, &ctx);
}
/* One typed entry per binary op of the table (op_args.h reads its operands and alpha by their names). */
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr)                                 \
    pct_object *pct_cpu_binary_##id(pct_call *c)                                                      \
    {                                                                                                  \
        const pct_binary_args args = pct_binary_args_read_##id(c);                                     \
        return binary_run(c, &args);                                                                   \
    }
#include "../ops.def"
