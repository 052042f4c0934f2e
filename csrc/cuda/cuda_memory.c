/* cuda_memory.c: device storages from one caching allocator per device (Note [Caching allocator]), and pinned host
 * storages.
 *
 * Ownership: the allocators are made on a device's first allocation and live as long as the process (cached segments
 * go back to the driver through empty_cache); a device storage owns its block, given back to its device's allocator
 * when the storage dies. A pinned storage owns its page-locked block.
 */
#include "cuda_internal.h"
#include "aten/caching_allocator.h"
#include "aten/error.h"
#include <pthread.h>
#include <string.h>

static pthread_mutex_t allocators_lock = PTHREAD_MUTEX_INITIALIZER;
static pct_caching_allocator *allocators[PCT_CUDA_MAX_DEVICES];

/* ---- the device's raw operations, as the caching allocator calls them ---- */

static int raw_alloc(void *ctx, int device, size_t nbytes, void **ptr)
{
    (void)ctx;
    int previous;
    if (pct_cuda_device_enter(device, &previous) < 0) return -1;
    int rc = pct_cuda_drv->malloc(ptr, nbytes);
    pct_cuda_device_restore(previous);
    if (rc == PCT_CUDA_ERROR_MEMORY_ALLOCATION) {
        (void)pct_cuda_drv->last_error(); /* the failed cudaMalloc is also the runtime's last error: not a kernel's */
        return 1;
    }
    return rc ? pct_cuda_raise(rc, "cudaMalloc") : 0;
}

static int raw_free(void *ctx, int device, void *ptr)
{
    (void)ctx;
    int previous;
    if (pct_cuda_device_enter(device, &previous) < 0) return -1;
    int rc = pct_cuda_drv->free(ptr);
    pct_cuda_device_restore(previous);
    return rc ? pct_cuda_raise(rc, "cudaFree") : 0;
}

static int raw_mem_info(void *ctx, int device, size_t *free_bytes, size_t *total_bytes)
{
    (void)ctx;
    return pct_cuda_mem_get_info(device, free_bytes, total_bytes);
}

static void *raw_event_record(void *ctx, int device, int64_t stream)
{
    (void)ctx;
    void *e = pct_cuda_event_new(device, 0, 0);
    if (e && pct_cuda_event_record(e, device, stream) < 0) {
        pct_cuda_event_destroy(e);
        return NULL;
    }
    return e;
}

static int raw_event_query(void *ctx, void *event) { (void)ctx; return pct_cuda_event_query(event); }
static void raw_event_destroy(void *ctx, void *event) { (void)ctx; pct_cuda_event_destroy(event); }
static int raw_synchronize(void *ctx, int device) { (void)ctx; return pct_cuda_synchronize(device); }

static const pct_device_memory cuda_device_memory = {
    .raw_alloc = raw_alloc,
    .raw_free = raw_free,
    .mem_info = raw_mem_info,
    .event_record = raw_event_record,
    .event_query = raw_event_query,
    .event_destroy = raw_event_destroy,
    .synchronize = raw_synchronize,
};

/* The allocator of a checked device index, made on first use; NULL with an error. */
static pct_caching_allocator *allocator_of(int device)
{
    pthread_mutex_lock(&allocators_lock);
    if (!allocators[device]) allocators[device] = pct_caching_allocator_new(&cuda_device_memory, device);
    pct_caching_allocator *a = allocators[device];
    pthread_mutex_unlock(&allocators_lock);
    return a;
}

/* ---- storages ---- */

static void *cuda_alloc_unused(size_t nbytes) { (void)nbytes; return NULL; } /* storages come from storage_new */

static void cuda_free_on_device(void *ptr, size_t nbytes, int device_index)
{
    (void)nbytes;
    pct_caching_allocator *a = device_index >= 0 && device_index < PCT_CUDA_MAX_DEVICES ? allocators[device_index] : NULL;
    if (a) (void)pct_caching_free(a, ptr); /* an unknown pointer raises; nothing else can be done with it */
}

static void cuda_free_unused(void *ptr, size_t nbytes) { (void)ptr; (void)nbytes; }

