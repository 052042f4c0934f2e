/* caching_allocator.c: blocks and pools of the caching allocator: sizes, free sets, splitting and merging, alloc and
 * free (Note [Caching allocator] in caching_allocator.h; the rules are torch's c10/cuda/CUDACachingAllocator.cpp). */
#include "caching_allocator_impl.h"
#include <stdlib.h>
#include <string.h>

/* ---- sizes ---- */

static size_t round_size(size_t nbytes)
{
    return nbytes < MIN_BLOCK_SIZE ? MIN_BLOCK_SIZE : (nbytes + MIN_BLOCK_SIZE - 1) / MIN_BLOCK_SIZE * MIN_BLOCK_SIZE;
}

/* The segment to ask the device for when no cached block fits a request of `size` (rounded) bytes. */
static size_t segment_size(size_t size)
{
    if (size <= SMALL_SIZE) return SMALL_BUFFER;
    if (size < MIN_LARGE_ALLOC) return LARGE_BUFFER;
    return (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

/* Whether handing `size` bytes of b out leaves a rest worth keeping as a block of its own. */
static bool should_split(const pct_caching_allocator *a, const block *b, size_t size)
{
    size_t rest = b->size - size;
    if (b->pool == SMALL) return rest >= MIN_BLOCK_SIZE;
    return size < a->max_split_size && rest > SMALL_SIZE;
}

/* ---- block structs and free sets ---- */

static int block_order(const block *b, int64_t stream, size_t size, const char *ptr)
{
    if (b->stream != stream) return b->stream < stream ? -1 : 1;
    if (b->size != size) return b->size < size ? -1 : 1;
    if (b->ptr != ptr) return (uintptr_t)b->ptr < (uintptr_t)ptr ? -1 : 1;
    return 0;
}

/* The index of the first block not before (stream, size, ptr). */
size_t pct_ca_set_lower_bound(const block_set *s, int64_t stream, size_t size, const char *ptr)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_order(s->items[mid], stream, size, ptr) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void set_insert(block_set *s, block *b)
{
    size_t i = pct_ca_set_lower_bound(s, b->stream, b->size, b->ptr);
    memmove(&s->items[i + 1], &s->items[i], (s->n - i) * sizeof *s->items);
    s->items[i] = b;
    s->n++;
}

static void set_remove_at(block_set *s, size_t i)
{
    memmove(&s->items[i], &s->items[i + 1], (s->n - i - 1) * sizeof *s->items);
    s->n--;
}

/* 0, or -1 when b is not in s. */
int pct_ca_set_remove(block_set *s, const block *b)
{
    size_t i = pct_ca_set_lower_bound(s, b->stream, b->size, b->ptr);
    if (i == s->n || s->items[i] != b) return -1;
    set_remove_at(s, i);
    return 0;
}

/* A zeroed block struct of the pool, on the `all` list; NULL when memory ran out (nothing changed). */
static block *block_new(pct_caching_allocator *a, int pool)
{
    block_set *s = &a->pools[pool];
    if (s->cap < a->n_blocks[pool] + 1) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        block **items = realloc(s->items, cap * sizeof *items);
        if (!items) return NULL;
        s->items = items;
        s->cap = cap;
    }
    block *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->pool = pool;
    b->all_next = a->all;
    if (a->all) a->all->all_prev = b;
    a->all = b;
    a->n_blocks[pool]++;
    return b;
}

void pct_ca_block_delete(pct_caching_allocator *a, block *b)
{
    if (b->all_prev) b->all_prev->all_next = b->all_next;
    else a->all = b->all_next;
    if (b->all_next) b->all_next->all_prev = b->all_prev;
    a->n_blocks[b->pool]--;
    free(b->uses);
    free(b);
}

/* ---- handing out ---- */

/* Take the best-fitting free block of the pool on the stream out of its set (torch's get_free_block), or NULL. */
static block *take_free_block(pct_caching_allocator *a, int pool, int64_t stream, size_t size)
{
    block_set *s = &a->pools[pool];
    size_t i = pct_ca_set_lower_bound(s, stream, size, NULL);
    if (i == s->n || s->items[i]->stream != stream) return NULL;
    block *b = s->items[i];
    /* an oversize block serves neither a smaller request nor one it would exceed by a large segment or more */
    if (size < a->max_split_size && b->size >= a->max_split_size) return NULL;
    if (size >= a->max_split_size && b->size >= size + LARGE_BUFFER) return NULL;
    set_remove_at(s, i);
    return b;
}

/* A new segment of `nbytes` from the device as one block, outside any set (torch's alloc_block): 0 with *out set;
 * 1 when the device (or the memory fraction) has no room; -1 with an error. */
static int new_segment(pct_caching_allocator *a, int pool, int64_t stream, size_t nbytes, bool retry, block **out,
                       deferred_error *err)
{
    if (retry) a->stats.num_alloc_retries++;
    if (a->capped && a->reserved + nbytes > a->allowed) return 1;
    block *b = block_new(a, pool);
    if (!b) {
        defer_nomem(err);
        return -1;
    }
    void *ptr = NULL;
    int rc = a->dev.raw_alloc(a->dev.ctx, a->device, nbytes, &ptr);
    if (rc != 0) {
        pct_ca_block_delete(a, b);
        return rc == 1 ? 1 : -1;
    }
    b->ptr = ptr;
    b->size = nbytes;
    b->stream = stream;
    b->state = BLOCK_FREE;
    a->reserved += nbytes;
    pooled_change(a->stats.segment, pool, 1);
    pooled_change(a->stats.reserved_bytes, pool, (int64_t)nbytes);
    if (nbytes >= a->max_split_size) stat_increase(&a->stats.oversize_segments, 1);
    a->stats.num_device_alloc++;
    *out = b;
    return 0;
}

/* Hand `size` bytes of b (taken from its set, or a new segment) out for a request of `requested` bytes, splitting
 * off the rest when worth it (torch's alloc_found_block). NULL when memory ran out: b is back in its set. */
static block *hand_out(pct_caching_allocator *a, block *b, size_t size, size_t requested, deferred_error *err)
{
    const int pool = b->pool;
    const bool split = should_split(a, b, size), was_split = is_split(b);
    block *head = NULL;
    if (pct_ptr_map_reserve(&a->live, a->live.n + 1) < 0 || (split && !(head = block_new(a, pool)))) {
        set_insert(&a->pools[pool], b);
        defer_nomem(err);
        return NULL;
    }
    if (split) {
        /* the head of b is handed out; b keeps the rest and stays free */
        head->ptr = b->ptr;
        head->size = size;
        head->stream = b->stream;
        head->prev = b->prev;
        if (head->prev) head->prev->next = head;
        head->next = b;
        b->prev = head;
        b->ptr += size;
        b->size -= size;
        set_insert(&a->pools[pool], b);
        if (was_split) {
            pooled_change(a->stats.inactive_split_bytes, pool, -(int64_t)size);
        } else {
            pooled_change(a->stats.inactive_split_bytes, pool, (int64_t)b->size);
            pooled_change(a->stats.inactive_split, pool, 1);
        }
        b = head;
    } else if (was_split) {
        pooled_change(a->stats.inactive_split_bytes, pool, -(int64_t)b->size);
        pooled_change(a->stats.inactive_split, pool, -1);
    }
    b->state = BLOCK_ALLOCATED;
    b->requested = requested;
    pct_ptr_map_put(&a->live, b->ptr, b); /* cannot fail: reserved above */
    pooled_change(a->stats.allocation, pool, 1);
    pooled_change(a->stats.allocated_bytes, pool, (int64_t)b->size);
    pooled_change(a->stats.active, pool, 1);
    pooled_change(a->stats.active_bytes, pool, (int64_t)b->size);
    pooled_change(a->stats.requested_bytes, pool, (int64_t)requested);
    if (b->size >= a->max_split_size) stat_increase(&a->stats.oversize_allocations, 1);
    return b;
}

/* ---- taking back ---- */

/* Merge the free neighbour src into dst (torch's try_merge_blocks): the bytes dst gained. */
static size_t merge_free_neighbour(pct_caching_allocator *a, block *dst, block *src)
{
    if (!src || src->state != BLOCK_FREE) return 0;
    pct_ca_set_remove(&a->pools[src->pool], src);
    if (src == dst->prev) {
        dst->ptr = src->ptr;
        dst->prev = src->prev;
        if (dst->prev) dst->prev->next = dst;
    } else {
        dst->next = src->next;
        if (dst->next) dst->next->prev = dst;
    }
    size_t gained = src->size;
    dst->size += gained;
    pct_ca_block_delete(a, src);
    return gained;
}

/* Put a block no longer in use (and no longer awaited by events) back in its set, merged with its free neighbours
 * (torch's free_block). */
void pct_ca_free_block(pct_caching_allocator *a, block *b)
{
    const int pool = b->pool;
    const size_t size = b->size, requested = b->requested;
    int64_t split_blocks = 0, split_bytes = 0;
    block *neighbours[2] = {b->prev, b->next};
    for (int i = 0; i < 2; i++) {
        size_t gained = merge_free_neighbour(a, b, neighbours[i]);
        if (gained) {
            split_blocks--;
            split_bytes -= (int64_t)gained;
        }
    }
    b->state = BLOCK_FREE;
    b->requested = 0;
    set_insert(&a->pools[pool], b);
    if (is_split(b)) {
        split_blocks++;
        split_bytes += (int64_t)b->size;
    }
    if (split_blocks) pooled_change(a->stats.inactive_split, pool, split_blocks);
    if (split_bytes) pooled_change(a->stats.inactive_split_bytes, pool, split_bytes);
    pooled_change(a->stats.active, pool, -1);
    pooled_change(a->stats.active_bytes, pool, -(int64_t)size);
    pooled_change(a->stats.requested_bytes, pool, -(int64_t)requested);
}

/* ---- the API ---- */

pct_caching_allocator *pct_caching_allocator_new(const pct_device_memory *dev, int device)
{
    if (!dev->raw_alloc || !dev->raw_free || !dev->mem_info || !dev->event_record || !dev->event_query ||
        !dev->event_destroy || !dev->synchronize)
        return pct_error(PCT_ERR_VALUE, "caching allocator: the device's memory table lacks a function");
    pct_caching_allocator *a = calloc(1, sizeof *a);
    if (!a) return pct_error_nomem();
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    int rc = pthread_mutex_init(&a->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) {
        free(a);
        return pct_error(PCT_ERR_RUNTIME, "caching allocator: could not create its mutex (error %d)", rc);
    }
    a->dev = *dev;
    a->device = device;
    a->max_split_size = SIZE_MAX;
    a->stats.max_split_size = -1;
    return a;
}

int pct_caching_allocator_destroy(pct_caching_allocator *a)
{
    if (!a) return 0;
    int rc = 0;
    if (a->all && a->dev.synchronize(a->dev.ctx, a->device) < 0) rc = -1;
    for (size_t i = 0; i < a->n_events; i++)
        if (a->events[i].event) a->dev.event_destroy(a->dev.ctx, a->events[i].event);
    while (a->all) {
        block *b = a->all;
        if (!b->prev && a->dev.raw_free(a->dev.ctx, a->device, b->ptr) < 0) rc = -1;
        pct_ca_block_delete(a, b);
    }
    for (int pool = 0; pool < NUM_POOLS; pool++) free(a->pools[pool].items);
    pct_ptr_map_clear(&a->live);
    free(a->events);
    pthread_mutex_destroy(&a->mutex);
    free(a);
    return rc;
}

void *pct_caching_alloc(pct_caching_allocator *a, size_t nbytes, int64_t stream)
{
    if (nbytes == 0) return NULL;
    if (nbytes >= MAX_REQUEST)
        return pct_error(PCT_ERR_OUT_OF_MEMORY, "CUDA out of memory. Tried to allocate more than 1EB memory.");
    deferred_error err;
    DEFERRED_INIT(err);
    const size_t size = round_size(nbytes), alloc_size = segment_size(size);
    const int pool = size <= SMALL_SIZE ? SMALL : LARGE;
    void *ptr = NULL;
    lock(a);
    block *b = NULL;
    if (pct_ca_process_events(a) < 0) goto done;
    if (!(b = take_free_block(a, pool, stream, size))) {
        /* no cached block fits: a new segment; when the device is full, release cached ones and ask again */
        int rc = new_segment(a, pool, stream, alloc_size, false, &b, &err);
        if (rc == 1) {
            rc = pct_ca_release_oversize(a, pool, stream, size, &err);
            rc = rc == 1 ? new_segment(a, pool, stream, alloc_size, false, &b, &err) : rc == 0 ? 1 : -1;
        }
        if (rc == 1 && (rc = pct_ca_release_cached(a, &err)) == 0)
            rc = new_segment(a, pool, stream, alloc_size, true, &b, &err);
        if (rc == 1) pct_ca_out_of_memory(a, alloc_size, &err);
        if (rc != 0) goto done;
    }
    if ((b = hand_out(a, b, size, nbytes, &err))) ptr = b->ptr;
done:
    unlock(a);
    if (!ptr) raise_deferred(&err);
    return ptr;
}

int pct_ca_locked(pct_caching_allocator *a, pct_ca_step step, void *ptr, int64_t stream)
{
    deferred_error err;
    DEFERRED_INIT(err);
    lock(a);
    int rc = step(a, ptr, stream, &err);
    unlock(a);
    return rc < 0 ? raise_deferred(&err) : 0;
}

block *pct_ca_live_block(pct_caching_allocator *a, void *ptr, bool take, deferred_error *err)
{
    block *b = take ? pct_ptr_map_remove(&a->live, ptr) : pct_ptr_map_get(&a->live, ptr);
    if (!b) defer(err, PCT_ERR_RUNTIME, "invalid device pointer: %p", ptr);
    return b;
}

static int free_step(pct_caching_allocator *a, void *ptr, int64_t unused, deferred_error *err)
{
    (void)unused;
    block *b = pct_ca_live_block(a, ptr, true, err);
    if (!b) return -1;
    if (b->n_uses && pct_ca_reserve_events(a, (size_t)b->n_uses + 1) < 0) {
        pct_ptr_map_put(&a->live, ptr, b); /* cannot fail: the slot was just freed */
        defer_nomem(err);
        return -1;
    }
    pooled_change(a->stats.allocation, b->pool, -1);
    pooled_change(a->stats.allocated_bytes, b->pool, -(int64_t)b->size);
    if (b->size >= a->max_split_size) stat_decrease(&a->stats.oversize_allocations, 1);
    if (b->n_uses) return pct_ca_await_other_streams(a, b);
    pct_ca_free_block(a, b);
    return 0;
}

int pct_caching_free(pct_caching_allocator *a, void *ptr) { return ptr ? pct_ca_locked(a, free_step, ptr, 0) : 0; }
