/* cuda_driver.h: the few runtime calls the CUDA backend makes, as a table, so the host side of the backend can run
 * on a simulated device where there is no GPU.
 *
 * Note [Simulated CUDA device]: every call the backend's host code makes into the CUDA runtime goes through
 * pct_cuda_driver. The real table (cuda_driver_real.c) calls cudart. The simulated one (cuda_driver_sim.c) is a test
 * device, chosen only when PYCTORCH_SIMULATE_CUDA_DEVICES=<n> is set: its "device memory" is host memory the host
 * cannot touch (the address handed out is a PROT_NONE view of a memory file; the simulated copies use a second,
 * writable view), so code that reads a CUDA tensor's data on the host faults there as it would on a GPU. It has no
 * kernels: on it every op runs through the backend's CPU fallback. It lets CI, which has no GPU, test the backend's
 * storages, copies, caching allocator, streams, events, fallback and Python surface; the kernels themselves are
 * tested on a real GPU (benchmarks/gpu_check.sh).
 *
 * Every function returns 0 or a cudaError_t value (the simulated device uses the same numbers), which
 * pct_cuda_raise turns into torch's RuntimeError text. Streams and events are opaque handles (cudaStream_t and
 * cudaEvent_t on the real device); stream NULL is the device's default stream.
 */
#ifndef PCT_CUDA_DRIVER_H
#define PCT_CUDA_DRIVER_H
#include "aten/cuda_api.h"
#include <stdbool.h>
#include <stddef.h>

/* cudaError_t values the backend tells apart */
enum {
    PCT_CUDA_SUCCESS = 0,
    PCT_CUDA_ERROR_MEMORY_ALLOCATION = 2,
    PCT_CUDA_ERROR_INVALID_DEVICE = 101,
    PCT_CUDA_ERROR_NO_DEVICE = 100,
    PCT_CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    PCT_CUDA_ERROR_NOT_READY = 600,
};

/* the direction of a copy (cudaMemcpyKind's values) */
enum { PCT_COPY_H2D = 1, PCT_COPY_D2H = 2, PCT_COPY_D2D = 3 };

typedef struct pct_cuda_driver {
    const char *name;     /* "CUDA" or "simulated" */
    bool has_kernels;     /* false on the simulated device: no native kernel is registered */
    const char *(*error_string)(int code);
    int (*device_count)(int *count);
    int (*set_device)(int device);
    int (*get_device)(int *device);
    int (*properties)(int device, pct_cuda_device_properties *out);
    int (*mem_get_info)(size_t *free_bytes, size_t *total_bytes); /* of the current device */
    /* device memory of the current device */
    int (*malloc)(void **ptr, size_t nbytes);
    int (*free)(void *ptr);
    /* page-locked host memory, and whether a host pointer lies in it */
    int (*host_alloc)(void **ptr, size_t nbytes);
    int (*host_free)(void *ptr);
    int (*is_pinned)(const void *ptr, bool *pinned);
    int (*memcpy_async)(void *dst, const void *src, size_t nbytes, int kind, void *stream);
    int (*memset_async)(void *ptr, int value, size_t nbytes, void *stream);
    int (*device_synchronize)(void);
    /* streams of the current device (priority as cudaStreamCreateWithPriority's; non-blocking as torch's pool) */
    int (*stream_create)(void **stream, int priority);
    int (*stream_destroy)(void *stream);
    int (*stream_synchronize)(void *stream);
    int (*stream_query)(void *stream);    /* 0 idle, PCT_CUDA_ERROR_NOT_READY busy */
    int (*stream_wait_event)(void *stream, void *event);
    int (*event_create)(void **event, bool timing, bool blocking);
    int (*event_record)(void *event, void *stream);
    int (*event_query)(void *event);      /* 0 done, PCT_CUDA_ERROR_NOT_READY not yet */
    int (*event_synchronize)(void *event);
    int (*event_elapsed_ms)(float *ms, void *start, void *end);
    int (*event_destroy)(void *event);
    /* the error a kernel left behind (cudaGetLastError: reading it clears it) */
    int (*last_error)(void);
} pct_cuda_driver;

extern const pct_cuda_driver pct_cuda_driver_real, pct_cuda_driver_sim;
/* the table in use, chosen when the library loads */
extern const pct_cuda_driver *pct_cuda_drv;
/* Simulated devices asked for by PYCTORCH_SIMULATE_CUDA_DEVICES (0: use the real runtime). */
int pct_cuda_sim_requested(void);

/* Raises torch's RuntimeError for a failed call ("CUDA error: <text>"; the driver and device messages torch gives
 * for no driver, no device, out of memory); returns -1, or NULL through pct_cuda_raise_ptr. */
int pct_cuda_raise(int code, const char *what);
void *pct_cuda_raise_ptr(int code, const char *what);
/* Checks a driver call: -1 with the error raised when it failed. */
#define PCT_CUDA_CHECK(call) do { int pct_cuda_rc_ = (call); if (pct_cuda_rc_) { pct_cuda_raise(pct_cuda_rc_, #call); goto fail; } } while (0)

#endif
