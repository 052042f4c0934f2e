/* caching_sim.h: a simulated device over host memory with a caching allocator on it, the test bench of the
 * allocator on machines without a GPU (Note [Caching allocator] in caching_allocator.h; the binding is
 * _C._CachingAllocatorSim, csrc/python/caching_allocator_sim.c; the tests are tests/test_caching_allocator.py).
 *
 * The device: raw_alloc takes 512-aligned host memory of the raw size, and says out of memory when the raw bytes
 * would exceed the capacity; mem_info reports the capacity as total and what raw_alloc has not taken as free. Its
 * events stay incomplete until complete(stream) (every event recorded on that stream so far) or a synchronize (all).
 *
 * The client checks the allocator: each allocation is filled with a byte pattern of its own, which must be intact
 * when it is freed (and at close), so two live blocks that overlap are caught, and a block handed out of memory the
 * device took back is a use after free that AddressSanitizer reports.
 *
 * Ownership: the sim owns its allocator, its raw allocations and its events; the allocator owns nothing of the sim.
 */
#ifndef PCT_CACHING_SIM_H
#define PCT_CACHING_SIM_H
#include "caching_allocator.h"

typedef struct pct_caching_sim pct_caching_sim;

/* A device of capacity bytes and an allocator on it (device 0): NULL with an error. */
pct_caching_sim *pct_caching_sim_new(size_t capacity);
/* Check the live blocks, destroy the allocator (giving everything back), free the sim: 0, or -1 with
 * AssertionError when a live block's bytes were overwritten (everything is freed all the same). */
int pct_caching_sim_close(pct_caching_sim *s);
/* The allocator, for every call that needs no checking (stats, record_stream, empty_cache...). */
pct_caching_allocator *pct_caching_sim_allocator(pct_caching_sim *s);
/* pct_caching_alloc, then the bytes filled with this allocation's pattern: NULL for nbytes 0 (no error) or with an
 * error. */
void *pct_caching_sim_alloc(pct_caching_sim *s, size_t nbytes, int64_t stream);
/* Check the block's pattern (AssertionError naming the first byte that changed), then pct_caching_free: 0 / -1. */
int pct_caching_sim_free(pct_caching_sim *s, void *ptr);
/* Every event recorded on the stream so far completes. */
void pct_caching_sim_complete(pct_caching_sim *s, int64_t stream);
/* Threads that share the allocator without the interpreter lock: each allocates (up to 2 MiB, on one of two
 * streams), sometimes records another stream, completes it now and then, and frees, `iterations` times, checking its
 * blocks' patterns. The capacity must hold threads * 8 blocks of 20 MiB, so that no call fails (a failing call needs
 * the interpreter lock to raise). 0, or -1 with AssertionError naming the first overwritten byte. */
int pct_caching_sim_stress(pct_caching_sim *s, int threads, int iterations);
/* raw_alloc and raw_free calls the device answered with memory / took memory back. */
void pct_caching_sim_raw_calls(pct_caching_sim *s, int64_t *allocs, int64_t *frees);

#endif
