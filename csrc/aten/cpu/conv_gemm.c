/* conv_gemm.c: the float32 GEMM of the convolution kernels on CPUs with AVX-512.
 *
 * Note [Convolution GEMM]
 * The products of a convolution are narrow in one dimension (16..512 output channels) and
 * called once per sample and column block, the shape where a general BLAS pays most for its
 * generality; and the OpenBLAS a distribution ships may run older kernels than the CPU has
 * (Debian's 0.3.21 picks its AVX2 kernels on AMD Zen 4/5, and OPENBLAS_CORETYPE may pin them).
 * So float32 convolutions on AVX-512 CPUs use this single-threaded GEMM in the usual BLIS
 * structure: B is packed in NC x KC blocks of NR-column panels (kept in L2, each panel in
 * L1 while it is used), A in MC x KC blocks of MR-row panels, and a 14 x 32 micro-kernel
 * keeps 28 zmm accumulators and issues two FMAs per broadcast A element. Edges are zero-padded
 * in the packs and written back with masked stores. Packing reads any strides, so transposed
 * operands (W^T for the input gradient, col^T for the weight gradient) cost nothing extra. The
 * caller threads it (over samples, or over column ranges) and provides the packing buffers.
 * Elsewhere (other CPUs, other dtypes, PCT_NO_AVX512 builds) the convolution uses pct_gemm. */
#include "conv.h"
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
#define CG_AVX512 1
#include <immintrin.h>
#endif

#define CG_MR 14
#define CG_NR 32
#define CG_KC 256
#define CG_MC (CG_MR * 10)
#define CG_NC 512

int64_t pct_conv_sgemm_work(void)
{
    return (int64_t)CG_MC * CG_KC + (int64_t)CG_KC * CG_NC + 64;
}

int64_t pct_conv_sgemm_apack_size(int64_t m, int64_t k)
{
    return (m + CG_MR - 1) / CG_MR * CG_MR * k;
}

#ifdef CG_AVX512
#define CG_TARGET __attribute__((target("avx512f,fma")))

bool pct_conv_sgemm_available(void)
{
    static int state; /* 0 unknown, 1 yes, 2 no (a benign race stores the same value) */
    int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (!s) {
        /* PYCTORCH_NO_AVX512=1 at run time selects the portable paths (tests use it) */
        const char *off = getenv("PYCTORCH_NO_AVX512");
        __builtin_cpu_init();
        s = __builtin_cpu_supports("avx512f") && !(off && *off && strcmp(off, "0") != 0) ? 1 : 2;
        __atomic_store_n(&state, s, __ATOMIC_RELAXED);
    }
    return s == 1;
}

/* c[mr x nr] (row stride ldc) = (acc ? c : 0) + the product of one A panel (kc x MR, packed
 * column by column) and one B panel (kc x NR, packed row by row) */
CG_TARGET static void ukr_14x32(int64_t kc, const float *restrict a, const float *restrict b, float *c, int64_t ldc,
                                int mr, int nr, bool acc)
{
    __m512 c0[CG_MR], c1[CG_MR];
    for (int i = 0; i < CG_MR; i++) {
        c0[i] = _mm512_setzero_ps();
        c1[i] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < kc; p++) {
        const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        for (int i = 0; i < CG_MR; i++) {
            const __m512 ai = _mm512_set1_ps(a[i]);
            c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
            c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
        }
        a += CG_MR;
        b += CG_NR;
    }
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : nr <= 16 ? (__mmask16)0 : (__mmask16)((1u << (nr - 16)) - 1u);
    for (int i = 0; i < mr; i++) {
        float *cr = c + i * ldc;
        if (acc) {
            c0[i] = _mm512_add_ps(c0[i], _mm512_maskz_loadu_ps(m0, cr));
            c1[i] = _mm512_add_ps(c1[i], _mm512_maskz_loadu_ps(m1, cr + 16));
        }
        _mm512_mask_storeu_ps(cr, m0, c0[i]);
        _mm512_mask_storeu_ps(cr + 16, m1, c1[i]);
    }
}

