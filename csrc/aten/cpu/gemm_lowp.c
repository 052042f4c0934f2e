/* gemm_lowp.c: bfloat16 GEMM with AVX512-BF16, and the float16/bfloat16 <-> float32
 * conversions of the widening path (gemm_lowp.h).
 *
 * Note [bfloat16 GEMM]
 * vdpbf16ps multiplies 32 bfloat16 pairs and adds each pair's two products into one of 16
 * float32 lanes, so K is consumed two at a time: a packed step (Note [Packed GEMM] in
 * gemm_packed.h, whose driver runs this kernel) is the pair (X[2q], X[2q+1]) as one 32-bit
 * word, which the micro-kernel broadcasts for A and loads 16 at a time for B. The MR x NR =
 * 6 x 64 micro-kernel keeps 24 float32 accumulators over all of K (K is never sliced: one
 * rounding to bfloat16 at the end, as torch's oneDNN path does), reading its B panel from L2
 * and its A panel from L1; on Zen 5 slicing K so a B panel's slice stays in L1 measured
 * 5-15% slower. The epilogue scales the tile, adds beta * C and rounds. Runtime dispatch:
 * the kernel is compiled with target attributes and used only when the CPU reports
 * AVX512-BF16 (never -march=native); elsewhere blas.c widens to float32 around sgemm.
 * PYCTORCH_NO_BF16_GEMM=1 forces the widening path (tests use it). */
#include "gemm_lowp.h"
#include "gemm_packed.h"
#include "../dtype.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PCT_NO_AVX512)
#define PCT_LOWP_X86 1
#include <immintrin.h>
#endif

#define MR PCT_GEMM_MR
#define NR PCT_GEMM_NR
#define LOWP_GRAIN 32768

#ifdef _OPENMP
#define LOWP_OMP(x) _Pragma(#x)
#else
#define LOWP_OMP(x)
#endif

static int features(void) { return pct_cpu_features(); }

bool pct_gemm_bf16_available(void)
{
    static int off = -1; /* PYCTORCH_NO_BF16_GEMM, read once */
    if (off < 0) {
        const char *e = getenv("PYCTORCH_NO_BF16_GEMM");
        off = e && *e && strcmp(e, "0") != 0;
    }
    return !off && (features() & PCT_CPU_AVX512_BF16) != 0;
}

#ifdef PCT_LOWP_X86 /* packing and the kernel: x86-64 builds with AVX-512 code only */

static inline uint32_t pair_at(const uint16_t *p, int64_t k, int64_t q, int64_t stride)
{
    uint32_t lo = p[2 * q * stride];
    uint32_t hi = 2 * q + 1 < k ? p[(2 * q + 1) * stride] : 0;
    return lo | hi << 16;
}

/* rows (<= MR) rows of A, k deep, as one MR-row panel */
static void pack_a(uint32_t *restrict dst, const char *a_, int64_t rows, int64_t k, int64_t ars, int64_t acs)
{
    const uint16_t *a = (const uint16_t *)a_;
    const int64_t kp = (k + 1) / 2;
    for (int64_t r = 0; r < MR; r++) {
        if (r >= rows) {
            for (int64_t q = 0; q < kp; q++) dst[q * MR + r] = 0;
            continue;
        }
        const uint16_t *row = a + r * ars;
        if (acs == 1) {
            for (int64_t q = 0; q < k / 2; q++) dst[q * MR + r] = (uint32_t)row[2 * q] | (uint32_t)row[2 * q + 1] << 16;
            if (k & 1) dst[(kp - 1) * MR + r] = row[k - 1];
        } else {
            for (int64_t q = 0; q < kp; q++) dst[q * MR + r] = pair_at(row, k, q, acs);
        }
    }
}

