/* conv_direct.c: direct (im2col-free) float32 convolution for AVX-512 CPUs: the forward and
 * weight-gradient kernels, their runners over the batch, and the input gradient of stride-1
 * problems (pct_conv_direct_data).
 *
 * Note [Direct convolution]
 * An im2col + GEMM convolution writes and re-reads a column matrix kvol times the size of its
 * input; with 64..128 output channels that traffic costs a third of the time. Here the input
 * of one sample and group is copied once into a zero-padded buffer xp [cb][Dp][Hp][Wp]; with
 * stride 1, output position (od, oh, ow) and tap (c, kd, kh, kw) read
 *     xp[v + off[k]],  v = (od * Hp + oh) * Wp + ow,  off[k] = ((c * Dp + kd*dd) * Hp + kh*dh) * Wp + kw*dw,
 * which is affine in the "virtual position" v. So 32 consecutive v are two contiguous vector
 * loads per tap, whatever rows they straddle; the v whose (oh, ow) fall in the padding are
 * computed and dropped (OW / Wp of the work is useful: 56/58 on a 56-wide 3x3 layer). With
 * stride s the padded input is split into s^3 phase planes (element (d, h, w) goes to plane
 * (d % sd, h % sh, w % sw) at (d / sd, h / sh, w / sw)): tap t = k * dil then reads plane t % s
 * at offset t / s, and the problem is again a stride-1 walk over planes of size Q = ceil(P / s).
 * A tile is 14 output channels x 32 virtual positions (28 zmm accumulators; per tap two input
 * loads and 14 weight broadcasts) or, when the channel count pads less that way, 8 x 48 (24
 * accumulators, three loads and eight broadcasts); weights are packed [block][k][channel].
 * The kept lanes of a tile are consecutive output positions, written with compress stores.
 * The weight gradient walks the same virtual positions (see below); the input gradient of a
 * stride-1 convolution (and the forward of a stride-1 transposed one) is the convolution of
 * the padded grad_output with the flipped, transposed weight (pct_conv_direct_data). */
#include "conv.h"
#include "../dtype.h"
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
#define CD_AVX512 1
#include <immintrin.h>
#endif

/* Two tile shapes: 14 output channels x 32 positions, or 8 x 48 (24 accumulators, fewer loads
 * per FMA) when the channel count is a multiple of 8 that 14 does not divide as well. */
#define CD_MR 14   /* output channels per tile (the larger shape) */
#define CD_NV 32   /* its virtual positions */
#define CD_MR8 8
#define CD_NV8 48
#define CD_SLACK 80 /* zeros after the padded input: the widest tile reads past the last position */

/* The layout of the padded, phase-split input (Note [Direct convolution]). */
typedef struct cd_layout {
    int64_t P[3];     /* padded sizes */
    int64_t Q[3];     /* phase plane sizes: ceil(P / stride) */
    int64_t nph;      /* phase planes per channel */
    int64_t qvol;     /* elements per phase plane */
} cd_layout;

/* output channels per tile for this plan, and its virtual positions per tile */
static int64_t cd_mr(const pct_conv_plan *p)
{
    const int64_t pad14 = (p->cs + CD_MR - 1) / CD_MR * CD_MR, pad8 = (p->cs + CD_MR8 - 1) / CD_MR8 * CD_MR8;
    return pad8 < pad14 ? CD_MR8 : CD_MR;
}

static int64_t cd_nv(const pct_conv_plan *p) { return cd_mr(p) == CD_MR8 ? CD_NV8 : CD_NV; }

static cd_layout layout(const pct_conv_plan *p)
{
    const pct_im2col_geom *g = &p->geo;
    cd_layout l;
    l.nph = 1;
    for (int i = 0; i < 3; i++) {
        l.P[i] = g->big[i] + 2 * g->pad[i];
        /* With stride 1 along the rows, a row's right padding can be the next row's left
         * padding: a tap reading past a row's end reads the next row's first pad columns,
         * which are zeros (the rows of the last plane run into the zeros after the buffer).
         * Each row then carries pad + W columns, and the dropped virtual positions of a
         * 28-wide 3x3 layer fall from 2/30 to 1/29 of the work. (A padding wider than the
         * kernel's span would make output rows longer than that.) */
        if (i == 2 && g->stride[2] == 1 && g->pad[2] <= g->dil[2] * (g->kernel[2] - 1))
            l.P[i] = g->big[i] + g->pad[i];
        l.Q[i] = (l.P[i] + g->stride[i] - 1) / g->stride[i];
        l.nph *= g->stride[i];
    }
    l.qvol = l.Q[0] * l.Q[1] * l.Q[2];
    return l;
}

