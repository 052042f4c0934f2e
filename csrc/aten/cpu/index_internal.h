/* index_internal.h: what the index family's files share: index.c (index_select, gather,
 * scatter, index_add/copy/fill, take, put_), index_common.c (helpers, the index loop and
 * index checking), nonzero.c, masked.c and index_advanced.c. Functions called across files
 * are pct_ix_* with hidden visibility (not exported from _C).
 */
#ifndef PCT_INDEX_INTERNAL_H
#define PCT_INDEX_INTERNAL_H
#include "../op.h"
#include "../error.h"
#include "../out.h"
#include "../iter.h"
#include "../index.h"
#include "fill.h"
#include <math.h>
#include <stdatomic.h>
#ifdef _OPENMP
#include <omp.h>
#define IX_PRAGMA(x) _Pragma(#x)
#define IX_PARALLEL_FOR(cond) IX_PRAGMA(omp parallel for schedule(static) if (cond))
#else
#define IX_PARALLEL_FOR(cond)
#endif

#define SHAPE(buf, nd, sz) pct_shape_str((buf), sizeof(buf), (nd), (sz))

#define PCT_IX_INTERNAL __attribute__((visibility("hidden")))

/* ---- helpers (index_common.c) ---- */

static inline long version_of(pct_tensor *t) { return atomic_load(&t->version->value); }
static inline void set_version(pct_tensor *t, long v) { atomic_store(&t->version->value, v); }
/* A contiguous copy of t (fresh version counter, version 0). */
static inline pct_tensor *clone_of(pct_tensor *t) { return pct_to_dtype(t, t->dtype, true); }

/* Hands back a freshly made result (version 0), or, for an out= call, copies it into out
 * (resized, same dtype required) and returns out. Steals res; NULL res passes through
 * (join.c declares these two itself). */
pct_object *pct_index_to_out(pct_call *c, pct_tensor *res);
pct_object *pct_index_to_out_unchecked(pct_call *c, pct_tensor *res);
/* For out= calls: out may not have internal overlap nor share memory with a tensor argument. */
int pct_index_check_out(pct_call *c, pct_tensor *out, bool internal);
/* The result of an op that wrote `target` (self for an in-place call, else a new tensor): steals target.
 * In place: bumps self's version (v0 = its version before the write) and returns it; otherwise returns
 * the new tensor through the out= handling (`via_out`) or as it is, with version 0. */
PCT_IX_INTERNAL pct_object *pct_ix_done(pct_call *c, pct_tensor *target, long v0, bool via_out);
/* The geometry of t with a 0-d tensor seen as 1-d of size 1 (as torch's gather/scatter do). */
PCT_IX_INTERNAL int pct_ix_geom(const pct_tensor *t, int64_t *sizes, int64_t *strides);
/* One element of dtype `dtype` holding a scalar, as bytes (for fills). */
PCT_IX_INTERNAL uint64_t pct_ix_scalar_bytes(int dtype, const pct_scalar *s);
/* torch's assert_no_overlap: a source whose memory meets the written tensor's raises (when
 * both are dense; otherwise torch cannot tell and lets it through). 0 or -1 with exception. */
PCT_IX_INTERNAL int pct_ix_check_no_overlap(const pct_tensor *dst, const pct_tensor *src);
/* src itself, or a copy when it shares memory with dst (new reference; NULL with exception). */
PCT_IX_INTERNAL pct_tensor *pct_ix_unaliased(pct_tensor *dst, pct_tensor *src);
PCT_IX_INTERNAL int pct_ix_check_written(const pct_tensor *t, const char *warn_op);
PCT_IX_INTERNAL int pct_ix_warn_uint8_index(void);

/* ---- the index loop (Note [Index loops] in index.c; index_common.c) ---- */

enum { IX_COPY, IX_ADD, IX_MUL, IX_MAX, IX_MIN, IX_MEAN };

typedef struct ix_ctx {
    int op;
    int64_t n;                        /* inner length */
    int64_t idx_step;                 /* between successive index entries */
    int64_t dst_si, dst_sj, src_si, src_sj, cnt_sj; /* elements in the caller, bytes in the loop */
    double alpha_d;
    int64_t alpha_i;
} ix_ctx;

/* Runs the index loop over `shape`, each operand seen through its own element strides
 * (its storage offset kept). cnt may be NULL. ctx steps are in elements; converted here. */
PCT_IX_INTERNAL int pct_ix_run(ix_ctx *ctx, int ndim, const int64_t *shape, pct_tensor *dst, const int64_t *dst_st,
                               pct_tensor *src, const int64_t *src_st, pct_tensor *idx, const int64_t *idx_st,
                               pct_tensor *cnt, const int64_t *cnt_st, bool serial);

/* ---- checking indices and making element offsets (index_common.c) ---- */

