/* conv_gemm.c: convolution products on the packed float32 GEMM driver (gemm_packed.h,
 * gemm_f32.c) for CPUs with AVX-512.
 *
 * Note [Convolution GEMM]
 * A convolution's forward over a whole batch is one product
 *     C[o, (n, pos)] = W[o, K] @ im2col(big)[K, (n, pos)]   (+ bias[o])
 * whose columns run over every output position of every sample. Done as one product, the
 * driver's blocks share work between threads evenly whatever the batch size, the weight (A)
 * is read in place once for all samples, and ragged edges are paid once per batch, not once
 * per sample (a 14x14 layer has 196 positions: 4 panels of 64 columns per sample, 23%
 * padding, but 25 panels for a batch of 8). Neither operand is a strided matrix, so the
 * driver's hooks build B's panels straight from the big tensor (im2col while packing: no
 * column buffer) and write C's tiles into the NCHW output, adding the bias on the way.
 * The input gradient of a 1x1 convolution (stride 1, no padding) is the same product with
 * A = W^T and B the small tensor. The order of every sum is the driver's, so results do not
 * depend on the thread count. */
#include "conv.h"
#include "gemm_f32.h"
#include "gemm_packed.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NR PCT_GEMM_NR
#define CHUNK_BYTES ((int64_t)8 << 20)

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
#define CG_AVX512 1
#include <immintrin.h>
#endif

bool pct_conv_sgemm_available(void)
{
    static int state; /* 0 unknown, 1 yes, 2 no (a benign race stores the same value) */
    int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (!s) {
        /* PYCTORCH_NO_AVX512=1 at run time selects the portable paths (tests use it) */
        const char *off = getenv("PYCTORCH_NO_AVX512");
        s = pct_gemm_f32_available() && !(off && *off && strcmp(off, "0") != 0) ? 1 : 2;
        __atomic_store_n(&state, s, __ATOMIC_RELAXED);
    }
#ifdef CG_AVX512
    return s == 1;
#else
    return false;
#endif
}

#ifdef CG_AVX512
#define CG_TARGET __attribute__((target("avx512f")))

/* One batch product (Note [Convolution GEMM]): B's column (n, pos) and C's are position pos
 * of sample n; row k of B is channel k of src (plain) or im2col row k of src (im2col). */
typedef struct nchw_ctx {
    const pct_conv_plan *p;
    bool im2col;
    int64_t vol;                      /* positions per sample (columns of one sample) */
    int64_t col0;                     /* the product's column 0 is batch column col0 */
    const float *src;                 /* B's source, group offset applied */
    int64_t src_n;                    /* floats from one sample to the next in src */
    int64_t src_plane;                /* floats per channel plane of src */
    float *dst;                       /* C, group offset applied */
    int64_t dst_n;
    const float *bias;                /* per row of C, or NULL */
    const int32_t *taps;              /* Note [Tap table]: [kvol][vol] offsets into a plane, -1 padding; or NULL */
    const int32_t *kmap;              /* Note [Live taps]: product row -> im2col row, or NULL (the same) */
    const float *w;                   /* the group's weight [cs][K] (B = W^T of the transposed product) */
    const float *rows;                /* the transposed product's A, built whole: [product row][ld], or NULL */
    int64_t rows_ld;
} nchw_ctx;

static inline __mmask16 lanes(int64_t cnt) { return cnt >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cnt) - 1u); }

/* cnt floats (any count) with masked 16-lane moves (masked-off lanes never fault) */
CG_TARGET static inline void copy_n(float *d, const float *s, int64_t cnt)
{
    for (int64_t i = 0; i < cnt; i += 16) {
        const __mmask16 m = lanes(cnt - i);
        _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
}

/* cnt floats s[0], s[step], ... */
CG_TARGET static inline void gather_n(float *d, const float *s, int64_t cnt, int64_t step)
{
    const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32((int)step));
    for (int64_t i = 0; i < cnt; i += 16) {
        const __mmask16 m = lanes(cnt - i);
        _mm512_mask_storeu_ps(d + i, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, s + i * step, 4));
    }
}

CG_TARGET static inline void zero_n(float *d, int64_t cnt)
{
    for (int64_t i = 0; i < cnt; i += 16) _mm512_mask_storeu_ps(d + i, lanes(cnt - i), _mm512_setzero_ps());
}

