/* reduce_kernels_minmax.c: the kernels of amax, amin, aminmax and logsumexp (which
 * scans for the largest element as amax does) (Note [Reduction plan] in reduce.c; the
 * functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"
#include <complex.h> /* complex logsumexp */
#include "complex_arith.h"

/* The contiguous min/max scan of a dtype: the vector one for float and double, else the
 * generic `dflt`. DIR is gt (max) or lt (min). */
#define RED_VMM_BOOL(DIR, dflt) dflt
#define RED_VMM_UINT8(DIR, dflt) dflt
#define RED_VMM_INT8(DIR, dflt) dflt
#define RED_VMM_INT16(DIR, dflt) dflt
#define RED_VMM_INT32(DIR, dflt) dflt
#define RED_VMM_INT64(DIR, dflt) dflt
#define RED_VMM_FLOAT16(DIR, dflt) dflt
#define RED_VMM_BFLOAT16(DIR, dflt) dflt
#define RED_VMM_FLOAT32(DIR, dflt) RED_VMM_##DIR(f32)
#define RED_VMM_FLOAT64(DIR, dflt) RED_VMM_##DIR(f64)
#define RED_VMM_gt(sfx) red_vmax_##sfx
#define RED_VMM_lt(sfx) red_vmin_##sfx

