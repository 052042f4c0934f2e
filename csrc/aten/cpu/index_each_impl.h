/* index_each_impl.h: the walk of one index-loop call (Note [Index loops] in index.c) for one
 * dtype and one op, included inside ix_loop_<N> (index_loop_impl.h) once per op. Before
 * including, define IX_BODY: a statement over d (destination element), s (source element),
 * j (index value) and k (outer position). n == 1 (advanced indexing, take, put) has its own
 * loop without the inner one. IX_BODY is undefined at the end. No include guard: by design. */
if (n == 1 && steps[2] == 0) {
    /* one index value for the whole run (the inner dims of x[idx]): plain strided loop */
    const int64_t j = *(const int64_t *)args[2];
    char *restrict d0 = args[0] + j * c->dst_sj;
    const char *restrict s0 = args[1] + j * c->src_sj;
    const int64_t sd = steps[0], ss = steps[1];
    if (c->op == IX_COPY && sd == (int64_t)sizeof(PCT_TPL_T) && ss == (int64_t)sizeof(PCT_TPL_T)) {
        memcpy(d0, s0, (size_t)dims[0] * sizeof(PCT_TPL_T));
    } else if (sd == (int64_t)sizeof(PCT_TPL_T) && ss == (int64_t)sizeof(PCT_TPL_T)) {
        for (int64_t k = 0; k < dims[0]; k++) {
            char *d = d0 + k * (int64_t)sizeof(PCT_TPL_T);
            const char *s = s0 + k * (int64_t)sizeof(PCT_TPL_T);
            (void)s;
            IX_BODY;
        }
    } else {
        for (int64_t k = 0; k < dims[0]; k++) {
            char *d = d0 + k * sd;
            const char *s = s0 + k * ss;
            (void)s;
            IX_BODY;
        }
    }
} else if (n == 1 && c->op == IX_COPY && c->dst_sj == 0 && steps[0] == (int64_t)sizeof(PCT_TPL_T) &&
           steps[1] == 0 && steps[2] == (int64_t)sizeof(int64_t)) {
    /* a gather into a contiguous run: dst[k] = src[L[k]] */
    PCT_TPL_T *restrict dd = (PCT_TPL_T *)args[0];
    const int64_t *restrict jp = (const int64_t *)args[2];
    const char *sb = args[1];
    for (int64_t k = 0; k < dims[0]; k++) dd[k] = *(const PCT_TPL_T *)(sb + jp[k] * c->src_sj);
} else if (n == 1) {
    for (int64_t k = 0; k < dims[0]; k++) {
        int64_t j = *(const int64_t *)(args[2] + k * steps[2]);
        char *d = args[0] + k * steps[0] + j * c->dst_sj;
        const char *s = args[1] + k * steps[1] + j * c->src_sj;
        (void)s;
        IX_BODY;
    }
} else {
    for (int64_t k = 0; k < dims[0]; k++) {
        char *dp = args[0] + k * steps[0];
        const char *sp = args[1] + k * steps[1];
        const char *ip = args[2] + k * steps[2];
        for (int64_t i = 0; i < n; i++) {
            int64_t j = *(const int64_t *)(ip + i * c->idx_step);
            char *d = dp + i * c->dst_si + j * c->dst_sj;
            const char *s = sp + i * c->src_si + j * c->src_sj;
            (void)s;
            IX_BODY;
        }
    }
}
#undef IX_BODY
