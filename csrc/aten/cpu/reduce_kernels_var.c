/* reduce_kernels_var.c: the kernels of var / std and their _mean forms (Note [Reduction plan] in reduce.c; the
 * functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* var / std (and their _mean forms): Welford state in double. A run is reduced in two
 * passes (mean, then squared deviations) and merged with Chan's formula. */
#define var_PRE(E, N, T, C) /* pairwise folds: RK_PF/RK_PF2_* at the instantiation below */
/* a run with inf or NaN goes element by element, as torch's Welford does (its NaN/inf pattern: the mean of
 * [inf, 1] is NaN there, inf by the sum) */
#define var_RUN(E, N, T, C, a, p, n, s, idx)                                                   \
    do {                                                                                       \
        if ((n) > 0) {                                                                         \
            double mr_ = var_s1_##N(p, n, s, 0, ctx) / (double)(n);                            \
            if (isfinite(mr_)) {                                                               \
                red_welford_merge(&(a), n, mr_, var_s2_##N(p, n, s, mr_, ctx));                \
            } else {                                                                           \
                red_welford w_ = {0, 0, 0};                                                    \
                RED_RUN_LOOP(var, E, N, T, C, w_, p, n, s, idx);                               \
                red_welford_merge(&(a), w_.n, w_.mean, w_.m2);                                 \
            }                                                                                  \
        }                                                                                      \
    } while (0)
#define RK_OP var
#define RK_PF_NAME var_s1
#define RK_PF_A(E, N, T, C) double
#define RK_PF_MAP(E, N, T, C) (double)x
#define RK_PF2_NAME var_s2
#define RK_PF2_A(E, N, T, C) double
#define RK_PF2_MAP(E, N, T, C) ((double)x - m) * ((double)x - m)
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(var)
