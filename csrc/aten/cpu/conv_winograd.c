/* conv_winograd.c: the forward and the input gradient of float32 3x3 stride-1 convolutions by
 * Winograd's minimal filtering F(2x2, 3x3), on AVX-512 CPUs.
 *
 * Note [Winograd convolution]
 * A 3x3 layer computed directly (Note [Direct convolution]) or by im2col and a product does 36
 * multiply-adds per 2x2 block of outputs and channel pair; on ResNet's 8x8 and 4x4 stages (32x32
 * inputs) even a product at the GEMM's peak stays 1.4x oneDNN's time. F(2x2, 3x3) makes a 2x2
 * output tile from the 4x4 input tile d around it with 16:
 *     Y = A^T [ sum over input channels of (G g G^T) .* (B^T d B) ] A
 * where g is the 3x3 kernel of a channel pair and
 *     B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 *     A^T = [1 1 1 0; 0 1 -1 -1]                                   (Lavin and Gray, 2015).
 * With U = G g G^T (the weight, transformed once per call) and V = B^T d B (every input tile;
 * the padding reads as zeros), the 16 positions xi of the 4x4 transform domain are 16
 * independent products over the input channels,
 *     M_xi [tiles, O] = V_xi [tiles, C] @ U_xi [C, O],
 * 2.25x fewer multiply-adds than the direct sum, and the output tile is A^T M A plus the bias.
 * The matrices' entries are 0, +-1 and +-1/2, so the transforms add a few ulps of rounding:
 * tests/nn/test_conv_winograd.py holds the result to the float64 convolution. It beats the
 * direct kernels at every image size measured (2x2 to 112x112, 16 to 512 channels), so it takes
 * every plan pct_conv_winograd_usable accepts. The data primitive of a stride-1 plan (the input
 * gradient, or a stride-1 transposed convolution) is the fwd of pct_conv_data_as_fwd's plan, whose
 * weight is the original one flipped and transposed: transform_weight_flipped reads it so.
 * Layouts: U[xi][c][o], V[xi][tile][c] and M[xi][tile][o], so the transforms load and store
 * 16 channels at a time and each product is pct_sgemm_small's row-major case. The input of a
 * band of rows is first copied channels-last into a zero-padded buffer. The batch runs in chunks
 * of tiles (in sample, row, column order) whose V and M stay in the L2 cache, yet large enough to
 * amortise reading U; each thread takes whole chunks, or, with few tiles, a part of the output
 * channels of every chunk (plan_chunks). */
#include "conv.h"
#include "gemm_f32.h"
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
#define WG_AVX512 1
#include <immintrin.h>
#include "transpose16.h"
#define WG_TARGET __attribute__((target("avx512f")))
#endif

/* bytes of V and M a chunk aims at (half of a 1 MiB L2) */
#define WG_CHUNK_BYTES ((int64_t)512 << 10)

bool pct_conv_winograd_usable(const pct_conv_plan *p)
{
#ifdef WG_AVX512
    const pct_im2col_geom *g = &p->geo;
    if (!p->fast32 || p->G != 1 || p->depthwise || !pct_sgemm_small_available()) return false;
    if (g->kernel[0] != 1 || g->big[0] != 1 || g->small[0] != 1) return false; /* 2-d only */
    for (int i = 1; i < 3; i++)
        if (g->kernel[i] != 3 || g->stride[i] != 1 || g->dil[i] != 1) return false;
    const int64_t OH = g->small[1], OW = g->small[2], tiles = p->N * ((OH + 1) / 2) * ((OW + 1) / 2);
    /* Below 16 channels the products are too thin to gain. A 1x1 output would use one of a tile's
     * 16 products. U takes 16 C O floats, rewritten every call: past 384 x 384 channels (9 MiB) it
     * pays only over 64 tiles or more (512 -> 512 on 4x4 images is 1.2x the batch product, on 7x7
     * 0.7x), and past 512 x 512 its scratch grows too large to keep. */
    if (p->cb < 16 || p->cs < 16 || OH < 2 || OW < 2) return false;
    /* the output transform scatters with 32-bit lane offsets o * OH * OW, the weight gathers with o * C * 9 */
    if (OH * OW >= ((int64_t)1 << 27) || p->cb * 9 >= ((int64_t)1 << 27)) return false;
    const int64_t pairs = p->cb * p->cs;
    return pairs <= 384 * 384 || (pairs <= 512 * 512 && tiles >= 64);
#else
    (void)p;
    return false;
#endif
}