/* cols (<= NR) columns of B, k deep, as one NR-column panel */
static void pack_b(uint32_t *restrict dst, const char *b_, int64_t cols, int64_t k, int64_t brs, int64_t bcs)
{
    const uint16_t *b = (const uint16_t *)b_;
    const int64_t kp = (k + 1) / 2;
    if (bcs == 1) { /* rows of B contiguous: interleave two rows */
        for (int64_t q = 0; q < kp; q++) {
            const uint16_t *r0 = b + 2 * q * brs, *r1 = 2 * q + 1 < k ? r0 + brs : NULL;
            uint32_t *d = dst + q * NR;
            if (r1)
                for (int64_t j = 0; j < cols; j++) d[j] = (uint32_t)r0[j] | (uint32_t)r1[j] << 16;
            else
                for (int64_t j = 0; j < cols; j++) d[j] = r0[j];
            for (int64_t j = cols; j < NR; j++) d[j] = 0;
        }
        return;
    }
    if (brs == 1) {
        /* columns of B contiguous (B = W^T of a row-major W): a pair is one word of a column, and
         * the panel is a transpose of words, done in blocks of 16 pairs so a block of the panel
         * (16 x NR words) and the cache lines it reads stay in L1 */
        const int64_t full = k / 2;
        int64_t q0 = 0;
        if (cols == NR && (features() & PCT_CPU_AVX512)) {
            pct_gemm_transpose_words(dst, b_, bcs * 2, 0, full / 16);
            q0 = full / 16 * 16;
        }
        for (; q0 < kp; q0 += 16) {
            const int64_t q1 = q0 + 16 < kp ? q0 + 16 : kp;
            for (int64_t j = 0; j < NR; j++) {
                if (j >= cols) {
                    for (int64_t q = q0; q < q1; q++) dst[q * NR + j] = 0;
                    continue;
                }
                const uint16_t *col = b + j * bcs;
                for (int64_t q = q0; q < q1; q++) {
                    uint32_t w;
                    if (q < full) memcpy(&w, col + 2 * q, 4);
                    else w = col[k - 1];
                    dst[q * NR + j] = w;
                }
            }
        }
        return;
    }
    for (int64_t j = 0; j < NR; j++) {
        if (j >= cols) {
            for (int64_t q = 0; q < kp; q++) dst[q * NR + j] = 0;
            continue;
        }
        const uint16_t *col = b + j * bcs;
        for (int64_t q = 0; q < kp; q++) dst[q * NR + j] = pair_at(col, k, q, brs);
    }
}

#define BF_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/* tile[MR][NR] = A panel @ B panel over kp pairs of K */
BF_TARGET static void ukernel(int64_t kp, const uint32_t *restrict a, const uint32_t *restrict b, float *restrict tile)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;
    __m512 c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    __m512 c20 = c00, c21 = c00, c22 = c00, c23 = c00;
    __m512 c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    __m512 c40 = c00, c41 = c00, c42 = c00, c43 = c00;
    __m512 c50 = c00, c51 = c00, c52 = c00, c53 = c00;
    for (int64_t q = 0; q < kp; q++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
        const __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + 32), b3 = (__m512bh)_mm512_loadu_si512(b + 48);
        __m512bh av;
#define BF_ROW(r)                                                  \
        av = (__m512bh)_mm512_set1_epi32((int)a[r]);               \
        c##r##0 = _mm512_dpbf16_ps(c##r##0, av, b0);               \
        c##r##1 = _mm512_dpbf16_ps(c##r##1, av, b1);               \
        c##r##2 = _mm512_dpbf16_ps(c##r##2, av, b2);               \
        c##r##3 = _mm512_dpbf16_ps(c##r##3, av, b3);
        BF_ROW(0) BF_ROW(1) BF_ROW(2) BF_ROW(3) BF_ROW(4) BF_ROW(5)
#undef BF_ROW
        a += MR;
        b += NR;
    }
