/* blas_internal.h: what the linear-algebra kernel files share and the rest of the backend
 * does not see (that is blas.h): blas.c (GEMM and its direct users), vector_products.c,
 * linalg_norm.c (vector norms), and their helpers linalg_tensor_utils.c and linalg_reduce.c.
 * The products and norms composed of these ops (matmul, einsum, tensordot, kron, the matrix
 * norms) are composites in ../composite/ (Note [Composite ops], op.h).
 *
 * Small helpers are static inline here. The larger ones are functions named pct_la_* ("la":
 * these linear-algebra files) with hidden visibility (PCT_LA_INTERNAL): calls stay direct
 * within _C and its exported symbols stay those of blas.h.
 */
#ifndef PCT_BLAS_INTERNAL_H
#define PCT_BLAS_INTERNAL_H
#include "blas.h"
#include "../iter.h"
#include "../error.h"
#include "../out.h"
#include "pointwise.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define PCT_LA_INTERNAL __attribute__((visibility("hidden")))

/* OpenMP pragmas that vanish (without -Wunknown-pragmas noise) in builds without OpenMP */
#ifdef _OPENMP
#define PCT_OMP(x) _Pragma(#x)
#else
#define PCT_OMP(x)
#endif

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
/* the shape of a 0-d tensor (never NULL: memcpy of 0 bytes from NULL is UB) */
static const int64_t no_dims[1] = {0};
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static inline int num_threads(void)
{
#ifdef _OPENMP
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    return 1;
#endif
}

#define SHAPE(buf, t) pct_shape_str((buf), sizeof(buf), (t)->ndim, (t)->sizes)
#define SHAPE_OF(buf, nd, s) pct_shape_str((buf), sizeof(buf), (nd), (s))

/* ---- alpha / beta ---- */

/* alpha / beta as the kernels use them: torch converts the Scalar to the op's dtype
 * (integral dtypes truncate: beta=0.5 on int64 is 0). `zero` means "ignore C". */
typedef struct coef {
    double d;
    int64_t i;
    bool zero;
    double im; /* the imaginary part of a complex Scalar (complex dtypes only; 0 otherwise) */
} coef;

static inline int64_t trunc_to_dtype(int64_t v, int dtype)
{
    switch (dtype) {
    case PCT_BOOL: return v != 0;
    case PCT_UINT8: return (uint8_t)v;
    case PCT_INT8: return (int8_t)v;
    case PCT_INT16: return (int16_t)v;
    case PCT_INT32: return (int32_t)v;
    default: return v;
    }
}

static inline coef coef_from_double(double v, int dtype)
{
    coef c;
    c.d = v;
    c.i = isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0;
    c.i = trunc_to_dtype(c.i, dtype);
    c.zero = pct_dtype_is_floating(dtype) || pct_dtype_is_complex(dtype) ? v == 0.0 : c.i == 0;
    c.im = 0;
    return c;
}

static inline coef coef_from_scalar(const pct_scalar *s, int dtype)
{
    if (s->kind == PCT_SCALAR_FLOAT) return coef_from_double(s->d, dtype);
    if (s->kind == PCT_SCALAR_COMPLEX) {
        coef c = coef_from_double(s->d, dtype);
        c.im = pct_dtype_is_complex(dtype) ? s->im : 0;
        c.zero = c.zero && c.im == 0;
        return c;
    }
    coef c;
    c.d = (double)s->i;
    c.i = trunc_to_dtype(s->i, dtype);
    c.zero = pct_dtype_is_floating(dtype) || pct_dtype_is_complex(dtype) ? c.d == 0.0 : c.i == 0;
    c.im = 0;
    return c;
}

/* torch's "beta.toComplexDouble() == 0": the Scalar itself, before conversion */
static inline bool scalar_is_zero(const pct_scalar *s)
{
    if (s->kind == PCT_SCALAR_COMPLEX) return s->d == 0.0 && s->im == 0.0;
    return s->kind == PCT_SCALAR_FLOAT ? s->d == 0.0 : s->i == 0;
}

static const pct_scalar scalar_zero = {PCT_SCALAR_INT, 0, 0.0, 0, 0};
static const pct_scalar scalar_one = {PCT_SCALAR_INT, 1, 1.0, 0, 0};

/* ---- products (blas.c, vector_products.c) ---- */

