/* conv_depthwise_impl.h: the depthwise convolution's plane loops, forward and both backwards, for one dtype (DW_NM:
 * the functions' suffix, DW_T: the dtype, DW_IT: the index type).
 * Included by conv_depthwise.c once per instantiation, with
 *   DW_NM, DW_T, DW_IT defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define DW_NAME(base) PCT_TPL_CAT(base, DW_NM) /* base, then DW_NM: a function's name */

static inline void DW_NAME(axpy_)(DW_T *restrict y, const DW_T *restrict x, DW_T a, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}
/* small plane += conv(big plane, taps wk) */
PCT_HOT static void DW_NAME(fwd_plane_)(const pct_im2col_geom *g, const DW_T *big, const DW_T *wk, DW_T *small)
{
    DW_WALK({
        const DW_T wv = wk[k];
        if (sw == 1) DW_NAME(axpy_)(small + srow + lo, big + brow + lo + off, wv, hi - lo);
        else for (int64_t ow = lo; ow < hi; ow++) small[srow + ow] += wv * big[brow + ow * sw + off];
    })
}
/* big plane += conv^T(small plane, taps wk) */
PCT_HOT static void DW_NAME(data_plane_)(const pct_im2col_geom *g, const DW_T *small, const DW_T *wk, DW_T *big)
{
    DW_WALK({
        const DW_T wv = wk[k];
        if (sw == 1) DW_NAME(axpy_)(big + brow + lo + off, small + srow + lo, wv, hi - lo);
        else for (int64_t ow = lo; ow < hi; ow++) big[brow + ow * sw + off] += wv * small[srow + ow];
    })
}
/* acc[k] += sum over positions of small * big shifted by tap k: one vector of lanes per tap
 * summed over the whole plane (GCC vector types: zmm in the AVX-512 clone), reduced once at
 * its end */
typedef DW_T DW_NAME(vec_) __attribute__((vector_size(64)));
typedef DW_IT DW_NAME(ivec_) __attribute__((vector_size(64)));
PCT_HOT static void DW_NAME(wgrad_plane_)(const pct_im2col_geom *g, const DW_T *big, const DW_T *small, double *acc)
{
    enum { L = 64 / sizeof(DW_T) };
    DW_NAME(vec_) lane[PCT_DW_MAX_KVOL];
    DW_NAME(ivec_) idx;
    for (int j = 0; j < L; j++) idx[j] = j;
    const int64_t kv = g->kernel[0] * g->kernel[1] * g->kernel[2];
    DW_T rest[PCT_DW_MAX_KVOL];
    for (int64_t k = 0; k < kv; k++) {
        lane[k] = (DW_NAME(vec_)){0};
        rest[k] = 0;
    }
    DW_WALK({
        const DW_T *x = small + srow;
        const DW_T *y = big + brow + off;
        if (sw == 1 && hi - lo >= L) {
            DW_NAME(vec_) a = lane[k], xv, yv;
            int64_t i = lo;
            for (; i + L <= hi; i += L) {
                memcpy(&xv, x + i, sizeof xv);
                memcpy(&yv, y + i, sizeof yv);
                a += xv * yv;
            }
            if (i < hi) { /* the tail: the row's last L, without the lanes already summed */
                const DW_NAME(ivec_) keep = idx >= (DW_IT)(L - (hi - i));
                memcpy(&xv, x + hi - L, sizeof xv);
                memcpy(&yv, y + hi - L, sizeof yv);
                a += (DW_NAME(vec_))((DW_NAME(ivec_))(xv * yv) & keep);
            }
            lane[k] = a;
        } else {
            for (int64_t ow = lo; ow < hi; ow++) rest[k] += x[ow] * y[ow * sw];
        }
    })
    for (int64_t k = 0; k < kv; k++) {
        double t = (double)rest[k];
        for (int j = 0; j < L; j++) t += (double)lane[k][j];
        acc[k] += t;
    }
}
/* The row-blocked form of a 2-d plane with stride 1 along the rows (Note [Depthwise rows]):
 * out[oh][ow] (+)= b0 + sum_kh,kw wk[kh][kw] * xp[(oh * sh + kh * dh) * Wp + ow + kw * dw],
 * xp a zero-padded plane followed by 4 vectors of readable slack; tmp: a row of vectors. */