#ifdef WG_AVX512
/* floats from one of the 16 matrices U_xi (V_xi, M_xi) to the next: 64 bytes more than a matrix, so
   the 16 streams a transform reads or writes do not share cache sets when a matrix spans a multiple
   of 4 KiB (U of a 64 -> 64 layer: 16 KiB) */
static inline int64_t wg_stride(int64_t floats) { return floats + 16; }

static inline __mmask16 wg_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1); }

/* U[xi][c][o0 ..] = (G g G^T)[xi] from g[k] = the kernels w[o0 + lane][c] (m: the lanes that exist) */
WG_TARGET static inline void transform_kernels(const __m512 g[9], float *U, int64_t C, int64_t O, int64_t c, int64_t o0,
                                               __mmask16 m)
{
    const __m512 half = _mm512_set1_ps(0.5f);
    __m512 a[4][3];
    for (int j = 0; j < 3; j++) { /* G g: the rows */
        const __m512 s = _mm512_mul_ps(half, _mm512_add_ps(g[j], g[6 + j])), h = _mm512_mul_ps(half, g[3 + j]);
        a[0][j] = g[j];
        a[1][j] = _mm512_add_ps(s, h);
        a[2][j] = _mm512_sub_ps(s, h);
        a[3][j] = g[6 + j];
    }
    for (int r = 0; r < 4; r++) { /* (G g) G^T: the columns */
        const __m512 s = _mm512_mul_ps(half, _mm512_add_ps(a[r][0], a[r][2])), h = _mm512_mul_ps(half, a[r][1]);
        const __m512 u[4] = {a[r][0], _mm512_add_ps(s, h), _mm512_sub_ps(s, h), a[r][2]};
        for (int j = 0; j < 4; j++) _mm512_mask_storeu_ps(U + (r * 4 + j) * wg_stride(C * O) + c * O + o0, m, u[j]);
    }
}

/* U for the output channels [16 ob0, 16 ob1) of w [O][C][3][3]. 16 output channels per vector:
 * for 16 input channels at a time the 16 x 144 block of kernels is turned by nine 16 x 16
 * transposes (a strided gather per tap costs three times as much); the last input channels
 * are gathered. */
WG_TARGET static void transform_weight(const float *w, int64_t O, int64_t C, float *U, int64_t ob0, int64_t ob1)
{
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32((int)(C * 9)));
    float turned[144 * 16] __attribute__((aligned(64))); /* [c * 9 + k][lane] for 16 input channels */
    for (int64_t ob = ob0; ob < ob1; ob++) {
        const int64_t o0 = ob * 16, lanes = O - o0 < 16 ? O - o0 : 16;
        const __mmask16 m = wg_mask(O - o0);
        int64_t c = 0;
        for (; c + 16 <= C; c += 16) {
            for (int j = 0; j < 9; j++) {
                __m512i r[16];
                for (int i = 0; i < 16; i++)
                    r[i] = i < lanes ? _mm512_loadu_si512(w + ((o0 + i) * C + c) * 9 + j * 16) : _mm512_setzero_si512();
                pct_transpose16_words(r);
                for (int i = 0; i < 16; i++) _mm512_store_si512(turned + (j * 16 + i) * 16, r[i]);
            }
            for (int cc = 0; cc < 16; cc++) {
                __m512 g[9];
                for (int k = 0; k < 9; k++) g[k] = _mm512_load_ps(turned + (cc * 9 + k) * 16);
                transform_kernels(g, U, C, O, c + cc, o0, m);
            }
        }
        for (; c < C; c++) {
            __m512 g[9];
            for (int k = 0; k < 9; k++)
                g[k] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, rows, w + (o0 * C + c) * 9 + k, 4);
            transform_kernels(g, U, C, O, c, o0, m);
        }
    }
}

