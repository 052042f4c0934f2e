/* reduce_plan.c: the reduction plan and driver (Note [Reduction plan] in reduce.c): kept and
 * reduced dims split, sorted and coalesced (red_plan_build), horizontal and vertical walks
 * with partial accumulators split across threads (red_run), and the argument helpers every
 * reduction entry point shares (dim masks, output shapes, pct_red_exec / pct_red_simple).
 * Nothing inside the driver calls Python or raises: all checks run before it.
 */
#include "../shapes_only.h"
#include "reduce_internal.h"
#include "../backend.h"

/* ------------------------------------------------------------------------------------ */
/* the plan and the driver (Note [Reduction plan])                                      */

typedef struct red_plan {
    int nk, nr, nouts;
    bool vertical;
    int64_t nout, nred, units, nblk;
    int64_t ksize[PCT_MAX_DIMS], kin[PCT_MAX_DIMS], kout[2][PCT_MAX_DIMS];
    int64_t rsize[PCT_MAX_DIMS], rin[PCT_MAX_DIMS];
    const char *in;
    char *out[2];
} red_plan;

static char red_dummy_out[16];

/* Sorts dims [0, n) by `key` descending (stable insertion sort), moving the rows along. */
static void red_sort_dims(int n, int64_t *key, int64_t *size, int64_t (*kout)[PCT_MAX_DIMS], int nouts)
{
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && key[j - 1] < key[j]; j--) {
            int64_t t;
            t = key[j]; key[j] = key[j - 1]; key[j - 1] = t;
            t = size[j]; size[j] = size[j - 1]; size[j - 1] = t;
            for (int o = 0; kout && o < nouts; o++) { t = kout[o][j]; kout[o][j] = kout[o][j - 1]; kout[o][j - 1] = t; }
        }
    }
}

/* Merges neighbours (outer i-1, inner i) that are contiguous in every operand. */
static int red_coalesce(int n, int64_t *key, int64_t *size, int64_t (*kout)[PCT_MAX_DIMS], int nouts)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0) {
            bool merge = key[m - 1] == size[i] * key[i];
            for (int o = 0; kout && o < nouts && merge; o++) merge = kout[o][m - 1] == size[i] * kout[o][i];
            if (merge) {
                size[m - 1] *= size[i];
                key[m - 1] = key[i];
                for (int o = 0; kout && o < nouts; o++) kout[o][m - 1] = kout[o][i];
                continue;
            }
        }
        key[m] = key[i];
        size[m] = size[i];
        for (int o = 0; kout && o < nouts; o++) kout[o][m] = kout[o][i];
        m++;
    }
    return m;
}

static void red_plan_build(red_plan *pl, const pct_tensor *in, uint64_t mask, bool keep_order, int nouts,
                           pct_tensor *const *outs, bool keepdim)
{
    int64_t item = pct_tensor_itemsize(in);
    int od = 0, nk = 0, nr = 0;
    pl->nouts = nouts;
    pl->nout = 1;
    pl->nred = 1;
    for (int d = 0; d < in->ndim; d++) {
        int64_t sz = in->sizes[d];
        if ((mask >> d) & 1) {
            pl->nred *= sz;
            if (keepdim) od++;
            if (sz == 1) continue;
            pl->rsize[nr] = sz;
            pl->rin[nr] = in->strides[d] * item;
            nr++;
        } else {
            pl->nout *= sz;
            if (sz != 1) {
                pl->ksize[nk] = sz;
                pl->kin[nk] = in->strides[d] * item;
                for (int o = 0; o < nouts; o++) pl->kout[o][nk] = outs[o]->strides[od] * pct_tensor_itemsize(outs[o]);
                nk++;
            }
            od++;
        }
    }
    red_sort_dims(nk, pl->kin, pl->ksize, pl->kout, nouts);
    nk = red_coalesce(nk, pl->kin, pl->ksize, pl->kout, nouts);
    if (!keep_order) red_sort_dims(nr, pl->rin, pl->rsize, NULL, 0);
    nr = red_coalesce(nr, pl->rin, pl->rsize, NULL, 0);
    pl->nk = nk;
    pl->nr = nr;
    pl->in = pct_tensor_data(in);
    for (int o = 0; o < 2; o++) pl->out[o] = o < nouts ? pct_tensor_data(outs[o]) : red_dummy_out;
    for (int o = nouts; o < 2; o++)
        for (int d = 0; d < nk; d++) pl->kout[o][d] = 0;
    /* vertical when the innermost kept dim is more contiguous than the innermost reduced
     * one, or when reductions are so short that per-output overhead would dominate */
    pl->vertical = nk > 0 && nr > 0 && pl->ksize[nk - 1] >= 8 &&
                   (pl->kin[nk - 1] < pl->rin[nr - 1] || pl->nred <= 16);
    if (pl->vertical) {
        pl->nblk = (pl->ksize[nk - 1] + RED_NB - 1) / RED_NB;
        pl->units = pl->nout / pl->ksize[nk - 1] * pl->nblk;
    } else {
        pl->nblk = 1;
        pl->units = pl->nout;
    }
}