bool pct_conv_direct_usable(const pct_conv_plan *p)
{
#ifdef CD_AVX512
    if (!p->fast32 || p->direct || p->depthwise) return false;
    /* enough output channels to fill the tiles, enough taps to amortise a tile's store, and
       enough output positions: below 64 (ResNet's 4x4 .. 1x1 stages on 32x32 images) the weight
       packing of every call dominates, 2x (8x8) to 20x (1x1, 512 channels) the batch products of
       conv_gemm.c and conv_batch_columns.c */
    return p->cs >= 8 && p->K >= 16 && p->svol >= 64;
#else
    (void)p;
    return false;
#endif
}

int64_t pct_conv_direct_wpack_size(const pct_conv_plan *p)
{
    const int64_t mr = cd_mr(p);
    return p->G * ((p->cs + mr - 1) / mr) * p->K * mr;
}

int64_t pct_conv_direct_xsize(const pct_conv_plan *p)
{
    const cd_layout l = layout(p);
    return p->cb * l.nph * l.qvol + CD_SLACK;
}

static int64_t vtotal(const pct_conv_plan *p, const cd_layout *l)
{
    const pct_im2col_geom *g = &p->geo;
    return ((g->small[0] - 1) * l->Q[1] + (g->small[1] - 1)) * l->Q[2] + g->small[2];
}

int64_t pct_conv_direct_ntiles(const pct_conv_plan *p)
{
    const cd_layout l = layout(p);
    return (vtotal(p, &l) + cd_nv(p) - 1) / cd_nv(p);
}

/* w [G*cs, cb, kvol] -> per group, blocks of mr output channels: [block][k][mr], zero-padded */
void pct_conv_direct_pack_w(const pct_conv_plan *p, const float *w, float *dst)
{
    const int64_t mr = cd_mr(p), nob = (p->cs + mr - 1) / mr, K = p->K;
    for (int64_t g = 0; g < p->G; g++)
        for (int64_t ob = 0; ob < nob; ob++) {
            float *d = dst + (g * nob + ob) * K * mr;
            for (int64_t i = 0; i < mr; i++) {
                const int64_t o = ob * mr + i;
                const float *src = o < p->cs ? w + (g * p->cs + o) * K : NULL;
                for (int64_t k = 0; k < K; k++) d[k * mr + i] = src ? src[k] : 0.0f;
            }
        }
}

void pct_conv_direct_offsets(const pct_conv_plan *p, int64_t *off)
{
    const pct_im2col_geom *g = &p->geo;
    const cd_layout l = layout(p);
    int64_t k = 0;
    for (int64_t c = 0; c < p->cb; c++)
        for (int64_t kd = 0; kd < g->kernel[0]; kd++)
            for (int64_t kh = 0; kh < g->kernel[1]; kh++)
                for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
                    const int64_t td = kd * g->dil[0], th = kh * g->dil[1], tw = kw * g->dil[2];
                    const int64_t plane = ((td % g->stride[0]) * g->stride[1] + th % g->stride[1]) * g->stride[2]
                                          + tw % g->stride[2];
                    off[k++] = (c * l.nph + plane) * l.qvol
                               + ((td / g->stride[0]) * l.Q[1] + th / g->stride[1]) * l.Q[2] + tw / g->stride[2];
                }
}

