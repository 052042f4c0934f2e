/* caching_sim.c: the simulated device and the checking client of caching_sim.h. */
#include "caching_sim.h"
#include "error.h"
#include "ptr_map.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_ALIGNMENT 512

/* An event of the simulated device: complete or not. Owned by whoever holds it (the allocator), registered in the
 * sim's list while it lives so complete() can reach it. */
typedef struct sim_event {
    int64_t stream;
    bool done;
} sim_event;

struct pct_caching_sim {
    pthread_mutex_t mutex;        /* guards the device state below (the allocator calls in under its own mutex) */
    size_t capacity, raw_total;
    int64_t raw_allocs, raw_frees;
    pct_ptr_map raw;              /* raw allocation -> its size (as a pointer-sized integer); the memory is owned */
    sim_event **events;           /* the live events (the array is owned, the events are the allocator's) */
    size_t n_events, cap_events;
    pct_ptr_map live;             /* address handed out -> (nbytes << 8 | pattern), as a pointer-sized integer */
    unsigned next_pattern;
    pct_caching_allocator *allocator; /* owned */
};

/* ---- the device ---- */

static int sim_raw_alloc(void *ctx, int device, size_t nbytes, void **ptr)
{
    (void)device;
    pct_caching_sim *s = ctx;
    int rc = 1;
    pthread_mutex_lock(&s->mutex);
    if (nbytes <= s->capacity - s->raw_total) {
        void *p = aligned_alloc(SIM_ALIGNMENT, (nbytes + SIM_ALIGNMENT - 1) / SIM_ALIGNMENT * SIM_ALIGNMENT);
        if (p && pct_ptr_map_put(&s->raw, p, (void *)(uintptr_t)nbytes) == 0) {
            s->raw_total += nbytes;
            s->raw_allocs++;
            *ptr = p;
            rc = 0;
        } else {
            free(p); /* the host is out of memory: so is the simulated device */
        }
    }
    pthread_mutex_unlock(&s->mutex);
    return rc;
}

static int sim_raw_free(void *ctx, int device, void *ptr)
{
    (void)device;
    pct_caching_sim *s = ctx;
    pthread_mutex_lock(&s->mutex);
    size_t nbytes = (size_t)(uintptr_t)pct_ptr_map_remove(&s->raw, ptr);
    if (nbytes) {
        s->raw_total -= nbytes;
        s->raw_frees++;
    }
    pthread_mutex_unlock(&s->mutex);
    if (!nbytes) {
        pct_error(PCT_ERR_RUNTIME, "simulated device: raw_free(%p) of memory raw_alloc did not give", ptr);
        return -1;
    }
    free(ptr);
    return 0;
}

static int sim_mem_info(void *ctx, int device, size_t *free_bytes, size_t *total_bytes)
{
    (void)device;
    pct_caching_sim *s = ctx;
    pthread_mutex_lock(&s->mutex);
    *total_bytes = s->capacity;
    *free_bytes = s->capacity - s->raw_total;
    pthread_mutex_unlock(&s->mutex);
    return 0;
}

static void *sim_event_record(void *ctx, int device, int64_t stream)
{
    (void)device;
    pct_caching_sim *s = ctx;
    sim_event *e = malloc(sizeof *e);
    if (!e) return pct_error_nomem();
    *e = (sim_event){stream, false};
    pthread_mutex_lock(&s->mutex);
    if (s->n_events == s->cap_events) {
        size_t cap = s->cap_events ? 2 * s->cap_events : 16;
        sim_event **events = realloc(s->events, cap * sizeof *events);
        if (!events) {
            pthread_mutex_unlock(&s->mutex);
            free(e);
            return pct_error_nomem();
        }
        s->events = events;
        s->cap_events = cap;
    }
    s->events[s->n_events++] = e;
    pthread_mutex_unlock(&s->mutex);
    return e;
}

static int sim_event_query(void *ctx, void *event)
{
    pct_caching_sim *s = ctx;
    pthread_mutex_lock(&s->mutex);
    int done = ((sim_event *)event)->done;
    pthread_mutex_unlock(&s->mutex);
    return done;
}

static void sim_event_destroy(void *ctx, void *event)
{
    pct_caching_sim *s = ctx;
    pthread_mutex_lock(&s->mutex);
    for (size_t i = 0; i < s->n_events; i++)
        if (s->events[i] == event) {
            s->events[i] = s->events[--s->n_events];
            break;
        }
    pthread_mutex_unlock(&s->mutex);
    free(event);
}

