/* tensor.c: creating tensors and views; shape bookkeeping. */
#include "tensor.h"
#include "backend.h"
#include "error.h"
#include <stdio.h>
#include <stdlib.h>

int pct_wrap_dim(int64_t dim, int64_t ndim)
{
    int64_t n = ndim > 0 ? ndim : 1; /* a 0-d tensor accepts dims -1 and 0 */
    if (dim < -n || dim >= n) {
        pct_error(PCT_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-n, (long long)(n - 1), (long long)dim);
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

int pct_dims_mask(const int64_t *dims, int n, int ndim, bool *mask)
{
    for (int d = 0; d < (ndim > 0 ? ndim : 1); d++) mask[d] = false;
    for (int i = 0; i < n; i++) {
        int d = pct_wrap_dim(dims[i], ndim);
        if (d < 0) return -1;
        if (mask[d]) {
            pct_error(PCT_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", d);
            return -1;
        }
        mask[d] = true;
    }
    return 0;
}

const char *pct_shape_str(char *buf, size_t n, int ndim, const int64_t *sizes)
{
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (used < n) snprintf(buf + used, n - used, "]");
    return buf;
}

void pct_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides_out)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides_out[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

bool pct_shape_is_contiguous(int ndim, const int64_t *sizes, const int64_t *strides)
{
    /* torch counts every empty tensor as contiguous, whatever its strides (a permuted (0, 2, 3) too) */
    for (int i = 0; i < ndim; i++)
        if (sizes[i] == 0) return true;
    int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (sizes[i] != 1 && strides[i] != expected) return false;
        expected *= sizes[i];
    }
    return true;
}

/* Whether t's dims, taken in `order` (innermost first), are laid out densely; size-1 dims may have any stride. */
static bool is_dense_in_order(const pct_tensor *t, int ndim, const int *order)
{
    int64_t expected = 1;
    if (t->ndim != ndim) return false;
    for (int k = 0; k < ndim; k++) {
        int d = order[k];
        if (t->sizes[d] == 1) continue;
        if (t->strides[d] != expected) return false;
        expected *= t->sizes[d];
    }
    return true;
}

bool pct_tensor_is_channels_last(const pct_tensor *t)
{
    static const int order[4] = {1, 3, 2, 0};
    return is_dense_in_order(t, 4, order);
}

bool pct_tensor_is_channels_last_3d(const pct_tensor *t)
{
    static const int order[5] = {1, 4, 3, 2, 0};
    return is_dense_in_order(t, 5, order);
}

void pct_tensor_refresh(pct_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->sizes[i];
    t->numel = n;
    if (pct_shape_is_contiguous(t->ndim, t->sizes, t->strides)) t->flags |= PCT_FLAG_CONTIGUOUS;
    else t->flags &= (uint8_t)~PCT_FLAG_CONTIGUOUS;
}

int pct_tensor_set_shape(pct_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides)
{
    if (ndim > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "pyctorch supports at most %d dimensions, got %d", PCT_MAX_DIMS, ndim);
        return -1;
    }
    /* numel must fit int64 (sticky: a zero size does not undo an overflow), as torch checks for every shape */
    bool overflow = false;
    int64_t numel = 1;
    for (int i = 0; i < ndim && !overflow; i++) overflow = __builtin_mul_overflow(numel, sizes[i], &numel);
    if (overflow) {
        pct_error_str(PCT_ERR_RUNTIME, "numel: integer multiplication overflow");
        return -1;
    }
    int64_t *block = t->inline_dims;
    if (ndim > PCT_INLINE_DIMS) {
        block = malloc(sizeof(int64_t) * 2 * (size_t)ndim);
        if (!block) { pct_error_nomem(); return -1; }
    }
    /* sizes/strides may alias the old block: copy before freeing it */
    int64_t tmp[2 * PCT_MAX_DIMS];
    if (ndim) memcpy(tmp, sizes, sizeof(int64_t) * (size_t)ndim); /* sizes may be NULL for 0-d */
    if (strides && ndim) memcpy(tmp + ndim, strides, sizeof(int64_t) * (size_t)ndim);
    else if (ndim) pct_contiguous_strides(ndim, tmp, tmp + ndim);
    if (t->sizes && t->sizes != t->inline_dims) free(t->sizes);
    if (ndim) memcpy(block, tmp, sizeof(int64_t) * 2 * (size_t)ndim);
    t->sizes = block;
    t->strides = block + ndim;
    t->ndim = ndim;
    pct_tensor_refresh(t);
    return 0;
}

int64_t pct_strided_nbytes(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t item)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    for (int i = 0; i < ndim; i++)
        if (sizes[i] == 0) return 0;
    int64_t last = offset, step, nbytes;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &step) || __builtin_add_overflow(last, step, &last)) goto overflow;
    if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, item, &nbytes)) goto overflow;
    return nbytes;
