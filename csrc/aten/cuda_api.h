/* cuda_api.h: what the core and the binding see of the CUDA backend, in plain C (no CUDA header).
 *
 * Note [Lazy CUDA]: the CUDA backend (csrc/cuda/) is built, when nvcc is found, into its own library beside _C,
 * pyctorch/_C_cuda.so, linked with the static CUDA runtime. Nothing loads it at import: the first call that needs
 * CUDA (pct_cuda(): a tensor or factory on "cuda", torch.cuda.is_available(), device_count(), ...) opens it
 * (cuda_loader.c). Its symbols are resolved against _C's, so _C is first made global (RTLD_GLOBAL). The library's
 * entry point returns this table, and fills the CUDA slots of the op table and of pct_backends.
 *
 * A build without the library (no nvcc, PYCTORCH_NO_CUDA=1) answers as torch's CPU-only build: pct_cuda() fails with
 * AssertionError("Torch not compiled with CUDA enabled"). A build with it on a machine without a driver or GPU answers
 * as torch's CUDA build there: device_count() is 0, and anything that needs a device raises torch's RuntimeError
 * ("Found no NVIDIA driver on your system...").
 *
 * Ownership: the table and everything it points to are static in the library, which is never unloaded.
 */
#ifndef PCT_CUDA_API_H
#define PCT_CUDA_API_H
#include "backend.h"
#include <stddef.h>
#include <stdint.h>

/* torch.cuda.get_device_properties's fields */
typedef struct pct_cuda_device_properties {
    char name[256];
    int major, minor;
    size_t total_memory;
    int multi_processor_count;
    int is_integrated, is_multi_gpu_board;
    int max_threads_per_multi_processor, warp_size;
    size_t l2_cache_size;
    char uuid[40];
    int pci_bus_id, pci_device_id, pci_domain_id;
} pct_cuda_device_properties;

struct pct_caching_stats; /* caching_allocator.h */

typedef struct pct_cuda_api {
    const pct_backend *backend;
    /* GPUs usable (0 without a driver or GPU, no error raised); the reason when there are none, or NULL */
    int (*device_count)(void);
    const char *(*unavailable_reason)(void);
    /* whether the runtime was initialised (a device was used) */
    int (*is_initialized)(void);
    /* the current device of the calling thread, and making another current; -1 with an error */
    int (*current_device)(void);
    int (*set_device)(int device);
    int (*device_properties)(int device, pct_cuda_device_properties *out);
    int (*mem_get_info)(int device, size_t *free_bytes, size_t *total_bytes);
    /* events (torch.cuda.Event): an opaque handle (NULL with an error), record on a stream, query (1 done, 0 not
     * yet, -1 error), wait on the host, make a stream wait, elapsed milliseconds between two, destroy */
    void *(*event_new)(int device, int enable_timing, int blocking);
    int (*event_record)(void *event, int device, int64_t stream);
    int (*event_query)(void *event);
    int (*event_synchronize)(void *event);
    int (*stream_wait_event)(int device, int64_t stream, void *event);
    int (*event_elapsed_ms)(void *start, void *end, float *ms);
    void (*event_destroy)(void *event);
    /* the caching allocator of a device (Note [Caching allocator]); -1 with an error */
    int (*memory_stats)(int device, struct pct_caching_stats *out);
    int (*empty_cache)(void);
    int (*reset_peak_memory_stats)(int device);
    int (*set_memory_fraction)(int device, double fraction);
    /* torch.cuda.Tensor.record_stream: the storage's block is not reused before the stream's work is done */
    int (*record_stream)(void *data, int device, int64_t stream);
    /* pinned host memory (pin_memory()): an owned storage (NULL with an error), and whether a pointer is pinned */
    pct_storage *(*pinned_storage_new)(size_t nbytes);
    int (*is_pinned)(const void *ptr);
    /* how many calls ran on the CPU fallback so far (ops and advanced indexing, Note [CUDA fallback]): tests check
     * that an op is served by the device */
    int64_t (*fallback_runs)(void);
    /* the runtime's handle of a stream (cudaStream_t; NULL is the device's default stream) for a device (-1 the
     * current one) and stream id (Note [Streams]); 0, or -1 with an error (an unknown stream) */
    int (*stream_handle)(int device, int64_t stream, void **handle);
} pct_cuda_api;

/* The backend's table, loading the library on first use; NULL with an error (AssertionError when not built). */
const pct_cuda_api *pct_cuda(void);
/* 1 when the library was built beside _C (nothing is loaded to answer), else 0 */
int pct_cuda_built(void);
/* 1 once the library is loaded (tests check that importing pyctorch does not load it) */
int pct_cuda_loaded(void);
/* The library's entry point, named here so the loader and the library agree on it. */
#define PCT_CUDA_ENTRY "pct_cuda_backend_init"
typedef const pct_cuda_api *(*pct_cuda_entry_fn)(void);

#endif
