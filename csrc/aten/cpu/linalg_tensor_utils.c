/* linalg_tensor_utils.c: the tensor helpers of the linear-algebra kernel files (blas.c and
 * the composite products and norms beside it; declared in blas_internal.h): out= resizing,
 * zero fill, a * b and t *= beta through the loop machine, views (mT, unsqueeze, permute,
 * expand) and Tensor.reshape's view-or-copy.
 */
#include "blas_internal.h"
#include "../backend.h"
#include "../composite/composite.h"

pct_object *pct_la_not_implemented_bool(const char *name)
{
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", name);
    return NULL;
}

/* The tensor to write a result of this shape into: out= (resized; new reference) or a
 * new contiguous tensor. */
pct_tensor *pct_la_result_tensor(pct_tensor *out, int nd, const int64_t *sizes, int dtype)
{
    return pct_la_result_on(out, nd, sizes, dtype, NULL);
}

pct_tensor *pct_la_result_on(pct_tensor *out, int nd, const int64_t *sizes, int dtype, const pct_tensor *like)
{
    if (!out) return pct_tensor_empty(nd, sizes, dtype, like ? like->device_type : PCT_CPU, like ? like->device_index : -1);
    if (pct_out_resize(out, nd, sizes) < 0) return NULL;
    PCT_INCREF(out);
    return out;
}

int pct_la_fill_zero(pct_tensor *t)
{
    if (t->numel == 0) return 0;
    if (t->device_type != PCT_CPU) { /* the device's own fill */
        const pct_backend *b = pct_backend_of(t->device_type);
        if (!b || b->fill(t, &scalar_zero) < 0) return -1;
        pct_tensor_bump_version(t);
        return 0;
    }
    if (pct_tensor_is_contiguous(t)) {
        memset(pct_tensor_data(t), 0, (size_t)(t->numel * pct_tensor_itemsize(t)));
        pct_tensor_bump_version(t);
        return 0;
    }
    pct_tensor *z = pct_tensor_zeros(0, no_dims, t->dtype);
    if (!z) return -1;
    int rc = pct_copy_(t, z);
    PCT_DECREF(z);
    return rc;
}

/* a 0-d "wrapped number" tensor: it weighs like a Python scalar in type promotion */
static pct_tensor *wrapped_scalar(const pct_scalar *s)
{
    /* pct_scalar_tensor_of keeps a complex Scalar's imaginary part (beta = 0.5j scales by 0.5j, not 0) */
    pct_tensor *t = pct_scalar_tensor_of(pct_scalar_dtype(s), s);
    if (t) t->flags |= PCT_FLAG_WRAPPED_NUMBER;
    return t;
}

/* a * b through the elementwise loop machine (promotion, broadcasting, out= checks) */
pct_object *pct_la_mul(pct_tensor *out, bool inplace, pct_tensor *a, pct_tensor *b)
{
    if ((out && out->device_type != PCT_CPU) || a->device_type != PCT_CPU || b->device_type != PCT_CPU)
        /* another device's mul kernel (Note [Composite ops]: no autograd is recorded inside a kernel); out= is
         * elementwise, so an out that is also an input is the in-place product */
        return (pct_object *)pct_comp_mul(a, b, out);
    pct_iter it;
    pct_iter_config cfg = {.out = out, .inplace = inplace, .ninputs = 2, .inputs = {a, b},
                           .compute_dtype = -1, .out_dtype = -1};
    if (pct_iter_build(&it, &cfg) < 0) return NULL;
    if (pct_pw_check_dtype(PCT_OP_mul, it.compute_dtype, "mul") < 0) {
        pct_iter_release(&it);
        return NULL;
    }
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    pct_iter_run(&it, pct_pw_loop(PCT_OP_mul, it.compute_dtype), &ctx);
    if (inplace && out) pct_tensor_bump_version(out);
    return pct_iter_finish(&it);
}

/* t *= beta in place (torch: result.mul_(beta)) */
int pct_la_scale_inplace(pct_tensor *t, const pct_scalar *beta)
{
    pct_tensor *s = wrapped_scalar(beta);
    if (!s) return -1;
    pct_object *r = pct_la_mul(t, true, t, s);
    PCT_DECREF(s);
    if (!r) return -1;
    PCT_DECREF(r);
    return 0;
}

pct_tensor *pct_la_view_with(pct_tensor *t, int nd, const int64_t *sizes, const int64_t *strides)
{
    return pct_tensor_view_of(t, nd, sizes, strides, t->offset);
}

/* torch's expand_size(): t broadcast to `sizes`, with expand()'s errors. */
pct_tensor *pct_la_expand_to(pct_tensor *t, int nd, const int64_t *sizes)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    int64_t st[PCT_MAX_DIMS];
    if (t->ndim > nd) {
        pct_error(PCT_ERR_RUNTIME,
                     "expand(torch.%sTensor{%s}, size=%s): the number of sizes provided (%d) must be greater or equal "
                     "to the number of dimensions in the tensor (%d)",
                     pct_dtype_cpp_name[t->dtype], SHAPE(b1, t), SHAPE_OF(b2, nd, sizes), nd, t->ndim);
        return NULL;
    }
    bool same = t->ndim == nd;
    for (int i = 0; i < nd; i++) {
        int td = i - (nd - t->ndim);
        if (td < 0) { st[i] = 0; continue; }
        if (t->sizes[td] == sizes[i]) {
            st[i] = t->strides[td];
        } else if (t->sizes[td] == 1) {
            st[i] = 0;
            same = false;
        } else {
            pct_error(PCT_ERR_RUNTIME,
                         "The expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton "
                         "dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                         (long long)sizes[i], (long long)t->sizes[td], i, SHAPE_OF(b1, nd, sizes), SHAPE(b2, t));
            return NULL;
        }
    }
    if (same) {
        PCT_INCREF(t);
        return t;
    }
    return pct_la_view_with(t, nd, sizes, st);
}