/* B[pc:pc+kc, jc:jc+nc] of a strided matrix -> NR-column panels, zero-padded to a multiple of NR */
CG_TARGET static void pack_b(float *dst, const float *b, int64_t brs, int64_t bcs, int64_t pc, int64_t kc, int64_t jc,
                             int64_t nc)
{
    for (int64_t j0 = 0; j0 < nc; j0 += CG_NR, dst += kc * CG_NR) {
        const int64_t nr = nc - j0 < CG_NR ? nc - j0 : CG_NR;
        const float *src = b + pc * brs + (jc + j0) * bcs;
        if (bcs == 1) {
            for (int64_t p = 0; p < kc; p++) {
                float *d = dst + p * CG_NR;
                const float *sp = src + p * brs;
                for (int64_t j = 0; j < nr; j++) d[j] = sp[j];
                for (int64_t j = nr; j < CG_NR; j++) d[j] = 0.0f;
            }
        } else {  /* columns are rows of the stored matrix: read each contiguously */
            for (int64_t j = 0; j < nr; j++)
                for (int64_t p = 0; p < kc; p++) dst[p * CG_NR + j] = src[j * bcs + p * brs];
            for (int64_t j = nr; j < CG_NR; j++)
                for (int64_t p = 0; p < kc; p++) dst[p * CG_NR + j] = 0.0f;
        }
    }
}

/* Up to 32 floats with masked AVX-512 moves (masked-off lanes never fault). */
CG_TARGET static inline void copy32(float *d, const float *src, int64_t cnt)
{
    if (cnt >= 16) {
        _mm512_storeu_ps(d, _mm512_loadu_ps(src));
        d += 16;
        src += 16;
        cnt -= 16;
    }
    const __mmask16 m = (__mmask16)((1u << cnt) - 1u);
    _mm512_mask_storeu_ps(d, m, _mm512_maskz_loadu_ps(m, src));
}

CG_TARGET static inline void gather32(float *d, const float *src, int64_t cnt, __m512i idx, int64_t step)
{
    while (cnt > 0) {
        const int64_t c = cnt < 16 ? cnt : 16;
        const __mmask16 m = (__mmask16)((1u << c) - 1u);
        _mm512_mask_storeu_ps(d, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, src, 4));
        d += 16;
        src += 16 * step;
        cnt -= c;
    }
}

CG_TARGET static inline void zero32(float *d, int64_t cnt)
{
    const __m512 z = _mm512_setzero_ps();
    if (cnt >= 16) {
        _mm512_storeu_ps(d, z);
        d += 16;
        cnt -= 16;
    }
    _mm512_mask_storeu_ps(d, (__mmask16)((1u << cnt) - 1u), z);
}

/* Writers of one packed row: columns [j, j + len) of row p live in panels kcnr floats apart. */
CG_TARGET static inline void put_zero(float *drow, int64_t kcnr, int64_t j, int64_t len)
{
    while (len > 0) {
        const int64_t lane = j % CG_NR, cnt = len < CG_NR - lane ? len : CG_NR - lane;
        zero32(drow + (j / CG_NR) * kcnr + lane, cnt);
        j += cnt;
        len -= cnt;
    }
}

CG_TARGET static inline void put_copy(float *drow, int64_t kcnr, int64_t j, int64_t len, const float *src, int64_t sw,
                                      __m512i idx)
{
    while (len > 0) {
        const int64_t lane = j % CG_NR, cnt = len < CG_NR - lane ? len : CG_NR - lane;
        float *d = drow + (j / CG_NR) * kcnr + lane;
        if (sw == 1) copy32(d, src, cnt);
        else gather32(d, src, cnt, idx, sw);
        src += cnt * sw;
        j += cnt;
        len -= cnt;
    }
}

/* The small rows (od, oh) a block of columns meets, with what packing needs of each. */
typedef struct cg_row {
    int64_t dbase, hbase;   /* od * sd - pd, oh * sh - ph */
    int64_t a, b, rel;      /* columns [a, b) of this row are in the block; column ow is block column rel + ow */
} cg_row;
#define CG_ROWS 64

/* Rows [pc, pc + kc) of a block of B = im2col(big), built straight from big (Note [Convolution
 * GEMM]), for the columns of the given small rows: row p of B is (channel, kernel tap), block
 * column j is small position s->j0 + jc + j. nc > 0: the block's width, whose padding lanes
 * up to the panel edge this call zeroes. */
