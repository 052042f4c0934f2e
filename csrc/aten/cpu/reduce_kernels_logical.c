/* reduce_kernels_logical.c: the kernels of all and any (Note [Reduction plan] in reduce.c; the
 * functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* all / any: read any dtype, write one byte (bool, or uint8 for uint8 inputs) */
#define all_PRE(E, N, T, C)
#define all_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(all, E, N, T, C, a, p, n, s, idx)
#define RK_OP all
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(all)

#define any_PRE(E, N, T, C)
#define any_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(any, E, N, T, C, a, p, n, s, idx)
#define RK_OP any
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(any)