/* xp = big (cb channels of one group), zero-padded and split into phase planes, zeros after it */
void pct_conv_direct_pad(const pct_conv_plan *p, const float *big, float *xp)
{
    const pct_im2col_geom *g = &p->geo;
    const cd_layout l = layout(p);
    const int64_t D = g->big[0], H = g->big[1], W = g->big[2];
    const int64_t s0 = g->stride[0], s1 = g->stride[1], s2 = g->stride[2];
    for (int64_t c = 0; c < p->cb; c++) {
        const float *src = big + c * D * H * W;
        for (int64_t a0 = 0; a0 < s0; a0++)
            for (int64_t a1 = 0; a1 < s1; a1++)
                for (int64_t a2 = 0; a2 < s2; a2++) {
                    float *plane = xp + (c * l.nph + (a0 * s1 + a1) * s2 + a2) * l.qvol;
                    /* plane column q holds source column q * s2 + a2 - pw: the valid q range */
                    int64_t lo, hi;
                    pct_conv_valid_range(W, l.Q[2], s2, a2 - g->pad[2], &lo, &hi);
                    for (int64_t qd = 0; qd < l.Q[0]; qd++)
                        for (int64_t qh = 0; qh < l.Q[1]; qh++) {
                            float *row = plane + (qd * l.Q[1] + qh) * l.Q[2];
                            const int64_t sd = qd * s0 + a0 - g->pad[0], sh = qh * s1 + a1 - g->pad[1];
                            if (sd < 0 || sd >= D || sh < 0 || sh >= H || lo >= hi) {
                                memset(row, 0, sizeof(float) * (size_t)l.Q[2]);
                                continue;
                            }
                            const float *srow = src + (sd * H + sh) * W + a2 - g->pad[2];
                            memset(row, 0, sizeof(float) * (size_t)lo);
                            if (s2 == 1) memcpy(row + lo, srow + lo, sizeof(float) * (size_t)(hi - lo));
                            else for (int64_t q = lo; q < hi; q++) row[q] = srow[q * s2];
                            memset(row + hi, 0, sizeof(float) * (size_t)(l.Q[2] - hi));
                        }
                }
    }
    memset(xp + p->cb * l.nph * l.qvol, 0, sizeof(float) * CD_SLACK);
}

/* ---- the weight gradient ------------------------------------------------------------------
 * gW[o][k] = sum over v of gOT[v][o] * xp[v + off[k]], gOT the small tensor moved into virtual
 * positions with channels innermost (zeros at the dropped positions). A tile is 8 taps x 32
 * output channels (16 accumulators: 8 base pointers stay in registers), summed over all v of a
 * sample and added into the accumulator gw [cs][K]. */
#define CD_WT 8    /* taps per weight-gradient tile */
#define CD_WO 32   /* output channels per weight-gradient tile */

static int64_t gld(const pct_conv_plan *p) { return (p->cs + CD_WO - 1) / CD_WO * CD_WO; }

int64_t pct_conv_direct_gsize(const pct_conv_plan *p)
{
    const cd_layout l = layout(p);
    return vtotal(p, &l) * gld(p);
}

int64_t pct_conv_direct_wtiles(const pct_conv_plan *p)
{
    return (p->cs + CD_WO - 1) / CD_WO * ((p->K + CD_WT - 1) / CD_WT);
}

/* gOT [vtot][gld] from small [cs][svol] of one sample and group */
void pct_conv_direct_transpose(const pct_conv_plan *p, const float *small, float *got)
{
    const pct_im2col_geom *g = &p->geo;
    const cd_layout l = layout(p);
    const int64_t ld = gld(p), vtot = vtotal(p, &l), OH = g->small[1], OW = g->small[2], sv = p->svol;
    memset(got, 0, sizeof(float) * (size_t)(vtot * ld));
    for (int64_t pos0 = 0; pos0 < sv; pos0 += 16) {
        const int64_t n = sv - pos0 < 16 ? sv - pos0 : 16;
        int64_t vs[16];
        for (int64_t i = 0; i < n; i++) {
            const int64_t pos = pos0 + i, ow = pos % OW, oh = (pos / OW) % OH, od = pos / (OW * OH);
            vs[i] = ((od * l.Q[1] + oh) * l.Q[2] + ow) * ld;
        }
        for (int64_t o = 0; o < p->cs; o++) {
            const float *src = small + o * sv + pos0;
            for (int64_t i = 0; i < n; i++) got[vs[i] + o] = src[i];
        }
    }
}

#ifdef CD_AVX512
#define CD_TARGET __attribute__((target("avx512f,fma")))

