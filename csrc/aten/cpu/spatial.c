/* spatial.c: the gather / scatter engine of Note [Index maps] (spatial.h), shared by padding
 * (pad.c) and nearest resampling (upsample.c).
 *
 * The output is walked as rows: planes x (product of the output sizes of all spatial dims but
 * the last) rows of osz[last] elements. A row reads one input row (or is all fill), found from
 * the maps of the outer spatial dims; along the row, map[last] picks the elements. The longest
 * stretch of the row that reads consecutive inputs (the interior of a padding) is one memcpy
 * (forward) or one vectorizable add loop (backward). These run without the GIL: they return -1
 * when the row table cannot be allocated, and the caller raises MemoryError. */
#include "spatial.h"
#include <stdlib.h>

int pct_index_maps_alloc(pct_index_maps *m, int nsp, const int64_t *isz, const int64_t *osz)
{
    int64_t total = 0;
    m->nsp = nsp;
    for (int d = 0; d < nsp; d++) {
        m->isz[d] = isz[d];
        m->osz[d] = osz[d];
        total += osz[d] > 0 ? osz[d] : 0;
    }
    int64_t *block = malloc((size_t)(total > 0 ? total : 1) * sizeof(int64_t));
    if (!block) { pct_error_nomem(); return -1; }
    int64_t at = 0;
    for (int d = 0; d < nsp; d++) {
        m->map[d] = block + at;
        at += osz[d] > 0 ? osz[d] : 0;
    }
    if (nsp == 0) m->map[0] = block;
    return 0;
}

void pct_index_maps_free(pct_index_maps *m)
{
    free(m->map[0]);
    m->map[0] = NULL;
}

/* The offset (in elements, within a plane) of the input row output row r reads, or -1. */
static int64_t row_source(const pct_index_maps *m, int64_t r)
{
    int last = m->nsp - 1;
    int64_t off = 0, stride = m->isz[last];
    for (int d = last - 1; d >= 0; d--) {
        int64_t o = r % m->osz[d], i = m->map[d][o];
        r /= m->osz[d];
        if (i < 0) return -1;
        off += i * stride;
        stride *= m->isz[d];
    }
    return off;
}

/* The longest [lo, hi) with map[o] = map[lo] + (o - lo) >= 0 (an empty one when none). */
static void longest_run(const int64_t *map, int64_t n, int64_t *lo, int64_t *hi)
{
    int64_t s = -1;
    *lo = *hi = 0;
    for (int64_t o = 0; o <= n; o++) {
        bool valid = o < n && map[o] >= 0;
        if (valid && s >= 0 && map[o] == map[o - 1] + 1) continue;
        if (s >= 0 && o - s > *hi - *lo) { *lo = s; *hi = o; }
        s = valid ? o : -1;
    }
}

/* The geometry every loop below shares. */
typedef struct walk {
    int64_t rows, ow, iplane, oplane, lo, hi;
    bool has_fill;     /* map[last] has -1 entries */
    int64_t *src;      /* src[r]: row_source of each row */
} walk;

static int walk_init(walk *w, const pct_index_maps *m)
{
    int last = m->nsp - 1;
    w->rows = 1;
    w->iplane = 1;
    for (int d = 0; d < m->nsp; d++) {
        if (d < last) w->rows *= m->osz[d];
        w->iplane *= m->isz[d];
    }
    w->ow = m->osz[last];
    w->oplane = w->rows * w->ow;
    longest_run(m->map[last], w->ow, &w->lo, &w->hi);
    w->has_fill = false;
    for (int64_t o = 0; o < w->ow; o++) w->has_fill |= m->map[last][o] < 0;
    w->src = malloc((size_t)(w->rows > 0 ? w->rows : 1) * sizeof(int64_t));
    if (!w->src) return -1;
    for (int64_t r = 0; r < w->rows; r++) w->src[r] = row_source(m, r);
    return 0;
}

/* memcpy of a row's interior, inlined as 32-byte moves: rows are short, and a library call per
 * row cost about a fifth of a reflect pad. */
static inline __attribute__((always_inline)) void copy_run(char *d, const char *s, size_t n)
{
    for (; n >= 32; n -= 32, d += 32, s += 32) __builtin_memcpy(d, s, 32);
    for (; n >= 4; n -= 4, d += 4, s += 4) __builtin_memcpy(d, s, 4);
    for (; n; n--) *d++ = *s++;
}

