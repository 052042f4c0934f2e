/* views.c: operators that return views (same storage, new shape/strides/offset).
 * They touch no data, so one kernel serves every backend. In-place forms (t_,
 * squeeze_, ...) rewrite the tensor's own geometry. */
#include "op.h"
#include "error.h"
#include "iter.h"
#include "checked.h"
#include <stdlib.h>
#include <string.h>

/* Result of a view op: a new view, or self rewritten when called in place. */
static pct_object *finish_view(pct_call *c, pct_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    if (c->inplace) {
        if (pct_view_check_storage(self->storage, ndim, sizes, strides ? strides : self->strides, offset,
                                   pct_tensor_itemsize(self)) < 0)
            return NULL;
        self->offset = offset;
        if (pct_tensor_set_shape(self, ndim, sizes, strides) < 0) return NULL;
        PCT_INCREF(self);
        return (pct_object *)self;
    }
    return (pct_object *)pct_tensor_view_of(self, ndim, sizes, strides, offset);
}

/* Resolves one -1 in a requested shape against numel; -1 with torch's error. */
static int infer_size(const int64_t *req, int n, int64_t numel, int64_t *out)
{
    int infer = -1;
    int64_t prod = 1;
    for (int i = 0; i < n; i++) {
        if (req[i] == -1) {
            if (infer >= 0) { pct_error_str(PCT_ERR_RUNTIME, "only one dimension can be inferred"); return -1; }
            infer = i;
        } else if (req[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "invalid shape dimension %lld", (long long)req[i]);
            return -1;
        } else {
            prod *= req[i];
        }
        out[i] = req[i];
    }
    if (infer >= 0) {
        if (prod == 0) {
            pct_error(PCT_ERR_RUNTIME, "cannot reshape tensor of %lld elements into shape %s because the unspecified "
                         "dimension size -1 can be any value and is ambiguous", (long long)numel,
                         pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, n, req));
            return -1;
        }
        if (numel % prod == 0) { out[infer] = numel / prod; prod = numel; }
    }
    if (prod != numel) {
        pct_error(PCT_ERR_RUNTIME, "shape '%s' is invalid for input of size %lld",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, n, req), (long long)numel);
        return -1;
    }
    return 0;
}

/* Strides viewing t with a new shape, if the memory allows it (torch's computeStride). */
static bool view_strides(const pct_tensor *t, int n, const int64_t *shape, int64_t *strides)
{
    if (t->numel == 0) {
        if (t->ndim == n && memcmp(t->sizes, shape, sizeof(int64_t) * (size_t)n) == 0) {
            memcpy(strides, t->strides, sizeof(int64_t) * (size_t)n);
        } else {
            pct_contiguous_strides(n, shape, strides);
        }
        return true;
    }
    int view_d = n - 1;
    int64_t chunk_base = t->ndim ? t->strides[t->ndim - 1] : 1;
    int64_t tensor_numel = 1, view_numel = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        tensor_numel *= t->sizes[d];
        if (d == 0 || (t->sizes[d - 1] != 1 && t->strides[d - 1] != tensor_numel * chunk_base)) {
            while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
                strides[view_d] = view_numel * chunk_base;
                view_numel *= shape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return false;
            if (d > 0) { chunk_base = t->strides[d - 1]; tensor_numel = 1; view_numel = 1; }
        }
    }
    /* a 0-d source: every new dim is 1 */
    while (view_d >= 0 && shape[view_d] == 1) strides[view_d--] = 1;
    return view_d == -1;
}