const pct_allocator pct_cuda_allocator = {"cuda", cuda_alloc_unused, cuda_free_unused, cuda_free_on_device};

pct_storage *pct_cuda_storage_new(size_t nbytes, int device_index)
{
    int device = pct_cuda_resolve_device(device_index);
    if (device < 0) return NULL;
    pct_caching_allocator *a = allocator_of(device);
    if (!a) return NULL;
    void *data = NULL;
    if (nbytes && !(data = pct_caching_alloc(a, nbytes, pct_cuda_current_stream(device)))) return NULL;
    pct_storage *s = pct_storage_struct_new(data, nbytes, &pct_cuda_allocator, PCT_CUDA, device);
    if (!s) {
        (void)pct_caching_free(a, data);
        return NULL;
    }
    s->resizable = 1;
    return s;
}

int pct_cuda_storage_resize(pct_storage *s, size_t nbytes)
{
    pct_caching_allocator *a = allocator_of(s->device_index);
    if (!a) return -1;
    void *p = pct_caching_alloc(a, nbytes, pct_cuda_current_stream(s->device_index));
    if (!p) return -1;
    if (s->data && s->nbytes && pct_cuda_memcpy(p, s->data, s->nbytes, PCT_COPY_D2D, s->device_index) < 0) {
        (void)pct_caching_free(a, p);
        return -1;
    }
    if (s->data) (void)pct_caching_free(a, s->data);
    s->data = p;
    s->nbytes = nbytes;
    return 0;
}

/* ---- statistics and the cache (torch.cuda.memory_*) ---- */

int pct_cuda_memory_stats(int device, pct_caching_stats *out)
{
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    pct_caching_allocator *a = allocator_of(device);
    if (!a) return -1;
    pct_caching_get_stats(a, out);
    return 0;
}

int pct_cuda_empty_cache(void)
{
    for (int d = 0; d < PCT_CUDA_MAX_DEVICES; d++)
        if (allocators[d] && pct_caching_empty_cache(allocators[d]) < 0) return -1;
    return 0;
}

int pct_cuda_reset_peak_memory_stats(int device)
{
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    pct_caching_allocator *a = allocator_of(device);
    if (!a) return -1;
    pct_caching_reset_peak(a);
    return 0;
}

int pct_cuda_set_memory_fraction(int device, double fraction)
{
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    pct_caching_allocator *a = allocator_of(device);
    return a ? pct_caching_set_memory_fraction(a, fraction) : -1;
}

int pct_cuda_record_stream(void *data, int device, int64_t stream)
{
    if (!data) return 0;
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    pct_caching_allocator *a = allocator_of(device);
    return a ? pct_caching_record_stream(a, data, stream) : -1;
}

/* ---- pinned host memory ---- */

static void *pinned_alloc(size_t nbytes)
{
    void *p = NULL;
    return pct_cuda_drv->host_alloc(&p, nbytes ? nbytes : 1) ? NULL : p;
}

static void pinned_free(void *ptr, size_t nbytes)
{
    (void)nbytes;
    (void)pct_cuda_drv->host_free(ptr);
}

static const pct_allocator pinned_allocator = {"cuda pinned", pinned_alloc, pinned_free, NULL};

pct_storage *pct_cuda_pinned_storage_new(size_t nbytes)
{
    if (pct_cuda_resolve_device(-1) < 0) return NULL; /* torch pins through the CUDA context */
    void *p = pinned_alloc(nbytes);
    if (!p) return pct_error(PCT_ERR_RUNTIME, "CUDA error: out of memory (pinning %zu bytes of host memory)", nbytes);
    pct_storage *s = pct_storage_struct_new(p, nbytes, &pinned_allocator, PCT_CPU, -1);
    if (!s) pinned_free(p, nbytes);
    return s;
}

int pct_cuda_is_pinned(const void *ptr)
{
    if (!ptr || pct_cuda_device_count() == 0) return 0;
    bool pinned = false;
    int rc = pct_cuda_drv->is_pinned(ptr, &pinned);
    return rc ? pct_cuda_raise(rc, "cudaPointerGetAttributes") : pinned;
}
