/* vector_products.c: the products of ops_linalg.def with a vector operand or a vector
 * result: dot / vdot, mv / addmv (a GEMM with n == 1, so OpenBLAS's gemv), outer (a
 * broadcast multiply) and trace. Checks and messages follow ATen's LinearAlgebra.cpp.
 */
#include "blas_internal.h"
#include "blas_complex.h"

/* ---- dot / vdot ---- */

pct_object *pct_la_dot(pct_tensor *a, pct_tensor *b, pct_tensor *out, bool conj_a)
{
    if (out) {
        if (pct_out_resize(out, 0, no_dims) < 0) return NULL;
        if (out->dtype != a->dtype) {
            pct_error(PCT_ERR_RUNTIME, "result dtype %s does not match input dtype %s", pct_dtype_cpp_name[out->dtype],
                         pct_dtype_cpp_name[a->dtype]);
            return NULL;
        }
    }
    if (a->ndim != 1 || b->ndim != 1) {
        pct_error(PCT_ERR_RUNTIME, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
        return NULL;
    }
    if (a->dtype != b->dtype) {
        pct_error(PCT_ERR_RUNTIME, "dot : expected both vectors to have same dtype, but found %s and %s",
                     pct_dtype_cpp_name[a->dtype], pct_dtype_cpp_name[b->dtype]);
        return NULL;
    }
    if (a->numel != b->numel) {
        pct_error(PCT_ERR_RUNTIME,
                     "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                     "elements, but got %lld and %lld elements respectively",
                     (long long)a->numel, (long long)b->numel, (long long)a->numel, (long long)b->numel);
        return NULL;
    }
    if (a->dtype == PCT_BOOL) return pct_la_not_implemented_bool("dot");
    pct_tensor *r = out ? (PCT_INCREF(out), out) : pct_tensor_empty(0, no_dims, a->dtype, PCT_CPU, -1);
    if (!r) return NULL;
    char res[16];
    int64_t n = a->numel;
    const char *x = pct_tensor_data(a), *y = pct_tensor_data(b);
    int64_t sx = a->strides[0], sy = b->strides[0];
    const bool cplx = pct_dtype_is_complex(a->dtype);
    if (n >= 65536) {
        PCT_NOGIL_BEGIN
        if (cplx) pct_complex_dot(a->dtype, n, x, sx, y, sy, conj_a, res);
        else pct_la_dot_kernel(a->dtype, n, x, sx, y, sy, res);
        PCT_NOGIL_END
    } else if (cplx) {
        pct_complex_dot(a->dtype, n, x, sx, y, sy, conj_a, res);
    } else {
        pct_la_dot_kernel(a->dtype, n, x, sx, y, sy, res);
    }
    memcpy(pct_tensor_data(r), res, (size_t)pct_dtype_itemsize[a->dtype]);
    pct_tensor_bump_version(r);
    return (pct_object *)r;
}

/* ---- addmv / mv ---- */

/* torch's addmv: result = beta * self + alpha * mat @ vec. `result` is the out= or
 * in-place target (NULL: allocate); self_is_result when they are the same tensor. */
static pct_object *addmv_op(pct_tensor *self, pct_tensor *mat, pct_tensor *vec, const pct_scalar *beta_s,
                          const pct_scalar *alpha_s, pct_tensor *result_in, bool inplace)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (!(mat->ndim == 2 && vec->ndim == 1 && self->ndim <= 1)) {
        pct_error(PCT_ERR_RUNTIME, "vector + matrix @ vector expected, got %d, %d, %d", self->ndim, mat->ndim,
                     vec->ndim);
        return NULL;
    }
    const int64_t m = mat->sizes[0], k = mat->sizes[1];
    if (!(k == vec->sizes[0] && (m == self->numel || self->numel == 1))) {
        if (self->ndim == 0) { /* torch's message reads self.size(0), which a 0-d self does not have */
            pct_error_str(PCT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
            return NULL;
        }
        pct_error(PCT_ERR_RUNTIME, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                     (long long)self->sizes[0], (long long)m, (long long)k, (long long)vec->sizes[0]);
        return NULL;
    }
    if (!(self->dtype == mat->dtype && mat->dtype == vec->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                     pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[mat->dtype], pct_dtype_cpp_name[vec->dtype]);
        return NULL;
    }
    if (inplace) {
        if (!(self->ndim == 1 && self->sizes[0] == m)) {
            int64_t os[1] = {m};
            pct_error(PCT_ERR_RUNTIME, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                         SHAPE(b1, self), SHAPE_OF(b2, 1, os));
            return NULL;
        }
    } else if (pct_out_check_dtype(result_in, vec->dtype) < 0) {
        return NULL;
    }
    const int dtype = vec->dtype;
    const coef beta = coef_from_scalar(beta_s, dtype), alpha = coef_from_scalar(alpha_s, dtype);
    const bool beta_scalar_zero = scalar_is_zero(beta_s);
    const int64_t msz[1] = {m};
    pct_tensor *self_ = NULL, *result = NULL;
    /* self as seen before the out= resize (self may be the out tensor itself) */
    if (!(self_ = pct_la_expand_to(self, 1, msz))) return NULL;
    if (inplace) { PCT_INCREF(self); result = self; }
    else if (!(result = pct_la_result_tensor(result_in, 1, msz, dtype))) goto fail;
    if (self == result && self_ != self) {
        /* out= was also the input: re-expand after its resize */
        PCT_DECREF(self_);
        if (!(self_ = pct_la_expand_to(self, 1, msz))) goto fail;
    }
    if (mat->numel == 0) {
        if (beta_scalar_zero) {
            PCT_TRY_INT(pct_la_fill_zero(result));
        } else {
            if (self_ != result) PCT_TRY_INT(pct_copy_(result, self_));
            PCT_TRY_INT(pct_la_scale_inplace(result, beta_s));
        }
    } else {
        if (!beta_scalar_zero && self_ != result && self != result) PCT_TRY_INT(pct_copy_(result, self_));
        if (result->numel != 0) {
            if (dtype == PCT_BOOL) { pct_la_not_implemented_bool("addmv_impl_cpu"); goto fail; }
            const int64_t zero[1] = {0};
            coef be = beta;
            if (beta_scalar_zero) be.zero = true;
            PCT_TRY_INT(pct_la_run_gemm(result, zero, result->strides[0], 0, mat, zero, mat->strides[0], mat->strides[1], vec,
                                 zero, vec->strides[0], 0, 0, NULL, m, 1, k, alpha, be));
        }
    }
    PCT_DECREF(self_);
    return (pct_object *)result;
fail:
    PCT_XDECREF(self_);
    PCT_XDECREF(result);
    return NULL;
}


/* torch's mv / mv_out: addmv with beta = 0 into a fresh (or the out=) vector */
pct_object *pct_la_mv(pct_tensor *mat, pct_tensor *vec, pct_tensor *out)
{
    if (mat->ndim == 0) {
        pct_error_str(PCT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
        return NULL;
    }
    const int64_t m = mat->sizes[0];
    if (!out || out->ndim > 1 || (out->numel != m && out->numel != 1)) {
        pct_tensor *self = pct_tensor_empty(1, &m, vec->dtype, PCT_CPU, -1);
        if (!self) return NULL;
        pct_object *r = out ? addmv_op(self, mat, vec, &scalar_zero, &scalar_one, out, false)
                          : addmv_op(self, mat, vec, &scalar_zero, &scalar_one, self, true);
        PCT_DECREF(self);
        return r;
    }
    return addmv_op(out, mat, vec, &scalar_zero, &scalar_one, out, false);
}

/* ---- trace ---- */

static pct_object *trace_op(pct_tensor *t)
{
    if (t->dtype == PCT_BOOL) return pct_la_not_implemented_bool("trace"); /* torch dispatches on dtype first */
    if (t->ndim != 2) {
        pct_error(PCT_ERR_RUNTIME, "trace: expected a matrix, but got tensor with dim %d", t->ndim);
        return NULL;
    }
    const bool cx = pct_dtype_is_complex(t->dtype), fl = cx || pct_dtype_is_floating(t->dtype);
    pct_tensor *r = pct_tensor_empty(0, no_dims, fl ? t->dtype : PCT_INT64, PCT_CPU, -1);
    if (!r) return NULL;
    const int64_t n = imin(t->sizes[0], t->sizes[1]), step = t->strides[0] + t->strides[1];
    const char *p = pct_tensor_data(t);
    const int isz = pct_tensor_itemsize(t);
    if (cx) { /* the real and imaginary parts summed apart, in double */
        double sr = 0, si = 0;
        for (int64_t i = 0; i < n; i++) {
            double re, im;
            pct_load_as_complex(p + i * step * isz, t->dtype, &re, &im);
            sr += re;
            si += im;
        }
        pct_store_complex(pct_tensor_data(r), r->dtype, sr, si);
    } else if (fl) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += pct_load_as_double(p + i * step * isz, t->dtype);
        pct_store_double(pct_tensor_data(r), r->dtype, s);
    } else {
        uint64_t s = 0;
        for (int64_t i = 0; i < n; i++) s += (uint64_t)pct_load_as_int64(p + i * step * isz, t->dtype);
        *(int64_t *)pct_tensor_data(r) = (int64_t)s;
    }
    return (pct_object *)r;
}

/* ---- outer / inner / tensordot / kron ---- */

static pct_object *outer_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    if (a->ndim != 1) {
        pct_error(PCT_ERR_RUNTIME, "outer: Expected 1-D argument self, but got %d-D", a->ndim);
        return NULL;
    }
    if (b->ndim != 1) {
        pct_error(PCT_ERR_RUNTIME, "outer: Expected 1-D argument vec2, but got %d-D", b->ndim);
        return NULL;
    }
    const int64_t sz[2] = {a->sizes[0], 1}, st[2] = {a->strides[0], 1};
    pct_tensor *col = pct_la_view_with(a, 2, sz, st);
    if (!col) return NULL;
    pct_object *r = pct_la_mul(out, false, col, b);
    PCT_DECREF(col);
    return r;
}

