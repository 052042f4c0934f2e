/* cuda_copy.c: the backend's copy and fill slots, and moving a storage's bytes between host and device.
 *
 * A copy whose two sides are dense with the same dtype and layout is one memcpy (host to device, device to host,
 * device to device). A copy between device tensors converts and lays out on the device (copy.cu's kernel); one
 * between host and device otherwise goes through the host: the device side's storage is brought over whole, the
 * CPU's copy loop converts and lays out the values, and a written device storage goes back whole. The simulated
 * device, which runs no kernels, takes the host path for every copy, and for fills other than zero.
 */
#include "cuda_internal.h"
#include "aten/error.h"
#include "aten/iter.h"
#include "loop_plan.h"
#include <math.h>
#include <string.h>

int pct_cuda_memcpy(void *dst, const void *src, size_t nbytes, int kind, int device)
{
    if (!nbytes) return 0;
    int previous;
    if (pct_cuda_device_enter(device, &previous) < 0) return -1;
    void *stream = pct_cuda_current_stream_handle(device);
    int rc = pct_cuda_drv->memcpy_async(dst, src, nbytes, kind, stream);
    /* The host reads what it copied out next: wait for a device-to-host copy. A host-to-device one need not be
     * waited for: from pageable memory the call returns once the source is staged, and page-locked memory is freed
     * through cudaFreeHost, which waits for the device. */
    if (!rc && kind == PCT_COPY_D2H) rc = pct_cuda_drv->stream_synchronize(stream);
    pct_cuda_device_restore(previous);
    return rc ? pct_cuda_raise(rc, kind == PCT_COPY_D2H ? "cudaMemcpyAsync (device to host)"
                                   : kind == PCT_COPY_H2D ? "cudaMemcpyAsync (host to device)"
                                                          : "cudaMemcpyAsync (device to device)")
              : 0;
}

/* A CPU storage holding a copy of device storage s's bytes (new reference, resizable); NULL with an error. */
pct_storage *pct_cuda_storage_to_host(const pct_storage *s)
{
    pct_storage *h = pct_storage_new_cpu(s->nbytes);
    if (!h) return NULL;
    h->resizable = 1;
    if (pct_cuda_memcpy(h->data, s->data, s->nbytes, PCT_COPY_D2H, s->device_index) < 0) {
        pct_storage_decref(h);
        return NULL;
    }
    return h;
}

/* Device storage s takes host storage h's bytes (h may have grown: s grows with it); -1 with an error. */
int pct_cuda_storage_from_host(pct_storage *s, const pct_storage *h)
{
    if (h->nbytes > s->nbytes && pct_storage_resize(s, h->nbytes) < 0) return -1;
    return pct_cuda_memcpy(s->data, h->data, h->nbytes, PCT_COPY_H2D, s->device_index);
}

/* A CPU tensor of t's geometry over a host copy of its storage (new reference); NULL with an error. */
static pct_tensor *host_view_of(const pct_tensor *t, pct_storage **host)
{
    if (!(*host = pct_cuda_storage_to_host(t->storage))) return NULL;
    pct_tensor *v = pct_tensor_from_storage(*host, t->ndim, t->sizes, t->strides, t->offset, t->dtype);
    if (!v) pct_storage_decref(*host);
    return v;
}

/* Both dense in the same layout with the same dtype and shape: their bytes are the same bytes. */
static bool same_dense_layout(const pct_tensor *a, const pct_tensor *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim && pct_tensor_non_overlapping_and_dense(a) &&
           !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) &&
           !memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim);
}

static char *data_of(const pct_tensor *t) { return (char *)t->storage->data + t->offset * pct_dtype_itemsize[t->dtype]; }

/* dst (on the device) = src (on the device or the CPU) through the host; -1 with an error. */
static int copy_into_device_via_host(pct_tensor *dst, const pct_tensor *src)
{
    pct_storage *dh = NULL, *sh = NULL;
    pct_tensor *dv = NULL, *sv = NULL;
    int rc = -1;
    PCT_TRY(dv = host_view_of(dst, &dh));
    if (src->device_type == PCT_CUDA) PCT_TRY(sv = host_view_of(src, &sh));
    else PCT_INCREF(sv = (pct_tensor *)src);
    PCT_TRY_INT(pct_copy_(dv, sv));
    rc = pct_cuda_storage_from_host(dst->storage, dh);
fail:
    PCT_XDECREF(dv);
    PCT_XDECREF(sv);
    if (dh) pct_storage_decref(dh);
    if (sh) pct_storage_decref(sh);
    return rc;
}

int pct_cuda_copy(pct_tensor *dst, const pct_tensor *src)
{
    if (dst->numel == 0) return 0;
    const size_t nbytes = (size_t)dst->numel * (size_t)pct_dtype_itemsize[dst->dtype];
    if (same_dense_layout(dst, src)) { /* one memcpy (src is not broadcast: same shape, dense) */
        int kind = src->device_type != PCT_CUDA ? PCT_COPY_H2D : dst->device_type != PCT_CUDA ? PCT_COPY_D2H : PCT_COPY_D2D;
        int device = kind == PCT_COPY_D2H ? src->device_index : dst->device_index;
        return pct_cuda_memcpy(data_of(dst), data_of(src), nbytes, kind, device);
    }
    /* within a device: the copy kernel converts and lays out (copy.cu); between two, through the host */
    if (dst->device_type == PCT_CUDA && src->device_type == PCT_CUDA && dst->device_index == src->device_index &&
        pct_cuda_drv->has_kernels)
        return pct_cuda_copy_on_device(dst, src);
    if (dst->device_type == PCT_CUDA) return copy_into_device_via_host(dst, src);
    /* device to host: the source's storage comes over, the CPU lays it out */
    pct_storage *sh = NULL;
    pct_tensor *sv = host_view_of(src, &sh);
    if (!sv) return -1;
    int rc = pct_copy_(dst, sv);
    PCT_DECREF(sv);
    pct_storage_decref(sh);
    return rc;
}

/* The value's bytes are all zero in t's dtype (0, False, +0.0): a memset does. */
static bool zero_bytes(const pct_scalar *v)
{
    if (v->kind == PCT_SCALAR_FLOAT) return v->d == 0 && !signbit(v->d);
    return v->kind == PCT_SCALAR_INT || v->kind == PCT_SCALAR_BOOL ? v->i == 0 : false;
}

int pct_cuda_fill(pct_tensor *t, const pct_scalar *value)
{
    if (t->numel == 0) return 0;
    if (zero_bytes(value) && pct_tensor_non_overlapping_and_dense(t)) {
        int previous;
        if (pct_cuda_device_enter(t->device_index, &previous) < 0) return -1;
        /* dense: the elements span numel items from the lowest stride's start, which is the data pointer */
        int rc = pct_cuda_drv->memset_async(data_of(t), 0, (size_t)t->numel * (size_t)pct_dtype_itemsize[t->dtype],
                                            pct_cuda_current_stream_handle(t->device_index));
        pct_cuda_device_restore(previous);
        return rc ? pct_cuda_raise(rc, "cudaMemsetAsync") : 0;
    }
    if (pct_cuda_drv->has_kernels) return pct_cuda_fill_on_device(t, value); /* copy.cu's fill kernel */
    pct_storage *h = NULL;
    pct_tensor *v = host_view_of(t, &h);
    if (!v) return -1;
    int rc = pct_backends[PCT_CPU]->fill(v, value);
    if (rc == 0) rc = pct_cuda_storage_from_host(t->storage, h);
    PCT_DECREF(v);
    pct_storage_decref(h);
    return rc;
}