/* One tile: 14 output channels x 32 virtual positions from v0, over all K taps. */
CD_TARGET static void tile(const float *restrict x, const int64_t *restrict off, int64_t K, const float *restrict w,
                           __m512 *acc0, __m512 *acc1)
{
    __m512 c0[CD_MR], c1[CD_MR];
    for (int i = 0; i < CD_MR; i++) {
        c0[i] = _mm512_setzero_ps();
        c1[i] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < K; k++) {
        const float *xk = x + off[k];
        const __m512 x0 = _mm512_loadu_ps(xk), x1 = _mm512_loadu_ps(xk + 16);
        for (int i = 0; i < CD_MR; i++) {
            const __m512 wi = _mm512_set1_ps(w[i]);
            c0[i] = _mm512_fmadd_ps(wi, x0, c0[i]);
            c1[i] = _mm512_fmadd_ps(wi, x1, c1[i]);
        }
        w += CD_MR;
    }
    for (int i = 0; i < CD_MR; i++) {
        acc0[i] = c0[i];
        acc1[i] = c1[i];
    }
}

/* One tile of the other shape: 8 output channels x 48 virtual positions. */
CD_TARGET static void tile8(const float *restrict x, const int64_t *restrict off, int64_t K, const float *restrict w,
                            __m512 *acc0, __m512 *acc1, __m512 *acc2)
{
    __m512 c0[CD_MR8], c1[CD_MR8], c2[CD_MR8];
    for (int i = 0; i < CD_MR8; i++) {
        c0[i] = _mm512_setzero_ps();
        c1[i] = _mm512_setzero_ps();
        c2[i] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < K; k++) {
        const float *xk = x + off[k];
        const __m512 x0 = _mm512_loadu_ps(xk), x1 = _mm512_loadu_ps(xk + 16), x2 = _mm512_loadu_ps(xk + 32);
        for (int i = 0; i < CD_MR8; i++) {
            const __m512 wi = _mm512_set1_ps(w[i]);
            c0[i] = _mm512_fmadd_ps(wi, x0, c0[i]);
            c1[i] = _mm512_fmadd_ps(wi, x1, c1[i]);
            c2[i] = _mm512_fmadd_ps(wi, x2, c2[i]);
        }
        w += CD_MR8;
    }
    for (int i = 0; i < CD_MR8; i++) {
        acc0[i] = c0[i];
        acc1[i] = c1[i];
        acc2[i] = c2[i];
    }
}

/* Tiles [t0, t1) of one sample and group: out [cs, svol] (+ bias [cs]). */
CD_TARGET void pct_conv_direct_run(const pct_conv_plan *p, const float *xp, const float *wpack, const int64_t *off,
                                   const float *bias, float *out, int64_t t0, int64_t t1)
{
    const pct_im2col_geom *g = &p->geo;
    const cd_layout l = layout(p);
    const int64_t Hp = l.Q[1], Wp = l.Q[2], OH = g->small[1], OW = g->small[2];
    const int64_t vtot = vtotal(p, &l), sv = p->svol, K = p->K, cs = p->cs;
    const int64_t mr = cd_mr(p), nv = cd_nv(p), nob = (cs + mr - 1) / mr, nvec = nv / 16;
    __m512 acc[3][CD_MR];
    for (int64_t t = t0; t < t1; t++) {
        const int64_t v0 = t * nv;
        /* which lanes are real output positions, and the output index of the first of them */
        int64_t od = v0 / (Hp * Wp), oh = (v0 / Wp) % Hp, ow = v0 % Wp;
        uint64_t keep = 0;
        int64_t first = -1;
        for (int lane = 0; lane < nv; lane++) {
            if (v0 + lane < vtot && oh < OH && ow < OW) {
                keep |= (uint64_t)1 << lane;
                if (first < 0) first = (od * OH + oh) * OW + ow;
            }
            if (++ow == Wp) {
                ow = 0;
                if (++oh == Hp) {
                    oh = 0;
                    od++;
                }
            }
        }
        if (!keep) continue;
        __mmask16 m[3];
        int64_t at[3];
        for (int j = 0, n = 0; j < 3; j++) {
            m[j] = (__mmask16)((keep >> (16 * j)) & 0xffffu);
            at[j] = n;
            n += __builtin_popcount(m[j]);
        }
        for (int64_t ob = 0; ob < nob; ob++) {
            if (mr == CD_MR) tile(xp + v0, off, K, wpack + ob * K * mr, acc[0], acc[1]);
            else tile8(xp + v0, off, K, wpack + ob * K * mr, acc[0], acc[1], acc[2]);
            const int64_t nvalid = cs - ob * mr < mr ? cs - ob * mr : mr;
            for (int64_t i = 0; i < nvalid; i++) {
                const int64_t o = ob * mr + i;
                float *dst = out + o * sv + first;
                const __m512 b = _mm512_set1_ps(bias ? bias[o] : 0.0f);
                for (int64_t j = 0; j < nvec; j++)
                    _mm512_mask_compressstoreu_ps(dst + at[j], m[j], _mm512_add_ps(acc[j][i], b));
            }
        }
    }
}

