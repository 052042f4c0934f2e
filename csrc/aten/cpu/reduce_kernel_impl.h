/* reduce_kernel_impl.h: the five kernel functions (and the red_kernel) of one reduction op for
 * one dtype, from the op's functor macros (Note [Reduction plan] in reduce.c), included by
 * the reduce_kernels_*.c files once per op and dtype through dtype_foreach.h, the way NumPy's .c.src loops are
 * expanded. Before including dtype_foreach.h, define RK_OP (the op: sum, amax, ...) and, for
 * ops of the floating dtypes only, RK_FLOAT_ONLY. The op's helpers (op_PRE: pairwise sums,
 * ...) come first. No include guard: by design. */
#if !defined(RK_FLOAT_ONLY) || PCT_TPL_FLOATING
#define RK_CAT_(a, b) a##b
#define RK_CAT(a, b) RK_CAT_(a, b)
/* m(args) with args macro-expanded first: the functors paste E (RED_SUMT_##E) */
#define RK_CALL(m, ...) m(__VA_ARGS__)
#define RK_ARGS PCT_TPL_E, PCT_TPL_N, PCT_TPL_T, PCT_TPL_C
#define RK_F(suffix) RK_CAT(RK_OP, suffix)
#define RK_NAME(base) RK_CAT(RK_CAT(RK_OP, base), PCT_TPL_N)
#define RK_TO_C RK_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)

/* the op's pairwise folds (reduce_pfold_impl.h), then its other helpers */
#ifdef RK_PF_NAME
#define PF_NAME RK_PF_NAME
#define PF_A RK_PF_A
#define PF_MAP RK_PF_MAP
#ifdef RK_PF_OP
#define PF_OP RK_PF_OP
#define PF_ID RK_PF_ID
#else
#define PF_OP +
#define PF_ID 0
#endif
#ifdef RK_PF_FOLD
#define PF_FOLD RK_PF_FOLD
#else
#define PF_FOLD(a, b) ((a) PF_OP (b))
#endif
#include "reduce_pfold_impl.h"
#undef PF_NAME
#undef PF_A
#undef PF_MAP
#undef PF_OP
#undef PF_ID
#undef PF_FOLD
#endif
#ifdef RK_PF2_NAME
#define PF_NAME RK_PF2_NAME
#define PF_A RK_PF2_A
#define PF_MAP RK_PF2_MAP
#define PF_OP +
#define PF_ID 0
#define PF_FOLD(a, b) ((a) PF_OP (b))
#include "reduce_pfold_impl.h"
#undef PF_NAME
#undef PF_A
#undef PF_MAP
#undef PF_OP
#undef PF_ID
#undef PF_FOLD
#endif
RK_CALL(RK_F(_PRE), RK_ARGS)

/* The op's functor macros:
 *   op_A(E,N,T,C)                   accumulator type
 *   op_PRE(E,N,T,C)                 helper definitions (pairwise sums, ...)
 *   op_INIT(E,N,T,C,a)              empty accumulator
 *   op_ACC(E,N,T,C,a,x,idx)         fold element x (compute type C) at reduced position idx
 *   op_COMBINE(E,N,T,C,a,b)         a = a (+) b, b holding later elements
 *   op_RUN(E,N,T,C,a,p,n,s,idx)     fold a strided run (usually RED_RUN_LOOP or a pairwise sum)
 *   op_FINISH(E,N,T,C,a,o0,o1)      write results (o1: second output, for two-output ops) */
typedef RK_CALL(RK_F(_A), RK_ARGS) RK_NAME(_acc_);
static void RK_NAME(_init_)(void *buf, int64_t nb, const red_ctx *ctx)
{
    RK_NAME(_acc_) *a = buf;
    (void)ctx;
    for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_INIT), RK_ARGS, a[j]); }
}
static void RK_NAME(_combine_)(void *dst, const void *src, int64_t nb, const red_ctx *ctx)
{
    RK_NAME(_acc_) *a = dst;
    const RK_NAME(_acc_) *b = src;
    (void)ctx;
    for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, a[j], b[j]); }
}
static void RK_NAME(_run_)(void *buf, const char *p, int64_t n, int64_t s, int64_t idx, const red_ctx *ctx)
{
    RK_NAME(_acc_) *a = buf;
    (void)ctx; (void)idx;
    RK_CALL(RK_F(_RUN), RK_ARGS, (*a), p, n, s, idx);
}
#ifdef RK_CASCADE
/* columns per strip: 256 bytes of accumulators (8 AVX2 vectors of float, as many chains as two
 * loads a cycle keep busy) held in registers through a group of rows */
