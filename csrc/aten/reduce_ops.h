/* reduce_ops.h: the reductions' element functors, one math for the CPU and CUDA (Note [One math for both devices]
 * in host_device.h; Note [Reduction plan] in cpu/reduce.c).
 *
 * Each reduction op is five macros over (E, N, T, C) = (dtype enum token, name, storage type, compute type):
 *   op_A        the accumulator type
 *   op_INIT     a = the empty accumulator
 *   op_ACC      fold element x (type C) at reduced position idx into a
 *   op_COMBINE  a = a (+) b, b holding later positions than a
 *   op_FINISH   write the result(s) of a through the byte pointers o0 (and o1)
 * They may read `ctx` (a const red_ctx *) and call RED_EXP(E, x), which each device defines (the CPU's vector exp,
 * CUDA's expf). The CPU's kernels (cpu/reduce_kernel_impl.h) add their run and vector folds to these; the CUDA runner
 * (csrc/cuda/reduce.cu) folds with these alone. PCT_RED_OP_<op> names each op, so a plan built by the device-neutral
 * entry points can say which reduction a device runs (Note [Device reductions] in cpu/reduce_plan.c).
 */
#ifndef PCT_REDUCE_OPS_H
#define PCT_REDUCE_OPS_H
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include "dtype.h"
#include "host_device.h"

enum {
    PCT_RED_OP_sum,
    PCT_RED_OP_nansum,
    PCT_RED_OP_mean,
    PCT_RED_OP_nanmean,
    PCT_RED_OP_prod,
    PCT_RED_OP_amax,
    PCT_RED_OP_amin,
    PCT_RED_OP_argmax,
    PCT_RED_OP_argmin,
    PCT_RED_OP_maxdim,
    PCT_RED_OP_mindim,
    PCT_RED_OP_aminmax,
    PCT_RED_OP_all,
    PCT_RED_OP_any,
    PCT_RED_OP_cnz,
    PCT_RED_OP_var,
    PCT_RED_OP_lse,
    PCT_RED_OP_norm2,
    PCT_RED_OP_norm1,
    PCT_RED_OP_norm0,
    PCT_RED_OP_normp,
    PCT_RED_OP_norminf,
    PCT_RED_OP_normninf,
    PCT_RED_NUM_OPS
};

typedef struct red_ctx {
    int64_t count;      /* reduced elements per output */
    double p;           /* norm order */
    double correction;  /* var/std */
    bool take_sqrt;     /* std */
    bool with_mean;     /* var_mean / std_mean: second output */
    bool ordered;       /* the op reports an index: fold positions in order */
} red_ctx;

/* accumulator of sums: floats in float (double for double), integers wrap in uint64 */
#define RED_SUMT_BOOL uint64_t
#define RED_SUMT_UINT8 uint64_t
#define RED_SUMT_INT8 uint64_t
#define RED_SUMT_INT16 uint64_t
#define RED_SUMT_INT32 uint64_t
#define RED_SUMT_INT64 uint64_t
#define RED_SUMT_FLOAT16 float
#define RED_SUMT_BFLOAT16 float
#define RED_SUMT_FLOAT32 float
#define RED_SUMT_FLOAT64 double
#define RED_SUMT_UINT16 uint64_t
#define RED_SUMT_UINT32 uint64_t
#define RED_SUMT_UINT64 uint64_t

#define RED_ISNAN_BOOL(x) 0
#define RED_ISNAN_UINT8(x) 0
#define RED_ISNAN_INT8(x) 0
#define RED_ISNAN_INT16(x) 0
#define RED_ISNAN_INT32(x) 0
#define RED_ISNAN_INT64(x) 0
#define RED_ISNAN_FLOAT16(x) ((x) != (x))
#define RED_ISNAN_BFLOAT16(x) ((x) != (x))
#define RED_ISNAN_FLOAT32(x) ((x) != (x))
#define RED_ISNAN_FLOAT64(x) ((x) != (x))
#define RED_ISNAN_UINT16(x) 0
#define RED_ISNAN_UINT32(x) 0
#define RED_ISNAN_UINT64(x) 0