CG_TARGET static void pack_b_im2col_rows(float *dst, const pct_conv_bsrc *s, int64_t pc, int64_t kc, int64_t nc,
                                         const cg_row *rows, int64_t nrows)
{
    const pct_im2col_geom *g = s->geo;
    const int64_t KH = g->kernel[1], KW = g->kernel[2], kvol = g->kernel[0] * KH * KW;
    const int64_t D = g->big[0], H = g->big[1], W = g->big[2], bvol = D * H * W;
    const int64_t OW = g->small[2], sw = g->stride[2];
    const int64_t kcnr = kc * CG_NR, npan = nc > 0 ? (nc + CG_NR - 1) / CG_NR : 0;
    const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32((int)sw));
    for (int64_t p = 0; p < kc; p++) {
        const int64_t row = pc + p, c = row / kvol, k = row % kvol;
        const int64_t kd = k / (KH * KW), kh = (k / KW) % KH, kw = k % KW;
        const int64_t off = kw * g->dil[2] - g->pad[2], dd = kd * g->dil[0], dh = kh * g->dil[1];
        int64_t vlo, vhi;
        pct_conv_valid_range(W, OW, sw, off, &vlo, &vhi);
        const float *plane = s->big + c * bvol;
        float *drow = dst + p * CG_NR;
        for (int64_t r = 0; r < nrows; r++) {
            const cg_row *e = &rows[r];
            const int64_t id = e->dbase + dd, ih = e->hbase + dh, a = e->a, b = e->b;
            if (id < 0 || id >= D || ih < 0 || ih >= H) {
                put_zero(drow, kcnr, e->rel + a, b - a);
                continue;
            }
            const int64_t l = vlo < a ? a : vlo > b ? b : vlo;
            const int64_t h = vhi < l ? l : vhi > b ? b : vhi;
            if (l > a) put_zero(drow, kcnr, e->rel + a, l - a);
            if (h > l) put_copy(drow, kcnr, e->rel + l, h - l, plane + (id * H + ih) * W + l * sw + off, sw, idx);
            if (b > h) put_zero(drow, kcnr, e->rel + h, b - h);
        }
        if (nc > 0 && npan * CG_NR > nc) put_zero(drow, kcnr, nc, npan * CG_NR - nc);
    }
}

static void pack_b_im2col(float *dst, const pct_conv_bsrc *s, int64_t pc, int64_t kc, int64_t jc, int64_t nc)
{
    const pct_im2col_geom *g = s->geo;
    const int64_t OH = g->small[1], OW = g->small[2];
    const int64_t J0 = s->j0 + jc, J1 = J0 + nc, rfirst = J0 / OW, rlast = (J1 - 1) / OW;
    cg_row rows[CG_ROWS];
    /* blocks of at most CG_ROWS small rows (a block of many short rows: very narrow images) */
    for (int64_t r0 = rfirst; r0 <= rlast; r0 += CG_ROWS) {
        const int64_t r1 = r0 + CG_ROWS - 1 < rlast ? r0 + CG_ROWS - 1 : rlast;
        for (int64_t r = r0; r <= r1; r++) {
            cg_row *e = &rows[r - r0];
            const int64_t od = r / OH, oh = r % OH;
            e->dbase = od * g->stride[0] - g->pad[0];
            e->hbase = oh * g->stride[1] - g->pad[1];
            e->a = r == rfirst ? J0 - r * OW : 0;
            e->b = r == rlast ? J1 - r * OW : OW;
            e->rel = r * OW - J0;
        }
        pack_b_im2col_rows(dst, s, pc, kc, r1 == rlast ? nc : 0, rows, r1 - r0 + 1);
    }
}