PCT_HOT static void DW_NAME(rows_)(const DW_T *xp, int64_t Wp, const DW_T *wk, int64_t KH, int64_t KW,
                                   int64_t dh, int64_t dw, int64_t sh, DW_T b0, bool accumulate,
                                   DW_T *out, int64_t OH, int64_t OW, DW_T *tmp)
{
    enum { L = 64 / sizeof(DW_T) };
    const int64_t nv = (OW + L - 1) / L;
    for (int64_t oh = 0; oh < OH; oh++) {
        DW_T *orow = out + oh * OW;
        const DW_T *base = xp + oh * sh * Wp;
        if (accumulate) memcpy(tmp, orow, sizeof(DW_T) * (size_t)OW);
        /* four vectors at a time: independent sums hide the FMA latency */
        for (int64_t j0 = 0; j0 < nv; j0 += 4) {
            const int64_t nj = nv - j0 < 4 ? nv - j0 : 4;
            DW_NAME(vec_) acc[4], xv;
            for (int64_t j = 0; j < 4; j++) {
                acc[j] = (DW_NAME(vec_)){0} + b0;
                if (accumulate && j < nj) {
                    memcpy(&xv, tmp + (j0 + j) * L, sizeof xv);
                    acc[j] += xv;
                }
            }
            for (int64_t kh = 0; kh < KH; kh++) {
                const DW_T *r = base + kh * dh * Wp + j0 * L;
                for (int64_t kw = 0; kw < KW; kw++) {
                    const DW_T wv = wk[kh * KW + kw];
                    for (int64_t j = 0; j < 4; j++) {
                        memcpy(&xv, r + kw * dw + j * L, sizeof xv);
                        acc[j] += wv * xv;
                    }
                }
            }
            for (int64_t j = 0; j < nj; j++) memcpy(tmp + (j0 + j) * L, &acc[j], sizeof acc[j]);
        }
        memcpy(orow, tmp, sizeof(DW_T) * (size_t)OW);
    }
}
/* xp [Hp][Wp] = plane [H][W] placed at (ph, pw), zeros around it and `slack` zeros after */
static void DW_NAME(pad_plane_)(const DW_T *plane, int64_t H, int64_t W, int64_t ph, int64_t pw,
                           int64_t Hp, int64_t Wp, int64_t slack, DW_T *xp)
{
    memset(xp, 0, sizeof(DW_T) * (size_t)(Hp * Wp + slack));
    for (int64_t h = 0; h < H; h++) {
        const int64_t dh = h + ph;
        if (dh < 0 || dh >= Hp) continue;
        const int64_t w0 = pw < 0 ? -pw : 0, w1 = W < Wp - pw ? W : Wp - pw;
        if (w1 > w0) memcpy(xp + dh * Wp + w0 + pw, plane + h * W + w0, sizeof(DW_T) * (size_t)(w1 - w0));
    }
}
static void DW_NAME(fwd_one_)(const pct_conv_plan *p, const DW_T *big, const DW_T *w, const DW_T *bias, DW_T *small, int64_t i)
{
    const int64_t C = p->G * p->cs, n = i / C, o = i % C, g = o / p->cs;
    DW_T *out = small + i * p->svol;
    const DW_T b0 = bias ? bias[o] : (DW_T)0;
    for (int64_t j = 0; j < p->svol; j++) out[j] = b0;
    DW_NAME(fwd_plane_)(&p->geo, big + (n * p->G + g) * p->bvol, w + o * p->kvol, out);
}
static void DW_NAME(data_one_)(const pct_conv_plan *p, const DW_T *small, const DW_T *w, const DW_T *bias, DW_T *big, int64_t i)
{
    const int64_t n = i / p->G, g = i % p->G;
    DW_T *out = big + i * p->bvol;
    const DW_T b0 = bias ? bias[g] : (DW_T)0;
    for (int64_t j = 0; j < p->bvol; j++) out[j] = b0;
    for (int64_t m = 0; m < p->cs; m++) {
        const int64_t o = g * p->cs + m;
        DW_NAME(data_plane_)(&p->geo, small + (n * p->G * p->cs + o) * p->svol, w + o * p->kvol, out);
    }
}
/* gw[o, :] = sum over the batch (kvol <= PCT_DW_MAX_KVOL: accumulated in double) */
static void DW_NAME(wgrad_one_)(const pct_conv_plan *p, const DW_T *big, const DW_T *small, DW_T *gw, int64_t o)
{
    double acc[PCT_DW_MAX_KVOL] = {0};
    const int64_t g = o / p->cs, C = p->G * p->cs;
    for (int64_t n = 0; n < p->N; n++)
        DW_NAME(wgrad_plane_)(&p->geo, big + (n * p->G + g) * p->bvol, small + (n * C + o) * p->svol, acc);
    for (int64_t k = 0; k < p->kvol; k++) gw[o * p->kvol + k] = (DW_T)acc[k];
}
/* fwd / data of one plane through rows_ when dims allow (a 2-d or 1-d problem, stride 1
 * along the rows; data also needs stride 1 and no output padding): buf holds the padded
 * plane and a row; returns false when the old loops must run. */
