/* caching_allocator_release.c: memory coming back to the caching allocator: blocks used on other streams, freed
 * once those streams' events complete; whole segments given back to the device by empty_cache and when memory runs
 * out; the out-of-memory error (Note [Caching allocator] in caching_allocator.h). */
#include "caching_allocator_impl.h"
#include <stdlib.h>

int pct_ca_reserve_events(pct_caching_allocator *a, size_t n)
{
    if (a->n_events + n <= a->cap_events) return 0;
    size_t cap = a->cap_events ? a->cap_events : 16;
    while (cap < a->n_events + n) cap *= 2;
    pending_event *events = realloc(a->events, cap * sizeof *events);
    if (!events) return -1;
    a->events = events;
    a->cap_events = cap;
    return 0;
}

/* A freed block used on other streams: an event on each of them (torch's insert_events); room for n_uses + 1 entries
 * is reserved. -1 with the device's error when one could not be recorded: an entry without event then holds the
 * block until a synchronization. */
int pct_ca_await_other_streams(pct_caching_allocator *a, block *b)
{
    int rc = 0;
    b->state = BLOCK_PENDING;
    for (int i = 0; i < b->n_uses && rc == 0; i++) {
        void *event = a->dev.event_record(a->dev.ctx, a->device, b->uses[i]);
        if (!event) rc = -1;
        a->events[a->n_events++] = (pending_event){event, b, b->uses[i]};
        b->event_count++;
    }
    b->n_uses = 0;
    return rc;
}

/* The block of a pending entry saw one of its events complete. */
static void event_done(pct_caching_allocator *a, const pending_event *e)
{
    if (e->event) a->dev.event_destroy(a->dev.ctx, e->event);
    if (--e->b->event_count == 0) pct_ca_free_block(a, e->b);
}

/* Free the blocks whose events all completed (torch's process_events): 0, or -1 with the device's error. */
int pct_ca_process_events(pct_caching_allocator *a)
{
    if (a->settling) return 0;
    a->settling = true;
    int rc = 0;
    size_t kept = 0;
    /* n_events is read again each turn: a call re-entering from the device may append */
    for (size_t i = 0; i < a->n_events; i++) {
        pending_event e = a->events[i];
        int done = rc == 0 && e.event ? a->dev.event_query(a->dev.ctx, e.event) : 0;
        if (done < 0) rc = -1;
        if (done > 0) event_done(a, &e);
        else a->events[kept++] = e;
    }
    a->n_events = kept;
    a->settling = false;
    return rc;
}

/* Wait for the whole device, then free every block awaiting events (torch's synchronize_and_free_events). */
static int settle_all_events(pct_caching_allocator *a)
{
    a->stats.num_sync_all_streams++;
    if (!a->n_events || a->settling) return 0;
    if (a->dev.synchronize(a->dev.ctx, a->device) < 0) return -1;
    a->settling = true;
    for (size_t i = 0; i < a->n_events; i++) event_done(a, &a->events[i]);
    a->n_events = 0;
    a->settling = false;
    return 0;
}

/* ---- giving segments back ---- */

/* Give the whole free segment b back to the device (torch's release_block): 0, or -1 with the device's error (b
 * stays cached). */
static int release_segment(pct_caching_allocator *a, block *b, deferred_error *err)
{
    if (DEFER_ASSERT(err, b->state == BLOCK_FREE && !is_split(b)) < 0) return -1;
    if (a->dev.raw_free(a->dev.ctx, a->device, b->ptr) < 0) return -1;
    pct_ca_set_remove(&a->pools[b->pool], b);
    a->reserved -= b->size;
    a->stats.num_device_free++;
    pooled_change(a->stats.segment, b->pool, -1);
    pooled_change(a->stats.reserved_bytes, b->pool, -(int64_t)b->size);
    if (b->size >= a->max_split_size) stat_decrease(&a->stats.oversize_segments, 1);
    pct_ca_block_delete(a, b);
    return 0;
}

