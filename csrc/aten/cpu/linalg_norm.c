/* linalg_norm.c: linalg.vector_norm, linalg.matrix_norm and linalg.norm (ATen's
 * LinearAlgebra.cpp), with their dtype and shape checks. Vector norms reduce through
 * linalg_reduce.c (real floating inputs without dtype= or out= take reduce.c's faster
 * norm); matrix norms are vector norms over rows or columns, or the singular values
 * (pct_svd_norm, linalg_svd.c) for 2, -2 and 'nuc'.
 */
#include "blas_internal.h"

/* a Scalar as torch prints it in messages ("2", "inf", "-1.5") */
static const char *scalar_str(char *buf, size_t n, const pct_scalar *s)
{
    if (s->kind != PCT_SCALAR_FLOAT) snprintf(buf, n, "%lld", (long long)s->i);
    else snprintf(buf, n, "%g", s->d);
    return buf;
}

static int check_norm_dtype(bool has_dtype, int dtype, int self_dtype, const char *name)
{
    if (!has_dtype) return 0;
    if (!pct_dtype_is_floating(dtype)) {
        pct_error(PCT_ERR_RUNTIME, "%s: dtype should be floating point or complex, but got %s", name, pct_dtype_cpp_name[dtype]);
        return -1;
    }
    if (pct_promote_types(self_dtype, dtype) != dtype) {
        pct_error(PCT_ERR_RUNTIME,
                     "%s: the dtype of the input (%s) should be convertible without narrowing to the specified dtype (%s)",
                     name, pct_dtype_cpp_name[self_dtype], pct_dtype_cpp_name[dtype]);
        return -1;
    }
    return 0;
}

static int check_floating(const pct_tensor *t, const char *name)
{
    if (!pct_dtype_is_floating(t->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "%s: Expected a floating point or complex tensor as input. Got %s", name,
                     pct_dtype_cpp_name[t->dtype]);
        return -1;
    }
    return 0;
}

static int ord_kind(double ord)
{
    if (ord == 0.0) return RED_L0;
    if (ord == 1.0) return RED_L1;
    if (ord == 2.0) return RED_L2;
    if (ord == INFINITY) return RED_MAX_ABS;
    if (ord == -INFINITY) return RED_MIN_ABS;
    return RED_LP;
}

/* Copies a computed result into out= (torch's resize_output + copy_), or returns it. */
static pct_object *deliver(pct_tensor *r, pct_tensor *out)
{
    if (!r || !out) return (pct_object *)r;
    if (pct_out_resize(out, r->ndim, r->sizes) < 0 || pct_copy_(out, r) < 0) {
        PCT_DECREF(r);
        return NULL;
    }
    PCT_DECREF(r);
    PCT_INCREF(out);
    return (pct_object *)out;
}

/* dims: NULL for None (all dims); n may be 0 (also all dims) */
static pct_tensor *vector_norm_impl(pct_tensor *x, const pct_scalar *ord_s, const int64_t *dims, int ndims, bool keepdim,
                                    bool has_dtype, int dtype, pct_tensor *out)
{
    char ob[64];
    if (check_floating(x, "linalg.vector_norm") < 0) return NULL;
    const double ord = ord_s->d;
    if (x->numel == 0 && (ord < 0.0 || ord == INFINITY)) {
        if (!dims || ndims == 0) {
            pct_error(PCT_ERR_RUNTIME,
                         "linalg.vector_norm cannot compute the %s norm on an empty tensor because the operation does not "
                         "have an identity", scalar_str(ob, sizeof ob, ord_s));
            return NULL;
        }
        for (int i = 0; i < ndims; i++) {
            int d = pct_wrap_dim(dims[i], x->ndim);
            if (d < 0) return NULL;
            if ((x->ndim ? x->sizes[d] : 1) == 0) {
                pct_error(PCT_ERR_RUNTIME,
                             "linalg.vector_norm cannot compute the %s norm on the dimension %lldbecause this dimension "
                             "is empty and the operation does not have an identity",
                             scalar_str(ob, sizeof ob, ord_s), (long long)dims[i]);
                return NULL;
            }
        }
    }
    if (check_norm_dtype(has_dtype, dtype, x->dtype, "linalg.vector_norm") < 0) return NULL;
    bool mask[PCT_MAX_DIMS + 1];
    if (!dims || ndims == 0) {
        for (int d = 0; d < x->ndim; d++) mask[d] = true;
    } else if (pct_la_dims_to_mask(dims, ndims, x->ndim, mask) < 0) {
        return NULL;
    }
    const int odt = has_dtype ? dtype : x->dtype;
    if (pct_out_check_dtype(out, odt) < 0) return NULL;
    pct_tensor *r = pct_la_reduce(x, mask, keepdim, odt, ord_kind(ord), ord);
    return (pct_tensor *)deliver(r, out);
}

