/* gemm_lowp.c: bfloat16 GEMM with AVX512-BF16, and the float16/bfloat16 <-> float32
 * conversions of the widening path (gemm_lowp.h).
 *
 * Note [bfloat16 GEMM]
 * vdpbf16ps multiplies 32 bfloat16 pairs and adds each pair's two products into one of 16
 * float32 lanes, so K is consumed two at a time. Both operands are packed once:
 *   A into panels of MR rows: for each pair q of K, the MR 32-bit words (A[i][2q], A[i][2q+1]),
 *     which the micro-kernel broadcasts;
 *   B into panels of NR columns: for each pair q, NR words (B[2q][j], B[2q+1][j]), four
 *     zmm registers of 16 columns;
 * an odd K and the ragged edges are padded with zeros. The MR x NR = 6 x 64 micro-kernel
 * keeps 24 float32 accumulators over all of K (no C round trips: one rounding to
 * bfloat16 at the end, as torch's oneDNN path does), reading its B panel from L2 and its A
 * panel from L1; 1.5 KB of results go out through an L1 buffer that the epilogue scales, adds
 * beta * C to and rounds. Threads take blocks of tiles one at a time (see run_blocks; results
 * do not depend on the thread count). Runtime dispatch: the kernel is
 * compiled with target attributes and used only when the CPU reports AVX512-BF16
 * (never -march=native); elsewhere blas.c widens to float32 around sgemm.
 * PYCTORCH_NO_BF16_GEMM=1 forces the widening path (tests use it). */
#include "gemm_lowp.h"
#include "../dtype.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PCT_NO_AVX512)
#define PCT_LOWP_X86 1
#include <immintrin.h>
#endif

#define MR 6
#define NR 64
#define LOWP_GRAIN 32768

#ifdef _OPENMP
#define LOWP_OMP(x) _Pragma(#x)
#else
#define LOWP_OMP(x)
#endif

/* ---- CPU features ---- */

static int cpu_flags = -1; /* bit 0: AVX-512 F/BW/VL, bit 1: AVX512-BF16 (benign race: same value) */

static int features(void)
{
    int f = cpu_flags;
    if (f >= 0) return f;
    f = 0;
#ifdef PCT_LOWP_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
        f |= 1;
        const char *off = getenv("PYCTORCH_NO_BF16_GEMM");
        if (__builtin_cpu_supports("avx512bf16") && !(off && *off && strcmp(off, "0") != 0)) f |= 2;
    }
#endif
    cpu_flags = f;
    return f;
}

bool pct_gemm_bf16_available(void) { return (features() & 2) != 0; }

#ifdef PCT_LOWP_X86 /* packing and the kernel: x86-64 builds with AVX-512 code only */

/* ---- packing ---- */

/* Note [Packing buffers]
 * The packed copies of A and B live in per-thread buffers that are kept between calls (up to
 * KEEP_BYTES each; larger ones are freed after the call): a fresh allocation of megabytes is a
 * fresh mmap whose page faults cost as much as the packing itself. */
#define KEEP_BYTES ((size_t)16 << 20)
typedef struct pack_bufs { void *ptr[2]; size_t cap[2]; } pack_bufs;
static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;
static int bufs_key_ok;

static void bufs_free(void *p)
{
    pack_bufs *b = p;
    free(b->ptr[0]);
    free(b->ptr[1]);
    free(b);
}
static void bufs_init(void) { bufs_key_ok = pthread_key_create(&bufs_key, bufs_free) == 0; }

/* The calling thread's buffer `which` (0: A, 1: B) of at least `bytes`, or NULL. */
static void *pack_buffer(int which, size_t bytes)
{
    pthread_once(&bufs_once, bufs_init);
    if (!bufs_key_ok) return NULL;
    pack_bufs *b = pthread_getspecific(bufs_key);
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) return NULL;
        if (pthread_setspecific(bufs_key, b) != 0) { free(b); return NULL; }
    }
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes == 0) bytes = 64;
    if (b->cap[which] < bytes) {
        free(b->ptr[which]);
        b->ptr[which] = aligned_alloc(64, bytes);
        b->cap[which] = b->ptr[which] ? bytes : 0;
    }
    return b->ptr[which];
}

/* Buffers above KEEP_BYTES are not kept. */
static void release_buffers(void)
{
    pack_bufs *b = bufs_key_ok ? pthread_getspecific(bufs_key) : NULL;
    for (int i = 0; b && i < 2; i++)
        if (b->cap[i] > KEEP_BYTES) {
            free(b->ptr[i]);
            b->ptr[i] = NULL;
            b->cap[i] = 0;
        }
}

static inline uint32_t pair_at(const uint16_t *p, int64_t k, int64_t q, int64_t stride)
{
    uint32_t lo = p[2 * q * stride];
    uint32_t hi = 2 * q + 1 < k ? p[(2 * q + 1) * stride] : 0;
    return lo | hi << 16;
}