/* Lanes [lane, lane + len) of the panel rows [0, k) (width lanes each: NR for a B panel, MR for an
 * A panel of the transposed product) hold positions [pos0, pos0 + len) of one sample's im2col rows
 * [k0, k0 + k); plane: the sample's first big channel (of the group). */
CG_TARGET static void im2col_segment(const pct_conv_plan *p, float *dst, int64_t width, int64_t lane, const float *plane,
                                     int64_t pos0, int64_t len, int64_t k0, int64_t k)
{
    const pct_im2col_geom *g = &p->geo;
    const int64_t KH = g->kernel[1], KW = g->kernel[2], kvol = p->kvol;
    const int64_t D = g->big[0], H = g->big[1], W = g->big[2], bvol = p->bvol;
    const int64_t OH = g->small[1], OW = g->small[2], sw = g->stride[2];
    const int64_t rfirst = pos0 / OW, rlast = (pos0 + len - 1) / OW;
    for (int64_t q = 0; q < k; q++) {
        const int64_t row = k0 + q, c = row / kvol, t = row % kvol;
        const int64_t kd = t / (KH * KW), kh = (t / KW) % KH, kw = t % KW;
        const int64_t off = kw * g->dil[2] - g->pad[2], dd = kd * g->dil[0], dh = kh * g->dil[1];
        int64_t vlo, vhi;
        pct_conv_valid_range(W, OW, sw, off, &vlo, &vhi);
        const float *src = plane + c * bvol;
        float *drow = dst + q * width + lane - pos0; /* position pos goes to drow[pos] */
        for (int64_t r = rfirst; r <= rlast; r++) {
            const int64_t od = r / OH, oh = r % OH;
            const int64_t id = od * g->stride[0] - g->pad[0] + dd, ih = oh * g->stride[1] - g->pad[1] + dh;
            /* columns [a, b) of this small row are in the segment */
            const int64_t a = r == rfirst ? pos0 - r * OW : 0, b = r == rlast ? pos0 + len - r * OW : OW;
            float *d = drow + r * OW;
            if (id < 0 || id >= D || ih < 0 || ih >= H) {
                zero_n(d + a, b - a);
                continue;
            }
            const int64_t l = vlo < a ? a : vlo > b ? b : vlo, h = vhi < l ? l : vhi > b ? b : vhi;
            const float *s = src + (id * H + ih) * W + off;
            if (l > a) zero_n(d + a, l - a);
            if (h > l) {
                if (sw == 1) copy_n(d + l, s + l, h - l);
                else gather_n(d + l, s + l * sw, h - l, sw);
            }
            if (b > h) zero_n(d + h, b - h);
        }
    }
}

/* im2col_segment through the tap table (Note [Tap table], conv_taps.c) */
CG_TARGET static void im2col_segment_taps(const nchw_ctx *x, float *dst, int64_t width, int64_t lane, const float *plane,
                                          int64_t pos0, int64_t len, int64_t k0, int64_t k)
{
    const int64_t kvol = x->p->kvol, bvol = x->p->bvol, vol = x->vol;
    for (int64_t q = 0; q < k; q++) {
        const int64_t row = x->kmap ? x->kmap[k0 + q] : k0 + q, c = row / kvol, t = row % kvol;
        const int32_t *tab = x->taps + t * vol + pos0;
        const float *src = plane + c * bvol;
        float *d = dst + q * width + lane;
        for (int64_t i = 0; i < len; i += 16) {
            const __mmask16 m = lanes(len - i);
            const __m512i idx = _mm512_maskz_loadu_epi32(m, tab + i);
            const __mmask16 valid = _mm512_mask_cmpge_epi32_mask(m, idx, _mm512_setzero_si512());
            _mm512_mask_storeu_ps(d + i, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), valid, idx, src, 4));
        }
    }
}

/* Columns [j0, j0 + cols) of the batch's B (they may span several samples) as a panel of width
 * lanes (zero lanes up to width): the pack_b hook of the product, the pack_a hook of the
 * transposed one. */
