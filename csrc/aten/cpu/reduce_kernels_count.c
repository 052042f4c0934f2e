/* reduce_kernels_count.c: the kernels of count_nonzero (Note [Reduction plan] in reduce.c; the functor macros
 * expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* count_nonzero -> int64 */
#define cnz_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define cnz_RUN(E, N, T, C, a, p, n, s, idx) ((a) += cnz_ps_##N(p, n, s, 0, ctx))
#define RK_OP cnz
#define RK_PF_NAME cnz_ps
#define RK_PF_A(E, N, T, C) int64_t
#define RK_PF_MAP(E, N, T, C) (x) != 0
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(cnz) /* count_nonzero along dims takes uint16/32/64 */