#define RED_LOWEST_BOOL false
#define RED_LOWEST_UINT8 0
#define RED_LOWEST_INT8 INT8_MIN
#define RED_LOWEST_INT16 INT16_MIN
#define RED_LOWEST_INT32 INT32_MIN
#define RED_LOWEST_INT64 INT64_MIN
#define RED_LOWEST_FLOAT16 (-INFINITY)
#define RED_LOWEST_BFLOAT16 (-INFINITY)
#define RED_LOWEST_FLOAT32 (-INFINITY)
#define RED_LOWEST_FLOAT64 (-INFINITY)
#define RED_LOWEST_UINT16 0
#define RED_LOWEST_UINT32 0
#define RED_LOWEST_UINT64 0
#define RED_NAN_BOOL 0
#define RED_NAN_UINT8 0
#define RED_NAN_INT8 0
#define RED_NAN_INT16 0
#define RED_NAN_INT32 0
#define RED_NAN_INT64 0
#define RED_NAN_FLOAT16 NAN
#define RED_NAN_BFLOAT16 NAN
#define RED_NAN_FLOAT32 NAN
#define RED_NAN_FLOAT64 NAN
#define RED_NAN_UINT16 0
#define RED_NAN_UINT32 0
#define RED_NAN_UINT64 0
#define RED_HIGHEST_BOOL true
#define RED_HIGHEST_UINT8 UINT8_MAX
#define RED_HIGHEST_INT8 INT8_MAX
#define RED_HIGHEST_INT16 INT16_MAX
#define RED_HIGHEST_INT32 INT32_MAX
#define RED_HIGHEST_INT64 INT64_MAX
#define RED_HIGHEST_FLOAT16 INFINITY
#define RED_HIGHEST_BFLOAT16 INFINITY
#define RED_HIGHEST_FLOAT32 INFINITY
#define RED_HIGHEST_FLOAT64 INFINITY
#define RED_HIGHEST_UINT16 UINT16_MAX
#define RED_HIGHEST_UINT32 UINT32_MAX
#define RED_HIGHEST_UINT64 UINT64_MAX

/* float math in the compute type: expf for float, exp for double */
#define RED_FN_FLOAT16(fn) fn##f
#define RED_FN_BFLOAT16(fn) fn##f
#define RED_FN_FLOAT32(fn) fn##f
#define RED_FN_FLOAT64(fn) fn
#define RED_FN(E, fn) RED_FN_##E(fn)

/* ---- shared helpers ---- */
#define RED_NONAN(x) ((x) != (x) ? 0 : (x))
#define RED_PICK(E, CMP, a, x) ((((x) CMP (a)) | RED_ISNAN_##E(x)) ? (x) : (a))
#define RED_BETTER(E, CMP, x, v) ((x) CMP (v) || (RED_ISNAN_##E(x) && !RED_ISNAN_##E(v)))
#define RED_ARG_ACC(E, CMP, a, x, idx)                                                         \
    do {                                                                                       \
        if ((a).i < 0 || RED_BETTER(E, CMP, x, (a).v)) { (a).v = (x); (a).i = (idx); }         \
    } while (0)
#define RED_ARG_COMBINE(E, CMP, a, b)                                                          \
    do {                                                                                       \
        if ((b).i >= 0 && ((a).i < 0 || RED_BETTER(E, CMP, (b).v, (a).v))) (a) = (b);          \
    } while (0)
#define RED_VALIDX_FINISH(E, N, T, C, a, o0, o1)                                              \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E((a).v), *(int64_t *)(o1) = (a).i)