/* U of the data primitive: the fwd of pct_conv_data_as_fwd's plan, whose weight is w [C][O][3][3] (the
 * original weight, O of its input channels now the outputs) transposed and flipped: for output
 * channel o and input channel c the kernel w[c][o] read backwards. Its 16 output channels of a
 * vector are 144 consecutive floats, gathered with stride 9. */
WG_TARGET static void transform_weight_flipped(const float *w, int64_t O, int64_t C, float *U, int64_t ob0, int64_t ob1)
{
    const __m512i lanes9 = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                              _mm512_set1_epi32(9));
    for (int64_t ob = ob0; ob < ob1; ob++) {
        const int64_t o0 = ob * 16;
        const __mmask16 m = wg_mask(O - o0);
        for (int64_t c = 0; c < C; c++) {
            const float *src = w + (c * O + o0) * 9;
            __m512 g[9];
            for (int k = 0; k < 9; k++) g[k] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lanes9, src + 8 - k, 4);
            transform_kernels(g, U, C, O, c, o0, m);
        }
    }
}

/* xp[(r * wp + q) * C + c] = x[c][r0 + r][q - pw] for rows r < rows (zero outside x): a band of one
 * sample's rows, padded and channels last; 16 channels x 16 columns at a time, turned by one transpose */
WG_TARGET static void pad_channels_last(const float *x, int64_t C, int64_t H, int64_t W, int64_t r0, int64_t rows,
                                        int64_t pw, int64_t wp, float *xp)
{
    memset(xp, 0, sizeof(float) * (size_t)(rows * wp * C));
    const int64_t q_lo = pw < 0 ? -pw : 0, q_hi = W < wp - pw ? W : wp - pw; /* the columns of x that land in xp */
    for (int64_t r = 0; r < rows; r++) {
        const int64_t h = r0 + r;
        if (h < 0 || h >= H) continue;
        for (int64_t c0 = 0; c0 < C; c0 += 16) {
            const int64_t lanes = C - c0 < 16 ? C - c0 : 16;
            const __mmask16 cm = wg_mask(C - c0);
            for (int64_t q0 = q_lo; q0 < q_hi; q0 += 16) {
                const int64_t cols = q_hi - q0 < 16 ? q_hi - q0 : 16;
                const __mmask16 qm = wg_mask(cols);
                __m512i v[16];
                for (int i = 0; i < 16; i++)
                    v[i] = i < lanes ? _mm512_maskz_loadu_epi32(qm, x + ((c0 + i) * H + h) * W + q0) : _mm512_setzero_si512();
                pct_transpose16_words(v);
                for (int j = 0; j < cols; j++) _mm512_mask_storeu_epi32(xp + (r * wp + q0 + j + pw) * C + c0, cm, v[j]);
            }
        }
    }
}

/* V[xi][t][c] = (B^T d B)[xi] for the 4x4 tile d at xp's rows 2ty.., columns 2tx.. */
WG_TARGET static void transform_tile(const float *xp, int64_t wp, int64_t C, float *V, int64_t vstride)
{
    for (int64_t c0 = 0; c0 < C; c0 += 16) {
        const __mmask16 m = wg_mask(C - c0);
        __m512 d[4][4], e[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) d[i][j] = _mm512_maskz_loadu_ps(m, xp + (i * wp + j) * C + c0);
        for (int j = 0; j < 4; j++) { /* B^T d */
            e[0][j] = _mm512_sub_ps(d[0][j], d[2][j]);
            e[1][j] = _mm512_add_ps(d[1][j], d[2][j]);
            e[2][j] = _mm512_sub_ps(d[2][j], d[1][j]);
            e[3][j] = _mm512_sub_ps(d[1][j], d[3][j]);
        }
        for (int i = 0; i < 4; i++) { /* (B^T d) B */
            float *v = V + (int64_t)(i * 4) * vstride + c0;
            _mm512_mask_storeu_ps(v, m, _mm512_sub_ps(e[i][0], e[i][2]));
            _mm512_mask_storeu_ps(v + vstride, m, _mm512_add_ps(e[i][1], e[i][2]));
            _mm512_mask_storeu_ps(v + 2 * vstride, m, _mm512_sub_ps(e[i][2], e[i][1]));
            _mm512_mask_storeu_ps(v + 3 * vstride, m, _mm512_sub_ps(e[i][1], e[i][3]));
        }
    }
}