/* The input pointer, output pointers and width of work unit u. */
static int64_t red_unit_locate(const red_plan *pl, int64_t u, const char **inp, char **outp)
{
    int64_t in_off = 0, off0 = 0, off1 = 0, nb = 1;
    int last = pl->nk;
    if (pl->vertical) {
        int64_t b = u % pl->nblk, K = pl->ksize[pl->nk - 1];
        u /= pl->nblk;
        last = pl->nk - 1;
        in_off = b * RED_NB * pl->kin[last];
        off0 = b * RED_NB * pl->kout[0][last];
        off1 = b * RED_NB * pl->kout[1][last];
        nb = K - b * RED_NB < RED_NB ? K - b * RED_NB : RED_NB;
    }
    for (int d = last - 1; d >= 0; d--) {
        int64_t i = u % pl->ksize[d];
        u /= pl->ksize[d];
        in_off += i * pl->kin[d];
        off0 += i * pl->kout[0][d];
        off1 += i * pl->kout[1][d];
    }
    *inp = pl->in + in_off;
    outp[0] = pl->out[0] + off0;
    outp[1] = pl->out[1] + off1;
    return nb;
}

/* The cascade red_partial adds through (Note [Reduction plan]): successive runs (horizontal)
 * or vertical leaves of RED_VLEAF rows land in level 0; a level that has taken fold[l] of
 * them is added into the next one up, the top one into the result. Horizontal runs are
 * already pairwise sums (RED_FOLD per level). A vertical leaf is one vrun call: sum-like
 * kernels cascade its rows themselves (vcascade) and add it into level 0 once, so the levels
 * above take RED_VFOLD leaves each; other kernels add each row into level 0, which then holds
 * one leaf. The boundaries depend only on positions, from position 0. */
typedef struct red_cascade {
    _Alignas(64) char lv[RED_LEVELS][RED_NB * RED_ACC_MAX];
    int fold[RED_LEVELS], cnt[RED_LEVELS];
} red_cascade;

static void red_cascade_folds(const red_kernel *k, const red_plan *pl, int *fold)
{
    for (int l = 0; l < RED_LEVELS; l++)
        fold[l] = !pl->vertical ? RED_FOLD : (l == 0 && !k->vcascade) ? 1 : RED_VFOLD;
}

static void red_cascade_init(red_cascade *c, const red_kernel *k, const red_plan *pl, int64_t nb, const red_ctx *ctx)
{
    red_cascade_folds(k, pl, c->fold);
    for (int l = 0; l < RED_LEVELS; l++) {
        c->cnt[l] = 0;
        k->init(c->lv[l], nb, ctx);
    }
}

/* level l took one more item: the levels that are full are added one up (the top one into res) */
static void red_cascade_up(red_cascade *c, const red_kernel *k, int l, int64_t nb, char *res, const red_ctx *ctx)
{
    for (; l < RED_LEVELS && ++c->cnt[l] == c->fold[l]; l++) {
        k->combine(l + 1 < RED_LEVELS ? c->lv[l + 1] : res, c->lv[l], nb, ctx);
        k->init(c->lv[l], nb, ctx);
        c->cnt[l] = 0;
    }
}

/* the partial levels added upwards, as if full: a range that ends at a level-l block
 * boundary gives that block's value, what the whole range's cascade adds one level up */
static void red_cascade_finish(red_cascade *c, const red_kernel *k, int64_t nb, char *res, const red_ctx *ctx)
{
    for (int l = 0; l < RED_LEVELS; l++) k->combine(l + 1 < RED_LEVELS ? c->lv[l + 1] : res, c->lv[l], nb, ctx);
}