CG_TARGET static void nchw_panel(const nchw_ctx *x, float *dst, int64_t width, int64_t j0, int64_t cols, int64_t k0,
                                 int64_t k)
{
    j0 += x->col0;
    for (int64_t j = j0; j < j0 + cols;) {
        const int64_t n = j / x->vol, pos = j % x->vol;
        const int64_t len = x->vol - pos < j0 + cols - j ? x->vol - pos : j0 + cols - j;
        const float *s = x->src + n * x->src_n;
        if (x->taps) {
            im2col_segment_taps(x, dst, width, j - j0, s, pos, len, k0, k);
        } else if (x->im2col) {
            im2col_segment(x->p, dst, width, j - j0, s, pos, len, k0, k);
        } else {
            s += k0 * x->src_plane + pos;
            for (int64_t q = 0; q < k; q++) copy_n(dst + q * width + (j - j0), s + q * x->src_plane, len);
        }
        j += len;
    }
    if (cols < width)
        for (int64_t q = 0; q < k; q++) zero_n(dst + q * width + cols, width - cols);
}

CG_TARGET static void nchw_pack_b(const void *ctx, uint32_t *dst, int64_t j0, int64_t cols, int64_t k0, int64_t k)
{
    nchw_panel(ctx, (float *)dst, NR, j0, cols, k0, k);
}

/* The transposed product's A whole, dst[r][j] for product rows r < nrows and the chunk's batch
 * columns j < width: through a table of the chunk, for tap t and column j = (n, pos), the offset
 * of the element in sample n's channel 0 (n * src_n + taps[t][pos], or -1), so that a row is one
 * 16-lane gather per 16 columns across samples (per sample, a 2x2 image gave 4-lane gathers). */
CG_TARGET static void transposed_rows(const nchw_ctx *x, int32_t *btab, float *dst, int64_t width, int64_t nrows)
{
    const pct_conv_plan *p = x->p;
    for (int64_t t = 0; t < p->kvol; t++)
        for (int64_t j = 0; j < width; j++) {
            const int64_t col = x->col0 + j, n = col / x->vol, pos = col % x->vol;
            const int32_t off = x->taps[t * x->vol + pos];
            btab[t * width + j] = off < 0 ? -1 : (int32_t)(n * x->src_n + off);
        }
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t row = x->kmap ? x->kmap[r] : r, c = row / p->kvol;
        const int32_t *tab = btab + (row % p->kvol) * width;
        const float *plane = x->src + c * p->bvol;
        for (int64_t j = 0; j < width; j += 16) {
            const __mmask16 m = lanes(width - j);
            const __m512i idx = _mm512_maskz_loadu_epi32(m, tab + j);
            const __mmask16 valid = _mm512_mask_cmpge_epi32_mask(m, idx, _mm512_setzero_si512());
            _mm512_mask_storeu_ps(dst + r * width + j, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), valid, idx, plane, 4));
        }
    }
}

/* The transposed product's pack_a hook: MR-wide panels cut from its A built whole (a panel built
 * directly would gather 6 lanes at a time, 16 when the whole row is built first). */
CG_TARGET static void nchw_pack_a(const void *ctx, uint32_t *dst_, int64_t i0, int64_t rows, int64_t k0, int64_t k)
{
    const nchw_ctx *x = ctx;
    float *dst = (float *)dst_;
    const __mmask16 keep = lanes(rows), all = lanes(PCT_GEMM_MR);
    for (int64_t q = 0; q < k; q++)
        _mm512_mask_storeu_ps(dst + q * PCT_GEMM_MR, all, _mm512_maskz_loadu_ps(keep, x->rows + (k0 + q) * x->rows_ld + i0));
}

/* The driver's store hook: rows are channels of dst (+ bias on the first K slice). */
CG_TARGET static void nchw_store(const void *ctx_, const float *tile, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                                 bool add)
{
    const nchw_ctx *x = ctx_;
    j0 += x->col0;
    for (int64_t j = j0; j < j0 + cols;) {
        const int64_t n = j / x->vol, pos = j % x->vol;
        const int64_t len = x->vol - pos < j0 + cols - j ? x->vol - pos : j0 + cols - j;
        float *d0 = x->dst + n * x->dst_n + i0 * x->vol + pos;
        for (int64_t r = 0; r < rows; r++) {
            float *d = d0 + r * x->vol;
            const float *t = tile + r * NR + (j - j0);
            const __m512 b = _mm512_set1_ps(add || !x->bias ? 0.0f : x->bias[i0 + r]);
            for (int64_t i = 0; i < len; i += 16) {
                const __mmask16 m = lanes(len - i);
                __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, t + i), b);
                if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, d + i));
                _mm512_mask_storeu_ps(d + i, m, v);
            }
        }
        j += len;
    }
}