/* y[o][2ty + r][2tx + s] = (A^T M A)[r][s] + bias[o] for the tile's M[xi][o] (at M, xi stride mstride) and
 * the output channels o in [o_lo, o_hi), the rows and columns past OH and OW dropped; y is one sample's
 * [O][OH][OW] */
WG_TARGET static void untransform_tile(const float *M, int64_t mstride, int64_t o_lo, int64_t o_hi, const float *bias,
                                       float *y, int64_t OH, int64_t OW, int64_t ty, int64_t tx)
{
    const int64_t svol = OH * OW;
    const __m512i planes = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                              _mm512_set1_epi32((int)svol));
    const bool row1 = 2 * ty + 1 < OH, col1 = 2 * tx + 1 < OW;
    for (int64_t o0 = o_lo; o0 < o_hi; o0 += 16) {
        const __mmask16 msk = wg_mask(o_hi - o0);
        __m512 r[2][4];
        for (int j = 0; j < 4; j++) { /* A^T M */
            const __m512 m0 = _mm512_maskz_loadu_ps(msk, M + (int64_t)j * mstride + o0);
            const __m512 m1 = _mm512_maskz_loadu_ps(msk, M + (int64_t)(4 + j) * mstride + o0);
            const __m512 m2 = _mm512_maskz_loadu_ps(msk, M + (int64_t)(8 + j) * mstride + o0);
            const __m512 m3 = _mm512_maskz_loadu_ps(msk, M + (int64_t)(12 + j) * mstride + o0);
            r[0][j] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
            r[1][j] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
        }
        const __m512 b = bias ? _mm512_maskz_loadu_ps(msk, bias + o0) : _mm512_setzero_ps();
        float *base = y + o0 * svol + 2 * ty * OW + 2 * tx;
        for (int i = 0; i < 2; i++) { /* (A^T M) A */
            if (i == 1 && !row1) break;
            const __m512 y0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(r[i][0], r[i][1]), r[i][2]), b);
            _mm512_mask_i32scatter_ps(base + i * OW, msk, planes, y0, 4);
            if (col1) {
                const __m512 y1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(r[i][1], r[i][2]), r[i][3]), b);
                _mm512_mask_i32scatter_ps(base + i * OW + 1, msk, planes, y1, 4);
            }
        }
    }
}

/* The geometry of a call; its chunks are ranges of ct tiles in (sample, tile row, tile column) order. */
typedef struct wg_shape {
    int64_t N, C, O, H, W, OH, OW, ph, pw;
    int64_t th, tw, tps;   /* tiles per column, per row, per sample */
    int64_t wp;            /* columns of the padded, channels-last band: 2 tw + 2 */
    int64_t ct, band;      /* tiles per chunk; the most tile rows of one sample a chunk covers */
    bool shared;           /* the threads split the output channels of every chunk rather than take chunks */
} wg_shape;

/* floats of one padded band, and of V and M of one chunk */
static int64_t band_floats(const wg_shape *s) { return (2 * s->band + 2) * s->wp * s->C; }
static int64_t chunk_floats(const wg_shape *s) { return 16 * (wg_stride(s->ct * s->C) + wg_stride(s->ct * s->O)); }

/* the tiles [a0, a1) of the chunk that starts at tile T0 into V (vs: its matrix stride), through the
 * padded band xp */
static void transform_tiles(const wg_shape *s, const float *x, float *xp, float *V, int64_t vs, int64_t T0, int64_t a0,
                            int64_t a1)
{
    for (int64_t t = a0; t < a1;) { /* the part in sample n: its tiles [a, b) */
        const int64_t n = t / s->tps, a = t % s->tps, b = a + (a1 - t) < s->tps ? a + (a1 - t) : s->tps;
        const int64_t ty0 = a / s->tw, ty1 = (b - 1) / s->tw + 1;
        pad_channels_last(x + n * s->C * s->H * s->W, s->C, s->H, s->W, 2 * ty0 - s->ph, 2 * (ty1 - ty0) + 2, s->pw,
                          s->wp, xp);
        for (int64_t u = a; u < b; u++) {
            const int64_t ty = u / s->tw, tx = u % s->tw;
            transform_tile(xp + (2 * (ty - ty0) * s->wp + 2 * tx) * s->C, s->wp, s->C, V + (t - T0 + u - a) * s->C, vs);
        }
        t += b - a;
    }
}