#define BF_STORE(r)                                                \
    _mm512_storeu_ps(tile + r * NR, c##r##0);                      \
    _mm512_storeu_ps(tile + r * NR + 16, c##r##1);                 \
    _mm512_storeu_ps(tile + r * NR + 32, c##r##2);                 \
    _mm512_storeu_ps(tile + r * NR + 48, c##r##3);
    BF_STORE(0) BF_STORE(1) BF_STORE(2) BF_STORE(3) BF_STORE(4) BF_STORE(5)
#undef BF_STORE
}

/* C = alpha * tile + beta * C, rounded to bfloat16 */
BF_TARGET static inline __m512 bf16_load16(__mmask16 mask, const uint16_t *p)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, p)), 16));
}
BF_TARGET static inline void bf16_store16(__mmask16 mask, uint16_t *p, __m512 x)
{
    _mm256_mask_storeu_epi16(p, mask, (__m256i)_mm512_cvtneps_pbh(x));
}
PCT_GEMM_DEFINE_STORE(store_tile, BF_TARGET, uint16_t, bf16_load16, bf16_store16, pct_bf16_to_float, pct_float_to_bf16)

static const pct_gemm_kernel bf16_kernel = {2, 2, 2, 0, pack_a, pack_b, ukernel, store_tile, NULL};

/* The same product into a float32 C: the variant that accumulates (a weight gradient summed over
 * a batch, an input gradient's columns before col2im adds them up) without a rounding per call */
BF_TARGET static inline __m512 f32_load16(__mmask16 mask, const float *p) { return _mm512_maskz_loadu_ps(mask, p); }
BF_TARGET static inline void f32_store16(__mmask16 mask, float *p, __m512 x) { _mm512_mask_storeu_ps(p, mask, x); }
static inline float f32_same(float x) { return x; }
PCT_GEMM_DEFINE_STORE(store_tile_f32, BF_TARGET, float, f32_load16, f32_store16, f32_same, f32_same)

static const pct_gemm_kernel bf16_f32out_kernel = {2, 4, 2, 0, pack_a, pack_b, ukernel, store_tile_f32, NULL};
#endif /* PCT_LOWP_X86 */

/* One product on the kernel of `c_is_f32` ? the float32-output : the bfloat16-output variant. */
static int bf16_product(bool c_is_f32, int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero,
                        const uint16_t *a, int64_t ars, int64_t acs, const uint16_t *b, int64_t brs, int64_t bcs,
                        void *c, int64_t crs, int64_t ccs, int nt)
{
#ifdef PCT_LOWP_X86
    if (!pct_gemm_bf16_available() || m <= 0 || n <= 0 || k <= 0) return 1;
    const pct_gemm_problem p = {m, n, k, alpha, beta, beta_zero, (const char *)a, (const char *)b, (char *)c,
                                ars, acs, brs, bcs, crs, ccs, NULL};
    return pct_gemm_packed(c_is_f32 ? &bf16_f32out_kernel : &bf16_kernel, &p, nt);
#else
    (void)c_is_f32; (void)m; (void)n; (void)k; (void)alpha; (void)beta; (void)beta_zero; (void)a; (void)ars;
    (void)acs; (void)b; (void)brs; (void)bcs; (void)c; (void)crs; (void)ccs; (void)nt;
    return 1;
#endif
}

int pct_gemm_bf16_native(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero,
                         const uint16_t *a, int64_t ars, int64_t acs, const uint16_t *b, int64_t brs, int64_t bcs,
                         uint16_t *c, int64_t crs, int64_t ccs, int nt)
{
    return bf16_product(false, m, n, k, alpha, beta, beta_zero, a, ars, acs, b, brs, bcs, c, crs, ccs, nt);
}

int pct_gemm_bf16_f32out(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero,
                         const uint16_t *a, int64_t ars, int64_t acs, const uint16_t *b, int64_t brs, int64_t bcs,
                         float *c, int64_t crs, int64_t ccs, int nt)
{
    return bf16_product(true, m, n, k, alpha, beta, beta_zero, a, ars, acs, b, brs, bcs, c, crs, ccs, nt);
}

