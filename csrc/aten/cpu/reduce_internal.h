/* reduce_internal.h: what the reduction files share: reduce.c (entry points), reduce_kernels_*.c (kernels),
 * reduce_plan.c (the plan, the driver and the argument helpers: Note [Reduction plan] in
 * reduce.c), reduce_vec.c (explicit-vector loops: Note [Explicit vectors]) and softmax.c.
 * Per-dtype helper macros, the kernel interface (red_ctx, red_kernel), the block sizes,
 * and the functions the files call across (pct_red_*, hidden: not exported from _C).
 */
#ifndef PCT_REDUCE_INTERNAL_H
#define PCT_REDUCE_INTERNAL_H
#include "../iter.h"
#include "../reduce_ops.h"
#include "../op.h"
#include "../error.h"
#include "../out.h"
#include "blas.h"
#include "pointwise.h"
#include "fast_exp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "simd_levels.h"

#define PCT_RED_INTERNAL __attribute__((visibility("hidden")))

/* ------------------------------------------------------------------------------------ */
/* per-dtype helpers                                                                     */


/* 1 for the 16-bit floats (stored narrower than they are computed) */
#define RED_NARROW_FLOAT16 1
#define RED_NARROW_BFLOAT16 1
#define RED_NARROW_FLOAT32 0
#define RED_NARROW_FLOAT64 0

/* Instantiation over dtype subsets. */
#define RED_FLT_BOOL(t, e) e
#define RED_FLT_UINT8(t, e) e
#define RED_FLT_INT8(t, e) e
#define RED_FLT_INT16(t, e) e
#define RED_FLT_INT32(t, e) e
#define RED_FLT_INT64(t, e) e
#define RED_FLT_FLOAT16(t, e) t
#define RED_FLT_BFLOAT16(t, e) t
#define RED_FLT_FLOAT32(t, e) t
#define RED_FLT_FLOAT64(t, e) t
#define RED_FLT_UINT16(t, e) e
#define RED_FLT_UINT32(t, e) e
#define RED_FLT_UINT64(t, e) e
#define RED_IF_FLOAT(E, t, e) RED_FLT_##E(t, e)
#define RED_NOTHING(...)

/* ------------------------------------------------------------------------------------ */
/* the kernel interface                                                                  */

typedef struct red_kernel {
    size_t acc_size;
    void (*init)(void *acc, int64_t nb, const red_ctx *ctx);
    void (*combine)(void *acc, const void *later, int64_t nb, const red_ctx *ctx);
    void (*run)(void *acc, const char *p, int64_t n, int64_t stride, int64_t idx, const red_ctx *ctx);
    /* rows reduced positions, rs bytes apart, the first at position idx */
    void (*vrun)(void *acc, const char *p, int64_t nb, int64_t stride, int64_t rows, int64_t rs, int64_t idx,
                 const red_ctx *ctx);
    void (*finish)(void *acc, int64_t nb, char *const *outs, const int64_t *ostrides, const red_ctx *ctx);
    /* `rows` outputs, each one run of n positions (stride s) reduced as run would, then finished: row r starts rs
     * bytes after row r - 1 and writes outs[i] + r * ostrides[i] (a horizontal reduction's innermost kept dim in one
     * call instead of three indirect calls per output) */
    void (*rows)(const char *p, int64_t rows, int64_t rs, int64_t n, int64_t s, char *const *outs,
                 const int64_t *ostrides, const red_ctx *ctx);
    int op; /* PCT_RED_OP_<op> (reduce_ops.h): what another device runs for it */
    /* vrun folds rows through a cascade of RED_VFOLD per level (sum-like ops, RK_CASCADE in
     * reduce.c) and adds into its accumulators once per RED_VLEAF rows; other ops add every row */
    bool vcascade;
} red_kernel;

#define RED_NB 256          /* outputs per vertical block */
#define RED_VSMALL 32       /* vertical blocks of at most this many outputs fold rows in registers */
#define RED_VROWS 8         /* rows folded at once there */
#define RED_VCHUNK 64       /* lanes of a dense block of rows folded at once (sum-like ops: one strip, RK_VSTRIP) */
#define RED_ACC_MAX 32      /* bytes of the largest accumulator */
#define RED_FOLD 256        /* runs per cascade level (horizontal) */
#define RED_VFOLD 16        /* rows (or leaves) per cascade level (vertical: rows are added one by one, as torch's cascade) */
#define RED_VLEAF 256       /* rows of one vertical leaf: one vrun call of red_partial (RED_VFOLD^2) */
#define RED_LEVELS 4        /* cascade levels below the result */
#define RED_PW_BLOCK 8192   /* elements per pairwise leaf */
#define RED_PW_BLOCK_STRIDED 2048 /* elements per pairwise leaf of a strided run (8 accumulators, 2 levels) */
#define RED_NACC 64         /* independent accumulators in a leaf (4 AVX-512 vectors of float) */

