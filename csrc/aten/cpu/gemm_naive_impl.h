/* gemm_naive_impl.h: the blocked fallback GEMM (Note [Blocked fallback GEMM] in blas.c) for
 * one dtype, included by blas.c once per dtype, the way NumPy's .c.src loops are expanded.
 * Before including, define:
 *   GEMM_NAME   the suffix of the functions: naive_tile_<NAME>, naive_gemm_<NAME>
 *   GEMM_T      the element type
 *   GEMM_ACC    the accumulator type (uint64_t for integers, float for float16/bfloat16)
 *   GEMM_LOAD   element -> accumulator
 *   GEMM_STORE  accumulator -> element
 * They are undefined at the end, ready for the next dtype. No include guard: by design. */
#define GEMM_CAT_(a, b) a##_##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
#define GEMM_TILE GEMM_CAT(naive_tile, GEMM_NAME)
#define GEMM_FN GEMM_CAT(naive_gemm, GEMM_NAME)

static void GEMM_TILE(int64_t t, int64_t m, int64_t n, int64_t k, GEMM_ACC alpha, GEMM_ACC beta, bool beta_zero,
                      const GEMM_T *a, int64_t ars, int64_t acs, const GEMM_ACC *bp, int64_t bprs, GEMM_T *c,
                      int64_t crs, int64_t ccs)
{
    GEMM_ACC acc[GEMM_IB * GEMM_JB];
    int64_t i0 = t * GEMM_IB, i1 = i0 + GEMM_IB < m ? i0 + GEMM_IB : m;
    for (int64_t j0 = 0; j0 < n; j0 += GEMM_JB) {
        int64_t jn = n - j0 < GEMM_JB ? n - j0 : GEMM_JB;
        for (int64_t i = i0; i < i1; i++)
            for (int64_t j = 0; j < jn; j++) acc[(i - i0) * GEMM_JB + j] = 0;
        for (int64_t p0 = 0; p0 < k; p0 += GEMM_KB) {
            int64_t p1 = p0 + GEMM_KB < k ? p0 + GEMM_KB : k;
            for (int64_t i = i0; i < i1; i++) {
                GEMM_ACC *restrict ar = acc + (i - i0) * GEMM_JB;
                const GEMM_T *arow = a + i * ars;
                for (int64_t p = p0; p < p1; p++) {
                    const GEMM_ACC av = GEMM_LOAD(arow[p * acs]);
                    const GEMM_ACC *restrict br = bp + p * bprs + j0;
                    for (int64_t j = 0; j < jn; j++) ar[j] += av * br[j];
                }
            }
        }
        for (int64_t i = i0; i < i1; i++) {
            const GEMM_ACC *ar = acc + (i - i0) * GEMM_JB;
            GEMM_T *crow = c + i * crs + j0 * ccs;
            if (beta_zero)
                for (int64_t j = 0; j < jn; j++) crow[j * ccs] = GEMM_STORE(alpha * ar[j]);
            else
                for (int64_t j = 0; j < jn; j++)
                    crow[j * ccs] = GEMM_STORE(alpha * ar[j] + beta * GEMM_LOAD(crow[j * ccs]));
        }
    }
}

static int GEMM_FN(int64_t m, int64_t n, int64_t k, GEMM_ACC alpha, GEMM_ACC beta, bool beta_zero, const char *a_,
                   int64_t ars, int64_t acs, const char *b_, int64_t brs, int64_t bcs, char *c_, int64_t crs,
                   int64_t ccs, bool parallel)
{
    const GEMM_T *a = (const GEMM_T *)a_;
    const GEMM_T *b = (const GEMM_T *)b_;
    GEMM_T *c = (GEMM_T *)c_;
    GEMM_ACC stack_pack[GEMM_STACK_PACK / sizeof(GEMM_ACC)];
    const size_t pack_bytes = sizeof(GEMM_ACC) * (size_t)k * (size_t)n;
    const bool direct = sizeof(GEMM_ACC) == sizeof(GEMM_T) && (GEMM_ACC)0.5 != 0 && (GEMM_T)0.5 != 0 && bcs == 1;
    GEMM_ACC *bp = direct ? (GEMM_ACC *)(uintptr_t)b
                          : pack_bytes <= sizeof stack_pack ? stack_pack : malloc(pack_bytes);
    const int64_t bprs = direct ? brs : n;
    if (!bp) return -1;
    for (int64_t p = 0; !direct && p < k; p++) {
        GEMM_ACC *dst = bp + p * n;
        const GEMM_T *src = b + p * brs;
        if (bcs == 1)
            for (int64_t j = 0; j < n; j++) dst[j] = GEMM_LOAD(src[j]);
        else
            for (int64_t j = 0; j < n; j++) dst[j] = GEMM_LOAD(src[j * bcs]);
    }
    const int64_t ntiles = (m + GEMM_IB - 1) / GEMM_IB;
    if (parallel && ntiles > 1 && m * n * k >= 65536 && num_threads() > 1) {
        PCT_OMP(omp parallel for schedule(static))
        for (int64_t t = 0; t < ntiles; t++)
            GEMM_TILE(t, m, n, k, alpha, beta, beta_zero, a, ars, acs, bp, bprs, c, crs, ccs);
    } else {
        for (int64_t t = 0; t < ntiles; t++)
            GEMM_TILE(t, m, n, k, alpha, beta, beta_zero, a, ars, acs, bp, bprs, c, crs, ccs);
    }
    if (!direct && bp != stack_pack) free(bp);
    return 0;
}

#undef GEMM_CAT_
#undef GEMM_CAT
#undef GEMM_TILE
#undef GEMM_FN
#undef GEMM_NAME
#undef GEMM_T
#undef GEMM_ACC
#undef GEMM_LOAD
#undef GEMM_STORE