/* ord_str: "fro"/"nuc" or NULL (then ord_s is the numeric order) */
static pct_tensor *matrix_norm_impl(pct_tensor *A, const pct_scalar *ord_s, const char *ord_str, const int64_t *dims_in,
                                    int ndims, bool keepdim, bool has_dtype, int dtype)
{
    char ob[64], db[PCT_SHAPE_BUF];
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
    if (A->ndim < 2) {
        pct_error_str(PCT_ERR_RUNTIME, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
        return NULL;
    }
    if (check_floating(A, "linalg.matrix_norm") < 0) return NULL;
    if (!low_precision_ok && pct_dtype_is_reduced_float(A->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: Low precision dtypes not supported. Got %s", pct_dtype_cpp_name[A->dtype]);
        return NULL;
    }
    if (ndims != 2) {
        /* torch prints the dims space-separated */
        size_t at = 0;
        db[0] = 0;
        for (int i = 0; i < ndims && at < sizeof db; i++)
            at += (size_t)snprintf(db + at, sizeof db - at, "%s%lld", i ? " " : "", (long long)dims_in[i]);
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", db);
        return NULL;
    }
    int d0 = pct_wrap_dim(dims_in[0], A->ndim), d1 = d0 < 0 ? -1 : pct_wrap_dim(dims_in[1], A->ndim);
    if (d0 < 0 || d1 < 0) return NULL;
    if (d0 == d1) {
        pct_error(PCT_ERR_RUNTIME, "linalg.matrix_norm: dims must be different. Got (%d, %d)", d0, d1);
        return NULL;
    }
    if (check_norm_dtype(has_dtype, dtype, A->dtype, "linalg.matrix_norm") < 0) return NULL;
    const int odt = has_dtype ? dtype : A->dtype;
    if (ord_str && strcmp(ord_str, "fro") == 0) {
        const int64_t dd[2] = {d0, d1};
        const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0};
        return vector_norm_impl(A, &two, dd, 2, keepdim, has_dtype, dtype, NULL);
    }
    if (ord_str) return pct_svd_norm(A, d0, d1, 0, keepdim, odt);
    if (abs_ord == 2.0) return pct_svd_norm(A, d0, d1, ord > 0 ? 2 : -2, keepdim, odt);
    /* 1, -1, inf, -inf: max / min over one dim of the abs-sums over the other */
    if (abs_ord == INFINITY) { int t = d0; d0 = d1; d1 = t; }
    if (!keepdim && d0 < d1) d1--;
    const int64_t dd[1] = {d0};
    const pct_scalar one = {PCT_SCALAR_INT, 1, 1.0, 0};
    pct_tensor *s = vector_norm_impl(A, &one, dd, 1, keepdim, has_dtype, dtype, NULL);
    if (!s) return NULL;
    if (ord < 0 && s->sizes[d1] == 0) { /* torch's amin rejects an empty dim (amax gives 0) */
        PCT_DECREF(s);
        pct_error(PCT_ERR_INDEX, "amin(): Expected reduction dim %d to have non-zero size.", d1);
        return NULL;
    }
    bool mask[PCT_MAX_DIMS] = {false};
    mask[d1] = true;
    pct_tensor *r = pct_la_reduce(s, mask, keepdim, s->dtype, ord > 0 ? RED_MAX : RED_MIN, 0.0);
    PCT_DECREF(s);
    return r;
}

static pct_object *deliver_checked(pct_tensor *r, pct_tensor *out, const char *api)
{
    if (r && out && r->dtype != out->dtype) {
        pct_error(PCT_ERR_RUNTIME, "%s expected out tensor dtype %s but got: %s", api, pct_dtype_cpp_name[r->dtype],
                     pct_dtype_cpp_name[out->dtype]);
        PCT_DECREF(r);
        return NULL;
    }
    return deliver(r, out);
}

/* linalg.norm: ord_s NULL for None; ord_str for the string overload; dims NULL for None */
static pct_object *linalg_norm_impl(pct_tensor *X, const pct_scalar *ord_s, const char *ord_str, const int64_t *dims,
                                  int ndims, bool keepdim, bool has_dtype, int dtype, pct_tensor *out)
{
    char db[PCT_SHAPE_BUF];
    if (dims) {
        if (ndims != 1 && ndims != 2) {
            pct_error(PCT_ERR_RUNTIME, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s",
                         SHAPE_OF(db, ndims, dims));
            return NULL;
        }
    } else if ((ord_s || ord_str) && X->ndim != 1 && X->ndim != 2) {
        pct_error(PCT_ERR_RUNTIME, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.",
                     X->ndim);
        return NULL;
    }
    const int64_t d01[2] = {0, 1};
    pct_tensor *r;
    if (ord_str || (ord_s && ((dims && ndims == 2) || (!dims && X->ndim == 2)))) {
        r = matrix_norm_impl(X, ord_s, ord_str, dims ? dims : d01, dims ? ndims : 2, keepdim, has_dtype, dtype);
    } else {
        const pct_scalar two = {PCT_SCALAR_INT, 2, 2.0, 0};
        r = vector_norm_impl(X, ord_s ? ord_s : &two, dims, ndims, keepdim, has_dtype, dtype, NULL);
    }
    return deliver_checked(r, out, "linalg.norm");
}

/* ---- kernels (ops_linalg.def) ---- */

#define T(i) (c->v[i].t)
#define OUT (c->inplace ? NULL : c->out)

/* linalg_vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) */
pct_object *pct_cpu_linalg_vector_norm(pct_call *c)
{
    /* Real floating inputs take reduce.c's norm (vectorized, float accumulation in a cascade
     * as torch; the signatures share their argument positions): the double loops below cost
     * 7x torch on a (256, 256) gradient, which clip_grad_norm_ runs once per parameter. Empty
     * inputs, dtype= and out= stay here, for linalg's own error messages. */
    if (pct_dtype_is_floating(T(0)->dtype) && T(0)->numel > 0 && c->v[4].none && !c->out) return pct_cpu_norm(c);
    const pct_value *dim = &c->v[2];
    return (pct_object *)vector_norm_impl(T(0), &c->v[1].s, dim->none ? NULL : dim->list, dim->none ? 0 : dim->n, c->v[3].b,
                                        !c->v[4].none, c->v[4].dtype, c->out);
}

/* linalg_matrix_norm(input, ord, dim=[-2, -1], keepdim=False, *, dtype=None, out=None) */
static pct_object *matrix_norm_entry(pct_call *c, const char *ord_str)
{
    const pct_value *dim = &c->v[2];
    pct_tensor *r = matrix_norm_impl(T(0), &c->v[1].s, ord_str, dim->list, dim->n, c->v[3].b, !c->v[4].none, c->v[4].dtype);
    return deliver_checked(r, c->out, "linalg.matrix_norm");
}

pct_object *pct_linalg_matrix_norm_str(pct_tensor *A, const char *ord_str, const int64_t *dims, int ndims, bool keepdim,
                                     bool has_dtype, int dtype, pct_tensor *out)
{
    pct_tensor *r = matrix_norm_impl(A, NULL, ord_str, dims, ndims, keepdim, has_dtype, dtype);
    return deliver_checked(r, out, "linalg.matrix_norm");
}

pct_object *pct_cpu_linalg_matrix_norm(pct_call *c) { return matrix_norm_entry(c, NULL); }

pct_object *pct_cpu_linalg_matrix_norm_str(pct_call *c)
{
    const char *ord = c->v[1].obj ? c->v[1].str : "fro";
    return matrix_norm_entry(c, ord);
}

/* linalg_norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None) */
pct_object *pct_cpu_linalg_norm(pct_call *c)
{
    const pct_value *dim = &c->v[2];
    return linalg_norm_impl(T(0), c->v[1].none ? NULL : &c->v[1].s, NULL, dim->none ? NULL : dim->list,
                            dim->none ? 0 : dim->n, c->v[3].b, !c->v[4].none, c->v[4].dtype, c->out);
}

pct_object *pct_cpu_linalg_norm_str(pct_call *c)
{
    const pct_value *dim = &c->v[2];
    const char *ord = c->v[1].str;
    return linalg_norm_impl(T(0), NULL, ord, dim->none ? NULL : dim->list, dim->none ? 0 : dim->n, c->v[3].b,
                            !c->v[4].none, c->v[4].dtype, c->out);
}

#undef T
#undef OUT
