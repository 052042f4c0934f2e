/* caching_allocator_impl.h: the caching allocator's internals, shared by its three files and by nothing else (Note
 * [Caching allocator] in caching_allocator.h):
 *   caching_allocator.c          blocks and pools: sizes, free sets, splitting and merging, alloc and free
 *   caching_allocator_release.c  memory coming back: other streams' events, segments given back, out of memory
 *   caching_allocator_stats.c    statistics under torch's names, settings, messages
 * Every function here expects the allocator's mutex held, except the deferred-error ones. */
#ifndef PCT_CACHING_ALLOCATOR_IMPL_H
#define PCT_CACHING_ALLOCATOR_IMPL_H
#include "caching_allocator.h"
#include "error.h"
#include "ptr_map.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* torch's constants, CUDACachingAllocator.cpp */
#define MIN_BLOCK_SIZE ((size_t)512)             /* kMinBlockSize: every size is a multiple */
#define SMALL_SIZE ((size_t)1 << 20)             /* kSmallSize: the largest small-pool request */
#define SMALL_BUFFER ((size_t)2 << 20)           /* kSmallBuffer: a small-pool segment */
#define LARGE_BUFFER ((size_t)20 << 20)          /* kLargeBuffer: the segment of a request under MIN_LARGE_ALLOC */
#define MIN_LARGE_ALLOC ((size_t)10 << 20)       /* kMinLargeAlloc */
#define ROUND_LARGE ((size_t)2 << 20)            /* kRoundLarge: larger segments are rounded up to this */
#define MAX_REQUEST ((size_t)1 << 60)            /* NativeCachingAllocator::allocate refuses 1 EiB and more */

enum { SMALL, LARGE, NUM_POOLS };

/* Where a block is: in its pool's free set, handed out (in the table of live blocks), or freed but waiting for the
 * events of the other streams it was used on (held by those events' entries only). */
typedef enum block_state { BLOCK_FREE, BLOCK_ALLOCATED, BLOCK_PENDING } block_state;

/* A run of bytes of one segment. The allocator owns every block struct (all of them are on its `all` list); the
 * memory [ptr, ptr + size) belongs to the segment, which the device owns until the allocator gives it back. A
 * segment's first block (prev NULL) always starts at the address raw_alloc returned. */
typedef struct block {
    char *ptr;
    size_t size;                 /* a multiple of MIN_BLOCK_SIZE */
    size_t requested;            /* what the caller asked for, while handed out */
    int64_t stream;              /* the stream of its segment's allocation */
    int pool;                    /* SMALL or LARGE */
    block_state state;
    int event_count;             /* pending events that hold the block (BLOCK_PENDING) */
    struct block *prev, *next;   /* neighbours in the segment, by address */
    struct block *all_prev, *all_next;
    int64_t *uses;               /* owned: the other streams it was used on (record_stream), n_uses of cap_uses */
    int n_uses, cap_uses;
} block;

/* Free blocks of one pool, sorted by (stream, size, address): the first one at or after (stream, size) is the best
 * fit. The array has room for every block of the pool, so inserting never needs memory. */
typedef struct block_set {
    block **items;               /* owned array; the blocks are the allocator's */
    size_t n, cap;
} block_set;

/* An event recorded on `stream` when a block used there was freed; event NULL stands for one that could not be
 * recorded, settled only by a device-wide synchronization. */
typedef struct pending_event {
    void *event;                 /* owned: destroyed through the device once completed */
    block *b;
    int64_t stream;
} pending_event;

struct pct_caching_allocator {
    pct_device_memory dev;       /* a copy; dev.ctx is the backend's */
    int device;
    pthread_mutex_t mutex;       /* recursive; guards everything below */
    block_set pools[NUM_POOLS];
    size_t n_blocks[NUM_POOLS];  /* block structs of each pool (the free sets' capacity follows it) */
    pct_ptr_map live;            /* address -> block, for the BLOCK_ALLOCATED ones */
    pending_event *events;       /* owned array, n_events of cap_events */
    size_t n_events, cap_events;
    bool settling;               /* events are being processed (a re-entered call leaves them to that pass) */
    block *all;                  /* every block struct, a doubly-linked list */
    size_t reserved;             /* bytes of all segments (torch's total_allocated_memory) */
    bool capped;                 /* set_memory_fraction was called: segments may not exceed `allowed` in all */
    size_t allowed;
    size_t max_split_size;       /* SIZE_MAX: unlimited */
    pct_caching_stats stats;
};

/* ---- errors raised after the mutex is released (Note [Caching allocator]) ---- */

typedef struct deferred_error {
    bool set, nomem;
    pct_error_kind kind;
    char message[1024];          /* meaningful when set */
} deferred_error;

