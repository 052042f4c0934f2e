/* cuda_driver_sim.c: the simulated CUDA device of tests (Note [Simulated CUDA device] in cuda_driver.h).
 *
 * Its memory: each allocation is a memory file mapped twice, once PROT_NONE at the address handed out (the "device
 * address", which faults when the host touches it) and once readable and writable for the simulated copies. Work
 * runs at once, so streams are always idle and events complete when recorded. Capacity per device:
 * PYCTORCH_SIMULATE_CUDA_MEMORY bytes (1 GiB by default).
 *
 * Ownership: the segment table owns both mappings of every live allocation (unmapped by free); pinned blocks are
 * malloc'ed and owned by the pinned table until host_free; streams and events are malloc'ed handles owned by whoever
 * created them until destroy.
 */
#include "cuda_driver.h"
#include "cuda_blas.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SIM_MAX_DEVICES 8
#define SIM_INVALID_VALUE 1 /* cudaErrorInvalidValue */

typedef struct sim_segment {
    char *device_view, *host_view; /* the two mappings (owned) */
    size_t nbytes, mapped;
    int device;
} sim_segment;

typedef struct sim_event {
    double ms;      /* wall time when recorded */
    bool recorded, timing;
} sim_event;

static pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_segment *segments;          /* live allocations (owned array) */
static int nsegments, segments_cap;
static size_t used[SIM_MAX_DEVICES];
static void **pinned;                  /* live pinned blocks (owned array of owned blocks) */
static int npinned, pinned_cap;
static _Thread_local int current_device;

int pct_cuda_sim_requested(void)
{
    const char *v = getenv("PYCTORCH_SIMULATE_CUDA_DEVICES");
    int n = v ? atoi(v) : 0;
    return n < 0 ? 0 : n > SIM_MAX_DEVICES ? SIM_MAX_DEVICES : n;
}

static size_t sim_capacity(void)
{
    const char *v = getenv("PYCTORCH_SIMULATE_CUDA_MEMORY");
    long long n = v ? atoll(v) : 0;
    return n > 0 ? (size_t)n : (size_t)1 << 30;
}

static const char *sim_error_string(int code)
{
    switch (code) {
    case 0: return "no error";
    case SIM_INVALID_VALUE: return "invalid argument";
    case PCT_CUDA_ERROR_MEMORY_ALLOCATION: return "out of memory";
    case PCT_CUDA_ERROR_INVALID_DEVICE: return "invalid device ordinal";
    case PCT_CUDA_ERROR_NOT_READY: return "device not ready";
    default: return "unknown error";
    }
}

static int sim_device_count(int *count) { *count = pct_cuda_sim_requested(); return 0; }

static int sim_set_device(int device)
{
    if (device < 0 || device >= pct_cuda_sim_requested()) return PCT_CUDA_ERROR_INVALID_DEVICE;
    current_device = device;
    return 0;
}

static int sim_get_device(int *device) { *device = current_device; return 0; }

static int sim_properties(int device, pct_cuda_device_properties *out)
{
    if (device < 0 || device >= pct_cuda_sim_requested()) return PCT_CUDA_ERROR_INVALID_DEVICE;
    memset(out, 0, sizeof *out);
    strcpy(out->name, "pyctorch simulated CUDA device");
    out->major = 9;
    out->minor = 0;
    out->total_memory = sim_capacity();
    out->multi_processor_count = 132;
    out->max_threads_per_multi_processor = 2048;
    out->warp_size = 32;
    out->l2_cache_size = 50u << 20;
    strcpy(out->uuid, "00000000-0000-0000-0000-000000000000");
    out->pci_bus_id = device;
    return 0;
}

static int sim_mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
    pthread_mutex_lock(&sim_lock);
    *total_bytes = sim_capacity();
    *free_bytes = *total_bytes - used[current_device];
    pthread_mutex_unlock(&sim_lock);
    return 0;
}

