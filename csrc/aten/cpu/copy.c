/* copy.c: dtype conversion loops, one per (destination, source) pair, generated from
 * the dtype list. Contiguous same-dtype runs are a memcpy; broadcast sources a fill. */
#include "copy_loops.h"
#include "half_f16c.h"
#include "simd_levels.h"
#include <string.h>

/* The clone set of the conversions into a dtype (Note [One clone set] in simd_levels.h): the rounding into bfloat16
 * and float16 is integer work per element, which AVX-512 halves; the other conversions keep the baseline's. */
#define PCT_CVT_CLONES_BOOL
#define PCT_CVT_CLONES_UINT8
#define PCT_CVT_CLONES_INT8
#define PCT_CVT_CLONES_INT16
#define PCT_CVT_CLONES_INT32
#define PCT_CVT_CLONES_INT64
#define PCT_CVT_CLONES_FLOAT16 PCT_HOT_X86_64_V4
#define PCT_CVT_CLONES_BFLOAT16 PCT_HOT_X86_64_V4
#define PCT_CVT_CLONES_FLOAT32
#define PCT_CVT_CLONES_FLOAT64
#define PCT_CVT_CLONES_UINT16
#define PCT_CVT_CLONES_UINT32
#define PCT_CVT_CLONES_UINT64

/* float32 to and from float16 by F16C where the CPU has it: the same values (round to nearest even both ways: the
 * float16 loops' Note [float16 loops]); false where it does not apply */
static bool convert_f16c(int dst, int src, void *o, const void *in, int64_t n)
{
    if (!pct_have_f16c()) return false;
    if (dst == PCT_FLOAT16 && src == PCT_FLOAT32) pct_f16c_from_float(in, o, n);
    else if (dst == PCT_FLOAT32 && src == PCT_FLOAT16) pct_f16c_to_float(in, o, n);
    else return false;
    return true;
}

