/* sort_internal.h: what the sort family's files share (sort.c, sort_common.c, scan.c,
 * unique.c, histogram.c, searchsorted.c): (key, index) pairs and the keys of every dtype
 * (Note [Sort keys] in sort.c), the row walker and parallel row driver, the result and
 * result-pair helpers. Functions called across files are pct_sort_* with hidden
 * visibility (not exported from _C).
 */
#ifndef PCT_SORT_INTERNAL_H
#define PCT_SORT_INTERNAL_H
#include "../iter.h"
#include "../out.h"
#include "../op.h"
#include "../error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SORT_FN static __attribute__((unused))
#define PCT_SORT_INTERNAL __attribute__((visibility("hidden")))

/* ------------------------------------------------------------------------------------ */
/* dtype helpers                                                                         */

static inline int sort_not_implemented(const char *kernel, int dtype)
{
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, pct_dtype_cpp_name[dtype]);
    return -1;
}

static inline void sort_copy_elem(char *dst, const char *src, int isz)
{
    switch (isz) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

/* ------------------------------------------------------------------------------------ */
/* keys (Note [Sort keys])                                                               */

typedef struct sort_kv {
    uint64_t k;
    int64_t i;
} sort_kv;

/* (value, index) pairs for mode, which compares values with a plain < as torch does */
typedef struct sort_dv {
    double v;
    int64_t i;
} sort_dv;

#define SORT_SIGN64 0x8000000000000000ull
#define SORT_NAN_KEY UINT64_MAX

static inline uint64_t sort_key_f64(double d)
{
    if (d != d) return SORT_NAN_KEY;
    if (d == 0) d = 0.0;
    uint64_t u;
    memcpy(&u, &d, 8);
    return (u & SORT_SIGN64) ? ~u : (u | SORT_SIGN64);
}

static inline uint64_t sort_key_f32(float f)
{
    if (f != f) return SORT_NAN_KEY;
    if (f == 0) f = 0.0f;
    uint32_t u = pct_float_bits(f);
    return (uint64_t)((u & 0x80000000u) ? ~u : (u | 0x80000000u));
}

#define SORT_KEY_BOOL(v) ((uint64_t)((v) != 0))
#define SORT_KEY_UINT8(v) ((uint64_t)(v))
#define SORT_KEY_INT8(v) ((uint64_t)(int64_t)(v) ^ SORT_SIGN64)
#define SORT_KEY_INT16(v) ((uint64_t)(int64_t)(v) ^ SORT_SIGN64)
#define SORT_KEY_INT32(v) ((uint64_t)(int64_t)(v) ^ SORT_SIGN64)
#define SORT_KEY_INT64(v) ((uint64_t)(int64_t)(v) ^ SORT_SIGN64)
#define SORT_KEY_FLOAT16(v) sort_key_f32(pct_half_to_float(v))
#define SORT_KEY_BFLOAT16(v) sort_key_f32(pct_bf16_to_float(v))
#define SORT_KEY_FLOAT32(v) sort_key_f32(v)
#define SORT_KEY_FLOAT64(v) sort_key_f64(v)
#define SORT_KEY_UINT16(v) ((uint64_t)(v))
#define SORT_KEY_UINT32(v) ((uint64_t)(v))
#define SORT_KEY_UINT64(v) ((uint64_t)(v))

#define SORT_ISNAN_BOOL(x) 0
#define SORT_ISNAN_UINT8(x) 0
#define SORT_ISNAN_INT8(x) 0
#define SORT_ISNAN_INT16(x) 0
#define SORT_ISNAN_INT32(x) 0
#define SORT_ISNAN_INT64(x) 0
#define SORT_ISNAN_FLOAT16(x) ((x) != (x))
#define SORT_ISNAN_BFLOAT16(x) ((x) != (x))
#define SORT_ISNAN_FLOAT32(x) ((x) != (x))
#define SORT_ISNAN_FLOAT64(x) ((x) != (x))
#define SORT_ISNAN_UINT16(x) 0
#define SORT_ISNAN_UINT32(x) 0
#define SORT_ISNAN_UINT64(x) 0

typedef void (*sort_load_fn)(sort_kv *, const char *, int64_t, int64_t);
typedef void (*sort_keys_fn)(uint64_t *, const char *, int64_t, int64_t);
typedef void (*sort_loadv_fn)(sort_dv *, const char *, int64_t, int64_t);
/* per dtype: (value, index) pairs of mode, (key, position) pairs, bare keys (sort_common.c) */
PCT_SORT_INTERNAL extern const sort_loadv_fn pct_sort_loadv[PCT_NUM_DTYPES];
PCT_SORT_INTERNAL extern const sort_load_fn pct_sort_load[PCT_NUM_DTYPES];
PCT_SORT_INTERNAL extern const sort_keys_fn pct_sort_keys[PCT_NUM_DTYPES];

static inline bool sort_key_is_nan(uint64_t k, int dtype) { return k == SORT_NAN_KEY && pct_dtype_is_floating(dtype); }

static inline int sort_lg(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

/* A stable sort of n pairs (tmp: room for n more, or NULL) (sort.c). */
PCT_SORT_INTERNAL void pct_sort_stable(sort_kv *a, sort_kv *tmp, int64_t n, bool desc);
/* torch's sort(stable=False) of n pairs, ascending: libstdc++'s introsort (sort.c). */
PCT_SORT_INTERNAL void pct_sort_unstable_asc(sort_kv *a, int64_t n);

/* ------------------------------------------------------------------------------------ */
/* rows along a dim, and the parallel row driver                                         */

/* The 1-D rows of a tensor along `dim` (a 0-d tensor is one row of one element). Rows are
 * numbered in row-major order of the other dims, so in a contiguous tensor of the same
 * shape with m elements along dim, row r starts at element sort_rows_out(rp, r, m) with
 * stride rp->inner. */
typedef struct sort_rows {
    const char *base;
    int itemsize;
    int64_t n;        /* elements along dim */
    int64_t st;       /* byte stride along dim */
    int64_t nrows;
    int64_t inner;    /* product of the sizes after dim */
    int nother;
    int64_t osz[PCT_MAX_DIMS], ost[PCT_MAX_DIMS]; /* the other dims: sizes, byte strides */
} sort_rows;

static inline const char *sort_rows_in(const sort_rows *rp, int64_t r)
{
    int64_t off = 0;
    for (int k = rp->nother - 1; k >= 0; k--) {
        int64_t sz = rp->osz[k];
        off += (r % sz) * rp->ost[k];
        r /= sz;
    }
    return rp->base + off;
}

static inline int64_t sort_rows_out(const sort_rows *rp, int64_t r, int64_t m)
{
    return (r / rp->inner) * m * rp->inner + r % rp->inner;
}

typedef void (*sort_row_fn)(void *ctx, int64_t r, void *scratch);
/* The rows of t along dim (sort_common.c). */
PCT_SORT_INTERNAL void pct_sort_rows_init(sort_rows *rp, const pct_tensor *t, int dim);
/* Runs fn(ctx, r, scratch) for every row r; with the GIL released and rows split across
 * threads when `work` (about the number of element operations) is large. Each thread has
 * its own scratch buffer of scratch_bytes. -1 with MemoryError. */
PCT_SORT_INTERNAL int pct_sort_run_rows(int64_t nrows, double work, size_t scratch_bytes, sort_row_fn fn, void *ctx);

/* ------------------------------------------------------------------------------------ */
/* results and out=                                                                      */

/* The result of a one-output op: res itself, or res copied into out (stolen res). */
PCT_SORT_INTERNAL pct_object *pct_sort_finish(pct_tensor *res, pct_tensor *out);
/* The result of a two-output op: the pair (a, b), or the out= pair they were copied into (steals a and b). */
PCT_SORT_INTERNAL pct_object *pct_sort_finish_pair(pct_tensor *a, pct_tensor *b, pct_tensor *const *outs);
/* Note [Complex selections]: torch's value-and-index selections (cummax, cummin, kthvalue, mode) have no complex
 * kernel, yet a 0-d input never reaches one: its result is the element and index 0. A complex self of more dimensions
 * is refused with torch's kernel name. The pair (or out=), or NULL with the error. */
PCT_SORT_INTERNAL pct_object *pct_sort_complex_scalar_pair(pct_tensor *self, const char *kernel, pct_tensor *const *outs);
/* sort, argsort and msort results keep the input's memory layout, as torch's; res is stolen. */
PCT_SORT_INTERNAL pct_tensor *pct_sort_relayout(pct_tensor *res, const pct_tensor *like);
/* Output shape of a reduction over dim (keepdim keeps it as size 1). */
PCT_SORT_INTERNAL int pct_sort_reduced_shape(const pct_tensor *t, int dim, bool keepdim, int64_t *shape);
/* IndexError for a reduction over an empty dim, as torch's zero_numel_check_dims. */
PCT_SORT_INTERNAL int pct_sort_check_nonempty_dim(const pct_tensor *t, int dim, const char *name);

#endif