/* Reduces positions [rb, re) of the reduced space for one unit into res (nb accumulators),
 * through the cascade; rb is 0 or, for a split across threads, a cascade block boundary. */
static void red_partial(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, const char *base,
                        int64_t nb, int64_t rb, int64_t re, char *res)
{
    int64_t vstride = pl->vertical ? pl->kin[pl->nk - 1] : 0;
    k->init(res, nb, ctx);
    if (rb >= re) return;
    int nr = pl->nr;
    if (nr == 0) { /* nothing reduced: the one position at offset 0 */
        if (pl->vertical || nb > 1) k->vrun(res, base, nb, vstride, 1, 0, 0, ctx);
        else k->run(res, base, 1, 0, 0, ctx);
        return;
    }
    if (!pl->vertical && nr == 1 && rb == 0 && re == pl->rsize[0]) { /* one run: no cascade needed */
        k->run(res, base, re, pl->rin[0], 0, ctx);
        return;
    }
    red_cascade c;
    red_cascade_init(&c, k, pl, nb, ctx);
    int64_t idx[PCT_MAX_DIMS], rem = rb, leaf_rows = 0;
    for (int d = nr - 1; d >= 0; d--) { idx[d] = rem % pl->rsize[d]; rem /= pl->rsize[d]; }
    const int64_t inner = pl->rsize[nr - 1], sin = pl->rin[nr - 1];
    int64_t pos = rb;
    while (pos < re) {
        int64_t off = 0;
        for (int d = 0; d < nr; d++) off += idx[d] * pl->rin[d];
        const char *p = base + off;
        int64_t n = inner - idx[nr - 1];
        if (n > re - pos) n = re - pos;
        if (!pl->vertical) {
            k->run(c.lv[0], p, n, sin, pos, ctx);
            red_cascade_up(&c, k, 0, nb, res, ctx);
        }
        for (int64_t t = 0; pl->vertical && t < n;) {
            int64_t step = n - t < RED_VLEAF - leaf_rows ? n - t : RED_VLEAF - leaf_rows;
            k->vrun(c.lv[0], p + t * sin, nb, vstride, step, sin, pos + t, ctx);
            t += step;
            if ((leaf_rows += step) < RED_VLEAF) continue; /* the leaf goes on in the next run */
            leaf_rows = 0;
            red_cascade_up(&c, k, 0, nb, res, ctx);
        }
        pos += n;
        idx[nr - 1] += n;
        for (int d = nr - 1; d > 0 && idx[d] >= pl->rsize[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
    red_cascade_finish(&c, k, nb, res, ctx);
}

static void red_do_unit(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, int64_t u)
{
    _Alignas(64) char res[RED_NB * RED_ACC_MAX];
    const char *inp;
    char *outp[2];
    int64_t nb = red_unit_locate(pl, u, &inp, outp);
    red_partial(k, pl, ctx, inp, nb, 0, pl->nred, res);
    int64_t os[2] = {0, 0};
    if (pl->vertical) { os[0] = pl->kout[0][pl->nk - 1]; os[1] = pl->kout[1][pl->nk - 1]; }
    k->finish(res, nb, outp, os, ctx);
}

/* Units [u0, u1). Outputs that are one run each (horizontal, one reduced dim) are walked
 * with an odometer over the kept dims instead of being located one by one, the innermost kept
 * dim by the kernel's rows. */
static void red_do_units(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, int64_t u0, int64_t u1)
{
    if (pl->vertical || pl->nr != 1 || pl->nk == 0) {
        for (int64_t u = u0; u < u1; u++) red_do_unit(k, pl, ctx, u);
        return;
    }
    const char *inp;
    char *outp[2];
    int64_t idx[PCT_MAX_DIMS], rem = u0;
    const int nk = pl->nk;
    const int64_t n = pl->rsize[0], s = pl->rin[0];
    red_unit_locate(pl, u0, &inp, outp);
    for (int d = nk - 1; d >= 0; d--) { idx[d] = rem % pl->ksize[d]; rem /= pl->ksize[d]; }
    const int in = nk - 1; /* the innermost kept dim: one rows call per stretch of it */
    const int64_t ors[2] = {pl->kout[0][in], pl->kout[1][in]};
    for (int64_t u = u0; u < u1;) {
        const int64_t cnt = pl->ksize[in] - idx[in] < u1 - u ? pl->ksize[in] - idx[in] : u1 - u;
        k->rows(inp, cnt, pl->kin[in], n, s, outp, ors, ctx);
        u += cnt;
        inp += (cnt - 1) * pl->kin[in];
        outp[0] += (cnt - 1) * ors[0];
        outp[1] += (cnt - 1) * ors[1];
        idx[in] += cnt - 1;
        for (int d = nk - 1; d >= 0; d--) {
            inp += pl->kin[d];
            outp[0] += pl->kout[0][d];
            outp[1] += pl->kout[1][d];
            if (++idx[d] < pl->ksize[d]) break;
            inp -= pl->ksize[d] * pl->kin[d];
            outp[0] -= pl->ksize[d] * pl->kout[0][d];
            outp[1] -= pl->ksize[d] * pl->kout[1][d];
            idx[d] = 0;
        }
    }
}

/* Splits each unit's reduced range across nth threads: the threads reduce whole blocks of
 * the cascade's level L (red_partial over each gives the value the single-threaded cascade
 * adds into level L + 1), which are then added up through the levels above in order, so the
 * result has the same bits for any thread count (L, chosen from nth, does not change them). A horizontal reduction of one run (its
 * pairwise sum has no such blocks) is split in nth equal parts instead. Index ops keep the
 * first occurrence either way. 0, or -1 when the scratch could not be allocated. */
__attribute__((unused)) static int red_run_split(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, int nth)
{
#ifdef _OPENMP
    const bool one_run = !pl->vertical && pl->nr == 1;
    const int64_t inner = pl->rsize[pl->nr - 1];
    int fold[RED_LEVELS];
    red_cascade_folds(k, pl, fold);
    /* Level -1 is one item of level 0: a horizontal run, or a vertical leaf when it is one
     * vrun call (it does not straddle runs); level 0 is the smallest block otherwise. */
    int L = -1;
    int64_t blk = pl->vertical ? RED_VLEAF : inner;
    if (pl->vertical && pl->nr > 1 && inner % RED_VLEAF != 0) blk *= fold[++L];
    /* the largest level that still gives each thread two blocks */
    while (L + 1 < RED_LEVELS && (pl->nred + blk * fold[L + 1] - 1) / (blk * fold[L + 1]) >= 2 * nth)
        blk *= fold[++L];
    if (one_run) blk = (pl->nred + nth - 1) / nth;
    const int64_t nblocks = (pl->nred + blk - 1) / blk;
    if (nblocks < 2) return -1;
    const size_t slot = (k->acc_size * (pl->vertical ? RED_NB : 1) + 63) / 64 * 64;
    char *parts = malloc(slot * (size_t)nblocks + sizeof(red_cascade));
    if (!parts) return -1;
    red_cascade *c = (red_cascade *)(parts + slot * (size_t)nblocks);
    int64_t os[2] = {0, 0};
    if (pl->vertical) { os[0] = pl->kout[0][pl->nk - 1]; os[1] = pl->kout[1][pl->nk - 1]; }
    for (int64_t u = 0; u < pl->units; u++) {
        const char *inp;
        char *outp[2];
        _Alignas(64) char res[RED_NB * RED_ACC_MAX];
        int64_t nb = red_unit_locate(pl, u, &inp, outp);
        #pragma omp parallel for schedule(static) num_threads(nth)
        for (int64_t b = 0; b < nblocks; b++) {
            int64_t e = (b + 1) * blk < pl->nred ? (b + 1) * blk : pl->nred;
            red_partial(k, pl, ctx, inp, nb, b * blk, e, parts + slot * (size_t)b);
        }
        if (one_run) {
            memcpy(res, parts, k->acc_size * (size_t)nb);
            for (int64_t b = 1; b < nblocks; b++) k->combine(res, parts + slot * (size_t)b, nb, ctx);
        } else {
            red_cascade_init(c, k, pl, nb, ctx);
            k->init(res, nb, ctx);
            for (int64_t b = 0; b < nblocks; b++) { /* block b: an item of level L + 1 */
                char *dst = L + 1 < RED_LEVELS ? c->lv[L + 1] : res;
                k->combine(dst, parts + slot * (size_t)b, nb, ctx);
                red_cascade_up(c, k, L + 1, nb, res, ctx);
            }
            red_cascade_finish(c, k, nb, res, ctx);
        }
        k->finish(res, nb, outp, os, ctx);
    }
    free(parts);
    return 0;
#else
    (void)k; (void)pl; (void)ctx; (void)nth;
    return -1;
#endif
}

/* Runs the plan: serially, over units in parallel, or splitting each unit's reduction.
 * Called with the GIL held; releases it for large work. */
static void red_run(const red_kernel *k, const red_plan *pl, const red_ctx *ctx)
{
    if (pl->nout == 0) return;
    int64_t work = pl->nout * (pl->nred > 0 ? pl->nred : 1);
    if (work < PCT_PARALLEL_GRAIN) {
        red_do_units(k, pl, ctx, 0, pl->units);
        return;
    }
    int nth = 1;
#ifdef _OPENMP
    if (!omp_in_parallel()) nth = omp_get_max_threads();
#endif
    PCT_NOGIL_BEGIN
    if (nth <= 1) {
        red_do_units(k, pl, ctx, 0, pl->units);
    }
#ifdef _OPENMP
    else if (pl->units >= nth || pl->nred < 2 * nth || red_run_split(k, pl, ctx, nth) < 0) {
        #pragma omp parallel num_threads(nth)
        {
            int64_t T = omp_get_num_threads(), t = omp_get_thread_num();
            int64_t chunk = (pl->units + T - 1) / T;
            int64_t b = t * chunk, e = b + chunk < pl->units ? b + chunk : pl->units;
            if (b < e) red_do_units(k, pl, ctx, b, e);
        }
    }
#endif
    PCT_NOGIL_END
}

/* ------------------------------------------------------------------------------------ */
/* argument helpers                                                                      */


/* Reduced-dim mask from an int[]? value. None, or an empty list when empty_all, means every dim.
 * torch's TensorIterator reductions wrap every dim before they look for repeats (wrap_first); its
 * var/std and vector_norm check dim by dim, so a repeat before an out-of-range dim is the error. */
int pct_red_mask(const pct_tensor *t, const pct_int_list *v, bool empty_all, bool wrap_first, uint64_t *mask)
{
    int nd = t->ndim;
    if (v->none || (v->n == 0 && empty_all)) { *mask = red_all_mask(nd); return 0; }
    uint64_t seen = 0;
    for (int i = 0; wrap_first && i < v->n; i++)
        if (pct_wrap_dim(v->v[i], nd) < 0) return -1;
    for (int i = 0; i < v->n; i++) {
        int d = pct_wrap_dim(v->v[i], nd);
        if (d < 0) return -1;
        if ((seen >> d) & 1) {
            pct_error(PCT_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", d);
            return -1;
        }
        seen |= 1ULL << d;
    }
    *mask = seen & red_all_mask(nd);
    return 0;
}

int pct_red_mask_one(const pct_tensor *t, int64_t dim, uint64_t *mask, int *wrapped)
{
    int d = pct_wrap_dim(dim, t->ndim);
    if (d < 0) return -1;
    if (wrapped) *wrapped = d;
    *mask = t->ndim ? (1ULL << d) : 0;
    return 0;
}

static int red_out_shape(const pct_tensor *t, uint64_t mask, bool keepdim, int64_t *shape)
{
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if ((mask >> d) & 1) {
            if (keepdim) shape[n++] = 1;
        } else {
            shape[n++] = t->sizes[d];
        }
    }
    return n;
}

int64_t pct_red_count(const pct_tensor *t, uint64_t mask)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        if ((mask >> d) & 1) n *= t->sizes[d];
    return n;
}


/* Note [Device reductions]: the plan of a reduction on another device is handed to that backend's reduce as a
 * pct_red_call (reduce_plan.h): the same kept and reduced dims, byte strides and device addresses, the op named by
 * its PCT_RED_OP_ id and its input dtype, so the device runs the element functors of reduce_ops.h over it. Everything
 * before the walk (checks, dtypes, result tensors on the input's device, out= copies) stays here. */
static int red_run_on_device(const red_kernel *k, const red_ctx *ctx, const red_plan *pl, const pct_tensor *in)
{
    const pct_backend *b = pct_backend_of(in->device_type);
    if (!b) return -1;
    if (!b->reduce) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "reductions are not implemented on the '%s' device",
                  pct_device_type_name(in->device_type));
        return -1;
    }
    if (pl->nk > PCT_RED_DEVICE_DIMS || pl->nr > PCT_RED_DEVICE_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "a reduction over a tensor with more than %d non-mergeable dims is not supported on "
                  "'%s'", PCT_RED_DEVICE_DIMS, pct_device_type_name(in->device_type));
        return -1;
    }
    pct_red_call r = {.op = k->op, .dtype = in->dtype, .device_index = in->device_index, .nouts = pl->nouts,
                      .ctx = *ctx, .nk = pl->nk, .nr = pl->nr, .nout = pl->nout, .nred = pl->nred, .in = pl->in,
                      .out = {pl->out[0], pl->nouts > 1 ? pl->out[1] : NULL}};
    for (int d = 0; d < pl->nk; d++) {
        r.ksize[d] = pl->ksize[d];
        r.kin[d] = pl->kin[d];
        r.kout[0][d] = pl->kout[0][d];
        r.kout[1][d] = pl->kout[1][d];
    }
    for (int d = 0; d < pl->nr; d++) {
        r.rsize[d] = pl->rsize[d];
        r.rin[d] = pl->rin[d];
    }
    return pl->nout == 0 ? 0 : b->reduce(&r);
}