/* the output channels [o_lo, o_hi) of M_xi = V_xi @ U_xi for all 16 xi, over a chunk of `tiles` tiles */
static void products(const wg_shape *s, const float *U, const float *V, int64_t vs, float *M, int64_t ms, int64_t tiles,
                     int64_t o_lo, int64_t o_hi)
{
    for (int xi = 0; xi < 16; xi++)
        pct_sgemm_small(tiles, o_hi - o_lo, s->C, 1.0f, V + xi * vs, s->C, 1, U + xi * wg_stride(s->C * s->O) + o_lo,
                        s->O, 0.0f, M + xi * ms + o_lo, s->O);
}

/* the output tiles [a0, a1) of the chunk that starts at tile T0, channels [o_lo, o_hi), from M (ms: its
 * matrix stride) */
static void untransform_tiles(const wg_shape *s, const float *M, int64_t ms, const float *bias, float *y, int64_t T0,
                              int64_t a0, int64_t a1, int64_t o_lo, int64_t o_hi)
{
    for (int64_t t = a0; t < a1; t++) {
        const int64_t n = t / s->tps, u = t % s->tps;
        untransform_tile(M + (t - T0) * s->O, ms, o_lo, o_hi, bias, y + n * s->O * s->OH * s->OW, s->OH, s->OW,
                         u / s->tw, u % s->tw);
    }
}

/* Chunks whose V and M fit WG_CHUNK_BYTES, a multiple of the products' 6 rows. With 24 tiles or more a
 * thread, each thread takes whole chunks (split further until each has one). With fewer, a thread's
 * products would have too few rows to pay for reading all of U: then every thread transforms every
 * chunk's tiles itself (a small cost) and takes a part of the output channels in the weight
 * transform, the products and the output transform, so it reads only its part of U. Neither way has
 * a barrier inside the parallel region: with two threads on two cores a barrier waits whenever the
 * other thread is descheduled, as happens beside another OpenMP runtime's spinning threads (torch's,
 * in the benchmarks). */
static void plan_chunks(wg_shape *s, int nt)
{
    const int64_t total = s->N * s->tps;
    int64_t ct = WG_CHUNK_BYTES / (64 * (s->C + s->O)); /* tiles: 16 matrices of C + O floats each */
    ct = ct >= 6 ? ct / 6 * 6 : 1;
    /* and large enough that streaming U (16 C O floats per chunk) costs at most half of V and M */
    const int64_t least = (s->C * s->O / (2 * (s->C + s->O)) + 5) / 6 * 6;
    if (ct < least) ct = least;
    if (ct > total) ct = total;
    s->shared = nt > 1 && total < 24 * nt;
    if (nt > 1 && !s->shared && (total + ct - 1) / ct < nt) {
        const int64_t share = (total + nt - 1) / nt;
        ct = (share + 5) / 6 * 6;
    }
    s->ct = ct;
    s->band = ct >= s->tps ? s->th : ct / s->tw + 2; /* the most tile rows of a sample one chunk covers */
    if (s->band > s->th) s->band = s->th;
}
/* y = the Winograd fwd of plan p on x (bias may be NULL); the weight w as the plan has it, or (flipped)
 * as transform_weight_flipped reads it. 0, or -1 when out of memory. */
