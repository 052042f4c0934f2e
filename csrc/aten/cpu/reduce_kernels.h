/* reduce_kernels.h: what the files of reduction kernels share (Note [Reduction plan] in reduce.c). Each
 * reduce_kernels_*.c expands the kernels of a few ops per dtype from their functor macros, with the ISA clones of
 * their hot loops; reduce.c's entry points pick a kernel from the ops' tables declared here. The kernels are spread
 * over several files because one file of them all took ten minutes to compile, alone on one core. */
#ifndef PCT_REDUCE_KERNELS_H
#define PCT_REDUCE_KERNELS_H
#include "reduce_internal.h"

/* one table per op, indexed by dtype (NULL: the op does not take the dtype) */
extern const red_kernel *const sum_table[PCT_NUM_DTYPES];
extern const red_kernel *const nansum_table[PCT_NUM_DTYPES];
extern const red_kernel *const mean_table[PCT_NUM_DTYPES];
extern const red_kernel *const nanmean_table[PCT_NUM_DTYPES];
extern const red_kernel *const prod_table[PCT_NUM_DTYPES];
extern const red_kernel *const amax_table[PCT_NUM_DTYPES];
extern const red_kernel *const amin_table[PCT_NUM_DTYPES];
extern const red_kernel *const argmax_table[PCT_NUM_DTYPES];
extern const red_kernel *const argmin_table[PCT_NUM_DTYPES];
extern const red_kernel *const maxdim_table[PCT_NUM_DTYPES];
extern const red_kernel *const mindim_table[PCT_NUM_DTYPES];
extern const red_kernel *const aminmax_table[PCT_NUM_DTYPES];
extern const red_kernel *const all_table[PCT_NUM_DTYPES];
extern const red_kernel *const any_table[PCT_NUM_DTYPES];
extern const red_kernel *const cnz_table[PCT_NUM_DTYPES];
extern const red_kernel *const var_table[PCT_NUM_DTYPES];
extern const red_kernel *const lse_table[PCT_NUM_DTYPES];
extern const red_kernel *const clse_table[PCT_NUM_DTYPES];
extern const red_kernel *const norm2_table[PCT_NUM_DTYPES];
extern const red_kernel *const norm1_table[PCT_NUM_DTYPES];
extern const red_kernel *const norm0_table[PCT_NUM_DTYPES];
extern const red_kernel *const normp_table[PCT_NUM_DTYPES];
extern const red_kernel *const norminf_table[PCT_NUM_DTYPES];
extern const red_kernel *const normninf_table[PCT_NUM_DTYPES];

#ifdef PCT_REDUCE_KERNELS_IMPL /* the kernel files' shared macros */
/* The default RUN: ACC over every element of the run. */
#define RED_RUN_LOOP(op, E, N, T, C, a, p, n, s, idx)                                          \
    do {                                                                                       \
        if ((s) == (int64_t)sizeof(T)) {                                                       \
            const T *restrict q_ = (const T *)(p);                                             \
            for (int64_t k_ = 0; k_ < (n); k_++) {                                             \
                C x = PCT_TO_COMPUTE_##E(q_[k_]);                                              \
                op##_ACC(E, N, T, C, a, x, (idx) + k_);                                        \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t k_ = 0; k_ < (n); k_++) {                                             \
                C x = PCT_TO_COMPUTE_##E(*(const T *)((p) + k_ * (s)));                        \
                op##_ACC(E, N, T, C, a, x, (idx) + k_);                                        \
            }                                                                                  \
        }                                                                                      \
    } while (0)


/* An op's kernels: RK_OP defined, then one include of reduce_kernel_impl.h per dtype (all, the
 * floating ones with RK_FLOAT_ONLY, uint16/32/64 too with PCT_FOREACH_UNSIGNED); then its table.
 * Sum-like ops define RK_CASCADE: their vertical rows are added through a short cascade. */
#define RED_ENTRY(op, E, N) [PCT_##E] = &op##_kernel_##N,
#define RED_X_ENTRY_ALL(E, N, T, C, S, op, b, c, d) RED_ENTRY(op, E, N)
#define RED_X_ENTRY_FLT(E, N, T, C, S, op, b, c, d) RED_IF_FLOAT(E, RED_ENTRY, RED_NOTHING)(op, E, N)
#define RED_TABLE_ALL(op) \
    const red_kernel *const op##_table[PCT_NUM_DTYPES] = {PCT_FORALL_DTYPES_PAIRED(RED_X_ENTRY_ALL, op, 0, 0, 0)};
#define RED_TABLE_FLT(op) \
    const red_kernel *const op##_table[PCT_NUM_DTYPES] = {PCT_FORALL_DTYPES_PAIRED(RED_X_ENTRY_FLT, op, 0, 0, 0)};
/* uint16/uint32/uint64 too (the reductions torch has for them) */
#define RED_TABLE_ALLU(op) \
    const red_kernel *const op##_table[PCT_NUM_DTYPES] = {PCT_FORALL_ALL_DTYPES_PAIRED(RED_X_ENTRY_ALL, op, 0, 0, 0)};
#endif
#endif
