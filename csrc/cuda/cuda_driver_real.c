/* cuda_driver_real.c: the driver table over the CUDA runtime (Note [Simulated CUDA device] in cuda_driver.h). */
#include "cuda_driver.h"
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static const char *real_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
static int real_device_count(int *count) { return (int)cudaGetDeviceCount(count); }
static int real_set_device(int device) { return (int)cudaSetDevice(device); }
static int real_get_device(int *device) { return (int)cudaGetDevice(device); }

static int real_properties(int device, pct_cuda_device_properties *out)
{
    struct cudaDeviceProp p;
    cudaError_t rc = cudaGetDeviceProperties(&p, device);
    if (rc) return (int)rc;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->major = p.major;
    out->minor = p.minor;
    out->total_memory = p.totalGlobalMem;
    out->multi_processor_count = p.multiProcessorCount;
    out->is_integrated = p.integrated;
    out->is_multi_gpu_board = p.isMultiGpuBoard;
    out->max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
    out->warp_size = p.warpSize;
    out->l2_cache_size = (size_t)p.l2CacheSize;
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(out->uuid, sizeof out->uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    out->pci_bus_id = p.pciBusID;
    out->pci_device_id = p.pciDeviceID;
    out->pci_domain_id = p.pciDomainID;
    return 0;
}

static int real_mem_get_info(size_t *free_bytes, size_t *total_bytes) { return (int)cudaMemGetInfo(free_bytes, total_bytes); }
static int real_malloc(void **ptr, size_t nbytes) { return (int)cudaMalloc(ptr, nbytes); }
static int real_free(void *ptr) { return (int)cudaFree(ptr); }
static int real_host_alloc(void **ptr, size_t nbytes) { return (int)cudaHostAlloc(ptr, nbytes, cudaHostAllocDefault); }
static int real_host_free(void *ptr) { return (int)cudaFreeHost(ptr); }

static int real_is_pinned(const void *ptr, bool *pinned)
{
    struct cudaPointerAttributes a;
    cudaError_t rc = cudaPointerGetAttributes(&a, ptr);
    if (rc == cudaErrorInvalidValue) { /* memory CUDA never saw */
        (void)cudaGetLastError();
        *pinned = false;
        return 0;
    }
    *pinned = rc == cudaSuccess && a.type == cudaMemoryTypeHost;
    return rc;
}

static int real_memcpy_async(void *dst, const void *src, size_t nbytes, int kind, void *stream)
{
    return (int)cudaMemcpyAsync(dst, src, nbytes, (enum cudaMemcpyKind)kind, (cudaStream_t)stream);
}

static int real_memset_async(void *ptr, int value, size_t nbytes, void *stream)
{
    return (int)cudaMemsetAsync(ptr, value, nbytes, (cudaStream_t)stream);
}

static int real_device_synchronize(void) { return (int)cudaDeviceSynchronize(); }

static int real_stream_create(void **stream, int priority)
{
    return (int)cudaStreamCreateWithPriority((cudaStream_t *)stream, cudaStreamNonBlocking, priority);
}

static int real_stream_destroy(void *stream) { return (int)cudaStreamDestroy((cudaStream_t)stream); }
static int real_stream_synchronize(void *stream) { return (int)cudaStreamSynchronize((cudaStream_t)stream); }
static int real_stream_query(void *stream) { return (int)cudaStreamQuery((cudaStream_t)stream); }
static int real_stream_wait_event(void *stream, void *event)
{
    return (int)cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0);
}

static int real_event_create(void **event, bool timing, bool blocking)
{
    unsigned flags = (timing ? cudaEventDefault : cudaEventDisableTiming) | (blocking ? cudaEventBlockingSync : 0);
    return (int)cudaEventCreateWithFlags((cudaEvent_t *)event, flags);
}

static int real_event_record(void *event, void *stream) { return (int)cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream); }
static int real_event_query(void *event) { return (int)cudaEventQuery((cudaEvent_t)event); }
static int real_event_synchronize(void *event) { return (int)cudaEventSynchronize((cudaEvent_t)event); }
static int real_event_elapsed_ms(float *ms, void *start, void *end)
{
    return (int)cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end);
}
static int real_event_destroy(void *event) { return (int)cudaEventDestroy((cudaEvent_t)event); }
static int real_last_error(void) { return (int)cudaGetLastError(); }

const pct_cuda_driver pct_cuda_driver_real = {
    .name = "CUDA",
    .has_kernels = true,
    .error_string = real_error_string,
    .device_count = real_device_count,
    .set_device = real_set_device,
    .get_device = real_get_device,
    .properties = real_properties,
    .mem_get_info = real_mem_get_info,
    .malloc = real_malloc,
    .free = real_free,
    .host_alloc = real_host_alloc,
    .host_free = real_host_free,
    .is_pinned = real_is_pinned,
    .memcpy_async = real_memcpy_async,
    .memset_async = real_memset_async,
    .device_synchronize = real_device_synchronize,
    .stream_create = real_stream_create,
    .stream_destroy = real_stream_destroy,
    .stream_synchronize = real_stream_synchronize,
    .stream_query = real_stream_query,
    .stream_wait_event = real_stream_wait_event,
    .event_create = real_event_create,
    .event_record = real_event_record,
    .event_query = real_event_query,
    .event_synchronize = real_event_synchronize,
    .event_elapsed_ms = real_event_elapsed_ms,
    .event_destroy = real_event_destroy,
    .last_error = real_last_error,
};
