/* attention_impl.h: the typed bodies of the fused attention kernels, included by
 * attention.c once per dtype with
 *   SC        the element type (float, double)
 *   FN(name)  name with a per-type suffix
 *   GEMM      a function gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, failed)
 *             computing C = alpha op(A) op(B) + beta C on row-major SC matrices (BLAS)
 *   MM        mm(args, ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, failed): the same with
 *             op(B) = B, through the micro-kernel where args->mk (gemm_f32.h)
 *   ROW_MAX, ROW_EXP_SUM, ROW_DS  the row loops (see attention_rows.h)
 * See Note [Flash attention on the CPU] in attention.c for the algorithm. */

/* S (bq x bk, leading dim ldS) = scale * Q_i K_j^T, plus the mask or the causal -inf.
 * ktb: the transposed K panels of batch b (Note [Transposed key panels]), or NULL. */
static void FN(scores)(const attn_args *a, int64_t b, int64_t i0, int64_t bq, int64_t j0, int64_t bk, SC *s,
                       int64_t lds, const SC *ktb, int *failed)
{
    const SC *q = (const SC *)a->q + a->qoff[b] + i0 * a->q_rs;
    const SC *k = (const SC *)a->k + a->koff[b] + j0 * a->k_rs;
    if (a->e > 0 && ktb) {
        const SC *kt = ktb + (j0 / a->bk) * a->e * a->ldp;
        MM(a, false, bq, bk, a->e, (SC)a->scale, q, a->q_rs, kt, a->ldp, (SC)0, s, lds, failed);
    } else if (a->e > 0) {
        GEMM(false, true, bq, bk, a->e, (SC)a->scale, q, a->q_rs, k, a->k_rs, (SC)0, s, lds, failed);
    } else {
        for (int64_t r = 0; r < bq; r++) memset(s + r * lds, 0, sizeof(SC) * (size_t)bk);
    }
    if (a->mask_kind == PCT_ATTN_MASK_BOOL) {
        const uint8_t *m0 = (const uint8_t *)a->mask + a->moff[b] + i0 * a->m_rs + j0 * a->m_cs;
        for (int64_t r = 0; r < bq; r++) {
            const uint8_t *mr = m0 + r * a->m_rs;
            SC *sr = s + r * lds;
            for (int64_t c = 0; c < bk; c++)
                if (!mr[c * a->m_cs]) sr[c] = -INFINITY;
        }
    } else if (a->mask_kind == PCT_ATTN_MASK_ADD) {
        const SC *m0 = (const SC *)a->mask + a->moff[b] + i0 * a->m_rs + j0 * a->m_cs;
        for (int64_t r = 0; r < bq; r++) {
            const SC *mr = m0 + r * a->m_rs;
            SC *sr = s + r * lds;
            if (a->m_cs == 1)
                for (int64_t c = 0; c < bk; c++) sr[c] += mr[c];
            else
                for (int64_t c = 0; c < bk; c++) sr[c] += mr[c * a->m_cs];
        }
    }
    if (a->causal && j0 + bk - 1 > i0) { /* top-left aligned: row i sees keys j <= i */
        for (int64_t r = 0; r < bq; r++) {
            int64_t first = i0 + r + 1 - j0;
            if (first < 0) first = 0;
            SC *sr = s + r * lds;
            for (int64_t c = first; c < bk; c++) sr[c] = -INFINITY;
        }
    }
}

/* The keys a block of query rows [i0, i0 + bq) attends to: [0, kend). */
static inline int64_t FN(key_end)(const attn_args *a, int64_t i0, int64_t bq)
{
    if (!a->causal) return a->tk;
    return i0 + bq < a->tk ? i0 + bq : a->tk;
}

/* Note [Transposed key panels]
 * The micro-kernel reads B by rows, so the products with K^T (scores) and V^T (dP) take
 * K and V transposed: per (batch, key block) a panel of cols x bk holding x[j][p] at
 * p * ldp + j. ldp = bk + 16 keeps the panel's rows out of step with the cache sets (a
 * power-of-two stride would stack every row in a few sets). The panels hold Tk x E
 * values per batch: memory linear in the sequence, written once per call. */
static SC *FN(panels_alloc)(const attn_args *a, int64_t nbatches, int64_t cols)
{
    const int64_t n = nbatches * a->nkb * cols * a->ldp;
    return malloc(sizeof(SC) * (size_t)(n > 0 ? n : 1));
}

