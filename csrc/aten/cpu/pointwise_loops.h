/* pointwise_loops.h: the CPU loop bodies of the pointwise table's entries, one per dtype, shared by the loops of the
 * real dtypes (pointwise.c) and of the complex ones (pointwise_complex.c).
 *
 * Each loop has three shapes the compiler vectorizes (all operands contiguous; one
 * input a broadcast scalar; the other) and a strided fallback. */
#ifndef PCT_CPU_POINTWISE_LOOPS_H
#define PCT_CPU_POINTWISE_LOOPS_H
#include "pointwise.h"
#include "half_f16c.h"

/* Note [float16 loops]: a float16 loop whose operands are contiguous or broadcast scalars, on a CPU with F16C, works
 * in chunks: its inputs converted to float by F16C (half_f16c.h), the entry's float expression over the chunk (a
 * float loop the compiler vectorizes, as float32's), the results rounded back to float16 by F16C. The same values as
 * the element-by-element loop, which computes in float too and rounds to nearest even. PCT_F16C_<E> expands the
 * chunked loop for FLOAT16 only (the other dtypes' expressions are not compiled in it); PCT_F16C_HALF_OUT_<promo>
 * keeps it to entries that store float16 (not the comparisons' bool). */
#define PCT_F16C_HALF_OUT_PCT_PROMOTE_DEFAULT 1
#define PCT_F16C_HALF_OUT_PCT_PROMOTE_INT_TO_FLOAT 1
#define PCT_F16C_HALF_OUT_PCT_PROMOTE_COMPARE 0
#define PCT_F16C_HALF_OUT_PCT_PROMOTE_BOOL_OUT 0
#define PCT_F16C_HALF_OUT_PCT_CPX_REAL 0
/* one operand's chunk of m values from element k0, where it is contiguous (step 2); a scalar's buffer is filled once,
 * before the chunks */
#define PCT_F16C_LOAD(buf, ptr, step)                                                         \
    do {                                                                                      \
        if (step) pct_f16c_to_float((ptr) + k0, buf, m);                                      \
    } while (0)
#define PCT_F16C_UNARY_FLOAT16(fexpr, promo)                                                  \
    if (PCT_F16C_HALF_OUT_##promo && so == 2 && si == 2 && pct_have_f16c()) {                 \
        float fx[PCT_F16C_CHUNK], fo[PCT_F16C_CHUNK];                                         \
        for (int64_t k0 = 0; k0 < n; k0 += PCT_F16C_CHUNK) {                                  \
            const int64_t m = n - k0 < PCT_F16C_CHUNK ? n - k0 : PCT_F16C_CHUNK;              \
            pct_f16c_to_float((const pct_half *)args[1] + k0, fx, m);                         \
            for (int64_t k = 0; k < m; k++) { const float x = fx[k]; (void)x; fo[k] = (float)(fexpr); } \
            pct_f16c_from_float(fo, (pct_half *)args[0] + k0, m);                             \
        }                                                                                     \
        return;                                                                               \
    }
#define PCT_F16C_BINARY_FLOAT16(fexpr, promo)                                                 \
    if (PCT_F16C_HALF_OUT_##promo && so == 2 && (sa == 2 || sa == 0) && (sb == 2 || sb == 0) && \
        pct_have_f16c()) {                                                                    \
        const float as = sa ? 0.f : pct_half_to_float(((const pct_half *)ap)[0]);             \
        const float bs = sb ? 0.f : ctx->has_scalar_b ? (float)ctx->scalar_b : pct_half_to_float(((const pct_half *)bp)[0]); \
        float fa[PCT_F16C_CHUNK], fb[PCT_F16C_CHUNK], fo[PCT_F16C_CHUNK];                     \
        for (int64_t k = 0; k < PCT_F16C_CHUNK; k++) { fa[k] = as; fb[k] = bs; }              \
        for (int64_t k0 = 0; k0 < n; k0 += PCT_F16C_CHUNK) {                                  \
            const int64_t m = n - k0 < PCT_F16C_CHUNK ? n - k0 : PCT_F16C_CHUNK;              \
            PCT_F16C_LOAD(fa, (const pct_half *)ap, sa);                                      \
            PCT_F16C_LOAD(fb, (const pct_half *)bp, sb);                                      \
            for (int64_t k = 0; k < m; k++) { const float a = fa[k], b = fb[k]; (void)a; (void)b; fo[k] = (float)(fexpr); } \
            pct_f16c_from_float(fo, (pct_half *)op + k0, m);                                  \
        }                                                                                     \
        return;                                                                               \
    }
