/* reduce_kernels_sum.c: the kernels of sum and mean (Note [Reduction plan] in reduce.c; the functor
 * macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
/* sum's column sums (the vertical form, reduce_kernel_impl.h) get compile-time strip widths for int64 too (2.4x
 * torch's time in the general form, 0.58x so); the other sum-like ops keep the general form of int64. float16 gained
 * little so (8.5x -> 6x: its conversion does not vectorize there), so it stays general. */
#define RK_VSPECIALIZED_INT64 1
#include "reduce_kernels.h"

/* sum (every dtype; integers accumulate in 64 bits and wrap like torch) */
#define sum_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define sum_RUN(E, N, T, C, a, p, n, s, idx) ((a) += sum_ps_##N(p, n, s, 0, ctx))
#define sum_ROWS_C(E, N, T, C, a, q, n) ((a) += sum_ps_##N##_leaf_i(q, n, 0, ctx))
#define RK_OP sum
#define RK_CASCADE
#define RK_ROWS_C
#define RK_PF_NAME sum_ps
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) x
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(sum)

/* mean = sum rounded to the dtype, divided by the count (as torch: sum().div_(n)) */
#define mean_PRE(E, N, T, C)
#define mean_RUN sum_RUN
#define mean_ROWS_C sum_ROWS_C
#define RK_OP mean
#define RK_CASCADE
#define RK_ROWS_C
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(mean)
