/* storage.h: a refcounted block of memory that tensors view.
 *
 * Ownership: a pct_storage uniquely owns `data` and frees it through `allocator`
 * when its refcount drops to zero, except when `owner` is set: then the memory
 * belongs to that Python object (a NumPy array, a DLPack capsule, a foreign tensor)
 * and the storage holds one reference to it instead. The refcount is atomic, so
 * kernels and allocators never need the GIL; only a storage with an `owner` needs
 * the GIL to be released, and tensors (which hold storages) are Python objects
 * released under the GIL anyway.
 */
#ifndef PCT_STORAGE_H
#define PCT_STORAGE_H
#include "runtime.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Device types; each has a backend (backend.h). Meta tensors have shapes and dtypes but no data (torch's "meta"). */
typedef enum pct_device_type { PCT_CPU = 0, PCT_CUDA = 1, PCT_META = 2, PCT_NUM_BACKENDS = 3 } pct_device_type;
/* The highest device ordinal a backend may have (CUDA: 16 GPUs per process). */
#define PCT_MAX_DEVICE_INDEX 15

typedef struct pct_allocator {
    const char *name;
    void *(*alloc)(size_t nbytes);   /* NULL on failure, no exception set */
    void (*free)(void *ptr, size_t nbytes); /* nbytes: what alloc was asked for (mmap-backed and caching
                                               allocators need it) */
    /* device memory: freed knowing the storage's device index (the CUDA caching allocator keeps one cache per
     * device); NULL where `free` does */
    void (*free_on_device)(void *ptr, size_t nbytes, int device_index);
} pct_allocator;

typedef struct pct_storage {
    atomic_long refcount;
    void *data;                 /* owned unless `owner` is set */
    size_t nbytes;
    const pct_allocator *allocator; /* frees `data`; NULL when `owner` is set */
    pct_object *owner;            /* owned reference keeping external memory alive, or NULL */
    int8_t device_type;
    int8_t device_index;
    int8_t resizable;
    int8_t readonly;            /* the memory must not be written (a non-writable NumPy array's): writes raise
                                   instead of faulting, Note [Read-only storages] in tensor.c */
    atomic_int exports;         /* live buffer exports (memoryviews of the storage or of a tensor
                                   over it): while > 0 the data must not move, so resize refuses */
    int shm_fd;                 /* with pct_shm_allocator: the memory file behind `data` (owned,
                                   closed with the storage); -1 otherwise */
    char *shm_name;             /* with pct_shm_named_allocator: the /dev/shm name (owned), whose
                                   use count this storage holds one of (Note [Storages shared by name]) */
} pct_storage;

extern const pct_allocator pct_cpu_allocator;
/* Zero-filled memory that costs nothing until written: the meta device's stand-ins, and the CPU storages of a
 * shapes-only run (Note [Shapes-only runs]), which nobody writes. */
extern const pct_allocator pct_zero_pages_allocator;

/* A storage struct over data (taken as is: owned through allocator, or by nothing yet) with every other field at its
 * default (refcount 1, not resizable, writable, no owner, no shared-memory file); NULL with MemoryError. The one
 * place the struct is initialised: the constructors below and the shared-memory ones set what differs. */
pct_storage *pct_storage_struct_new(void *data, size_t nbytes, const pct_allocator *allocator, int device_type,
                                    int device_index);
/* New storage of nbytes on the CPU (uninitialised); NULL with MemoryError set. */
pct_storage *pct_storage_new_cpu(size_t nbytes);
/* Storage over external memory kept alive by owner (a new reference is taken). */
pct_storage *pct_storage_new_external(void *data, size_t nbytes, pct_object *owner, int device_type, int device_index);
static inline void pct_storage_incref(pct_storage *s) { atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed); }
void pct_storage_decref(pct_storage *s);
/* Grow a resizable storage to at least nbytes, keeping its contents; -1 with exception. */
int pct_storage_resize(pct_storage *s, size_t nbytes);
/* Make a resizable storage exactly nbytes (UntypedStorage.resize_): grows as pct_storage_resize, or shrinks into a
 * new block keeping the first nbytes; -1 with exception. */
int pct_storage_resize_exact(pct_storage *s, size_t nbytes);

void pct_cpu_memory_stats(long long *live, long long *peak);

/* The CPU allocator's cache of freed large blocks (cpu_allocator.c). */
typedef struct pct_cpu_cache_stats {
    size_t cached_bytes, cached_blocks, limit_bytes;
    unsigned long long hits, misses;
} pct_cpu_cache_stats;
void pct_cpu_cache_info(pct_cpu_cache_stats *out);
void pct_cpu_cache_empty(void);              /* return every cached block to the system */
void pct_cpu_cache_set_limit(size_t limit_bytes); /* 0 turns caching off; empties the cache */
void pct_cpu_memory_reset_peak(void);
/* Adjust the live CPU byte count (memory leaving pct_cpu_allocator other than by decref). */
void pct_cpu_memory_count(long long delta);

/* Shared memory (storage_shared.c): MAP_SHARED mappings of anonymous memory files, freed
 * by pct_shm_allocator (munmap); the storage owns the file descriptor in shm_fd. */
extern const pct_allocator pct_shm_allocator;
extern const pct_allocator pct_shm_named_allocator; /* named files in /dev/shm (file_system strategy) */
static inline int pct_storage_is_shared(const pct_storage *s)
{
    return s->allocator == &pct_shm_allocator || s->allocator == &pct_shm_named_allocator;
}
/* 1: share_memory_ moves storages to named files (the file_system strategy); 0: anonymous ones */
extern int pct_shm_by_name;
/* Move a CPU storage into shared memory in place (same struct, new data pointer, not
 * resizable); a no-op when already shared. 0, or -1 with exception. */
int pct_storage_share(pct_storage *s);
/* A new zero-filled shared storage of nbytes; NULL with exception. */
pct_storage *pct_storage_new_shared(size_t nbytes);
/* A shared storage mapping nbytes of the memory file fd (dup'ed: the caller keeps fd). */
pct_storage *pct_storage_from_fd(int fd, size_t nbytes);
/* A shared storage mapping the named file `name` (one of ours, "/pyctorch_fs_..."); takes a use. */
pct_storage *pct_storage_from_name(const char *name, size_t nbytes);
/* The storage's descriptor, opening its named file when it has none; -1 with exception. */
int pct_storage_shared_fd(pct_storage *s);
/* Adds delta to the use count of a storage shared by name (removing the name at 0); -1 with exception. */
int pct_storage_name_uses(pct_storage *s, int delta);
/* Releases the storage's use of its name (pct_storage_decref, before unmapping). */
void pct_storage_drop_name(pct_storage *s);

#endif
