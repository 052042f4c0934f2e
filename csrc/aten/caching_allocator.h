/* caching_allocator.h: the device-neutral caching allocator that gives device memory to tensors.
 *
 * Note [Caching allocator]: asking a GPU driver for memory (cudaMalloc) and giving it back (cudaFree) is slow and
 * synchronizes the device, so, as in torch, device memory is taken from the driver in large segments and kept: a
 * freed block goes back to a cache and the next request of a fitting size on the same stream reuses it. The rules are
 * torch's, c10/cuda/CUDACachingAllocator.cpp (read as the reference, not copied), with its constants:
 *   - every size is rounded up to a multiple of 512 bytes (kMinBlockSize); a request of 1 MiB or less (kSmallSize)
 *     goes to the small pool, whose segments are 2 MiB (kSmallBuffer); a larger one to the large pool, whose
 *     segments are 20 MiB (kLargeBuffer) for requests under 10 MiB (kMinLargeAlloc) and the request rounded up to
 *     2 MiB (kRoundLarge) above;
 *   - a freed block is reused only by requests of its pool on its own stream (the stream it was allocated on): the
 *     smallest free block that fits, the lowest address among equals (best fit);
 *   - a block bigger than the request is split when the rest is worth keeping (at least 512 bytes in the small pool,
 *     more than 1 MiB in the large one); a freed block merges with the free neighbours of its segment; a segment
 *     goes back to the device only whole (unsplit and free), by empty_cache or when memory runs out;
 *   - record_stream: a block used on other streams than its own is, when freed, kept out of use until an event
 *     recorded on each of those streams at the free has completed; pending events are looked at when each
 *     allocation starts, and empty_cache (and the out-of-memory path) synchronizes the device and settles them all;
 *   - out of memory (the device's raw_alloc says so): release one cached oversize block big enough, or several
 *     (only when max_split_size is set), retry; then release every whole cached segment and retry once more (counted
 *     in num_alloc_retries); then raise torch.cuda.OutOfMemoryError (PCT_ERR_OUT_OF_MEMORY) with torch's message,
 *     counted in num_ooms. set_memory_fraction caps the reserved bytes at fraction * the device's total memory, and
 *     a segment beyond the cap fails the same way;
 *   - max_split_size (torch's PYTORCH_CUDA_ALLOC_CONF option, unlimited by default): blocks of at least that size
 *     are never split, are not handed to smaller requests, and serve only requests within 20 MiB of their size;
 *   - statistics with torch's memory_stats names and meaning (pct_caching_stats below).
 * Left out of torch's allocator: expandable segments, CUDA graph private pools, garbage collection thresholds,
 * power-of-two rounding divisions, the history recorder and memory snapshots.
 *
 * The device: the allocator never calls a driver itself. The backend gives it a pct_device_memory, a table of the
 * raw operations, so the logic is the same for every device and is tested on machines without a GPU through a
 * simulated device over host memory (caching_sim.h, tests/test_caching_allocator.py).
 *
 * Threads and errors: every entry point takes the allocator's mutex, so allocations and frees may come from any
 * thread, with or without the interpreter lock. The mutex is recursive, as torch's, so a device function that
 * re-enters the allocator on its thread cannot deadlock; the allocator calls the device only where its own state is
 * consistent. Errors of its own (out of memory, an unknown pointer) are formatted under the mutex and raised after
 * releasing it, so that raising (which may run Python code) never happens inside the allocator; an error is a Python
 * exception, so a call that fails must come from a thread holding the interpreter lock (a free that succeeds needs
 * none). The device's functions are called with the mutex held and set their own errors.
 */
#ifndef PCT_CACHING_ALLOCATOR_H
#define PCT_CACHING_ALLOCATOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The raw operations of a device, filled by its backend. The allocator keeps a copy of the struct; ctx stays the
 * backend's and is passed back to every function. Streams are the backend's stream ids (0: the default stream). */