/* rows (<= MR) rows of A, all of K, as one MR-row panel */
static void pack_a(uint32_t *restrict dst, const uint16_t *a, int64_t rows, int64_t k, int64_t ars, int64_t acs)
{
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

/* Full 16 x 16 word blocks of the transposed-B panel: dst[q * NR + j] = word q of column j, for
 * the first (full / 16) * 16 pairs; returns how many pairs it did. */
__attribute__((target("avx512f"))) static int64_t pack_bt_avx512(uint32_t *restrict dst, const uint16_t *b,
                                                                 int64_t full, int64_t bcs)
{
    const int64_t done = full / 16 * 16;
    for (int64_t q0 = 0; q0 < done; q0 += 16)
        for (int64_t j0 = 0; j0 < NR; j0 += 16) {
            __m512i r[16], t[16];
            for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_si512(b + (j0 + i) * bcs + 2 * q0);
            /* 16 x 16 transpose of 32-bit words: 32-bit, 64-bit, then 128-bit lane interleaves */
            for (int i = 0; i < 16; i += 2) {
                t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
                t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
            }
            for (int i = 0; i < 16; i += 4) {
                r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
                r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
                r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
                r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
            }
            for (int i = 0; i < 4; i++) {
                t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88);
                t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xdd);
                t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88);
                t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xdd);
            }
            for (int i = 0; i < 4; i++) {
                r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
                r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xdd);
                r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
                r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xdd);
            }
            for (int i = 0; i < 16; i++) _mm512_storeu_si512(dst + (q0 + i) * NR + j0, r[i]);
        }
    return done;
}

/* cols (<= NR) columns of B, all of K, as one NR-column panel */
static void pack_b(uint32_t *restrict dst, const uint16_t *b, int64_t cols, int64_t k, int64_t brs, int64_t bcs)
{
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
        if (cols == NR && (features() & 1)) q0 = pack_bt_avx512(dst, b, full, bcs);
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

/* C(rows, cols) = alpha * tile + beta * C, rounded to bfloat16 */
BF_TARGET static void store_tile(const float *tile, int64_t rows, int64_t cols, float alpha, float beta,
                                 bool beta_zero, uint16_t *c, int64_t crs, int64_t ccs)
{
    if (ccs != 1) {
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < cols; j++) {
                uint16_t *p = c + r * crs + j * ccs;
                float v = alpha * tile[r * NR + j];
                if (!beta_zero) v += beta * pct_bf16_to_float(*p);
                *p = pct_float_to_bf16(v);
            }
        return;
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int64_t r = 0; r < rows; r++) {
        uint16_t *crow = c + r * crs;
        for (int64_t j0 = 0; j0 < cols; j0 += 16) {
            const __mmask16 mask = cols - j0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (cols - j0)) - 1);
            __m512 x = _mm512_loadu_ps(tile + r * NR + j0);
            if (alpha != 1.0f) x = _mm512_mul_ps(x, va);
            if (!beta_zero) {
                __m256i old = _mm256_maskz_loadu_epi16(mask, crow + j0);
                __m512 of = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(old), 16));
                x = _mm512_fmadd_ps(of, vb, x);
            }
            __m256bh h = _mm512_cvtneps_pbh(x);
            _mm256_mask_storeu_epi16(crow + j0, mask, (__m256i)h);
        }
    }
}

/* Blocking (Note [bfloat16 GEMM]): work goes by blocks of MC_PANELS row panels by NC_PANELS
 * column panels (their A and B panels fit in L2 together), column panel outermost inside a block
 * so one B panel serves all the block's row panels. The micro-kernel runs over all of K: on Zen 5
 * slicing K so a B panel's slice stays in L1 (64..256 pairs, partial sums in an L2 workspace)
 * measured 5-15% slower than streaming whole panels from L2. */
#define MC_PANELS 16
#define NC_PANELS 8

typedef struct bf_job {
    int64_t m, n, kp, mp, np;
    const uint32_t *ap, *bp;
    float alpha, beta;
    bool beta_zero;
    uint16_t *c;
    int64_t crs, ccs;
} bf_job;

/* blocks [b0, b1) (column blocks outermost) */
static void run_blocks(const bf_job *J, int64_t b0, int64_t b1)
{
    float tile[MR * NR] __attribute__((aligned(64)));
    const int64_t mblocks = (J->mp + MC_PANELS - 1) / MC_PANELS;
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t jb = blk / mblocks, ib = blk % mblocks;
        const int64_t jp0 = jb * NC_PANELS, jp1 = jp0 + NC_PANELS < J->np ? jp0 + NC_PANELS : J->np;
        const int64_t ip0 = ib * MC_PANELS, ip1 = ip0 + MC_PANELS < J->mp ? ip0 + MC_PANELS : J->mp;
        for (int64_t jp = jp0; jp < jp1; jp++)
            for (int64_t ip = ip0; ip < ip1; ip++) {
                const int64_t i0 = ip * MR, j0 = jp * NR;
                ukernel(J->kp, J->ap + ip * MR * J->kp, J->bp + jp * NR * J->kp, tile);
                store_tile(tile, J->m - i0 < MR ? J->m - i0 : MR, J->n - j0 < NR ? J->n - j0 : NR, J->alpha, J->beta,
                           J->beta_zero, J->c + i0 * J->crs + j0 * J->ccs, J->crs, J->ccs);
            }
    }
}
#endif /* PCT_LOWP_X86 */

