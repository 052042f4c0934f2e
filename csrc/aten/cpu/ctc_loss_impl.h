/* ctc_loss_impl.h: the CTC loss's forward (alpha) and backward (beta, gradient) recursions for one floating dtype
 * (CTC_E: the dtype's enum suffix, CTC_T: its C type).
 * Included by ctc_loss.c once per instantiation, with
 *   CTC_E, CTC_T defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
#define CTC_NAME(base) PCT_TPL_CAT(base, CTC_E) /* base, then CTC_E: a function's name */

/* lp: (tmax, batch, labels) contiguous; la: (batch, tmax, states); nll: (batch) */
static void CTC_NAME(ctc_fwd_)(const ctc_geom *g, const CTC_T *lp, CTC_T *la, CTC_T *nll)
{
    const CTC_T neginf = -INFINITY;
    int64_t C = g->labels, B = g->batch, S = g->states;
    _Pragma("omp parallel for if (B > 1 && g->tmax * S * B > PCT_SPATIAL_GRAIN)")
    for (int64_t b = 0; b < B; b++) {
        CTC_T *a = la + b * g->tmax * S;
        for (int64_t k = 0; k < g->tmax * S; k++) a[k] = neginf;
        int64_t il = g->il[b], tl = g->tl[b];
        if (il == 0) {
            nll[b] = tl == 0 ? 0 : -neginf;
            continue;
        }
        a[0] = lp[b * C + g->blank];
        if (tl > 0) a[1] = lp[b * C + prime(g, b, 1)];
        for (int64_t t = 1; t < il; t++) {
            const CTC_T *row = lp + (t * B + b) * C;
            CTC_T *prev = a + (t - 1) * S, *cur = a + t * S;
            for (int64_t s = 0; s < 2 * tl + 1; s++) {
                int64_t cp = prime(g, b, s);
                CTC_T la1 = prev[s], lamax = la1, la2, la3;
                if (s > 0) {
                    la2 = prev[s - 1];
                    if (la2 > lamax) lamax = la2;
                } else la2 = neginf;
                if (s > 1 && prime(g, b, s - 2) != cp) {
                    la3 = prev[s - 2];
                    if (la3 > lamax) lamax = la3;
                } else la3 = neginf;
                if (lamax == neginf) lamax = 0;
                cur[s] = log(exp(la1 - lamax) + exp(la2 - lamax) + exp(la3 - lamax)) + lamax + row[cp];
            }
        }
        CTC_T *last = a + (il - 1) * S;
        if (tl == 0) nll[b] = -last[0];
        else {
            CTC_T l1 = last[tl * 2], l2 = last[tl * 2 - 1], m = l1 > l2 ? l1 : l2;
            if (m == neginf) m = 0;
            nll[b] = -(log(exp(l1 - m) + exp(l2 - m)) + m);
        }
    }
}
/* gr: (batch) incoming gradient; out: (tmax, batch, labels) */
static int CTC_NAME(ctc_bwd_)(const ctc_geom *g, const CTC_T *lp, const CTC_T *la, const CTC_T *nll, const CTC_T *gr, bool zinf, CTC_T *out)
{
    const CTC_T neginf = -INFINITY;
    int64_t C = g->labels, B = g->batch, S = g->states;
    CTC_T *lbeta = malloc(sizeof(CTC_T) * (size_t)(B * g->tmax * S + 1));
    if (!lbeta) return -1;
    _Pragma("omp parallel for if (B > 1 && g->tmax * S * B > PCT_SPATIAL_GRAIN)")
    for (int64_t b = 0; b < B; b++) {
        int64_t il = g->il[b], tl = g->tl[b];
        CTC_T nb = nll[b];
        for (int64_t t = 0; t < g->tmax; t++)
            for (int64_t c = 0; c < C; c++) out[(t * B + b) * C + c] = neginf;
        if (zinf && nb == -neginf) {
            for (int64_t t = 0; t < g->tmax; t++)
                for (int64_t c = 0; c < C; c++) out[(t * B + b) * C + c] = 0;
            continue;
        }
        const CTC_T *a = la + b * g->tmax * S;
        CTC_T *be = lbeta + b * g->tmax * S;
        if (il > 0) {
            CTC_T *bl = be + (il - 1) * S;
            const CTC_T *lrow = lp + ((il - 1) * B + b) * C;
            CTC_T *grow = out + ((il - 1) * B + b) * C;
            for (int64_t s = 0; s < S; s++) bl[s] = neginf;
            bl[2 * tl] = lrow[g->blank];
            grow[g->blank] = a[(il - 1) * S + 2 * tl] + bl[2 * tl];
            if (tl > 0) {
                int64_t cp = prime(g, b, 2 * tl - 1);
                bl[2 * tl - 1] = lrow[cp];
                grow[cp] = a[(il - 1) * S + 2 * tl - 1] + bl[2 * tl - 1];
            }
        }
        for (int64_t t = il - 2; t >= 0; t--) {
            const CTC_T *row = lp + (t * B + b) * C;
            CTC_T *grow = out + (t * B + b) * C;
            CTC_T *nxt = be + (t + 1) * S, *cur = be + t * S;
            for (int64_t s = 2 * tl; s >= 0; s--) {
                CTC_T lb1 = nxt[s], lbmax = lb1, lb2, lb3;
                int64_t cp = prime(g, b, s);
                if (s < 2 * tl) {
                    lb2 = nxt[s + 1];
                    if (lb2 > lbmax) lbmax = lb2;
                } else lb2 = neginf;
                if (s < 2 * tl - 1 && prime(g, b, s + 2) != cp) {
                    lb3 = nxt[s + 2];
                    if (lb3 > lbmax) lbmax = lb3;
                } else lb3 = neginf;
                if (lbmax == neginf) lbmax = 0;
                cur[s] = log(exp(lb1 - lbmax) + exp(lb2 - lbmax) + exp(lb3 - lbmax)) + lbmax + row[cp];
                CTC_T lab = a[t * S + s] + cur[s], *lc = &grow[cp];
                if (*lc == neginf) *lc = lab;
                else {
                    CTC_T mx = *lc > lab ? *lc : lab;
                    *lc = log(exp(*lc - mx) + exp(lab - mx)) + mx;
                }
            }
        }
        CTC_T gb = gr[b];
        for (int64_t t = 0; t < il; t++)
            for (int64_t c = 0; c < C; c++) {
                CTC_T *r = &out[(t * B + b) * C + c];
                CTC_T l = lp[(t * B + b) * C + c];
                *r = (exp(l) - exp(*r + nb - l)) * gb;
            }
        for (int64_t t = il; t < g->tmax; t++)
            for (int64_t c = 0; c < C; c++) out[(t * B + b) * C + c] = 0;
    }
    free(lbeta);
    return 0;
}

#undef CTC_NAME
#undef CTC_E
#undef CTC_T