static bool DW_NAME(fwd_rows_)(const pct_conv_plan *p, const DW_T *big, const DW_T *w, const DW_T *bias, DW_T *small,
                          int64_t i, DW_T *buf, int64_t bufsz)
{
    const pct_im2col_geom *g = &p->geo;
    const int64_t C = p->G * p->cs, n = i / C, o = i % C, gr = o / p->cs;
    const int64_t Hp = g->big[1] + 2 * g->pad[1], Wp = g->big[2] + 2 * g->pad[2];
    const int64_t L = 64 / (int64_t)sizeof(DW_T), rowsz = (g->small[2] + L - 1) / L * L;
    if (Hp * Wp + 4 * L + rowsz > bufsz) return false;
    DW_T *xp = buf, *tmp = buf + Hp * Wp + 4 * L;
    DW_NAME(pad_plane_)(big + (n * p->G + gr) * p->bvol, g->big[1], g->big[2], g->pad[1], g->pad[2], Hp, Wp, 4 * L, xp);
    DW_NAME(rows_)(xp, Wp, w + o * p->kvol, g->kernel[1], g->kernel[2], g->dil[1], g->dil[2], g->stride[1],
              bias ? bias[o] : (DW_T)0, false, small + i * p->svol, g->small[1], g->small[2], tmp);
    return true;
}
static bool DW_NAME(data_rows_)(const pct_conv_plan *p, const DW_T *small, const DW_T *w, const DW_T *bias, DW_T *big,
                           int64_t i, DW_T *buf, int64_t bufsz)
{
    const pct_im2col_geom *g = &p->geo;
    const int64_t n = i / p->G, gr = i % p->G, KH = g->kernel[1], KW = g->kernel[2];
    const int64_t ph = g->dil[1] * (KH - 1) - g->pad[1], pw = g->dil[2] * (KW - 1) - g->pad[2];
    const int64_t Hp = g->small[1] + 2 * ph, Wp = g->small[2] + 2 * pw;
    const int64_t L = 64 / (int64_t)sizeof(DW_T), rowsz = (g->big[2] + L - 1) / L * L;
    if (Hp * Wp + 4 * L + rowsz + PCT_DW_MAX_KVOL > bufsz) return false;
    DW_T *xp = buf, *tmp = buf + Hp * Wp + 4 * L, *wf = tmp + rowsz;
    DW_T *out = big + i * p->bvol;
    for (int64_t m = 0; m < p->cs; m++) {
        const int64_t o = gr * p->cs + m;
        for (int64_t k = 0; k < p->kvol; k++) wf[k] = w[o * p->kvol + p->kvol - 1 - k];
        DW_NAME(pad_plane_)(small + (n * p->G * p->cs + o) * p->svol, g->small[1], g->small[2], ph, pw, Hp, Wp,
                       4 * L, xp);
        DW_NAME(rows_)(xp, Wp, wf, KH, KW, g->dil[1], g->dil[2], 1, m == 0 && bias ? bias[gr] : (DW_T)0, m > 0,
                  out, g->big[1], g->big[2], tmp);
    }
    return true;
}
/* floats of per-thread buffer the row forms need (0: they do not apply) */
static int64_t DW_NAME(rows_buf_)(const pct_conv_plan *p, bool data)
{
    const pct_im2col_geom *g = &p->geo;
    const int64_t L = 64 / (int64_t)sizeof(DW_T);
    if (g->big[0] != 1 || g->kernel[0] != 1 || g->small[0] != 1 || g->stride[2] != 1) return 0;
    if (!data) {
        const int64_t Hp = g->big[1] + 2 * g->pad[1], Wp = g->big[2] + 2 * g->pad[2];
        return Hp * Wp + 4 * L + (g->small[2] + L - 1) / L * L;
    }
    if (g->stride[1] != 1) return 0;
    int64_t Pp[3];
    for (int d = 1; d < 3; d++) {
        const int64_t span = g->dil[d] * (g->kernel[d] - 1), pad = span - g->pad[d];
        if (pad < 0 || g->small[d] + 2 * pad - span != g->big[d]) return 0;
        Pp[d] = g->small[d] + 2 * pad;
    }
    return Pp[1] * Pp[2] + 4 * L + (g->big[2] + L - 1) / L * L + PCT_DW_MAX_KVOL;
}
/* fwd (data false: planes (n, output channel) of small) or data (planes (n, group) of big),
 * each plane through the row form when it applies, else the tap loops */