#define PCT_CONVERT_LOOP(DE, DN, DT, DC, DS, SE, SN, ST, SC, SS)                               \
    PCT_CVT_CLONES_##DE static void copy_##SN##_to_##DN(char **args, const int64_t *dims, const int64_t *steps, void *ctx) \
    {                                                                                          \
        (void)ctx;                                                                             \
        int64_t n = *dims, so = steps[0], si = steps[1];                                       \
        char *o = args[0];                                                                     \
        const char *in = args[1];                                                              \
        if (so == (int64_t)sizeof(DT) && si == (int64_t)sizeof(ST)) {                          \
            if ((PCT_##DE == PCT_FLOAT16 || PCT_##SE == PCT_FLOAT16) && convert_f16c(PCT_##DE, PCT_##SE, o, in, n)) \
                return;                                                                        \
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

/* Same-dtype copies move bytes: contiguous runs become one memcpy; a reversed run (flip's source) a loop the compiler
 * vectorizes with permutes instead of element-by-element strided moves; a broadcast value (fill_, zeros) 32-byte
 * stores in the x86-64-v3 clone (the baseline's 16-byte ones took 1.5x torch's time). */
#define PCT_SAME_LOOP(E, N, T, C, S)                                                           \
    PCT_HOT_X86_64_V3 static void copy_same_##N(char **args, const int64_t *dims, const int64_t *steps, void *ctx) \
    {                                                                                          \
        (void)ctx;                                                                             \
        int64_t n = *dims, so = steps[0], si = steps[1];                                       \
        if (so == (int64_t)sizeof(T) && si == (int64_t)sizeof(T)) {                            \
            memmove(args[0], args[1], (size_t)n * sizeof(T));                                  \
        } else if (so == (int64_t)sizeof(T) && si == 0) {                                      \
            T v = *(const T *)args[1];                                                         \
            T *restrict op = (T *)args[0];                                                     \
            for (int64_t k = 0; k < n; k++) op[k] = v;                                         \
        } else if (so == (int64_t)sizeof(T) && si == -(int64_t)sizeof(T)) {                     \
            T *restrict op = (T *)args[0];                                                     \
            const T *restrict ip = (const T *)args[1] - (n - 1);                               \
            for (int64_t k = 0; k < n; k++) op[k] = ip[n - 1 - k];                             \
        } else {                                                                               \
            for (int64_t k = 0; k < n; k++) *(T *)(args[0] + k * so) = *(const T *)(args[1] + k * si); \
        }                                                                                      \
    }
PCT_FORALL_EVERY_DTYPE(PCT_SAME_LOOP)

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
    PCT_FORALL_EVERY_DTYPE(PCT_SAME_ENTRY)
#undef PCT_SAME_ENTRY
};

/* Conversions with a complex or storage-only dtype on either side (Note [Complex and float8 dtypes] in dtype.h)
 * go through a complex pair of doubles, as torch's go through c10::complex: a real destination takes the real part,
 * bool is true where either part is nonzero, a float8 destination rounds the float value. */
#define NAN_TO_ZERO(d) ((d) == PCT_FLOAT8_E4M3FNUZ || (d) == PCT_FLOAT8_E5M2FNUZ || (d) == PCT_FLOAT8_E8M0FNU)
#define PCT_EXTRA_LOOP(SE, DE)                                                                         \
    static void copy_x_##SE##_to_##DE(char **args, const int64_t *dims, const int64_t *steps, void *ctx) \
    {                                                                                                  \
        (void)ctx;                                                                                     \
        for (int64_t k = 0; k < *dims; k++) {                                                          \
            double re, im;                                                                             \
            pct_load_as_complex(args[1] + k * steps[1], PCT_##SE, &re, &im);                           \
            if (PCT_##DE == PCT_BOOL) re = re != 0 || im != 0;                                         \
            /* torch converts the NaN of the fnuz and e8m0 formats to 0 in an integer */                 \
            else if (NAN_TO_ZERO(PCT_##SE) && re != re && pct_dtype_is_integral(PCT_##DE, false)) re = 0; \
            pct_store_complex(args[0] + k * steps[0], PCT_##DE, re, im);                               \
        }                                                                                              \
    }
#define PCT_EXTRA_DTYPES(X, A)                                                                         \
    X(A, COMPLEX64) X(A, COMPLEX128) X(A, COMPLEX32) X(A, FLOAT8_E5M2) X(A, FLOAT8_E4M3FN) X(A, FLOAT8_E5M2FNUZ) \
    X(A, FLOAT8_E4M3FNUZ) X(A, FLOAT8_E8M0FNU)
#define PCT_TO_EXTRA(E, N, T, C, S) PCT_EXTRA_DTYPES(PCT_EXTRA_LOOP, E)
PCT_FORALL_EVERY_DTYPE(PCT_TO_EXTRA) /* every dtype to each extra one */
#define PCT_EXTRA_LOOP_REV(DE, SE) PCT_EXTRA_LOOP(SE, DE)
#define PCT_FROM_EXTRA(E, N, T, C, S) PCT_EXTRA_DTYPES(PCT_EXTRA_LOOP_REV, E)
PCT_FORALL_ALL_DTYPES(PCT_FROM_EXTRA) /* each extra dtype to the others */

static const pct_loop_fn extra_table[PCT_NUM_DTYPES][PCT_NUM_DTYPES] = {
#define PCT_EXTRA_ENTRY(SE, DE) [PCT_##SE][PCT_##DE] = copy_x_##SE##_to_##DE,
#define PCT_EXTRA_ENTRY_REV(DE, SE) [PCT_##SE][PCT_##DE] = copy_x_##SE##_to_##DE,
#define PCT_TO_EXTRA_ENTRY(E, N, T, C, S) PCT_EXTRA_DTYPES(PCT_EXTRA_ENTRY, E)
#define PCT_FROM_EXTRA_ENTRY(E, N, T, C, S) PCT_EXTRA_DTYPES(PCT_EXTRA_ENTRY_REV, E)
    PCT_FORALL_EVERY_DTYPE(PCT_TO_EXTRA_ENTRY) PCT_FORALL_ALL_DTYPES(PCT_FROM_EXTRA_ENTRY)
};

pct_loop_fn pct_copy_loop(int dst, int src)
{
    if (dst == src) return same_table[dst];
    return pct_dtype_is_limited(dst) && !pct_dtype_is_barebones(dst) ? extra_table[src][dst]
         : pct_dtype_is_limited(src) && !pct_dtype_is_barebones(src) ? extra_table[src][dst]
                                                                      : convert_table[src][dst];
}