typedef struct red_welford { double mean, m2; int64_t n; } red_welford;
static inline PCT_HOST_DEVICE void red_welford_merge(red_welford *a, int64_t nb, double meanb, double m2b)
{
    if (nb == 0) return;
    if (a->n == 0) { a->n = nb; a->mean = meanb; a->m2 = m2b; return; }
    double n = (double)(a->n + nb), delta = meanb - a->mean;
    a->mean += delta * ((double)nb / n);
    a->m2 += m2b + delta * delta * ((double)a->n * (double)nb / n);
    a->n += nb;
}
static inline PCT_HOST_DEVICE void red_welford_finish(const red_welford *a, const red_ctx *ctx, double *var, double *mean)
{
    double dof = (double)ctx->count - ctx->correction;
    if (dof < 0) dof = 0;
    double v = a->n ? a->m2 / dof : NAN; /* torch fills NaN for empty inputs, whatever the correction */
    *var = ctx->take_sqrt ? sqrt(v) : v;
    *mean = a->n ? a->mean : NAN;
}
/* logsumexp: (m, s) stands for log(s) + shift(m), shift(m) = m if finite else 0, so
 * infinities and NaN come out as torch's (max-shifted) formula gives them. */
#define RED_LSE_HELPERS(C, sfx, EXP)                                                           \
    static inline PCT_HOST_DEVICE C red_lse_shift_##sfx(C m) { return isfinite(m) ? m : 0; }                   \
    static inline PCT_HOST_DEVICE void red_lse_merge_##sfx(C *am, C *as, C bm, C bs)                          \
    {                                                                                          \
        C M = (*am != *am) ? *am : (bm != bm) ? bm : (bm > *am ? bm : *am);                    \
        C sh = red_lse_shift_##sfx(M);                                                         \
        C s = 0;                                                                               \
        if (*as != 0) s += *as * EXP(red_lse_shift_##sfx(*am) - sh);                           \
        if (bs != 0) s += bs * EXP(red_lse_shift_##sfx(bm) - sh);                              \
        *am = M;                                                                               \
        *as = s;                                                                               \
    }
RED_LSE_HELPERS(float, f, expf)
RED_LSE_HELPERS(double, d, exp)
#define RED_LSE_SFX_FLOAT16 f
#define RED_LSE_SFX_BFLOAT16 f
#define RED_LSE_SFX_FLOAT32 f
#define RED_LSE_SFX_FLOAT64 d
#define RED_LSE_CAT(a, b) a##b
#define RED_LSE_CAT2(a, b) RED_LSE_CAT(a, b)
#define RED_LSE(E, fn) RED_LSE_CAT2(fn, RED_LSE_SFX_##E)
/* ---- the ops ---- */
#define sum_A(E, N, T, C) RED_SUMT_##E
#define sum_INIT(E, N, T, C, a) ((a) = 0)
#define sum_ACC(E, N, T, C, a, x, idx) ((a) += (RED_SUMT_##E)(x))
#define sum_COMBINE(E, N, T, C, a, b) ((a) += (b))
#define sum_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = PCT_FROM_COMPUTE_##E(a))

#define nansum_A(E, N, T, C) RED_SUMT_##E
#define nansum_INIT sum_INIT
#define nansum_ACC(E, N, T, C, a, x, idx) ((a) += RED_NONAN(x))
#define nansum_COMBINE sum_COMBINE
#define nansum_FINISH sum_FINISH

#define mean_A sum_A
#define mean_INIT sum_INIT
#define mean_ACC sum_ACC
#define mean_COMBINE sum_COMBINE
#define mean_FINISH(E, N, T, C, a, o0, o1)                                                     \
    do {                                                                                       \
        C s_ = PCT_TO_COMPUTE_##E(PCT_FROM_COMPUTE_##E(a));                                    \
        *(T *)(o0) = PCT_FROM_COMPUTE_##E(s_ / (C)ctx->count);                                 \
    } while (0)

#define nanmean_A(E, N, T, C) struct { RED_SUMT_##E s; int64_t n; }
#define nanmean_INIT(E, N, T, C, a) ((a).s = 0, (a).n = 0)
#define nanmean_ACC(E, N, T, C, a, x, idx) ((a).s += RED_NONAN(x), (a).n += (x) == (x))
#define nanmean_COMBINE(E, N, T, C, a, b) ((a).s += (b).s, (a).n += (b).n)
#define nanmean_FINISH(E, N, T, C, a, o0, o1)                                                  \
    do {                                                                                       \
        C s_ = PCT_TO_COMPUTE_##E(PCT_FROM_COMPUTE_##E((a).s));                                \
        *(T *)(o0) = PCT_FROM_COMPUTE_##E(s_ / (C)(a).n);                                      \
    } while (0)

#define prod_A sum_A
#define prod_INIT(E, N, T, C, a) ((a) = 1)
#define prod_ACC(E, N, T, C, a, x, idx) ((a) *= (RED_SUMT_##E)(x))
#define prod_COMBINE(E, N, T, C, a, b) ((a) *= (b))
#define prod_FINISH sum_FINISH

#define amax_A(E, N, T, C) C
#define amax_INIT(E, N, T, C, a) ((a) = RED_LOWEST_##E)
#define amax_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, >, a, x))
#define amax_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, >, a, b))
#define amax_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = PCT_FROM_COMPUTE_##E(a))

#define amin_A(E, N, T, C) C
#define amin_INIT(E, N, T, C, a) ((a) = RED_HIGHEST_##E)
#define amin_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, <, a, x))
#define amin_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, <, a, b))
#define amin_FINISH amax_FINISH

#define argmax_A(E, N, T, C) struct { C v; int64_t i; }
#define argmax_INIT(E, N, T, C, a) ((a).v = 0, (a).i = -1)
#define argmax_ACC(E, N, T, C, a, x, idx) RED_ARG_ACC(E, >, a, x, idx)
#define argmax_COMBINE(E, N, T, C, a, b) RED_ARG_COMBINE(E, >, a, b)
#define argmax_FINISH(E, N, T, C, a, o0, o1) (*(int64_t *)(o0) = (a).i)

#define argmin_A argmax_A
#define argmin_INIT argmax_INIT
#define argmin_ACC(E, N, T, C, a, x, idx) RED_ARG_ACC(E, <, a, x, idx)
#define argmin_COMBINE(E, N, T, C, a, b) RED_ARG_COMBINE(E, <, a, b)
#define argmin_FINISH argmax_FINISH

#define maxdim_A argmax_A
#define maxdim_INIT argmax_INIT
#define maxdim_ACC argmax_ACC
#define maxdim_COMBINE argmax_COMBINE
#define maxdim_FINISH RED_VALIDX_FINISH

#define mindim_A argmax_A
#define mindim_INIT argmax_INIT
#define mindim_ACC argmin_ACC
#define mindim_COMBINE argmin_COMBINE
#define mindim_FINISH RED_VALIDX_FINISH

#define aminmax_A(E, N, T, C) struct { C mn, mx; }
#define aminmax_INIT(E, N, T, C, a) ((a).mn = RED_HIGHEST_##E, (a).mx = RED_LOWEST_##E)
#define aminmax_ACC(E, N, T, C, a, x, idx) ((a).mn = RED_PICK(E, <, (a).mn, x), (a).mx = RED_PICK(E, >, (a).mx, x))
#define aminmax_COMBINE(E, N, T, C, a, b)                                                     \
    ((a).mn = RED_PICK(E, <, (a).mn, (b).mn), (a).mx = RED_PICK(E, >, (a).mx, (b).mx))
#define aminmax_FINISH(E, N, T, C, a, o0, o1)                                                  \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E((a).mn), *(T *)(o1) = PCT_FROM_COMPUTE_##E((a).mx))

#define all_A(E, N, T, C) uint8_t
#define all_INIT(E, N, T, C, a) ((a) = 1)
#define all_ACC(E, N, T, C, a, x, idx) ((a) &= (uint8_t)((x) != 0))
#define all_COMBINE(E, N, T, C, a, b) ((a) &= (b))
#define all_FINISH(E, N, T, C, a, o0, o1) (*(uint8_t *)(o0) = (a))

#define any_A(E, N, T, C) uint8_t
#define any_INIT(E, N, T, C, a) ((a) = 0)
#define any_ACC(E, N, T, C, a, x, idx) ((a) |= (uint8_t)((x) != 0))
#define any_COMBINE(E, N, T, C, a, b) ((a) |= (b))
#define any_FINISH all_FINISH

#define cnz_A(E, N, T, C) int64_t
#define cnz_INIT(E, N, T, C, a) ((a) = 0)
#define cnz_ACC(E, N, T, C, a, x, idx) ((a) += (x) != 0)
#define cnz_COMBINE(E, N, T, C, a, b) ((a) += (b))
#define cnz_FINISH(E, N, T, C, a, o0, o1) (*(int64_t *)(o0) = (a))

#define var_A(E, N, T, C) red_welford
#define var_INIT(E, N, T, C, a) ((a).mean = 0, (a).m2 = 0, (a).n = 0)
#define var_ACC(E, N, T, C, a, x, idx)                                                         \
    do {                                                                                       \
        double x_ = (double)(x), d_ = x_ - (a).mean;                                           \
        (a).n++;                                                                               \
        (a).mean += d_ / (double)(a).n;                                                        \
        (a).m2 += d_ * (x_ - (a).mean);                                                        \
    } while (0)
#define var_COMBINE(E, N, T, C, a, b) red_welford_merge(&(a), (b).n, (b).mean, (b).m2)
#define var_FINISH(E, N, T, C, a, o0, o1)                                                      \
    do {                                                                                       \
        double v_, m_;                                                                         \
        red_welford_finish(&(a), ctx, &v_, &m_);                                               \
        *(T *)(o0) = PCT_FROM_COMPUTE_##E((C)v_);                                              \
        if (ctx->with_mean) *(T *)(o1) = PCT_FROM_COMPUTE_##E((C)m_);                          \
    } while (0)

#define lse_A(E, N, T, C) struct { C m, s; }
#define lse_INIT(E, N, T, C, a) ((a).m = -INFINITY, (a).s = 0)
#define lse_ACC(E, N, T, C, a, x, idx)                                                         \
    RED_LSE(E, red_lse_merge_)(&(a).m, &(a).s, x, isfinite(x) ? (C)1 : RED_EXP(E, x))
#define lse_COMBINE(E, N, T, C, a, b) RED_LSE(E, red_lse_merge_)(&(a).m, &(a).s, (b).m, (b).s)
#define lse_FINISH(E, N, T, C, a, o0, o1)                                                      \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E(RED_FN(E, log)((a).s) + RED_LSE(E, red_lse_shift_)((a).m)))

#define norm2_A sum_A
#define norm2_INIT sum_INIT
#define norm2_ACC(E, N, T, C, a, x, idx) ((a) += (x) * (x))
#define norm2_COMBINE sum_COMBINE
#define norm2_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = PCT_FROM_COMPUTE_##E(RED_FN(E, sqrt)(a)))

#define norm1_A sum_A
#define norm1_INIT sum_INIT
#define norm1_ACC(E, N, T, C, a, x, idx) ((a) += RED_FN(E, fabs)(x))
#define norm1_COMBINE sum_COMBINE
#define norm1_FINISH sum_FINISH

#define norm0_A sum_A
#define norm0_INIT sum_INIT
#define norm0_ACC(E, N, T, C, a, x, idx) ((a) += (x) != 0)
#define norm0_COMBINE sum_COMBINE
#define norm0_FINISH sum_FINISH

#define normp_A sum_A
#define normp_INIT sum_INIT
#define normp_ACC(E, N, T, C, a, x, idx) ((a) += RED_FN(E, pow)(RED_FN(E, fabs)(x), (C)ctx->p))
#define normp_COMBINE sum_COMBINE
#define normp_FINISH(E, N, T, C, a, o0, o1)                                                    \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E(RED_FN(E, pow)((a), (C)(1.0 / ctx->p))))

#define norminf_A(E, N, T, C) C
#define norminf_INIT(E, N, T, C, a) ((a) = 0)
#define norminf_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, >, a, RED_FN(E, fabs)(x)))
#define norminf_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, >, a, b))
#define norminf_FINISH amax_FINISH

#define normninf_A(E, N, T, C) C
#define normninf_INIT(E, N, T, C, a) ((a) = INFINITY)
#define normninf_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, <, a, RED_FN(E, fabs)(x)))
#define normninf_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, <, a, b))
#define normninf_FINISH amax_FINISH

#endif