int pct_gemm_bf16_native(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero,
                         const uint16_t *a, int64_t ars, int64_t acs, const uint16_t *b, int64_t brs, int64_t bcs,
                         uint16_t *c, int64_t crs, int64_t ccs, int nt)
{
#ifdef PCT_LOWP_X86
    if (!(features() & 2) || m <= 0 || n <= 0 || k <= 0) return 1;
    const int64_t kp = (k + 1) / 2, mp = (m + MR - 1) / MR, np = (n + NR - 1) / NR;
    uint32_t *ap = pack_buffer(0, (size_t)(mp * MR * kp * 4)), *bp = pack_buffer(1, (size_t)(np * NR * kp * 4));
    if (!ap || !bp) return -1;
    const bf_job J = {m, n, kp, mp, np, ap, bp, alpha, beta, beta_zero, c, crs, ccs};
    const int64_t blocks = ((mp + MC_PANELS - 1) / MC_PANELS) * ((np + NC_PANELS - 1) / NC_PANELS);
    if (nt > 1 && m * n * k > LOWP_GRAIN * 8) {
LOWP_OMP(omp parallel num_threads(nt))
        {
LOWP_OMP(omp for schedule(dynamic, 8))
            for (int64_t ip = 0; ip < mp; ip++)
                pack_a(ap + ip * MR * kp, a + ip * MR * ars, m - ip * MR < MR ? m - ip * MR : MR, k, ars, acs);
LOWP_OMP(omp for schedule(dynamic, 2))
            for (int64_t jp = 0; jp < np; jp++)
                pack_b(bp + jp * NR * kp, b + jp * NR * bcs, n - jp * NR < NR ? n - jp * NR : NR, k, brs, bcs);
            /* blocks handed out one at a time: a thread the OS preempts (cores shared with other
             * processes) delays one block, not a fixed share of the product */
LOWP_OMP(omp for schedule(dynamic, 1))
            for (int64_t blk = 0; blk < blocks; blk++) run_blocks(&J, blk, blk + 1);
        }
    } else {
        for (int64_t ip = 0; ip < mp; ip++)
            pack_a(ap + ip * MR * kp, a + ip * MR * ars, m - ip * MR < MR ? m - ip * MR : MR, k, ars, acs);
        for (int64_t jp = 0; jp < np; jp++)
            pack_b(bp + jp * NR * kp, b + jp * NR * bcs, n - jp * NR < NR ? n - jp * NR : NR, k, brs, bcs);
        run_blocks(&J, 0, blocks);
    }
    release_buffers();
    return 0;
#else
    (void)m; (void)n; (void)k; (void)alpha; (void)beta; (void)beta_zero; (void)a; (void)ars; (void)acs;
    (void)b; (void)brs; (void)bcs; (void)c; (void)crs; (void)ccs; (void)nt;
    return 1;
#endif
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
    if (cs == 1 && (features() & 1)) { row_to_f32_avx512(d, s, n, half); return; }
#endif
    for (int64_t j = 0; j < n; j++) d[j] = half ? pct_half_to_float(s[j * cs]) : pct_bf16_to_float(s[j * cs]);
}

static void row_from_f32(uint16_t *d, const float *s, int64_t n, int64_t cs, bool half)
{
#ifdef PCT_LOWP_X86
    if (cs == 1) {
        if (half && (features() & 1)) { row_to_half_avx512(d, s, n); return; }
        if (!half && (features() & 2)) { row_to_bf16_native(d, s, n); return; }
    }
#endif
    for (int64_t j = 0; j < n; j++) d[j * cs] = half ? pct_float_to_half(s[j]) : pct_float_to_bf16(s[j]);
}

void pct_lowp_to_f32(float *dst, const uint16_t *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int dtype,
                     int nt)
{
    const bool half = dtype == PCT_FLOAT16;
    if (nt > 1 && rows > 1 && rows * cols > LOWP_GRAIN) {
LOWP_OMP(omp parallel for num_threads(nt) schedule(static))
        for (int64_t i = 0; i < rows; i++) row_to_f32(dst + i * cols, src + i * rs, cols, cs, half);
    } else {
        for (int64_t i = 0; i < rows; i++) row_to_f32(dst + i * cols, src + i * rs, cols, cs, half);
    }
}

void pct_f32_to_lowp(uint16_t *dst, const float *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int dtype,
                     int nt)
{
    const bool half = dtype == PCT_FLOAT16;
    if (nt > 1 && rows > 1 && rows * cols > LOWP_GRAIN) {
LOWP_OMP(omp parallel for num_threads(nt) schedule(static))
        for (int64_t i = 0; i < rows; i++) row_from_f32(dst + i * rs, src + i * cols, cols, cs, half);
    } else {
        for (int64_t i = 0; i < rows; i++) row_from_f32(dst + i * rs, src + i * cols, cols, cs, half);
    }
}
