/* linalg_norm.c: linalg.matrix_norm, linalg.norm and torch.norm's string orders, composites over linalg.vector_norm
 * (a kernel), amax / amin and linalg.svdvals (ATen's LinearAlgebra.cpp and torch.functional.norm): matrix norms are
 * max / min over one dim of the 1-norms over the other (1, inf and their negatives), the Frobenius norm a vector
 * 2-norm over both dims, and 2, -2 and 'nuc' the largest, the smallest and the sum of the singular values. Implicit
 * autograd: grad_fn is torch's (AmaxBackward0, LinalgVectorNormBackward0, SumBackward1...). */
#include "composite.h"
#include <math.h>
#include <stdio.h>

/* a Scalar as torch prints it in messages ("2", "inf", "-1.5") */
static const char *scalar_str(char *buf, size_t n, const pct_scalar *s)
{
    if (s->kind != PCT_SCALAR_FLOAT) snprintf(buf, n, "%lld", (long long)s->i);
    else snprintf(buf, n, "%g", s->d);
    return buf;
}

/* torch's _linalg_matrix_norm_checks: A, dims (wrapped into d[2]) and dtype= (-1: none) */
static int matrix_norm_checks(const pct_tensor *A, const int64_t *dims, int ndims, int dtype, bool low_precision_ok,
                              int64_t *d)
{
    char db[PCT_SHAPE_BUF];
    if (A->ndim < 2) {
        pct_error_str(PCT_ERR_RUNTIME, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
        return -1;
    }
    if (!pct_dtype_is_floating(A->dtype) && !pct_dtype_is_complex(A->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got %s",
                  pct_dtype_cpp_name[A->dtype]);
        return -1;
    }
    if (!low_precision_ok && pct_dtype_is_reduced_float(A->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: Low precision dtypes not supported. Got %s",
                  pct_dtype_cpp_name[A->dtype]);
        return -1;
    }
    if (ndims != 2) { /* torch prints the dims space-separated */
        size_t at = 0;
        db[0] = 0;
        for (int i = 0; i < ndims && at < sizeof db; i++)
            at += (size_t)snprintf(db + at, sizeof db - at, "%s%lld", i ? " " : "", (long long)dims[i]);
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", db);
        return -1;
    }
    const int d0 = pct_wrap_dim(dims[0], A->ndim), d1 = d0 < 0 ? -1 : pct_wrap_dim(dims[1], A->ndim);
    if (d0 < 0 || d1 < 0) return -1;
    if (d0 == d1) {
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: dims must be different. Got (%d, %d)", d0, d1);
        return -1;
    }
    if (dtype >= 0) {
        if (!pct_dtype_is_floating(dtype) && !pct_dtype_is_complex(dtype)) {
            pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: dtype should be floating point or complex, but got %s",
                      pct_dtype_cpp_name[dtype]);
            return -1;
        }
        if (pct_promote_types(A->dtype, dtype) != dtype) {
            pct_error(PCT_ERR_RUNTIME,
                      "linalg.matrix_norm: the dtype of the input (%s) should be convertible without narrowing to the "
                      "specified dtype (%s)", pct_dtype_cpp_name[A->dtype], pct_dtype_cpp_name[dtype]);
            return -1;
        }
    }
    d[0] = d0;
    d[1] = d1;
    return 0;
}

/* amax (max) or amin over dim of s. Over an empty dim torch's amin refuses, as torch.amax does, but its matrix norms
 * give zeros without history there (torch.linalg.matrix_norm(torch.zeros(3, 0), 1) is 0) */
static pct_tensor *max_min(pct_tensor *s, int64_t dim, bool keepdim, bool max)
{
    const int d = pct_wrap_dim(dim, s->ndim);
    if (d < 0) return NULL;
    if (!max && s->sizes[d] == 0) { /* torch names the dim as given (pyctorch's amin wraps it first) */
        pct_error(PCT_ERR_INDEX, "amin(): Expected reduction dim %lld to have non-zero size.", (long long)dim);
        return NULL;
    }
    if (max && s->sizes[d] == 0) {
        int64_t shape[PCT_MAX_DIMS];
        int n = 0;
        for (int i = 0; i < s->ndim; i++)
            if (i != d) shape[n++] = s->sizes[i];
            else if (keepdim) shape[n++] = 1;
        return pct_comp_shape(PCT_OP_new_zeros, s, n, shape);
    }
    return pct_comp_reduce_dim(max ? PCT_OP_amax : PCT_OP_amin, s, dim, keepdim);
}

