/* reduce_kernels_norm.c: the kernels of the vector norms (Note [Reduction plan] in reduce.c; the
 * functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* vector norms (floating): sums of |x|^p with pairwise accumulation, or max/min |x| */
#define norm2_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define norm2_RUN(E, N, T, C, a, p, n, s, idx) ((a) += norm2_ps_##N(p, n, s, 0, ctx))
#define RK_OP norm2
#define RK_CASCADE
#define RK_PF_NAME norm2_ps
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) x * x
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(norm2)

#define norm1_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define norm1_RUN(E, N, T, C, a, p, n, s, idx) ((a) += norm1_ps_##N(p, n, s, 0, ctx))
#define RK_OP norm1
#define RK_CASCADE
#define RK_PF_NAME norm1_ps
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) RED_FN(E, fabs)(x)
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(norm1)

#define norm0_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define norm0_RUN(E, N, T, C, a, p, n, s, idx) ((a) += norm0_ps_##N(p, n, s, 0, ctx))
#define RK_OP norm0
#define RK_CASCADE
#define RK_PF_NAME norm0_ps
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) (x) != 0
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(norm0)

#define normp_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define normp_RUN(E, N, T, C, a, p, n, s, idx) ((a) += normp_ps_##N(p, n, s, 0, ctx))
#define RK_OP normp
#define RK_CASCADE
#define RK_PF_NAME normp_ps
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) RED_FN(E, pow)(RED_FN(E, fabs)(x), (C)ctx->p)
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(normp)

#define norminf_PRE(E, N, T, C)
#define norminf_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(norminf, E, N, T, C, a, p, n, s, idx)
#define RK_OP norminf
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(norminf)

#define normninf_PRE(E, N, T, C)
#define normninf_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(normninf, E, N, T, C, a, p, n, s, idx)
#define RK_OP normninf
#define RK_FLOAT_ONLY
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_FLT(normninf)