/* The store hook of the transposed product: a tile's rows are batch columns (n, pos), its
 * columns channels of dst (+ bias on the first K slice). */
CG_TARGET static void nchw_store_transposed(const void *ctx_, const float *tile, int64_t i0, int64_t rows, int64_t j0,
                                           int64_t cols, bool add)
{
    const nchw_ctx *x = ctx_;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t col = x->col0 + i0 + r, n = col / x->vol, pos = col % x->vol;
        float *d = x->dst + n * x->dst_n + j0 * x->vol + pos;
        const float *t = tile + r * NR;
        for (int64_t j = 0; j < cols; j++) {
            const float v = t[j] + (add ? d[j * x->vol] : x->bias ? x->bias[j0 + j] : 0.0f);
            d[j * x->vol] = v;
        }
    }
}

/* B's panels of the transposed product over the live rows only (Note [Live taps], conv_taps.c) */
CG_TARGET static void weight_pack_b_live(const void *ctx_, uint32_t *dst_, int64_t j0, int64_t cols, int64_t k0,
                                         int64_t k)
{
    const nchw_ctx *x = ctx_;
    float *dst = (float *)dst_;
    const int64_t K = x->p->K;
    const __m512i lane = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32((int)K));
    for (int64_t q = 0; q < k; q++) {
        const float *col = x->w + j0 * K + x->kmap[k0 + q]; /* B(row, j0 + j) = W[j0 + j][kmap[row]] */
        for (int64_t j = 0; j < NR; j += 16) {
            const __mmask16 m = j < cols ? lanes(cols - j) : 0;
            _mm512_storeu_ps(dst + q * NR + j, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lane, col + j * K, 4));
        }
    }
}

/* Note [Transposed convolution product]
 * With few output positions in the whole batch (ResNet's last stages on small images: 8 samples
 * of 1x1 or 2x2), the product's columns fill a fraction of one 64-column panel and most of each
 * micro-kernel call multiplies padding (7/8 of it for 8 columns). Then the transposed product
 *     small^T[(n, pos), o] = im2col(big)^T[(n, pos), K] @ W^T[K, o]
 * runs instead: batch columns become rows (panels of 6) and channels columns (panels of 64).
 * It is chosen when its padded tile area is at most two thirds of the plain one's: building
 * im2col panels 6 lanes wide costs more per element than 64 wide, so a near tie stays plain
 * (8 samples of 16x16 from a 64-channel 7x7 stem ran 2.8x slower flipped). */
static bool transposed_is_smaller(int64_t rows, int64_t cols)
{
    const int64_t mr = PCT_GEMM_MR;
    const int64_t plain = (rows + mr - 1) / mr * mr * ((cols + NR - 1) / NR * NR);
    const int64_t flipped = (cols + mr - 1) / mr * mr * ((rows + NR - 1) / NR * NR);
    return 3 * flipped <= 2 * plain;
}

