/* views.c: operators that return views (same storage, new shape/strides/offset).
 * They touch no data, so one kernel serves every backend. In-place forms (t_,
 * squeeze_, ...) rewrite the tensor's own geometry. */
#include "op.h"
#include "error.h"
#include "iter.h"
#include "checked.h"
#include "../python/pyobjects.h"

/* Result of a view op: a new view, or self rewritten when called in place. */
static PyObject *finish_view(pct_call *c, pct_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    if (c->inplace) {
        if (pct_view_check_storage(self->storage, ndim, sizes, strides ? strides : self->strides, offset,
                                   pct_tensor_itemsize(self)) < 0)
            return NULL;
        self->offset = offset;
        if (pct_tensor_set_shape(self, ndim, sizes, strides) < 0) return NULL;
        Py_INCREF(self);
        return (PyObject *)self;
    }
    return (PyObject *)pct_tensor_view_of(self, ndim, sizes, strides, offset);
}

/* Resolves one -1 in a requested shape against numel; -1 with torch's error. */
static int infer_size(const int64_t *req, int n, int64_t numel, int64_t *out)
{
    int infer = -1;
    int64_t prod = 1;
    for (int i = 0; i < n; i++) {
        if (req[i] == -1) {
            if (infer >= 0) { PyErr_SetString(PyExc_RuntimeError, "only one dimension can be inferred"); return -1; }
            infer = i;
        } else if (req[i] < 0) {
            PyErr_Format(PyExc_RuntimeError, "invalid shape dimension %lld", (long long)req[i]);
            return -1;
        } else {
            prod *= req[i];
        }
        out[i] = req[i];
    }
    if (infer >= 0) {
        if (prod == 0) {
            PyErr_Format(PyExc_RuntimeError, "cannot reshape tensor of %lld elements into shape %s because the unspecified "
                         "dimension size -1 can be any value and is ambiguous", (long long)numel,
                         pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, n, req));
            return -1;
        }
        if (numel % prod == 0) { out[infer] = numel / prod; prod = numel; }
    }
    if (prod != numel) {
        PyErr_Format(PyExc_RuntimeError, "shape '%s' is invalid for input of size %lld",
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

static PyObject *view_impl(pct_call *c, pct_tensor *t, int n, const int64_t *req, bool allow_copy)
{
    int64_t shape[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    if (infer_size(req, n, t->numel, shape) < 0) return NULL;
    if (view_strides(t, n, shape, strides)) return finish_view(c, t, n, shape, strides, t->offset);
    if (!allow_copy) {
        PyErr_SetString(PyExc_RuntimeError, "view size is not compatible with input tensor's size and stride (at least one "
                                            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
        return NULL;
    }
    pct_tensor *cont = pct_contiguous(t);
    if (!cont) return NULL;
    PyObject *r = (PyObject *)pct_tensor_view_of(cont, n, shape, NULL, 0);
    Py_DECREF(cont);
    if (r) Py_CLEAR(((pct_tensor *)r)->base); /* a copy, not a view of t */
    return r;
}

PyObject *pct_view(pct_call *c) { return view_impl(c, c->v[0].t, c->v[1].n, c->v[1].list, false); }
PyObject *pct_reshape(pct_call *c) { return view_impl(c, c->v[0].t, c->v[1].n, c->v[1].list, true); }
PyObject *pct_view_as(pct_call *c) { return view_impl(c, c->v[0].t, c->v[1].t->ndim, c->v[1].t->sizes, false); }
PyObject *pct_reshape_as(pct_call *c) { return view_impl(c, c->v[0].t, c->v[1].t->ndim, c->v[1].t->sizes, true); }

PyObject *pct_view_dtype(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    int dtype = c->v[1].dtype;
    int old = pct_dtype_itemsize[t->dtype], new = pct_dtype_itemsize[dtype];
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)n);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)n);
    int64_t offset = t->offset;
    if (old != new) {
        if (n == 0 || t->strides[n - 1] != 1) {
            PyErr_SetString(PyExc_RuntimeError, "self.stride(-1) must be 1 to view ScalarType as a different size dtype");
            return NULL;
        }
        if (new > old) {
            int ratio = new / old;
            if (sizes[n - 1] % ratio || offset % ratio) {
                PyErr_SetString(PyExc_RuntimeError, "self.size(-1) must be divisible by the size ratio to view ScalarType as a larger dtype");
                return NULL;
            }
            sizes[n - 1] /= ratio;
            for (int i = 0; i < n - 1; i++) {
                if (strides[i] % ratio) { PyErr_SetString(PyExc_RuntimeError, "self.stride(i) must be divisible by the size ratio"); return NULL; }
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
    return (PyObject *)pct_tensor_view_as_dtype(t, n, sizes, strides, offset, dtype);
}

PyObject *pct_flatten(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    int s = pct_wrap_dim(c->v[1].i, t->ndim), e = pct_wrap_dim(c->v[2].i, t->ndim);
    if (s < 0 || e < 0) return NULL; /* a 0-d tensor takes dims -1 and 0 */
    if (t->ndim == 0) return view_impl(c, t, 1, (int64_t[]){1}, true);
    if (s > e) { PyErr_SetString(PyExc_RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim"); return NULL; }
    if (s == e) { Py_INCREF(t); return (PyObject *)t; }
    int64_t shape[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < s; i++) shape[n++] = t->sizes[i];
    int64_t m = 1;
    for (int i = s; i <= e; i++) m *= t->sizes[i];
    shape[n++] = m;
    for (int i = e + 1; i < t->ndim; i++) shape[n++] = t->sizes[i];
    return view_impl(c, t, n, shape, true);
}

PyObject *pct_unflatten(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    const pct_value *sz = &c->v[2];
    /* torch checks the sizes before the dim */
    if (sz->n == 0) { PyErr_SetString(PyExc_RuntimeError, "unflatten: sizes must be non-empty"); return NULL; }
    int d = pct_wrap_dim(c->v[1].i, t->ndim);
    if (d < 0) return NULL;
    int64_t inner[PCT_MAX_DIMS];
    if (pct_check_ndim((int64_t)t->ndim - 1 + sz->n) < 0) return NULL;
    if (infer_size(sz->list, sz->n, t->sizes[d], inner) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_RuntimeError, "unflatten: Provided sizes %s don't multiply up to the size of dim %d (%lld) in the input tensor",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, sz->n, sz->list), d, (long long)t->sizes[d]);
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
static int dim_mask(const pct_value *v, int ndim, bool *mask)
{
    for (int i = 0; i < (ndim ? ndim : 1); i++) mask[i] = v->none; /* a 0-d tensor takes dim 0 (or -1) */
    if (v->none) return 0;
    for (int i = 0; i < v->n; i++) {
        int d = pct_wrap_dim(v->list[i], ndim);
        if (d < 0) return -1;
        if (mask[d]) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", d);
            return -1;
        }
        mask[d] = true;
    }
    return 0;
}

PyObject *pct_squeeze(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    bool mask[PCT_MAX_DIMS];
    if (dim_mask(&c->v[1], t->ndim, mask) < 0) return NULL;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (mask[i] && t->sizes[i] == 1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return finish_view(c, t, n, sizes, strides, t->offset);
}

PyObject *pct_unsqueeze(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    int d = pct_wrap_dim(c->v[1].i, t->ndim + 1);
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

static PyObject *permute_impl(pct_call *c, pct_tensor *t, const int *perm)
{
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) { sizes[i] = t->sizes[perm[i]]; strides[i] = t->strides[perm[i]]; }
    return finish_view(c, t, t->ndim, sizes, strides, t->offset);
}

PyObject *pct_permute(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    const pct_value *d = &c->v[1];
    if (d->n != t->ndim) {
        PyErr_Format(PyExc_RuntimeError, "permute(sparse_coo): number of dimensions in the tensor input does not match the "
                     "length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                     t->ndim, d->n);
        return NULL;
    }
    int perm[PCT_MAX_DIMS];
    bool seen[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < d->n; i++) {
        int w = pct_wrap_dim(d->list[i], t->ndim);
        if (w < 0) return NULL;
        if (seen[w]) { PyErr_SetString(PyExc_RuntimeError, "permute(): duplicate dims are not allowed."); return NULL; }
        seen[w] = true;
        perm[i] = w;
    }
    return permute_impl(c, t, perm);
}

PyObject *pct_transpose(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    int a = pct_wrap_dim(c->v[1].i, t->ndim), b = pct_wrap_dim(c->v[2].i, t->ndim);
    if (a < 0 || b < 0) return NULL;
    int perm[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) perm[i] = i;
    if (t->ndim > 0) { perm[a] = b; perm[b] = a; }
    return permute_impl(c, t, perm);
}

PyObject *pct_t(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
        return NULL;
    }
    int perm[2] = {t->ndim == 2 ? 1 : 0, 0};
    return permute_impl(c, t, perm);
}

PyObject *pct_movedim(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    const pct_value *src = &c->v[1], *dst = &c->v[2];
    if (src->n != dst->n) {
        PyErr_Format(PyExc_RuntimeError, "movedim: Invalid source or destination dims: source (%s dims) should contain the "
                     "same number of dims as destination (%s dims)",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, src->n, src->list),
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, dst->n, dst->list));
        return NULL;
    }
    int perm[PCT_MAX_DIMS];
    bool src_used[PCT_MAX_DIMS] = {0}, dst_used[PCT_MAX_DIMS] = {0};
    for (int i = 0; i < t->ndim; i++) perm[i] = -1;
    for (int i = 0; i < src->n; i++) {
        int s = pct_wrap_dim(src->list[i], t->ndim), d = pct_wrap_dim(dst->list[i], t->ndim);
        if (s < 0 || d < 0) return NULL;
        if (src_used[s] || dst_used[d]) { PyErr_SetString(PyExc_RuntimeError, "movedim: repeated dim in `source` or `destination`"); return NULL; }
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

static PyObject *expand_impl(pct_call *c, pct_tensor *t, int n, const int64_t *req)
{
    if (n < t->ndim) {
        PyErr_Format(PyExc_RuntimeError, "expand(torch.FloatTensor{%s}, size=%s): the number of sizes provided (%d) must be "
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
                PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
                return NULL;
            }
            if (have == want) { sizes[i] = have; strides[i] = t->strides[td]; continue; }
            if (have != 1) {
                PyErr_Format(PyExc_RuntimeError, "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                             "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s", (long long)want, (long long)have, i,
                             pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, n, req),
                             pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, t->ndim, t->sizes));
                return NULL;
            }
        } else if (want < 0) {
            PyErr_Format(PyExc_RuntimeError, "The expanded size of the tensor (%lld) isn't allowed in a leading, non-existing dimension %d",
                         (long long)want, i);
            return NULL;
        }
        sizes[i] = want;
        strides[i] = 0;
    }
    return finish_view(c, t, n, sizes, strides, t->offset);
}

PyObject *pct_expand(pct_call *c) { return expand_impl(c, c->v[0].t, c->v[1].n, c->v[1].list); }
PyObject *pct_expand_as(pct_call *c) { return expand_impl(c, c->v[0].t, c->v[1].t->ndim, c->v[1].t->sizes); }

PyObject *pct_narrow(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim == 0) { PyErr_SetString(PyExc_RuntimeError, "narrow() cannot be applied to a 0-dim tensor."); return NULL; }
    if (c->v[3].i < 0) { /* torch checks the length before the dim and the start */
        PyErr_SetString(PyExc_RuntimeError, "narrow(): length must be non-negative.");
        return NULL;
    }
    int d = pct_wrap_dim(c->v[1].i, t->ndim);
    if (d < 0) return NULL;
    int64_t start = c->v[2].i, len = c->v[3].i, size = t->sizes[d];
    if (start < -size || start > size) {
        PyErr_Format(PyExc_IndexError, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-size, (long long)size, (long long)start);
        return NULL;
    }
    if (start < 0) start += size;
    if (!pct_range_within(start, len, size)) { /* Note [Checked bounds] */
        PyErr_Format(PyExc_RuntimeError, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start,
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

PyObject *pct_select(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim == 0) { PyErr_SetString(PyExc_IndexError, "select() cannot be applied to a 0-dim tensor."); return NULL; }
    int d = pct_wrap_dim(c->v[1].i, t->ndim);
    if (d < 0) return NULL;
    int64_t i = c->v[2].i, size = t->sizes[d];
    if (i < -size || i >= size) {
        PyErr_Format(PyExc_IndexError, "select(): index %lld out of range for tensor of size %s at dimension %d", (long long)i,
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, t->ndim, t->sizes), d);
        return NULL;
    }
    return (PyObject *)select_view(t, d, i < 0 ? i + size : i);
}

PyObject *pct_unbind(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim == 0) { PyErr_SetString(PyExc_IndexError, "Dimension specified as 0 but tensor has no dimensions"); return NULL; }
    int d = pct_wrap_dim(c->v[1].i, t->ndim);
    if (d < 0) return NULL;
    PyObject *r = PyTuple_New((Py_ssize_t)t->sizes[d]);
    for (int64_t i = 0; r && i < t->sizes[d]; i++) {
        PyObject *v = (PyObject *)select_view(t, d, i);
        if (!v) { Py_CLEAR(r); break; }
        PyTuple_SET_ITEM(r, (Py_ssize_t)i, v);
    }
    return r;
}

/* Pieces of dim d with the given lengths, as a tuple of views. */
/* n views of t along dim d: piece i starts at starts[i] (NULL: where the previous one ended) with lengths[i]. */
static PyObject *pieces_at(pct_tensor *t, int d, int64_t n, const int64_t *starts, const int64_t *lengths)
{
    PyObject *r = PyTuple_New((Py_ssize_t)n);
    int64_t start = 0, sizes[PCT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    for (int64_t i = 0; r && i < n; i++) {
        if (starts) start = starts[i];
        sizes[d] = lengths[i];
        PyObject *v = (PyObject *)pct_tensor_view_of(t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
        if (!v) { Py_CLEAR(r); break; }
        PyTuple_SET_ITEM(r, (Py_ssize_t)i, v);
        start += lengths[i];
    }
    return r;
}

static PyObject *pieces(pct_tensor *t, int d, int n, const int64_t *lengths) { return pieces_at(t, d, n, NULL, lengths); }

#define PCT_MAX_PIECES 4096
PyObject *pct_split(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim == 0) { PyErr_SetString(PyExc_RuntimeError, "split expects at least a 1-dimensional tensor"); return NULL; }
    int d = pct_wrap_dim(c->v[2].i, t->ndim);
    if (d < 0) return NULL;
    const pct_value *s = &c->v[1];
    int64_t size = t->sizes[d];
    if (c->op_index == PCT_OP_split) {
        int64_t step = s->i;
        if (step < 0 || (step == 0 && size != 0)) {
            PyErr_Format(PyExc_RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld", (long long)size);
            return NULL;
        }
        int64_t n = step == 0 ? 1 : size / step + (size % step != 0); /* no overflow for a huge step */
        if (n == 0) n = 1;
        if (n > PCT_MAX_PIECES) {
            /* many pieces: fall back to a Python-sized list */
            int64_t *lens = malloc(sizeof(int64_t) * (size_t)n);
            if (!lens) return PyErr_NoMemory();
            for (int64_t i = 0; i < n; i++) lens[i] = (i + 1) * step <= size ? step : size - i * step;
            PyObject *r = pieces(t, d, (int)n, lens);
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
        if (s->list[i] < 0) {
            PyErr_Format(PyExc_RuntimeError, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                         "split_sizes=%s", pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, s->n, s->list));
            return NULL;
        }
        overflow |= pct_add_overflows(total, s->list[i], &total);
    }
    if (overflow || total != size) {
        PyErr_Format(PyExc_RuntimeError, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
                     "dimension %d), but got split_sizes=%s", (long long)size, d,
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, s->n, s->list));
        return NULL;
    }
    return pieces(t, d, s->n, s->list);
}

/* torch.slice's clamping of a bound to [0, size] (negative bounds count from the end). */
static int64_t slice_bound(int64_t i, int64_t size)
{
    if (i < 0) i += size;
    return i < 0 ? 0 : i > size ? size : i;
}

PyObject *pct_tensor_split(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
        return NULL;
    }
    int d = pct_wrap_dim(c->v[2].i, t->ndim);
    if (d < 0) return NULL;
    const pct_value *s = &c->v[1];
    int64_t size = t->sizes[d];
    bool sections = c->op_index == PCT_OP_tensor_split;
    int64_t n = sections ? s->i : s->n + 1;
    if (sections && n <= 0) {
        PyErr_Format(PyExc_RuntimeError, "number of sections must be larger than 0, got %lld", (long long)n);
        return NULL;
    }
    /* torch's vector of pieces fails to allocate as a RuntimeError */
    int64_t *starts = (uint64_t)n > (uint64_t)PY_SSIZE_T_MAX / (2 * sizeof(int64_t)) ? NULL
                      : malloc(sizeof(int64_t) * 2 * (size_t)n);
    if (!starts) { PyErr_SetString(PyExc_RuntimeError, "std::bad_alloc"); return NULL; }
    int64_t *lens = starts + n;
    if (sections) { /* the first size % n pieces get one more */
        for (int64_t i = 0, at = 0; i < n; i++) {
            lens[i] = size / n + (i < size % n ? 1 : 0);
            starts[i] = at;
            at += lens[i];
        }
    } else { /* piece i is t[indices[i-1]:indices[i]] with slice semantics, unsorted and negative indices included */
        for (int64_t i = 0; i < n; i++) {
            int64_t lo = slice_bound(i ? s->list[i - 1] : 0, size), hi = slice_bound(i < s->n ? s->list[i] : size, size);
            starts[i] = lo;
            lens[i] = hi > lo ? hi - lo : 0;
        }
    }
    PyObject *r = pieces_at(t, d, n, starts, lens);
    free(starts);
    return r;
}

PyObject *pct_chunk(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (t->ndim == 0) { PyErr_SetString(PyExc_RuntimeError, "chunk expects at least a 1-dimensional tensor"); return NULL; }
    int64_t chunks = c->v[1].i;
    if (chunks <= 0) { PyErr_Format(PyExc_RuntimeError, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks); return NULL; }
    int d = pct_wrap_dim(c->v[2].i, t->ndim);
    if (d < 0) return NULL;
    int64_t size = t->sizes[d];
    int64_t step = (size + chunks - 1) / chunks;
    if (step == 0) step = 1;
    int64_t n = size == 0 ? 1 : (size + step - 1) / step;
    if (size == 0) n = chunks;
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)n);
    if (!lens) return PyErr_NoMemory();
    for (int64_t i = 0; i < n; i++) lens[i] = size == 0 ? 0 : ((i + 1) * step <= size ? step : size - i * step);
    PyObject *r = pieces(t, d, (int)n, lens);
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

