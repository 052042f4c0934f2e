/* attention_rows_impl.h: attention's float32 row loops (scaled scores, softmax with the fast exp, weighted sums) for
 * one instruction set.
 * Included by attention_rows.c once per instruction set through simd_levels_foreach.h (PCT_LVL_SFX, _ATTR, _W).
 * No include guard: by design. */
#include "template.h"
#define ROWS_NAME(base) PCT_TPL_CAT(base, PCT_LVL_SFX) /* base, then PCT_LVL_SFX: a function's name */

PCT_LVL_ATTR static float ROWS_NAME(max_)(const float *x, int64_t n)
{
    typedef float vf __attribute__((vector_size(PCT_LVL_W * 4)));
    typedef int32_t vi __attribute__((vector_size(PCT_LVL_W * 4)));
    const vf zero = {0};
    vf acc = zero - INFINITY;
    int64_t i = 0;
    for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {
        vf v;
        memcpy(&v, x + i, sizeof v);
        const vi gt = v > acc;
        acc = (vf)(((vi)v & gt) | ((vi)acc & ~gt));
    }
    float m = -INFINITY;
    for (int l = 0; l < PCT_LVL_W; l++)
        if (acc[l] > m) m = acc[l];
    for (; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}
PCT_LVL_ATTR static float ROWS_NAME(exp_sum_)(float *x, int64_t n, float m)
{
    typedef float vf __attribute__((vector_size(PCT_LVL_W * 4)));
    typedef int32_t vi __attribute__((vector_size(PCT_LVL_W * 4)));
    vf acc = {0}, v, e;
    int64_t i = 0;
    for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {
        memcpy(&v, x + i, sizeof v);
        v = v - m;
        ROWS_VEXP(vf, vi, v, e);
        memcpy(x + i, &e, sizeof e);
        acc += e;
    }
    if (i < n) {
        float buf[PCT_LVL_W];
        for (int l = 0; l < PCT_LVL_W; l++) buf[l] = i + l < n ? x[i + l] - m : -INFINITY;
        memcpy(&v, buf, sizeof v);
        ROWS_VEXP(vf, vi, v, e);
        memcpy(buf, &e, sizeof e);
        memcpy(x + i, buf, sizeof(float) * (size_t)(n - i));
        acc += e;
    }
    float s = 0.0f;
    for (int l = 0; l < PCT_LVL_W; l++) s += acc[l];
    return s;
}
PCT_LVL_ATTR static void ROWS_NAME(ds_)(float *dp, const float *p, int64_t n, float d)
{
    typedef float vf __attribute__((vector_size(PCT_LVL_W * 4)));
    int64_t i = 0;
    for (; i + PCT_LVL_W <= n; i += PCT_LVL_W) {
        vf a, b;
        memcpy(&a, dp + i, sizeof a);
        memcpy(&b, p + i, sizeof b);
        a = b * (a - d);
        memcpy(dp + i, &a, sizeof a);
    }
    for (; i < n; i++) dp[i] = p[i] * (dp[i] - d);
}
static const pct_attn_rows_f32 ROWS_NAME(rows_) = {ROWS_NAME(max_), ROWS_NAME(exp_sum_), ROWS_NAME(ds_)};

#undef ROWS_NAME