/* Runs kernel k over `in` (already of the kernel's dtype) reducing `mask`, into nouts
 * results of dtypes[i]. outs_arg[i] are out= targets or NULL; results[i] receive new
 * references (the out= tensors themselves when given). */
int pct_red_exec(const red_kernel *k, red_ctx *ctx, pct_tensor *in, uint64_t mask, bool keepdim, bool keep_order,
                    int nouts, const int *dtypes, pct_tensor *const *outs_arg, pct_tensor **results)
{
    int64_t shape[PCT_MAX_DIMS];
    int ndim = red_out_shape(in, mask, keepdim, shape);
    pct_tensor *dst[2] = {NULL, NULL};
    for (int o = 0; o < nouts; o++) results[o] = NULL;
    if (!k) {
        pct_error(PCT_ERR_RUNTIME, "pyctorch internal error: no reduction kernel for %s; please report a bug",
                     pct_dtype_name[in->dtype]);
        return -1;
    }
    for (int o = 0; o < nouts; o++) {
        pct_tensor *oa = outs_arg ? outs_arg[o] : NULL;
        if (oa) {
            if (pct_out_resize(oa, ndim, shape) < 0) goto fail;
            PCT_INCREF(oa);
            results[o] = oa;
            if (oa->dtype == dtypes[o]) {
                PCT_INCREF(oa);
                dst[o] = oa;
                continue;
            }
        }
        if (!(dst[o] = pct_tensor_empty(ndim, shape, dtypes[o], in->device_type, in->device_index))) goto fail;
        if (!results[o]) {
            PCT_INCREF(dst[o]);
            results[o] = dst[o];
        }
    }
    ctx->count = pct_red_count(in, mask);
    red_plan pl;
    ctx->ordered = keep_order;
    red_plan_build(&pl, in, mask, keep_order, nouts, dst, keepdim);
    if (in->device_type != PCT_CPU) {
        if (red_run_on_device(k, ctx, &pl, in) < 0) goto fail;
    } else if (!pct_shapes_only) {
        red_run(k, &pl, ctx); /* Note [Shapes-only runs] */
    }
    for (int o = 0; o < nouts; o++) {
        if (dst[o] != results[o]) {
            if (pct_copy_(results[o], dst[o]) < 0) goto fail;
        } else if (outs_arg && outs_arg[o]) {
            pct_tensor_bump_version(results[o]);
        }
        PCT_CLEAR(dst[o]);
    }
    return 0;
fail:
    for (int o = 0; o < nouts; o++) { PCT_CLEAR(dst[o]); PCT_CLEAR(results[o]); }
    return -1;
}

/* One-output reduction: converts self to in_dtype, runs k, returns the result. */
pct_object *pct_red_simple(const red_kernel *const *table, red_ctx *ctx, pct_tensor *self, int in_dtype,
                            uint64_t mask, bool keepdim, bool keep_order, int out_dtype, pct_tensor *out)
{
    pct_tensor *in = pct_to_dtype(self, in_dtype, false);
    if (!in) return NULL;
    pct_tensor *res = NULL;
    int r = pct_red_exec(table[in_dtype], ctx, in, mask, keepdim, keep_order, 1, &out_dtype, &out, &res);
    PCT_DECREF(in);
    return r < 0 ? NULL : (pct_object *)res;
}

