/* cpu_allocator.c: the CPU allocator, with a bounded cache of freed large blocks.
 *
 * Why a cache: a training step frees and reallocates the same activation and gradient sizes every
 * iteration. glibc hands blocks above its mmap threshold back to the kernel and trims the heap top,
 * so each step paid page faults on fresh memory (measured: 10-18% of a small GPT or CNN step, and
 * 4/5 of a plain `a + b` on 16M floats). A freed block of at least PCT_CACHE_MIN_BYTES goes onto a
 * free list of its size class instead and is handed out again for a request of the same class.
 *
 * Ownership: blocks on the free lists belong to the cache (their first bytes hold the list link);
 * a block handed out belongs to its storage until freed. Bounds: at most `cache_limit` bytes sit
 * in the cache (PYCTORCH_CPU_CACHE_MB, default 1/16 of physical memory within [256 MB, 2 GB]; 0
 * turns caching off); a block that does not fit is freed at once, and an allocation that fails
 * empties the cache and retries. Blocks above PCT_CACHE_MAX_BYTES are never cached and keep their
 * exact size. Sanitizer builds cache nothing, so a use after free is still reported.
 *
 * Size classes: 8 per power of two (at most 12.5% rounding), from 32 KiB to 256 MiB. The free lists
 * are guarded by one mutex; fork handlers keep a child from inheriting it locked (DataLoader workers
 * fork while other threads may allocate). */
#include "storage.h"
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <unistd.h>

#define PCT_CACHE_MIN_SHIFT 15                 /* 32 KiB */
#define PCT_CACHE_MAX_SHIFT 28                 /* 256 MiB */
#define PCT_CACHE_MIN_BYTES ((size_t)1 << PCT_CACHE_MIN_SHIFT)
#define PCT_CACHE_MAX_BYTES ((size_t)1 << PCT_CACHE_MAX_SHIFT)
#define PCT_CLASS_STEPS 8
#define PCT_NUM_CLASSES ((PCT_CACHE_MAX_SHIFT - PCT_CACHE_MIN_SHIFT) * PCT_CLASS_STEPS + 1)

#if defined(__SANITIZE_ADDRESS__)
#define PCT_CACHE_DEFAULT_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PCT_CACHE_DEFAULT_ON 0
#endif
#endif
#ifndef PCT_CACHE_DEFAULT_ON
#define PCT_CACHE_DEFAULT_ON 1
#endif

typedef struct free_block { struct free_block *next; } free_block;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static free_block *free_lists[PCT_NUM_CLASSES];
static size_t cache_limit, cache_bytes, cache_blocks;
static unsigned long long cache_hits, cache_misses;

static void lock_for_fork(void) { pthread_mutex_lock(&cache_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&cache_lock); }

static void cache_init(void)
{
    size_t limit = 0;
    const char *env = getenv("PYCTORCH_CPU_CACHE_MB");
    if (env && *env) {
        char *end;
        unsigned long long mb = strtoull(env, &end, 10);
        limit = (size_t)mb << 20;
    } else if (PCT_CACHE_DEFAULT_ON) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        size_t phys = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
        limit = phys / 16;
        if (limit < ((size_t)256 << 20)) limit = (size_t)256 << 20;
        if (limit > ((size_t)2 << 30)) limit = (size_t)2 << 30;
    }
    cache_limit = limit;
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

/* The class of a size in [MIN, MAX] and, in *rounded, the class's block size. Class 0 is MIN itself;
 * above it, a size in (2^s, 2^(s+1)] rounds up to a multiple of 2^s/8, giving 8 classes per doubling. */
static int size_class(size_t nbytes, size_t *rounded)
{
    if (nbytes <= PCT_CACHE_MIN_BYTES) { *rounded = PCT_CACHE_MIN_BYTES; return 0; }
    int s = 63 - __builtin_clzll((unsigned long long)(nbytes - 1));
    size_t step = (size_t)1 << s >> 3;
    size_t k = (nbytes + step - 1) / step;          /* 9..16 */
    *rounded = k * step;
    return 1 + (s - PCT_CACHE_MIN_SHIFT) * PCT_CLASS_STEPS + (int)(k - PCT_CLASS_STEPS - 1);
}