overflow:
    pct_error(PCT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                 pct_shape_str(b1, sizeof b1, ndim, sizes), pct_shape_str(b2, sizeof b2, ndim, strides));
    return -1;
}

/* Note [Read-only storages]: a tensor over a non-writable NumPy array (a read-only np.memmap, an array with
 * writeable=False) shares memory that may be mapped read-only, where a write faults. torch warns at creation
 * and leaves writes undefined; pyctorch warns the same way and refuses every write it can see: the in-place
 * and out= target of every op (the dispatcher), index assignment, and writable buffer or NumPy exports. */
int pct_check_writable(const pct_tensor *t)
{
    if (!t->storage->readonly) return 0;
    pct_error_str(PCT_ERR_RUNTIME, "cannot write to this tensor: its memory is read-only (it shares a non-writable "
                                        "NumPy array). Make the array writable, or clone() the tensor, before writing.");
    return -1;
}

int pct_view_check_storage(const pct_storage *s, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                           int64_t item)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (offset < 0) {
        pct_error(PCT_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
        return -1;
    }
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s", (long long)sizes[i],
                         pct_shape_str(b1, sizeof b1, ndim, sizes));
            return -1;
        }
    }
    int64_t need = pct_strided_nbytes(ndim, sizes, strides, offset, item);
    if (need < 0) return -1;
    if (need > 0 && (uint64_t)need > (uint64_t)s->nbytes) {
        pct_error(PCT_ERR_RUNTIME, "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %d requiring a "
                     "storage size of %lld are out of bounds for storage of size %zu",
                     pct_shape_str(b1, sizeof b1, ndim, sizes), pct_shape_str(b2, sizeof b2, ndim, strides),
                     (long long)offset, (int)item, (long long)need, s->nbytes);
        return -1;
    }
    return 0;
}

int64_t pct_tensor_storage_extent(const pct_tensor *t)
{
    if (t->numel == 0) return 0;
    int64_t last = t->offset;
    for (int i = 0; i < t->ndim; i++) last += (t->sizes[i] - 1) * t->strides[i];
    return (last + 1) * pct_tensor_itemsize(t);
}

int pct_tensor_resize_(pct_tensor *t, int ndim, const int64_t *sizes)
{
    char buf[PCT_SHAPE_BUF];
    /* the same sizes keep the strides (a transposed out= stays transposed), as torch's resize_ */
    if (t->ndim == ndim && (ndim == 0 || memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim) == 0)) return 0;
    uint64_t n = 1, item = (uint64_t)pct_tensor_itemsize(t);
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s", (long long)sizes[i],
                         pct_shape_str(buf, sizeof buf, ndim, sizes));
            return -1;
        }
        if (sizes[i] && n > (uint64_t)INT64_MAX / (uint64_t)sizes[i]) overflow = true;
        else n *= (uint64_t)sizes[i];
    }
    if (overflow || (n && n > (uint64_t)INT64_MAX / item)) {
        pct_error(PCT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s", pct_shape_str(buf, sizeof buf, ndim, sizes));
        return -1;
    }
    if (pct_storage_resize(t->storage, (size_t)(n * item) + (size_t)t->offset * (size_t)item) < 0) return -1;
    return pct_tensor_set_shape(t, ndim, sizes, NULL);
}

static pct_version *version_new(void)
{
    pct_version *v = malloc(sizeof *v);
    if (!v) { pct_error_nomem(); return NULL; }
    atomic_init(&v->refcount, 1);
    atomic_init(&v->value, 0);
    return v;
}

/* A bare tensor object of the base type: storage and version still NULL. */
static pct_tensor *tensor_alloc(void)
{
    return pct_runtime.tensor_alloc(); /* zero-filled; dealloc copes with NULL fields */
}

int pct_tensor_init_alias(pct_tensor *t, pct_tensor *src, bool share_version)
{
    pct_storage_incref(src->storage);
    t->storage = src->storage;
    t->dtype = src->dtype;
    t->device_type = src->device_type;
    t->device_index = src->device_index;
    t->offset = src->offset;
    if (share_version) {
        atomic_fetch_add_explicit(&src->version->refcount, 1, memory_order_relaxed);
        t->version = src->version;
    } else if (!(t->version = version_new())) {
        return -1;
    }
    return pct_tensor_set_shape(t, src->ndim, src->sizes, src->strides);
}

pct_tensor *pct_tensor_new_alias(pct_tensor *src, bool share_version)
{
    pct_tensor *t = tensor_alloc();
    if (t && pct_tensor_init_alias(t, src, share_version) < 0) PCT_CLEAR(t);
    return t;
}

