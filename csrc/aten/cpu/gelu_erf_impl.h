/* gelu_erf_impl.h: GELU's float32 loops, exact (erf) and tanh forms, forward and backward, for one instruction set.
 * Included by gelu_erf.c once per instruction set through simd_levels_foreach.h (PCT_LVL_SFX, _ATTR, _W).
 * No include guard: by design. */
#include "template.h"
#define GE_NAME(base) PCT_TPL_CAT(base, PCT_LVL_SFX) /* base, then PCT_LVL_SFX: a function's name */
#define GE_MAX PCT_TPL_CAT(GE_MAX_, PCT_LVL_SFX)
#define GE_MIN PCT_TPL_CAT(GE_MIN_, PCT_LVL_SFX)
#define GE_VF GE_NAME(ge_vf_) /* the level's float vector type */
#define GE_VI GE_NAME(ge_vi_)

typedef float GE_VF __attribute__((vector_size(PCT_LVL_W * 4)));
typedef int32_t GE_VI __attribute__((vector_size(PCT_LVL_W * 4)));
PCT_LVL_ATTR static inline GE_VF GE_NAME(ge_fwd_)(GE_VF x)
{
    GE_VF phi;
    GE_PHI(GE_VF, GE_MIN, GE_MAX, x, phi);
    return x * phi;
}
PCT_LVL_ATTR static inline GE_VF GE_NAME(ge_bwd_)(GE_VF g, GE_VF x)
{
    GE_VF phi, ex;
    GE_PHI(GE_VF, GE_MIN, GE_MAX, x, phi);
    PCT_VEXPF_NEG(GE_VF, GE_VI, ex, x * x * -0.5f);
    return g * (phi + x * ex * 0.39894228040143267794f);
}
/* The tanh form, 0.5 x (1 + tanh u) with u = beta (x + kappa x^3), as x sigmoid(2u): with e = exp(-2|u|) (the
 * exponential of a non-positive number, no overflow), sigmoid(2u) is 1 / (1 + e) for u >= 0 and e / (1 + e) below,
 * and its derivative 2 sigmoid (1 - sigmoid) = 2 e / (1 + e)^2 on both sides. NaN stays NaN (the u >= 0 mask is
 * false and e is NaN); x = -inf gives NaN as torch's 0.5 x (1 + tanh u) does. */
#define GT_BETA 0.7978845608028654f
#define GT_KAPPA 0.044715f
#define GT_PARTS(x, u, e, num)                                                                          \
    GE_VF u = (x) * ((x) * (x) * (GT_KAPPA * GT_BETA) + GT_BETA), e;                                     \
    PCT_VEXPF_NEG(GE_VF, GE_VI, e, (GE_VF)((GE_VI)u & 0x7fffffff) * -2.0f);                             \
    const GE_VI pos_ = u >= (GE_VF){0};                                                                 \
    const GE_VF num = (GE_VF)(((GE_VI)((GE_VF){0} + 1.0f) & pos_) | ((GE_VI)e & ~pos_))
PCT_LVL_ATTR static inline GE_VF GE_NAME(gt_fwd_)(GE_VF x)
{
    GT_PARTS(x, u, e, num);
    return x * num / (1.0f + e);
}
PCT_LVL_ATTR static inline GE_VF GE_NAME(gt_bwd_)(GE_VF g, GE_VF x)
{
    GT_PARTS(x, u, e, num);
    (void)u;
    const GE_VF d = 1.0f + e;
    return g * (num / d + x * (e / (d * d)) * (2.0f * GT_BETA) * (x * x * (3.0f * GT_KAPPA) + 1.0f));
}
#undef GT_PARTS

/* The loops over n elements of a lane-wise function of one or two inputs; tails go through zero-padded vectors,
 * so every element is computed alike whatever the split. */
#define GE_UNARY_LOOP(name, fn)                                                                         \
    PCT_LVL_ATTR static void GE_NAME(name)(float *o, const float *x, int64_t n)                        \
    {                                                                                                   \
        GE_VF a;                                                                                        \
        int64_t i = 0;                                                                                  \
        for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {                                                    \
            memcpy(&a, x + i, sizeof a);                                                                \
            a = GE_NAME(fn)(a);                                                                         \
            memcpy(o + i, &a, sizeof a);                                                                \
        }                                                                                               \
        if (i < n) {                                                                                    \
            a = (GE_VF){0};                                                                             \
            memcpy(&a, x + i, sizeof(float) * (size_t)(n - i));                                         \
            a = GE_NAME(fn)(a);                                                                         \
            memcpy(o + i, &a, sizeof(float) * (size_t)(n - i));                                         \
        }                                                                                               \
    }
#define GE_BINARY_LOOP(name, fn)                                                                        \
    PCT_LVL_ATTR static void GE_NAME(name)(float *o, const float *g, const float *x, int64_t n)        \
    {                                                                                                   \
        GE_VF a, b;                                                                                     \
        int64_t i = 0;                                                                                  \
        for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {                                                    \
            memcpy(&a, g + i, sizeof a);                                                                \
            memcpy(&b, x + i, sizeof b);                                                                \
            a = GE_NAME(fn)(a, b);                                                                      \
            memcpy(o + i, &a, sizeof a);                                                                \
        }                                                                                               \
        if (i < n) {                                                                                    \
            a = b = (GE_VF){0};                                                                         \
            memcpy(&a, g + i, sizeof(float) * (size_t)(n - i));                                         \
            memcpy(&b, x + i, sizeof(float) * (size_t)(n - i));                                         \
            a = GE_NAME(fn)(a, b);                                                                      \
            memcpy(o + i, &a, sizeof(float) * (size_t)(n - i));                                         \
        }                                                                                               \
    }
GE_UNARY_LOOP(fwd_, ge_fwd_)
GE_BINARY_LOOP(bwd_, ge_bwd_)
GE_UNARY_LOOP(tanh_fwd_, gt_fwd_)
GE_BINARY_LOOP(tanh_bwd_, gt_bwd_)
#undef GE_UNARY_LOOP
#undef GE_BINARY_LOOP
#undef GT_BETA
#undef GT_KAPPA

#undef GE_NAME
#undef GE_MAX
#undef GE_MIN
#undef GE_VF
#undef GE_VI