/* amax / amin: NaN wins. The pick uses a bitwise | so the compare-and-blend vectorizes. */
#define RED_MINMAX_RUN_FN(name, E, T, C, CMP, DIR)                                                \
    __attribute__((unused)) PCT_HOT static C name##_c(C a, const T *restrict q, int64_t n)     \
    {                                                                                          \
        C acc[16];                                                                             \
        for (int j = 0; j < 16; j++) acc[j] = a;                                               \
        int64_t k = 0;                                                                         \
        for (; k + 16 <= n; k += 16)                                                           \
            for (int j = 0; j < 16; j++) {                                                     \
                C x = PCT_TO_COMPUTE_##E(q[k + j]);                                            \
                acc[j] = RED_PICK(E, CMP, acc[j], x);                                          \
            }                                                                                  \
        for (; k < n; k++) {                                                                   \
            C x = PCT_TO_COMPUTE_##E(q[k]);                                                    \
            acc[0] = RED_PICK(E, CMP, acc[0], x);                                              \
        }                                                                                      \
        for (int j = 1; j < 16; j++) acc[0] = RED_PICK(E, CMP, acc[0], acc[j]);                \
        return acc[0];                                                                         \
    }                                                                                          \
    static C name(C a, const char *p, int64_t n, int64_t s)                                    \
    {                                                                                          \
        if (RED_ISNAN_##E(a)) return a;                                                        \
        if (s == (int64_t)sizeof(T)) return RED_VMM_##E(DIR, name##_c)(a, (const T *)p, n);     \
        for (int64_t k = 0; k < n; k++) {                                                      \
            C x = PCT_TO_COMPUTE_##E(*(const T *)(p + k * s));                                 \
            a = RED_PICK(E, CMP, a, x);                                                        \
        }                                                                                      \
        return a;                                                                              \
    }

#define amax_PRE(E, N, T, C) RED_MINMAX_RUN_FN(amax_scan_##N, E, T, C, >, gt)
#define amax_RUN(E, N, T, C, a, p, n, s, idx) ((a) = amax_scan_##N(a, p, n, s))
#define RK_OP amax
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(amax)

#define amin_PRE(E, N, T, C) RED_MINMAX_RUN_FN(amin_scan_##N, E, T, C, <, lt)
#define amin_RUN(E, N, T, C, a, p, n, s, idx) ((a) = amin_scan_##N(a, p, n, s))
#define RK_OP amin
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(amin)

/* aminmax: (min, max), NaN wins both */
#define aminmax_PRE(E, N, T, C)
#define aminmax_RUN(E, N, T, C, a, p, n, s, idx)                                               \
    ((a).mn = amin_scan_##N((a).mn, p, n, s), (a).mx = amax_scan_##N((a).mx, p, n, s))
#define RK_OP aminmax
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(aminmax)

#define lse_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define lse_RUN(E, N, T, C, a, p, n, s, idx)                                                   \
    do {                                                                                       \
        if ((n) > 0) {                                                                         \
            C mr_ = amax_scan_##N(-INFINITY, p, n, s);                                          \
            C sh_ = RED_LSE(E, red_lse_shift_)(mr_);                                           \
            C sr_ = (RED_IS_F32_##E && (s) == 4) ? (C)red_vsumexp_f32((const float *)(p), n, (float)sh_) \
                                                 : lse_ps_##N(p, n, s, sh_, ctx);               \
            RED_LSE(E, red_lse_merge_)(&(a).m, &(a).s, mr_, sr_);                              \
        }                                                                                      \
    } while (0)
#define RK_OP lse
#define RK_PF_NAME lse_ps
#define RK_PF_A(E, N, T, C) C
#define RK_PF_MAP(E, N, T, C) RED_EXP(E, x - (C)m)
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(lse)

/* complex logsumexp, torch's formula: the elements shifted by the largest real part m (0 where m is not finite),
 * log(sum exp(z - m)) + m. The accumulator (m, s) stands for log(s) + shift(m), as the real kernel's, with a complex s
 * and a real m; an element z folds in as (re z, exp(z - shift(re z))). */
#define RED_CLSE_HELPERS(R, C, sfx)                                                                           \
    static inline R red_clse_shift_##sfx(R m) { return isfinite(m) ? m : 0; }                                \
    static inline void red_clse_merge_##sfx(R *am, C *as, R bm, C bs)                                        \
    {                                                                                                        \
        const R M = (*am != *am) ? *am : (bm != bm) ? bm : (bm > *am ? bm : *am), sh = red_clse_shift_##sfx(M); \
        C s = 0;                                                                                             \
        if (*as != 0) s += *as * exp(red_clse_shift_##sfx(*am) - sh);                                        \
        if (bs != 0) s += bs * exp(red_clse_shift_##sfx(bm) - sh);                                           \
        *am = M;                                                                                             \
        *as = s;                                                                                             \
    }                                                                                                        \
    static inline void red_clse_acc_##sfx(R *am, C *as, C z)                                                 \
    {                                                                                                        \
        const R re = creal(z);                                                                               \
        red_clse_merge_##sfx(am, as, re, cexp(z - red_clse_shift_##sfx(re)));                                \
    }
RED_CLSE_HELPERS(double, pct_cdouble, d)
#define RED_CLSE_SFX_COMPLEX64 d /* complex64 accumulates in complex128 */
#define RED_CLSE_SFX_COMPLEX128 d
#define RED_CLSE(E, fn) RED_LSE_CAT2(fn, RED_CLSE_SFX_##E)
#define clse_A(E, N, T, C) struct { double m; pct_cdouble s; }
#define clse_PRE(E, N, T, C)
#define clse_INIT(E, N, T, C, a) ((a).m = -INFINITY, (a).s = 0)
#define clse_ACC(E, N, T, C, a, x, idx) RED_CLSE(E, red_clse_acc_)(&(a).m, &(a).s, (pct_cdouble)(x))
#define clse_COMBINE(E, N, T, C, a, b) RED_CLSE(E, red_clse_merge_)(&(a).m, &(a).s, (b).m, (b).s)
#define clse_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(clse, E, N, T, C, a, p, n, s, idx)
#define clse_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = (T)(clog((a).s) + RED_CLSE(E, red_clse_shift_)((a).m)))
#define PCT_RED_OP_clse PCT_RED_OP_lse
#define RK_OP clse
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach_complex.h"
#include "reduce_kernel_done.h"
const red_kernel *const clse_table[PCT_NUM_DTYPES] = {
    [PCT_COMPLEX64] = &clse_kernel_ComplexFloat, [PCT_COMPLEX128] = &clse_kernel_ComplexDouble,
};