#define RED_EXP_FLOAT16(x) pct_fast_expf(x)
#define RED_EXP_BFLOAT16(x) pct_fast_expf(x)
#define RED_EXP_FLOAT32(x) pct_fast_expf(x)
#define RED_EXP_FLOAT64(x) exp(x)
#define RED_EXP(E, x) RED_EXP_##E(x)

typedef struct red_vec_impl {
    float (*max_f32)(float, const float *, int64_t);
    float (*min_f32)(float, const float *, int64_t);
    double (*max_f64)(double, const double *, int64_t);
    double (*min_f64)(double, const double *, int64_t);
    float (*sumexp_f32)(const float *, int64_t, float);
    void (*softmax_rows_f32)(const float *, float *, int64_t, int64_t, int64_t, bool);
} red_vec_impl;

/* The vector kernels for this CPU: chosen once, at first use, by pct_red_vec_select
 * (reduce_vec.c); the choice is read inline, so a short run pays no call for it. */
PCT_RED_INTERNAL extern const red_vec_impl *pct_red_vec_cached;
PCT_RED_INTERNAL const red_vec_impl *pct_red_vec_select(void);
static inline const red_vec_impl *red_vec(void)
{
    const red_vec_impl *v = __atomic_load_n(&pct_red_vec_cached, __ATOMIC_ACQUIRE);
    return v ? v : pct_red_vec_select();
}
static inline float red_vmax_f32(float a, const float *q, int64_t n) { return red_vec()->max_f32(a, q, n); }
static inline float red_vmin_f32(float a, const float *q, int64_t n) { return red_vec()->min_f32(a, q, n); }
static inline double red_vmax_f64(double a, const double *q, int64_t n) { return red_vec()->max_f64(a, q, n); }
static inline double red_vmin_f64(double a, const double *q, int64_t n) { return red_vec()->min_f64(a, q, n); }
static inline float red_vsumexp_f32(const float *q, int64_t n, float m) { return red_vec()->sumexp_f32(q, n, m); }
static inline void red_vsoftmax_rows_f32(const float *in, float *out, int64_t r0, int64_t r1, int64_t len, bool lg)
{
    red_vec()->softmax_rows_f32(in, out, r0, r1, len, lg);
}
#define RED_IS_F32_FLOAT16 0
#define RED_IS_F32_BFLOAT16 0
#define RED_IS_F32_FLOAT32 1
#define RED_IS_F32_FLOAT64 0

/* ---- argument helpers and the driver (reduce_plan.c) ---- */

static inline uint64_t red_all_mask(int ndim) { return ndim ? (~0ULL >> (64 - ndim)) : 0; }
static inline bool red_is_float(int d) { return pct_dtype_is_floating(d); }

/* Reduced-dim mask from an int[]? value. None, or an empty list when empty_all, means every dim.
 * torch's TensorIterator reductions wrap every dim before they look for repeats (wrap_first); its
 * var/std and vector_norm check dim by dim, so a repeat before an out-of-range dim is the error. */
PCT_RED_INTERNAL int pct_red_mask(const pct_tensor *t, const pct_int_list *v, bool empty_all, bool wrap_first,
                                  uint64_t *mask);
PCT_RED_INTERNAL int pct_red_mask_one(const pct_tensor *t, int64_t dim, uint64_t *mask, int *wrapped);
/* elements reduced into each output */
PCT_RED_INTERNAL int64_t pct_red_count(const pct_tensor *t, uint64_t mask);
/* Runs kernel k over `in` (already of the kernel's dtype) reducing `mask`, into nouts
 * results of dtypes[i]. outs_arg[i] are out= targets or NULL; results[i] receive new
 * references (the out= tensors themselves when given). */
PCT_RED_INTERNAL int pct_red_exec(const red_kernel *k, red_ctx *ctx, pct_tensor *in, uint64_t mask, bool keepdim,
                                  bool keep_order, int nouts, const int *dtypes, pct_tensor *const *outs_arg,
                                  pct_tensor **results);
/* One-output reduction: converts self to in_dtype, runs k, returns the result. */
PCT_RED_INTERNAL pct_object *pct_red_simple(const red_kernel *const *table, red_ctx *ctx, pct_tensor *self,
                                          int in_dtype, uint64_t mask, bool keepdim, bool keep_order, int out_dtype,
                                          pct_tensor *out);

#endif