/* ---- conversions ---- */

#ifdef PCT_LOWP_X86
__attribute__((target("avx512f,avx512bw"))) static void row_to_f32_avx512(float *d, const uint16_t *s, int64_t n,
                                                                         bool half)
{
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + j));
        __m512 f = half ? _mm512_cvtph_ps(v) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
        _mm512_storeu_ps(d + j, f);
    }
    for (; j < n; j++) d[j] = half ? pct_half_to_float(s[j]) : pct_bf16_to_float(s[j]);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static void row_to_bf16_native(uint16_t *d,
                                                                                              const float *s,
                                                                                              int64_t n)
{
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) _mm256_storeu_si256((__m256i *)(d + j), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(s + j)));
    for (; j < n; j++) d[j] = pct_float_to_bf16(s[j]);
}

__attribute__((target("avx512f"))) static void row_to_half_avx512(uint16_t *d, const float *s, int64_t n)
{
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
        _mm256_storeu_si256((__m256i *)(d + j), _mm512_cvtps_ph(_mm512_loadu_ps(s + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; j < n; j++) d[j] = pct_float_to_half(s[j]);
}
#endif

static void row_to_f32(float *d, const uint16_t *s, int64_t n, int64_t cs, bool half)
{
#ifdef PCT_LOWP_X86
    if (cs == 1 && (features() & PCT_CPU_AVX512)) { row_to_f32_avx512(d, s, n, half); return; }
#endif
    for (int64_t j = 0; j < n; j++) d[j] = half ? pct_half_to_float(s[j * cs]) : pct_bf16_to_float(s[j * cs]);
}

static void row_from_f32(uint16_t *d, const float *s, int64_t n, int64_t cs, bool half)
{
#ifdef PCT_LOWP_X86
    if (cs == 1) {
        if (half && (features() & PCT_CPU_AVX512)) { row_to_half_avx512(d, s, n); return; }
        if (!half && (features() & PCT_CPU_AVX512_BF16)) { row_to_bf16_native(d, s, n); return; }
    }
#endif
    for (int64_t j = 0; j < n; j++) d[j * cs] = half ? pct_float_to_half(s[j]) : pct_float_to_bf16(s[j]);
}

/* The two conversion directions share one row loop, threaded above LOWP_GRAIN elements (no
 * parallel region at all below it: callers convert small rows inside their own regions):
 * widen: dst dense float32, src strided 16-bit; else dst strided 16-bit, src dense float32. */
static inline void convert_row(void *dst, const void *src, int64_t i, int64_t cols, int64_t rs, int64_t cs, bool half,
                               bool widen)
{
    if (widen) row_to_f32((float *)dst + i * cols, (const uint16_t *)src + i * rs, cols, cs, half);
    else row_from_f32((uint16_t *)dst + i * rs, (const float *)src + i * cols, cols, cs, half);
}

static void convert_rows(void *dst, const void *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int dtype,
                         int nt, bool widen)
{
    const bool half = dtype == PCT_FLOAT16;
    if (nt > 1 && rows > 1 && rows * cols > LOWP_GRAIN) {
LOWP_OMP(omp parallel for num_threads(nt) schedule(static))
        for (int64_t i = 0; i < rows; i++) convert_row(dst, src, i, cols, rs, cs, half, widen);
    } else {
        for (int64_t i = 0; i < rows; i++) convert_row(dst, src, i, cols, rs, cs, half, widen);
    }
}

void pct_lowp_to_f32(float *dst, const uint16_t *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int dtype,
                     int nt)
{
    convert_rows(dst, src, rows, cols, rs, cs, dtype, nt, true);
}

void pct_f32_to_lowp(uint16_t *dst, const float *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int dtype,
                     int nt)
{
    convert_rows(dst, src, rows, cols, rs, cs, dtype, nt, false);
}