static void *aligned_block(size_t nbytes)
{
    void *p = NULL;
    return posix_memalign(&p, 64, nbytes) == 0 ? p : NULL;
}

/* 64-byte alignment: whole cache lines and AVX-512 vectors (matches torch's CPU allocator). */
static void *cpu_alloc(size_t nbytes)
{
    size_t rounded = (nbytes + 63) & ~(size_t)63;
    if (rounded == 0) rounded = 64;
    pthread_once(&cache_once, cache_init);
    if (cache_limit == 0 || rounded < PCT_CACHE_MIN_BYTES || rounded > PCT_CACHE_MAX_BYTES)
        return aligned_block(rounded);
    int cls = size_class(rounded, &rounded);
    pthread_mutex_lock(&cache_lock);
    free_block *b = free_lists[cls];
    if (b) {
        free_lists[cls] = b->next;
        cache_bytes -= rounded;
        cache_blocks--;
        cache_hits++;
    } else {
        cache_misses++;
    }
    pthread_mutex_unlock(&cache_lock);
    if (b) return b;
    void *p = aligned_block(rounded);
    if (!p) {                       /* memory is short: give the cache back and try once more */
        pct_cpu_cache_empty();
        p = aligned_block(rounded);
    }
    return p;
}

static void cpu_free(void *p, size_t nbytes)
{
    size_t rounded = (nbytes + 63) & ~(size_t)63;
    if (cache_limit == 0 || rounded < PCT_CACHE_MIN_BYTES || rounded > PCT_CACHE_MAX_BYTES) { free(p); return; }
    int cls = size_class(rounded, &rounded);
    pthread_mutex_lock(&cache_lock);
    int keep = cache_bytes + rounded <= cache_limit;
    if (keep) {
        free_block *b = p;
        b->next = free_lists[cls];
        free_lists[cls] = b;
        cache_bytes += rounded;
        cache_blocks++;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!keep) free(p);
}

const pct_allocator pct_cpu_allocator = {"cpu", cpu_alloc, cpu_free, NULL};

/* Private anonymous mappings: zeros, with memory taken only for the pages written (MAP_NORESERVE). */
static void *zero_pages_alloc(size_t nbytes)
{
    void *p = mmap(NULL, nbytes ? nbytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void zero_pages_free(void *p, size_t nbytes) { munmap(p, nbytes ? nbytes : 1); }

const pct_allocator pct_zero_pages_allocator = {"zero pages", zero_pages_alloc, zero_pages_free, NULL};

void pct_cpu_cache_empty(void)
{
    free_block *lists[PCT_NUM_CLASSES];
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < PCT_NUM_CLASSES; i++) { lists[i] = free_lists[i]; free_lists[i] = NULL; }
    cache_bytes = cache_blocks = 0;
    pthread_mutex_unlock(&cache_lock);
    for (int i = 0; i < PCT_NUM_CLASSES; i++)
        while (lists[i]) { free_block *next = lists[i]->next; free(lists[i]); lists[i] = next; }
}

void pct_cpu_cache_info(pct_cpu_cache_stats *out)
{
    pthread_once(&cache_once, cache_init);
    pthread_mutex_lock(&cache_lock);
    out->cached_bytes = cache_bytes;
    out->cached_blocks = cache_blocks;
    out->limit_bytes = cache_limit;
    out->hits = cache_hits;
    out->misses = cache_misses;
    pthread_mutex_unlock(&cache_lock);
}

void pct_cpu_cache_set_limit(size_t limit_bytes)
{
    pthread_once(&cache_once, cache_init);
    pthread_mutex_lock(&cache_lock);
    cache_limit = limit_bytes;
    pthread_mutex_unlock(&cache_lock);
    /* a lower limit (or 0) takes effect now: what the cache holds is returned to the system */
    pct_cpu_cache_empty();
}
