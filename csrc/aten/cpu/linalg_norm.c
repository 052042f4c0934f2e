/* linalg_norm.c: linalg.vector_norm (ATen's LinearAlgebra.cpp), with its dtype and shape
 * checks: it reduces through linalg_reduce.c (real floating inputs without dtype= or out= take
 * reduce.c's faster norm). linalg.matrix_norm and linalg.norm are composites over it
 * (composite/linalg_norm.c). A complex input is reduced through its moduli (pct_complex_modulus).
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
    } else if (pct_dims_mask(dims, ndims, x->ndim, mask) < 0) {
        return NULL;
    }
    const int odt = has_dtype ? dtype : x->dtype;
    if (pct_out_check_dtype(out, odt) < 0) return NULL;
    pct_tensor *r = pct_la_reduce(x, mask, keepdim, odt, ord_kind(ord), ord);
    return (pct_tensor *)deliver(r, out);
}

/* ---- complex inputs: the norms of the moduli ---- */

pct_tensor *pct_complex_modulus(pct_tensor *x, int dtype, const char *api)
{
    pct_tensor *conv = NULL;
    if (dtype != PCT_NO_DTYPE) {
        if (!pct_dtype_is_complex(dtype)) {
            pct_error(PCT_ERR_RUNTIME, "%s: dtype should be complex for complex inputs, but got %s", api,
                      pct_dtype_cpp_name[dtype]);
            return NULL;
        }
        if (pct_promote_types(x->dtype, dtype) != dtype) {
            pct_error(PCT_ERR_RUNTIME, "%s: the dtype of the input (%s) should be convertible without narrowing to the "
                      "specified dtype (%s)", api, pct_dtype_cpp_name[x->dtype], pct_dtype_cpp_name[dtype]);
            return NULL;
        }
        if (dtype != x->dtype && !(x = conv = pct_to_dtype(x, dtype, false))) return NULL;
    }
    pct_call c2;
    memset(&c2, 0, sizeof c2);
    c2.op = &pct_ops[PCT_OP_abs];
    c2.op_index = PCT_OP_abs;
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    pct_tensor *in[1] = {x};
    pct_object *r = pct_pw_run(&c2, PCT_OP_abs, 1, in, &ctx);
    PCT_XDECREF(conv);
    return (pct_tensor *)r;
}

/* ---- kernels (ops_linalg.def) ---- */


/* linalg_vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) */
pct_object *pct_cpu_linalg_vector_norm(pct_call *c)
{
    PCT_ARGS(linalg_vector_norm);
    /* Real floating inputs take reduce.c's norm (vectorized, float accumulation in a cascade
     * as torch; the signatures share their argument positions): the double loops below cost
     * 7x torch on a (256, 256) gradient, which clip_grad_norm_ runs once per parameter. Empty
     * inputs, dtype= and out= stay here, for linalg's own error messages. */
    if (pct_dtype_is_floating(arg.input->dtype) && arg.input->numel > 0 && (arg.dtype == PCT_NO_DTYPE) && !c->out) return pct_cpu_norm(c);
    const pct_int_list *dim = &arg.dim;
    if (pct_dtype_is_complex(arg.input->dtype)) {
        pct_tensor *m = pct_complex_modulus(arg.input, arg.dtype, "linalg.vector_norm");
        if (!m) return NULL;
        pct_tensor *r = vector_norm_impl(m, &arg.ord, dim->none ? NULL : dim->v, dim->none ? 0 : dim->n, arg.keepdim,
                                         false, PCT_NO_DTYPE, c->out);
        PCT_DECREF(m);
        return (pct_object *)r;
    }
    return (pct_object *)vector_norm_impl(arg.input, &arg.ord, dim->none ? NULL : dim->v, dim->none ? 0 : dim->n, arg.keepdim,
                                        !(arg.dtype == PCT_NO_DTYPE), arg.dtype, c->out);
}