pct_tensor *pct_tensor_from_storage(pct_storage *storage, int ndim, const int64_t *sizes,
                                    const int64_t *strides, int64_t offset, int dtype)
{
    pct_tensor *t = tensor_alloc();
    if (!t) return NULL;
    pct_storage_incref(storage);
    t->storage = storage;
    t->dtype = (uint8_t)dtype;
    t->device_type = storage->device_type;
    t->device_index = storage->device_index;
    t->offset = offset;
    if (!(t->version = version_new()) || pct_tensor_set_shape(t, ndim, sizes, strides) < 0) {
        PCT_DECREF(t);
        return NULL;
    }
    return t;
}

pct_tensor *pct_tensor_empty(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index)
{
    int64_t n = 1, nbytes;
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                         (long long)sizes[i], pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, ndim, sizes));
            return NULL;
        }
        overflow = overflow || __builtin_mul_overflow(n, sizes[i], &n);
    }
    /* the overflow is sticky: a later zero size does not undo it (torch's rule) */
    if (overflow || __builtin_mul_overflow(n, (int64_t)pct_dtype_itemsize[dtype], &nbytes)) {
        pct_error(PCT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                     pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, ndim, sizes));
        return NULL;
    }
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return NULL;
    pct_storage *s = b->storage_new((size_t)n * (size_t)pct_dtype_itemsize[dtype], device_index);
    if (!s) return NULL;
    pct_tensor *t = pct_tensor_from_storage(s, ndim, sizes, NULL, 0, dtype);
    pct_storage_decref(s);
    return t;
}

pct_tensor *pct_tensor_zeros_on(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index)
{
    if (device_type == PCT_CPU) return pct_tensor_zeros(ndim, sizes, dtype);
    pct_tensor *t = pct_tensor_empty(ndim, sizes, dtype, device_type, device_index);
    const pct_scalar zero = {.kind = PCT_SCALAR_INT, .i = 0, .d = 0.0};
    if (t && pct_backend_of(device_type)->fill(t, &zero) < 0) PCT_CLEAR(t);
    return t;
}

pct_tensor *pct_tensor_zeros(int ndim, const int64_t *sizes, int dtype)
{
    pct_tensor *t = pct_tensor_empty(ndim, sizes, dtype, PCT_CPU, -1);
    if (t) memset(t->storage->data, 0, (size_t)t->numel * (size_t)pct_dtype_itemsize[dtype]);
    return t;
}

pct_tensor *pct_tensor_empty_like(const pct_tensor *t, int dtype)
{
    return pct_tensor_empty(t->ndim, t->sizes, dtype < 0 ? t->dtype : dtype, t->device_type, t->device_index);
}

pct_tensor *pct_tensor_view_of(pct_tensor *src, int ndim, const int64_t *sizes,
                               const int64_t *strides, int64_t offset)
{
    return pct_tensor_view_as_dtype(src, ndim, sizes, strides, offset, src->dtype);
}

pct_tensor *pct_tensor_view_as_dtype(pct_tensor *src, int ndim, const int64_t *sizes, const int64_t *strides,
                                     int64_t offset, int dtype)
{
    pct_tensor *t = tensor_alloc();
    if (!t) return NULL;
    pct_storage_incref(src->storage);
    t->storage = src->storage;
    atomic_fetch_add_explicit(&src->version->refcount, 1, memory_order_relaxed);
    t->version = src->version;
    t->dtype = (uint8_t)dtype;
    t->device_type = src->device_type;
    t->device_index = src->device_index;
    t->offset = offset;
    pct_object *root = src->base ? src->base : (pct_object *)src;
    PCT_INCREF(root);
    t->base = root;
    if (pct_tensor_set_shape(t, ndim, sizes, strides) < 0) { PCT_DECREF(t); return NULL; }
    /* Note [Checked bounds]: whatever a view op computed, a view never reaches past its storage */
    if (pct_view_check_storage(t->storage, ndim, t->sizes, t->strides, offset, pct_tensor_itemsize(t)) < 0) {
        PCT_DECREF(t);
        return NULL;
    }
    return t;
}

pct_tensor *pct_tensor_scalar(int dtype, double dvalue, int64_t ivalue, bool is_float)
{
    pct_tensor *t = pct_tensor_empty(0, NULL, dtype, PCT_CPU, -1);
    if (!t) return NULL;
    if (is_float) pct_store_double(t->storage->data, dtype, dvalue);
    else pct_store_int64(t->storage->data, dtype, ivalue);
    return t;
}

void pct_version_release(pct_version *v);
void pct_version_release(pct_version *v)
{
    if (v && atomic_fetch_sub_explicit(&v->refcount, 1, memory_order_acq_rel) == 1) free(v);
}