/* The norms from the singular values over dims d (which: 2 the largest, -2 the smallest, 0 their sum): A with d moved
 * to the end (torch's create_dim_backshift_permutation), svdvals, the reduction over the last dim, and with keepdim
 * the reduced dims put back in place. */
static pct_tensor *svd_norm(pct_tensor *A, const int64_t *d, int which, bool keepdim, int dtype)
{
    int64_t perm[PCT_MAX_DIMS], inverse[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < A->ndim; i++)
        if (i != d[0] && i != d[1]) perm[n++] = i;
    perm[n++] = d[0];
    perm[n++] = d[1];
    for (int i = 0; i < n; i++) inverse[perm[i]] = i;
    pct_tensor *a = dtype >= 0 ? pct_comp_to_dtype(A, dtype) : (PCT_INCREF(A), A);
    pct_tensor *p = a ? pct_comp_shape(PCT_OP_permute, a, n, perm) : NULL;
    pct_tensor *s = p ? pct_comp_call1(PCT_OP_linalg_svdvals, p) : NULL;
    const int64_t last = -1;
    pct_tensor *r = !s ? NULL
                  : which == 0 ? pct_comp_sum(s, 1, &last, keepdim, -1)
                  : max_min(s, -1, keepdim, which > 0);
    PCT_XDECREF(a); PCT_XDECREF(p); PCT_XDECREF(s);
    if (r && keepdim) {
        pct_tensor *u = pct_comp_unsqueeze(r, -1);
        PCT_SETREF(r, u ? pct_comp_shape(PCT_OP_permute, u, n, inverse) : NULL);
        PCT_XDECREF(u);
    }
    return r;
}

/* linalg.matrix_norm; ord_str "fro"/"nuc", or NULL for the numeric order ord_s */
static pct_tensor *matrix_norm(pct_tensor *A, const pct_scalar *ord_s, const char *ord_str, const int64_t *dims,
                               int ndims, bool keepdim, int dtype)
{
    char ob[64];
    double ord = 0, abs_ord = 0;
    if (!ord_str) {
        ord = ord_s->d;
        abs_ord = fabs(ord);
        if (!(abs_ord == 2.0 || abs_ord == 1.0 || abs_ord == INFINITY)) {
            pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: Order %s not supported.", scalar_str(ob, sizeof ob, ord_s));
            return NULL;
        }
    } else if (strcmp(ord_str, "fro") != 0 && strcmp(ord_str, "nuc") != 0) {
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: Order %s not supported.", ord_str);
        return NULL;
    }
    const bool low_precision_ok = ord_str ? strcmp(ord_str, "nuc") != 0 : abs_ord != 2.0;
    int64_t d[2];
    if (matrix_norm_checks(A, dims, ndims, dtype, low_precision_ok, d) < 0) return NULL;
    if (ord_str && strcmp(ord_str, "fro") == 0) {
        const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0, 0};
        return pct_comp_vector_norm(A, &two, 2, d, keepdim, dtype, NULL);
    }
    if (ord_str) return svd_norm(A, d, 0, keepdim, dtype);
    if (abs_ord == 2.0) return svd_norm(A, d, ord > 0 ? 2 : -2, keepdim, dtype);
    /* 1, -1, inf, -inf: max / min over one dim of the 1-norms over the other (inf: the transposed matrix's 1-norm) */
    if (abs_ord == INFINITY) { const int64_t t = d[0]; d[0] = d[1]; d[1] = t; }
    if (!keepdim && d[0] < d[1]) d[1]--; /* the first reduction removed a dim in front of it */
    const pct_scalar one = {PCT_SCALAR_INT, 1, 1.0, 0, 0};
    pct_tensor *s = pct_comp_vector_norm(A, &one, 1, &d[0], keepdim, dtype, NULL);
    pct_tensor *r = s ? max_min(s, d[1], keepdim, ord > 0) : NULL;
    PCT_XDECREF(s);
    return r;
}

/* out= of the norms (torch's linalg_*_norm_out: the result's dtype exactly, resized, copied) */
static pct_object *deliver(pct_tensor *r, pct_tensor *out, const char *api)
{
    if (!r || !out) return (pct_object *)r;
    int rc = -1;
    if (r->dtype != out->dtype)
        pct_error(PCT_ERR_RUNTIME, "%s expected out tensor dtype %s but got: %s", api, pct_dtype_cpp_name[r->dtype],
                  pct_dtype_cpp_name[out->dtype]);
    else if (pct_out_resize(out, r->ndim, r->sizes) == 0)
        rc = pct_comp_copy_(out, r);
    PCT_DECREF(r);
    if (rc < 0) return NULL;
    PCT_INCREF(out);
    return (pct_object *)out;
}

