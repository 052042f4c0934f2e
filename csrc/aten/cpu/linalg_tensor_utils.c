/* linalg_tensor_utils.c: the tensor helpers of the linear-algebra kernel files (blas.c and
 * the composite products and norms beside it; declared in blas_internal.h): out= resizing,
 * zero fill, a * b and t *= beta through the loop machine, views (mT, unsqueeze, permute,
 * expand) and Tensor.reshape's view-or-copy.
 */
#include "blas_internal.h"

pct_object *pct_la_not_implemented_bool(const char *name)
{
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", name);
    return NULL;
}

/* The tensor to write a result of this shape into: out= (resized; new reference) or a
 * new contiguous tensor. */
pct_tensor *pct_la_result_tensor(pct_tensor *out, int nd, const int64_t *sizes, int dtype)
{
    if (!out) return pct_tensor_empty(nd, sizes, dtype, PCT_CPU, -1);
    if (pct_out_resize(out, nd, sizes) < 0) return NULL;
    PCT_INCREF(out);
    return out;
}

int pct_la_fill_zero(pct_tensor *t)
{
    if (t->numel == 0) return 0;
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
    pct_tensor *t = pct_tensor_scalar(pct_scalar_dtype(s), s->d, s->i, s->kind == PCT_SCALAR_FLOAT);
    if (t) t->flags |= PCT_FLAG_WRAPPED_NUMBER;
    return t;
}

/* a * b through the elementwise loop machine (promotion, broadcasting, out= checks) */
pct_object *pct_la_mul(pct_tensor *out, bool inplace, pct_tensor *a, pct_tensor *b)
{
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

/* t with the last two dims swapped (Tensor.mT) */
pct_tensor *pct_la_view_mT(pct_tensor *t)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = t->ndim;
    memcpy(sz, t->sizes, sizeof(int64_t) * (size_t)nd);
    memcpy(st, t->strides, sizeof(int64_t) * (size_t)nd);
    sz[nd - 2] = t->sizes[nd - 1]; sz[nd - 1] = t->sizes[nd - 2];
    st[nd - 2] = t->strides[nd - 1]; st[nd - 1] = t->strides[nd - 2];
    return pct_la_view_with(t, nd, sz, st);
}

pct_tensor *pct_la_view_unsqueeze(pct_tensor *t, int dim)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nd = t->ndim, j = 0;
    for (int i = 0; i <= nd; i++) {
        if (i == dim) {
            sz[i] = 1;
            st[i] = dim < nd ? t->sizes[dim] * t->strides[dim] : 1;
        } else {
            sz[i] = t->sizes[j];
            st[i] = t->strides[j];
            j++;
        }
    }
    return pct_la_view_with(t, nd + 1, sz, st);
}

pct_tensor *pct_la_view_permute(pct_tensor *t, const int64_t *perm)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sz[i] = t->sizes[perm[i]];
        st[i] = t->strides[perm[i]];
    }
    return pct_la_view_with(t, t->ndim, sz, st);
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

/* Strides of a view of t with `shape`, if one exists (ATen's computeStride). */
static bool view_strides(const pct_tensor *t, int nd, const int64_t *shape, int64_t *ns)
{
    if (t->numel == 0 || t->ndim == 0) {
        pct_contiguous_strides(nd, shape, ns);
        return true;
    }
    int view_d = nd - 1;
    int64_t chunk_base_stride = t->strides[t->ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int tensor_d = t->ndim - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= t->sizes[tensor_d];
        if (tensor_d == 0 ||
            (t->sizes[tensor_d - 1] != 1 && t->strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
                ns[view_d] = view_numel * chunk_base_stride;
                view_numel *= shape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return false;
            if (tensor_d > 0) {
                chunk_base_stride = t->strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* Tensor.reshape: a view when the strides allow, else a contiguous copy. */
pct_tensor *pct_la_reshape(pct_tensor *t, int nd, const int64_t *shape)
{
    int64_t ns[PCT_MAX_DIMS];
    if (view_strides(t, nd, shape, ns)) return pct_la_view_with(t, nd, shape, ns);
    pct_tensor *c = pct_to_dtype(t, t->dtype, true);
    if (!c) return NULL;
    if (pct_tensor_set_shape(c, nd, shape, NULL) < 0) {
        PCT_DECREF(c);
        return NULL;
    }
    return c;
}