/* ---- kernels (ops_linalg.def) ---- */

pct_object *pct_cpu_mv(pct_call *c)
{
    PCT_ARGS(mv);
    return pct_la_mv(arg.input, arg.vec, c->out);
}

/* dot and vdot are the same for real dtypes (vdot conjugates its first operand); outer and ger are the same */
pct_object *pct_cpu_dot(pct_call *c) { PCT_ARGS(dot); return pct_la_dot(arg.input, arg.tensor, c->out, false); }
pct_object *pct_cpu_vdot(pct_call *c) { PCT_ARGS(vdot); return pct_la_dot(arg.input, arg.other, c->out, true); }
pct_object *pct_cpu_outer(pct_call *c) { PCT_ARGS(outer); return outer_op(arg.input, arg.vec2, c->out); }
pct_object *pct_cpu_ger(pct_call *c) { PCT_ARGS(ger); return outer_op(arg.input, arg.vec2, c->out); }

pct_object *pct_cpu_trace(pct_call *c)
{
    PCT_ARGS(trace);
    return trace_op(arg.input);
}

pct_object *pct_cpu_addmv(pct_call *c)
{
    PCT_ARGS(addmv);
    if (c->inplace) return addmv_op(arg.input, arg.mat, arg.vec, &arg.beta, &arg.alpha, arg.input, true);
    return addmv_op(arg.input, arg.mat, arg.vec, &arg.beta, &arg.alpha, c->out, false);
}