static pct_object *view_impl(pct_call *c, pct_tensor *t, int n, const int64_t *req, bool allow_copy)
{
    int64_t shape[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    if (infer_size(req, n, t->numel, shape) < 0) return NULL;
    if (view_strides(t, n, shape, strides)) return finish_view(c, t, n, shape, strides, t->offset);
    if (!allow_copy) {
        pct_error_str(PCT_ERR_RUNTIME, "view size is not compatible with input tensor's size and stride (at least one "
                                            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
        return NULL;
    }
    pct_tensor *cont = pct_contiguous(t);
    if (!cont) return NULL;
    pct_object *r = (pct_object *)pct_tensor_view_of(cont, n, shape, NULL, 0);
    PCT_DECREF(cont);
    if (r) PCT_CLEAR(((pct_tensor *)r)->base); /* a copy, not a view of t */
    return r;
}

pct_object *pct_view(pct_call *c)
{
    PCT_ARGS(view);
    return view_impl(c, arg.input, arg.size.n, arg.size.v, false);
}

pct_object *pct_reshape(pct_call *c)
{
    PCT_ARGS(reshape);
    return view_impl(c, arg.input, arg.shape.n, arg.shape.v, true);
}

pct_object *pct_unsafe_view(pct_call *c)
{
    PCT_ARGS(unsafe_view);
    pct_object *r = view_impl(c, arg.input, arg.size.n, arg.size.v, false);
    if (r) PCT_CLEAR(((pct_tensor *)r)->base); /* same memory, but no view of the input for autograd */
    return r;
}

pct_object *pct_view_as(pct_call *c)
{
    PCT_ARGS(view_as);
    return view_impl(c, arg.input, arg.other->ndim, arg.other->sizes, false);
}

pct_object *pct_reshape_as(pct_call *c)
{
    PCT_ARGS(reshape_as);
    return view_impl(c, arg.input, arg.other->ndim, arg.other->sizes, true);
}

pct_object *pct_view_dtype(pct_call *c)
{
    PCT_ARGS(view_dtype);
    pct_tensor *t = arg.input;
    int dtype = arg.dtype;
    int old = pct_dtype_itemsize[t->dtype], new = pct_dtype_itemsize[dtype];
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)n);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)n);
    int64_t offset = t->offset;
    if (old != new) {
        if (n == 0 || t->strides[n - 1] != 1) {
            pct_error_str(PCT_ERR_RUNTIME, "self.stride(-1) must be 1 to view ScalarType as a different size dtype");
            return NULL;
        }
        if (new > old) {
            int ratio = new / old;
            if (sizes[n - 1] % ratio || offset % ratio) {
                pct_error_str(PCT_ERR_RUNTIME, "self.size(-1) must be divisible by the size ratio to view ScalarType as a larger dtype");
                return NULL;
            }
            sizes[n - 1] /= ratio;
            for (int i = 0; i < n - 1; i++) {
                if (strides[i] % ratio) { pct_error_str(PCT_ERR_RUNTIME, "self.stride(i) must be divisible by the size ratio"); return NULL; }
                strides[i] /= ratio;
            }
            offset /= ratio;
        } else {
            int ratio = old / new;
            sizes[n - 1] *= ratio;
            for (int i = 0; i < n - 1; i++) strides[i] *= ratio;
            offset *= ratio;
        }
    }
    return (pct_object *)pct_tensor_view_as_dtype(t, n, sizes, strides, offset, dtype);
}

/* view_as_real: a complex tensor's (real, imaginary) pairs as a last dim of 2 in the real dtype of its precision */
pct_object *pct_view_as_real(pct_call *c)
{
    PCT_ARGS(view_as_real);
    pct_tensor *t = arg.input;
    if (!pct_dtype_is_complex(t->dtype)) {
        pct_error_str(PCT_ERR_RUNTIME, "view_as_real is only supported for complex tensors");
        return NULL;
    }
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    const int n = t->ndim;
    for (int i = 0; i < n; i++) { sizes[i] = t->sizes[i]; strides[i] = t->strides[i] * 2; }
    sizes[n] = 2;
    strides[n] = 1;
    return (pct_object *)pct_tensor_view_as_dtype(t, n + 1, sizes, strides, t->offset * 2, pct_dtype_to_real(t->dtype));
}

/* view_as_complex: the inverse, for float16/float32/float64 tensors whose last dim is 2 contiguous elements */
pct_object *pct_view_as_complex(pct_call *c)
{
    PCT_ARGS(view_as_complex);
    pct_tensor *t = arg.input;
    const int n = t->ndim;
    if (t->dtype != PCT_FLOAT16 && t->dtype != PCT_FLOAT32 && t->dtype != PCT_FLOAT64) {
        pct_error(PCT_ERR_RUNTIME, "view_as_complex is only supported for half, float and double tensors, but got a "
                  "tensor of scalar type: %s", pct_dtype_cpp_name[t->dtype]);
        return NULL;
    }
    if (n == 0 || t->sizes[n - 1] != 2) {
        pct_error_str(PCT_ERR_RUNTIME, "Tensor must have a last dimension of size 2");
        return NULL;
    }
    if (t->strides[n - 1] != 1) {
        pct_error_str(PCT_ERR_RUNTIME, "Tensor must have a last dimension with stride 1");
        return NULL;
    }
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    for (int i = 0; i < n - 1; i++) {
        if (t->strides[i] % 2) {
            pct_error_str(PCT_ERR_RUNTIME, "Tensor must have a stride divisible by 2 for all but last dimension");
            return NULL;
        }
        sizes[i] = t->sizes[i];
        strides[i] = t->strides[i] / 2;
    }
    if (t->offset % 2) {
        pct_error_str(PCT_ERR_RUNTIME, "Tensor must have a storage_offset divisible by 2");
        return NULL;
    }
    return (pct_object *)pct_tensor_view_as_dtype(t, n - 1, sizes, strides, t->offset / 2, pct_dtype_to_complex(t->dtype));
}