/* A[ic:ic+mc, pc:pc+kc] -> MR-row panels, zero-padded to a multiple of MR */
CG_TARGET static void pack_a(float *dst, const float *a, int64_t ars, int64_t acs, int64_t ic, int64_t mc, int64_t pc,
                             int64_t kc)
{
    for (int64_t i0 = 0; i0 < mc; i0 += CG_MR, dst += kc * CG_MR) {
        const int64_t mr = mc - i0 < CG_MR ? mc - i0 : CG_MR;
        const float *src = a + (ic + i0) * ars + pc * acs;
        if (ars == 1) {
            for (int64_t p = 0; p < kc; p++) {
                float *d = dst + p * CG_MR;
                const float *sp = src + p * acs;
                for (int64_t i = 0; i < mr; i++) d[i] = sp[i];
                for (int64_t i = mr; i < CG_MR; i++) d[i] = 0.0f;
            }
        } else {
            for (int64_t i = 0; i < mr; i++)
                for (int64_t p = 0; p < kc; p++) dst[p * CG_MR + i] = src[i * ars + p * acs];
            for (int64_t i = mr; i < CG_MR; i++)
                for (int64_t p = 0; p < kc; p++) dst[p * CG_MR + i] = 0.0f;
        }
    }
}

/* The whole of A, packed once for many products (the weight of a convolution): KC-deep
 * slices one after another, each all of A's MR-row panels. */
void pct_conv_sgemm_pack_a(int64_t m, int64_t k, const float *a, int64_t ars, int64_t acs, float *dst)
{
    const int64_t mpad = (m + CG_MR - 1) / CG_MR * CG_MR;
    for (int64_t pc = 0; pc < k; pc += CG_KC) {
        const int64_t kc = k - pc < CG_KC ? k - pc : CG_KC;
        pack_a(dst + pc * mpad, a, ars, acs, 0, m, pc, kc);
    }
}

void pct_conv_sgemm(int64_t m, int64_t n, int64_t k, const float *apacked, const float *a, int64_t ars, int64_t acs,
                    const pct_conv_bsrc *bs, bool accumulate, float *c, int64_t ldc, float *work)
{
    float *ap = work, *bp = work + (int64_t)CG_MC * CG_KC;
    const int64_t mpad = (m + CG_MR - 1) / CG_MR * CG_MR;
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, sizeof(float) * (size_t)n);
        return;
    }
    for (int64_t jc = 0; jc < n; jc += CG_NC) {
        const int64_t nc = n - jc < CG_NC ? n - jc : CG_NC;
        for (int64_t pc = 0; pc < k; pc += CG_KC) {
            const int64_t kc = k - pc < CG_KC ? k - pc : CG_KC;
            const bool acc = accumulate || pc > 0;
            if (bs->geo) pack_b_im2col(bp, bs, pc, kc, jc, nc);
            else pack_b(bp, bs->b, bs->brs, bs->bcs, pc, kc, jc, nc);
            for (int64_t ic = 0; ic < m; ic += CG_MC) {
                const int64_t mc = m - ic < CG_MC ? m - ic : CG_MC;
                const float *apanels;
                if (apacked) {
                    apanels = apacked + pc * mpad + ic * kc;
                } else {
                    pack_a(ap, a, ars, acs, ic, mc, pc, kc);
                    apanels = ap;
                }
                for (int64_t j0 = 0; j0 < nc; j0 += CG_NR) {
                    const int nr = (int)(nc - j0 < CG_NR ? nc - j0 : CG_NR);
                    const float *bpanel = bp + (j0 / CG_NR) * kc * CG_NR;
                    for (int64_t i0 = 0; i0 < mc; i0 += CG_MR) {
                        const int mr = (int)(mc - i0 < CG_MR ? mc - i0 : CG_MR);
                        ukr_14x32(kc, apanels + (i0 / CG_MR) * kc * CG_MR, bpanel, c + (ic + i0) * ldc + jc + j0, ldc,
                                  mr, nr, acc);
                    }
                }
            }
        }
    }
}

#else /* no AVX-512 in this build: the convolution uses pct_gemm */

bool pct_conv_sgemm_available(void) { return false; }

void pct_conv_sgemm_pack_a(int64_t m, int64_t k, const float *a, int64_t ars, int64_t acs, float *dst)
{
    (void)m; (void)k; (void)a; (void)ars; (void)acs; (void)dst;
}

void pct_conv_sgemm(int64_t m, int64_t n, int64_t k, const float *apacked, const float *a, int64_t ars, int64_t acs,
                    const pct_conv_bsrc *bs, bool accumulate, float *c, int64_t ldc, float *work)
{
    (void)m; (void)n; (void)k; (void)apacked; (void)a; (void)ars; (void)acs; (void)bs; (void)accumulate; (void)c;
    (void)ldc; (void)work;
}

#endif