/* Weight-gradient tiles [t0, t1) of one sample and group, added into gw [cs][K]. off: the K
 * tap offsets. */
CD_TARGET void pct_conv_direct_wgrad(const pct_conv_plan *p, const float *xp, const float *got, const int64_t *off,
                                     float *gw, int64_t t0, int64_t t1)
{
    const cd_layout l = layout(p);
    const int64_t ld = gld(p), vtot = vtotal(p, &l), K = p->K, cs = p->cs;
    const int64_t nkb = (K + CD_WT - 1) / CD_WT;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t ob = t / nkb, kb = t % nkb, k0 = kb * CD_WT;
        const int64_t nk = K - k0 < CD_WT ? K - k0 : CD_WT;
        const float *x[CD_WT];
        for (int i = 0; i < CD_WT; i++) x[i] = xp + off[k0 + (i < nk ? i : 0)];
        const float *g = got + ob * CD_WO;
        __m512 c0[CD_WT], c1[CD_WT];
        for (int i = 0; i < CD_WT; i++) {
            c0[i] = _mm512_setzero_ps();
            c1[i] = _mm512_setzero_ps();
        }
        for (int64_t v = 0; v < vtot; v++) {
            const __m512 g0 = _mm512_loadu_ps(g + v * ld), g1 = _mm512_loadu_ps(g + v * ld + 16);
            for (int i = 0; i < CD_WT; i++) {
                const __m512 a = _mm512_set1_ps(x[i][v]);
                c0[i] = _mm512_fmadd_ps(a, g0, c0[i]);
                c1[i] = _mm512_fmadd_ps(a, g1, c1[i]);
            }
        }
        float tmp[CD_WT][CD_WO] __attribute__((aligned(64)));
        for (int i = 0; i < CD_WT; i++) {
            _mm512_store_ps(tmp[i], c0[i]);
            _mm512_store_ps(tmp[i] + 16, c1[i]);
        }
        const int64_t no = cs - ob * CD_WO < CD_WO ? cs - ob * CD_WO : CD_WO;
        for (int64_t j = 0; j < no; j++) {
            float *dst = gw + (ob * CD_WO + j) * K + k0;
            for (int64_t i = 0; i < nk; i++) dst[i] += tmp[i][j];
        }
    }
}

#else

void pct_conv_direct_run(const pct_conv_plan *p, const float *xp, const float *wpack, const int64_t *off,
                         const float *bias, float *out, int64_t t0, int64_t t1)
{
    (void)p; (void)xp; (void)wpack; (void)off; (void)bias; (void)out; (void)t0; (void)t1;
}

void pct_conv_direct_wgrad(const pct_conv_plan *p, const float *xp, const float *got, const int64_t *off,
                           float *gw, int64_t t0, int64_t t1)
{
    (void)p; (void)xp; (void)got; (void)off; (void)gw; (void)t0; (void)t1;
}

#endif

/* ---- the runners ---------------------------------------------------------------------------- */

/* fwd and/or wgrad through the direct kernels (Note [Direct convolution]), sharing the padded
 * input of each sample and group. Threads take whole samples (each with its own weight-gradient
 * accumulator, summed in thread order: Note [Convolution threading]) or, with fewer samples
 * than threads, split each sample's tiles. gw: written whole when t->what has PCT_CONV_WGRAD. 0, or
 * -1 when out of memory. */