static void DW_NAME(dw_planes_)(const pct_conv_plan *p, bool data, const DW_T *src, const DW_T *w, const DW_T *bias, DW_T *dst)
{
    const int64_t cnt = data ? p->N * p->G : p->N * p->G * p->cs, bsz = DW_NAME(rows_buf_)(p, data);
    const bool par = use_threads((double)p->N * (double)p->G * (double)p->cs * (double)p->svol * (double)p->kvol);
    const int nt = par ? dw_threads() : 1;
    DW_T *buf = bsz ? pct_conv_scratch_get(sizeof(DW_T) * (size_t)(bsz * nt)) : NULL;
    PCT_OMP(omp parallel for schedule(static) if (par))
    for (int64_t i = 0; i < cnt; i++) {
        DW_T *b = buf ? buf + dw_tid() * bsz : NULL;
        if (data) {
            if (!b || !DW_NAME(data_rows_)(p, src, w, bias, dst, i, b, bsz)) DW_NAME(data_one_)(p, src, w, bias, dst, i);
        } else {
            if (!b || !DW_NAME(fwd_rows_)(p, src, w, bias, dst, i, b, bsz)) DW_NAME(fwd_one_)(p, src, w, bias, dst, i);
        }
    }
    pct_conv_scratch_put(buf, sizeof(DW_T) * (size_t)(bsz * nt));
}
static void DW_NAME(dw_wgrad_)(const pct_conv_plan *p, const DW_T *big, const DW_T *small, DW_T *gw)
{
    const int64_t cnt = p->G * p->cs;
    PCT_OMP(omp parallel for schedule(static) if (use_threads((double)p->N * (double)cnt * (double)p->svol * (double)p->kvol)))
    for (int64_t o = 0; o < cnt; o++) DW_NAME(wgrad_one_)(p, big, small, gw, o);
}

#undef DW_NAME
#undef DW_NM
#undef DW_T
#undef DW_IT
