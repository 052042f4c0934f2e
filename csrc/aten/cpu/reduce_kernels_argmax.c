/* reduce_kernels_argmax.c: the kernels of argmax, argmin, max.dim and min.dim (Note [Reduction plan] in reduce.c;
 * the functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* argmax / argmin / max.dim / min.dim: (value, index); the first occurrence wins ties and
 * the first NaN wins over numbers. i < 0 marks an empty accumulator. */
#define argmax_PRE(E, N, T, C)
#define argmax_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(argmax, E, N, T, C, a, p, n, s, idx)
#define RK_OP argmax
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(argmax)

#define argmin_PRE(E, N, T, C)
#define argmin_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(argmin, E, N, T, C, a, p, n, s, idx)
#define RK_OP argmin
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(argmin)

#define maxdim_PRE(E, N, T, C)
#define maxdim_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(maxdim, E, N, T, C, a, p, n, s, idx)
#define RK_OP maxdim
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(maxdim) /* uint16/32/64: only for the 0-d and empty inputs torch answers (dispatch.c) */

#define mindim_PRE(E, N, T, C)
#define mindim_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(mindim, E, N, T, C, a, p, n, s, idx)
#define RK_OP mindim
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(mindim)