int pct_conv_direct_task(const pct_conv_task *t, float *gw)
{
    const pct_conv_plan *p = t->p;
    const bool do_f = (t->what & PCT_CONV_FWD) != 0, do_w = (t->what & PCT_CONV_WGRAD) != 0;
    const int nt = pct_conv_threads();
    const int64_t items = p->N * p->G, xsz = pct_conv_direct_xsize(p);
    const int64_t gsz = do_w ? pct_conv_direct_gsize(p) : 0, wsz = do_f ? pct_conv_direct_wpack_size(p) : 0;
    const int64_t ftiles = pct_conv_direct_ntiles(p), wtiles = pct_conv_direct_wtiles(p);
    const int64_t per_g = p->cs * p->K, gwsz = do_w ? p->G * per_g : 0, wpg = wsz / p->G;
    const double per_item = (double)p->cs * (double)p->K * (double)p->svol * (do_f + do_w);
    const bool batch_par = nt > 1 && p->N >= nt && per_item * (double)items >= PCT_CONV_PARALLEL_MIN;
    /* fwd alone pads ROUND items at a time, then threads share their tiles (see below) */
    const bool fwd_only = batch_par && !do_w;
    const int nbuf = fwd_only ? (int)(items < 2 * nt ? items : 2 * nt) : batch_par ? nt : 1;
    /* one scratch block: the tap offsets, then the packed weight, the padded inputs, the
     * transposed small tensors and the extra weight-gradient accumulators */
    const size_t bytes = sizeof(int64_t) * (size_t)p->K
                         + sizeof(float) * (size_t)(wsz + nbuf * (xsz + gsz) + (nbuf - 1) * gwsz);
    char *scratch = pct_conv_scratch_get(bytes);
    if (!scratch) return -1;
    int64_t *off = (int64_t *)scratch;
    float *buf = (float *)(scratch + sizeof(int64_t) * (size_t)p->K);
    float *wpack = buf, *xbuf = buf + wsz, *extra = xbuf + nbuf * (xsz + gsz);
    if (do_f) pct_conv_direct_pack_w(p, (const float *)t->w, wpack);
    pct_conv_direct_offsets(p, off);
    if (do_w) {
        memset(gw, 0, sizeof(float) * (size_t)gwsz);
        if (nbuf > 1) memset(extra, 0, sizeof(float) * (size_t)((nbuf - 1) * gwsz));
    }
    const float *big = (const float *)t->big, *small = (const float *)t->small_in;
    const float *bias = (const float *)t->bias_small;
    float *out = (float *)t->small_out;
    if (fwd_only) {
        /* Rounds of nbuf items: pad them, then hand out chunks of CHUNK tiles of any of them
         * to whichever thread is free (a thread the OS preempts, on a busy machine, delays
         * one chunk, not a fixed share of the batch). Every output tile is still computed by
         * one call, so results do not depend on the thread count. */
        enum { CHUNK = 4 };
        const int64_t chunks = (ftiles + CHUNK - 1) / CHUNK;
        for (int64_t it0 = 0; it0 < items; it0 += nbuf) {
            const int64_t nit = items - it0 < nbuf ? items - it0 : nbuf;
            PCT_OMP(omp parallel num_threads(nt))
            {
                PCT_OMP(omp for schedule(static))
                for (int64_t i = 0; i < nit; i++) pct_conv_direct_pad(p, big + (it0 + i) * p->cb * p->bvol, xbuf + i * xsz);
                PCT_OMP(omp for schedule(dynamic, 1))
                for (int64_t u = 0; u < nit * chunks; u++) {
                    const int64_t i = u / chunks, it = it0 + i, g = it % p->G, t0 = u % chunks * CHUNK;
                    const int64_t t1 = t0 + CHUNK < ftiles ? t0 + CHUNK : ftiles;
                    pct_conv_direct_run(p, xbuf + i * xsz, wpack + g * wpg, off, bias ? bias + g * p->cs : NULL,
                                        out + it * p->cs * p->svol, t0, t1);
                }
            }
        }
    } else if (batch_par) {
        PCT_OMP(omp parallel num_threads(nt))
        {
#ifdef _OPENMP
            const int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
            const int tid = 0, cnt = 1;
#endif
            float *xp = xbuf + tid * (xsz + gsz), *got = xp + xsz;
            float *acc = !do_w ? NULL : tid == 0 ? gw : extra + (tid - 1) * gwsz;
            for (int64_t n = tid; n < p->N; n += cnt)
                for (int64_t g = 0; g < p->G; g++) {
                    const int64_t it = n * p->G + g;
                    pct_conv_direct_pad(p, big + it * p->cb * p->bvol, xp);
                    if (do_f)
                        pct_conv_direct_run(p, xp, wpack + g * wpg, off, bias ? bias + g * p->cs : NULL,
                                            out + it * p->cs * p->svol, 0, ftiles);
                    if (do_w) {
                        pct_conv_direct_transpose(p, small + it * p->cs * p->svol, got);
                        pct_conv_direct_wgrad(p, xp, got, off, acc + g * per_g, 0, wtiles);
                    }
                }
        }
        if (do_w) pct_conv_sum_into(PCT_FLOAT32, (char *)gw, (const char *)extra, gwsz, nbuf - 1);
    } else {
        const bool inner = nt > 1 && per_item >= PCT_CONV_PARALLEL_MIN;
        float *xp = xbuf, *got = xbuf + xsz;
        for (int64_t it = 0; it < items; it++) {
            const int64_t g = it % p->G;
            pct_conv_direct_pad(p, big + it * p->cb * p->bvol, xp);
            if (do_f) {
                const float *wg = wpack + g * wpg, *bg = bias ? bias + g * p->cs : NULL;
                float *og = out + it * p->cs * p->svol;
                if (inner && ftiles >= 2 * nt) {
                    PCT_OMP(omp parallel for schedule(static))
                    for (int64_t tt = 0; tt < ftiles; tt++) pct_conv_direct_run(p, xp, wg, off, bg, og, tt, tt + 1);
                } else {
                    pct_conv_direct_run(p, xp, wg, off, bg, og, 0, ftiles);
                }
            }
            if (do_w) {
                pct_conv_direct_transpose(p, small + it * p->cs * p->svol, got);
                if (inner && wtiles >= nt) {
                    PCT_OMP(omp parallel for schedule(static))
                    for (int64_t tt = 0; tt < wtiles; tt++) pct_conv_direct_wgrad(p, xp, got, off, gw + g * per_g, tt, tt + 1);
                } else {
                    pct_conv_direct_wgrad(p, xp, got, off, gw + g * per_g, 0, wtiles);
                }
            }
        }
    }
    pct_conv_scratch_put(scratch, bytes);
    return 0;
}

