/* nonzero.c: nonzero (and as_tuple), argwhere and where(condition): chunked counts of the set
 * elements, then their coordinates; the counts serve masked_select's compaction too.
 */
#include "index_internal.h"

/* ---------------------------------------------------------------------------------------
 * nonzero and mask compaction
 * ------------------------------------------------------------------------------------- */

/* A contiguous bool tensor with t's truth values (t itself when it already is one). */
pct_tensor *pct_ix_bool_contiguous(pct_tensor *t)
{
    if ((t->dtype == PCT_BOOL || t->dtype == PCT_UINT8) && pct_tensor_is_contiguous(t)) { PCT_INCREF(t); return t; }
    pct_tensor *m = pct_tensor_empty(t->ndim, t->sizes, PCT_BOOL, PCT_CPU, -1);
    if (m && pct_copy_(m, t) < 0) PCT_CLEAR(m);
    return m;
}

/* Splits [0, n) into chunks and counts the set bytes of m in each: start[k] is where chunk
 * k's output begins; returns the total. */
int pct_ix_nz_chunks(int64_t n)
{
    int nch = 1;
    (void)n;
#ifdef _OPENMP
    if (n >= PCT_PARALLEL_GRAIN && !omp_in_parallel()) {
        nch = omp_get_max_threads() * 4;
        if (nch > NZ_MAX_CHUNKS) nch = NZ_MAX_CHUNKS;
        if (nch < 1) nch = 1;
    }
#endif
    return nch;
}

int64_t pct_ix_nz_count(const uint8_t *m, int64_t n, int nch, int64_t *start)
{
    int64_t cnt[NZ_MAX_CHUNKS];
    IX_PARALLEL_FOR(nch > 1)
    for (int ch = 0; ch < nch; ch++) {
        int64_t b = n * ch / nch, e = n * (ch + 1) / nch, s = 0;
        for (int64_t i = b; i < e; i++) s += m[i] != 0;
        cnt[ch] = s;
    }
    int64_t total = 0;
    for (int ch = 0; ch < nch; ch++) { start[ch] = total; total += cnt[ch]; }
    return total;
}

/* Coordinates of the nonzero elements of t: (count, ndim) int64, or (ndim, count) when
 * transposed. t of 0 dims is seen as 1-d when as_1d is set. */
pct_tensor *pct_ix_nonzero(pct_tensor *t, bool transposed, bool as_1d)
{
    pct_tensor *m = pct_ix_bool_contiguous(t);
    if (!m) return NULL;
    int nd = t->ndim;
    int64_t sizes[PCT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nd);
    if (nd == 0 && as_1d) { nd = 1; sizes[0] = 1; }
    int64_t n = t->numel, start[NZ_MAX_CHUNKS];
    const uint8_t *md = (const uint8_t *)pct_tensor_data(m);
    int nch = pct_ix_nz_chunks(n);
    int64_t total;
    PCT_NOGIL_BEGIN
    total = pct_ix_nz_count(md, n, nch, start);
    PCT_NOGIL_END
    int64_t rs[2] = {transposed ? nd : total, transposed ? total : nd};
    pct_tensor *r = pct_tensor_empty(2, rs, PCT_INT64, PCT_CPU, -1);
    if (!r) { PCT_DECREF(m); return NULL; }
    int64_t *out = (int64_t *)pct_tensor_data(r);
    int64_t rstride = transposed ? 1 : nd, dstride = transposed ? total : 1;
    if (total == 0) nch = 0; /* nothing to write (and sizes may hold zeros) */
    PCT_NOGIL_BEGIN
    IX_PARALLEL_FOR(nch > 1)
    for (int ch = 0; ch < nch; ch++) {
        int64_t b = n * ch / nch, e = n * (ch + 1) / nch, pos = start[ch];
        if (b == e) continue;
        int64_t co[PCT_MAX_DIMS], rem = b;
        for (int d = nd - 1; d >= 0; d--) { co[d] = rem % sizes[d]; rem /= sizes[d]; }
        if (nd == 0) continue;
        int64_t last = sizes[nd - 1], i = b;
        while (i < e) {
            /* the rest of the current row of the last dim */
            int64_t c0 = co[nd - 1], row_end = i + (last - c0);
            if (row_end > e) row_end = e;
            for (int64_t q = i; q < row_end; q++) {
                if (md[q]) {
                    co[nd - 1] = c0 + (q - i);
                    for (int d = 0; d < nd; d++) out[pos * rstride + d * dstride] = co[d];
                    pos++;
                }
            }
            if (row_end >= e) break;
            i = row_end;
            co[nd - 1] = 0;
            for (int d = nd - 2; d >= 0; d--) {
                if (++co[d] < sizes[d]) break;
                co[d] = 0;
            }
        }
    }
    PCT_NOGIL_END
    PCT_DECREF(m);
    return r;
}

int pct_ix_rows(pct_tensor *r, pct_tensor **rows)
{
    int64_t k = r->sizes[0], cnt = r->sizes[1];
    for (int64_t i = 0; i < k; i++) {
        int64_t st = 1;
        pct_tensor *row = pct_tensor_view_of(r, 1, &cnt, &st, r->offset + i * r->strides[0]);
        if (!row) {
            while (i--) PCT_DECREF(rows[i]);
            return -1;
        }
        PCT_CLEAR(row->base); /* the rows stand alone, as torch's results do */
        rows[i] = row;
    }
    return 0;
}

/* The rows of a (k, count) tensor as a tuple of 1-d views. */
pct_object *pct_ix_rows_tuple(pct_tensor *r)
{
    pct_tensor *rows[PCT_MAX_DIMS];
    if (pct_ix_rows(r, rows) < 0) return NULL;
    return pct_tuple_steal(r->sizes[0], (pct_object *const *)rows);
}

pct_object *pct_cpu_nonzero(pct_call *c)
{
    PCT_ARGS(nonzero);
    pct_tensor *t = arg.input;
    bool as_tuple = arg.as_tuple;
    if (as_tuple && c->out) {
        pct_error_str(PCT_ERR_RUNTIME, "nonzero does not support the out kwarg when as_tuple is True");
        return NULL;
    }
    if (as_tuple) {
        pct_tensor *r = pct_ix_nonzero(t, true, true);
        if (!r) return NULL;
        pct_object *tup = pct_ix_rows_tuple(r);
        PCT_DECREF(r);
        return tup;
    }
    if (c->out && c->out->dtype != PCT_INT64) {
        pct_error(PCT_ERR_RUNTIME, "nonzero: Expected out tensor to have scalar type Long but got scalar type%s",
                     pct_dtype_cpp_name[c->out->dtype]);
        return NULL;
    }
    return pct_index_to_out(c, pct_ix_nonzero(t, false, false));
}

pct_object *pct_cpu_argwhere(pct_call *c)
{
    PCT_ARGS(argwhere);
    return pct_index_to_out(c, pct_ix_nonzero(arg.input, false, false));
}

pct_object *pct_cpu_where_cond(pct_call *c)
{
    PCT_ARGS(where_cond);
    pct_tensor *r = pct_ix_nonzero(arg.condition, true, true);
    if (!r) return NULL;
    pct_object *tup = pct_ix_rows_tuple(r);
    PCT_DECREF(r);
    return tup;
}

