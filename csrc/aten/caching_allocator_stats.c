/* caching_allocator_stats.c: the caching allocator's statistics under torch's names, and its messages (Note [Caching
 * allocator] in caching_allocator.h). Plain functions of the values they are given: the allocator calls them under
 * its mutex. */
#include "caching_allocator_impl.h"
#include <inttypes.h>
#include <stdio.h>

char *pct_format_size(uint64_t nbytes, char *buf, size_t n)
{
    /* torch's format_size (c10/cuda/CUDACachingAllocator.cpp): a unit serves up to and including 1024 of the
     * previous one; two decimals above bytes. */
    static const struct { uint64_t limit; double unit; const char *name; } units[] = {
        {UINT64_C(1) << 20, 1024.0, "KiB"},
        {UINT64_C(1) << 30, 1048576.0, "MiB"},
        {UINT64_MAX, 1073741824.0, "GiB"},
    };
    if (nbytes <= 1024) {
        snprintf(buf, n, "%" PRIu64 " bytes", nbytes);
        return buf;
    }
    size_t u = 0;
    while (nbytes > units[u].limit) u++;
    snprintf(buf, n, "%.2f %s", (double)nbytes / units[u].unit, units[u].name);
    return buf;
}

/* The statistics split by pool, in torch's DeviceStats order, with their offsets in the struct. */
static const struct { const char *name; size_t offset; } pool_stats[] = {
    {"allocation", offsetof(pct_caching_stats, allocation)},
    {"segment", offsetof(pct_caching_stats, segment)},
    {"active", offsetof(pct_caching_stats, active)},
    {"inactive_split", offsetof(pct_caching_stats, inactive_split)},
    {"allocated_bytes", offsetof(pct_caching_stats, allocated_bytes)},
    {"reserved_bytes", offsetof(pct_caching_stats, reserved_bytes)},
    {"active_bytes", offsetof(pct_caching_stats, active_bytes)},
    {"inactive_split_bytes", offsetof(pct_caching_stats, inactive_split_bytes)},
    {"requested_bytes", offsetof(pct_caching_stats, requested_bytes)},
};
static const char *const pool_names[PCT_NUM_STAT_POOLS] = {"all", "small_pool", "large_pool"};

/* One stat's four values as "<prefix>.current" and so on. */
static int foreach_stat(const char *prefix, const pct_caching_stat *st, int (*fn)(const char *, int64_t, void *),
                        void *ctx)
{
    const struct { const char *name; int64_t value; } parts[] = {
        {"current", st->current}, {"peak", st->peak}, {"allocated", st->allocated}, {"freed", st->freed}};
    char key[96];
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        snprintf(key, sizeof key, "%s.%s", prefix, parts[i].name);
        int rc = fn(key, parts[i].value, ctx);
        if (rc) return rc;
    }
    return 0;
}

