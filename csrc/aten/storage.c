/* storage.c: storage lifetime (the CPU allocator itself is in cpu_allocator.c). */
#include "storage.h"
#include "backend.h"
#include "shapes_only.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes held by CPU storages now and at the peak since the last reset (tests of memory
 * savings such as checkpointing read these; torch has no CPU counterpart). */
static atomic_llong cpu_bytes_live, cpu_bytes_peak;

void pct_cpu_memory_count(long long delta)
{
    long long now = atomic_fetch_add_explicit(&cpu_bytes_live, delta, memory_order_relaxed) + delta;
    long long peak = atomic_load_explicit(&cpu_bytes_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&cpu_bytes_peak, &peak, now)) {}
}

void pct_cpu_memory_stats(long long *live, long long *peak)
{
    *live = atomic_load(&cpu_bytes_live);
    *peak = atomic_load(&cpu_bytes_peak);
}

void pct_cpu_memory_reset_peak(void) { atomic_store(&cpu_bytes_peak, atomic_load(&cpu_bytes_live)); }

pct_storage *pct_storage_struct_new(void *data, size_t nbytes, const pct_allocator *allocator, int device_type,
                                    int device_index)
{
    pct_storage *s = malloc(sizeof *s);
    if (!s) { pct_error_nomem(); return NULL; }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->exports, 0);
    s->data = data;
    s->nbytes = nbytes;
    s->allocator = allocator;
    s->owner = NULL;
    s->device_type = (int8_t)device_type;
    s->device_index = (int8_t)device_index;
    s->resizable = 0;
    s->readonly = 0;
    s->shm_fd = -1;
    s->shm_name = NULL;
    return s;
}

/* A CPU storage of zero pages: in a shapes-only run, results nobody writes take no memory (Note [Shapes-only runs]) */
static pct_storage *zero_pages_storage(size_t nbytes)
{
    void *zeros = pct_zero_pages_allocator.alloc(nbytes);
    if (!zeros) return pct_error_nomem();
    pct_storage *s = pct_storage_struct_new(zeros, nbytes, &pct_zero_pages_allocator, PCT_CPU, -1);
    if (!s) {
        pct_zero_pages_allocator.free(zeros, nbytes);
        return NULL;
    }
    s->resizable = 1;
    return s;
}

pct_storage *pct_storage_new_cpu(size_t nbytes)
{
    if (pct_shapes_only) return zero_pages_storage(nbytes);
    void *data = pct_cpu_allocator.alloc(nbytes);
    if (!data) {
        pct_error(PCT_ERR_RUNTIME, "[enforce fail at alloc_cpu] DefaultCPUAllocator: not enough memory: you tried to allocate %zu bytes.", nbytes);
        return NULL;
    }
    pct_storage *s = pct_storage_struct_new(data, nbytes, &pct_cpu_allocator, PCT_CPU, -1);
    if (!s) { pct_cpu_allocator.free(data, nbytes); return NULL; }
    pct_cpu_memory_count((long long)nbytes);
    s->resizable = 1;
    return s;
}

pct_storage *pct_storage_new_external(void *data, size_t nbytes, pct_object *owner, int device_type, int device_index)
{
    pct_storage *s = pct_storage_struct_new(data, nbytes, NULL, device_type, device_index);
    if (!s) return NULL;
    PCT_XINCREF(owner);
    s->owner = owner;
    return s;
}

void pct_storage_decref(pct_storage *s)
{
    if (!s) return;
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    if (s->shm_name) pct_storage_drop_name(s);
    if (s->owner) PCT_DECREF(s->owner);
    else if (s->allocator && s->data && s->allocator->free_on_device)
        s->allocator->free_on_device(s->data, s->nbytes, s->device_index);
    else if (s->allocator && s->data) s->allocator->free(s->data, s->nbytes);
    if (s->allocator == &pct_cpu_allocator) pct_cpu_memory_count(-(long long)s->nbytes);
    if (s->shm_fd >= 0) close(s->shm_fd);
    free(s);
}

int pct_storage_resize(pct_storage *s, size_t nbytes)
{
    if (nbytes <= s->nbytes) return 0;
    if (s->device_type == PCT_META && s->resizable) { /* Note [Meta storages]: a size, no memory */
        s->nbytes = nbytes;
        return 0;
    }
    if (!s->resizable || !s->allocator) {
        pct_error_str(PCT_ERR_RUNTIME, "Trying to resize storage that is not resizable");
        return -1;
    }
    if (atomic_load(&s->exports) > 0) {
        pct_error_str(PCT_ERR_BUFFER, "Existing exports of data: storage cannot be re-sized");
        return -1;
    }
    if (s->device_type != PCT_CPU) { /* device memory moves through its backend */
        const pct_backend *b = pct_backend_of(s->device_type);
        if (!b) return -1;
        if (b->storage_resize) return b->storage_resize(s, nbytes);
    }
    void *p = s->allocator->alloc(nbytes);
    if (!p) {
        pct_error(PCT_ERR_RUNTIME, "[enforce fail at alloc_cpu] DefaultCPUAllocator: not enough memory: you tried to "
                     "allocate %zu bytes.", nbytes);
        return -1;
    }
    if (s->data) { memcpy(p, s->data, s->nbytes); s->allocator->free(s->data, s->nbytes); }
    s->data = p;
    if (s->allocator == &pct_cpu_allocator) pct_cpu_memory_count((long long)nbytes - (long long)s->nbytes);
    s->nbytes = nbytes;
    return 0;
}

int pct_storage_resize_exact(pct_storage *s, size_t nbytes)
{
    if (nbytes >= s->nbytes) return pct_storage_resize(s, nbytes);
    if (s->device_type == PCT_META && s->resizable) {
        s->nbytes = nbytes;
        return 0;
    }
    if (!s->resizable || !s->allocator || s->device_type != PCT_CPU) {
        pct_error_str(PCT_ERR_RUNTIME, "Trying to resize storage that is not resizable");
        return -1;
    }
    if (atomic_load(&s->exports) > 0) {
        pct_error_str(PCT_ERR_BUFFER, "Existing exports of data: storage cannot be re-sized");
        return -1;
    }
    void *p = nbytes ? s->allocator->alloc(nbytes) : NULL;
    if (nbytes && !p) {
        pct_error(PCT_ERR_RUNTIME, "[enforce fail at alloc_cpu] DefaultCPUAllocator: not enough memory: you tried to "
                     "allocate %zu bytes.", nbytes);
        return -1;
    }
    if (nbytes) memcpy(p, s->data, nbytes);
    if (s->data) s->allocator->free(s->data, s->nbytes);
    if (s->allocator == &pct_cpu_allocator) pct_cpu_memory_count((long long)nbytes - (long long)s->nbytes);
    s->data = p;
    s->nbytes = nbytes;
    return 0;
}