PyObject *pct_diagonal(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    int64_t off = c->v[1].i;
    int a = pct_wrap_dim(c->v[2].i, t->ndim), b = pct_wrap_dim(c->v[3].i, t->ndim);
    if (a < 0 || b < 0) return NULL;
    if (a == b) { PyErr_Format(PyExc_RuntimeError, "diagonal dimensions cannot be identical %lld, %lld", (long long)c->v[2].i, (long long)c->v[3].i); return NULL; }
    return (PyObject *)pct_diagonal_view(t, off, a, b);
}

PyObject *pct_as_strided(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    const pct_value *sz = &c->v[1], *st = &c->v[2];
    if (sz->n != st->n) {
        PyErr_Format(PyExc_RuntimeError, "mismatch in length of strides and shape");
        return NULL;
    }
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    for (int i = 0; i < st->n; i++) {
        if (st->list[i] < 0) {
            PyErr_Format(PyExc_RuntimeError, "as_strided: Negative strides are not supported at the moment, got strides: %s",
                         pct_shape_str(b1, sizeof b1, st->n, st->list));
            return NULL;
        }
    }
    int64_t offset = c->v[3].none ? t->offset : c->v[3].i;
    if (offset < 0) { PyErr_Format(PyExc_RuntimeError, "Tensor: invalid storage offset %lld", (long long)offset); return NULL; }
    for (int i = 0; i < sz->n; i++) {
        if (sz->list[i] < 0) { /* torch's storage-size computation reports a negative size as an overflow */
            PyErr_Format(PyExc_RuntimeError, "Storage size calculation overflowed with sizes=%s and strides=%s",
                         pct_shape_str(b1, sizeof b1, sz->n, sz->list), pct_shape_str(b2, sizeof b2, st->n, st->list));
            return NULL;
        }
    }
    if (pct_view_check_storage(t->storage, sz->n, sz->list, st->list, offset, pct_tensor_itemsize(t)) < 0) return NULL;
    return finish_view(c, t, sz->n, sz->list, st->list, offset);
}