static int winograd_run(const pct_conv_plan *p, const float *x, const float *w, bool flipped, const float *bias,
                        float *y, int nt)
{
    const pct_im2col_geom *g = &p->geo;
    wg_shape s;
    s.N = p->N;
    s.C = p->cb;
    s.O = p->cs;
    s.H = g->big[1];
    s.W = g->big[2];
    s.OH = g->small[1];
    s.OW = g->small[2];
    s.ph = g->pad[1];
    s.pw = g->pad[2];
    s.th = (s.OH + 1) / 2;
    s.tw = (s.OW + 1) / 2;
    s.tps = s.th * s.tw;
    s.wp = 2 * s.tw + 2;
    if ((double)s.N * s.tps * 16 * s.C * s.O < PCT_CONV_PARALLEL_MIN) nt = 1;
    plan_chunks(&s, nt);
    const int64_t total = s.N * s.tps, nchunks = (total + s.ct - 1) / s.ct, oblocks = (s.O + 15) / 16;
    if (nt > (s.shared ? oblocks : nchunks)) nt = (int)(s.shared ? oblocks : nchunks);
    /* U, then per thread a band, V and M */
    const int64_t ufl = 16 * wg_stride(s.C * s.O), per = band_floats(&s) + chunk_floats(&s);
    const size_t bytes = sizeof(float) * (size_t)(ufl + per * nt);
    float *U = pct_conv_scratch_get(bytes);
    if (!U) return -1;
    float *bufs = U + ufl;
    PCT_OMP(omp parallel num_threads(nt) if (nt > 1))
    {
        int tid = 0, cnt = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        cnt = omp_get_num_threads();
#endif
        float *xp = bufs + per * tid, *V = xp + band_floats(&s);
        if (!s.shared) {
            PCT_OMP(omp for schedule(static))
            for (int64_t ob = 0; ob < oblocks; ob++) {
                if (flipped) transform_weight_flipped(w, s.O, s.C, U, ob, ob + 1);
                else transform_weight(w, s.O, s.C, U, ob, ob + 1);
            }
            PCT_OMP(omp for schedule(dynamic, 1))
            for (int64_t k = 0; k < nchunks; k++) {
                const int64_t T0 = k * s.ct, T1 = T0 + s.ct < total ? T0 + s.ct : total, n = T1 - T0;
                const int64_t vs = wg_stride(n * s.C), ms = wg_stride(n * s.O);
                transform_tiles(&s, x, xp, V, vs, T0, T0, T1);
                products(&s, U, V, vs, V + 16 * vs, ms, n, 0, s.O);
                untransform_tiles(&s, V + 16 * vs, ms, bias, y, T0, T0, T1, 0, s.O);
            }
        } else {
            /* this thread's output channels: whole 16-channel blocks */
            const int64_t ob0 = oblocks * tid / cnt, ob1 = oblocks * (tid + 1) / cnt;
            const int64_t o_lo = 16 * ob0, o_hi = 16 * ob1 < s.O ? 16 * ob1 : s.O;
            if (flipped) transform_weight_flipped(w, s.O, s.C, U, ob0, ob1);
            else transform_weight(w, s.O, s.C, U, ob0, ob1);
            for (int64_t k = 0; o_lo < o_hi && k < nchunks; k++) {
                const int64_t T0 = k * s.ct, T1 = T0 + s.ct < total ? T0 + s.ct : total, n = T1 - T0;
                const int64_t vs = wg_stride(n * s.C), ms = wg_stride(n * s.O);
                transform_tiles(&s, x, xp, V, vs, T0, T0, T1);
                products(&s, U, V, vs, V + 16 * vs, ms, n, o_lo, o_hi);
                untransform_tiles(&s, V + 16 * vs, ms, bias, y, T0, T0, T1, o_lo, o_hi);
            }
        }
    }
    pct_conv_scratch_put(U, bytes);
    return 0;
}
#endif

int pct_conv_winograd_fwd(const pct_conv_task *t, int nt)
{
#ifdef WG_AVX512
    return winograd_run(t->p, (const float *)t->big, (const float *)t->w, false, (const float *)t->bias_small,
                        (float *)t->small_out, nt);
#else
    (void)t; (void)nt;
    return 1;
#endif
}

int pct_conv_winograd_data(const pct_conv_task *t, int nt)
{
#ifdef WG_AVX512
    pct_conv_plan q;
    if (!pct_conv_data_as_fwd(t->p, &q) || !pct_conv_winograd_usable(&q)) return 1;
    return winograd_run(&q, (const float *)t->small_in, (const float *)t->w, true, (const float *)t->bias_big,
                        (float *)t->big_out, nt);
#else
    (void)t; (void)nt;
    return 1;
#endif
}