typedef struct off_ctx {
    int64_t lo, hi;       /* valid values are [lo, hi); negative ones get hi added */
    int64_t mul;          /* offset = value * mul (dim mode) */
    int accumulate;       /* add to the output instead of storing */
    int in32;             /* the input is int32 (else int64) */
    int linear;           /* value is a row-major linear index into ndim/sizes/strides */
    int ndim;
    const int64_t *sizes, *strides;
    atomic_int err;
    int64_t bad;
} off_ctx;

/* x.gather(-1, index) into out (a new contiguous tensor of index's shape) in one pass over an int64 index whose rows
 * are long enough (cpu/gather_rows.c, Note [Fused gather]): 0 done, 1 a value out of range (out is garbage), -1 not a
 * plan it takes. */
PCT_IX_INTERNAL int pct_gather_last_dim(pct_tensor *out, const pct_tensor *self, const pct_tensor *index);
/* Runs off_loop writing `out` (int64) from `in` (int32/int64, broadcast to out). 0, or -1
 * with an exception; a bad value leaves c->err set and no exception. */
PCT_IX_INTERNAL int pct_ix_off_run(pct_tensor *out, pct_tensor *in, off_ctx *c);
/* A contiguous int64 copy of an int32/int64 index with every value checked to lie in
 * [lo, hi) (negatives wrapped by +hi). NULL with an exception, or NULL with *bad set and
 * *is_bad = 1 (no exception) so the caller raises its own message. */
PCT_IX_INTERNAL pct_tensor *pct_ix_checked_index(pct_tensor *index, int64_t lo, int64_t hi, int64_t *bad, int *is_bad);

/* ---- the loops on another device (index_device.c, Note [Device indexing]) ---- */

/* dtype runs on the device's index loops (else the backend's fallback serves the op) */
PCT_IX_INTERNAL bool pct_ix_device_dtype(int dtype);
/* t on like's device: itself (new reference), or a copy of a CPU tensor; NULL with an error. */
PCT_IX_INTERNAL pct_tensor *pct_ix_on_device_of(pct_tensor *t, const pct_tensor *like);
/* The index loop over a built iterator of device operands (ctx's steps in bytes); src_by_value: operand 1 is ignored
 * and src_value (an element's bytes) read instead. 0, or -1 with an error. */
PCT_IX_INTERNAL int pct_ix_device_loop(const ix_ctx *ctx, pct_iter *it, bool src_by_value, uint64_t src_value);
/* pct_ix_off_run on the device of out. */
PCT_IX_INTERNAL int pct_ix_device_offsets(pct_tensor *out, pct_tensor *in, off_ctx *c);
/* target /= counts (int64, target's shape) in place, a count of 0 as 1, on target's device. */
PCT_IX_INTERNAL int pct_ix_device_mean_div(pct_tensor *target, pct_tensor *counts);

static inline bool is_index_dtype(int d) { return d == PCT_INT64 || d == PCT_INT32; }

/* ---- nonzero and mask compaction (nonzero.c) ---- */

#define NZ_MAX_CHUNKS 256

/* A contiguous bool tensor with t's truth values (t itself when it already is one). */
PCT_IX_INTERNAL pct_tensor *pct_ix_bool_contiguous(pct_tensor *t);
/* Splits [0, n) into chunks and counts the set bytes of m in each: start[k] is where chunk
 * k's output begins; returns the total. */
PCT_IX_INTERNAL int pct_ix_nz_chunks(int64_t n);
PCT_IX_INTERNAL int64_t pct_ix_nz_count(const uint8_t *m, int64_t n, int nch, int64_t *start);
/* Coordinates of the nonzero elements of t: (count, ndim) int64, or (ndim, count) when
 * transposed. t of 0 dims is seen as 1-d when as_1d is set. */
PCT_IX_INTERNAL pct_tensor *pct_ix_nonzero(pct_tensor *t, bool transposed, bool as_1d);
/* The rows of a (k, count) tensor as a tuple of 1-d views. */
/* The k rows of a (k, count) tensor (k <= PCT_MAX_DIMS) as 1-d views: new references in rows[0..k); -1 with an error. */
PCT_IX_INTERNAL int pct_ix_rows(pct_tensor *r, pct_tensor **rows);
PCT_IX_INTERNAL pct_object *pct_ix_rows_tuple(pct_tensor *r);

/* ---- masked ops (masked.c) ---- */

/* The elements of x where m is set, in row-major order (x and m of one shape). */
PCT_IX_INTERNAL pct_tensor *pct_ix_compact(pct_tensor *xs, pct_tensor *ms);
/* dst[mask] = s, mask (bool or uint8) broadcast to dst's shape. */
PCT_IX_INTERNAL int pct_ix_masked_fill_run(pct_tensor *dst, pct_tensor *mask, const pct_scalar *s);

#endif