typedef struct pct_device_memory {
    void *ctx;
    /* 0 with *ptr set; 1 when the device is out of memory (no error set); -1 with an error set */
    int (*raw_alloc)(void *ctx, int device, size_t nbytes, void **ptr);
    int (*raw_free)(void *ctx, int device, void *ptr);            /* 0, or -1 with an error */
    int (*mem_info)(void *ctx, int device, size_t *free_bytes, size_t *total_bytes); /* 0 / -1 */
    /* events, for blocks used on streams other than their allocation stream (record_stream): a new event recorded
     * on the stream's current work (NULL with an error), whether it completed (1), not yet (0), or -1 with error;
     * destroy one */
    void *(*event_record)(void *ctx, int device, int64_t stream);
    int (*event_query)(void *ctx, void *event);
    void (*event_destroy)(void *ctx, void *event);
    int (*synchronize)(void *ctx, int device);                     /* wait for all the device's work; 0 / -1 */
} pct_device_memory;

/* One statistic as torch counts it: its value now, the highest it reached (since the last reset_peak), and the sums
 * of its increases and decreases (since the last reset_accumulated). */
typedef struct pct_caching_stat {
    int64_t current, peak, allocated, freed;
} pct_caching_stat;

/* The pools a statistic is split by: torch's "all", "small_pool", "large_pool". */
enum { PCT_STAT_ALL, PCT_STAT_SMALL_POOL, PCT_STAT_LARGE_POOL, PCT_NUM_STAT_POOLS };

/* torch's DeviceStats: each array is indexed by the PCT_STAT_ pools above. A plain value copied out by
 * pct_caching_get_stats; pct_caching_stats_foreach names its fields as torch.cuda.memory_stats does. */
typedef struct pct_caching_stats {
    pct_caching_stat allocation[PCT_NUM_STAT_POOLS];           /* blocks handed out and not freed */
    pct_caching_stat segment[PCT_NUM_STAT_POOLS];              /* segments taken from the device */
    pct_caching_stat active[PCT_NUM_STAT_POOLS];               /* blocks handed out or awaiting their events */
    pct_caching_stat inactive_split[PCT_NUM_STAT_POOLS];       /* free blocks of split segments (not releasable) */
    pct_caching_stat allocated_bytes[PCT_NUM_STAT_POOLS];
    pct_caching_stat reserved_bytes[PCT_NUM_STAT_POOLS];       /* bytes of the segments */
    pct_caching_stat active_bytes[PCT_NUM_STAT_POOLS];
    pct_caching_stat inactive_split_bytes[PCT_NUM_STAT_POOLS];
    pct_caching_stat requested_bytes[PCT_NUM_STAT_POOLS];      /* bytes asked for, before rounding */
    int64_t num_alloc_retries;     /* allocations that released the whole cache and asked the device again */
    int64_t num_ooms;              /* OutOfMemoryErrors raised */
    int64_t num_sync_all_streams;  /* device-wide synchronizations to settle pending events */
    int64_t num_device_alloc;      /* raw_alloc calls that succeeded */
    int64_t num_device_free;       /* raw_free calls that succeeded */
    int64_t max_split_size;        /* -1 when unlimited, as torch reports SIZE_MAX */
    pct_caching_stat oversize_allocations;  /* blocks of at least max_split_size handed out */
    pct_caching_stat oversize_segments;     /* segments of at least max_split_size */
} pct_caching_stats;

/* An allocator for one device (opaque; owns its blocks' bookkeeping and, through the device, its segments). */
typedef struct pct_caching_allocator pct_caching_allocator;

/* A new allocator over the device's operations (copied; dev->ctx must outlive the allocator); NULL with MemoryError. */
pct_caching_allocator *pct_caching_allocator_new(const pct_device_memory *dev, int device);
/* Give every segment back to the device (cached or still handed out: the pointers die with it), after waiting for
 * the device when it holds any, destroy pending events, and free the allocator. NULL is accepted. 0, or -1 with the
 * device's last error when one of its calls failed (everything is freed all the same). */
