/* reduce_kernels_prod.c: the kernels of prod, complex products included (Note [Reduction plan] in reduce.c; the
 * functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"
#include <complex.h> /* the complex products */
#include "complex_arith.h"

/* prod */
#define prod_PRE(E, N, T, C) /* pairwise fold: RK_PF_* at the instantiation below */
#define prod_RUN(E, N, T, C, a, p, n, s, idx) ((a) *= prod_pp_##N(p, n, s, 0, ctx))
#define RK_OP prod
#define RK_PF_NAME prod_pp
#define RK_PF_A(E, N, T, C) RED_SUMT_##E
#define RK_PF_MAP(E, N, T, C) x
#define RK_PF_OP *
#define RK_PF_ID 1
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
/* complex64 / complex128 products, through the same kernel template (the real view's columns, which sum and mean
 * use, do not multiply), with torch's schoolbook product (Note [Complex products and quotients as torch's]) */
#define RED_SUMT_COMPLEX64 pct_cfloat
#define RED_SUMT_COMPLEX128 pct_cdouble
#undef prod_ACC
#undef prod_COMBINE
#undef prod_RUN
#define prod_ACC(E, N, T, C, a, x, idx) ((a) = pct_cpx_mul((a), (RED_SUMT_##E)(x)))
#define prod_COMBINE(E, N, T, C, a, b) ((a) = pct_cpx_mul((a), (b)))
#define prod_RUN(E, N, T, C, a, p, n, s, idx) ((a) = pct_cpx_mul((a), prod_pp_##N(p, n, s, 0, ctx)))
#define RK_PF_FOLD(a, b) pct_cpx_mul((a), (b))
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach_complex.h"
#include "reduce_kernel_done.h"
const red_kernel *const prod_table[PCT_NUM_DTYPES] = {
    PCT_FORALL_DTYPES_PAIRED(RED_X_ENTRY_ALL, prod, 0, 0, 0)
    [PCT_COMPLEX64] = &prod_kernel_ComplexFloat, [PCT_COMPLEX128] = &prod_kernel_ComplexDouble,
};