pct_object *pct_flatten(pct_call *c)
{
    PCT_ARGS(flatten);
    pct_tensor *t = arg.input;
    int s = pct_wrap_dim(arg.start_dim, t->ndim), e = pct_wrap_dim(arg.end_dim, t->ndim);
    if (s < 0 || e < 0) return NULL; /* a 0-d tensor takes dims -1 and 0 */
    if (t->ndim == 0) return view_impl(c, t, 1, (int64_t[]){1}, true);
    if (s > e) { pct_error_str(PCT_ERR_RUNTIME, "flatten() has invalid args: start_dim cannot come after end_dim"); return NULL; }
    if (s == e) { PCT_INCREF(t); return (pct_object *)t; }
    int64_t shape[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < s; i++) shape[n++] = t->sizes[i];
    int64_t m = 1;
    for (int i = s; i <= e; i++) m *= t->sizes[i];
    shape[n++] = m;
    for (int i = e + 1; i < t->ndim; i++) shape[n++] = t->sizes[i];
    return view_impl(c, t, n, shape, true);
}

pct_object *pct_unflatten(pct_call *c)
{
    PCT_ARGS(unflatten);
    pct_tensor *t = arg.input;
    const pct_int_list *sz = &arg.sizes;
    /* torch checks the sizes before the dim */
    if (sz->n == 0) { pct_error_str(PCT_ERR_RUNTIME, "unflatten: sizes must be non-empty"); return NULL; }
    int d = pct_wrap_dim(arg.dim, t->ndim);
    if (d < 0) return NULL;
    int64_t inner[PCT_MAX_DIMS];
    if (pct_check_ndim((int64_t)t->ndim - 1 + sz->n) < 0) return NULL;
    if (infer_size(sz->v, sz->n, t->sizes[d], inner) < 0) {
        pct_error_clear();
        pct_error(PCT_ERR_RUNTIME, "unflatten: Provided sizes %s don't multiply up to the size of dim %d (%lld) in the input tensor",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, sz->n, sz->v), d, (long long)t->sizes[d]);
        return NULL;
    }
    int64_t shape[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < d; i++) shape[n++] = t->sizes[i];
    for (int i = 0; i < sz->n; i++) shape[n++] = inner[i];
    for (int i = d + 1; i < t->ndim; i++) shape[n++] = t->sizes[i];
    return view_impl(c, t, n, shape, true);
}

/* Marks the dims named by an int[1]? argument; all dims when None. -1 on bad dims. */
static int dim_mask(const pct_int_list *v, int ndim, bool *mask)
{
    if (v->none) { /* every dim (a 0-d tensor takes dim 0 or -1) */
        for (int i = 0; i < (ndim ? ndim : 1); i++) mask[i] = true;
        return 0;
    }
    return pct_dims_mask(v->v, v->n, ndim, mask);
}

pct_object *pct_squeeze(pct_call *c)
{
    PCT_ARGS(squeeze);
    pct_tensor *t = arg.input;
    bool mask[PCT_MAX_DIMS];
    if (dim_mask(&arg.dim, t->ndim, mask) < 0) return NULL;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (mask[i] && t->sizes[i] == 1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return finish_view(c, t, n, sizes, strides, t->offset);
}

pct_object *pct_unsqueeze(pct_call *c)
{
    PCT_ARGS(unsqueeze);
    pct_tensor *t = arg.input;
    int d = pct_wrap_dim(arg.dim, t->ndim + 1);
    if (d < 0 || pct_check_ndim(t->ndim + 1) < 0) return NULL;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == d) {
            sizes[n] = 1;
            strides[n++] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        }
        if (i < t->ndim) { sizes[n] = t->sizes[i]; strides[n++] = t->strides[i]; }
    }
    return finish_view(c, t, n, sizes, strides, t->offset);
}

static pct_object *permute_impl(pct_call *c, pct_tensor *t, const int *perm)
{
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) { sizes[i] = t->sizes[perm[i]]; strides[i] = t->strides[perm[i]]; }
    return finish_view(c, t, t->ndim, sizes, strides, t->offset);
}

