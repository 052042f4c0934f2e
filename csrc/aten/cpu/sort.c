/* sort.c: sorting and selection (sort, argsort, msort, topk, kthvalue, median, nanmedian,
 * mode), scans (cumsum, cumprod, logcumsumexp, cummax, cummin), unique and
 * unique_consecutive, bincount, histc, searchsorted and bucketize.
 *
 * Note [Sort keys]
 * Every comparison-based kernel works on (key, index) pairs: the key is a uint64 whose
 * unsigned order is torch's order of the values (integers with the sign bit flipped,
 * floats by their bit pattern made monotonic, -0.0 folded into +0.0 and every NaN into
 * UINT64_MAX, the largest key, as torch sorts NaN after +inf). Two keys are equal exactly
 * when torch's comparators find neither value less than the other, so a single set of
 * algorithms over pairs serves every dtype; values are written back by gathering the
 * original elements through the indices (which keeps -0.0 and NaN payloads).
 *
 * Note [Matching std::sort]
 * torch's CPU kernels call libstdc++'s std::sort (sort with stable=False, mode),
 * std::partial_sort and std::nth_element (topk), and its own quick_select_template
 * (kthvalue). Which of several equal elements ends up where -- the indices returned for
 * ties -- is a property of those exact algorithms, so SORT_STL_DEFINE below reproduces
 * libstdc++'s introsort / heap-select / introselect step by step (median-of-three pivot
 * moved to the front, unguarded partition, insertion sort below 16 elements, heapsort
 * after 2*log2(n) levels) and sort_quick_select reproduces torch's selection. The
 * unguarded loops carry bounds checks that never fire with a consistent comparator, so
 * an inconsistent one (unique(dim=) over rows holding NaN) cannot run off the array.
 * Stable sorts (stable=True, and torch's radix-sort path for large 1-D integer inputs)
 * sort by (key, index), which has a single answer.
 *
 * Threads: row kernels run through sort_run_rows, which releases the GIL and splits rows
 * across OpenMP threads when the work is large. Nothing inside it calls Python: every
 * check runs before, and allocation failures set a flag turned into MemoryError after.
 */
#include "../iter.h"
#include "../out.h"
#include "../op.h"
#include "../../python/pyobjects.h"
#include "../error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SORT_FN static __attribute__((unused))

/* ------------------------------------------------------------------------------------ */
/* dtype helpers                                                                         */


static int sort_not_implemented(const char *kernel, int dtype)
{
    PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", kernel, pct_dtype_cpp_name[dtype]);
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

/* Loads n strided elements of one row as (key, position) pairs. */
#define SORT_DEF_LOAD(E, N, T, C, S)                                                       \
    static void sort_load_##N(sort_kv *kv, const char *p, int64_t st, int64_t n)           \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            kv[j].k = SORT_KEY_##E(*(const T *)(p + j * st));                              \
            kv[j].i = j;                                                                   \
        }                                                                                  \
    }                                                                                      \
    static void sort_loadv_##N(sort_dv *dv, const char *p, int64_t st, int64_t n)          \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            dv[j].v = (double)PCT_TO_COMPUTE_##E(*(const T *)(p + j * st));                \
            dv[j].i = j;                                                                   \
        }                                                                                  \
    }                                                                                      \
    static void sort_keys_##N(uint64_t *out, const char *p, int64_t st, int64_t n)         \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) out[j] = SORT_KEY_##E(*(const T *)(p + j * st));   \
    }
PCT_FORALL_ALL_DTYPES(SORT_DEF_LOAD) /* sort, argsort, unique take uint16/32/64 */

typedef void (*sort_load_fn)(sort_kv *, const char *, int64_t, int64_t);
typedef void (*sort_keys_fn)(uint64_t *, const char *, int64_t, int64_t);
typedef void (*sort_loadv_fn)(sort_dv *, const char *, int64_t, int64_t);
static const sort_loadv_fn sort_loadv[PCT_NUM_DTYPES] = {
#define SORT_LOADV_ENTRY(E, N, T, C, S) [PCT_##E] = sort_loadv_##N,
    PCT_FORALL_ALL_DTYPES(SORT_LOADV_ENTRY)
#undef SORT_LOADV_ENTRY
};
static const sort_load_fn sort_load[PCT_NUM_DTYPES] = {
#define SORT_LOAD_ENTRY(E, N, T, C, S) [PCT_##E] = sort_load_##N,
    PCT_FORALL_ALL_DTYPES(SORT_LOAD_ENTRY)
#undef SORT_LOAD_ENTRY
};
static const sort_keys_fn sort_keys[PCT_NUM_DTYPES] = {
#define SORT_KEYS_ENTRY(E, N, T, C, S) [PCT_##E] = sort_keys_##N,
    PCT_FORALL_ALL_DTYPES(SORT_KEYS_ENTRY)
#undef SORT_KEYS_ENTRY
};

static inline bool sort_key_is_nan(uint64_t k, int dtype) { return k == SORT_NAN_KEY && pct_dtype_is_floating(dtype); }

/* ------------------------------------------------------------------------------------ */
/* libstdc++'s algorithms (Note [Matching std::sort])                                    */