/* C[batch..., m, n] = alpha * A @ B + beta * C over tensors read with explicit strides
 * (elements; batch strides 0 for broadcast operands). When C shares memory with an
 * input the product goes through a temporary. 0, or -1 with an exception. */
PCT_LA_INTERNAL int pct_la_run_gemm(pct_tensor *c, const int64_t *c_bs, int64_t crs, int64_t ccs,
                                    pct_tensor *a, const int64_t *a_bs, int64_t ars, int64_t acs,
                                    pct_tensor *b, const int64_t *b_bs, int64_t brs, int64_t bcs,
                                    int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k, coef alpha, coef beta);
/* pct_la_run_gemm on a device other than the CPU (blas_device.c, Note [Device GEMM] in gemm.h). */
PCT_LA_INTERNAL int pct_la_device_gemm(pct_tensor *c, const int64_t *c_bs, int64_t crs, int64_t ccs,
                                       pct_tensor *a, const int64_t *a_bs, int64_t ars, int64_t acs,
                                       pct_tensor *b, const int64_t *b_bs, int64_t brs, int64_t bcs,
                                       int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k, coef alpha,
                                       coef beta);
/* res (one element of dtype) = sum x[i] * y[i]; strides in elements. GIL-free. Complex dtypes: blas_complex.h. */
PCT_LA_INTERNAL void pct_la_dot_kernel(int dtype, int64_t n, const char *x, int64_t sx, const char *y, int64_t sy,
                                       char *res);
/* torch.dot (torch.vdot with conj_a: a's conjugate, which matters for complex dtypes) and torch.mv (out may be NULL) */
PCT_LA_INTERNAL pct_object *pct_la_dot(pct_tensor *a, pct_tensor *b, pct_tensor *out, bool conj_a);
PCT_LA_INTERNAL pct_object *pct_la_mv(pct_tensor *mat, pct_tensor *vec, pct_tensor *out);

/* ---- tensor helpers (linalg_tensor_utils.c) ---- */

static inline bool shares_storage(const pct_tensor *a, const pct_tensor *b) { return a->storage == b->storage; }

/* NotImplementedError "\"<name>\" not implemented for 'Bool'"; returns NULL */
PCT_LA_INTERNAL pct_object *pct_la_not_implemented_bool(const char *name);
/* The tensor to write a result of this shape into: out= (resized; new reference) or a
 * new contiguous tensor. */
PCT_LA_INTERNAL pct_tensor *pct_la_result_tensor(pct_tensor *out, int nd, const int64_t *sizes, int dtype);
/* The same, a new tensor being made on like's device (like NULL: the CPU). */
PCT_LA_INTERNAL pct_tensor *pct_la_result_on(pct_tensor *out, int nd, const int64_t *sizes, int dtype,
                                             const pct_tensor *like);
PCT_LA_INTERNAL int pct_la_fill_zero(pct_tensor *t);
/* a * b through the elementwise loop machine (promotion, broadcasting, out= checks) */
PCT_LA_INTERNAL pct_object *pct_la_mul(pct_tensor *out, bool inplace, pct_tensor *a, pct_tensor *b);
/* t *= beta in place (torch: result.mul_(beta)) */
PCT_LA_INTERNAL int pct_la_scale_inplace(pct_tensor *t, const pct_scalar *beta);
PCT_LA_INTERNAL pct_tensor *pct_la_view_with(pct_tensor *t, int nd, const int64_t *sizes, const int64_t *strides);
/* torch's expand_size(): t broadcast to `sizes`, with expand()'s errors. */
PCT_LA_INTERNAL pct_tensor *pct_la_expand_to(pct_tensor *t, int nd, const int64_t *sizes);

/* ---- reductions: sums and norms over a set of dims (linalg_reduce.c) ---- */

enum { RED_SUM, RED_L0, RED_L1, RED_L2, RED_LP, RED_MAX_ABS, RED_MIN_ABS, RED_MAX, RED_MIN };

/* Reduces `in` over mask into a new contiguous tensor of out_dtype (kind: RED_*; p: the
 * order of RED_LP). */
PCT_LA_INTERNAL pct_tensor *pct_la_reduce(pct_tensor *in, const bool *mask, bool keepdim, int out_dtype, int kind,
                                          double p);
/* Parses a dim list (wrapping negatives, rejecting repeats) into a mask. */

#endif