pct_object *pct_permute(pct_call *c)
{
    PCT_ARGS(permute);
    pct_tensor *t = arg.input;
    const pct_int_list *d = &arg.dims;
    if (d->n != t->ndim) {
        pct_error(PCT_ERR_RUNTIME, "permute(sparse_coo): number of dimensions in the tensor input does not match the "
                     "length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                     t->ndim, d->n);
        return NULL;
    }
    int perm[PCT_MAX_DIMS];
    bool seen[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < d->n; i++) {
        int w = pct_wrap_dim(d->v[i], t->ndim);
        if (w < 0) return NULL;
        if (seen[w]) { pct_error_str(PCT_ERR_RUNTIME, "permute(): duplicate dims are not allowed."); return NULL; }
        seen[w] = true;
        perm[i] = w;
    }
    return permute_impl(c, t, perm);
}

static pct_object *transpose_impl(pct_call *c, pct_tensor *t, int64_t dim0, int64_t dim1)
{
    int a = pct_wrap_dim(dim0, t->ndim), b = pct_wrap_dim(dim1, t->ndim);
    if (a < 0 || b < 0) return NULL;
    int perm[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) perm[i] = i;
    if (t->ndim > 0) { perm[a] = b; perm[b] = a; }
    return permute_impl(c, t, perm);
}

pct_object *pct_transpose(pct_call *c)
{
    PCT_ARGS(transpose);
    return transpose_impl(c, arg.input, arg.dim0, arg.dim1);
}

pct_object *pct_swapaxes(pct_call *c)
{
    PCT_ARGS(swapaxes);
    return transpose_impl(c, arg.input, arg.axis0, arg.axis1);
}

pct_object *pct_swapdims(pct_call *c)
{
    PCT_ARGS(swapdims);
    return transpose_impl(c, arg.input, arg.dim0, arg.dim1);
}

pct_object *pct_t(pct_call *c)
{
    PCT_ARGS(t);
    pct_tensor *t = arg.input;
    if (t->ndim > 2) {
        pct_error(PCT_ERR_RUNTIME, "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
        return NULL;
    }
    int perm[2] = {t->ndim == 2 ? 1 : 0, 0};
    return permute_impl(c, t, perm);
}

static pct_object *movedim_impl(pct_call *c, pct_tensor *t, const pct_int_list *src, const pct_int_list *dst)
{
    if (src->n != dst->n) {
        pct_error(PCT_ERR_RUNTIME, "movedim: Invalid source or destination dims: source (%s dims) should contain the "
                     "same number of dims as destination (%s dims)",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, src->n, src->v),
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, dst->n, dst->v));
        return NULL;
    }
    int perm[PCT_MAX_DIMS];
    bool src_used[PCT_MAX_DIMS] = {0}, dst_used[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < t->ndim; i++) perm[i] = -1;
    for (int i = 0; i < src->n; i++) {
        int s = pct_wrap_dim(src->v[i], t->ndim), d = pct_wrap_dim(dst->v[i], t->ndim);
        if (s < 0 || d < 0) return NULL;
        if (src_used[s] || dst_used[d]) { pct_error_str(PCT_ERR_RUNTIME, "movedim: repeated dim in `source` or `destination`"); return NULL; }
        src_used[s] = dst_used[d] = true;
        perm[d] = s;
    }
    int next = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (perm[i] >= 0) continue;
        while (src_used[next]) next++;
        perm[i] = next++;
    }
    return permute_impl(c, t, perm);
}

pct_object *pct_movedim(pct_call *c)
{
    PCT_ARGS(movedim);
    return movedim_impl(c, arg.input, &arg.source, &arg.destination);
}

pct_object *pct_moveaxis(pct_call *c)
{
    PCT_ARGS(moveaxis);
    return movedim_impl(c, arg.input, &arg.source, &arg.destination);
}