int pct_conv_gemm_batch(const pct_conv_task *t, int nt)
{
    const pct_conv_plan *p = t->p;
    const bool fwd = t->what == PCT_CONV_FWD;
    const int64_t G = p->G, cs = p->cs, K = p->K;
    /* fwd:     small[o, (n, pos)] = W[o, K] @ im2col(big)[K, (n, pos)]
     * 1x1 data: big[c, (n, pos)] = W^T[c, o] @ small[o, (n, pos)]
     * B's source has sch channels per group of svl positions, C dch channels of dvl */
    const float *src = (const float *)(fwd ? t->big : t->small_in);
    float *dst = (float *)(fwd ? t->small_out : t->big_out);
    const float *bias = (const float *)(fwd ? t->bias_small : t->bias_big);
    const int64_t sch = fwd ? p->cb : cs, dch = fwd ? cs : p->cb;
    const int64_t svl = fwd ? p->bvol : p->svol, dvl = fwd ? p->svol : p->bvol;
    /* the driver packs all of a K slice's B panels first (slices of at most 256, gemm_f32.c's
     * KC): columns go in chunks whose packed B stays near CHUNK_BYTES, however big the batch */
    const int64_t cols = p->N * p->svol, kc = K < 256 ? K : 256;
    const int64_t chunk = (CHUNK_BYTES / (kc * 4) + NR - 1) / NR * NR;
    /* the transposed product reads its A through the tap table, with offsets across the batch in 32 bits */
    const bool flip = fwd && transposed_is_smaller(cs, cols < chunk ? cols : chunk) && pct_conv_tap_table_fits(p) &&
                      p->N * G * p->cb * p->bvol <= INT32_MAX;
    int32_t *taps = NULL;
    if (fwd && (flip || (!p->direct && p->geo.small[2] < 16)) && pct_conv_tap_table_fits(p)) {
        taps = pct_conv_tap_table(p);
        if (!taps) return -1;
    }
    /* Note [Live taps]: only the transposed product leaves rows out (its B is gathered anyway) */
    int64_t klive = K;
    int32_t *kmap = flip && taps && p->G * p->cs * K <= INT32_MAX ? pct_conv_live_rows(p, taps, &klive) : NULL;
    /* the transposed product's A, [klive][columns of a chunk], then its table [kvol][columns] */
    const int64_t widest = cols < chunk ? cols : chunk;
    const size_t trows_bytes = flip ? sizeof(float) * (size_t)((klive + p->kvol) * widest) : 0;
    float *trows = flip ? pct_conv_scratch_get(trows_bytes) : NULL;
    if (flip && !trows) {
        pct_conv_live_rows_free(kmap, klive);
        pct_conv_tap_table_free(p, taps);
        return -1;
    }
    int rc = 0;
    for (int64_t g = 0; g < G && rc == 0; g++)
        for (int64_t c0 = 0; c0 < cols && rc == 0; c0 += chunk) {
            const nchw_ctx x = {p, fwd && !p->direct, p->svol, c0, src + g * sch * svl, G * sch * svl, svl,
                                dst + g * dch * dvl, G * dch * dvl, bias ? bias + g * dch : NULL, taps, kmap,
                                (const float *)t->w + g * cs * K, NULL, 0};
            const float *wg = x.w;
            const int64_t width = cols - c0 < chunk ? cols - c0 : chunk;
            if (flip) { /* Note [Transposed convolution product]: A and C through the hooks, B = W^T in place */
                nchw_ctx xa = x;
                transposed_rows(&x, (int32_t *)(trows + klive * widest), trows, width, klive); /* A: [klive][width] */
                xa.rows = trows;
                xa.rows_ld = width;
                const pct_gemm_hooks hooks = {&xa, nchw_pack_a, kmap ? weight_pack_b_live : NULL, nchw_store_transposed};
                const pct_gemm_problem pr = {width, cs, klive, 1.0f, 0.0f, true, (const char *)x.src,
                                             (const char *)wg, (char *)x.dst, 0, 0, 1, K, 0, 0, &hooks};
                rc = pct_gemm_f32_problem(&pr, nt);
                continue;
            }
            const pct_gemm_hooks hooks = {&x, NULL, nchw_pack_b, nchw_store};
            const pct_gemm_problem pr = {fwd ? cs : K, width, fwd ? K : cs, 1.0f, 0.0f,
                                         true, (const char *)wg, (const char *)x.src, (char *)x.dst, fwd ? K : 1,
                                         fwd ? 1 : K, 0, 0, 0, 0, &hooks}; /* B and C: through the hooks */
            rc = pct_gemm_f32_problem(&pr, nt);
        }
    if (trows) pct_conv_scratch_put(trows, trows_bytes);
    pct_conv_live_rows_free(kmap, klive);
    pct_conv_tap_table_free(p, taps);
    return rc < 0 ? -1 : rc > 0 ? 1 : 0;
}

#else

int pct_conv_gemm_batch(const pct_conv_task *t, int nt)
{
    (void)t; (void)nt;
    return 1;
}

#endif
