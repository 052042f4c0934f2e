/* single_stream.c: the streams of a backend that runs every op to completion on the calling thread (the CPU, meta):
 * one stream, id 0, always idle (Note [Streams] in backend.h). */
#include "backend.h"
#include "error.h"

int pct_single_stream_device_synchronize(int device_index)
{
    (void)device_index;
    return 0;
}

int64_t pct_single_stream_new(int device_index, int priority)
{
    (void)device_index; (void)priority;
    return 0;
}

int64_t pct_single_stream_current(int device_index)
{
    (void)device_index;
    return 0;
}

static int check_stream(int64_t stream)
{
    if (stream == 0) return 0;
    pct_error(PCT_ERR_RUNTIME, "this device has one stream (id 0); got stream id %lld", (long long)stream);
    return -1;
}

int pct_single_stream_set(int device_index, int64_t stream)
{
    (void)device_index;
    return check_stream(stream);
}

int pct_single_stream_synchronize(int device_index, int64_t stream)
{
    (void)device_index;
    return check_stream(stream);
}

int pct_single_stream_query(int device_index, int64_t stream)
{
    (void)device_index;
    return check_stream(stream) < 0 ? -1 : 1;
}