#define RK_VSTRIP (sizeof(RK_NAME(_acc_)) <= 4 ? 64 : sizeof(RK_NAME(_acc_)) <= 8 ? 32 : 16)
/* One group of the cascade: n <= RED_VFOLD rows (rs bytes apart; idx, idx + istep, ... their
 * positions) of columns [0, w) folded into t0, then t0 into t1. Inlined with a constant w
 * (and contiguous), which lets the compiler keep t0 in vector registers. The first row starts
 * t0 in the loop that empties it: a separate loop that empties t0 becomes a memset (rep stos)
 * into a stack copy of t0. */
__attribute__((always_inline)) static inline void RK_NAME(_vgroup_)(RK_NAME(_acc_) *restrict t1, const char *p,
                                                                   const int w, const bool contiguous, int64_t s,
                                                                   int64_t n, int64_t rs, int64_t idx, int64_t istep,
                                                                   const red_ctx *ctx)
{
    (void)ctx; (void)idx; (void)istep;
    RK_NAME(_acc_) t0[RK_VSTRIP];
#define RK_VLOAD(row, j)                                                                                              \
    RK_TO_C(contiguous ? ((const PCT_TPL_T *)(row))[j] : *(const PCT_TPL_T *)((row) + (j) * s))
    for (int j = 0; j < w; j++) {
        PCT_TPL_C x = RK_VLOAD(p, j);
        RK_CALL(RK_F(_INIT), RK_ARGS, t0[j]);
        RK_CALL(RK_F(_ACC), RK_ARGS, t0[j], x, idx);
    }
    for (int64_t i = 1; i < n; i++) {
        const char *row = p + i * rs;
        for (int j = 0; j < w; j++) {
            PCT_TPL_C x = RK_VLOAD(row, j);
            RK_CALL(RK_F(_ACC), RK_ARGS, t0[j], x, idx + i * istep);
        }
    }
#undef RK_VLOAD
    for (int j = 0; j < w; j++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, t1[j], t0[j]); }
}
/* n rows of all nb columns, one group: strips of RK_VSTRIP, RK_VSTRIP / 2, / 4, / 8 and a last
 * narrower one. Strip by strip within a group of rows, the rows are read nearly in memory
 * order (a strip down a whole leaf would jump a row stride each load). */
