/* norm_rows.h: contiguous-run kernels shared by the normalization layers (norm.c, batch_norm.c),
 * one set per floating dtype, picked by pct_norm_rows_for(dtype). Sums accumulate in double
 * (so float32 statistics carry no rounding drift over long rows); elementwise results are
 * computed in the dtype's compute type (float for float16/bfloat16/float32, double for float64).
 * Each function handles one contiguous run of n elements; the callers split work across threads. */
#ifndef PCT_NORM_ROWS_H
#define PCT_NORM_ROWS_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_norm_rows {
    /* sum of x */
    double (*sum)(const void *x, int64_t n);
    /* sum of (x - mu)^2 */
    double (*sqdev)(const void *x, int64_t n, double mu);
    /* *sgx = sum of g * x, *sg = sum of g */
    void (*dot_sum)(const void *g, const void *x, int64_t n, double *sgx, double *sg);
    /* y = x * a + b */
    void (*scale_shift)(const void *x, void *y, int64_t n, double a, double b);
    /* out = g * k1 + x * k2 + k3 */
    void (*lin2)(const void *g, const void *x, void *out, int64_t n, double k1, double k2, double k3);
} pct_norm_rows;

/* The row kernels of a floating dtype, or NULL for any other dtype. */
const pct_norm_rows *pct_norm_rows_for(int dtype);

/* The number of threads a loop over `work` elements in `units` independent pieces should use
 * (1 below the parallel grain, inside a parallel region, or without OpenMP). */
int pct_norm_threads(int64_t work, int64_t units);

/* Shared argument helpers of the normalization kernels (norm.c). */
struct pct_tensor;
/* NotImplementedError "\"kernel\" not implemented for 'Long'" unless t is floating; -1 with exception. */
int pct_norm_check_float_input(const struct pct_tensor *t, const char *kernel);
/* torch's CPU rule: a parameter shares the input's dtype, or is float32 for a float16/bfloat16
 * input (then *mixed is set); -1 with torch's "mixed dtype (CPU)" error otherwise. NULL p is fine. */
int pct_norm_check_param_dtype(const struct pct_tensor *in, const struct pct_tensor *p, bool *mixed);
/* *out = t as a contiguous tensor of dtype d (a new reference; t itself when it already is);
 * NULL t gives NULL. -1 with exception. */
int pct_norm_as_contig(struct pct_tensor *t, int d, struct pct_tensor **out);
/* A tuple of n tensors (NULL entries become None); steals the references, also on failure. */
pct_object *pct_norm_tuple_steal(int n, struct pct_tensor **ts);

#endif
