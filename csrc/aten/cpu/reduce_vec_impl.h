/* reduce_vec_impl.h: one native width of the reductions' explicit-vector loops (Note
 * [Explicit vectors] in reduce_vec.c), included by reduce_vec.c once per instruction set, the
 * way NumPy's .c.src loops are expanded. Before including, define:
 *   RV_SFX    the suffix of the functions and of the table red_vec_<SFX> (base, avx2, avx512)
 *   RV_ATTR   the target attribute of every function (empty for the baseline)
 *   RV_VF, RV_VI, RV_LF   the float vector, the int32 vector of the same width, their lanes
 *   RV_VD, RV_VL, RV_LD   the double vector, the int64 vector, their lanes
 * They are undefined at the end, ready for the next width. No include guard: by design. */
#define RV_CAT_(a, b) a##_##b
#define RV_CAT(a, b) RV_CAT_(a, b)
#define RV_FN(base) RV_CAT(base, RV_SFX)
#define RV_SOFTMAX_HMAX RV_CAT(RV_FN(red_vsoftmax_rows_f32), hmax)
#define RV_SOFTMAX_HSUM RV_CAT(RV_FN(red_vsoftmax_rows_f32), hsum)

RED_VMINMAX(RV_FN(red_vmax_f32), RV_ATTR, float, RV_VF, RV_VI, RV_LF, >)
RED_VMINMAX(RV_FN(red_vmin_f32), RV_ATTR, float, RV_VF, RV_VI, RV_LF, <)
RED_VMINMAX(RV_FN(red_vmax_f64), RV_ATTR, double, RV_VD, RV_VL, RV_LD, >)
RED_VMINMAX(RV_FN(red_vmin_f64), RV_ATTR, double, RV_VD, RV_VL, RV_LD, <)
RED_VSUMEXP(RV_FN(red_vsumexp_f32), RV_ATTR, RV_VF, RV_VI, RV_LF)

/* softmax / log_softmax of contiguous float rows [r0, r1) of length len: a max pass, an exp
 * pass (writing exp to out for softmax) and a scale pass, like torch. Row tails go through a
 * vector padded with -inf (exp 0). Rows go in chunks of up to RED_SM_CHUNK whose max and sum
 * are kept, so the per-row log of log_softmax is one vectorized loop per chunk (short rows,
 * e.g. (2048, 96), are dominated by per-row work); a chunk stays within ~16 KiB so the later
 * passes read from L1, and all its max passes run before its exp passes so that rows' exp
 * chains overlap instead of each waiting for its max. The max pass prefetches the next chunk:
 * a row of 1024 floats is one 4 KiB page and hardware prefetchers stop at page boundaries,
 * so without it every row starts with cache misses (measured ~25% of (4096, 1024)).
 * RED_SM_CHUNK: reduce_vec.c. */