PyObject *pct_unfold(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    int d = pct_wrap_dim(c->v[1].i, t->ndim);
    if (d < 0) return NULL;
    int64_t size = c->v[2].i, step = c->v[3].i, dsize = t->ndim ? t->sizes[d] : 1;
    if (size > dsize) {
        PyErr_Format(PyExc_RuntimeError, "maximum size for tensor at dimension %d is %lld but size is %lld", d, (long long)dsize, (long long)size);
        return NULL;
    }
    if (size < 0) { PyErr_Format(PyExc_RuntimeError, "size is %lld but must be >= 0", (long long)size); return NULL; }
    if (step <= 0) { PyErr_Format(PyExc_RuntimeError, "step is %lld but must be > 0", (long long)step); return NULL; }
    if (pct_check_ndim(t->ndim + 1) < 0) return NULL;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int n = t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)n);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)n);
    if (n == 0) { sizes[0] = size; strides[0] = 1; return (PyObject *)pct_tensor_view_of(t, 1, sizes, strides, t->offset); }
    sizes[d] = (dsize - size) / step + 1;
    strides[d] = t->strides[d] * step;
    sizes[n] = size;
    strides[n] = t->strides[d];
    return (PyObject *)pct_tensor_view_of(t, n + 1, sizes, strides, t->offset);
}

PyObject *pct_tensor_alias(PyTypeObject *type, pct_tensor *src, bool share_version);

PyObject *pct_detach(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (c->inplace) {
        if (t->base) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                            "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                            "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                            "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
            return NULL;
        }
        Py_CLEAR(t->grad_fn);
        t->flags &= (uint8_t)~PCT_FLAG_REQUIRES_GRAD;
        Py_INCREF(t);
        return (PyObject *)t;
    }
    return pct_tensor_alias(&pct_TensorType, t, true);
}

PyObject *pct_alias(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    return (PyObject *)pct_tensor_view_of(t, t->ndim, t->sizes, t->strides, t->offset);
}
