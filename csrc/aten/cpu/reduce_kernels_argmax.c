/* reduce_kernels_argmax.c: the kernels of argmax, argmin, max.dim and min.dim (Note [Reduction plan] in reduce.c;
 * the functor macros expanded per dtype by reduce_kernel_impl.h). */
#define PCT_REDUCE_KERNELS_IMPL
#include "reduce_kernels.h"

/* argmax / argmin / max.dim / min.dim: (value, index); the first occurrence wins ties and
 * the first NaN wins over numbers. i < 0 marks an empty accumulator.
 *
 * Note [Index scans]
 * A contiguous float32/float64 run of at least RED_ARGSCAN_MIN elements is scanned in two
 * passes instead of element by element: the best value by the vector min/max scan of amax/amin
 * (reduce_vec.c, NaN winning), then its first occurrence, the first element equal to it (the
 * first NaN when it is NaN). That is the element the loop keeps: ties go to the first, and +0.0
 * and -0.0 compare equal, so the first zero wins with its own sign. The loop's branch per
 * element cost 1 ns; the two passes ~0.2 ns (max(-1) of a 1024 x 1024 float32: 1.09 -> 0.2 ms). */
#define RED_ARGSCAN_MIN 32
#define RED_ARGSCAN_FN(T, SFX)                                                                    \
    static int64_t red_argscan_##SFX(bool max, T *best, const char *p, int64_t n, int64_t s)       \
    {                                                                                              \
        if (s != (int64_t)sizeof(T) || n < RED_ARGSCAN_MIN) return -1;                             \
        const T *q = (const T *)p;                                                                 \
        const T m = max ? red_vmax_##SFX(q[0], q, n) : red_vmin_##SFX(q[0], q, n);                 \
        int64_t k = 0;                                                                             \
        if (m != m)                                                                                \
            while (q[k] == q[k]) k++;                                                              \
        else                                                                                       \
            while (q[k] != m) k++;                                                                 \
        *best = q[k];                                                                              \
        return k;                                                                                  \
    }
RED_ARGSCAN_FN(float, f32)
RED_ARGSCAN_FN(double, f64)
/* the scan of a dtype (only float32 and float64 have one: -1 sends the others to the loop) */
#define RED_ARGSCAN_NONE(max, best, p, n, s) ((void)(best), (int64_t)-1)
#define RED_ARGSCAN(E) RED_ARGSCAN_PICK_##E
#define RED_ARGSCAN_PICK_FLOAT32 red_argscan_f32
#define RED_ARGSCAN_PICK_FLOAT64 red_argscan_f64
#define RED_ARGSCAN_PICK_BOOL RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_UINT8 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_INT8 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_INT16 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_INT32 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_INT64 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_FLOAT16 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_BFLOAT16 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_UINT16 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_UINT32 RED_ARGSCAN_NONE
#define RED_ARGSCAN_PICK_UINT64 RED_ARGSCAN_NONE
/* a run: the scan's first best element joins the accumulator as a one-element run would */
#define RED_ARG_RUN(op, MAX, E, N, T, C, a, p, n, s, idx)                                     \
    do {                                                                                           \
        T best_;                                                                                   \
        memset(&best_, 0, sizeof best_);                                                          \
        const int64_t k_ = RED_ARGSCAN(E)(MAX, &best_, p, n, s);                                   \
        if (k_ < 0) {                                                                              \
            RED_RUN_LOOP(op, E, N, T, C, a, p, n, s, idx);                                         \
        } else {                                                                                   \
            C x_ = PCT_TO_COMPUTE_##E(best_);                                                      \
            op##_ACC(E, N, T, C, a, x_, (idx) + k_);                                               \
        }                                                                                          \
    } while (0)
#define argmax_PRE(E, N, T, C)
#define argmax_RUN(E, N, T, C, a, p, n, s, idx) RED_ARG_RUN(argmax, true, E, N, T, C, a, p, n, s, idx)
#define RK_OP argmax
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(argmax)

#define argmin_PRE(E, N, T, C)
#define argmin_RUN(E, N, T, C, a, p, n, s, idx) RED_ARG_RUN(argmin, false, E, N, T, C, a, p, n, s, idx)
#define RK_OP argmin
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALL(argmin)

#define maxdim_PRE(E, N, T, C)
#define maxdim_RUN(E, N, T, C, a, p, n, s, idx) RED_ARG_RUN(maxdim, true, E, N, T, C, a, p, n, s, idx)
#define RK_OP maxdim
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(maxdim) /* uint16/32/64: only for the 0-d and empty inputs torch answers (dispatch.c) */

#define mindim_PRE(E, N, T, C)
#define mindim_RUN(E, N, T, C, a, p, n, s, idx) RED_ARG_RUN(mindim, false, E, N, T, C, a, p, n, s, idx)
#define RK_OP mindim
#define PCT_FOREACH_UNSIGNED
#define PCT_FOREACH_TEMPLATE "reduce_kernel_impl.h"
#include "dtype_foreach.h"
#include "reduce_kernel_done.h"
RED_TABLE_ALLU(mindim)