__attribute__((always_inline)) static inline void RK_NAME(_vgroups_)(RK_NAME(_acc_) *restrict t1, const char *p,
                                                                    int64_t nb, const bool whole, const bool contiguous,
                                                                    int64_t s, int64_t n, int64_t rs, int64_t idx,
                                                                    const red_ctx *ctx)
{
    int64_t j = 0;
    for (; j + RK_VSTRIP <= nb; j += RK_VSTRIP)
        RK_NAME(_vgroup_)(t1 + j, p + j * s, RK_VSTRIP, contiguous, s, n, rs, idx, 1, ctx);
    if (whole) return; /* nb % RK_VSTRIP == 0 */
    /* one call per width, each with its constant (GCC does not unroll a loop over w) */
#define RK_VTAIL(w)                                                                                                   \
    if (j + (w) <= nb) {                                                                                              \
        RK_NAME(_vgroup_)(t1 + j, p + j * s, (w), contiguous, s, n, rs, idx, 1, ctx);                                 \
        j += (w);                                                                                                     \
    }
    RK_VTAIL(RK_VSTRIP / 2)
    RK_VTAIL(RK_VSTRIP / 4)
    RK_VTAIL(RK_VSTRIP / 8)
#undef RK_VTAIL
    if (j < nb) RK_NAME(_vgroup_)(t1 + j, p + j * s, (int)(nb - j), contiguous, s, n, rs, idx, 1, ctx);
}
/* rows in leaves of RED_VLEAF: RED_VFOLD groups into t1, t1 into a */
__attribute__((always_inline)) static inline void RK_NAME(_vleaves_)(RK_NAME(_acc_) *restrict a, const char *p,
                                                                    int64_t nb, const bool whole, const bool contiguous,
                                                                    int64_t s, int64_t rows, int64_t rs, int64_t idx,
                                                                    const red_ctx *ctx)
{
    RK_NAME(_acc_) t1[RED_NB];
    for (int64_t r0 = 0; r0 < rows; r0 += RED_VLEAF) {
        const int64_t r1 = rows - r0 < RED_VLEAF ? rows : r0 + RED_VLEAF;
        for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_INIT), RK_ARGS, t1[j]); }
        for (int64_t r = r0; r < r1; r += RED_VFOLD) {
            const int64_t n = r1 - r < RED_VFOLD ? r1 - r : RED_VFOLD;
            RK_NAME(_vgroups_)(t1, p + r * rs, nb, whole, contiguous, s, n, rs, idx + r, ctx);
        }
        for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, a[j], t1[j]); }
    }
}
/* The dtypes whose strips get compile-time widths (RK_NAME(_vrun_)); the others take the one
 * general form, same sums. Each specialised form inlines ~18 group bodies into each of the ISA
 * clones: for every dtype of the four sum-like ops that was ten minutes of compiling (then one file, reduce.c). */
#ifndef RK_VSPECIALIZED_FLOAT32
#define RK_VSPECIALIZED_FLOAT32 1
#define RK_VSPECIALIZED_FLOAT64 1
#define RK_VSPECIALIZED_BFLOAT16 1 /* its column sums: a bias gradient under autocast (5.9x torch in the general form) */
#endif
/* Sum-like ops (RK_CASCADE): rows are added through a short cascade in groups of RED_VFOLD
 * (RK_NAME(_vgroup_)): each group's rows into t0 (registers), RED_VFOLD groups into t1, t1
 * into a once per RED_VLEAF rows, so no chain is longer than RED_VFOLD (torch's cascade sum
 * adds 16 per level). Few outputs with dense rows narrower than half a strip (rs = nb
 * elements, e.g. x.sum(1) of (64, 512, 8), whose strips would keep too few chains in flight)
 * are one contiguous run whose lane i belongs to output i % nb: chunks of RK_VSTRIP lanes are
 * the rows of the same cascade (RK_VSTRIP / nb rows each), the lanes of an output added up at
 * the end. nb <= RED_NB (a vertical block). */
PCT_HOT static void RK_NAME(_vrun_)(void *buf, const char *p, int64_t nb, int64_t s, int64_t rows,
                                  int64_t rs, int64_t idx, const red_ctx *ctx)
{
    RK_NAME(_acc_) *restrict a = buf;
    const int64_t item = (int64_t)sizeof(PCT_TPL_T);
    /* the lanes of a chunk are one strip: chunk after chunk, the loads stream through memory */
    enum { chunk = RK_VSTRIP };
    if (!ctx->ordered && s == item && 2 * nb < chunk && rs == nb * item && chunk % nb == 0 && rows >= chunk / nb) {
        const int64_t rpc = chunk / nb, nch = rows / rpc;
        RK_NAME(_acc_) t[chunk];
        for (int i = 0; i < chunk; i++) { RK_CALL(RK_F(_INIT), RK_ARGS, t[i]); }
        for (int64_t c = 0; c < nch; c += RED_VFOLD) {
            const int64_t n = nch - c < RED_VFOLD ? nch - c : RED_VFOLD;
            RK_NAME(_vgroup_)(t, p + c * chunk * item, chunk, true, item, n, chunk * item, idx + c * rpc, rpc, ctx);
        }
        /* the last rows (fewer than a chunk) go into the first lanes: each output is added into
         * a once per call, as a leaf of red_partial is (Note [Reduction plan]: threads) */
        const PCT_TPL_T *restrict q = (const PCT_TPL_T *)p + nch * chunk;
        for (int64_t i = 0; i < (rows - nch * rpc) * nb; i++) {
            PCT_TPL_C x = RK_TO_C(q[i]);
            RK_CALL(RK_F(_ACC), RK_ARGS, t[i], x, idx + nch * rpc + i / nb);
        }
        for (int64_t w = chunk / 2; w >= nb; w /= 2) /* w % nb == 0: same output */
            for (int64_t i = 0; i < w; i++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, t[i], t[i + w]); }
        for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, a[j], t[j]); }
        return;
    }
    /* The strips' widths known at compile time where they can be (rows of one strip, or of
     * whole strips): the compiler then keeps few pointers live across groups, where the mix
     * of all widths kept a dozen on the stack (~50 cycles a group, +40% on (100000, 16) f64). */