bool pct_conv_data_as_fwd(const pct_conv_plan *p, pct_conv_plan *q)
{
    *q = *p;
    pct_im2col_geom *g = &q->geo;
    for (int i = 0; i < 3; i++) {
        const int64_t span = p->geo.dil[i] * (p->geo.kernel[i] - 1);
        if (p->geo.stride[i] != 1 || p->geo.pad[i] > span) return false;
        g->big[i] = p->geo.small[i];
        g->small[i] = p->geo.big[i];
        g->pad[i] = span - p->geo.pad[i];
        /* the output padding of a transposed convolution has no direct counterpart */
        if (g->big[i] + 2 * g->pad[i] - span != g->small[i]) return false;
    }
    q->cb = p->cs;
    q->cs = p->cb;
    g->channels = q->cb;
    q->bvol = p->svol;
    q->svol = p->bvol;
    q->K = q->cb * q->kvol;
    return true;
}

/* data of a stride-1 problem as the fwd of the padded small tensor with the flipped,
 * transposed weight (Note [Direct convolution]); 1 when it ran, 0 when it does not apply,
 * -1 when out of memory. */
int pct_conv_direct_data(const pct_conv_task *t)
{
    const pct_conv_plan *p = t->p;
    pct_conv_plan q;
    if (!pct_conv_data_as_fwd(p, &q)) return 0;
    if (!pct_conv_direct_usable(&q)) return 0;
    const int64_t G = p->G, cs = p->cs, cb = p->cb, kv = p->kvol;
    const size_t wbytes = sizeof(float) * (size_t)(G * cs * cb * kv);
    float *wf = pct_conv_scratch_get(wbytes);
    if (!wf) return -1;
    const float *w = (const float *)t->w;
    for (int64_t gg = 0; gg < G; gg++)          /* wf[g*cb + c][o][k] = w[g*cs + o][c][kvol - 1 - k] */
        for (int64_t o = 0; o < cs; o++)
            for (int64_t c = 0; c < cb; c++)
                for (int64_t k = 0; k < kv; k++)
                    wf[((gg * cb + c) * cs + o) * kv + k] = w[((gg * cs + o) * cb + c) * kv + kv - 1 - k];
    pct_conv_task u = {&q, PCT_CONV_FWD, t->small_in, NULL, (const char *)wf, t->bias_big, NULL, t->big_out, NULL};
    const int rc = pct_conv_direct_task(&u, NULL);
    pct_conv_scratch_put(wf, wbytes);
    return rc < 0 ? -1 : 1;
}