static inline int sort_lg(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

/* Defines P_sort, P_partial_sort, P_nth_element (and helpers) over arrays of T ordered by
 * LESS(x, y), an expression over two T values that may use `ctx`. */
#define SORT_STL_DEFINE(P, T, LESS)                                                        \
    SORT_FN void P##_linear_insert(T *a, int64_t i, const void *ctx)                       \
    {                                                                                      \
        (void)ctx;                                                                         \
        T v = a[i];                                                                        \
        int64_t n = i - 1;                                                                 \
        while (n >= 0 && LESS(v, a[n])) {                                                  \
            a[i] = a[n];                                                                   \
            i = n;                                                                         \
            n--;                                                                           \
        }                                                                                  \
        a[i] = v;                                                                          \
    }                                                                                      \
    SORT_FN void P##_insertion_sort(T *a, int64_t n, const void *ctx)                      \
    {                                                                                      \
        (void)ctx;                                                                         \
        for (int64_t i = 1; i < n; i++) {                                                  \
            if (LESS(a[i], a[0])) {                                                        \
                T v = a[i];                                                                \
                memmove(a + 1, a, (size_t)i * sizeof(T));                                  \
                a[0] = v;                                                                  \
            } else {                                                                       \
                P##_linear_insert(a, i, ctx);                                              \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    SORT_FN void P##_final_insertion_sort(T *a, int64_t n, const void *ctx)                \
    {                                                                                      \
        if (n > 16) {                                                                      \
            P##_insertion_sort(a, 16, ctx);                                                \
            for (int64_t i = 16; i < n; i++) P##_linear_insert(a, i, ctx);                 \
        } else {                                                                           \
            P##_insertion_sort(a, n, ctx);                                                 \
        }                                                                                  \
    }                                                                                      \
    SORT_FN void P##_adjust_heap(T *a, int64_t hole, int64_t len, T v, const void *ctx)    \
    {                                                                                      \
        (void)ctx;                                                                         \
        int64_t top = hole, sc = hole;                                                     \
        while (sc < (len - 1) / 2) {                                                       \
            sc = 2 * (sc + 1);                                                             \
            if (LESS(a[sc], a[sc - 1])) sc--;                                              \
            a[hole] = a[sc];                                                               \
            hole = sc;                                                                     \
        }                                                                                  \
        if ((len & 1) == 0 && sc == (len - 2) / 2) {                                       \
            sc = 2 * (sc + 1);                                                             \
            a[hole] = a[sc - 1];                                                           \
            hole = sc - 1;                                                                 \
        }                                                                                  \
        int64_t parent = (hole - 1) / 2;                                                   \
        while (hole > top && LESS(a[parent], v)) {                                         \
            a[hole] = a[parent];                                                           \
            hole = parent;                                                                 \
            parent = (hole - 1) / 2;                                                       \
        }                                                                                  \
        a[hole] = v;                                                                       \
    }                                                                                      \
    SORT_FN void P##_heap_select(T *a, int64_t m, int64_t n, const void *ctx)              \
    {                                                                                      \
        if (m >= 2) {                                                                      \
            for (int64_t parent = (m - 2) / 2;; parent--) {                                \
                P##_adjust_heap(a, parent, m, a[parent], ctx);                             \
                if (parent == 0) break;                                                    \
            }                                                                              \
        }                                                                                  \
        for (int64_t i = m; i < n; i++) {                                                  \
            if (LESS(a[i], a[0])) {                                                        \
                T v = a[i];                                                                \
                a[i] = a[0];                                                               \
                P##_adjust_heap(a, 0, m, v, ctx);                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    SORT_FN void P##_sort_heap(T *a, int64_t m, const void *ctx)                           \
    {                                                                                      \
        while (m > 1) {                                                                    \
            m--;                                                                           \
            T v = a[m];                                                                    \
            a[m] = a[0];                                                                   \
            P##_adjust_heap(a, 0, m, v, ctx);                                              \
        }                                                                                  \
    }                                                                                      \
    /* std::partial_sort(a, a + m, a + n) */                                               \
    SORT_FN void P##_partial_sort(T *a, int64_t m, int64_t n, const void *ctx)             \
    {                                                                                      \
        P##_heap_select(a, m, n, ctx);                                                     \
        P##_sort_heap(a, m, ctx);                                                          \
    }                                                                                      \
    SORT_FN void P##_swap(T *a, int64_t i, int64_t j)                                      \
    {                                                                                      \
        T t = a[i];                                                                        \
        a[i] = a[j];                                                                       \
        a[j] = t;                                                                          \
    }                                                                                      \
    SORT_FN int64_t P##_partition_pivot(T *a, int64_t n, const void *ctx)                  \
    {                                                                                      \
        (void)ctx;                                                                         \
        int64_t x = 1, y = n / 2, z = n - 1;                                               \
        if (LESS(a[x], a[y])) {                                                            \
            if (LESS(a[y], a[z])) P##_swap(a, 0, y);                                       \
            else if (LESS(a[x], a[z])) P##_swap(a, 0, z);                                  \
            else P##_swap(a, 0, x);                                                        \
        } else if (LESS(a[x], a[z])) {                                                     \
            P##_swap(a, 0, x);                                                             \
        } else if (LESS(a[y], a[z])) {                                                     \
            P##_swap(a, 0, z);                                                             \
        } else {                                                                           \
            P##_swap(a, 0, y);                                                             \
        }                                                                                  \
        int64_t f = 1, l = n;                                                              \
        for (;;) {                                                                         \
            while (f < n - 1 && LESS(a[f], a[0])) f++;                                     \
            l--;                                                                           \
            while (l > 0 && LESS(a[0], a[l])) l--;                                         \
            if (!(f < l)) return f;                                                        \
            P##_swap(a, f, l);                                                             \
            f++;                                                                           \
        }                                                                                  \
    }                                                                                      \
    SORT_FN void P##_introsort_loop(T *a, int64_t n, int depth, const void *ctx)           \
    {                                                                                      \
        while (n > 16) {                                                                   \
            if (depth == 0) {                                                              \
                P##_partial_sort(a, n, n, ctx);                                            \
                return;                                                                    \
            }                                                                              \
            depth--;                                                                       \
            int64_t cut = P##_partition_pivot(a, n, ctx);                                  \
            P##_introsort_loop(a + cut, n - cut, depth, ctx);                              \
            n = cut;                                                                       \
        }                                                                                  \
    }                                                                                      \
    /* std::sort(a, a + n) */                                                              \
    SORT_FN void P##_sort(T *a, int64_t n, const void *ctx)                                \
    {                                                                                      \
        if (n < 2) return;                                                                 \
        P##_introsort_loop(a, n, 2 * sort_lg(n), ctx);                                     \
        P##_final_insertion_sort(a, n, ctx);                                               \
    }                                                                                      \
    /* std::nth_element(a, a + nth, a + n) */                                              \
    SORT_FN void P##_nth_element(T *a, int64_t nth, int64_t n, const void *ctx)            \
    {                                                                                      \
        if (n == 0 || nth >= n) return;                                                    \
        int depth = 2 * sort_lg(n);                                                        \
        while (n > 3) {                                                                    \
            if (depth == 0) {                                                              \
                P##_heap_select(a, nth + 1, n, ctx);                                       \
                P##_swap(a, 0, nth);                                                       \
                return;                                                                    \
            }                                                                              \
            depth--;                                                                       \
            int64_t cut = P##_partition_pivot(a, n, ctx);                                  \
            if (cut <= nth) {                                                              \
                a += cut;                                                                  \
                n -= cut;                                                                  \
                nth -= cut;                                                                \
            } else {                                                                       \
                n = cut;                                                                   \
            }                                                                              \
        }                                                                                  \
        P##_insertion_sort(a, n, ctx);                                                     \
    }

/* torch's comparators over keys: ascending / descending (NaN largest), and the strict
 * total orders by (key, index) used for stable sorts and median. */
#define SORT_LESS_ASC(x, y) ((x).k < (y).k)
#define SORT_LESS_DESC(x, y) ((x).k > (y).k)
#define SORT_LESS_LEX(x, y) ((x).k < (y).k || ((x).k == (y).k && (x).i < (y).i))
#define SORT_LESS_LEXD(x, y) ((x).k > (y).k || ((x).k == (y).k && (x).i < (y).i))
SORT_STL_DEFINE(kva, sort_kv, SORT_LESS_ASC)
SORT_STL_DEFINE(kvd, sort_kv, SORT_LESS_DESC)
SORT_STL_DEFINE(kvl, sort_kv, SORT_LESS_LEX)
SORT_STL_DEFINE(kvld, sort_kv, SORT_LESS_LEXD)
#define SORT_LESS_VALUE(x, y) ((x).v < (y).v)
SORT_STL_DEFINE(dva, sort_dv, SORT_LESS_VALUE)
/* median() / nanmedian() select among the values themselves (which of -0.0 and 0.0 they
 * return depends on it) */
#define SORT_LESS_PLAIN(x, y) ((x) < (y))
#define SORT_LESS_NANLAST(x, y) ((x) < (y) || (isnan(y) && !isnan(x)))
SORT_STL_DEFINE(dmed, double, SORT_LESS_PLAIN)
SORT_STL_DEFINE(dnanmed, double, SORT_LESS_NANLAST)

/* A stable LSD radix sort of n pairs by key (descending: by complemented key), in 8-bit
 * digits, skipping digits every key shares; tmp holds n more pairs. Same order as
 * kvl_sort / kvld_sort (ties keep their positions), in linear time. */
static void sort_radix(sort_kv *a, sort_kv *tmp, int64_t n, bool desc)
{
    uint64_t flip = desc ? ~0ull : 0;
    int64_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (int64_t j = 0; j < n; j++) {
        uint64_t k = a[j].k ^ flip;
        for (int b = 0; b < 8; b++) cnt[b][(k >> (8 * b)) & 255]++;
    }
    sort_kv *src = a, *dst = tmp;
    for (int b = 0; b < 8; b++) {
        int64_t *c = cnt[b], sum = 0;
        bool trivial = false;
        for (int d = 0; d < 256; d++) {
            if (c[d] == n) trivial = true;
            int64_t t = c[d];
            c[d] = sum;
            sum += t;
        }
        if (trivial) continue;
        for (int64_t j = 0; j < n; j++) dst[c[((src[j].k ^ flip) >> (8 * b)) & 255]++] = src[j];
        sort_kv *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, sizeof(sort_kv) * (size_t)n);
}

/* A stable sort of n pairs (tmp: room for n more, or NULL). */
static void sort_stable(sort_kv *a, sort_kv *tmp, int64_t n, bool desc)
{
    if (tmp && n >= 256) sort_radix(a, tmp, n, desc);
    else if (desc) kvld_sort(a, n, NULL);
    else kvl_sort(a, n, NULL);
}

/* torch's quick_select_template (kthvalue) with gt_or_nan on keys. */
static void sort_quick_select(sort_kv *a, int64_t n, int64_t k)
{
#define QS_GT(x, y) ((x).k > (y).k)
#define QS_SWAP(p, q) do { sort_kv t_ = a[p]; a[p] = a[q]; a[q] = t_; } while (0)
    int64_t L = 0, R = n - 1;
    for (;;) {
        if (R <= L) return;
        if (R == L + 1) {
            if (QS_GT(a[L], a[R])) QS_SWAP(L, R);
            return;
        }
        int64_t P = L + (R - L) / 2;
        QS_SWAP(P, L + 1);
        if (QS_GT(a[L + 1], a[R])) QS_SWAP(L + 1, R);
        if (QS_GT(a[L], a[R])) QS_SWAP(L, R);
        if (QS_GT(a[L + 1], a[L])) QS_SWAP(L + 1, L);
        int64_t i = L + 1, j = R;
        sort_kv piv = a[L];
        for (;;) {
            do i++; while (i < R && QS_GT(piv, a[i]));
            do j--; while (j > L && QS_GT(a[j], piv));
            if (j < i) break;
            QS_SWAP(i, j);
        }
        QS_SWAP(L, j);
        if (j <= k) L = i;
        if (j >= k) R = j - 1;
    }
#undef QS_GT
#undef QS_SWAP
}

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

static void sort_rows_init(sort_rows *rp, const pct_tensor *t, int dim)
{
    rp->base = pct_tensor_data(t);
    rp->itemsize = (int)pct_tensor_itemsize(t);
    rp->nother = 0;
    rp->inner = 1;
    rp->nrows = 1;
    if (t->ndim == 0) {
        rp->n = 1;
        rp->st = rp->itemsize;
        return;
    }
    rp->n = t->sizes[dim];
    rp->st = t->strides[dim] * rp->itemsize;
    for (int d = 0; d < t->ndim; d++) {
        if (d == dim) continue;
        rp->osz[rp->nother] = t->sizes[d];
        rp->ost[rp->nother] = t->strides[d] * rp->itemsize;
        rp->nother++;
        rp->nrows *= t->sizes[d];
        if (d > dim) rp->inner *= t->sizes[d];
    }
}

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

/* Runs fn(ctx, r, scratch) for every row r; with the GIL released and rows split across
 * threads when `work` (about the number of element operations) is large. Each thread has
 * its own scratch buffer of scratch_bytes. -1 with MemoryError. */
static int sort_run_rows(int64_t nrows, double work, size_t scratch_bytes, sort_row_fn fn, void *ctx)
{
    if (nrows <= 0) return 0;
    bool big = work >= (double)PCT_PARALLEL_GRAIN;
    int failed = 0;
    PyThreadState *ts = big ? PyEval_SaveThread() : NULL;
#ifdef _OPENMP
#pragma omp parallel if (big && nrows > 1)
#endif
    {
        void *scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
        bool ok = !scratch_bytes || scratch;
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t r = 0; r < nrows; r++)
            if (ok) fn(ctx, r, scratch);
        free(scratch);
    }
    if (ts) PyEval_RestoreThread(ts);
    if (failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* results, out= and torch.return_types                                                  */

enum {
    RT_SORT, RT_TOPK, RT_KTHVALUE, RT_MEDIAN, RT_NANMEDIAN, RT_MODE, RT_CUMMAX, RT_CUMMIN, RT_COUNT
};
static const char *const sort_rt_names[RT_COUNT][2] = {
    {"torch.return_types.sort", "torch.return_types.sort_out"},
    {"torch.return_types.topk", "torch.return_types.topk_out"},
    {"torch.return_types.kthvalue", "torch.return_types.kthvalue_out"},
    {"torch.return_types.median", "torch.return_types.median_out"},
    {"torch.return_types.nanmedian", "torch.return_types.nanmedian_out"},
    {"torch.return_types.mode", "torch.return_types.mode_out"},
    {"torch.return_types.cummax", "torch.return_types.cummax_out"},
    {"torch.return_types.cummin", "torch.return_types.cummin_out"},
};
/* A torch.return_types pair; steals a and b (either may be NULL: then fails). */
static PyObject *sort_pair(int rt, bool is_out, pct_tensor *a, pct_tensor *b)
{
    return pct_return_pair(sort_rt_names[rt][is_out], "values", "indices", a, b);
}

/* The result of a one-output op: res itself, or res copied into out (stolen res). */
static PyObject *sort_finish(pct_tensor *res, pct_tensor *out)
{
    if (!res) return NULL;
    if (!out) return (PyObject *)res;
    if (pct_out_resize(out, res->ndim, res->sizes) < 0 || pct_copy_(out, res) < 0) {
        Py_DECREF(res);
        return NULL;
    }
    Py_DECREF(res);
    Py_INCREF(out);
    return (PyObject *)out;
}

/* The result of a two-output op as a return_types pair (steals a and b). */
static PyObject *sort_finish_pair(int rt, pct_tensor *a, pct_tensor *b, pct_tensor *const *outs)
{
    if (!a || !b || !outs[0]) return sort_pair(rt, false, a, b);
    pct_tensor *res[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (pct_out_resize(outs[i], res[i]->ndim, res[i]->sizes) < 0 || pct_copy_(outs[i], res[i]) < 0) {
            Py_DECREF(a);
            Py_DECREF(b);
            return NULL;
        }
    }
    Py_DECREF(a);
    Py_DECREF(b);
    Py_INCREF(outs[0]);
    Py_INCREF(outs[1]);
    return sort_pair(rt, true, outs[0], outs[1]);
}

/* sort, argsort and msort results keep the input's memory layout, as torch's (its dense
 * strides, or for a non-dense input infer_dense_strides: dims ordered by stride, smaller
 * size first on ties, stride-0 dims left in place). Results are computed contiguous and
 * copied into that layout when it differs; res is stolen. */
static pct_tensor *sort_relayout(pct_tensor *res, const pct_tensor *like)
{
    int n = like->ndim;
    /* an empty `like` counts as contiguous whatever its strides, and torch keeps them */
    if (!res || n < 2 || (like->numel > 0 && pct_tensor_is_contiguous(like))) return res;
    int64_t st[PCT_MAX_DIMS];
    pct_preserved_strides(like, st);
    if (memcmp(st, res->strides, sizeof(int64_t) * (size_t)n) == 0) return res;
    pct_tensor *r = pct_tensor_empty(n, like->sizes, res->dtype, PCT_CPU, -1);
    if (!r || pct_tensor_set_shape(r, n, like->sizes, st) < 0 || pct_copy_(r, res) < 0) {
        Py_XDECREF(r);
        Py_DECREF(res);
        return NULL;
    }
    atomic_store(&r->version->value, 0);
    Py_DECREF(res);
    return r;
}

/* Output shape of a reduction over dim (keepdim keeps it as size 1). */
static int sort_reduced_shape(const pct_tensor *t, int dim, bool keepdim, int64_t *shape)
{
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d == dim) {
            if (keepdim) shape[n++] = 1;
        } else {
            shape[n++] = t->sizes[d];
        }
    }
    return n;
}

/* IndexError for a reduction over an empty dim, as torch's zero_numel_check_dims. */
static int sort_check_nonempty_dim(const pct_tensor *t, int dim, const char *name)
{
    if (t->ndim > 0 && t->sizes[dim] == 0) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim %d to have non-zero size.", name, dim);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* sort, argsort, msort, topk, kthvalue, median(dim), nanmedian(dim), mode               */

enum {
    SEL_SORT_ASC, SEL_SORT_DESC, SEL_SORT_STABLE_ASC, SEL_SORT_STABLE_DESC, SEL_SORT_IDENTITY,
    SEL_TOPK, SEL_KTHVALUE, SEL_MEDIAN, SEL_NANMEDIAN, SEL_MODE
};

typedef struct sort_sel_ctx {
    sort_rows rp;
    int dtype;
    int op;            /* SEL_* */
    char *vout;        /* values, contiguous (NULL: indices only) */
    int64_t *iout;     /* indices, contiguous */
    int64_t m;         /* output elements per row: n (sort), k (topk), 1 (reductions) */
    int64_t k;         /* topk: k; kthvalue: k - 1 */
    bool largest, sorted;
} sort_sel_ctx;

static void sort_sel_row(void *vctx, int64_t r, void *scratch)
{
    const sort_sel_ctx *c = vctx;
    const sort_rows *rp = &c->rp;
    const char *in = sort_rows_in(rp, r);
    int64_t n = rp->n, m = c->m, os = rp->inner, o = sort_rows_out(rp, r, m);
    int isz = rp->itemsize;
    sort_kv *kv = scratch;
    int64_t first = 0; /* kv[first .. first + m) are the results */
    int64_t pick = -1;  /* or this one position (mode over floats) */
    if (c->op == SEL_SORT_IDENTITY || n < 2) {
        for (int64_t j = 0; j < m; j++) kv[j].i = j;
    } else {
        sort_load[c->dtype](kv, in, rp->st, n);
        switch (c->op) {
        case SEL_SORT_ASC: kva_sort(kv, n, NULL); break;
        case SEL_SORT_DESC: kvd_sort(kv, n, NULL); break;
        case SEL_SORT_STABLE_ASC: sort_stable(kv, kv + n, n, false); break;
        case SEL_SORT_STABLE_DESC: sort_stable(kv, kv + n, n, true); break;
        case SEL_TOPK: {
            /* torch's topk_impl_loop */
            int64_t k = c->k;
            if (k * 64 <= n) {
                if (c->largest) kvd_partial_sort(kv, k, n, NULL);
                else kva_partial_sort(kv, k, n, NULL);
            } else if (c->largest) {
                kvd_nth_element(kv, k - 1, n, NULL);
                if (c->sorted) kvd_sort(kv, k - 1, NULL);
            } else {
                kva_nth_element(kv, k - 1, n, NULL);
                if (c->sorted) kva_sort(kv, k - 1, NULL);
            }
            break;
        }
        case SEL_KTHVALUE:
            sort_quick_select(kv, n, c->k);
            first = c->k;
            break;
        case SEL_MEDIAN:
        case SEL_NANMEDIAN: {
            /* torch's median_with_indices_impl: median returns the first NaN if there is
             * one; both select by (value, index), so ties resolve to a single answer. */
            int64_t nnan = 0;
            if (pct_dtype_is_floating(c->dtype)) {
                for (int64_t j = 0; j < n; j++) {
                    if (kv[j].k != SORT_NAN_KEY) continue;
                    if (c->op == SEL_MEDIAN) {
                        first = j;
                        goto write;
                    }
                    nnan++;
                }
            }
            first = (n - nnan - 1) / 2;
            kvl_nth_element(kv, first, n, NULL);
            break;
        }
        case SEL_MODE: {
            /* torch's mode kernel: std::sort by value with a plain < (floats compared as
             * doubles, so NaN behaves as it does there), then the longest run of == values
             * (the first of equal length wins), reporting the position of its last element */
            int64_t run = 0, best = 0;
            if (pct_dtype_is_floating(c->dtype)) {
                sort_dv *dv = scratch;
                sort_loadv[c->dtype](dv, in, rp->st, n);
                dva_sort(dv, n, NULL);
                for (int64_t j = 0; j < n; j++) {
                    run++;
                    if (j == n - 1 || dv[j].v != dv[j + 1].v) {
                        if (run > best) {
                            best = run;
                            pick = dv[j].i;
                        }
                        run = 0;
                    }
                }
                break;
            }
            kva_sort(kv, n, NULL);
            for (int64_t j = 0; j < n; j++) {
                run++;
                if (j == n - 1 || kv[j].k != kv[j + 1].k) {
                    if (run > best) {
                        best = run;
                        first = j;
                    }
                    run = 0;
                }
            }
            break;
        }
        default: break;
        }
    }
write:
    for (int64_t j = 0; j < m; j++) {
        int64_t src = pick >= 0 ? pick : kv[first + j].i;
        c->iout[o + j * os] = src;
        if (c->vout) sort_copy_elem(c->vout + (o + j * os) * isz, in + src * rp->st, isz);
    }
}

/* Runs a selection op over the rows of self along dim into fresh contiguous results of
 * shape (ndim, shape); vals NULL: indices only. */
static int sort_sel_run(pct_tensor *self, int dim, int op, int64_t m, int64_t k, bool largest, bool sorted_,
                        int ndim, const int64_t *shape, pct_tensor **vals, pct_tensor **idx)
{
    pct_tensor *v = NULL, *i = NULL;
    if (vals && !(v = pct_tensor_empty(ndim, shape, self->dtype, PCT_CPU, -1))) goto fail;
    if (!(i = pct_tensor_empty(ndim, shape, PCT_INT64, PCT_CPU, -1))) goto fail;
    sort_sel_ctx c = {.dtype = self->dtype, .op = op, .vout = v ? pct_tensor_data(v) : NULL,
                      .iout = (int64_t *)pct_tensor_data(i), .m = m, .k = k, .largest = largest, .sorted = sorted_};
    sort_rows_init(&c.rp, self, dim);
    if (i->numel > 0 && c.rp.n > 0) {
        int64_t n = c.rp.n;
        if ((op == SEL_SORT_ASC || op == SEL_SORT_DESC || op == SEL_SORT_STABLE_ASC || op == SEL_SORT_STABLE_DESC) &&
            self->ndim > 0 && self->strides[dim] == 0)
            c.op = SEL_SORT_IDENTITY; /* torch leaves rows of an expanded dim in place */
        double work = (double)c.rp.nrows * (double)n * (double)(sort_lg(n + 1) + 1);
        bool two = c.op == SEL_SORT_STABLE_ASC || c.op == SEL_SORT_STABLE_DESC; /* radix sort's second buffer */
        if (sort_run_rows(c.rp.nrows, work, sizeof(sort_kv) * (size_t)n * (two ? 2 : 1), sort_sel_row, &c) < 0)
            goto fail;
    }
    if (vals) *vals = v;
    *idx = i;
    return 0;
fail:
    Py_XDECREF(v);
    Py_XDECREF(i);
    return -1;
}

static int sort_op_for(const pct_tensor *self, bool stable, bool descending)
{
    /* torch radix-sorts large 1-D integer inputs (ascending), which is stable */
    if (!stable && !descending && self->ndim == 1 && pct_dtype_is_integral(self->dtype, false) &&
        self->numel >= PCT_PARALLEL_GRAIN)
        stable = true;
    if (stable) return descending ? SEL_SORT_STABLE_DESC : SEL_SORT_STABLE_ASC;
    return descending ? SEL_SORT_DESC : SEL_SORT_ASC;
}

PyObject *pct_cpu_sort(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *outs[2], *v = NULL, *i = NULL;
    const pct_value *st = pct_arg(c, "stable");
    bool stable = !st->none && st->b;
    if (pct_out_parse_pair(pct_arg(c, "out"), "sort", outs) < 0) return NULL; /* torch's parser: before any other check */
    int dim = pct_wrap_dim(pct_arg(c, "dim")->i, self->ndim);
    if (dim < 0) return NULL;
    bool desc = pct_arg(c, "descending")->b;
    if (outs[0] && (pct_out_check_dtype(outs[0], self->dtype) < 0 || pct_out_check_dtype(outs[1], PCT_INT64) < 0))
        return NULL;
    if (sort_sel_run(self, dim, sort_op_for(self, stable, desc), self->ndim ? self->sizes[dim] : 1, 0, false, false,
                     self->ndim, self->sizes, &v, &i) < 0)
        return NULL;
    if (!outs[0]) {
        v = sort_relayout(v, self);
        i = sort_relayout(i, self);
    }
    return sort_finish_pair(RT_SORT, v, i, outs);
}

PyObject *pct_cpu_argsort(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *i = NULL;
    const pct_value *st = pct_arg(c, "stable");
    bool stable = !st->none && st->b;
    int dim = pct_wrap_dim(pct_arg(c, "dim")->i, self->ndim);
    if (dim < 0) return NULL;
    bool desc = pct_arg(c, "descending")->b;
    if (pct_out_check_dtype(c->out, PCT_INT64) < 0) return NULL;
    if (sort_sel_run(self, dim, sort_op_for(self, stable, desc), self->ndim ? self->sizes[dim] : 1, 0, false, false,
                     self->ndim, self->sizes, NULL, &i) < 0)
        return NULL;
    return sort_finish(c->out ? i : sort_relayout(i, self), c->out);
}

PyObject *pct_cpu_msort(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *v = NULL, *i = NULL;
    if (pct_out_check_dtype(c->out, self->dtype) < 0) return NULL;
    if (sort_sel_run(self, 0, sort_op_for(self, false, false), self->ndim ? self->sizes[0] : 1, 0, false, false,
                     self->ndim, self->sizes, &v, &i) < 0)
        return NULL;
    Py_DECREF(i);
    return sort_finish(c->out ? v : sort_relayout(v, self), c->out);
}

PyObject *pct_cpu_topk(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *outs[2], *v = NULL, *i = NULL;
    int64_t k = c->v[1].i;
    if (pct_out_parse_pair(&c->v[5], "topk", outs) < 0) return NULL; /* torch's parser: before any other check */
    int dim = pct_wrap_dim(c->v[2].i, self->ndim);
    if (dim < 0) return NULL;
    int64_t n = self->ndim ? self->sizes[dim] : 1;
    if (k < 0 || k > n) {
        PyErr_SetString(PyExc_RuntimeError, "selected index k out of range");
        return NULL;
    }
    if (outs[0] && (pct_out_check_dtype(outs[0], self->dtype) < 0 || pct_out_check_dtype(outs[1], PCT_INT64) < 0))
        return NULL;
    if (self->dtype == PCT_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "topk does not support bool dtypes on CPU");
        return NULL;
    }
    int64_t shape[PCT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim) shape[dim] = k;
    /* a 0-d input is copied whatever k (0 or 1) */
    int64_t m = self->ndim ? k : 1;
    if (sort_sel_run(self, dim, m ? SEL_TOPK : SEL_SORT_IDENTITY, m, m, c->v[3].b, c->v[4].b, self->ndim, shape, &v,
                     &i) < 0)
        return NULL;
    return sort_finish_pair(RT_TOPK, v, i, outs);
}

/* kthvalue, median(dim), nanmedian(dim), mode: one value and index per row. */
static PyObject *sort_reduce_sel(pct_call *c, int op, int rt, const char *name, int dim_i, int keepdim_i, int out_i,
                                 int64_t k)
{
    pct_tensor *self = c->v[0].t, *outs[2], *v = NULL, *i = NULL;
    if (pct_out_parse_pair(&c->v[out_i], name, outs) < 0) return NULL; /* torch's parser: before any other check */
    int dim = pct_wrap_dim(c->v[dim_i].i, self->ndim);
    if (dim < 0) return NULL;
    bool keepdim = c->v[keepdim_i].b;
    if (sort_check_nonempty_dim(self, dim, op == SEL_NANMEDIAN ? "median" : name) < 0) return NULL;
    if (op == SEL_KTHVALUE) {
        int64_t n = self->ndim ? self->sizes[dim] : 1;
        if (k < 1 || k > n) {
            PyErr_Format(PyExc_RuntimeError, "kthvalue(): selected number k out of range for dimension %d", dim);
            return NULL;
        }
    }
    if (outs[0]) {
        const char *bad = NULL;
        switch (op) {
        case SEL_KTHVALUE:
            if (outs[0]->dtype != self->dtype) bad = "output values must be of same type as input";
            else if (outs[1]->dtype != PCT_INT64) bad = "output indices must be of scalar type Long";
            if (bad) {
                PyErr_SetString(PyExc_RuntimeError, bad);
                return NULL;
            }
            break;
        case SEL_MEDIAN:
        case SEL_NANMEDIAN:
            if (outs[0]->dtype != self->dtype) {
                PyErr_Format(PyExc_RuntimeError, "Expected tensor for 'values' to have the same type as tensor for argument "
                             "#2 'self'; but type torch.%sTensor does not equal torch.%sTensor (while checking arguments "
                             "for median)", pct_dtype_cpp_name[outs[0]->dtype], pct_dtype_cpp_name[self->dtype]);
                return NULL;
            }
            if (outs[1]->dtype != PCT_INT64) {
                PyErr_Format(PyExc_RuntimeError, "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                             "torch.%sTensor instead (while checking arguments for median)", pct_dtype_cpp_name[outs[1]->dtype]);
                return NULL;
            }
            break;
        default:
            if (outs[0]->dtype != self->dtype) {
                PyErr_Format(PyExc_RuntimeError, "expected scalar type '%s' but got '%s' for values output",
                             pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[outs[0]->dtype]);
                return NULL;
            }
            if (outs[1]->dtype != PCT_INT64) {
                PyErr_Format(PyExc_RuntimeError, "expected scalar type 'Long' but got '%s' for indices output",
                             pct_dtype_cpp_name[outs[1]->dtype]);
                return NULL;
            }
            break;
        }
    }
    if (self->dtype == PCT_BOOL && op != SEL_MODE) {
        sort_not_implemented(op == SEL_KTHVALUE ? "kthvalue_cpu" : "median_out", PCT_BOOL);
        return NULL;
    }
    int64_t shape[PCT_MAX_DIMS];
    int nd = sort_reduced_shape(self, dim, keepdim, shape);
    if (sort_sel_run(self, dim, op, 1, k - 1, false, false, nd, shape, &v, &i) < 0) return NULL;
    return sort_finish_pair(rt, v, i, outs);
}

PyObject *pct_cpu_kthvalue(pct_call *c) { return sort_reduce_sel(c, SEL_KTHVALUE, RT_KTHVALUE, "kthvalue", 2, 3, 4, c->v[1].i); }
PyObject *pct_cpu_median_dim(pct_call *c) { return sort_reduce_sel(c, SEL_MEDIAN, RT_MEDIAN, "median", 1, 2, 3, 1); }
PyObject *pct_cpu_nanmedian_dim(pct_call *c) { return sort_reduce_sel(c, SEL_NANMEDIAN, RT_NANMEDIAN, "nanmedian", 1, 2, 3, 1); }
PyObject *pct_cpu_mode(pct_call *c) { return sort_reduce_sel(c, SEL_MODE, RT_MODE, "mode", 1, 2, 3, 1); }

/* median() / nanmedian() over all elements: the lower median, as a 0-d tensor. */
static PyObject *sort_median_all(pct_call *c, bool ignore_nan)
{
    pct_tensor *self = c->v[0].t, *res = NULL;
    if (self->dtype == PCT_BOOL) {
        sort_not_implemented("median_cpu", PCT_BOOL);
        return NULL;
    }
    if (!(res = pct_tensor_empty(0, NULL, self->dtype, PCT_CPU, -1))) return NULL;
    int64_t n = self->numel;
    if (n == 0) {
        /* torch converts a NaN to the dtype: NaN for floats, what the CPU makes of it otherwise */
        int64_t iv = self->dtype == PCT_INT64 ? INT64_MIN : self->dtype == PCT_INT32 ? INT32_MIN : 0;
        if (pct_dtype_is_floating(self->dtype)) pct_store_double(pct_tensor_data(res), self->dtype, NAN);
        else pct_store_int64(pct_tensor_data(res), self->dtype, iv);
        return (PyObject *)res;
    }
    /* torch selects in a clone of the input, which keeps its memory layout: the order of
     * the elements (and so which of -0.0 / 0.0 comes out) is the memory order */
    int perm[PCT_MAX_DIMS], nd = 0;
    int64_t psz[PCT_MAX_DIMS], pst[PCT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        if (self->sizes[d] == 1) continue;
        int at = nd++;
        while (at > 0 && self->strides[perm[at - 1]] < self->strides[d]) {
            perm[at] = perm[at - 1];
            at--;
        }
        perm[at] = d;
    }
    for (int k = 0; k < nd; k++) {
        psz[k] = self->sizes[perm[k]];
        pst[k] = self->strides[perm[k]];
    }
    pct_tensor *pv = pct_tensor_view_of(self, nd, psz, pst, self->offset);
    if (!pv) goto fail;
    pct_tensor *flat = pct_contiguous(pv);
    Py_DECREF(pv);
    if (!flat) goto fail;
    const char *p = pct_tensor_data(flat);
    int isz = (int)pct_tensor_itemsize(flat);
    if (pct_dtype_is_floating(self->dtype)) {
        /* torch: std::nth_element over a copy of the values */
        double *d = malloc(sizeof(double) * (size_t)n);
        if (!d) {
            Py_DECREF(flat);
            PyErr_NoMemory();
            goto fail;
        }
        int64_t nnan = 0;
        for (int64_t j = 0; j < n; j++) {
            d[j] = pct_load_as_double(p + j * isz, self->dtype);
            nnan += d[j] != d[j];
        }
        double med = NAN;
        if (ignore_nan || nnan == 0) {
            int64_t rank = (n - nnan - 1) / 2;
            PyThreadState *ts = n >= PCT_PARALLEL_GRAIN ? PyEval_SaveThread() : NULL;
            if (ignore_nan) dnanmed_nth_element(d, rank, n, NULL);
            else dmed_nth_element(d, rank, n, NULL);
            if (ts) PyEval_RestoreThread(ts);
            med = d[rank];
        }
        pct_store_double(pct_tensor_data(res), self->dtype, med);
        free(d);
        Py_DECREF(flat);
        return (PyObject *)res;
    }
    sort_kv *kv = malloc(sizeof(sort_kv) * (size_t)n);
    if (!kv) {
        Py_DECREF(flat);
        PyErr_NoMemory();
        goto fail;
    }
    sort_load[self->dtype](kv, p, isz, n);
    int64_t rank = (n - 1) / 2;
    PyThreadState *ts = n >= PCT_PARALLEL_GRAIN ? PyEval_SaveThread() : NULL;
    kvl_nth_element(kv, rank, n, NULL);
    if (ts) PyEval_RestoreThread(ts);
    sort_copy_elem(pct_tensor_data(res), p + kv[rank].i * isz, isz);
    free(kv);
    Py_DECREF(flat);
    return (PyObject *)res;
fail:
    Py_XDECREF(res);
    return NULL;
}

PyObject *pct_cpu_median_all(pct_call *c) { return sort_median_all(c, false); }
PyObject *pct_cpu_nanmedian_all(pct_call *c) { return sort_median_all(c, true); }

/* ------------------------------------------------------------------------------------ */
/* scans: cumsum, cumprod, logcumsumexp, cummax, cummin                                  */

/* Accumulators as torch's CPU acc_type: double for float and double, float for the 16-bit
 * floats, 64 bits for integers (unsigned here, so overflow wraps as in torch). */
#define SCAN_ACC_BOOL uint64_t
#define SCAN_ACC_UINT8 uint64_t
#define SCAN_ACC_INT8 uint64_t
#define SCAN_ACC_INT16 uint64_t
#define SCAN_ACC_INT32 uint64_t
#define SCAN_ACC_INT64 uint64_t
#define SCAN_ACC_FLOAT16 float
#define SCAN_ACC_BFLOAT16 float
#define SCAN_ACC_FLOAT32 double
#define SCAN_ACC_FLOAT64 double
#define SCAN_ACC_UINT16 uint64_t
#define SCAN_ACC_UINT32 uint64_t
#define SCAN_ACC_UINT64 uint64_t
#define SCAN_TOACC_BOOL(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_UINT8(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT8(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT16(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT32(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT64(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_FLOAT16(x) (x)
#define SCAN_TOACC_BFLOAT16(x) (x)
#define SCAN_TOACC_FLOAT32(x) ((double)(x))
#define SCAN_TOACC_FLOAT64(x) (x)
#define SCAN_TOACC_UINT16(x) ((uint64_t)(x))
#define SCAN_TOACC_UINT32(x) ((uint64_t)(x))
#define SCAN_TOACC_UINT64(x) ((uint64_t)(x))

enum { SCAN_SUM, SCAN_PROD, SCAN_LOGSUMEXP, SCAN_MAX, SCAN_MIN };

/* torch's _log_add_exp_helper (std::min / std::max keep their first argument on NaN) */
static inline double scan_lae_d(double x, double y)
{
    double mn = isnan(y) ? y : (y < x ? y : x);
    double mx = isnan(y) ? y : (x < y ? y : x);
    if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
    return x;
}
static inline float scan_lae_f(float x, float y)
{
    float mn = isnan(y) ? y : (y < x ? y : x);
    float mx = isnan(y) ? y : (x < y ? y : x);
    if (mn != mx || isfinite(mn)) return log1pf(expf(mn - mx)) + mx;
    return x;
}
#define SCAN_NEGINF_BOOL 0
#define SCAN_NEGINF_UINT8 0
#define SCAN_NEGINF_INT8 0
#define SCAN_NEGINF_INT16 0
#define SCAN_NEGINF_INT32 0
#define SCAN_NEGINF_INT64 0
#define SCAN_NEGINF_FLOAT16 (-INFINITY)
#define SCAN_NEGINF_BFLOAT16 (-INFINITY)
#define SCAN_NEGINF_FLOAT32 (-INFINITY)
#define SCAN_NEGINF_FLOAT64 (-INFINITY)
#define SCAN_NEGINF_UINT16 0
#define SCAN_NEGINF_UINT32 0
#define SCAN_NEGINF_UINT64 0
#define SCAN_LAE_float scan_lae_f
#define SCAN_LAE_double scan_lae_d
#define SCAN_LAE_uint64_t(x, y) (x)
#define SCAN_LAE_(A) SCAN_LAE_##A
#define SCAN_LAE(A) SCAN_LAE_(A)

/* One row of a scan: p (stride st bytes) -> o (stride ost bytes), indices to io (stride ist
 * elements) for cummax / cummin. */
#define SORT_DEF_SCAN(E, N, T, C, S)                                                             \
    static void scan_row_##N(int op, char *o, int64_t ost, int64_t *io, int64_t ist, const char *p, \
                             int64_t st, int64_t n)                                              \
    {                                                                                            \
        typedef SCAN_ACC_##E A;                                                                  \
        switch (op) {                                                                            \
        case SCAN_SUM: {                                                                         \
            A acc = 0;                                                                           \
            for (int64_t j = 0; j < n; j++) {                                                    \
                acc += SCAN_TOACC_##E(PCT_TO_COMPUTE_##E(*(const T *)(p + j * st)));             \
                *(T *)(o + j * ost) = PCT_FROM_COMPUTE_##E(acc);                                 \
            }                                                                                    \
            break;                                                                               \
        }                                                                                        \
        case SCAN_PROD: {                                                                        \
            A acc = 1;                                                                           \
            for (int64_t j = 0; j < n; j++) {                                                    \
                acc *= SCAN_TOACC_##E(PCT_TO_COMPUTE_##E(*(const T *)(p + j * st)));             \
                *(T *)(o + j * ost) = PCT_FROM_COMPUTE_##E(acc);                                 \
            }                                                                                    \
            break;                                                                               \
        }                                                                                        \
        case SCAN_LOGSUMEXP: {                                                                   \
            A acc = SCAN_NEGINF_##E;                                                                \
            for (int64_t j = 0; j < n; j++) {                                                    \
                A x = SCAN_TOACC_##E(PCT_TO_COMPUTE_##E(*(const T *)(p + j * st)));              \
                acc = SCAN_LAE(SCAN_ACC_##E)(x, acc);                                            \
                *(T *)(o + j * ost) = PCT_FROM_COMPUTE_##E(acc);                                 \
            }                                                                                    \
            break;                                                                               \
        }                                                                                        \
        default: {                                                                               \
            /* torch's cummax_cummin_helper: ties move to the later position, NaN sticks */      \
            bool is_max = op == SCAN_MAX;                                                        \
            T best = *(const T *)p;                                                              \
            C bc = PCT_TO_COMPUTE_##E(best);                                                     \
            int64_t bi = 0;                                                                      \
            for (int64_t j = 0; j < n; j++) {                                                    \
                T cur = *(const T *)(p + j * st);                                                \
                C cc = PCT_TO_COMPUTE_##E(cur);                                                  \
                if (SORT_ISNAN_##E(cc) || (!SORT_ISNAN_##E(bc) && (is_max ? cc >= bc : cc <= bc))) { \
                    best = cur;                                                                  \
                    bc = cc;                                                                     \
                    bi = j;                                                                      \
                }                                                                                \
                *(T *)(o + j * ost) = best;                                                      \
                io[j * ist] = bi;                                                                \
            }                                                                                    \
            break;                                                                               \
        }                                                                                        \
        }                                                                                        \
    }
PCT_FORALL_ALL_DTYPES(SORT_DEF_SCAN) /* uint16/32/64: for the 0-d and empty inputs torch answers */

typedef void (*scan_row_fn)(int, char *, int64_t, int64_t *, int64_t, const char *, int64_t, int64_t);
static const scan_row_fn scan_rows[PCT_NUM_DTYPES] = {
#define SCAN_ENTRY(E, N, T, C, S) [PCT_##E] = scan_row_##N,
    PCT_FORALL_ALL_DTYPES(SCAN_ENTRY)
#undef SCAN_ENTRY
};

typedef struct scan_ctx {
    sort_rows rp;
    int op;
    scan_row_fn fn;
    char *out;
    int64_t *iout;
} scan_ctx;

static void scan_row(void *vctx, int64_t r, void *scratch)
{
    (void)scratch;
    const scan_ctx *c = vctx;
    const sort_rows *rp = &c->rp;
    int64_t o = sort_rows_out(rp, r, rp->n);
    c->fn(c->op, c->out + o * rp->itemsize, rp->inner * rp->itemsize, c->iout ? c->iout + o : NULL, rp->inner,
          sort_rows_in(rp, r), rp->st, rp->n);
}

/* Runs a scan of `in` (already of the result dtype) along dim into a new contiguous
 * tensor (and indices for cummax / cummin). */
static int scan_run(pct_tensor *in, int dim, int op, pct_tensor **res, pct_tensor **idx)
{
    pct_tensor *r = NULL, *i = NULL;
    if (!(r = pct_tensor_empty(in->ndim, in->sizes, in->dtype, PCT_CPU, -1))) goto fail;
    if (idx && !(i = pct_tensor_empty(in->ndim, in->sizes, PCT_INT64, PCT_CPU, -1))) goto fail;
    if (in->numel > 0) {
        scan_ctx c = {.op = op, .fn = scan_rows[in->dtype], .out = pct_tensor_data(r),
                      .iout = i ? (int64_t *)pct_tensor_data(i) : NULL};
        sort_rows_init(&c.rp, in, dim);
        double work = (double)in->numel * (op == SCAN_LOGSUMEXP ? 8.0 : 1.0);
        if (sort_run_rows(c.rp.nrows, work, 0, scan_row, &c) < 0) goto fail;
    }
    *res = r;
    if (idx) *idx = i;
    return 0;
fail:
    Py_XDECREF(r);
    Py_XDECREF(i);
    return -1;
}

static PyObject *scan_cum(pct_call *c, int op)
{
    pct_tensor *self = c->v[0].t, *out = c->out;
    const char *kname = op == SCAN_SUM ? "cumsum_out_cpu" : "cumprod_out_cpu";
    int dim = pct_wrap_dim(c->v[1].i, self->ndim);
    if (dim < 0) return NULL;
    bool has_dtype = !c->v[2].none;
    int rd;
    if (c->inplace) {
        if (has_dtype && c->v[2].dtype != self->dtype) {
            PyErr_Format(PyExc_RuntimeError, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                         pct_dtype_cpp_type_name[self->dtype], pct_dtype_cpp_type_name[c->v[2].dtype]);
            return NULL;
        }
        rd = self->dtype;
    } else if (out) {
        rd = has_dtype ? c->v[2].dtype : out->dtype;
        if (pct_out_check_dtype(out, rd) < 0) return NULL;
    } else {
        rd = has_dtype ? c->v[2].dtype : pct_dtype_is_integral(self->dtype, true) ? PCT_INT64 : self->dtype;
    }
    if (rd == PCT_BOOL && self->ndim > 0 && self->numel > 0) {
        sort_not_implemented(kname, rd);
        return NULL;
    }
    if (c->inplace && pct_check_written_overlap(self, 0, NULL) < 0) return NULL; /* an expanded self: torch refuses */
    pct_tensor *in = pct_to_dtype(self, rd, false), *res = NULL;
    if (!in) return NULL;
    int r = scan_run(in, dim, op, &res, NULL);
    Py_DECREF(in);
    if (r < 0) return NULL;
    return sort_finish(res, out);
}

PyObject *pct_cpu_cumsum(pct_call *c) { return scan_cum(c, SCAN_SUM); }
PyObject *pct_cpu_cumprod(pct_call *c) { return scan_cum(c, SCAN_PROD); }

PyObject *pct_cpu_logcumsumexp(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *out = c->out, *res = NULL;
    int dim = pct_wrap_dim(c->v[1].i, self->ndim);
    if (dim < 0) return NULL;
    if (!pct_dtype_is_floating(self->dtype)) {
        sort_not_implemented("logcumsumexp_out_cpu", self->dtype);
        return NULL;
    }
    if (out && out->dtype != self->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar_type %s but found %s", pct_dtype_cpp_name[self->dtype],
                     pct_dtype_cpp_name[out->dtype]);
        return NULL;
    }
    if (scan_run(self, dim, SCAN_LOGSUMEXP, &res, NULL) < 0) return NULL;
    return sort_finish(res, out);
}

static PyObject *scan_cummax(pct_call *c, bool is_max)
{
    pct_tensor *self = c->v[0].t, *outs[2], *v = NULL, *i = NULL;
    const char *name = is_max ? "cummax" : "cummin";
    if (pct_out_parse_pair(&c->v[2], name, outs) < 0) return NULL; /* torch's parser: before any other check */
    /* torch returns empty results for an empty input before it looks at dim */
    int dim = self->numel == 0 ? 0 : pct_wrap_dim(c->v[1].i, self->ndim);
    if (dim < 0) return NULL;
    if (outs[0]) {
        int want[2] = {self->dtype, PCT_INT64};
        for (int k = 0; k < 2; k++) {
            if (outs[k]->dtype != want[k]) {
                PyErr_Format(PyExc_RuntimeError, "expected scalar_type %s but found %s", pct_dtype_cpp_name[want[k]],
                             pct_dtype_cpp_name[outs[k]->dtype]);
                return NULL;
            }
        }
    }
    if (scan_run(self, dim, is_max ? SCAN_MAX : SCAN_MIN, &v, &i) < 0) return NULL;
    return sort_finish_pair(is_max ? RT_CUMMAX : RT_CUMMIN, v, i, outs);
}

PyObject *pct_cpu_cummax(pct_call *c) { return scan_cummax(c, true); }
PyObject *pct_cpu_cummin(pct_call *c) { return scan_cummax(c, false); }

/* ------------------------------------------------------------------------------------ */
/* unique, unique_consecutive                                                            */

/* unique over all elements: sorted as torch's sort(stable=False) of the flattened input
 * (the first of equal values in that order represents them) unless consecutive; NaN never
 * equals anything (torch's equal_nan=False). */
static int unique_flat(pct_tensor *self, bool consecutive, pct_tensor **out, pct_tensor **inv, pct_tensor **cnt)
{
    int64_t n = self->numel, one = 0;
    pct_tensor *flat = NULL, *o = NULL, *iv = NULL, *ct = NULL;
    sort_kv *kv = NULL;
    if (!(iv = pct_tensor_empty(self->ndim, self->sizes, PCT_INT64, PCT_CPU, -1))) goto fail;
    if (n == 0) {
        if (!(o = pct_tensor_empty(1, &one, self->dtype, PCT_CPU, -1))) goto fail;
        if (!(ct = pct_tensor_empty(1, &one, PCT_INT64, PCT_CPU, -1))) goto fail;
        *out = o;
        *inv = iv;
        *cnt = ct;
        return 0;
    }
    if (!(flat = pct_contiguous(self))) goto fail;
    if (!(kv = malloc(sizeof(sort_kv) * (size_t)n * 2))) {
        PyErr_NoMemory();
        goto fail;
    }
    const char *p = pct_tensor_data(flat);
    int isz = (int)pct_tensor_itemsize(flat);
    sort_load[self->dtype](kv, p, isz, n);
    if (!consecutive) {
        /* torch sorts the flattened input with sort(stable=False) (radix-sorting integers) */
        PyThreadState *ts = n >= PCT_PARALLEL_GRAIN ? PyEval_SaveThread() : NULL;
        if (pct_dtype_is_integral(self->dtype, false) && n >= PCT_PARALLEL_GRAIN) sort_stable(kv, kv + n, n, false);
        else kva_sort(kv, n, NULL);
        if (ts) PyEval_RestoreThread(ts);
    }
    /* group starts: kv[j].k becomes the group id, stored in place after counting */
    int64_t *ivp = (int64_t *)pct_tensor_data(iv), groups = 0;
    for (int64_t j = 0; j < n; j++) {
        bool fresh = j == 0 || kv[j].k != kv[j - 1].k || sort_key_is_nan(kv[j].k, self->dtype);
        if (fresh) groups++;
        ivp[kv[j].i] = groups - 1;
    }
    if (!(o = pct_tensor_empty(1, &groups, self->dtype, PCT_CPU, -1))) goto fail;
    if (!(ct = pct_tensor_zeros(1, &groups, PCT_INT64))) goto fail;
    char *op = pct_tensor_data(o);
    int64_t *cp = (int64_t *)pct_tensor_data(ct), g = -1;
    for (int64_t j = 0; j < n; j++) {
        int64_t gid = ivp[kv[j].i];
        if (gid != g) {
            g = gid;
            sort_copy_elem(op + g * isz, p + kv[j].i * isz, isz);
        }
        cp[g]++;
    }
    free(kv);
    Py_DECREF(flat);
    *out = o;
    *inv = iv;
    *cnt = ct;
    return 0;
fail:
    free(kv);
    Py_XDECREF(flat);
    Py_XDECREF(o);
    Py_XDECREF(iv);
    Py_XDECREF(ct);
    return -1;
}

/* Rows of unique(dim=) compared as torch does: lexicographically with < and > (a NaN
 * compares neither way), equal when every element is == (so never with a NaN). Floats
 * are compared as doubles, other dtypes through their keys. */
typedef struct udim_ctx {
    const double *d;
    const uint64_t *u;
    int64_t m;
} udim_ctx;

static inline bool udim_less(const udim_ctx *c, int64_t a, int64_t b)
{
    int64_t m = c->m;
    if (c->d) {
        const double *x = c->d + a * m, *y = c->d + b * m;
        for (int64_t i = 0; i < m; i++) {
            if (x[i] < y[i]) return true;
            if (x[i] > y[i]) return false;
        }
    } else {
        const uint64_t *x = c->u + a * m, *y = c->u + b * m;
        for (int64_t i = 0; i < m; i++) {
            if (x[i] < y[i]) return true;
            if (x[i] > y[i]) return false;
        }
    }
    return false;
}

static inline bool udim_equal(const udim_ctx *c, int64_t a, int64_t b)
{
    int64_t m = c->m;
    if (c->d) {
        const double *x = c->d + a * m, *y = c->d + b * m;
        for (int64_t i = 0; i < m; i++)
            if (!(x[i] == y[i])) return false;
    } else {
        const uint64_t *x = c->u + a * m, *y = c->u + b * m;
        for (int64_t i = 0; i < m; i++)
            if (x[i] != y[i]) return false;
    }
    return true;
}

#define UDIM_LESS(x, y) udim_less((const udim_ctx *)ctx, (x), (y))
SORT_STL_DEFINE(udim, int64_t, UDIM_LESS)

static int unique_dim(pct_tensor *self, int dim, bool consecutive, pct_tensor **out, pct_tensor **inv, pct_tensor **cnt)
{
    pct_tensor *cont = NULL, *o = NULL, *iv = NULL, *ct = NULL;
    int64_t *idx = NULL, *rep = NULL, zero = 0;
    void *cmp = NULL;
    int64_t R = self->sizes[dim];
    if (self->numel == 0) {
        int nz = 0;
        for (int d = 0; d < self->ndim; d++) nz += self->sizes[d] == 0;
        if (R == 0) {
            if (nz != 1) {
                PyErr_SetString(PyExc_RuntimeError,
                                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
                return -1;
            }
            if (!(o = pct_tensor_empty(self->ndim, self->sizes, self->dtype, PCT_CPU, -1))) goto fail;
            if (!(iv = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1))) goto fail;
            if (!(ct = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1))) goto fail;
            *out = o;
            *inv = iv;
            *cnt = ct;
            return 0;
        }
        {
            PyErr_SetString(PyExc_RuntimeError,
                            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
            return -1;
        }
    }
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= self->sizes[d];
    for (int d = dim + 1; d < self->ndim; d++) inner *= self->sizes[d];
    int64_t m = outer * inner;
    if (!(cont = pct_contiguous(self))) goto fail;
    const char *p = pct_tensor_data(cont);
    int isz = (int)pct_tensor_itemsize(cont);
    bool isf = pct_dtype_is_floating(self->dtype);
    udim_ctx uc = {NULL, NULL, m};
    size_t cells = (size_t)(R * m > 0 ? R * m : 1);
    if (!(cmp = malloc(cells * 8)) || !(idx = malloc(sizeof(int64_t) * (size_t)R)) ||
        !(rep = malloc(sizeof(int64_t) * (size_t)R))) {
        PyErr_NoMemory();
        goto fail;
    }
    /* row r of the comparison matrix: the elements (o, r, i) in (o, i) order */
    for (int64_t r = 0; r < R; r++) {
        for (int64_t ou = 0; ou < outer; ou++) {
            const char *src = p + ((ou * R + r) * inner) * isz;
            int64_t at = r * m + ou * inner;
            if (isf) {
                for (int64_t i = 0; i < inner; i++) ((double *)cmp)[at + i] = pct_load_as_double(src + i * isz, self->dtype);
            } else {
                sort_keys[self->dtype]((uint64_t *)cmp + at, src, isz, inner);
            }
        }
        idx[r] = r;
    }
    if (isf) uc.d = cmp;
    else uc.u = cmp;
    if (!consecutive) udim_sort(idx, R, &uc);
    if (!(iv = pct_tensor_empty(1, &R, PCT_INT64, PCT_CPU, -1))) goto fail;
    int64_t *ivp = (int64_t *)pct_tensor_data(iv), groups = 1;
    rep[0] = idx[0];
    ivp[idx[0]] = 0;
    for (int64_t j = 1; j < R; j++) {
        if (!udim_equal(&uc, idx[j], rep[groups - 1])) rep[groups++] = idx[j];
        ivp[idx[j]] = groups - 1;
    }
    if (!(ct = pct_tensor_zeros(1, &groups, PCT_INT64))) goto fail;
    int64_t *cp = (int64_t *)pct_tensor_data(ct);
    for (int64_t j = 0; j < R; j++) cp[ivp[j]]++;
    int64_t shape[PCT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[dim] = groups;
    if (!(o = pct_tensor_empty(self->ndim, shape, self->dtype, PCT_CPU, -1))) goto fail;
    char *op = pct_tensor_data(o);
    for (int64_t ou = 0; ou < outer; ou++)
        for (int64_t g = 0; g < groups; g++)
            memcpy(op + ((ou * groups + g) * inner) * isz, p + ((ou * R + rep[g]) * inner) * isz, (size_t)(inner * isz));
    free(cmp);
    free(idx);
    free(rep);
    Py_DECREF(cont);
    *out = o;
    *inv = iv;
    *cnt = ct;
    return 0;
fail:
    free(cmp);
    free(idx);
    free(rep);
    Py_XDECREF(cont);
    Py_XDECREF(o);
    Py_XDECREF(iv);
    Py_XDECREF(ct);
    return -1;
}

/* Note [unique_consecutive's result]
 * torch.unique_consecutive is a Python boolean_dispatch that chooses which tensors to return
 * from `return_inverse` / `return_counts` given as keywords, or else from positional
 * arguments 2 and 1 respectively (swapped with respect to the signature), while the
 * computation uses the real arguments. So unique_consecutive(x, True) returns (output,
 * counts) with counts empty (not computed), and unique_consecutive(x, True, False) the
 * same. Its overloads tell the kernel how many flags were positional; tensors returned but
 * not computed are empty, except on the dim path, which always computes all three. */
static PyObject *unique_common(pct_call *c, bool consecutive)
{
    pct_tensor *self = c->v[0].t, *o = NULL, *iv = NULL, *ct = NULL;
    const pct_value *rc = pct_arg(c, "return_counts");
    bool ret_inv = pct_arg(c, "return_inverse")->b, ret_cnt = !rc->none && rc->b;
    bool fmt_inv = ret_inv, fmt_cnt = ret_cnt;
    if (c->op_index == PCT_OP_unique_consecutive_p1) {
        fmt_inv = false;
        fmt_cnt = rc->none ? ret_inv : ret_cnt;
    } else if (c->op_index == PCT_OP_unique_consecutive_p2 || c->op_index == PCT_OP_unique_consecutive_p3) {
        fmt_inv = ret_cnt;
        fmt_cnt = ret_inv;
    }
    const pct_value *dv = pct_arg(c, "dim");
    bool flat = dv->none || (consecutive && dv->i == 0 && self->ndim == 1);
    int r;
    if (flat) {
        r = unique_flat(self, consecutive, &o, &iv, &ct);
    } else {
        if (self->ndim == 0) {
            PyErr_Format(PyExc_IndexError, "Dimension specified as %lld but tensor has no dimensions", (long long)dv->i);
            return NULL;
        }
        int dim = pct_wrap_dim(dv->i, self->ndim);
        if (dim < 0) return NULL;
        r = unique_dim(self, dim, consecutive, &o, &iv, &ct);
    }
    if (r < 0) return NULL;
    if (flat && ((fmt_inv && !ret_inv) || (fmt_cnt && !ret_cnt))) {
        int64_t zero = 0;
        pct_tensor **slots[2] = {&iv, &ct};
        bool blank[2] = {!ret_inv, !ret_cnt};
        for (int k = 0; k < 2; k++) {
            if (!blank[k]) continue;
            Py_DECREF(*slots[k]);
            *slots[k] = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1);
        }
        if (!iv || !ct) {
            Py_DECREF(o);
            Py_XDECREF(iv);
            Py_XDECREF(ct);
            return NULL;
        }
    }
    PyObject *t;
    if (!fmt_inv && !fmt_cnt) {
        Py_INCREF(o);
        t = (PyObject *)o;
    } else if (fmt_inv && fmt_cnt) {
        t = PyTuple_Pack(3, o, iv, ct);
    } else {
        t = PyTuple_Pack(2, o, fmt_inv ? iv : ct);
    }
    Py_DECREF(o);
    Py_DECREF(iv);
    Py_DECREF(ct);
    return t;
}

PyObject *pct_cpu_unique(pct_call *c) { return unique_common(c, false); }
PyObject *pct_cpu_unique_consecutive(pct_call *c) { return unique_common(c, true); }

/* ------------------------------------------------------------------------------------ */
/* bincount, histc                                                                       */

PyObject *pct_cpu_bincount(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *w = c->v[1].none ? NULL : c->v[1].t, *in = NULL, *wc = NULL, *res = NULL;
    int64_t minlength = c->v[2].i;
    if (!pct_dtype_is_integral(self->dtype, false)) {
        sort_not_implemented("bincount_cpu", self->dtype);
        return NULL;
    }
    if (minlength < 0) {
        PyErr_SetString(PyExc_RuntimeError, "minlength should be >= 0");
        return NULL;
    }
    if (self->ndim == 1 && self->numel == 0) return (PyObject *)pct_tensor_zeros(1, &minlength, PCT_INT64);
    if (!(in = pct_to_dtype(self, PCT_INT64, false))) return NULL;
    pct_tensor *ic = pct_contiguous(in);
    Py_DECREF(in);
    if (!(in = ic)) return NULL;
    const int64_t *ip = (const int64_t *)pct_tensor_data(in);
    int64_t n = in->numel, mx = -1;
    bool bad = self->ndim != 1;
    for (int64_t j = 0; j < n && !bad; j++) {
        if (ip[j] < 0) bad = true;
        if (ip[j] > mx) mx = ip[j];
    }
    if (bad) {
        PyErr_SetString(PyExc_RuntimeError, "bincount only supports 1-d non-negative integral inputs.");
        goto fail;
    }
    if (w && (w->ndim != 1 || w->sizes[0] != n)) {
        PyErr_SetString(PyExc_RuntimeError, "weights should be 1-d and have the same length as input");
        goto fail;
    }
    int64_t nbins = mx + 1 > minlength ? mx + 1 : minlength;
    if (!w) {
        if (!(res = pct_tensor_zeros(1, &nbins, PCT_INT64))) goto fail;
        int64_t *op = (int64_t *)pct_tensor_data(res);
        for (int64_t j = 0; j < n; j++) op[ip[j]]++;
    } else if (w->dtype == PCT_FLOAT32) {
        if (!(wc = pct_contiguous(w)) || !(res = pct_tensor_zeros(1, &nbins, PCT_FLOAT32))) goto fail;
        float *op = (float *)pct_tensor_data(res);
        const float *wp = (const float *)pct_tensor_data(wc);
        for (int64_t j = 0; j < n; j++) op[ip[j]] += wp[j];
    } else {
        pct_tensor *wd = pct_to_dtype(w, PCT_FLOAT64, false);
        if (!wd) goto fail;
        wc = pct_contiguous(wd);
        Py_DECREF(wd);
        if (!wc || !(res = pct_tensor_zeros(1, &nbins, PCT_FLOAT64))) goto fail;
        double *op = (double *)pct_tensor_data(res);
        const double *wp = (const double *)pct_tensor_data(wc);
        for (int64_t j = 0; j < n; j++) op[ip[j]] += wp[j];
    }
    Py_DECREF(in);
    Py_XDECREF(wc);
    return (PyObject *)res;
fail:
    Py_XDECREF(in);
    Py_XDECREF(wc);
    Py_XDECREF(res);
    return NULL;
}

/* torch's histogram arithmetic in the input dtype: c10::Half / BFloat16 round every step */
#define HIST_ROUND_FLOAT16(x) pct_half_to_float(pct_float_to_half(x))
#define HIST_ROUND_BFLOAT16(x) pct_bf16_to_float(pct_float_to_bf16(x))
#define HIST_ROUND_FLOAT32(x) (x)
#define HIST_ROUND_FLOAT64(x) (x)

#define SORT_DEF_HIST(E, N, T, C, S)                                                             \
    static void hist_count_##N(const char *p, int64_t n, double lo, double hi, int64_t bins, double *h) \
    {                                                                                            \
        const C left = HIST_ROUND_##E((C)lo), right = HIST_ROUND_##E((C)hi);                    \
        const C nb = HIST_ROUND_##E((C)bins), width = HIST_ROUND_##E(right - left);              \
        for (int64_t j = 0; j < n; j++) {                                                        \
            C x = PCT_TO_COMPUTE_##E(((const T *)p)[j]);                                        \
            if (!(x >= left && x <= right)) continue;                                            \
            C t = HIST_ROUND_##E(x - left);                                                      \
            t = HIST_ROUND_##E(t * nb);                                                          \
            t = HIST_ROUND_##E(t / width);                                                       \
            int64_t pos = (int64_t)t;                                                            \
            if (pos == bins) pos--;                                                              \
            if (pos >= 0 && pos < bins) h[pos] += 1;                                             \
        }                                                                                        \
    }
PCT_FORALL_FLOAT_DTYPES(SORT_DEF_HIST)

PyObject *pct_cpu_histc(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *out = c->out, *cont = NULL, *res = NULL;
    int64_t bins = c->v[1].i;
    double lo = c->v[2].s.d, hi = c->v[3].s.d;
    double *h = NULL;
    if (bins <= 0) {
        PyErr_Format(PyExc_RuntimeError, "torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
        return NULL;
    }
    if (out && out->dtype != self->dtype) {
        PyErr_Format(PyExc_RuntimeError, "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
                     "input %s and hist %s", pct_dtype_cpp_type_name[self->dtype], pct_dtype_cpp_type_name[out->dtype]);
        return NULL;
    }
    bool floating = pct_dtype_is_floating(self->dtype);
    /* torch converts min and max to the input's type, range-checked */
    if (floating && (pct_scalar_check_fits(&c->v[2].s, self->dtype) < 0 || pct_scalar_check_fits(&c->v[3].s, self->dtype) < 0))
        return NULL;
    if (lo == hi && self->numel > 0) {
        /* torch takes the range from the data (aminmax; a NaN makes it NaN) */
        cont = pct_contiguous(self);
        if (!cont) return NULL;
        const char *p = pct_tensor_data(cont);
        int isz = (int)pct_tensor_itemsize(cont);
        bool has_nan = false;
        /* aminmax starts from the dtype's largest finite values, so all -inf gives max = lowest */
        double big = self->dtype == PCT_FLOAT16 ? 65504.0 : self->dtype == PCT_BFLOAT16 ? 3.3895313892515355e38
                   : self->dtype == PCT_FLOAT32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
        lo = big;
        hi = -big;
        for (int64_t j = 0; j < cont->numel; j++) {
            double v = pct_load_as_double(p + j * isz, self->dtype);
            if (v != v) has_nan = true;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        if (has_nan) /* as torch prints it (its vectorized aminmax yields the negative NaN) */
            lo = hi = (self->numel > 1 && self->dtype != PCT_BFLOAT16) ? -NAN : NAN;
    }
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi)) {
        char msg[128]; /* PyErr_Format has no %g */
        snprintf(msg, sizeof msg, "torch.histc: range of [%g, %g] is not finite", lo, hi);
        PyErr_SetString(PyExc_RuntimeError, msg);
        goto fail;
    }
    if (!(lo < hi)) {
        PyErr_SetString(PyExc_RuntimeError, "torch.histc: max must be larger than min");
        goto fail;
    }
    if (!floating) {
        /* torch fails making the bin edges (linspace in the input dtype), or then in histogram */
        static const char *const cname[PCT_NUM_DTYPES] = {
            [PCT_UINT8] = "uint8_t", [PCT_INT8] = "int8_t", [PCT_INT16] = "int16_t", [PCT_INT32] = "int",
            [PCT_INT64] = "int64_t"};
        static const double lim[PCT_NUM_DTYPES][2] = {
            [PCT_UINT8] = {0, 255}, [PCT_INT8] = {-128, 127}, [PCT_INT16] = {-32768, 32767},
            [PCT_INT32] = {-2147483648.0, 2147483647.0}, [PCT_INT64] = {-9223372036854775808.0, 9223372036854775807.0}};
        if (self->dtype == PCT_BOOL) {
            sort_not_implemented("linspace_cpu", self->dtype);
        } else if (lo < lim[self->dtype][0] || lo > lim[self->dtype][1] || hi < lim[self->dtype][0] ||
                   hi > lim[self->dtype][1]) {
            PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", cname[self->dtype]);
        } else {
            sort_not_implemented("histogram_cpu", self->dtype);
        }
        goto fail;
    }
    if (!cont && !(cont = pct_contiguous(self))) goto fail;
    if (!(h = calloc((size_t)bins, sizeof(double)))) {
        PyErr_NoMemory();
        goto fail;
    }
    {
        PyThreadState *ts = cont->numel >= PCT_PARALLEL_GRAIN ? PyEval_SaveThread() : NULL;
        const char *p = pct_tensor_data(cont);
        switch (self->dtype) {
#define HIST_CASE(E, N, T, C, S) case PCT_##E: hist_count_##N(p, cont->numel, lo, hi, bins, h); break;
            PCT_FORALL_FLOAT_DTYPES(HIST_CASE)
#undef HIST_CASE
        default: break;
        }
        if (ts) PyEval_RestoreThread(ts);
    }
    if (!(res = pct_tensor_empty(1, &bins, self->dtype, PCT_CPU, -1))) goto fail;
    for (int64_t b = 0; b < bins; b++) pct_store_double(pct_tensor_data(res) + b * pct_tensor_itemsize(res), res->dtype, h[b]);
    free(h);
    Py_DECREF(cont);
    return sort_finish(res, out);
fail:
    free(h);
    Py_XDECREF(cont);
    Py_XDECREF(res);
    return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* searchsorted, bucketize                                                               */

/* torch's cus_lower_bound / cus_upper_bound in the common dtype (the negated comparisons
 * send NaN boundaries to the right). */
#define SORT_DEF_SEARCH(E, N, T, C, S)                                                           \
    static void search_##N(const char *bd, int64_t len, const int64_t *sorter, const char *vals, \
                           int64_t nvals, int64_t inner, bool bd_rows, bool right, bool i32, char *out) \
    {                                                                                            \
        for (int64_t e = 0; e < nvals; e++) {                                                    \
            int64_t row = bd_rows ? e / inner : 0;                                               \
            const T *b = (const T *)bd + row * len;                                              \
            const int64_t *so = sorter ? sorter + row * len : NULL;                              \
            C v = PCT_TO_COMPUTE_##E(((const T *)vals)[e]);                                      \
            int64_t lo = 0, hi = len;                                                            \
            while (lo < hi) {                                                                    \
                int64_t mid = lo + ((hi - lo) >> 1);                                             \
                C mv = PCT_TO_COMPUTE_##E(so ? b[so[mid]] : b[mid]);                             \
                if (right ? !(mv > v) : !(mv >= v)) lo = mid + 1;                                \
                else hi = mid;                                                                   \
            }                                                                                    \
            if (i32) ((int32_t *)out)[e] = (int32_t)lo;                                          \
            else ((int64_t *)out)[e] = lo;                                                       \
        }                                                                                        \
    }
PCT_FORALL_DTYPES(SORT_DEF_SEARCH)

static PyObject *search_impl(pct_tensor *bd, pct_tensor *in, bool out_int32, bool right, pct_tensor *sorter,
                             pct_tensor *out)
{
    pct_tensor *bc = NULL, *ic = NULL, *sc = NULL, *res = NULL;
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (bd->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
        return NULL;
    }
    int64_t len = bd->sizes[bd->ndim - 1];
    if (sorter) {
        if (sorter->ndim != bd->ndim || memcmp(sorter->sizes, bd->sizes, sizeof(int64_t) * (size_t)bd->ndim) != 0) {
            /* (torch prints no space before "and") */
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): boundary and sorter must have the same size, but got "
                         "boundary tensor %sand got sorter tensor %s", pct_shape_str(b1, sizeof b1, bd->ndim, bd->sizes),
                         pct_shape_str(b2, sizeof b2, sorter->ndim, sorter->sizes));
            return NULL;
        }
        if (sorter->dtype != PCT_INT64) {
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                         pct_dtype_cpp_name[sorter->dtype]);
            return NULL;
        }
        if (!(sc = pct_contiguous(sorter))) return NULL;
        const int64_t *sp = (const int64_t *)pct_tensor_data(sc);
        for (int64_t j = 0; j < sc->numel; j++) {
            if (sp[j] < 0 || sp[j] >= len) {
                PyErr_SetString(PyExc_RuntimeError, "torch.searchsorted(): sorter index out of range");
                goto fail;
            }
        }
    }
    if (!(in->ndim > 0 || (in->numel == 1 && bd->ndim == 1))) {
        PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                     "dimension is 1, but we got boundaries tensor dim(%d) and input value's dim(%d) numel(%lld)",
                     bd->ndim, in->ndim, (long long)in->numel);
        goto fail;
    }
    if (bd->ndim > 1) {
        bool ok = bd->ndim == in->ndim;
        for (int d = 0; ok && d < bd->ndim - 1; d++) ok = bd->sizes[d] == in->sizes[d];
        if (!ok) {
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                         "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor %s "
                         "and input value tensor %s", pct_shape_str(b1, sizeof b1, bd->ndim, bd->sizes),
                         pct_shape_str(b2, sizeof b2, in->ndim, in->sizes));
            goto fail;
        }
    }
    int odt = out_int32 ? PCT_INT32 : PCT_INT64;
    if (out && out->dtype != odt) {
        PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                     "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype %s and "
                     "out_int32 flag is %s", pct_dtype_cpp_name[out->dtype], out_int32 ? "True" : "False");
        goto fail;
    }
    pct_tensor *pair[2] = {bd, in};
    int cd = pct_result_type_of(2, pair);
    if (cd < 0) goto fail;
    if (cd == PCT_BOOL) {
        sort_not_implemented("searchsorted_out_cpu", cd);
        goto fail;
    }
    pct_tensor *t;
    if (!(t = pct_to_dtype(bd, cd, false))) goto fail;
    bc = pct_contiguous(t);
    Py_DECREF(t);
    if (!bc || !(t = pct_to_dtype(in, cd, false))) goto fail;
    ic = pct_contiguous(t);
    Py_DECREF(t);
    if (!ic || !(res = pct_tensor_empty(in->ndim, in->sizes, odt, PCT_CPU, -1))) goto fail;
    if (res->numel > 0) {
        int64_t inner = in->ndim ? in->sizes[in->ndim - 1] : 1;
        const char *bp = pct_tensor_data(bc), *vp = pct_tensor_data(ic);
        const int64_t *sp = sc ? (const int64_t *)pct_tensor_data(sc) : NULL;
        char *op = pct_tensor_data(res);
        bool rows = bd->ndim > 1;
        PyThreadState *ts = res->numel >= PCT_PARALLEL_GRAIN ? PyEval_SaveThread() : NULL;
        switch (cd) {
#define SEARCH_CASE(E, N, T, C, S) \
        case PCT_##E: search_##N(bp, len, sp, vp, res->numel, inner, rows, right, out_int32, op); break;
            PCT_FORALL_DTYPES(SEARCH_CASE)
#undef SEARCH_CASE
        default: break;
        }
        if (ts) PyEval_RestoreThread(ts);
    }
    Py_DECREF(bc);
    Py_DECREF(ic);
    Py_XDECREF(sc);
    return sort_finish(res, out);
fail:
    Py_XDECREF(bc);
    Py_XDECREF(ic);
    Py_XDECREF(sc);
    Py_XDECREF(res);
    return NULL;
}

PyObject *pct_cpu_searchsorted(pct_call *c)
{
    bool right = c->v[3].b;
    const pct_value *side = &c->v[4];
    if (!side->none && side->obj) {
        const char *s = PyUnicode_AsUTF8(side->obj);
        if (!s) return NULL;
        if (strcmp(s, "left") != 0 && strcmp(s, "right") != 0) {
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): side can only be 'left' or 'right' but got %s", s);
            return NULL;
        }
        if (right && strcmp(s, "right") != 0) {
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): side and right can't be set to opposites, got side of %s "
                         "while right was True", s);
            return NULL;
        }
        right = strcmp(s, "right") == 0;
    }
    return search_impl(c->v[0].t, c->v[1].t, c->v[2].b, right, c->v[5].none ? NULL : c->v[5].t, c->out);
}

PyObject *pct_cpu_bucketize(pct_call *c)
{
    pct_tensor *bd = c->v[1].t;
    if (bd->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "boundaries tensor must be 1 dimension, but got dim(%d)", bd->ndim);
        return NULL;
    }
    return search_impl(bd, c->v[0].t, c->v[2].b, c->v[3].b, NULL, c->out);
}