#if RK_CAT(RK_VSPECIALIZED_, PCT_TPL_E)
    if (s != item) RK_NAME(_vleaves_)(a, p, nb, false, false, s, rows, rs, idx, ctx);
    else if (nb == RK_VSTRIP) RK_NAME(_vleaves_)(a, p, RK_VSTRIP, true, true, s, rows, rs, idx, ctx);
    else if (nb == RK_VSTRIP / 2) RK_NAME(_vleaves_)(a, p, RK_VSTRIP / 2, false, true, s, rows, rs, idx, ctx);
    else if (nb % RK_VSTRIP == 0) RK_NAME(_vleaves_)(a, p, nb, true, true, s, rows, rs, idx, ctx);
    else RK_NAME(_vleaves_)(a, p, nb, false, true, s, rows, rs, idx, ctx);
#else
    RK_NAME(_vleaves_)(a, p, nb, false, false, s, rows, rs, idx, ctx);
#endif
}
#define RK_VCASCADE true
#else
PCT_HOT static void RK_NAME(_vrun_)(void *buf, const char *p, int64_t nb, int64_t s, int64_t rows,
                                  int64_t rs, int64_t idx, const red_ctx *ctx)
{
    RK_NAME(_acc_) *restrict a = buf;
    (void)ctx; (void)idx;
    int64_t r = 0;
    /* Few outputs (e.g. x.sum(1) of (64, 512, 8)): a[j] += x row by row would wait on the
     * store of the previous row's a[j]. Dense rows (rs = nb elements) are one contiguous
     * run whose lane i belongs to output i % nb: fold it RED_VCHUNK lanes at a time (lanes
     * interleave rows, so not for ops that report an index); other rows fold RED_VROWS
     * rows into a register before touching a[j]. */
    if (nb <= RED_VSMALL && s == (int64_t)sizeof(PCT_TPL_T)) {
        if (!ctx->ordered && rs == nb * (int64_t)sizeof(PCT_TPL_T) && RED_VCHUNK % nb == 0 &&
            rows >= RED_VCHUNK / nb) {
            const int64_t rpc = RED_VCHUNK / nb, nch = rows / rpc;
            const PCT_TPL_T *restrict q = (const PCT_TPL_T *)p;
            RK_NAME(_acc_) t[RED_VCHUNK];
            for (int i = 0; i < RED_VCHUNK; i++) { RK_CALL(RK_F(_INIT), RK_ARGS, t[i]); }
            for (int64_t c = 0; c < nch; c++, q += RED_VCHUNK)
                for (int i = 0; i < RED_VCHUNK; i++) {
                    PCT_TPL_C x = RK_TO_C(q[i]);
                    RK_CALL(RK_F(_ACC), RK_ARGS, t[i], x, idx + c * rpc + i / nb);
                }
            for (int64_t w = RED_VCHUNK / 2; w >= nb; w /= 2) /* w % nb == 0: same output */
                for (int64_t i = 0; i < w; i++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, t[i], t[i + w]); }
            for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_COMBINE), RK_ARGS, a[j], t[j]); }
            r = nch * rpc;
            idx += r;
            p += r * rs;
        }
        for (; r + RED_VROWS <= rows; r += RED_VROWS, idx += RED_VROWS, p += RED_VROWS * rs)
            for (int64_t j = 0; j < nb; j++) {
                RK_NAME(_acc_) t;
                RK_CALL(RK_F(_INIT), RK_ARGS, t);
                for (int i = 0; i < RED_VROWS; i++) {
                    PCT_TPL_C x = RK_TO_C(((const PCT_TPL_T *)(p + i * rs))[j]);
                    RK_CALL(RK_F(_ACC), RK_ARGS, t, x, idx + i);
                }
                RK_CALL(RK_F(_COMBINE), RK_ARGS, a[j], t);
            }
    }
    for (; r < rows; r++, idx++, p += rs) {
        if (s == (int64_t)sizeof(PCT_TPL_T)) {
            const PCT_TPL_T *restrict q = (const PCT_TPL_T *)p;
            for (int64_t j = 0; j < nb; j++) { PCT_TPL_C x = RK_TO_C(q[j]); RK_CALL(RK_F(_ACC), RK_ARGS, a[j], x, idx); }
        } else {
            for (int64_t j = 0; j < nb; j++) {
                PCT_TPL_C x = RK_TO_C(*(const PCT_TPL_T *)(p + j * s));
                RK_CALL(RK_F(_ACC), RK_ARGS, a[j], x, idx);
            }
        }
    }
}
#define RK_VCASCADE false
#endif
static void RK_NAME(_finish_)(void *buf, int64_t nb, char *const *o, const int64_t *os, const red_ctx *ctx)
{
    RK_NAME(_acc_) *a = buf;
    (void)ctx;
    for (int64_t j = 0; j < nb; j++) { RK_CALL(RK_F(_FINISH), RK_ARGS, a[j], (o[0] + j * os[0]), (o[1] + j * os[1])); }
}
/* The ops whose run of a contiguous leaf (n <= RED_PW_BLOCK elements) is one pairwise leaf define op_ROWS_C(E, N, T, C,
 * a, q, n), a += that leaf inlined (sum, mean): rows of such runs are then folded in one function compiled per
 * instruction set, the same sums as run's. */
