/* conv_batch_columns.c: the im2col + GEMM engine's products for small images, with the
 * columns of the whole batch in one matrix.
 *
 * Note [Batch columns]
 * The engine (conv_engine.c) works sample by sample. On small images (ResNet's later stages on
 * 32x32 inputs: 8x8 down to 1x1 positions per sample) that makes every product thin: the
 * weight gradient of one sample, gW[cs, K] += dY_n[cs, pos] @ col_n[K, pos]^T, has an inner
 * dimension of a few positions, so each of the N products reads and writes all of gW (9.4 MB
 * for a 512 -> 512 3x3 layer) to add a rank-1 or rank-4 update. Here the columns of every
 * sample sit side by side, col[K, (n, pos)], and each primitive is one product over the batch:
 *     fwd    Y[cs, (n, pos)]  = W[cs, K] @ col[K, (n, pos)]
 *     wgrad  gW[cs, K]        = dY[cs, (n, pos)] @ col[K, (n, pos)]^T
 *     data   col'[K, (n, pos)] = W[cs, K]^T @ dY[cs, (n, pos)], then col2im
 * where Y and dY, NCHW in memory, are copied to and from their [cs, (n, pos)] form (small: that
 * is what makes the case). The columns are read and scattered through the tap table, and K runs
 * over the live rows only (Note [Tap table], Note [Live taps], conv_taps.c): the weight then
 * enters as its live columns, and the weight gradient's dead columns stay zero. The products
 * run threaded inside pct_gemm. */
#include "blas.h"
#include "conv.h"
#include <string.h>

/* positions per sample below which the batch's columns are joined, and the most scratch to use (the
 * live copies of a 512 -> 512 3x3 weight and its gradient alone are 2 x 9.4 MB) */
#define BATCH_COLUMNS_MAX_SVOL 64
#define BATCH_COLUMNS_MAX_BYTES ((int64_t)96 << 20)

/* What the column loops of one group need. */
typedef struct bc_geom {
    const pct_conv_plan *p;
    const int32_t *taps, *kmap; /* kmap: product row -> im2col row, or NULL (the same) */
    int64_t rows, g;            /* product rows (live im2col rows), the group */
} bc_geom;