static pct_object *expand_impl(pct_call *c, pct_tensor *t, int n, const int64_t *req)
{
    if (n < t->ndim) {
        pct_error(PCT_ERR_RUNTIME, "expand(torch.FloatTensor{%s}, size=%s): the number of sizes provided (%d) must be "
                     "greater or equal to the number of dimensions in the tensor (%d)",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, t->ndim, t->sizes),
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, n, req), n, t->ndim);
        return NULL;
    }
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    for (int i = n - 1; i >= 0; i--) {
        int td = t->ndim - n + i;
        int64_t want = req[i];
        if (td >= 0) {
            int64_t have = t->sizes[td];
            if (want == -1) want = have;
            if (want < 0) { /* torch's size arithmetic meets the negative size first */
                pct_error_str(PCT_ERR_RUNTIME, "numel: integer multiplication overflow");
                return NULL;
            }
            if (have == want) { sizes[i] = have; strides[i] = t->strides[td]; continue; }
            if (have != 1) {
                pct_error(PCT_ERR_RUNTIME, "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                             "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s", (long long)want, (long long)have, i,
                             pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, n, req),
                             pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, t->ndim, t->sizes));
                return NULL;
            }
        } else if (want < 0) {
            pct_error(PCT_ERR_RUNTIME, "The expanded size of the tensor (%lld) isn't allowed in a leading, non-existing dimension %d",
                         (long long)want, i);
            return NULL;
        }
        sizes[i] = want;
        strides[i] = 0;
    }
    return finish_view(c, t, n, sizes, strides, t->offset);
}

pct_object *pct_expand(pct_call *c)
{
    PCT_ARGS(expand);
    return expand_impl(c, arg.input, arg.size.n, arg.size.v);
}

pct_object *pct_broadcast_to(pct_call *c)
{
    PCT_ARGS(broadcast_to);
    return expand_impl(c, arg.input, arg.size.n, arg.size.v);
}
pct_object *pct_expand_as(pct_call *c)
{
    PCT_ARGS(expand_as);
    return expand_impl(c, arg.input, arg.other->ndim, arg.other->sizes);
}

