/* gelu_erf_impl.h: the exact (erf) GELU's float32 loops, forward and backward, for one instruction set.
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
PCT_LVL_ATTR static void GE_NAME(fwd_)(float *o, const float *x, int64_t n)
{
    GE_VF a;
    int64_t i = 0;
    for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {
        memcpy(&a, x + i, sizeof a);
        a = GE_NAME(ge_fwd_)(a);
        memcpy(o + i, &a, sizeof a);
    }
    if (i < n) {
        a = (GE_VF){0};
        memcpy(&a, x + i, sizeof(float) * (size_t)(n - i));
        a = GE_NAME(ge_fwd_)(a);
        memcpy(o + i, &a, sizeof(float) * (size_t)(n - i));
    }
}
PCT_LVL_ATTR static void GE_NAME(bwd_)(float *o, const float *g, const float *x, int64_t n)
{
    GE_VF a, b;
    int64_t i = 0;
    for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {
        memcpy(&a, g + i, sizeof a);
        memcpy(&b, x + i, sizeof b);
        a = GE_NAME(ge_bwd_)(a, b);
        memcpy(o + i, &a, sizeof a);
    }
    if (i < n) {
        a = b = (GE_VF){0};
        memcpy(&a, g + i, sizeof(float) * (size_t)(n - i));
        memcpy(&b, x + i, sizeof(float) * (size_t)(n - i));
        a = GE_NAME(ge_bwd_)(a, b);
        memcpy(o + i, &a, sizeof(float) * (size_t)(n - i));
    }
}

#undef GE_NAME
#undef GE_MAX
#undef GE_MIN
#undef GE_VF
#undef GE_VI