/* Release cached oversize segments on the stream to make room for `size` bytes: one big enough, else the largest
 * ones until they add up (torch's release_available_cached_blocks; nothing without max_split_size). 1 when enough
 * was released, 0 when not, -1 with an error. */
int pct_ca_release_oversize(pct_caching_allocator *a, int pool, int64_t stream, size_t size, deferred_error *err)
{
    if (a->max_split_size == SIZE_MAX) return 0;
    block_set *s = &a->pools[pool];
    const size_t want = size < a->max_split_size ? a->max_split_size : size;
    size_t i = pct_ca_set_lower_bound(s, stream, want, NULL);
    if (i < s->n && s->items[i]->stream == stream)
        return is_split(s->items[i]) ? 0 : release_segment(a, s->items[i], err) < 0 ? -1 : 1;
    size_t released = 0;
    while (released < want && i > 0) {
        block *b = s->items[--i];
        if (b->stream != stream || b->size < a->max_split_size || is_split(b)) break;
        released += b->size;
        if (release_segment(a, b, err) < 0) return -1;
    }
    return released >= want;
}

/* Settle every event, then give back every whole cached segment (torch's release_cached_blocks): 0, or -1. */
int pct_ca_release_cached(pct_caching_allocator *a, deferred_error *err)
{
    if (settle_all_events(a) < 0) return -1;
    for (int pool = LARGE; pool >= SMALL; pool--) {
        block_set *s = &a->pools[pool];
        for (size_t i = 0; i < s->n;) {
            if (is_split(s->items[i])) i++;
            else if (release_segment(a, s->items[i], err) < 0) return -1;
        }
    }
    return 0;
}

/* ---- out of memory ---- */

void pct_ca_out_of_memory(pct_caching_allocator *a, size_t tried, deferred_error *err)
{
    pct_caching_oom_info info = {
        .device = a->device, .tried = tried, .capped = a->capped, .allowed = a->allowed,
        .allocated = a->stats.allocated_bytes[PCT_STAT_ALL].current,
        .reserved = a->stats.reserved_bytes[PCT_STAT_ALL].current,
    };
    if (a->dev.mem_info(a->dev.ctx, a->device, &info.free, &info.total) < 0) return;
    a->stats.num_ooms++;
    pct_caching_oom_message(&info, err->message, sizeof err->message);
    err->set = true;
    err->kind = PCT_ERR_OUT_OF_MEMORY;
}

static int record_stream_step(pct_caching_allocator *a, void *ptr, int64_t stream, deferred_error *err)
{
    block *b = pct_ca_live_block(a, ptr, false, err);
    if (!b) return -1;
    if (stream == b->stream) return 0; /* its own stream's uses are ordered already */
    for (int i = 0; i < b->n_uses; i++)
        if (b->uses[i] == stream) return 0;
    if (b->n_uses == b->cap_uses) {
        int cap = b->cap_uses ? 2 * b->cap_uses : 4;
        int64_t *uses = realloc(b->uses, (size_t)cap * sizeof *uses);
        if (!uses) {
            defer_nomem(err);
            return -1;
        }
        b->uses = uses;
        b->cap_uses = cap;
    }
    b->uses[b->n_uses++] = stream;
    return 0;
}

int pct_caching_record_stream(pct_caching_allocator *a, void *ptr, int64_t stream)
{
    return ptr ? pct_ca_locked(a, record_stream_step, ptr, stream) : 0;
}

static int empty_cache_step(pct_caching_allocator *a, void *unused_ptr, int64_t unused_stream, deferred_error *err)
{
    (void)unused_ptr;
    (void)unused_stream;
    return pct_ca_release_cached(a, err);
}

int pct_caching_empty_cache(pct_caching_allocator *a) { return pct_ca_locked(a, empty_cache_step, NULL, 0); }