RED_VHMAX(RV_SOFTMAX_HMAX, RV_ATTR, RV_VF, RV_VI, RV_LF)
RED_VHSUM(RV_SOFTMAX_HSUM, RV_ATTR, RV_VF, RV_VI, RV_LF)
RV_ATTR static void RV_FN(red_vsoftmax_rows_f32)(const float *restrict in, float *restrict out, int64_t r0,
                                                 int64_t r1, int64_t len, bool lg)
{
    const int64_t tail = len % RV_LF, body = len - tail;
    const int64_t chunk = len >= 4096 / RED_SM_CHUNK ? (4096 + len - 1) / len : RED_SM_CHUNK;
    /* prefetch distance in elements: the same row of the next chunk */
    const int64_t pf = chunk * len < 4096 ? chunk * len : 4096;
    const RV_VF ninf = (RV_VF){0} - INFINITY;
    float mxs[RED_SM_CHUNK], sh[RED_SM_CHUNK];
    for (int64_t c0 = r0; c0 < r1; c0 += chunk) {
        const int64_t nr = r1 - c0 < chunk ? r1 - c0 : chunk;
        for (int64_t g = 0; g < nr; g++) {
            const float *x = in + (c0 + g) * len;
            const float *y = out + (c0 + g) * len;
            RV_VF m0 = ninf, m1 = ninf, xt = ninf;
            if (tail) memcpy(&xt, x + body, sizeof(float) * (size_t)tail);
            int64_t k = 0;
            for (; k + 2 * RV_LF <= body; k += 2 * RV_LF) {
                RV_VF a, b;
                __builtin_prefetch(x + k + pf);
                __builtin_prefetch(y + k + pf, 1);
                memcpy(&a, x + k, sizeof a);
                memcpy(&b, x + k + RV_LF, sizeof b);
                m0 = RED_VSEL(RV_VI, RV_VF, a > m0, a, m0);
                m1 = RED_VSEL(RV_VI, RV_VF, b > m1, b, m1);
            }
            if (k < body) {
                RV_VF a;
                memcpy(&a, x + k, sizeof a);
                m0 = RED_VSEL(RV_VI, RV_VF, a > m0, a, m0);
            }
            m0 = RED_VSEL(RV_VI, RV_VF, xt > m0, xt, m0);
            m0 = RED_VSEL(RV_VI, RV_VF, m1 > m0, m1, m0);
            mxs[g] = RV_SOFTMAX_HMAX(m0);
        }
        /* exp passes after all max passes: rows' exp chains overlap, none waits for a max */
        for (int64_t g = 0; g < nr; g++) {
            const float *x = in + (c0 + g) * len;
            float *y = out + (c0 + g) * len;
            const float mx = mxs[g];
            RV_VF s0 = {0}, s1 = {0}, xt = ninf;
            int64_t k;
            for (k = 0; k + 2 * RV_LF <= body; k += 2 * RV_LF) {
                RV_VF a, b, ea, eb;
                memcpy(&a, x + k, sizeof a);
                memcpy(&b, x + k + RV_LF, sizeof b);
                PCT_VEXPF_NEG(RV_VF, RV_VI, ea, a - mx);
                PCT_VEXPF_NEG(RV_VF, RV_VI, eb, b - mx);
                if (!lg) {
                    memcpy(y + k, &ea, sizeof ea);
                    memcpy(y + k + RV_LF, &eb, sizeof eb);
                }
                s0 += ea;
                s1 += eb;
            }
            if (k < body) {
                RV_VF a, ea;
                memcpy(&a, x + k, sizeof a);
                PCT_VEXPF_NEG(RV_VF, RV_VI, ea, a - mx);
                if (!lg) memcpy(y + k, &ea, sizeof ea);
                s0 += ea;
            }
            if (tail) {
                RV_VF et;
                memcpy(&xt, x + body, sizeof(float) * (size_t)tail);
                PCT_VEXPF_NEG(RV_VF, RV_VI, et, xt - mx);
                if (!lg) memcpy(y + body, &et, sizeof(float) * (size_t)tail);
                s0 += et;
            }
            sh[g] = RV_SOFTMAX_HSUM(s0 + s1);
        }
        for (int64_t g = nr; g < RED_SM_CHUNK; g++) mxs[g] = 0, sh[g] = 1;
        if (lg)
            for (int g = 0; g < RED_SM_CHUNK; g++) sh[g] = mxs[g] + pct_fast_logf(sh[g]);
        else
            for (int g = 0; g < RED_SM_CHUNK; g++) sh[g] = 1 / sh[g];
        for (int64_t g = 0; g < nr; g++) {
            const float *x = in + (c0 + g) * len;
            float *y = out + (c0 + g) * len;
            const float v = sh[g];
            int64_t k = 0;
            if (lg) {
                for (; k < body; k += RV_LF) {
                    RV_VF a;
                    memcpy(&a, x + k, sizeof a);
                    a -= v;
                    memcpy(y + k, &a, sizeof a);
                }
                for (; k < len; k++) y[k] = x[k] - v;
            } else {
                for (; k < body; k += RV_LF) {
                    RV_VF a;
                    memcpy(&a, y + k, sizeof a);
                    a *= v;
                    memcpy(y + k, &a, sizeof a);
                }
                for (; k < len; k++) y[k] *= v;
            }
        }
    }
}

static const red_vec_impl RV_FN(red_vec) = {RV_FN(red_vmax_f32), RV_FN(red_vmin_f32), RV_FN(red_vmax_f64),
                                         RV_FN(red_vmin_f64), RV_FN(red_vsumexp_f32),
                                         RV_FN(red_vsoftmax_rows_f32)};

#undef RV_CAT_
#undef RV_CAT
#undef RV_FN
#undef RV_SOFTMAX_HMAX
#undef RV_SOFTMAX_HSUM
#undef RV_SFX
#undef RV_ATTR
#undef RV_VF
#undef RV_VI
#undef RV_LF
#undef RV_VD
#undef RV_VL
#undef RV_LD
