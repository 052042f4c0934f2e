/* tensor.h: the tensor: a strided view over a refcounted storage.
 *
 * A pct_tensor is itself the binding's object (its Tensor type): it starts with the binding's object header
 * (Note [Objects of the binding] in runtime.h), so creating one is a single allocation, kernels read fields directly,
 * and nothing here needs Python. References to a tensor are counted with PCT_INCREF/PCT_DECREF (runtime.h).
 *
 * Ownership of the fields:
 *   storage   one reference (pct_storage_incref/decref), never NULL
 *   version   one reference to the version counter shared with views and detach()
 *   sizes/strides  point into inline_dims, or into one malloc'd block owned here
 *   grad, grad_fn, base, hooks, post_acc_hooks  owned references or NULL (autograd
 *             fields; hooks and post_acc_hooks are dicts {handle id: callable})
 *   grad_acc  a weak reference to this leaf's AccumulateGrad node, or NULL
 * Strides and offset count elements, as in torch.
 */
#ifndef PCT_TENSOR_H
#define PCT_TENSOR_H
#include "runtime.h"
#include "dtype.h"
#include "storage.h"

#define PCT_MAX_DIMS 64
#define PCT_INLINE_DIMS 5

typedef struct pct_version {
    atomic_long refcount;
    atomic_long value;
} pct_version;

enum {
    PCT_FLAG_REQUIRES_GRAD = 1 << 0,
    PCT_FLAG_WRAPPED_NUMBER = 1 << 1, /* a Python scalar made a 0-d tensor for promotion */
    PCT_FLAG_CONTIGUOUS = 1 << 2,     /* cached is_contiguous() */
    PCT_FLAG_RETAINS_GRAD = 1 << 3,
    PCT_FLAG_INFERENCE = 1 << 4,
    PCT_FLAG_UINT64_NUMBER = 1 << 5,  /* with WRAPPED_NUMBER: an int64 holding the bits of a Python int in
                                          [2^63, 2^64), which torch makes a uint64 number (Note [uint64 scalars]) */
    PCT_FLAG_FUNCTION_VIEW = 1 << 6,  /* a view a custom autograd Function returned: writing it in place under
                                          autograd is refused, as torch's CreationMeta::IN_CUSTOM_FUNCTION */
    PCT_FLAG_CALL_NUMBER = 1 << 7,    /* with WRAPPED_NUMBER: made from a Python number by the argument parser of the
                                          call now running; cleared when the call ends (Note [Arithmetic of Python
                                          numbers] in iter.c) */
};

typedef struct pct_tensor {
    pct_object_head head;    /* the binding's object header: reference count and type */
    pct_storage *storage;
    pct_version *version;
    int64_t *sizes;
    int64_t *strides;
    int64_t offset;          /* storage offset in elements */
    int64_t numel;
    int32_t ndim;
    uint8_t dtype;
    int8_t device_type;
    int8_t device_index;
    uint8_t flags;
    uint32_t output_nr;      /* which output of grad_fn this is (autograd) */
    int64_t view_version;    /* a view: the version its grad_fn was recorded at (autograd
                                regenerates a stale one from its base's current history) */
    pct_object *grad;
    pct_object *grad_fn;
    pct_object *base;          /* the root tensor this is a view of, or NULL */
    pct_object *hooks;         /* a leaf's gradient hooks, run before accumulation */
    pct_object *post_acc_hooks;/* register_post_accumulate_grad_hook callables */
    pct_object *grad_acc;      /* weakref to the AccumulateGrad node of a leaf */
    pct_object *dict;          /* instance __dict__ for subclasses and attributes */
    pct_object *weakrefs;
    int64_t inline_dims[2 * PCT_INLINE_DIMS];
} pct_tensor;


static inline char *pct_tensor_data(const pct_tensor *t)
{
    return (char *)t->storage->data + t->offset * pct_dtype_itemsize[t->dtype];
}
static inline int64_t pct_tensor_itemsize(const pct_tensor *t) { return pct_dtype_itemsize[t->dtype]; }
static inline bool pct_tensor_is_contiguous(const pct_tensor *t) { return (t->flags & PCT_FLAG_CONTIGUOUS) != 0; }
static inline bool pct_tensor_requires_grad(const pct_tensor *t) { return (t->flags & PCT_FLAG_REQUIRES_GRAD) != 0; }
/* 0 when a tensor of ndim dims can be made; -1 with RuntimeError naming the limit (torch has none) otherwise. Every
 * op that adds dims checks before it fills its int64_t[PCT_MAX_DIMS] shape arrays. */