/* col[r, (n, pos)] = big[n][g][c][taps[t][pos]] (0 on padding); or (add) the adjoint, big += col */
#define BC_COLUMN_LOOP(T)                                                                          \
    static void columns_##T(const bc_geom *x, T *big, T *col, bool add)                            \
    {                                                                                              \
        const pct_conv_plan *p = x->p;                                                             \
        const int64_t sv = p->svol, ns = p->N * sv;                                                \
        for (int64_t r = 0; r < x->rows; r++) {                                                    \
            const int64_t row = x->kmap ? x->kmap[r] : r, c = row / p->kvol;                       \
            const int32_t *tab = x->taps + (row % p->kvol) * sv;                                   \
            for (int64_t n = 0; n < p->N; n++) {                                                   \
                T *plane = big + ((n * p->G + x->g) * p->cb + c) * p->bvol, *d = col + r * ns + n * sv; \
                for (int64_t pos = 0; pos < sv; pos++) {                                           \
                    if (add && tab[pos] >= 0) plane[tab[pos]] += d[pos];                           \
                    else if (!add) d[pos] = tab[pos] >= 0 ? plane[tab[pos]] : (T)0;                \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
BC_COLUMN_LOOP(float)
BC_COLUMN_LOOP(double)

/* the columns of big (add false; big is only read), or the columns added back into big */
static void columns(const bc_geom *x, char *big, char *col, bool add)
{
    if (x->p->dtype == PCT_FLOAT64) columns_double(x, (double *)big, (double *)col, add);
    else columns_float(x, (float *)big, (float *)col, add);
}

/* dst[o, (n, pos)] <-> NCHW src[n][g][o][pos] of one group g (to_nchw: the other way, plus bias) */
static void regroup(const pct_conv_plan *p, int64_t g, char *mat, char *nchw, bool to_nchw, const char *bias)
{
    const int isz = pct_dtype_itemsize[p->dtype];
    const int64_t cs = p->cs, sv = p->svol, ns = p->N * sv;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t o = 0; o < cs; o++) {
            char *m = mat + (o * ns + n * sv) * isz, *t = nchw + ((n * p->G + g) * cs + o) * sv * isz;
            if (!to_nchw) {
                memcpy(m, t, (size_t)(sv * isz));
            } else if (!bias) {
                memcpy(t, m, (size_t)(sv * isz));
            } else if (p->dtype == PCT_FLOAT64) {
                const double b = ((const double *)bias)[g * cs + o];
                for (int64_t i = 0; i < sv; i++) ((double *)t)[i] = ((double *)m)[i] + b;
            } else {
                const float b = ((const float *)bias)[g * cs + o];
                for (int64_t i = 0; i < sv; i++) ((float *)t)[i] = ((float *)m)[i] + b;
            }
        }
}

/* dst[o, r] = src[o, kmap[r]] (to_live), or src[o, r] into dst[o, kmap[r]]: columns of a [cs, K] matrix */
#define BC_LIVE_COLUMNS(T)                                                                                    \
    static void live_columns_##T(const pct_conv_plan *p, const int32_t *kmap, int64_t rows, const T *src, T *dst, \
                                 bool to_live)                                                                \
    {                                                                                                         \
        for (int64_t o = 0; o < p->cs; o++) {                                                                 \
            const T *s = src + o * (to_live ? p->K : rows);                                                   \
            T *d = dst + o * (to_live ? rows : p->K);                                                         \
            if (to_live)                                                                                      \
                for (int64_t r = 0; r < rows; r++) d[r] = s[kmap[r]];                                         \
            else                                                                                              \
                for (int64_t r = 0; r < rows; r++) d[kmap[r]] = s[r];                                         \
        }                                                                                                     \
    }
BC_LIVE_COLUMNS(float)
BC_LIVE_COLUMNS(double)

static void live_columns(const pct_conv_plan *p, const int32_t *kmap, int64_t rows, const char *src, char *dst,
                         bool to_live)
{
    if (p->dtype == PCT_FLOAT64) live_columns_double(p, kmap, rows, (const double *)src, (double *)dst, to_live);
    else live_columns_float(p, kmap, rows, (const float *)src, (float *)dst, to_live);
}

bool pct_conv_batch_columns_usable(const pct_conv_plan *p)
{
    if ((p->dtype != PCT_FLOAT32 && p->dtype != PCT_FLOAT64) || p->acc_dtype != p->dtype || p->depthwise)
        return false;
    if (p->N < 2 || p->svol >= BATCH_COLUMNS_MAX_SVOL || p->K == 0 || p->cs == 0 || !pct_conv_tap_table_fits(p))
        return false;
    const double ns = (double)(p->N * p->svol), k = (double)p->K, cs = (double)p->cs;
    const double bytes = ((k + cs) * ns + 2 * cs * k) * pct_dtype_itemsize[p->dtype];
    return bytes <= (double)BATCH_COLUMNS_MAX_BYTES;
}

int pct_conv_batch_columns_run(const pct_conv_task *t, char *gw_out)
{
    const pct_conv_plan *p = t->p;
    const int dt = p->dtype, isz = pct_dtype_itemsize[dt];
    const int64_t G = p->G, cb = p->cb, cs = p->cs, K = p->K, bv = p->bvol, ns = p->N * p->svol;
    int32_t *taps = pct_conv_tap_table(p);
    if (!taps) return -1;
    int64_t kl = K;
    int32_t *kmap = pct_conv_live_rows(p, taps, &kl);
    /* scratch: columns [kl, ns], Y or dY as [cs, (n, pos)], and with kmap the live columns of the weight and
       of its gradient, [cs, kl] each */
    const size_t col_bytes = (size_t)(kl * ns * isz), mat_bytes = (size_t)(cs * ns * isz);
    const size_t live_bytes = kmap ? (size_t)(cs * kl * isz) : 0, bytes = col_bytes + mat_bytes + 2 * live_bytes;
    char *col = pct_conv_scratch_get(bytes);
    if (!col) {
        pct_conv_live_rows_free(kmap, kl);
        pct_conv_tap_table_free(p, taps);
        return -1;
    }
    char *mat = col + col_bytes, *wlive = kmap ? mat + mat_bytes : NULL, *gwlive = kmap ? wlive + live_bytes : NULL;
    int err = 0;
    if (t->what & PCT_CONV_DATA)
        for (int64_t n = 0; n < p->N; n++) { /* the data columns add into big_out: start from the bias, or zero */
            char *b = t->big_out + n * G * cb * bv * isz;
            if (!t->bias_big) {
                memset(b, 0, (size_t)(G * cb * bv * isz));
                continue;
            }
            for (int64_t c = 0; c < G * cb; c++)
                for (int64_t i = 0; i < bv; i++) memcpy(b + (c * bv + i) * isz, t->bias_big + c * isz, (size_t)isz);
        }
    for (int64_t g = 0; g < G && !err; g++) {
        const bc_geom x = {p, taps, kmap, kl, g};
        const char *w = t->w + g * cs * K * isz; /* the weight as [cs, kl] */
        if (kmap && (t->what & (PCT_CONV_FWD | PCT_CONV_DATA))) {
            live_columns(p, kmap, kl, w, wlive, true);
            w = wlive;
        }
        if (t->what & (PCT_CONV_FWD | PCT_CONV_WGRAD)) columns(&x, (char *)t->big, col, false);
        if (t->what & PCT_CONV_FWD) {
            err |= pct_gemm(dt, cs, ns, kl, 1.0, w, kl, 1, col, ns, 1, 0.0, mat, ns, 1);
            regroup(p, g, mat, t->small_out, true, t->bias_small);
        }
        if (t->what & (PCT_CONV_WGRAD | PCT_CONV_DATA)) regroup(p, g, mat, (char *)t->small_in, false, NULL);
        if (t->what & PCT_CONV_WGRAD) {
            /* gW's live columns: straight into it, or apart and spread (the rest stays zero) */
            char *gw = gw_out + g * cs * K * isz, *out = kmap ? gwlive : gw;
            err |= pct_gemm(dt, cs, kl, ns, 1.0, mat, ns, 1, col, 1, ns, 0.0, out, kl, 1);
            if (kmap) live_columns(p, kmap, kl, gwlive, gw, false);
        }
        if (t->what & PCT_CONV_DATA) {
            err |= pct_gemm(dt, kl, ns, cs, 1.0, w, 1, kl, mat, ns, 1, 0.0, col, ns, 1);
            columns(&x, t->big_out, col, true);
        }
    }
    pct_conv_scratch_put(col, bytes);
    pct_conv_live_rows_free(kmap, kl);
    pct_conv_tap_table_free(p, taps);
    return err ? -1 : 0;
}
