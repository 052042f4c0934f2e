/* copy.c: dtype conversion loops, one per (destination, source) pair, generated from
 * the dtype list. Contiguous same-dtype runs are a memcpy; broadcast sources a fill. */
#include "copy_loops.h"
#include <string.h>

#define PCT_CONVERT_LOOP(DE, DN, DT, DC, DS, SE, SN, ST, SC, SS)                               \
    static void copy_##SN##_to_##DN(char **args, const int64_t *dims, const int64_t *steps, void *ctx) \
    {                                                                                          \
        (void)ctx;                                                                             \
        int64_t n = *dims, so = steps[0], si = steps[1];                                       \
        char *o = args[0];                                                                     \
        const char *in = args[1];                                                              \
        if (so == (int64_t)sizeof(DT) && si == (int64_t)sizeof(ST)) {                          \
            DT *restrict op = (DT *)o;                                                         \
            const ST *restrict ip = (const ST *)in;                                            \
            for (int64_t k = 0; k < n; k++) op[k] = PCT_CONVERT(DE, DC, SE, ip[k]);            \
        } else if (so == (int64_t)sizeof(DT) && si == 0) {                                     \
            DT v = PCT_CONVERT(DE, DC, SE, *(const ST *)in);                                   \
            DT *restrict op = (DT *)o;                                                         \
            for (int64_t k = 0; k < n; k++) op[k] = v;                                         \
        } else {                                                                               \
            for (int64_t k = 0; k < n; k++)                                                    \
                *(DT *)(o + k * so) = PCT_CONVERT(DE, DC, SE, *(const ST *)(in + k * si));     \
        }                                                                                      \
    }

/* Same-dtype copies move bytes: contiguous runs become one memcpy. */
#define PCT_SAME_LOOP(E, N, T, C, S)                                                           \
    static void copy_same_##N(char **args, const int64_t *dims, const int64_t *steps, void *ctx) \
    {                                                                                          \
        (void)ctx;                                                                             \
        int64_t n = *dims, so = steps[0], si = steps[1];                                       \
        if (so == (int64_t)sizeof(T) && si == (int64_t)sizeof(T)) {                            \
            memmove(args[0], args[1], (size_t)n * sizeof(T));                                  \
        } else if (so == (int64_t)sizeof(T) && si == 0) {                                      \
            T v = *(const T *)args[1];                                                         \
            T *restrict op = (T *)args[0];                                                     \
            for (int64_t k = 0; k < n; k++) op[k] = v;                                         \
        } else {                                                                               \
            for (int64_t k = 0; k < n; k++) *(T *)(args[0] + k * so) = *(const T *)(args[1] + k * si); \
        }                                                                                      \
    }
PCT_FORALL_ALL_DTYPES(PCT_SAME_LOOP)

/* For each source dtype S, one loop per destination dtype D. */
#define PCT_CONVERT_TO(DE, DN, DT, DC, DS, SE, SN, ST, SC) PCT_CONVERT_LOOP(DE, DN, DT, DC, DS, SE, SN, ST, SC, "")
#define PCT_CONVERT_FROM(SE, SN, ST, SC, SS) PCT_FORALL_ALL_DTYPES_PAIRED(PCT_CONVERT_TO, SE, SN, ST, SC)
PCT_FORALL_ALL_DTYPES(PCT_CONVERT_FROM)

/* convert_table[src][dst] */
#define PCT_ROW_ENTRY(DE, DN, DT, DC, DS, SE, SN, ST, SC) copy_##SN##_to_##DN,
#define PCT_TABLE_ROW(SE, SN, ST, SC, SS) {PCT_FORALL_ALL_DTYPES_PAIRED(PCT_ROW_ENTRY, SE, SN, ST, SC)},
static const pct_loop_fn convert_table[PCT_NUM_DTYPES][PCT_NUM_DTYPES] = {PCT_FORALL_ALL_DTYPES(PCT_TABLE_ROW)};

static const pct_loop_fn same_table[PCT_NUM_DTYPES] = {
#define PCT_SAME_ENTRY(E, N, T, C, S) copy_same_##N,
    PCT_FORALL_ALL_DTYPES(PCT_SAME_ENTRY)
#undef PCT_SAME_ENTRY
};

pct_loop_fn pct_copy_loop(int dst, int src)
{
    return dst == src ? same_table[dst] : convert_table[src][dst];
}
