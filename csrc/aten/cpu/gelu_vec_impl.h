/* gelu_vec_impl.h: GELU's vectorized forward and backward loops (erf and tanh forms) for float32 or float64 (GELU_T:
 * the C type, GELU_S: the functions' suffix, f or d).
 * Included by activation.c once per instantiation, with
 *   GELU_T, GELU_S defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define GELU_NAME(base) PCT_TPL_CAT(base, GELU_S) /* base, then GELU_S: a function's name */

static void GELU_NAME(gelu_vec_fwd_)(const gelu_vec *v, bool tanh_form, GELU_T *o, const GELU_T *x, int64_t n)
{
    if (sizeof(GELU_T) == sizeof(float)) { /* Note [Rational erf]; the tanh form through one exponential */
        (tanh_form ? pct_gelu_tanh_f32 : pct_gelu_erf_f32)((float *)o, (const float *)x, n);
        return;
    }
    GELU_T buf[GELU_BLOCK];
    const GELU_T beta = (GELU_T)0.7978845608028654, kappa = (GELU_T)0.044715, r2 = (GELU_T)0.70710678118654752440;
    for (int64_t k0 = 0; k0 < n; k0 += GELU_BLOCK) {
        int64_t m = n - k0 < GELU_BLOCK ? n - k0 : GELU_BLOCK;
        const GELU_T *xs = x + k0;
        if (tanh_form) {
            for (int64_t i = 0; i < m; i++) buf[i] = beta * (xs[i] + kappa * xs[i] * xs[i] * xs[i]);
            gelu_vec_apply(v->tanh_fn, buf, buf, m, sizeof(GELU_T));
        } else {
            for (int64_t i = 0; i < m; i++) buf[i] = xs[i] * r2;
            gelu_vec_apply(v->erf_fn, buf, buf, m, sizeof(GELU_T));
        }
        for (int64_t i = 0; i < m; i++) o[k0 + i] = (GELU_T)0.5 * xs[i] * (1 + buf[i]);
    }
}
static void GELU_NAME(gelu_vec_bwd_)(const gelu_vec *v, bool tanh_form, GELU_T *o, const GELU_T *g, const GELU_T *x, int64_t n)
{
    if (sizeof(GELU_T) == sizeof(float)) {
        (tanh_form ? pct_gelu_tanh_backward_f32 : pct_gelu_erf_backward_f32)((float *)o, (const float *)g,
                                                                           (const float *)x, n);
        return;
    }
    GELU_T t[GELU_BLOCK], e[GELU_BLOCK];
    const GELU_T beta = (GELU_T)0.7978845608028654, kappa = (GELU_T)0.044715, r2 = (GELU_T)0.70710678118654752440;
    const GELU_T inv_sqrt_2pi = (GELU_T)0.39894228040143267794;
    for (int64_t k0 = 0; k0 < n; k0 += GELU_BLOCK) {
        int64_t m = n - k0 < GELU_BLOCK ? n - k0 : GELU_BLOCK;
        const GELU_T *xs = x + k0, *gs = g + k0;
        if (tanh_form) {
            for (int64_t i = 0; i < m; i++) t[i] = beta * (xs[i] + kappa * xs[i] * xs[i] * xs[i]);
            gelu_vec_apply(v->tanh_fn, t, t, m, sizeof(GELU_T));
            for (int64_t i = 0; i < m; i++)
                o[k0 + i] = gs[i] * ((GELU_T)0.5 * (1 + t[i]) +
                                     (GELU_T)0.5 * xs[i] * (1 - t[i] * t[i]) * beta * (1 + 3 * kappa * xs[i] * xs[i]));
        } else {
            for (int64_t i = 0; i < m; i++) { t[i] = xs[i] * r2; e[i] = (GELU_T)-0.5 * xs[i] * xs[i]; }
            gelu_vec_apply(v->erf_fn, t, t, m, sizeof(GELU_T));
            gelu_vec_apply(v->exp_fn, e, e, m, sizeof(GELU_T));
            for (int64_t i = 0; i < m; i++)
                o[k0 + i] = gs[i] * ((GELU_T)0.5 * (1 + t[i]) + xs[i] * e[i] * inv_sqrt_2pi);
        }
    }
}

#undef GELU_NAME
#undef GELU_T
#undef GELU_S