int pct_caching_stats_foreach(const pct_caching_stats *s, int (*fn)(const char *key, int64_t value, void *ctx),
                              void *ctx)
{
    int rc;
    char prefix[64];
    for (size_t i = 0; i < sizeof pool_stats / sizeof pool_stats[0]; i++) {
        const pct_caching_stat *arr = (const pct_caching_stat *)((const char *)s + pool_stats[i].offset);
        for (int p = 0; p < PCT_NUM_STAT_POOLS; p++) {
            snprintf(prefix, sizeof prefix, "%s.%s", pool_stats[i].name, pool_names[p]);
            if ((rc = foreach_stat(prefix, &arr[p], fn, ctx))) return rc;
        }
    }
    const struct { const char *name; int64_t value; } counters[] = {
        {"num_alloc_retries", s->num_alloc_retries}, {"num_ooms", s->num_ooms},
        {"num_sync_all_streams", s->num_sync_all_streams}, {"num_device_alloc", s->num_device_alloc},
        {"num_device_free", s->num_device_free}, {"max_split_size", s->max_split_size},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        if ((rc = fn(counters[i].name, counters[i].value, ctx))) return rc;
    if ((rc = foreach_stat("oversize_allocations", &s->oversize_allocations, fn, ctx))) return rc;
    return foreach_stat("oversize_segments", &s->oversize_segments, fn, ctx);
}

/* Every pct_caching_stat of the struct, for the resets: the pooled arrays, then the two oversize ones. */
static void each_stat(pct_caching_stats *s, void (*fn)(pct_caching_stat *))
{
    for (size_t i = 0; i < sizeof pool_stats / sizeof pool_stats[0]; i++) {
        pct_caching_stat *arr = (pct_caching_stat *)((char *)s + pool_stats[i].offset);
        for (int p = 0; p < PCT_NUM_STAT_POOLS; p++) fn(&arr[p]);
    }
    fn(&s->oversize_allocations);
    fn(&s->oversize_segments);
}

static void reset_peak(pct_caching_stat *st) { st->peak = st->current; }
static void reset_accumulated(pct_caching_stat *st) { st->allocated = st->freed = 0; }

void pct_caching_stats_reset_peak(pct_caching_stats *s) { each_stat(s, reset_peak); }

void pct_caching_stats_reset_accumulated(pct_caching_stats *s)
{
    each_stat(s, reset_accumulated);
    s->num_alloc_retries = s->num_ooms = s->num_sync_all_streams = 0;
    s->num_device_alloc = s->num_device_free = 0;
}

void pct_caching_oom_message(const pct_caching_oom_info *info, char *buf, size_t n)
{
    char tried[32], total[32], free_bytes[32], cap[32], allowed[48] = "", allocated[32], unallocated[32];
    pct_format_size(info->tried, tried, sizeof tried);
    pct_format_size(info->total, total, sizeof total);
    pct_format_size(info->free, free_bytes, sizeof free_bytes);
    if (info->capped) snprintf(allowed, sizeof allowed, "%s allowed; ", pct_format_size(info->allowed, cap, sizeof cap));
    pct_format_size((uint64_t)info->allocated, allocated, sizeof allocated);
    pct_format_size((uint64_t)(info->reserved - info->allocated), unallocated, sizeof unallocated);
    /* torch's text (DeviceCachingAllocator::malloc), where the process list it gets from NVML is empty */
    snprintf(buf, n,
             "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free. "
             "%sOf the allocated memory %s is allocated by PyTorch, and %s is reserved by PyTorch but unallocated. "
             "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
             "to avoid fragmentation.  See documentation for Memory Management  "
             "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
             tried, info->device, total, free_bytes, allowed, allocated, unallocated);
}

/* ---- the API: statistics and settings ---- */

void pct_caching_get_stats(pct_caching_allocator *a, pct_caching_stats *out)
{
    lock(a);
    *out = a->stats;
    unlock(a);
}

void pct_caching_reset_peak(pct_caching_allocator *a)
{
    lock(a);
    pct_caching_stats_reset_peak(&a->stats);
    unlock(a);
}

void pct_caching_reset_accumulated(pct_caching_allocator *a)
{
    lock(a);
    pct_caching_stats_reset_accumulated(&a->stats);
    unlock(a);
}

int pct_caching_set_memory_fraction(pct_caching_allocator *a, double fraction)
{
    if (!(fraction >= 0.0 && fraction <= 1.0))
        return pct_error(PCT_ERR_VALUE, "Invalid fraction value: %g. Allowed range: 0~1", fraction), -1;
    size_t free_bytes = 0, total = 0;
    lock(a);
    int rc = a->dev.mem_info(a->dev.ctx, a->device, &free_bytes, &total);
    if (rc == 0) {
        a->allowed = (size_t)(fraction * (double)total);
        a->capped = true;
    }
    unlock(a);
    return rc < 0 ? -1 : 0;
}

int pct_caching_set_max_split_size(pct_caching_allocator *a, size_t nbytes)
{
    if (nbytes <= LARGE_BUFFER)
        return pct_error(PCT_ERR_VALUE, "max_split_size must be more than %zu MiB, got %zu bytes",
                         LARGE_BUFFER >> 20, nbytes), -1;
    lock(a);
    a->max_split_size = nbytes;
    a->stats.max_split_size = nbytes == SIZE_MAX ? -1 : (int64_t)nbytes;
    unlock(a);
    return 0;
}