/* Rows [b, e) of the planes x rows list (one thread's share). */
#define GATHER_ROWS(T)                                                                                 \
    PCT_HOT_AVX2 static void gather_rows_##T(const pct_index_maps *m, const walk *w, const T *in, T *out,    \
                                                T fill, int64_t b, int64_t e)                          \
    {                                                                                                  \
        const int64_t *mw = m->map[m->nsp - 1];                                                        \
        int64_t p = b / w->rows, r = b % w->rows;                                                      \
        for (int64_t pr = b; pr < e; pr++, r++) {                                                      \
            if (r == w->rows) { r = 0; p++; }                                                          \
            int64_t s = w->src[r];                                                                     \
            T *o = out + p * w->oplane + r * w->ow;                                                    \
            if (s < 0) {                                                                               \
                for (int64_t k = 0; k < w->ow; k++) o[k] = fill;                                       \
                continue;                                                                              \
            }                                                                                          \
            const T *i = in + p * w->iplane + s;                                                       \
            if (!w->has_fill && w->hi - w->lo < 2) { /* no padding: a plain gather (nearest) */        \
                for (int64_t k = 0; k < w->ow; k++) o[k] = i[mw[k]];                                   \
                continue;                                                                              \
            }                                                                                          \
            for (int64_t k = 0; k < w->lo; k++) o[k] = mw[k] < 0 ? fill : i[mw[k]];                    \
            if (w->hi > w->lo) copy_run((char *)(o + w->lo), (const char *)(i + mw[w->lo]),             \
                                        (size_t)(w->hi - w->lo) * sizeof(T));                          \
            for (int64_t k = w->hi; k < w->ow; k++) o[k] = mw[k] < 0 ? fill : i[mw[k]];                \
        }                                                                                              \
    }                                                                                                  \
    static void gather_##T(const pct_index_maps *m, const walk *w, int64_t planes, const T *in, T *out, \
                           T fill)                                                                     \
    {                                                                                                  \
        int64_t total = planes * w->rows;                                                              \
        int nt = pct_spatial_threads(total * w->ow, total);                                            \
        _Pragma("omp parallel for num_threads(nt) if (nt > 1)")                                        \
        for (int t = 0; t < nt; t++) gather_rows_##T(m, w, in, out, fill, total * t / nt, total * (t + 1) / nt); \
    }
GATHER_ROWS(uint8_t)
GATHER_ROWS(uint16_t)
GATHER_ROWS(uint32_t)
GATHER_ROWS(uint64_t)
typedef struct { uint64_t w[2]; } gather_b16; /* complex128 elements, moved as two words */
GATHER_ROWS(gather_b16)

int pct_index_gather(const pct_index_maps *m, int64_t planes, const char *in, char *out, int itemsize,
                     const void *fill)
{
    walk w;
    if (walk_init(&w, m) < 0) return -1;
    switch (itemsize) {
    case 1: { uint8_t f; memcpy(&f, fill, 1); gather_uint8_t(m, &w, planes, (const uint8_t *)in, (uint8_t *)out, f); break; }
    case 2: { uint16_t f; memcpy(&f, fill, 2); gather_uint16_t(m, &w, planes, (const uint16_t *)in, (uint16_t *)out, f); break; }
    case 4: { uint32_t f; memcpy(&f, fill, 4); gather_uint32_t(m, &w, planes, (const uint32_t *)in, (uint32_t *)out, f); break; }
    case 16: { gather_b16 f; memcpy(&f, fill, 16); gather_gather_b16(m, &w, planes, (const gather_b16 *)in, (gather_b16 *)out, f); break; }
    default: { uint64_t f; memcpy(&f, fill, 8); gather_uint64_t(m, &w, planes, (const uint64_t *)in, (uint64_t *)out, f); break; }
    }
    free(w.src);
    return 0;
}

/* Backward: each plane is one thread's (rows of a plane may read the same input row). */
#define SCATTER_ROWS(T)                                                                                \
    static void scatter_##T(const pct_index_maps *m, const walk *w, int64_t planes, const T *gout,      \
                            T *gin)                                                                    \
    {                                                                                                  \
        const int64_t *mw = m->map[m->nsp - 1];                                                        \
        _Pragma("omp parallel for if (planes > 1 && planes * w->oplane > PCT_SPATIAL_GRAIN)")         \
        for (int64_t p = 0; p < planes; p++) {                                                         \
            for (int64_t r = 0; r < w->rows; r++) {                                                    \
                int64_t s = w->src[r];                                                                 \
                if (s < 0) continue;                                                                   \
                const T *g = gout + p * w->oplane + r * w->ow;                                         \
                T *d = gin + p * w->iplane + s;                                                        \
                for (int64_t k = 0; k < w->lo; k++) if (mw[k] >= 0) d[mw[k]] += g[k];                  \
                if (w->hi > w->lo) {                                                                   \
                    T *dd = d + mw[w->lo];                                                             \
                    const T *gg = g + w->lo;                                                           \
                    for (int64_t k = 0; k < w->hi - w->lo; k++) dd[k] += gg[k];                        \
                }                                                                                      \
                for (int64_t k = w->hi; k < w->ow; k++) if (mw[k] >= 0) d[mw[k]] += g[k];              \
            }                                                                                          \
        }                                                                                              \
    }
SCATTER_ROWS(float)
SCATTER_ROWS(double)

int pct_index_scatter_add(const pct_index_maps *m, int64_t planes, const char *gout, char *gin, int dtype)
{
    walk w;
    if (walk_init(&w, m) < 0) return -1;
    if (dtype == PCT_FLOAT64) scatter_double(m, &w, planes, (const double *)gout, (double *)gin);
    else scatter_float(m, &w, planes, (const float *)gout, (float *)gin);
    free(w.src);
    return 0;
}