#define PCT_F16C_UNARY_BOOL(fexpr, promo)
#define PCT_F16C_BINARY_BOOL(fexpr, promo)
#define PCT_F16C_UNARY_UINT8(fexpr, promo)
#define PCT_F16C_BINARY_UINT8(fexpr, promo)
#define PCT_F16C_UNARY_INT8(fexpr, promo)
#define PCT_F16C_BINARY_INT8(fexpr, promo)
#define PCT_F16C_UNARY_INT16(fexpr, promo)
#define PCT_F16C_BINARY_INT16(fexpr, promo)
#define PCT_F16C_UNARY_INT32(fexpr, promo)
#define PCT_F16C_BINARY_INT32(fexpr, promo)
#define PCT_F16C_UNARY_INT64(fexpr, promo)
#define PCT_F16C_BINARY_INT64(fexpr, promo)
#define PCT_F16C_UNARY_BFLOAT16(fexpr, promo)
#define PCT_F16C_BINARY_BFLOAT16(fexpr, promo)
#define PCT_F16C_UNARY_FLOAT32(fexpr, promo)
#define PCT_F16C_BINARY_FLOAT32(fexpr, promo)
#define PCT_F16C_UNARY_FLOAT64(fexpr, promo)
#define PCT_F16C_BINARY_FLOAT64(fexpr, promo)
#define PCT_F16C_UNARY_UINT16(fexpr, promo)
#define PCT_F16C_BINARY_UINT16(fexpr, promo)
#define PCT_F16C_UNARY_UINT32(fexpr, promo)
#define PCT_F16C_BINARY_UINT32(fexpr, promo)
#define PCT_F16C_UNARY_UINT64(fexpr, promo)
#define PCT_F16C_BINARY_UINT64(fexpr, promo)
#define PCT_F16C_UNARY_COMPLEX64(fexpr, promo)
#define PCT_F16C_BINARY_COMPLEX64(fexpr, promo)
#define PCT_F16C_UNARY_COMPLEX128(fexpr, promo)
#define PCT_F16C_BINARY_COMPLEX128(fexpr, promo)

/* the clone set of a dtype's loops (Note [One clone set] in simd_levels.h): AVX-512 as well for the reduced floats,
 * whose rounding to bfloat16 (or conversions without F16C) is integer work per element */
#define PCT_PW_CLONES_BOOL PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_UINT8 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_INT8 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_INT16 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_INT32 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_INT64 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_FLOAT16 PCT_HOT_X86_64_V4
#define PCT_PW_CLONES_BFLOAT16 PCT_HOT_X86_64_V4
#define PCT_PW_CLONES_FLOAT32 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_FLOAT64 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_UINT16 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_UINT32 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_UINT64 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_COMPLEX64 PCT_HOT_X86_64_V3
#define PCT_PW_CLONES_COMPLEX128 PCT_HOT_X86_64_V3

#define PCT_UNARY_LOOP(E, N, T, C, S, id, fexpr, iexpr, promo)                                \
    PCT_PW_CLONES_##E static void unary_##id##_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                         \
        pct_pw_ctx *ctx = vctx;                                                               \
        (void)ctx;                                                                            \
        typedef PCT_OUT_T_##promo(T) OT;                                                      \
        int64_t n = *dims, so = steps[0], si = steps[1];                                      \
        PCT_F16C_UNARY_##E(fexpr, promo)                                                      \
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

/* Note [pow by a constant]: pow over a scalar exponent of 2, 3 or -2 (torch's products, pointwise_math.h's pct_pw_pow)
 * gets a loop in which the exponent is that constant, so the compiler folds the expression to the products and
 * vectorizes it; GCC's unswitching of the loop-invariant comparisons stops after the first. The condition on the op
 * is a constant: the other ops' loops have none of it. Used in the scalar-exponent shape, before its own loop. */
#define PCT_POW_BY_CONSTANT(id, E, C, fexpr, iexpr, promo, bs)                                \
    if (PCT_OP_##id == PCT_OP_pow) {                                                          \
        /* compared as a double (no bool or uint8 comparison with -2); a complex one only where it is real */ \
        const double be_ = (double)(bs);                                                      \
        if ((be_ == 2 || be_ == 3 || be_ == -2) && (bs) == (C)be_) {                          \
            if (be_ == 2) PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, PCT_TO_COMPUTE_##E(ap[k]), (C)2, op[k]) \
            else if (be_ == 3) PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, PCT_TO_COMPUTE_##E(ap[k]), (C)3, op[k]) \
            else PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, PCT_TO_COMPUTE_##E(ap[k]), (C)-2, op[k]) \
            return;                                                                           \
        }                                                                                     \
    }

#define PCT_BINARY_LOOP(E, N, T, C, S, id, fexpr, iexpr, promo)                               \
    PCT_PW_CLONES_##E static void binary_##id##_##N(char **args, const int64_t *dims, const int64_t *steps, void *vctx) \
    {                                                                                         \
        pct_pw_ctx *ctx = vctx;                                                               \
        const C alpha = PCT_PW_ALPHA(E, C, ctx);                                              \
        (void)alpha;                                                                          \
        typedef PCT_OUT_T_##promo(T) OT;                                                      \
        int64_t n = *dims, so = steps[0], sa = steps[1], sb = steps[2];                       \
        OT *restrict op = (OT *)args[0];                                                      \
        const T *restrict ap = (const T *)args[1];                                            \
        const T *restrict bp = (const T *)args[2];                                            \
        PCT_F16C_BINARY_##E(fexpr, promo)                                                     \
        if (so == (int64_t)sizeof(OT) && sa == (int64_t)sizeof(T) && sb == (int64_t)sizeof(T)) { \
            PCT_BINARY_BODY(E, C, fexpr, iexpr, promo, PCT_TO_COMPUTE_##E(ap[k]), PCT_TO_COMPUTE_##E(bp[k]), op[k]) \
        } else if (so == (int64_t)sizeof(OT) && sa == (int64_t)sizeof(T) && sb == 0) {        \
            const C bs = ctx->has_scalar_b ? (C)ctx->scalar_b : PCT_TO_COMPUTE_##E(bp[0]);    \
            PCT_POW_BY_CONSTANT(id, E, C, fexpr, iexpr, promo, bs)                            \
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