/* Every event of the stream (of every stream with all) completes. */
static void complete_events(pct_caching_sim *s, bool all, int64_t stream)
{
    pthread_mutex_lock(&s->mutex);
    for (size_t i = 0; i < s->n_events; i++)
        if (all || s->events[i]->stream == stream) s->events[i]->done = true;
    pthread_mutex_unlock(&s->mutex);
}

static int sim_synchronize(void *ctx, int device)
{
    (void)device;
    complete_events(ctx, true, 0);
    return 0;
}

/* ---- the client ---- */

static unsigned char pattern_of(uintptr_t record) { return (unsigned char)(record & 0xff); }
static size_t nbytes_of(uintptr_t record) { return (size_t)(record >> 8); }

/* The index of the first of the nbytes at ptr that lost the pattern, or nbytes when they all hold it. */
static size_t first_changed(const void *ptr, size_t nbytes, unsigned char pattern)
{
    unsigned char expected[4096];
    memset(expected, pattern, sizeof expected);
    const unsigned char *p = ptr;
    size_t i = 0;
    /* memcmp by pages (fast under the sanitizers too), then the byte within the page that differs */
    while (i < nbytes) {
        size_t n = nbytes - i < sizeof expected ? nbytes - i : sizeof expected;
        if (memcmp(p + i, expected, n) != 0) break;
        i += n;
    }
    while (i < nbytes && p[i] == pattern) i++;
    return i;
}

#define CHANGED_FORMAT "caching allocator simulator: byte %zu of the %zu-byte block at %p changed while it was live " \
                       "(0x%02x instead of 0x%02x): two live blocks overlap"

/* 0 when the nbytes at ptr all hold the pattern, else -1 with AssertionError. */
static int check_pattern(const void *ptr, size_t nbytes, unsigned char pattern)
{
    size_t i = first_changed(ptr, nbytes, pattern);
    if (i == nbytes) return 0;
    pct_error(PCT_ERR_ASSERTION, CHANGED_FORMAT, i, nbytes, ptr, ((const unsigned char *)ptr)[i], pattern);
    return -1;
}

pct_caching_sim *pct_caching_sim_new(size_t capacity)
{
    pct_caching_sim *s = calloc(1, sizeof *s);
    if (!s) return pct_error_nomem();
    pthread_mutex_init(&s->mutex, NULL);
    s->capacity = capacity;
    const pct_device_memory dev = {
        .ctx = s, .raw_alloc = sim_raw_alloc, .raw_free = sim_raw_free, .mem_info = sim_mem_info,
        .event_record = sim_event_record, .event_query = sim_event_query, .event_destroy = sim_event_destroy,
        .synchronize = sim_synchronize,
    };
    if (!(s->allocator = pct_caching_allocator_new(&dev, 0))) {
        pthread_mutex_destroy(&s->mutex);
        free(s);
        return NULL;
    }
    return s;
}

int pct_caching_sim_close(pct_caching_sim *s)
{
    int rc = 0;
    for (size_t i = 0; i < s->live.cap && rc == 0; i++)
        if (s->live.keys[i]) {
            uintptr_t record = (uintptr_t)s->live.values[i];
            rc = check_pattern(s->live.keys[i], nbytes_of(record), pattern_of(record));
        }
    if (pct_caching_allocator_destroy(s->allocator) < 0) rc = -1;
    /* what the allocator left (nothing, unless it lost track of a segment) */
    for (size_t i = 0; i < s->raw.cap; i++)
        if (s->raw.keys[i]) free((void *)s->raw.keys[i]);
    for (size_t i = 0; i < s->n_events; i++) free(s->events[i]);
    pct_ptr_map_clear(&s->raw);
    pct_ptr_map_clear(&s->live);
    free(s->events);
    pthread_mutex_destroy(&s->mutex);
    free(s);
    return rc;
}

pct_caching_allocator *pct_caching_sim_allocator(pct_caching_sim *s) { return s->allocator; }

void *pct_caching_sim_alloc(pct_caching_sim *s, size_t nbytes, int64_t stream)
{
    void *ptr = pct_caching_alloc(s->allocator, nbytes, stream);
    if (!ptr) return NULL;
    pthread_mutex_lock(&s->mutex);
    unsigned char pattern = (unsigned char)(0x5A ^ s->next_pattern++);
    int rc = pct_ptr_map_put(&s->live, ptr, (void *)((uintptr_t)nbytes << 8 | pattern));
    pthread_mutex_unlock(&s->mutex);
    if (rc < 0) {
        pct_caching_free(s->allocator, ptr);
        return pct_error_nomem();
    }
    memset(ptr, pattern, nbytes);
    return ptr;
}