/* linalg.norm: ord_s NULL for None; ord_str for the string overload; dims NULL for None */
static pct_object *linalg_norm(pct_tensor *X, const pct_scalar *ord_s, const char *ord_str, const int64_t *dims,
                               int ndims, bool keepdim, int dtype, pct_tensor *out)
{
    char db[PCT_SHAPE_BUF];
    if (dims) {
        if (ndims != 1 && ndims != 2) {
            pct_error(PCT_ERR_RUNTIME, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s",
                      pct_shape_str(db, sizeof db, ndims, dims));
            return NULL;
        }
    } else if ((ord_s || ord_str) && X->ndim != 1 && X->ndim != 2) {
        pct_error(PCT_ERR_RUNTIME, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.",
                  X->ndim);
        return NULL;
    }
    const int64_t d01[2] = {0, 1};
    const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0, 0};
    pct_tensor *r;
    if (ord_str || (ord_s && ((dims && ndims == 2) || (!dims && X->ndim == 2))))
        r = matrix_norm(X, ord_s, ord_str, dims ? dims : d01, dims ? ndims : 2, keepdim, dtype);
    else /* ord=None is the 2-norm (or Frobenius: the same) */
        r = pct_comp_vector_norm(X, ord_s ? ord_s : &two, ndims, dims, keepdim, dtype, NULL);
    return deliver(r, out, "linalg.norm");
}

/* ---- composites (ops_linalg.def, ops_reduce.def) ---- */


/* linalg_matrix_norm(input, ord, dim=[-2, -1], keepdim=False, *, dtype=None, out=None) and its str overload */
pct_object *pct_composite_linalg_matrix_norm(pct_call *c)
{
    PCT_ARGS(linalg_matrix_norm);
    const pct_int_list *dim = &arg.dim;
    pct_tensor *r = matrix_norm(arg.input, &arg.ord, NULL, dim->v, dim->n, arg.keepdim, arg.dtype);
    return deliver(r, c->out, "linalg.matrix_norm");
}

pct_object *pct_composite_linalg_matrix_norm_str(pct_call *c)
{
    PCT_ARGS(linalg_matrix_norm_str);
    const pct_int_list *dim = &arg.dim;
    const char *ord = arg.ord ? arg.ord : "fro";
    pct_tensor *r = matrix_norm(arg.input, NULL, ord, dim->v, dim->n, arg.keepdim, arg.dtype);
    return deliver(r, c->out, "linalg.matrix_norm");
}

/* linalg_norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None) and its str overload */
pct_object *pct_composite_linalg_norm(pct_call *c)
{
    PCT_ARGS(linalg_norm);
    const pct_int_list *dim = &arg.dim;
    return linalg_norm(arg.input, (arg.ord == NULL) ? NULL : arg.ord, NULL, dim->none ? NULL : dim->v,
                       dim->none ? 0 : dim->n, arg.keepdim, arg.dtype, c->out);
}

pct_object *pct_composite_linalg_norm_str(pct_call *c)
{
    PCT_ARGS(linalg_norm_str);
    const pct_int_list *dim = &arg.dim;
    return linalg_norm(arg.input, NULL, arg.ord, dim->none ? NULL : dim->v, dim->none ? 0 : dim->n, arg.keepdim,
                       arg.dtype, c->out);
}

/* norm(input, str p, dim=None, keepdim=False, *, dtype=None, out=None), as torch.functional.norm: 'fro' over at most
 * two dims is linalg.vector_norm(input, 2, ...); everything else (the nuclear norm, 'fro' over more dims: an error)
 * linalg.matrix_norm(input, p, ...) over the given dims, or all of them. */
pct_object *pct_composite_norm_str(pct_call *c)
{
    PCT_ARGS(norm_str);
    pct_tensor *self = arg.input;
    const pct_int_list *dim = &arg.dim;
    const bool fro = strcmp(arg.p, "fro") == 0 && (dim->none || dim->n <= 2);
    if (fro) {
        const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0, 0};
        return (pct_object *)pct_comp_vector_norm(self, &two, dim->n, dim->none ? NULL : dim->v, arg.keepdim, arg.dtype,
                                                  c->out);
    }
    int64_t all[PCT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) all[d] = d;
    return (pct_object *)pct_comp_matrix_norm_str(self, arg.p, dim->none ? self->ndim : dim->n,
                                                  dim->none ? all : dim->v, arg.keepdim, arg.dtype, c->out);
}