static int sim_malloc(void **ptr, size_t nbytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t mapped = nbytes ? (nbytes + page - 1) / page * page : page;
    int rc = PCT_CUDA_ERROR_MEMORY_ALLOCATION, fd = -1;
    char *dev = MAP_FAILED, *host = MAP_FAILED;
    pthread_mutex_lock(&sim_lock);
    if (used[current_device] + nbytes > sim_capacity()) goto done;
    if (nsegments == segments_cap) {
        int cap = segments_cap ? 2 * segments_cap : 64;
        sim_segment *s = realloc(segments, sizeof *s * (size_t)cap);
        if (!s) goto done;
        segments = s;
        segments_cap = cap;
    }
    if ((fd = memfd_create("pyctorch-simulated-cuda", MFD_CLOEXEC)) < 0 || ftruncate(fd, (off_t)mapped) < 0) goto done;
    dev = mmap(NULL, mapped, PROT_NONE, MAP_SHARED, fd, 0);
    host = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (dev == MAP_FAILED || host == MAP_FAILED) goto done;
    segments[nsegments++] = (sim_segment){dev, host, nbytes, mapped, current_device};
    used[current_device] += nbytes;
    *ptr = dev;
    dev = host = MAP_FAILED; /* the table owns them */
    rc = 0;
done:
    if (dev != MAP_FAILED) munmap(dev, mapped);
    if (host != MAP_FAILED) munmap(host, mapped);
    if (fd >= 0) close(fd); /* the mappings keep the file */
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

static int sim_free(void *ptr)
{
    int rc = SIM_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < nsegments; i++) {
        if (segments[i].device_view != ptr) continue;
        munmap(segments[i].device_view, segments[i].mapped);
        munmap(segments[i].host_view, segments[i].mapped);
        used[segments[i].device] -= segments[i].nbytes;
        segments[i] = segments[--nsegments];
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

/* The writable view of [ptr, ptr + nbytes) of device memory; NULL when that range is not inside one allocation. */
static char *host_view_of(const void *ptr, size_t nbytes)
{
    char *r = NULL;
    const char *p = ptr;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < nsegments && !r; i++)
        if (p >= segments[i].device_view && p + nbytes <= segments[i].device_view + segments[i].nbytes)
            r = segments[i].host_view + (p - segments[i].device_view);
    pthread_mutex_unlock(&sim_lock);
    return r;
}

char *pct_cuda_sim_host_view(const void *ptr, size_t nbytes) { return host_view_of(ptr, nbytes); }

void *pct_cuda_sim_host_address(const void *ptr)
{
    char *h = ptr ? host_view_of(ptr, 1) : NULL;
    return h ? h : (void *)ptr;
}

static int sim_host_alloc(void **ptr, size_t nbytes)
{
    int rc = PCT_CUDA_ERROR_MEMORY_ALLOCATION;
    pthread_mutex_lock(&sim_lock);
    if (npinned == pinned_cap) {
        int cap = pinned_cap ? 2 * pinned_cap : 64;
        void **p = realloc(pinned, sizeof *p * (size_t)cap);
        if (!p) goto done;
        pinned = p;
        pinned_cap = cap;
    }
    void *block = malloc(nbytes ? nbytes : 1);
    if (!block) goto done;
    pinned[npinned++] = block;
    *ptr = block;
    rc = 0;
done:
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

static int sim_host_free(void *ptr)
{
    int rc = SIM_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < npinned; i++) {
        if (pinned[i] != ptr) continue;
        free(ptr);
        pinned[i] = pinned[--npinned];
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

static int sim_is_pinned(const void *ptr, bool *is)
{
    *is = false;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < npinned; i++) *is |= pinned[i] == ptr; /* a block's start, which is what storages hold */
    pthread_mutex_unlock(&sim_lock);
    return 0;
}

static int sim_memcpy_async(void *dst, const void *src, size_t nbytes, int kind, void *stream)
{
    (void)stream;
    if (!nbytes) return 0;
    char *d = kind == PCT_COPY_D2H ? dst : host_view_of(dst, nbytes);
    const char *s = kind == PCT_COPY_H2D ? src : host_view_of(src, nbytes);
    if (!d || !s) return SIM_INVALID_VALUE;
    memmove(d, s, nbytes);
    return 0;
}

static int sim_memset_async(void *ptr, int value, size_t nbytes, void *stream)
{
    (void)stream;
    if (!nbytes) return 0;
    char *d = host_view_of(ptr, nbytes);
    if (!d) return SIM_INVALID_VALUE;
    memset(d, value, nbytes);
    return 0;
}

static int sim_idle(void) { return 0; }
static int sim_idle_handle(void *handle) { (void)handle; return 0; }

static int sim_stream_create(void **stream, int priority)
{
    (void)priority;
    *stream = malloc(1);
    return *stream ? 0 : PCT_CUDA_ERROR_MEMORY_ALLOCATION;
}

static int sim_handle_destroy(void *handle) { free(handle); return 0; }
static int sim_stream_wait_event(void *stream, void *event) { (void)stream; (void)event; return 0; }

static int sim_event_create(void **event, bool timing, bool blocking)
{
    (void)blocking;
    sim_event *e = calloc(1, sizeof *e);
    if (!e) return PCT_CUDA_ERROR_MEMORY_ALLOCATION;
    e->timing = timing;
    *event = e;
    return 0;
}

static int sim_event_record(void *event, void *stream)
{
    (void)stream;
    sim_event *e = event;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    e->recorded = true;
    return 0;
}

static int sim_event_elapsed_ms(float *ms, void *start, void *end)
{
    const sim_event *a = start, *b = end;
    if (!a->timing || !b->timing) return 6; /* cudaErrorInvalidResourceHandle, as CUDA answers */
    if (!a->recorded || !b->recorded) return PCT_CUDA_ERROR_NOT_READY;
    *ms = (float)(b->ms - a->ms);
    return 0;
}

const pct_cuda_driver pct_cuda_driver_sim = {
    .name = "simulated",
    .has_kernels = false,
    .error_string = sim_error_string,
    .device_count = sim_device_count,
    .set_device = sim_set_device,
    .get_device = sim_get_device,
    .properties = sim_properties,
    .mem_get_info = sim_mem_get_info,
    .malloc = sim_malloc,
    .free = sim_free,
    .host_alloc = sim_host_alloc,
    .host_free = sim_host_free,
    .is_pinned = sim_is_pinned,
    .memcpy_async = sim_memcpy_async,
    .memset_async = sim_memset_async,
    .device_synchronize = sim_idle,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_handle_destroy,
    .stream_synchronize = sim_idle_handle,
    .stream_query = sim_idle_handle,
    .stream_wait_event = sim_stream_wait_event,
    .event_create = sim_event_create,
    .event_record = sim_event_record,
    .event_query = sim_idle_handle,
    .event_synchronize = sim_idle_handle,
    .event_elapsed_ms = sim_event_elapsed_ms,
    .event_destroy = sim_handle_destroy,
    .last_error = sim_idle,
};