int pct_caching_sim_free(pct_caching_sim *s, void *ptr)
{
    pthread_mutex_lock(&s->mutex);
    uintptr_t record = (uintptr_t)pct_ptr_map_remove(&s->live, ptr);
    pthread_mutex_unlock(&s->mutex);
    if (record && check_pattern(ptr, nbytes_of(record), pattern_of(record)) < 0) return -1;
    return pct_caching_free(s->allocator, ptr);
}

void pct_caching_sim_complete(pct_caching_sim *s, int64_t stream) { complete_events(s, false, stream); }

void pct_caching_sim_raw_calls(pct_caching_sim *s, int64_t *allocs, int64_t *frees)
{
    pthread_mutex_lock(&s->mutex);
    *allocs = s->raw_allocs;
    *frees = s->raw_frees;
    pthread_mutex_unlock(&s->mutex);
}

/* ---- threads ---- */

#define STRESS_LIVE 8

/* One stress thread: its blocks, and the first overwritten byte it found (formatted here, raised by the caller). */
typedef struct stress_thread {
    pct_caching_sim *s;
    int id, iterations;
    void *live[STRESS_LIVE];
    size_t nbytes[STRESS_LIVE];
    unsigned char pattern[STRESS_LIVE];
    bool failed;
    char message[256];
} stress_thread;

/* Check and free block k of the thread. */
static void stress_release(stress_thread *t, int k)
{
    size_t i = first_changed(t->live[k], t->nbytes[k], t->pattern[k]);
    if (i < t->nbytes[k] && !t->failed) {
        snprintf(t->message, sizeof t->message, CHANGED_FORMAT, i, t->nbytes[k], t->live[k],
                 ((unsigned char *)t->live[k])[i], t->pattern[k]);
        t->failed = true;
    }
    pct_caching_free(t->s->allocator, t->live[k]);
    t->live[k] = NULL;
}

static void *stress_run(void *arg)
{
    stress_thread *t = arg;
    uint64_t x = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(t->id + 1);
    const int64_t other_stream = 10 + t->id;
    for (int i = 0; i < t->iterations && !t->failed; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        int k = (int)(x % STRESS_LIVE);
        if (t->live[k]) {
            stress_release(t, k);
        } else {
            size_t n = 1 + (size_t)((x >> 8) % (x & 0x10000 ? (2 << 20) : (64 << 10)));
            void *p = pct_caching_alloc(t->s->allocator, n, t->id % 2);
            if (!p) {
                snprintf(t->message, sizeof t->message, "caching allocator simulator: an allocation failed");
                t->failed = true;
                break;
            }
            t->live[k] = p;
            t->nbytes[k] = n;
            t->pattern[k] = (unsigned char)(t->id * 37 + i);
            memset(p, t->pattern[k], n);
            if ((x >> 40) % 4 == 0) pct_caching_record_stream(t->s->allocator, p, other_stream);
        }
        if (i % 32 == 0) pct_caching_sim_complete(t->s, other_stream);
    }
    for (int k = 0; k < STRESS_LIVE; k++)
        if (t->live[k]) stress_release(t, k);
    return NULL;
}

int pct_caching_sim_stress(pct_caching_sim *s, int threads, int iterations)
{
    if (threads < 1 || threads > 64) return pct_error(PCT_ERR_VALUE, "stress: 1 to 64 threads, got %d", threads), -1;
    stress_thread *t = calloc((size_t)threads, sizeof *t);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    int started = 0, rc = 0;
    if (!t || !ids) {
        free(t);
        free(ids);
        return pct_error_nomem(), -1;
    }
    for (; started < threads; started++) {
        t[started] = (stress_thread){.s = s, .id = started, .iterations = iterations};
        if (pthread_create(&ids[started], NULL, stress_run, &t[started]) != 0) break;
    }
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    if (started < threads) rc = -1, pct_error(PCT_ERR_RUNTIME, "stress: could not start thread %d", started);
    for (int i = 0; i < started && rc == 0; i++)
        if (t[i].failed) rc = -1, pct_error_str(PCT_ERR_ASSERTION, t[i].message);
    free(t);
    free(ids);
    return rc;
}
