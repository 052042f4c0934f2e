/* cuda_streams.c: streams by id and events (Note [Streams] in backend.h).
 *
 * A device's stream 0 is its default stream (the driver's NULL handle); torch.cuda.Stream() makes a new non-blocking
 * stream whose id is its index + 1 in the device's table. Streams live as long as the process (torch's pool also
 * keeps its streams), so an id stays valid in every thread. Each thread has its own current stream per device, the
 * default one until set.
 *
 * Ownership: the tables own their handles (never destroyed); an event handle belongs to whoever made it (the Python
 * Event object), which destroys it.
 */
#include "cuda_internal.h"
#include "aten/error.h"
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static void **stream_table[PCT_CUDA_MAX_DEVICES]; /* handles of streams 1.. (owned arrays) */
static int64_t nstreams[PCT_CUDA_MAX_DEVICES], streams_cap[PCT_CUDA_MAX_DEVICES];
static _Thread_local int64_t current_stream[PCT_CUDA_MAX_DEVICES];

int64_t pct_cuda_stream_new(int device, int priority)
{
    int previous;
    if ((device = pct_cuda_resolve_device(device)) < 0 || pct_cuda_device_enter(device, &previous) < 0) return -1;
    void *handle = NULL;
    int64_t id = -1;
    int rc = pct_cuda_drv->stream_create(&handle, priority);
    pct_cuda_device_restore(previous);
    if (rc) return pct_cuda_raise(rc, "cudaStreamCreateWithPriority");
    pthread_mutex_lock(&streams_lock);
    if (nstreams[device] == streams_cap[device]) {
        int64_t cap = streams_cap[device] ? 2 * streams_cap[device] : 16;
        void **t = realloc(stream_table[device], sizeof *t * (size_t)cap);
        if (t) {
            stream_table[device] = t;
            streams_cap[device] = cap;
        }
    }
    if (nstreams[device] < streams_cap[device]) {
        stream_table[device][nstreams[device]++] = handle;
        id = nstreams[device];
    }
    pthread_mutex_unlock(&streams_lock);
    if (id < 0) {
        (void)pct_cuda_drv->stream_destroy(handle);
        pct_error_nomem();
    }
    return id;
}

void *pct_cuda_stream_handle(int device, int64_t stream, bool *ok)
{
    *ok = true;
    if (stream == 0) return NULL;
    void *h = NULL;
    pthread_mutex_lock(&streams_lock);
    bool known = device >= 0 && device < PCT_CUDA_MAX_DEVICES && stream > 0 && stream <= nstreams[device];
    if (known) h = stream_table[device][stream - 1];
    pthread_mutex_unlock(&streams_lock);
    if (!known) {
        *ok = false;
        pct_error(PCT_ERR_RUNTIME, "unknown CUDA stream %lld on device %d", (long long)stream, device);
    }
    return h;
}

int64_t pct_cuda_current_stream(int device)
{
    int d = pct_cuda_resolve_device(device);
    return d < 0 ? -1 : current_stream[d];
}

int pct_cuda_set_current_stream(int device, int64_t stream)
{
    int d = pct_cuda_resolve_device(device);
    bool ok;
    if (d < 0) return -1;
    (void)pct_cuda_stream_handle(d, stream, &ok);
    if (!ok) return -1;
    current_stream[d] = stream;
    return 0;
}

void *pct_cuda_current_stream_handle(int device_index)
{
    bool ok;
    int d = device_index < 0 ? pct_cuda_resolve_device(-1) : device_index;
    return d < 0 ? NULL : pct_cuda_stream_handle(d, current_stream[d], &ok);
}

int pct_cuda_stream_synchronize(int device, int64_t stream)
{
    bool ok;
    int previous;
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    void *h = pct_cuda_stream_handle(device, stream, &ok);
    if (!ok || pct_cuda_device_enter(device, &previous) < 0) return -1;
    int rc = pct_cuda_drv->stream_synchronize(h);
    pct_cuda_device_restore(previous);
    return rc ? pct_cuda_raise(rc, "cudaStreamSynchronize") : 0;
}

int pct_cuda_stream_query(int device, int64_t stream)
{
    bool ok;
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    void *h = pct_cuda_stream_handle(device, stream, &ok);
    if (!ok) return -1;
    int rc = pct_cuda_drv->stream_query(h);
    if (rc == PCT_CUDA_ERROR_NOT_READY) return 0;
    return rc ? pct_cuda_raise(rc, "cudaStreamQuery") : 1;
}

int pct_cuda_synchronize(int device)
{
    int previous;
    if ((device = pct_cuda_resolve_device(device)) < 0 || pct_cuda_device_enter(device, &previous) < 0) return -1;
    int rc = pct_cuda_drv->device_synchronize();
    pct_cuda_device_restore(previous);
    return rc ? pct_cuda_raise(rc, "cudaDeviceSynchronize") : 0;
}

void *pct_cuda_event_new(int device, int enable_timing, int blocking)
{
    int previous;
    if ((device = pct_cuda_resolve_device(device)) < 0 || pct_cuda_device_enter(device, &previous) < 0) return NULL;
    void *e = NULL;
    int rc = pct_cuda_drv->event_create(&e, enable_timing != 0, blocking != 0);
    pct_cuda_device_restore(previous);
    return rc ? pct_cuda_raise_ptr(rc, "cudaEventCreateWithFlags") : e;
}

int pct_cuda_event_record(void *event, int device, int64_t stream)
{
    bool ok;
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    void *h = pct_cuda_stream_handle(device, stream, &ok);
    if (!ok) return -1;
    int rc = pct_cuda_drv->event_record(event, h);
    return rc ? pct_cuda_raise(rc, "cudaEventRecord") : 0;
}

int pct_cuda_event_query(void *event)
{
    int rc = pct_cuda_drv->event_query(event);
    if (rc == PCT_CUDA_ERROR_NOT_READY) return 0;
    return rc ? pct_cuda_raise(rc, "cudaEventQuery") : 1;
}

int pct_cuda_event_synchronize(void *event)
{
    int rc = pct_cuda_drv->event_synchronize(event);
    return rc ? pct_cuda_raise(rc, "cudaEventSynchronize") : 0;
}

int pct_cuda_stream_wait_event(int device, int64_t stream, void *event)
{
    bool ok;
    if ((device = pct_cuda_resolve_device(device)) < 0) return -1;
    void *h = pct_cuda_stream_handle(device, stream, &ok);
    if (!ok) return -1;
    int rc = pct_cuda_drv->stream_wait_event(h, event);
    return rc ? pct_cuda_raise(rc, "cudaStreamWaitEvent") : 0;
}

int pct_cuda_event_elapsed_ms(void *start, void *end, float *ms)
{
    int rc = pct_cuda_drv->event_elapsed_ms(ms, start, end);
    return rc ? pct_cuda_raise(rc, "cudaEventElapsedTime") : 0;
}

void pct_cuda_event_destroy(void *event)
{
    if (event) (void)pct_cuda_drv->event_destroy(event);
}