#ifdef RK_ROWS_C
#define RK_ROWS_ATTR PCT_HOT
#else
#define RK_ROWS_ATTR
#endif
RK_ROWS_ATTR static void RK_NAME(_rows_)(const char *p, int64_t rows, int64_t rs, int64_t n, int64_t s, char *const *o,
                                         const int64_t *os, const red_ctx *ctx)
{
    (void)ctx;
#ifdef RK_ROWS_C
    if (s == (int64_t)sizeof(PCT_TPL_T) && n <= RED_PW_BLOCK) {
        for (int64_t r = 0; r < rows; r++, p += rs) {
            RK_NAME(_acc_) a;
            RK_CALL(RK_F(_INIT), RK_ARGS, a);
            RK_CALL(RK_F(_ROWS_C), RK_ARGS, a, (const PCT_TPL_T *)p, n);
            RK_CALL(RK_F(_FINISH), RK_ARGS, a, (o[0] + r * os[0]), (o[1] + r * os[1]));
        }
        return;
    }
#endif
    for (int64_t r = 0; r < rows; r++, p += rs) {
        RK_NAME(_acc_) a;
        RK_CALL(RK_F(_INIT), RK_ARGS, a);
        RK_CALL(RK_F(_RUN), RK_ARGS, a, p, n, s, 0);
        RK_CALL(RK_F(_FINISH), RK_ARGS, a, (o[0] + r * os[0]), (o[1] + r * os[1]));
    }
}
static const red_kernel RK_NAME(_kernel_) = {sizeof(RK_NAME(_acc_)), RK_NAME(_init_), RK_NAME(_combine_),
                                           RK_NAME(_run_), RK_NAME(_vrun_), RK_NAME(_finish_), RK_NAME(_rows_),
                                           RK_CAT(PCT_RED_OP_, RK_OP), RK_VCASCADE};

#undef RK_CAT_
#undef RK_CAT
#undef RK_CALL
#undef RK_ARGS
#undef RK_F
#undef RK_NAME
#undef RK_TO_C
#undef RK_VCASCADE
#undef RK_VSTRIP
#undef RK_ROWS_ATTR
#endif
