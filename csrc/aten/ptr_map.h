/* ptr_map.h: a hash map from addresses to pointer-sized values (open addressing, linear probing, deletion by
 * backward shift), for tables keyed by the memory they describe: the caching allocator's live blocks
 * (caching_allocator.c) and the simulated device's allocations (caching_sim.c).
 *
 * Ownership: the map owns its two arrays only; keys and values are the caller's and are never dereferenced. A key is
 * any non-NULL address; a value any non-NULL pointer (NULL is what a lookup of an absent key answers).
 * The map is not thread-safe: its owner locks around it. Nothing here raises: a function that could not get memory
 * returns -1 and leaves the map as it was, so a caller holding a lock can report the failure after releasing it. */
#ifndef PCT_PTR_MAP_H
#define PCT_PTR_MAP_H
#include <stddef.h>

typedef struct pct_ptr_map {
    const void **keys;  /* cap slots, NULL where empty */
    void **values;
    size_t cap;         /* 0 or a power of two */
    size_t n;           /* keys present */
} pct_ptr_map;

#define PCT_PTR_MAP_INIT {NULL, NULL, 0, 0}

/* Make room for n keys so that the next puts up to n keys cannot fail: 0, or -1 when memory ran out. */
int pct_ptr_map_reserve(pct_ptr_map *m, size_t n);
/* Insert or replace: 0, or -1 when memory ran out (the map unchanged). */
int pct_ptr_map_put(pct_ptr_map *m, const void *key, void *value);
/* The value of key, or NULL. */
void *pct_ptr_map_get(const pct_ptr_map *m, const void *key);
/* Remove key: its value, or NULL when it was absent. */
void *pct_ptr_map_remove(pct_ptr_map *m, const void *key);
/* Free the arrays; the map is empty and usable again. */
void pct_ptr_map_clear(pct_ptr_map *m);

#endif
