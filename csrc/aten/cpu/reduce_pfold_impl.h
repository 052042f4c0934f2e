/* reduce_pfold_impl.h: a pairwise fold over strided runs (the accuracy scheme of Note [Reduction
 * plan] in reduce.c) for one op and dtype, included by reduce_kernel_impl.h for each fold the op
 * declares (RK_PF_* and RK_PF2_* at its instantiation in a reduce_kernels_*.c file). Expects reduce_kernel_impl.h's
 * RK_* helpers and, set from the op's RK_PF_*:
 *   PF_NAME   the functions' prefix: <NAME>_<dtype> and <NAME>_<dtype>_short_c, _leaf_c, ...
 *   PF_A(E, N, T, C)     the accumulator type
 *   PF_MAP(E, N, T, C)   the mapped element, an expression over x that may use m and ctx
 *   PF_OP, PF_ID         the fold (+ or *) and its identity; PF_FOLD(a, b), when set, folds instead of a PF_OP b
 * No include guard: by design. */
#define PF_BASE RK_CAT(RK_CAT(PF_NAME, _), PCT_TPL_N)
#define PF_FN(suffix) RK_CAT(PF_BASE, suffix)
#define PF_ACC RK_CALL(PF_A, RK_ARGS)
#define PF_MAPPED RK_CALL(PF_MAP, RK_ARGS)

/* Pairwise fold (OP is + or *, ID its identity) of MAP(x) over a strided run, in A
 * accumulators. MAP may use x, m and ctx. */
/* runs of at most 4 * RED_NACC (rows of a small inner reduction, e.g. 7x7 spatial means): 16
 * accumulators, one AVX-512 vector of float (8 gave GCC a shuffle-heavy vectorization),
 * instead of initialising and folding all RED_NACC */
__attribute__((always_inline)) static inline PF_ACC PF_FN(_short_i)(const PCT_TPL_T *restrict q, int64_t n, double m,
                                                                     const red_ctx *ctx)
{
    (void)m; (void)ctx;
    PF_ACC acc[16];
    for (int j = 0; j < 16; j++) acc[j] = PF_ID;
    int64_t k = 0;
    for (; k + 16 <= n; k += 16)
        for (int j = 0; j < 16; j++) { PCT_TPL_C x = RK_TO_C(q[k + j]); acc[j] = PF_FOLD(acc[j], (PF_ACC)(PF_MAPPED)); }
    for (int j = 0; k < n; k++, j++) { PCT_TPL_C x = RK_TO_C(q[k]); acc[j] = PF_FOLD(acc[j], (PF_ACC)(PF_MAPPED)); }
    for (int w = 8; w > 0; w /= 2)
        for (int j = 0; j < w; j++) acc[j] = PF_FOLD(acc[j], acc[j + w]);
    return acc[0];
}
/* a contiguous leaf; _leaf_i inlines into its callers (here, and the kernels' rows: reduce_kernel_impl.h), compiled
 * for their instruction sets */
__attribute__((always_inline)) static inline PF_ACC PF_FN(_leaf_i)(const PCT_TPL_T *restrict q, int64_t n, double m,
                                                                    const red_ctx *ctx)
{
    if (n <= 4 * RED_NACC) return PF_FN(_short_i)(q, n, m, ctx);
    (void)m; (void)ctx;
    PF_ACC acc[RED_NACC];
    for (int j = 0; j < RED_NACC; j++) acc[j] = PF_ID;
    int64_t k = 0;
    for (; k + RED_NACC <= n; k += RED_NACC)
        for (int j = 0; j < RED_NACC; j++) { PCT_TPL_C x = RK_TO_C(q[k + j]); acc[j] = PF_FOLD(acc[j], (PF_ACC)(PF_MAPPED)); }
    for (int j = 0; k < n; k++, j++) { PCT_TPL_C x = RK_TO_C(q[k]); acc[j] = PF_FOLD(acc[j], (PF_ACC)(PF_MAPPED)); }
    for (int w = RED_NACC / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) acc[j] = PF_FOLD(acc[j], acc[j + w]);
    return acc[0];
}
PCT_HOT static PF_ACC PF_FN(_leaf_c)(const PCT_TPL_T *restrict q, int64_t n, double m, const red_ctx *ctx)
{
    return PF_FN(_leaf_i)(q, n, m, ctx);
}
/* a strided run in 8 accumulators, through a two-level cascade: 16 elements each into t, t
 * into acc every 128 elements, so no chain is longer than 16 (as torch's cascade sum) in a
 * leaf of RED_PW_BLOCK_STRIDED */
