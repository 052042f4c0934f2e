/* pointwise_ext.h: the loop machinery of elementwise ops with extra arguments (pointwise_ext.c,
 * activation.c): per-dtype loops from one expression, loop selection by dtype, and the runner. */
#ifndef PCT_POINTWISE_EXT_H
#define PCT_POINTWISE_EXT_H
#include "../iter.h"
#include "../op.h"
#include "pointwise.h"

/* One contiguous run of a PCT_EXT_LOOP: y and z read by LOAD_Y / LOAD_Z (x itself for an op with fewer inputs); plain
 * indexing, so the compiler vectorizes. */
#define PCT_EXT_CONTIGUOUS(E, T, C, expr, NIN, LOAD_Y, LOAD_Z)                                 \
    do {                                                                                       \
        /* the operands' pointers read once (NIN, a constant, keeps args[2] and [3] unread where they do not exist) */ \
        T *o_ = (T *)args[0];                                                                  \
        const T *a_ = (const T *)args[1], *b_ = (const T *)args[(NIN) >= 2 ? 2 : 1];           \
        const T *c_ = (const T *)args[(NIN) >= 3 ? 3 : 1];                                     \
        (void)b_; (void)c_;                                                                    \
        for (int64_t k = 0; k < n_; k++) {                                                     \
            C x = PCT_TO_COMPUTE_##E(a_[k]), y = LOAD_Y, z = LOAD_Z;                           \
            (void)y; (void)z;                                                                  \
            o_[k] = PCT_FROM_COMPUTE_##E(expr);                                                \
        }                                                                                      \
        return;                                                                                \
    } while (0)

/* A loop over `nin` inputs of type T (args[1..nin]) writing T; `expr` sees
 * x (input 1), y (input 2), z (input 3), ctx, and p1/p2 (ctx parameters as C). ctx->has_p2 is -1 for two inputs and
 * -2 for three. */
#define PCT_EXT_LOOP(name, E, N, T, C, expr)                                                   \
    PCT_HOT_X86_64_V3 static void name##_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                          \
        /* a local copy: the stores through args could alias *vctx (-fno-strict-aliasing), which would reload its \
           fields (clamp's bounds) every element and keep the loops scalar */                 \
        const pct_pw_ctx ctx_ = *(const pct_pw_ctx *)vctx, *ctx = &ctx_;                       \
        const C p1 = (C)ctx->p1, p2 = (C)ctx->p2, alpha = PCT_SCALAR_AS_T(E, (C)ctx->alpha_d);  \
        (void)p1; (void)p2; (void)alpha;                                                       \
        const int64_t n_ = *dims, sz_ = (int64_t)sizeof(T);                                    \
        if (steps[0] == sz_ && steps[1] == sz_) {                                              \
            if (ctx->has_p2 >= 0) PCT_EXT_CONTIGUOUS(E, T, C, expr, 1, x, x);                   \
            if (ctx->has_p2 == -1 && steps[2] == sz_)                                          \
                PCT_EXT_CONTIGUOUS(E, T, C, expr, 2, PCT_TO_COMPUTE_##E(b_[k]), x);            \
            if (ctx->has_p2 == -2 && steps[2] == sz_ && steps[3] == sz_)                       \
                PCT_EXT_CONTIGUOUS(E, T, C, expr, 3, PCT_TO_COMPUTE_##E(b_[k]), PCT_TO_COMPUTE_##E(c_[k])); \
        }                                                                                      \
        for (int64_t k = 0; k < n_; k++) {                                                     \
            C x = PCT_TO_COMPUTE_##E(*(const T *)(args[1] + k * steps[1]));                    \
            C y = ctx->has_p2 < 0 ? PCT_TO_COMPUTE_##E(*(const T *)(args[2] + k * steps[2])) : x; \
            C z = ctx->has_p2 < -1 ? PCT_TO_COMPUTE_##E(*(const T *)(args[3] + k * steps[3])) : x; \
            (void)y; (void)z;                                                                  \
            *(T *)(args[0] + k * steps[0]) = PCT_FROM_COMPUTE_##E(expr);                       \
        }                                                                                      \
    }

/* Loop selection: PCT_EXT_TABLE(name, LIST) defines name_loop(dtype) over the dtypes of
 * an X-macro LIST (PCT_FORALL_DTYPES, PCT_FORALL_FLOAT_DTYPES...) whose loops exist. */
#define PCT_EXT_CASE(E, N, T, C, S, name) case PCT_##E: return name##_##N;
#define PCT_EXT_CASES(E, N, T, C, S, name, x, y, z) PCT_EXT_CASE(E, N, T, C, S, name)
#define PCT_EXT_TABLE(name, PAIRED_LIST)                                                       \
    static pct_loop_fn name##_loop(int dtype)                                                  \
    {                                                                                          \
        switch (dtype) {                                                                       \
        PAIRED_LIST(PCT_EXT_CASES, name, 0, 0, 0)                                              \
        default: return NULL;                                                                  \
        }                                                                                      \
    }
/* Paired forms of the dtype lists (an op name rides along). */
#define PCT_FLOATS_PAIRED(X, a, b, c, d)                                                       \
    X(FLOAT16, Half, pct_half, float, "float16", a, b, c, d)                                   \
    X(BFLOAT16, BFloat16, pct_bfloat16, float, "bfloat16", a, b, c, d)                         \
    X(FLOAT32, Float, float, float, "float32", a, b, c, d)                                     \
    X(FLOAT64, Double, double, double, "float64", a, b, c, d)
#define PCT_NUMS_PAIRED(X, a, b, c, d)                                                         \
    X(UINT8, Byte, uint8_t, uint8_t, "uint8", a, b, c, d)                                      \
    X(INT8, Char, int8_t, int8_t, "int8", a, b, c, d)                                          \
    X(INT16, Short, int16_t, int16_t, "int16", a, b, c, d)                                     \
    X(INT32, Int, int32_t, int32_t, "int32", a, b, c, d)                                       \
    X(INT64, Long, int64_t, int64_t, "int64", a, b, c, d)                                      \
    PCT_FLOATS_PAIRED(X, a, b, c, d)
/* complex64 and complex128 (C11 complex arithmetic, <tgmath.h> in the including file) */
#define PCT_COMPLEX_PAIRED(X, a, b, c, d)                                                      \
    X(COMPLEX64, ComplexFloat, pct_cfloat, pct_cfloat, "complex64", a, b, c, d)                \
    X(COMPLEX128, ComplexDouble, pct_cdouble, pct_cdouble, "complex128", a, b, c, d)
/* Defines the loops of `name` for a paired dtype list with one expression. */
#define PCT_EXT_DEFINE(E, N, T, C, S, name, expr, y, z) PCT_EXT_LOOP(name, E, N, T, C, expr)

/* Runs an extension loop over nin inputs converted to compute_dtype (-1: their result type);
 * `name` names the op in the not-implemented error for a dtype without a loop. */
/* clamp(x, lo, hi) with torch's checks (pointwise_ext.c): NULL bounds are None, at least one must be given; c gives
 * out= and in-place. clamp, clip and hardtanh's entries call it. */
pct_object *pct_clamp_run(pct_call *c, pct_tensor *x, const pct_scalar *lo, const pct_scalar *hi);
pct_object *pct_pw_run_ext(pct_call *c, const char *name, pct_loop_fn (*pick)(int), int nin, pct_tensor **in,
                         pct_pw_ctx *ctx, int compute_dtype, bool int_to_float);
#endif
