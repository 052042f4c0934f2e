/* spatial.h: the shape and index math shared by the pooling, padding and resampling kernels
 * (pool.c, pad.c, upsample.c, and the gather/scatter engine of spatial.c).
 *
 * Note [Planes and grids]: every kernel here sees a contiguous input as `planes` (the leading,
 * untouched dims flattened: N * C) of a grid over the trailing spatial dims. The 1-d ops are the
 * 2-d code with a height of 1 (kernel 1, stride 1, no padding), so each loop is written once.
 * float16 / bfloat16 are computed in float32 (converted before, rounded after), as torch's
 * kernels compute in float for them. */
#ifndef PCT_SPATIAL_H
#define PCT_SPATIAL_H
#include "simd_levels.h"
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Above this many output elements (times the work per element) loops run on OpenMP threads. */
#define PCT_SPATIAL_GRAIN 32768

/* How many OpenMP threads a loop of `units` independent parts and `work` element operations
 * should use: 1 below the grain, inside a parallel region, or with one part. */
static inline int pct_spatial_threads(int64_t work, int64_t units)
{
#ifdef _OPENMP
    if (work <= PCT_SPATIAL_GRAIN || units < 2 || omp_in_parallel()) return 1;
    int n = omp_get_max_threads();
    return units < n ? (int)units : n;
#else
    (void)work;
    (void)units;
    return 1;
#endif
}

/* floor(a / b) for b != 0 (C division truncates toward zero). */
static inline int64_t pct_div_floor(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* torch's pooling_output_shape: the number of windows along one dim, or INT64_MIN when the
 * arithmetic overflows (huge arguments; the caller reports it). ceil_mode keeps a last,
 * partial window only when it starts inside the input or its left padding. */
static inline int64_t pct_pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil)
{
    int64_t span, num, t;
    if (__builtin_sub_overflow(k, 1, &t) || __builtin_mul_overflow(dil, t, &span)) return INT64_MIN;
    if (__builtin_mul_overflow(pad, 2, &t) || __builtin_add_overflow(in, t, &num) ||
        __builtin_sub_overflow(num, span, &num) || __builtin_sub_overflow(num, 1, &num))
        return INT64_MIN;
    if (ceil && __builtin_add_overflow(num, stride - 1, &num)) return INT64_MIN;
    int64_t out = pct_div_floor(num, stride) + 1;
    if (ceil) {
        int64_t last, lim;
        if (__builtin_mul_overflow(out - 1, stride, &last) || __builtin_add_overflow(in, pad, &lim)) return INT64_MIN;
        if (last >= lim) out--;
    }
    return out;
}

/* Adaptive pooling windows: output i of `out` covers [start, end) of `in` (torch's rounding). */
static inline int64_t pct_adaptive_start(int64_t i, int64_t out, int64_t in)
{
    return (i / out) * in + ((i % out) * in) / out;
}
static inline int64_t pct_adaptive_end(int64_t i, int64_t out, int64_t in)
{
    return 1 + ((i + 1) * in - 1) / out;
}

/* A new contiguous tensor on t's device with t's leading dims (all but the last nsp) and the given trailing
 * spatial sizes; NULL with exception. */
static inline pct_tensor *pct_spatial_new(const pct_tensor *t, int nsp, const int64_t *sp, int dtype)
{
    int64_t sizes[PCT_MAX_DIMS];
    int lead = t->ndim - nsp;
    for (int i = 0; i < lead; i++) sizes[i] = t->sizes[i];
    for (int i = 0; i < nsp; i++) sizes[lead + i] = sp[i];
    return pct_tensor_empty(t->ndim, sizes, dtype, t->device_type, t->device_index); /* Note [Device pooling] */
}

/* The product of the first `lead` sizes. */
static inline int64_t pct_spatial_planes(const pct_tensor *t, int lead)
{
    int64_t n = 1;
    for (int i = 0; i < lead; i++) n *= t->sizes[i];
    return n;
}

/* The dtype a kernel computes in: float32 for float16 / bfloat16, the dtype itself otherwise. */
static inline int pct_spatial_compute_dtype(int dtype)
{
    return pct_dtype_is_reduced_float(dtype) ? PCT_FLOAT32 : dtype;
}

/* A contiguous copy of t in its compute dtype (t itself, new reference, when it already is). */
static inline pct_tensor *pct_spatial_input(pct_tensor *t)
{
    int cd = pct_spatial_compute_dtype(t->dtype);
    if (cd != t->dtype) return pct_to_dtype(t, cd, false); /* a fresh contiguous tensor */
    return pct_contiguous(t);
}

/* Steals r: r converted to `dtype` (r itself when it already has it). */
static inline pct_object *pct_spatial_finish(pct_tensor *r, int dtype)
{
    if (!r || r->dtype == dtype) return (pct_object *)r;
    pct_tensor *o = pct_to_dtype(r, dtype, false);
    PCT_DECREF(r);
    return (pct_object *)o;
}

/* "[2, 3]" of a tensor's sizes into buf (for error messages). */
static inline const char *pct_spatial_shape(char *buf, const pct_tensor *t)
{
    return pct_shape_str(buf, PCT_SHAPE_BUF, t->ndim, t->sizes);
}

/* NotImplementedError naming the op and the dtype, torch's text for a missing dtype. */
static inline pct_object *pct_spatial_no_dtype(const char *name, int dtype)
{
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, pct_dtype_cpp_name[dtype]);
    return NULL;
}

/* ---- the gather / scatter engine (spatial.c) ----
 * Note [Index maps]: padding and nearest resampling read each output element from one input
 * element, found per spatial dim: map[d][o] is the input position along dim d that output
 * position o reads, or -1 for the fill value (constant padding). Forward gathers (any dtype: it
 * moves bytes), backward scatter-adds gradients (float32 / float64), both N-d generic. */
typedef struct pct_index_maps {
    int nsp;                    /* spatial (trailing) dims */
    int64_t isz[PCT_MAX_DIMS];  /* their input sizes */
    int64_t osz[PCT_MAX_DIMS];  /* their output sizes */
    int64_t *map[PCT_MAX_DIMS]; /* map[d][0 .. osz[d]) into one block owned by map[0] */
} pct_index_maps;

/* Allocates the maps (uninitialised) for the given sizes; -1 with MemoryError. */
int pct_index_maps_alloc(pct_index_maps *m, int nsp, const int64_t *isz, const int64_t *osz);
void pct_index_maps_free(pct_index_maps *m);
/* out (contiguous, planes x prod(osz)) from in (contiguous, planes x prod(isz)); `fill` holds
 * the fill value in out's dtype. nsp >= 1. Call without the GIL; -1 (no exception set) when
 * out of memory: the caller raises MemoryError once it holds the GIL again. */
int pct_index_gather(const pct_index_maps *m, int64_t planes, const char *in, char *out, int itemsize,
                     const void *fill);
/* gin (zeroed, planes x prod(isz), float32 or float64) += the gradient gout of every output
 * element that reads it. Same contract as pct_index_gather. */
int pct_index_scatter_add(const pct_index_maps *m, int64_t planes, const char *gout, char *gin, int dtype);

#endif