/* Fills the panel of key block kb of batch b (at pn) from the rows of src. */
static void FN(panel_fill)(const attn_args *a, SC *pn, int64_t b, int64_t kb, const char *src, const int64_t *off,
                           int64_t rs, int64_t cols)
{
    const int64_t j0 = kb * a->bk, bk = a->tk - j0 < a->bk ? a->tk - j0 : a->bk;
    for (int64_t j = 0; j < bk; j++) {
        const SC *row = (const SC *)src + off[b] + (j0 + j) * rs;
        for (int64_t p = 0; p < cols; p++) pn[p * a->ldp + j] = row[p];
    }
}

/* All the panels of batch b, at dst. */
static void FN(panels_of_batch)(const attn_args *a, SC *dst, int64_t b, const char *src, const int64_t *off,
                                int64_t rs, int64_t cols)
{
    for (int64_t kb = 0; kb < a->nkb; kb++) FN(panel_fill)(a, dst + kb * cols * a->ldp, b, kb, src, off, rs, cols);
}

/* Note [Attention work split]
 * With at least as many batches (batch x heads) as threads, and an even share each, a
 * thread takes whole batches: it transposes that batch's K (and V) panels into its own
 * buffer and walks its query blocks, so a call needs no synchronisation inside its
 * parallel region (on a busy machine every barrier waits for the slowest thread to be
 * scheduled). With fewer batches the work items are (batch, query block) and the panels
 * of all batches are transposed first, shared by all threads, behind one barrier. */
static bool FN(whole_batches)(const attn_args *a)
{
    const int64_t nt = a->nthreads;
    return nt <= 1 || a->nb % nt == 0 || a->nb >= 4 * nt;
}

/* ---- forward: one (batch, query block) work item ---------------------------------------- */

static void FN(fwd_item)(const attn_args *a, int64_t b, int64_t i0, SC *s, SC *mrow, SC *lrow, const SC *ktb,
                         int *failed)
{
    const int64_t tq = a->tq, ev = a->ev, bq = tq - i0 < a->bq ? tq - i0 : a->bq;
    SC *o = (SC *)a->out + (b * tq + i0) * ev;
    SC *lse = (SC *)a->lse + b * tq + i0;
    for (int64_t r = 0; r < bq; r++) {
        mrow[r] = -INFINITY;
        lrow[r] = 0;
    }
    memset(o, 0, sizeof(SC) * (size_t)(bq * ev));
    const int64_t kend = FN(key_end)(a, i0, bq);
    for (int64_t j0 = 0; j0 < kend; j0 += a->bk) {
        const int64_t bk = kend - j0 < a->bk ? kend - j0 : a->bk;
        FN(scores)(a, b, i0, bq, j0, bk, s, bk, ktb, failed);
        for (int64_t r = 0; r < bq; r++) {
            SC *sr = s + r * bk;
            SC mx = ROW_MAX(sr, bk);
            if (mx == -INFINITY) /* masked out, or NaN (which the max skips): NaN must win */
                for (int64_t c = 0; c < bk; c++)
                    if (sr[c] != sr[c]) mx = sr[c];
            const SC mnew = mx > mrow[r] || mx != mx ? mx : mrow[r];
            if (mnew == -INFINITY) { /* nothing attended yet: this block adds nothing */
                memset(sr, 0, sizeof(SC) * (size_t)bk);
                continue;
            }
            const SC sum = ROW_EXP_SUM(sr, bk, mnew);
            const SC alpha = EXP(mrow[r] - mnew);
            if (alpha != 1) {
                SC *orow = o + r * ev;
                for (int64_t c = 0; c < ev; c++) orow[c] *= alpha;
            }
            lrow[r] = lrow[r] * alpha + sum;
            mrow[r] = mnew;
        }
        if (ev > 0) {
            const SC *v = (const SC *)a->v + a->voff[b] + j0 * a->v_rs;
            MM(a, false, bq, ev, bk, (SC)1, s, bk, v, a->v_rs, (SC)1, o, ev, failed);
        }
    }
    for (int64_t r = 0; r < bq; r++) {
        SC *orow = o + r * ev;
        if (mrow[r] == -INFINITY) { /* a row that attends to nothing gives 0 and logsumexp 0, as torch's CPU kernels */
            memset(orow, 0, sizeof(SC) * (size_t)ev);
            lse[r] = 0;
            continue;
        }
        const SC inv = 1 / lrow[r];
        for (int64_t c = 0; c < ev; c++) orow[c] *= inv;
        lse[r] = mrow[r] + LOG(lrow[r]);
    }
}

