/* scan_impl.h: one dtype's scan row, scan_row_<N> (cumsum, cumprod, logcumsumexp, cummax,
 * cummin), included by scan.c once per dtype through dtype_foreach.h (PCT_TPL_E/N/T/C), the
 * way NumPy's .c.src loops are expanded. No include guard: by design. */
#define SC_CAT_(a, b) a##b
#define SC_CAT(a, b) SC_CAT_(a, b)
#define SC_ACC SC_CAT(SCAN_ACC_, PCT_TPL_E)
#define SC_TOACC SC_CAT(SCAN_TOACC_, PCT_TPL_E)
#define SC_TO_C SC_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)
#define SC_FROM_C SC_CAT(PCT_FROM_COMPUTE_, PCT_TPL_E)
#define SC_NEGINF SC_CAT(SCAN_NEGINF_, PCT_TPL_E)
#define SC_ISNAN SC_CAT(SORT_ISNAN_, PCT_TPL_E)

/* One row of a scan: p (stride st bytes) -> o (stride ost bytes), indices to io (stride ist
 * elements) for cummax / cummin. */
static void SC_CAT(scan_row_, PCT_TPL_N)(int op, char *o, int64_t ost, int64_t *io, int64_t ist,
                                         const char *p, int64_t st, int64_t n)
{
    typedef SC_ACC A;
    switch (op) {
    case SCAN_SUM: {
        A acc = 0;
        for (int64_t j = 0; j < n; j++) {
            acc += SC_TOACC(SC_TO_C(*(const PCT_TPL_T *)(p + j * st)));
            *(PCT_TPL_T *)(o + j * ost) = SC_FROM_C(acc);
        }
        break;
    }
    case SCAN_PROD: {
        A acc = 1;
        for (int64_t j = 0; j < n; j++) {
            acc *= SC_TOACC(SC_TO_C(*(const PCT_TPL_T *)(p + j * st)));
            *(PCT_TPL_T *)(o + j * ost) = SC_FROM_C(acc);
        }
        break;
    }
    case SCAN_LOGSUMEXP: {
        A acc = SC_NEGINF;
        for (int64_t j = 0; j < n; j++) {
            A x = SC_TOACC(SC_TO_C(*(const PCT_TPL_T *)(p + j * st)));
            acc = SCAN_LAE(SC_ACC)(x, acc);
            *(PCT_TPL_T *)(o + j * ost) = SC_FROM_C(acc);
        }
        break;
    }
    default: {
        /* torch's cummax_cummin_helper: ties move to the later position, NaN sticks */
        bool is_max = op == SCAN_MAX;
        PCT_TPL_T best = *(const PCT_TPL_T *)p;
        PCT_TPL_C bc = SC_TO_C(best);
        int64_t bi = 0;
        for (int64_t j = 0; j < n; j++) {
            PCT_TPL_T cur = *(const PCT_TPL_T *)(p + j * st);
            PCT_TPL_C cc = SC_TO_C(cur);
            if (SC_ISNAN(cc) || (!SC_ISNAN(bc) && (is_max ? cc >= bc : cc <= bc))) {
                best = cur;
                bc = cc;
                bi = j;
            }
            *(PCT_TPL_T *)(o + j * ost) = best;
            io[j * ist] = bi;
        }
        break;
    }
    }
}

#undef SC_CAT_
#undef SC_CAT
#undef SC_ACC
#undef SC_TOACC
#undef SC_TO_C
#undef SC_FROM_C
#undef SC_NEGINF
#undef SC_ISNAN