__attribute__((noinline)) static PF_ACC PF_FN(_leaf_s)(const char *p, int64_t n, int64_t s, double m,
                                                       const red_ctx *ctx)
{
    (void)m; (void)ctx;
    PF_ACC acc[8];
    for (int j = 0; j < 8; j++) acc[j] = PF_ID;
    int64_t k = 0;
    while (k + 8 <= n) {
        PF_ACC t[8];
        const int64_t ke = n - k < 128 ? k + (n - k) / 8 * 8 : k + 128;
        for (int j = 0; j < 8; j++) { /* the first 8 start the chains */
            PCT_TPL_C x = RK_TO_C(*(const PCT_TPL_T *)(p + (k + j) * s));
            t[j] = (PF_ACC)(PF_MAPPED);
        }
        for (k += 8; k < ke; k += 8)
            for (int j = 0; j < 8; j++) {
                PCT_TPL_C x = RK_TO_C(*(const PCT_TPL_T *)(p + (k + j) * s));
                t[j] = PF_FOLD(t[j], (PF_ACC)(PF_MAPPED));
            }
        for (int j = 0; j < 8; j++) acc[j] = PF_FOLD(acc[j], t[j]);
    }
    for (int j = 0; k < n; k++, j++) { PCT_TPL_C x = RK_TO_C(*(const PCT_TPL_T *)(p + k * s)); acc[j] = PF_FOLD(acc[j], (PF_ACC)(PF_MAPPED)); }
    for (int w = 4; w > 0; w /= 2)
        for (int j = 0; j < w; j++) acc[j] = PF_FOLD(acc[j], acc[j + w]);
    return acc[0];
}
static PF_ACC PF_FN(_rec)(const char *p, int64_t n, int64_t s, double m, const red_ctx *ctx)
{
    /* a strided leaf has 8 accumulators, not RED_NACC, and a cascade of its own: a shorter
     * leaf keeps its chains as short as a contiguous leaf's (torch's cascade adds at most 16
     * per level) */
    const bool contiguous = s == (int64_t)sizeof(PCT_TPL_T);
    if (n <= (contiguous ? RED_PW_BLOCK : RED_PW_BLOCK_STRIDED))
        return contiguous ? PF_FN(_leaf_c)((const PCT_TPL_T *)p, n, m, ctx) : PF_FN(_leaf_s)(p, n, s, m, ctx);
    int64_t h = (n / 2 + RED_NACC - 1) / RED_NACC * RED_NACC;
    return PF_FOLD(PF_FN(_rec)(p, h, s, m, ctx), PF_FN(_rec)(p + h * s, n - h, s, m, ctx));
}
/* long contiguous runs start with a head up to a 64-byte boundary: vector loads that
 * straddle cache lines cost ~10% even when memory-bound */
static PF_ACC PF_BASE(const char *p, int64_t n, int64_t s, double m, const red_ctx *ctx)
{
    if (s == (int64_t)sizeof(PCT_TPL_T) && n > RED_PW_BLOCK && ((uintptr_t)p % sizeof(PCT_TPL_T)) == 0) {
        int64_t h = (int64_t)(((64 - ((uintptr_t)p & 63)) & 63) / sizeof(PCT_TPL_T));
        if (h > 0) return PF_FOLD(PF_FN(_leaf_c)((const PCT_TPL_T *)p, h, m, ctx), PF_FN(_rec)(p + h * s, n - h, s, m, ctx));
    }
    return PF_FN(_rec)(p, n, s, m, ctx);
}

#undef PF_BASE
#undef PF_FN
#undef PF_ACC
#undef PF_MAPPED