int pct_caching_allocator_destroy(pct_caching_allocator *a);

/* nbytes of device memory for use on stream. NULL with an error set (torch.cuda.OutOfMemoryError when the device
 * has no room), and NULL with no error for nbytes 0, as torch gives nullptr for empty storages. */
void *pct_caching_alloc(pct_caching_allocator *a, size_t nbytes, int64_t stream);
/* Give back what pct_caching_alloc returned (NULL: nothing to do). 0; -1 with RuntimeError for a pointer the
 * allocator did not hand out (or already took back); -1 with the device's error when an event could not be recorded
 * for a block used on other streams (the block is then kept out of use until the next empty_cache). */
int pct_caching_free(pct_caching_allocator *a, void *ptr);
/* Note that ptr's block is used on stream too (torch's recordStream): when freed, it is not reused before that
 * stream's work queued until then has completed. Its own stream and NULL need nothing. 0, or -1 with an error. */
int pct_caching_record_stream(pct_caching_allocator *a, void *ptr, int64_t stream);
/* Synchronize the device to settle pending events, then give every whole cached segment back. 0, or -1. */
int pct_caching_empty_cache(pct_caching_allocator *a);
/* A copy of the statistics. */
void pct_caching_get_stats(pct_caching_allocator *a, pct_caching_stats *out);
/* Each peak becomes the current value (torch's reset_peak_memory_stats). */
void pct_caching_reset_peak(pct_caching_allocator *a);
/* The allocated/freed sums and the counters restart from 0 (torch's reset_accumulated_memory_stats). */
void pct_caching_reset_accumulated(pct_caching_allocator *a);
/* Cap the reserved bytes at fraction of the device's total memory (torch's set_per_process_memory_fraction):
 * 0, or -1 with ValueError for a fraction outside [0, 1] or the device's error. */
int pct_caching_set_memory_fraction(pct_caching_allocator *a, double fraction);
/* Blocks of at least nbytes are not split (torch's max_split_size_mb); SIZE_MAX: unlimited (the default). 0, or -1
 * with ValueError for a size of 20 MiB or less, as torch refuses. */
int pct_caching_set_max_split_size(pct_caching_allocator *a, size_t nbytes);

/* ---- statistics and messages (caching_allocator_stats.c) ---- */

/* Bytes as torch's format_size writes them: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB" (a unit is used above
 * the previous one's 1024, e.g. "1024 bytes", "1024.00 KiB"). buf gets at most n bytes; returns buf. */
char *pct_format_size(uint64_t nbytes, char *buf, size_t n);
/* fn(key, value, ctx) for every statistic under torch.cuda.memory_stats's flat name ("allocated_bytes.all.current",
 * "num_alloc_retries", "oversize_segments.peak"...), stopping at the first nonzero return, which is returned. */
int pct_caching_stats_foreach(const pct_caching_stats *s, int (*fn)(const char *key, int64_t value, void *ctx),
                              void *ctx);
void pct_caching_stats_reset_peak(pct_caching_stats *s);
void pct_caching_stats_reset_accumulated(pct_caching_stats *s);

/* What torch's out-of-memory message reports. */
typedef struct pct_caching_oom_info {
    int device;
    size_t tried;                     /* the segment size the allocator asked the device for */
    size_t total, free;               /* the device's, from mem_info */
    bool capped;                      /* set_memory_fraction was called: `allowed` is the cap */
    size_t allowed;
    int64_t allocated, reserved;      /* allocated_bytes.all.current, reserved_bytes.all.current */
} pct_caching_oom_info;
/* torch's message for an allocation the device cannot hold, into buf (at most n bytes). */
void pct_caching_oom_message(const pct_caching_oom_info *info, char *buf, size_t n);

#endif
