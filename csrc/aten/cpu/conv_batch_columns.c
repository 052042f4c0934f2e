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
 *     data   col'[K, (n, pos)] = W[cs, K]^T @ dY[cs, (n, pos)], then col2im per sample
 * where Y and dY, NCHW in memory, are copied to and from their [cs, (n, pos)] form (small: that
 * is what makes the case). The products run threaded inside pct_gemm. */
#include "blas.h"
#include "conv.h"
#include <string.h>

/* positions per sample below which the batch's columns are joined, and the most scratch to use */
#define BATCH_COLUMNS_MAX_SVOL 64
#define BATCH_COLUMNS_MAX_BYTES ((int64_t)32 << 20)

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

bool pct_conv_batch_columns_usable(const pct_conv_plan *p)
{
    if ((p->dtype != PCT_FLOAT32 && p->dtype != PCT_FLOAT64) || p->acc_dtype != p->dtype || p->depthwise)
        return false;
    if (p->N < 2 || p->svol >= BATCH_COLUMNS_MAX_SVOL || p->K == 0 || p->cs == 0) return false;
    const double bytes = (double)(p->K + p->cs) * (double)(p->N * p->svol) * pct_dtype_itemsize[p->dtype];
    return bytes <= (double)BATCH_COLUMNS_MAX_BYTES;
}

int pct_conv_batch_columns_run(const pct_conv_task *t, char *gw_out)
{
    const pct_conv_plan *p = t->p;
    const int dt = p->dtype, isz = pct_dtype_itemsize[dt];
    const int64_t G = p->G, cb = p->cb, cs = p->cs, K = p->K, sv = p->svol, bv = p->bvol, ns = p->N * sv;
    const size_t col_bytes = (size_t)(K * ns * isz), mat_bytes = (size_t)(cs * ns * isz);
    char *col = pct_conv_scratch_get(col_bytes + mat_bytes);
    if (!col) return -1;
    char *mat = col + col_bytes; /* Y or dY as [cs, (n, pos)] */
    int err = 0;
    if (t->what & PCT_CONV_DATA)
        for (int64_t n = 0; n < p->N; n++) { /* col2im adds into big_out: start from the bias, or zero */
            char *b = t->big_out + n * G * cb * bv * isz;
            if (!t->bias_big) {
                memset(b, 0, (size_t)(G * cb * bv * isz));
                continue;
            }
            for (int64_t c = 0; c < G * cb; c++)
                for (int64_t i = 0; i < bv; i++) memcpy(b + (c * bv + i) * isz, t->bias_big + c * isz, (size_t)isz);
        }
    for (int64_t g = 0; g < G && !err; g++) {
        const char *wg = t->w + g * cs * K * isz;
        if (t->what & (PCT_CONV_FWD | PCT_CONV_WGRAD))
            for (int64_t n = 0; n < p->N; n++)
                pct_im2col(&p->geo, isz, t->big + (n * G + g) * cb * bv * isz, col + n * sv * isz, ns, 0, cb, 0, sv);
        if (t->what & PCT_CONV_FWD) {
            err |= pct_gemm(dt, cs, ns, K, 1.0, wg, K, 1, col, ns, 1, 0.0, mat, ns, 1);
            regroup(p, g, mat, t->small_out, true, t->bias_small);
        }
        if (t->what & (PCT_CONV_WGRAD | PCT_CONV_DATA)) regroup(p, g, mat, (char *)t->small_in, false, NULL);
        if (t->what & PCT_CONV_WGRAD)
            err |= pct_gemm(dt, cs, K, ns, 1.0, mat, ns, 1, col, 1, ns, 0.0, gw_out + g * cs * K * isz, K, 1);
        if (t->what & PCT_CONV_DATA) {
            err |= pct_gemm(dt, K, ns, cs, 1.0, wg, 1, K, mat, ns, 1, 0.0, col, ns, 1);
            for (int64_t n = 0; n < p->N; n++)
                pct_col2im(&p->geo, dt, col + n * sv * isz, ns, t->big_out + (n * G + g) * cb * bv * isz, 0, cb, 0, sv);
        }
    }
    pct_conv_scratch_put(col, col_bytes + mat_bytes);
    return err ? -1 : 0;
}