pct_object *pct_narrow(pct_call *c)
{
    PCT_ARGS(narrow);
    pct_tensor *t = arg.input;
    if (t->ndim == 0) { pct_error_str(PCT_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor."); return NULL; }
    if (arg.length < 0) { /* torch checks the length before the dim and the start */
        pct_error_str(PCT_ERR_RUNTIME, "narrow(): length must be non-negative.");
        return NULL;
    }
    int d = pct_wrap_dim(arg.dim, t->ndim);
    if (d < 0) return NULL;
    int64_t start = arg.start, len = arg.length, size = t->sizes[d];
    if (start < -size || start > size) {
        pct_error(PCT_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-size, (long long)size, (long long)start);
        return NULL;
    }
    if (start < 0) start += size;
    if (!pct_range_within(start, len, size)) { /* Note [Checked bounds] */
        pct_error(PCT_ERR_RUNTIME, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start,
                     (long long)len, (long long)size);
        return NULL;
    }
    int64_t sizes[PCT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    sizes[d] = len;
    return finish_view(c, t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
}

static pct_tensor *select_view(pct_tensor *t, int d, int64_t index)
{
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == d) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return pct_tensor_view_of(t, n, sizes, strides, t->offset + index * t->strides[d]);
}

pct_object *pct_select(pct_call *c)
{
    PCT_ARGS(select);
    pct_tensor *t = arg.input;
    if (t->ndim == 0) { pct_error_str(PCT_ERR_INDEX, "select() cannot be applied to a 0-dim tensor."); return NULL; }
    int d = pct_wrap_dim(arg.dim, t->ndim);
    if (d < 0) return NULL;
    int64_t i = arg.index, size = t->sizes[d];
    if (i < -size || i >= size) {
        pct_error(PCT_ERR_INDEX, "select(): index %lld out of range for tensor of size %s at dimension %d", (long long)i,
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, t->ndim, t->sizes), d);
        return NULL;
    }
    return (pct_object *)select_view(t, d, i < 0 ? i + size : i);
}

/* n views of t along dim d, as a tuple: with starts NULL, view i selects index i of d (unbind); otherwise it is the
 * piece of lengths[i] at starts[i] (NULL: where the previous one ended). */
static pct_object *views_tuple(pct_tensor *t, int d, int64_t n, const int64_t *starts, const int64_t *lengths)
{
    pct_object **items = malloc(sizeof(pct_object *) * (size_t)(n > 0 ? n : 1));
    if (!items) return pct_error_nomem();
    int64_t start = 0, sizes[PCT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    int64_t made = 0;
    for (; made < n; made++) {
        pct_object *v;
        if (!lengths) {
            v = (pct_object *)select_view(t, d, made);
        } else {
            if (starts) start = starts[made];
            sizes[d] = lengths[made];
            v = (pct_object *)pct_tensor_view_of(t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
            start += lengths[made];
        }
        if (!v) break;
        items[made] = v;
    }
    pct_object *r = NULL;
    if (made == n) r = pct_tuple_steal(n, items);
    else for (int64_t i = 0; i < made; i++) PCT_DECREF(items[i]);
    free(items);
    return r;
}

pct_object *pct_unbind(pct_call *c)
{
    PCT_ARGS(unbind);
    pct_tensor *t = arg.input;
    if (t->ndim == 0) { pct_error_str(PCT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions"); return NULL; }
    int d = pct_wrap_dim(arg.dim, t->ndim);
    if (d < 0) return NULL;
    return views_tuple(t, d, t->sizes[d], NULL, NULL);
}

/* n views of t along dim d: piece i starts at starts[i] (NULL: where the previous one ended) with lengths[i]. */
static pct_object *pieces_at(pct_tensor *t, int d, int64_t n, const int64_t *starts, const int64_t *lengths)
{
    return views_tuple(t, d, n, starts, lengths);
}

static pct_object *pieces(pct_tensor *t, int d, int n, const int64_t *lengths) { return pieces_at(t, d, n, NULL, lengths); }

#define PCT_MAX_PIECES 4096
/* split(t, split_size, dim) into pieces of *step (where step is not NULL), or of the sizes `s`. */
static pct_object *split_impl(pct_tensor *t, int64_t dim, const int64_t *split_size, const pct_int_list *s)
{
    if (t->ndim == 0) { pct_error_str(PCT_ERR_RUNTIME, "split expects at least a 1-dimensional tensor"); return NULL; }
    int d = pct_wrap_dim(dim, t->ndim);
    if (d < 0) return NULL;
    int64_t size = t->sizes[d];
    if (split_size) {
        int64_t step = *split_size;
        if (step < 0 || (step == 0 && size != 0)) {
            pct_error(PCT_ERR_RUNTIME, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld", (long long)size);
            return NULL;
        }
        int64_t n = step == 0 ? 1 : size / step + (size % step != 0); /* no overflow for a huge step */
        if (n == 0) n = 1;
        if (n > PCT_MAX_PIECES) {
            /* many pieces: the lengths on the heap */
            int64_t *lens = malloc(sizeof(int64_t) * (size_t)n);
            if (!lens) return pct_error_nomem();
            for (int64_t i = 0; i < n; i++) lens[i] = (i + 1) * step <= size ? step : size - i * step;
            pct_object *r = pieces(t, d, (int)n, lens);
            free(lens);
            return r;
        }
        int64_t lens[PCT_MAX_PIECES];
        for (int64_t i = 0; i < n; i++) lens[i] = (i + 1) * step <= size ? step : size - i * step;
        return pieces(t, d, (int)n, lens);
    }
    int64_t total = 0;
    bool overflow = false; /* Note [Checked bounds]: sizes summing past int64 must not wrap to `size` */
    for (int i = 0; i < s->n; i++) {
        if (s->v[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                         "split_sizes=%s", pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, s->n, s->v));
            return NULL;
        }
        overflow |= pct_add_overflows(total, s->v[i], &total);
    }
    if (overflow || total != size) {
        pct_error(PCT_ERR_RUNTIME, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
                     "dimension %d), but got split_sizes=%s", (long long)size, d,
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, s->n, s->v));
        return NULL;
    }
    return pieces(t, d, s->n, s->v);
}

pct_object *pct_split(pct_call *c) { PCT_ARGS(split); return split_impl(arg.input, arg.dim, &arg.split_size, NULL); }
pct_object *pct_split_list(pct_call *c) { PCT_ARGS(split_list); return split_impl(arg.input, arg.dim, NULL, &arg.split_size); }

pct_object *pct_split_with_sizes(pct_call *c)
{
    PCT_ARGS(split_with_sizes);
    return split_impl(arg.input, arg.dim, NULL, &arg.split_sizes);
}

/* torch.slice's clamping of a bound to [0, size] (negative bounds count from the end). */
static int64_t slice_bound(int64_t i, int64_t size)
{
    if (i < 0) i += size;
    return i < 0 ? 0 : i > size ? size : i;
}

/* tensor_split(t, sections or indices, dim): *n_sections pieces (where n_sections is not NULL), or the pieces
 * between the indices `s`. */
static pct_object *tensor_split_impl(pct_tensor *t, int64_t dim, const int64_t *n_sections, const pct_int_list *s)
{
    if (t->ndim == 0) {
        pct_error_str(PCT_ERR_RUNTIME, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
        return NULL;
    }
    int d = pct_wrap_dim(dim, t->ndim);
    if (d < 0) return NULL;
    int64_t size = t->sizes[d];
    bool sections = n_sections != NULL;
    int64_t n = sections ? *n_sections : s->n + 1;
    if (sections && n <= 0) {
        pct_error(PCT_ERR_RUNTIME, "number of sections must be larger than 0, got %lld", (long long)n);
        return NULL;
    }
    /* torch's vector of pieces fails to allocate as a RuntimeError */
    int64_t *starts = (uint64_t)n > (uint64_t)PTRDIFF_MAX / (2 * sizeof(int64_t)) ? NULL
                      : malloc(sizeof(int64_t) * 2 * (size_t)n);
    if (!starts) { pct_error_str(PCT_ERR_RUNTIME, "std::bad_alloc"); return NULL; }
    int64_t *lens = starts + n;
    if (sections) { /* the first size % n pieces get one more */
        for (int64_t i = 0, at = 0; i < n; i++) {
            lens[i] = size / n + (i < size % n ? 1 : 0);
            starts[i] = at;
            at += lens[i];
        }
    } else { /* piece i is t[indices[i-1]:indices[i]] with slice semantics, unsorted and negative indices included */
        for (int64_t i = 0; i < n; i++) {
            int64_t lo = slice_bound(i ? s->v[i - 1] : 0, size), hi = slice_bound(i < s->n ? s->v[i] : size, size);
            starts[i] = lo;
            lens[i] = hi > lo ? hi - lo : 0;
        }
    }
    pct_object *r = pieces_at(t, d, n, starts, lens);
    free(starts);
    return r;
}

pct_object *pct_tensor_split(pct_call *c)
{
    PCT_ARGS(tensor_split);
    return tensor_split_impl(arg.input, arg.dim, &arg.sections, NULL);
}

pct_object *pct_tensor_split_indices(pct_call *c)
{
    PCT_ARGS(tensor_split_indices);
    return tensor_split_impl(arg.input, arg.dim, NULL, &arg.indices);
}

pct_object *pct_chunk(pct_call *c)
{
    PCT_ARGS(chunk);
    pct_tensor *t = arg.input;
    if (t->ndim == 0) { pct_error_str(PCT_ERR_RUNTIME, "chunk expects at least a 1-dimensional tensor"); return NULL; }
    int64_t chunks = arg.chunks;
    if (chunks <= 0) { pct_error(PCT_ERR_RUNTIME, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks); return NULL; }
    int d = pct_wrap_dim(arg.dim, t->ndim);
    if (d < 0) return NULL;
    int64_t size = t->sizes[d];
    int64_t step = (size + chunks - 1) / chunks;
    if (step == 0) step = 1;
    int64_t n = size == 0 ? 1 : (size + step - 1) / step;
    if (size == 0) n = chunks;
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)n);
    if (!lens) return pct_error_nomem();
    for (int64_t i = 0; i < n; i++) lens[i] = size == 0 ? 0 : ((i + 1) * step <= size ? step : size - i * step);
    pct_object *r = pieces(t, d, (int)n, lens);
    free(lens);
    return r;
}

/* The diagonal (offset off) of dims a != b of t as a view: those dims are removed and the
 * diagonal becomes the last one (torch.diagonal; also used by diag/diag_embed). */
pct_tensor *pct_diagonal_view(pct_tensor *t, int64_t off, int a, int b)
{
    int64_t len, offset = t->offset;
    if (off >= 0) {
        len = t->sizes[b] - off < t->sizes[a] ? t->sizes[b] - off : t->sizes[a];
        offset += off * t->strides[b];
    } else {
        len = t->sizes[a] + off < t->sizes[b] ? t->sizes[a] + off : t->sizes[b];
        offset -= off * t->strides[a];
    }
    if (len <= 0) { len = 0; offset = t->offset; }
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == a || i == b) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    sizes[n] = len;
    strides[n++] = t->strides[a] + t->strides[b];
    return pct_tensor_view_of(t, n, sizes, strides, offset);
}

pct_object *pct_diagonal(pct_call *c)
{
    PCT_ARGS(diagonal);
    pct_tensor *t = arg.input;
    int64_t off = arg.offset;
    int a = pct_wrap_dim(arg.dim1, t->ndim), b = pct_wrap_dim(arg.dim2, t->ndim);
    if (a < 0 || b < 0) return NULL;
    if (a == b) { pct_error(PCT_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)arg.dim1, (long long)arg.dim2); return NULL; }
    return (pct_object *)pct_diagonal_view(t, off, a, b);
}

pct_object *pct_as_strided(pct_call *c)
{
    PCT_ARGS(as_strided);
    pct_tensor *t = arg.input;
    const pct_int_list *sz = &arg.size, *st = &arg.stride;
    if (sz->n != st->n) {
        pct_error(PCT_ERR_RUNTIME, "mismatch in length of strides and shape");
        return NULL;
    }
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    for (int i = 0; i < st->n; i++) {
        if (st->v[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: %s",
                         pct_shape_str(b1, sizeof b1, st->n, st->v));
            return NULL;
        }
    }
    int64_t offset = arg.storage_offset.none ? t->offset : arg.storage_offset.v;
    if (offset < 0) { pct_error(PCT_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset); return NULL; }
    for (int i = 0; i < sz->n; i++) {
        if (sz->v[i] < 0) { /* torch's storage-size computation reports a negative size as an overflow */
            pct_error(PCT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                         pct_shape_str(b1, sizeof b1, sz->n, sz->v), pct_shape_str(b2, sizeof b2, st->n, st->v));
            return NULL;
        }
    }
    if (pct_view_check_storage(t->storage, sz->n, sz->v, st->v, offset, pct_tensor_itemsize(t)) < 0) return NULL;
    return finish_view(c, t, sz->n, sz->v, st->v, offset);
}

pct_object *pct_unfold(pct_call *c)
{
    PCT_ARGS(unfold);
    pct_tensor *t = arg.input;
    int d = pct_wrap_dim(arg.dimension, t->ndim);
    if (d < 0) return NULL;
    int64_t size = arg.size, step = arg.step, dsize = t->ndim ? t->sizes[d] : 1;
    if (size > dsize) {
        pct_error(PCT_ERR_RUNTIME, "maximum size for tensor at dimension %d is %lld but size is %lld", d, (long long)dsize, (long long)size);
        return NULL;
    }
    if (size < 0) { pct_error(PCT_ERR_RUNTIME, "size is %lld but must be >= 0", (long long)size); return NULL; }
    if (step <= 0) { pct_error(PCT_ERR_RUNTIME, "step is %lld but must be > 0", (long long)step); return NULL; }
    if (pct_check_ndim(t->ndim + 1) < 0) return NULL;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)n);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)n);
    if (n == 0) { sizes[0] = size; strides[0] = 1; return (pct_object *)pct_tensor_view_of(t, 1, sizes, strides, t->offset); }
    sizes[d] = (dsize - size) / step + 1;
    strides[d] = t->strides[d] * step;
    sizes[n] = size;
    strides[n] = t->strides[d];
    return (pct_object *)pct_tensor_view_of(t, n + 1, sizes, strides, t->offset);
}

