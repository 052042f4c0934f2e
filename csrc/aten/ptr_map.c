/* ptr_map.c: the address-keyed hash map of ptr_map.h. The table stays at most half full. */
#include "ptr_map.h"
#include <stdint.h>
#include <stdlib.h>

/* Fibonacci hashing of the address; its low bits are alignment, so they are mixed in from above. */
static size_t slot_of(const void *key, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32 ^ h) & (cap - 1);
}

static size_t find_slot(const pct_ptr_map *m, const void *key)
{
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

static int rehash(pct_ptr_map *m, size_t cap)
{
    const void **keys = calloc(cap, sizeof *keys);
    void **values = calloc(cap, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    pct_ptr_map grown = {keys, values, cap, m->n};
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = find_slot(&grown, m->keys[i]);
        keys[j] = m->keys[i];
        values[j] = m->values[i];
    }
    free(m->keys);
    free(m->values);
    *m = grown;
    return 0;
}

int pct_ptr_map_reserve(pct_ptr_map *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 16;
    while (cap / 2 < n) cap *= 2;
    return cap == m->cap ? 0 : rehash(m, cap);
}

int pct_ptr_map_put(pct_ptr_map *m, const void *key, void *value)
{
    if (pct_ptr_map_reserve(m, m->n + 1) < 0) return -1;
    size_t i = find_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->n++;
    }
    m->values[i] = value;
    return 0;
}

void *pct_ptr_map_get(const pct_ptr_map *m, const void *key)
{
    if (!m->n || !key) return NULL;
    size_t i = find_slot(m, key);
    return m->keys[i] ? m->values[i] : NULL;
}

void *pct_ptr_map_remove(pct_ptr_map *m, const void *key)
{
    if (!m->n || !key) return NULL;
    size_t mask = m->cap - 1, i = find_slot(m, key);
    if (!m->keys[i]) return NULL;
    void *value = m->values[i];
    /* Backward shift: pull later entries of the probe run into the hole when their home slot allows it. */
    for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m->keys[j], m->cap);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->values[i] = m->values[j];
            i = j;
        }
    }
    m->keys[i] = NULL;
    m->values[i] = NULL;
    m->n--;
    return value;
}

void pct_ptr_map_clear(pct_ptr_map *m)
{
    free(m->keys);
    free(m->values);
    *m = (pct_ptr_map)PCT_PTR_MAP_INIT;
}
