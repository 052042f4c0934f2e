/* conv_taps.c: where each kernel tap of a convolution reads its input on small images, and which
 * taps read anything at all; shared by the batch products of conv_gemm.c and conv_batch_columns.c.
 *
 * Note [Tap table]
 * On small images (output rows shorter than one 16-lane vector: ResNet's later stages on 32x32
 * inputs have 8x8 down to 1x1) finding each output row's valid run costs more than moving it.
 * There a table is built once per call: for each kernel tap and output position, the offset of
 * its input element within a channel plane, or -1 where it falls on padding. An im2col row
 * (channel c, tap t) of a sample is then plane c read through row t of the table, and col2im the
 * same scattered back.
 *
 * Note [Live taps]
 * On the smallest images some taps fall on padding for every output position (a 3x3 tap off the
 * centre on a 1x1 image: 8 of 9). Their im2col rows are zero, so the products leave them out:
 * their reduction runs over the live (channel, tap) rows only, through a map from product row to
 * im2col row (a weight gradient's dead columns are then zero). The 512 -> 512 layer of ResNet-18
 * at 1x1 multiplies 9x less. */
#include "conv.h"
#include <stdbool.h>

int32_t *pct_conv_tap_table(const pct_conv_plan *p)
{
    const pct_im2col_geom *g = &p->geo;
    int32_t *tab = pct_conv_scratch_get(sizeof(int32_t) * (size_t)(p->kvol * p->svol));
    if (!tab) return NULL;
    const int64_t KH = g->kernel[1], KW = g->kernel[2], OH = g->small[1], OW = g->small[2];
    for (int64_t t = 0; t < p->kvol; t++) {
        const int64_t kd = t / (KH * KW), kh = (t / KW) % KH, kw = t % KW;
        for (int64_t pos = 0; pos < p->svol; pos++) {
            const int64_t od = pos / (OH * OW), oh = (pos / OW) % OH, ow = pos % OW;
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
            const int64_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dil[2];
            const bool inside = id >= 0 && id < g->big[0] && ih >= 0 && ih < g->big[1] && iw >= 0 && iw < g->big[2];
            tab[t * p->svol + pos] = inside ? (int32_t)((id * g->big[1] + ih) * g->big[2] + iw) : -1;
        }
    }
    return tab;
}

bool pct_conv_tap_table_fits(const pct_conv_plan *p)
{
    return p->svol * p->kvol <= INT32_MAX && p->bvol <= INT32_MAX && p->K <= INT32_MAX;
}

int32_t *pct_conv_live_rows(const pct_conv_plan *p, const int32_t *taps, int64_t *count)
{
    int64_t nlive = 0;
    bool live[p->kvol > 0 ? p->kvol : 1];
    for (int64_t t = 0; t < p->kvol; t++) {
        live[t] = false;
        for (int64_t pos = 0; pos < p->svol && !live[t]; pos++) live[t] = taps[t * p->svol + pos] >= 0;
        nlive += live[t];
    }
    *count = p->K;
    if (nlive == p->kvol || nlive == 0) return NULL; /* nothing to leave out; or all of it (the full product) */
    int32_t *map = pct_conv_scratch_get(sizeof(int32_t) * (size_t)(p->cb * nlive));
    if (!map) return NULL;
    int64_t r = 0;
    for (int64_t c = 0; c < p->cb; c++)
        for (int64_t t = 0; t < p->kvol; t++)
            if (live[t]) map[r++] = (int32_t)(c * p->kvol + t);
    *count = r;
    return map;
}

void pct_conv_live_rows_free(int32_t *map, int64_t count)
{
    if (map) pct_conv_scratch_put(map, sizeof(int32_t) * (size_t)count);
}

void pct_conv_tap_table_free(const pct_conv_plan *p, int32_t *tab)
{
    if (tab) pct_conv_scratch_put(tab, sizeof(int32_t) * (size_t)(p->kvol * p->svol));
}