pct_object *pct_detach(pct_call *c)
{
    PCT_ARGS(detach);
    pct_tensor *t = arg.input;
    if (c->inplace) {
        if (t->base) {
            pct_error_str(PCT_ERR_RUNTIME,
                            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                            "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                            "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                            "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
            return NULL;
        }
        PCT_CLEAR(t->grad_fn);
        t->flags &= (uint8_t)~PCT_FLAG_REQUIRES_GRAD;
        PCT_INCREF(t);
        return (pct_object *)t;
    }
    return (pct_object *)pct_tensor_new_alias(t, true);
}

pct_object *pct_alias(pct_call *c)
{
    PCT_ARGS(alias);
    pct_tensor *t = arg.input;
    return (pct_object *)pct_tensor_view_of(t, t->ndim, t->sizes, t->strides, t->offset);
}

/* Note [Device-neutral views]: the kernels above read shapes and strides only (reshape's copy goes through
 * pct_contiguous, which allocates on the tensor's device and copies through its backend), so every backend's slot can
 * hold them as they are: a view of a CUDA tensor is a CUDA view of the same storage, made on the host, where the
 * fallback would copy the whole storage to the host and back. */
bool pct_is_view_kernel(pct_kernel_fn k)
{
    static const pct_kernel_fn kernels[] = {
        pct_view, pct_reshape, pct_unsafe_view, pct_view_as, pct_reshape_as, pct_view_dtype, pct_flatten,
        pct_unflatten, pct_squeeze, pct_unsqueeze, pct_permute, pct_transpose, pct_swapaxes, pct_swapdims, pct_t,
        pct_movedim, pct_moveaxis, pct_expand, pct_broadcast_to, pct_expand_as, pct_narrow, pct_select, pct_unbind,
        pct_split, pct_split_list, pct_split_with_sizes, pct_tensor_split, pct_tensor_split_indices, pct_chunk,
        pct_diagonal, pct_as_strided, pct_unfold, pct_detach, pct_alias,
    };
    for (size_t i = 0; k && i < sizeof kernels / sizeof kernels[0]; i++)
        if (kernels[i] == k) return true;
    return false;
}