static void FN(forward)(attn_args *a)
{
    const int64_t nqb = (a->tq + a->bq - 1) / a->bq;
    const bool whole = FN(whole_batches)(a), packed = a->mk && a->e > 0;
    const int64_t panel_batch = a->nkb * a->e * a->ldp; /* elements of one batch's panels */
    int failed = 0;
    SC *shared = NULL;
    if (packed && !whole && !(shared = FN(panels_alloc)(a, a->nb, a->e))) {
        a->failed = 1;
        return;
    }
    const int64_t npanels = shared ? a->nb * a->nkb : 0, work = whole ? a->nb : a->nb * nqb;
    PCT_OMP(omp parallel num_threads(a->nthreads))
    {
        PCT_OMP(omp for schedule(static))
        for (int64_t w = 0; w < npanels; w++)
            FN(panel_fill)(a, shared + w * a->e * a->ldp, w / a->nkb, w % a->nkb, a->k, a->koff, a->k_rs, a->e);
        /* (the loop's barrier: every shared panel is filled before any is read) */
        SC *s = malloc(sizeof(SC) * (size_t)(a->bq * a->bk));
        SC *mrow = malloc(sizeof(SC) * (size_t)a->bq), *lrow = malloc(sizeof(SC) * (size_t)a->bq);
        SC *mine = packed && whole ? FN(panels_alloc)(a, 1, a->e) : NULL;
        int my_failed = !s || !mrow || !lrow || (packed && whole && !mine);
        PCT_OMP(omp for schedule(dynamic, 1))
        for (int64_t w = 0; w < work; w++) {
            if (my_failed) continue;
            if (whole) {
                if (mine) FN(panels_of_batch)(a, mine, w, a->k, a->koff, a->k_rs, a->e);
                for (int64_t qb = 0; qb < nqb; qb++) FN(fwd_item)(a, w, qb * a->bq, s, mrow, lrow, mine, &my_failed);
            } else {
                const int64_t b = w / nqb;
                FN(fwd_item)(a, b, (w % nqb) * a->bq, s, mrow, lrow, shared ? shared + b * panel_batch : NULL,
                             &my_failed);
            }
        }
        if (my_failed) {
            PCT_OMP(omp atomic write)
            failed = 1;
        }
        free(s);
        free(mrow);
        free(lrow);
        free(mine);
    }
    free(shared);
    a->failed = failed;
}

/* ---- backward ------------------------------------------------------------------------------ */

/* The gradients of one (query block, key block) tile of batch b: dq (bq x e, ld e), dk
 * (bk x e, ld e) and dv (bk x ev, ld ev) are accumulated into; d is the row term
 * rowsum(dO * O) - grad_logsumexp of the block's rows. */
static void FN(bwd_tile)(const attn_args *a, int64_t b, int64_t i0, int64_t bq, int64_t j0, int64_t bk, SC *p,
                         SC *dp, SC *dq, SC *dk, SC *dv, const SC *d, const SC *ktb, const SC *vtb, int *failed)
{
    const int64_t e = a->e, ev = a->ev;
    const SC *lse = (const SC *)a->lse + b * a->tq + i0;
    const SC *q = (const SC *)a->q + a->qoff[b] + i0 * a->q_rs;
    const SC *k = (const SC *)a->k + a->koff[b] + j0 * a->k_rs;
    const SC *v = (const SC *)a->v + a->voff[b] + j0 * a->v_rs;
    const SC *dout = (const SC *)a->dout + a->dooff[b] + i0 * a->do_rs;
    const SC scale = (SC)a->scale;
    FN(scores)(a, b, i0, bq, j0, bk, p, bk, ktb, failed);
    for (int64_t r = 0; r < bq; r++) { /* P = exp(S - logsumexp) */
        SC *pr = p + r * bk;
        if (lse[r] == -INFINITY) memset(pr, 0, sizeof(SC) * (size_t)bk); /* (rows of only -inf scores give 0 anyway) */
        else ROW_EXP_SUM(pr, bk, lse[r]);
    }
    if (a->need_v && ev > 0) /* dV_j += P^T dO_i */
        MM(a, true, bk, ev, bq, (SC)1, p, bk, dout, a->do_rs, (SC)1, dv, ev, failed);
    if (!a->need_q && !a->need_k) return;
    if (ev > 0 && vtb) { /* dP = dO_i V_j^T */
        const SC *vt = vtb + (j0 / a->bk) * ev * a->ldp;
        MM(a, false, bq, bk, ev, (SC)1, dout, a->do_rs, vt, a->ldp, (SC)0, dp, bk, failed);
    } else if (ev > 0)
        GEMM(false, true, bq, bk, ev, (SC)1, dout, a->do_rs, v, a->v_rs, (SC)0, dp, bk, failed);
    else
        memset(dp, 0, sizeof(SC) * (size_t)(bq * bk));
    for (int64_t r = 0; r < bq; r++) ROW_DS(dp + r * bk, p + r * bk, bk, d[r]); /* dS = P (dP - D) */
    if (e > 0 && a->need_q) /* dQ_i += scale dS K_j */
        MM(a, false, bq, e, bk, scale, dp, bk, k, a->k_rs, (SC)1, dq, e, failed);
    if (e > 0 && a->need_k) /* dK_j += scale dS^T Q_i */
        MM(a, true, bk, e, bq, scale, dp, bk, q, a->q_rs, (SC)1, dk, e, failed);
}