/* No error yet (the message is left unwritten: an allocation should not pay for clearing it). */
#define DEFERRED_INIT(err) ((err).set = (err).nomem = false)

PCT_PRINTF(3, 4) static inline void defer(deferred_error *err, pct_error_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->set = true;
    err->kind = kind;
}

static inline void defer_nomem(deferred_error *err) { err->set = err->nomem = true; }

#define DEFER_ASSERT(err, cond) \
    ((cond) ? 0 : (defer((err), PCT_ERR_RUNTIME, "pyctorch internal error: %s at %s:%d; please report a bug", #cond, \
                         __FILE__, __LINE__), -1))

/* Raise what was deferred (the device's own errors are already set): -1 after a failure. */
static inline int raise_deferred(const deferred_error *err)
{
    if (err->nomem) pct_error_nomem();
    else if (err->set) pct_error_str(err->kind, err->message);
    return -1;
}

static inline void lock(pct_caching_allocator *a) { pthread_mutex_lock(&a->mutex); }
static inline void unlock(pct_caching_allocator *a) { pthread_mutex_unlock(&a->mutex); }

/* ---- statistics ---- */

static inline void stat_increase(pct_caching_stat *st, int64_t amount)
{
    st->current += amount;
    if (st->current > st->peak) st->peak = st->current;
    st->allocated += amount;
}

static inline void stat_decrease(pct_caching_stat *st, int64_t amount)
{
    st->current -= amount;
    st->freed += amount;
}

/* Change a pooled statistic for "all" and for the block's pool. */
static inline void pooled_change(pct_caching_stat *arr, int pool, int64_t amount)
{
    void (*change)(pct_caching_stat *, int64_t) = amount >= 0 ? stat_increase : stat_decrease;
    int64_t magnitude = amount >= 0 ? amount : -amount;
    change(&arr[PCT_STAT_ALL], magnitude);
    change(&arr[pool == SMALL ? PCT_STAT_SMALL_POOL : PCT_STAT_LARGE_POOL], magnitude);
}

static inline bool is_split(const block *b) { return b->prev || b->next; }

/* caching_allocator.c */
/* An entry point's work under the mutex: 0, or -1 with an error deferred (or set by the device). */
typedef int (*pct_ca_step)(pct_caching_allocator *a, void *ptr, int64_t stream, deferred_error *err);
/* Lock, run the step, unlock, raise what it deferred: 0 / -1. */
int pct_ca_locked(pct_caching_allocator *a, pct_ca_step step, void *ptr, int64_t stream);
/* The handed-out block at ptr (taken out of the live table with take), or NULL with RuntimeError deferred. */
block *pct_ca_live_block(pct_caching_allocator *a, void *ptr, bool take, deferred_error *err);
/* The index of the first free block of s not before (stream, size, ptr). */
size_t pct_ca_set_lower_bound(const block_set *s, int64_t stream, size_t size, const char *ptr);
/* Take b out of its free set: 0, or -1 when it is not there. */
int pct_ca_set_remove(block_set *s, const block *b);
/* Unlink and free a block struct (its memory stays the segment's). */
void pct_ca_block_delete(pct_caching_allocator *a, block *b);
/* A block no longer in use, nor awaited by events, back in its set, merged with its free neighbours. */
void pct_ca_free_block(pct_caching_allocator *a, block *b);

/* caching_allocator_release.c */
/* Room for n more pending events: 0, or -1 when memory ran out (nothing changed). */
int pct_ca_reserve_events(pct_caching_allocator *a, size_t n);
/* A freed block used on other streams waits for an event on each (room reserved for its uses + 1): 0, or -1 with the
 * device's error (the block then waits for a device-wide synchronization). */
int pct_ca_await_other_streams(pct_caching_allocator *a, block *b);
/* Free the blocks whose events all completed: 0, or -1 with the device's error. */
int pct_ca_process_events(pct_caching_allocator *a);
/* Out of memory, with max_split_size set: give back cached oversize segments of the stream worth `size` bytes. 1 when
 * enough went back, 0 when not, -1 with an error. */
int pct_ca_release_oversize(pct_caching_allocator *a, int pool, int64_t stream, size_t size, deferred_error *err);
/* Synchronize to settle every event, then give back every whole cached segment: 0, or -1 with an error. */
int pct_ca_release_cached(pct_caching_allocator *a, deferred_error *err);
/* The OutOfMemoryError of a segment of `tried` bytes into err (counted in num_ooms), or the device's error. */
void pct_ca_out_of_memory(pct_caching_allocator *a, size_t tried, deferred_error *err);

#endif