static inline int pct_check_ndim(int64_t ndim)
{
    if (ndim <= PCT_MAX_DIMS) return 0;
    pct_error(PCT_ERR_RUNTIME, "pyctorch supports at most %d dimensions, got %lld", PCT_MAX_DIMS, (long long)ndim);
    return -1;
}
/* Wrap a possibly negative dim into [0, ndim); -1 with IndexError (torch's text). */
int pct_wrap_dim(int64_t dim, int64_t ndim);
/* mask[d] (for d < max(ndim, 1)) = whether dims[0 .. n) names dim d, negatives wrapped; -1 with torch's error for a
 * dim out of range or named twice. */
int pct_dims_mask(const int64_t *dims, int n, int ndim, bool *mask);

/* A new contiguous tensor with uninitialised memory; NULL with exception.
 * `type` is the Python type to instantiate (NULL: Tensor). */
pct_tensor *pct_tensor_empty(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index);
/* Zeros on a device (pct_tensor_zeros: the CPU); NULL with an error. */
pct_tensor *pct_tensor_zeros_on(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index);
pct_tensor *pct_tensor_zeros(int ndim, const int64_t *sizes, int dtype);
pct_tensor *pct_tensor_empty_like(const pct_tensor *t, int dtype);
/* A tensor over `storage` (a new reference is taken) with its own fresh version counter. */
pct_tensor *pct_tensor_from_storage(pct_storage *storage, int ndim, const int64_t *sizes,
                                    const int64_t *strides, int64_t offset, int dtype);
/* A view of `src`: same storage, version counter and root base. */
pct_tensor *pct_tensor_view_of(pct_tensor *src, int ndim, const int64_t *sizes,
                               const int64_t *strides, int64_t offset);
/* The same with the view's own dtype (Tensor.view(dtype)): sizes, strides and offset count its elements. */
pct_tensor *pct_tensor_view_as_dtype(pct_tensor *src, int ndim, const int64_t *sizes, const int64_t *strides,
                                     int64_t offset, int dtype);
/* A tensor object over src's storage with src's geometry and dtype, sharing src's version counter or with its own
 * (detach(), alias(), and the binding's subclass aliases, which allocate t themselves); -1 / NULL with an error. */
int pct_tensor_init_alias(pct_tensor *t, pct_tensor *src, bool share_version);
pct_tensor *pct_tensor_new_alias(pct_tensor *src, bool share_version);
/* The diagonal (offset off) of dims a != b as a view (views.c). */
pct_tensor *pct_diagonal_view(pct_tensor *t, int64_t off, int a, int b);
/* A 0-d tensor holding one value converted to `dtype`. */
pct_tensor *pct_tensor_scalar(int dtype, double dvalue, int64_t ivalue, bool is_float);

/* Replace shape and strides (NULL strides: contiguous); -1 with exception. */
int pct_tensor_set_shape(pct_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides);
/* Resize (as for out= arguments): contiguous sizes, storage grown to fit. Checks for
 * negative sizes and byte-count overflow before touching anything; -1 with exception. */
int pct_tensor_resize_(pct_tensor *t, int ndim, const int64_t *sizes);
/* Recompute numel and the contiguity flag after a shape change. */
void pct_tensor_refresh(pct_tensor *t);
void pct_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides_out);
bool pct_shape_is_contiguous(int ndim, const int64_t *sizes, const int64_t *strides);
/* torch's is_contiguous(memory_format=torch.channels_last): 4-d, dims in memory order C, W, H, N. */
bool pct_tensor_is_channels_last(const pct_tensor *t);
/* torch's is_contiguous(memory_format=torch.channels_last_3d): 5-d, dims in memory order C, W, H, D, N. */
bool pct_tensor_is_channels_last_3d(const pct_tensor *t);
/* Bytes of storage a view of non-negative sizes/strides needs, (offset + sum((size-1)*stride) + 1) * item, 0 when
 * empty; -1 with torch's "Storage size calculation overflowed" RuntimeError when that overflows int64. */
int64_t pct_strided_nbytes(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t item);
/* 0 when t's memory may be written; -1 with RuntimeError for a read-only storage (Note [Read-only storages]). */
int pct_check_writable(const pct_tensor *t);
/* 0 when a view (sizes, non-negative strides, offset, element size item) lies inside storage s; -1 with torch's
 * "setStorage: ... out of bounds" (or invalid offset / size overflow) RuntimeError otherwise. */
int pct_view_check_storage(const pct_storage *s, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                           int64_t item);
/* Bytes of storage needed by this view: (max reachable element + 1) * itemsize. */
int64_t pct_tensor_storage_extent(const pct_tensor *t);

static inline void pct_tensor_bump_version(pct_tensor *t)
{
    atomic_fetch_add_explicit(&t->version->value, 1, memory_order_relaxed);
}

/* Formats "[2, 3]" into buf for error messages. */
const char *pct_shape_str(char *buf, size_t n, int ndim, const int64_t *sizes);
#define PCT_SHAPE_BUF 256

#endif
