/* reduce_kernels_nansum.c: the kernels of nansum and nanmean (Note [Reduction plan] in reduce.c; the functor macros
 * expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* nansum (floating; integral inputs use sum) */
#define nansum_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define nansum_RUN(E, N, T, C, a, p, n, s, idx) ((a) += nansum_ps_##N(p, n, s, 0, ctx))
#define RK_OP nansum
#define RK_CASCADE
#define RK_PF_NAME nansum_ps
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) RED_NONAN(x)
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(nansum)

/* nanmean = nansum / number of non-NaN elements */
#define nanmean_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define nanmean_RUN(E, N, T, C, a, p, n, s, idx)                                               \
    ((a).s += nansum_ps_##N(p, n, s, 0, ctx), (a).n += nnan_ps_##N(p, n, s, 0, ctx))
#define RK_OP nanmean
#define RK_CASCADE
#define RK_PF_NAME nnan_ps
#define RK_PF_A(E, N, T, C) int64_t
#define RK_PF_MAP(E, N, T, C) (x) == (x)
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(nanmean)