/* The first query row that attends to any key of [j0, ...) (0 without causal masking). */
static inline int64_t FN(query_begin)(const attn_args *a, int64_t j0)
{
    return a->causal ? j0 : 0;
}

/* D = rowsum(dO * O) - grad_logsumexp for the rows [r0, r1) of all batches (flattened). */
static void FN(row_terms)(const attn_args *a, SC *d, int64_t r0, int64_t r1)
{
    const int64_t ev = a->ev;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t b = r / a->tq, i = r % a->tq;
        const SC *dor = (const SC *)a->dout + a->dooff[b] + i * a->do_rs;
        const SC *orow = (const SC *)a->o + r * ev;
        SC acc = 0;
        for (int64_t c = 0; c < ev; c++) acc += dor[c] * orow[c];
        d[r] = acc - (a->glse ? ((const SC *)a->glse)[r] : 0);
    }
}

/* Note [Attention backward parallelism]
 * dQ rows are written by the tiles of their query block, dK/dV rows by the tiles of their
 * key block, so no split of the tiles is free of races in both. With at least as many
 * batches as threads (and an even share each) a thread takes whole batches: it owns their
 * dQ, dK and dV, and walks key blocks outer, query blocks inner. With fewer batches
 * (long sequences, few heads) the query blocks of one batch are shared out instead: dQ
 * stays race-free and dK/dV go to per-thread O(Tk) buffers summed afterwards (see also
 * Note [Attention work split]). Whole batches per thread: */
static void FN(backward_by_batch)(attn_args *a, SC *d)
{
    int failed = 0;
    const int64_t tq = a->tq, tk = a->tk, e = a->e, ev = a->ev;
    const bool pk = a->mk && e > 0, pv = a->mk && ev > 0;
    PCT_OMP(omp parallel num_threads(a->nthreads))
    {
        SC *p = malloc(sizeof(SC) * (size_t)(a->bq * a->bk)), *dp = malloc(sizeof(SC) * (size_t)(a->bq * a->bk));
        SC *kt = pk ? FN(panels_alloc)(a, 1, e) : NULL, *vt = pv ? FN(panels_alloc)(a, 1, ev) : NULL;
        int my_failed = !p || !dp || (pk && !kt) || (pv && !vt);
        PCT_OMP(omp for schedule(dynamic, 1))
        for (int64_t b = 0; b < a->nb; b++) {
            if (my_failed) continue;
            FN(row_terms)(a, d, b * tq, (b + 1) * tq);
            if (kt) FN(panels_of_batch)(a, kt, b, a->k, a->koff, a->k_rs, e);
            if (vt) FN(panels_of_batch)(a, vt, b, a->v, a->voff, a->v_rs, ev);
            for (int64_t j0 = 0; j0 < tk && !my_failed; j0 += a->bk) {
                const int64_t bk = tk - j0 < a->bk ? tk - j0 : a->bk;
                for (int64_t i0 = FN(query_begin)(a, j0) / a->bq * a->bq; i0 < tq; i0 += a->bq) {
                    const int64_t bq = tq - i0 < a->bq ? tq - i0 : a->bq;
                    FN(bwd_tile)(a, b, i0, bq, j0, bk, p, dp, (SC *)a->dq + (b * tq + i0) * e,
                                 (SC *)a->dk + (b * tk + j0) * e, (SC *)a->dv + (b * tk + j0) * ev, d + b * tq + i0,
                                 kt, vt, &my_failed);
                }
            }
        }
        if (my_failed) {
            PCT_OMP(omp atomic write)
            failed = 1;
        }
        free(p);
        free(dp);
        free(kt);
        free(vt);
    }
    a->failed = failed;
}

/* Fewer batches than threads: the query blocks of one batch are shared out, each thread
 * sums its dK/dV into private buffers, and the buffers are added up afterwards. */
