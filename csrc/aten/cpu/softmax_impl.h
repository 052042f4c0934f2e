/* softmax_impl.h: the softmax / log_softmax loops of one floating dtype, included by softmax.c
 * once per dtype, the way NumPy's .c.src loops are expanded. Before including, define:
 *   SM_E   the dtype's enum suffix (FLOAT32: PCT_FLOAT32, PCT_TO_COMPUTE_FLOAT32, ...)
 *   SM_N   its name (Float: softmax_rows_Float, softmax_cols_Float, softmax_run_Float)
 *   SM_T   its storage type, SM_C its compute type (float for float16 / bfloat16)
 * They are undefined at the end, ready for the next dtype. No include guard: by design. */
#define SM_CAT_(a, b) a##b
#define SM_CAT(a, b) SM_CAT_(a, b)
#define SM_NAME(base) SM_CAT(base##_, SM_N)
#define SM_TO_C SM_CAT(PCT_TO_COMPUTE_, SM_E)
#define SM_FROM_C SM_CAT(PCT_FROM_COMPUTE_, SM_E)
#define SM_EXP SM_CAT(RED_EXP_, SM_E)
#define SM_MATH(fn) SM_CAT(RED_FN_, SM_E)(fn)
#define SM_NARROW SM_CAT(RED_NARROW_, SM_E)
#define SM_IS_F32 SM_CAT(RED_IS_F32_, SM_E)

/* The input is contiguous and viewed as (outer, len, inner). Rows (inner == 1) are reduced
 * in place; otherwise blocks of RED_NB columns are reduced together so loads stay
 * contiguous. Computed in float for 16-bit floats (exp recomputed instead of stored). */
PCT_HOT static void SM_NAME(softmax_rows)(const SM_T *restrict in, SM_T *restrict out, int64_t r0, int64_t r1, int64_t len, bool lg)
{
    for (int64_t r = r0; r < r1; r++) {
        const SM_T *x = in + r * len;
        SM_T *y = out + r * len;
        SM_C mx = -INFINITY;
        for (int64_t k = 0; k < len; k++) { SM_C v = SM_TO_C(x[k]); mx = v > mx ? v : mx; }
        SM_C acc[8] = {0};
        int64_t k = 0;
        if (lg || SM_NARROW) {
            for (; k + 8 <= len; k += 8)
                for (int j = 0; j < 8; j++) acc[j] += SM_EXP(SM_TO_C(x[k + j]) - mx);
            for (; k < len; k++) acc[0] += SM_EXP(SM_TO_C(x[k]) - mx);
        } else {
            for (; k + 8 <= len; k += 8)
                for (int j = 0; j < 8; j++) {
                    SM_C e = SM_EXP(SM_TO_C(x[k + j]) - mx);
                    y[k + j] = SM_FROM_C(e);
                    acc[j] += e;
                }
            for (; k < len; k++) {
                SM_C e = SM_EXP(SM_TO_C(x[k]) - mx);
                y[k] = SM_FROM_C(e);
                acc[0] += e;
            }
        }
        SM_C sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        if (lg) { /* (x - max) - log(sum), as torch: max + log(sum) would round away small terms */
            SM_C ls = SM_MATH(log)(sum);
            for (k = 0; k < len; k++) y[k] = SM_FROM_C((SM_TO_C(x[k]) - mx) - ls);
        } else if (SM_NARROW) {
            SM_C inv = 1 / sum;
            for (k = 0; k < len; k++)
                y[k] = SM_FROM_C(SM_EXP(SM_TO_C(x[k]) - mx) * inv);
        } else {
            SM_C inv = 1 / sum;
            for (k = 0; k < len; k++) y[k] = SM_FROM_C(SM_TO_C(y[k]) * inv);
        }
    }
}
PCT_HOT static void SM_NAME(softmax_cols)(const SM_T *restrict in, SM_T *restrict out, int64_t u0, int64_t u1, int64_t len,
                             int64_t inner, bool lg)
{
    int64_t nblk = (inner + RED_NB - 1) / RED_NB;
    SM_C mx[RED_NB], sum[RED_NB];
    for (int64_t u = u0; u < u1; u++) {
        int64_t o = u / nblk, j0 = (u % nblk) * RED_NB;
        int64_t nb = inner - j0 < RED_NB ? inner - j0 : RED_NB;
        const SM_T *x = in + o * len * inner + j0;
        SM_T *y = out + o * len * inner + j0;
        for (int64_t j = 0; j < nb; j++) { mx[j] = -INFINITY; sum[j] = 0; }
        for (int64_t r = 0; r < len; r++)
            for (int64_t j = 0; j < nb; j++) {
                SM_C v = SM_TO_C(x[r * inner + j]);
                mx[j] = v > mx[j] ? v : mx[j];
            }
        for (int64_t r = 0; r < len; r++)
            for (int64_t j = 0; j < nb; j++)
                sum[j] += SM_EXP(SM_TO_C(x[r * inner + j]) - mx[j]);
        if (lg) {
            for (int64_t j = 0; j < nb; j++) sum[j] = SM_MATH(log)(sum[j]);
            for (int64_t r = 0; r < len; r++)
                for (int64_t j = 0; j < nb; j++)
                    y[r * inner + j] = SM_FROM_C((SM_TO_C(x[r * inner + j]) - mx[j]) - sum[j]);
        } else {
            for (int64_t j = 0; j < nb; j++) sum[j] = 1 / sum[j];
            for (int64_t r = 0; r < len; r++)
                for (int64_t j = 0; j < nb; j++)
                    y[r * inner + j] = SM_FROM_C(
                        SM_EXP(SM_TO_C(x[r * inner + j]) - mx[j]) * sum[j]);
        }
    }
}
static void SM_NAME(softmax_run)(const char *in, char *out, int64_t outer, int64_t len, int64_t inner, bool lg)
{
    int64_t units = inner == 1 ? outer : outer * ((inner + RED_NB - 1) / RED_NB);
    int64_t numel = outer * len * inner;
    int nth = 1;
    RED_OMP_THREADS(nth, numel, units);
    if (nth <= 1) {
        if (inner == 1 && SM_IS_F32) red_vsoftmax_rows_f32((const float *)in, (float *)out, 0, outer, len, lg);
        else if (inner == 1) SM_NAME(softmax_rows)((const SM_T *)in, (SM_T *)out, 0, outer, len, lg);
        else SM_NAME(softmax_cols)((const SM_T *)in, (SM_T *)out, 0, units, len, inner, lg);
        return;
    }
    RED_OMP_SPLIT(units, nth,
        if (inner == 1 && SM_IS_F32) red_vsoftmax_rows_f32((const float *)in, (float *)out, b_, e_, len, lg);
        else if (inner == 1) SM_NAME(softmax_rows)((const SM_T *)in, (SM_T *)out, b_, e_, len, lg);
        else SM_NAME(softmax_cols)((const SM_T *)in, (SM_T *)out, b_, e_, len, inner, lg));
}

#undef SM_CAT_
#undef SM_CAT
#undef SM_NAME
#undef SM_TO_C
#undef SM_FROM_C
#undef SM_EXP
#undef SM_MATH
#undef SM_NARROW
#undef SM_IS_F32
#undef SM_E
#undef SM_N
#undef SM_T
#undef SM_C
