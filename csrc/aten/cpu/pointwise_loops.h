/* pointwise_loops.h: the CPU loop bodies of the pointwise table's entries, one per dtype, shared by the loops of the
 * real dtypes (pointwise.c) and of the complex ones (pointwise_complex.c).
 *
 * Each loop has three shapes the compiler vectorizes (all operands contiguous; one
 * input a broadcast scalar; the other) and a strided fallback. */
#ifndef PCT_CPU_POINTWISE_LOOPS_H
#define PCT_CPU_POINTWISE_LOOPS_H
#include "pointwise.h"

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
                op[k] = PCT_PW_RESULT(E, fexpr, iexpr, promo);                                \
            }                                                                                 \
        } else {                                                                              \
            for (int64_t k = 0; k < n; k++) {                                                 \
                C x = PCT_TO_COMPUTE_##E(*(const T *)(args[1] + k * si)); (void)x;            \
                *(OT *)(args[0] + k * so) = PCT_PW_RESULT(E, fexpr, iexpr, promo);            \
            }                                                                                 \
        }                                                                                     \
    }

#define PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, LOAD_A, LOAD_B, STORE)                     \
    for (int64_t k = 0; k < n; k++) {                                                         \
        C a = LOAD_A, b = LOAD_B; (void)a; (void)b;                                           \
        STORE = PCT_PW_RESULT(E, fexpr, iexpr, promo);                                        \
    }

#define PCT_BINARY_LOOP(E, N, T, C, S, id, fexpr, iexpr, promo)                               \
    PCT_HOT_X86_64_V3 static void binary_##id##_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                         \
        pct_pw_ctx *ctx = vctx;                                                               \
        const C alpha = PCT_PW_ALPHA(E, C, ctx);                                              \
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

#endif