static void FN(backward_by_block)(attn_args *a, SC *d)
{
    int failed = 0;
    const int64_t tq = a->tq, tk = a->tk, e = a->e, ev = a->ev, nqb = (tq + a->bq - 1) / a->bq;
    const int nt = a->nthreads;
    const int64_t acc_len = tk * (e + ev), rows = a->nb * tq;
    SC *acc = calloc((size_t)nt * (size_t)acc_len, sizeof(SC));
    SC *kt = a->mk && e > 0 ? FN(panels_alloc)(a, a->nb, e) : NULL;
    SC *vt = a->mk && ev > 0 ? FN(panels_alloc)(a, a->nb, ev) : NULL;
    if (!acc || (a->mk && e > 0 && !kt) || (a->mk && ev > 0 && !vt)) {
        free(acc);
        free(kt);
        free(vt);
        a->failed = 1;
        return;
    }
    const int64_t npk = kt ? a->nb * a->nkb : 0, npv = vt ? a->nb * a->nkb : 0;
    PCT_OMP(omp parallel num_threads(nt))
    {
        PCT_OMP(omp for schedule(static) nowait)
        for (int64_t r = 0; r < rows; r += 64) FN(row_terms)(a, d, r, r + 64 < rows ? r + 64 : rows);
        PCT_OMP(omp for schedule(static) nowait)
        for (int64_t w = 0; w < npk; w++)
            FN(panel_fill)(a, kt + w * e * a->ldp, w / a->nkb, w % a->nkb, a->k, a->koff, a->k_rs, e);
        PCT_OMP(omp for schedule(static))
        for (int64_t w = 0; w < npv; w++)
            FN(panel_fill)(a, vt + w * ev * a->ldp, w / a->nkb, w % a->nkb, a->v, a->voff, a->v_rs, ev);
    }
    for (int64_t b = 0; b < a->nb && !failed; b++) {
        PCT_OMP(omp parallel num_threads(nt))
        {
#ifdef _OPENMP
            const int id = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
            const int id = 0, cnt = 1;
#endif
            SC *mine = acc + (int64_t)id * acc_len;
            memset(mine, 0, sizeof(SC) * (size_t)acc_len);
            SC *p = malloc(sizeof(SC) * (size_t)(a->bq * a->bk)), *dp = malloc(sizeof(SC) * (size_t)(a->bq * a->bk));
            int my_failed = !p || !dp;
            PCT_OMP(omp for schedule(dynamic, 1))
            for (int64_t qb = 0; qb < nqb; qb++) {
                const int64_t i0 = qb * a->bq, bq = tq - i0 < a->bq ? tq - i0 : a->bq;
                const int64_t kend = FN(key_end)(a, i0, bq);
                for (int64_t j0 = 0; j0 < kend && !my_failed; j0 += a->bk) {
                    const int64_t bk = kend - j0 < a->bk ? kend - j0 : a->bk;
                    FN(bwd_tile)(a, b, i0, bq, j0, bk, p, dp, (SC *)a->dq + (b * tq + i0) * e, mine + j0 * e,
                                 mine + tk * e + j0 * ev, d + b * tq + i0,
                                 kt ? kt + b * a->nkb * e * a->ldp : NULL, vt ? vt + b * a->nkb * ev * a->ldp : NULL,
                                 &my_failed);
                }
            }
            free(p);
            free(dp);
            if (my_failed) {
                PCT_OMP(omp atomic write)
                failed = 1;
            }
            /* the implicit barrier of the loop above has passed: the buffers of this team's
             * threads are final (a smaller team than asked for leaves the others out) */
            SC *dk = (SC *)a->dk + b * tk * e, *dv = (SC *)a->dv + b * tk * ev;
            PCT_OMP(omp for schedule(static))
            for (int64_t x = 0; x < acc_len; x++) {
                SC t = 0;
                for (int th = 0; th < cnt && th < nt; th++) t += acc[(int64_t)th * acc_len + x];
                if (x < tk * e) dk[x] = t;
                else dv[x - tk * e] = t;
            }
        }
    }
    free(acc);
    free(kt);
    free(vt);
    a->failed = failed;
}

static void FN(backward)(attn_args *a)
{
    SC *d = malloc(sizeof(SC) * (size_t)(a->nb * a->tq));
    if (!d) {
        a->failed = 1;
        return;
    }
    if (FN(whole_batches)(a)) FN(backward_by_batch)(a, d);
    else FN(backward_by_block)(a, d);
    free(d);
}
