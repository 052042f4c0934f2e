/* storage_shared.c: storages in memory that other processes can map.
 *
 * Note [Shared storages]
 * A shared storage's bytes live in an anonymous memory file (memfd_create; where that is
 * missing, shm_open with an immediate shm_unlink), mapped MAP_SHARED. No name stays in
 * /dev/shm, so nothing leaks when a process dies: the memory goes away with the last
 * descriptor and the last mapping. The storage owns one descriptor (shm_fd) for its whole
 * life: sending the storage to another process passes a duplicate of it (SCM_RIGHTS, see
 * pyctorch/multiprocessing/reductions.py), and the receiver maps the same pages.
 *
 * Moving a storage to shared memory keeps the pct_storage struct, so every tensor and
 * view over it sees the move: only `data`, `allocator` and `shm_fd` change. A shared
 * storage is never resized (resizable = 0): other processes map exactly nbytes.
 */
/* storage.h includes Python.h first, whose pyconfig.h defines _GNU_SOURCE (memfd_create) */
#include "storage.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mmap refuses length 0: an empty storage maps one byte (one page). */
static size_t map_length(size_t nbytes) { return nbytes ? nbytes : 1; }

/* Shared storages come from pct_storage_new_shared / pct_storage_from_fd, never from the
 * vtable (they are not resizable), so alloc only reports failure. */
static void *shm_alloc(size_t nbytes) { (void)nbytes; return NULL; }
static void shm_free(void *p, size_t nbytes) { munmap(p, map_length(nbytes)); }

const pct_allocator pct_shm_allocator = {"shm", shm_alloc, shm_free};

static void set_os_error(const char *what, size_t nbytes)
{
    int e = errno;
    PyErr_Format(PyExc_RuntimeError, "unable to %s shared memory of %zu bytes: %s (%d)", what, nbytes, strerror(e), e);
}

/* A new anonymous memory file of nbytes; -1 with exception. */
static int memory_file(size_t nbytes)
{
    int fd = memfd_create("pyctorch_shared", MFD_CLOEXEC);
    if (fd < 0 && (errno == ENOSYS || errno == EINVAL || errno == EPERM)) {
        char name[64];
        for (int tries = 0; tries < 16 && fd < 0; tries++) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            snprintf(name, sizeof name, "/pyctorch_%d_%lx_%d", (int)getpid(), (unsigned long)ts.tv_nsec, tries);
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd >= 0) shm_unlink(name); /* anonymous from now on */
            else if (errno != EEXIST) break;
        }
    }
    if (fd < 0) { set_os_error("create", nbytes); return -1; }
    if (ftruncate(fd, (off_t)map_length(nbytes)) < 0) {
        set_os_error("size", nbytes);
        close(fd);
        return -1;
    }
    return fd;
}

static void *map_file(int fd, size_t nbytes)
{
    void *p = mmap(NULL, map_length(nbytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { set_os_error("map", nbytes); return NULL; }
    return p;
}

/* A storage struct over a mapping; takes ownership of fd and p (released on failure). */
static pct_storage *wrap_mapping(int fd, void *p, size_t nbytes)
{
    pct_storage *s = malloc(sizeof *s);
    if (!s) {
        munmap(p, map_length(nbytes));
        close(fd);
        PyErr_NoMemory();
        return NULL;
    }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->exports, 0);
    s->data = p;
    s->nbytes = nbytes;
    s->allocator = &pct_shm_allocator;
    s->owner = NULL;
    s->device_type = PCT_CPU;
    s->device_index = -1;
    s->resizable = 0;
    s->readonly = 0;
    s->shm_fd = fd;
    return s;
}

pct_storage *pct_storage_new_shared(size_t nbytes)
{
    int fd = memory_file(nbytes);
    if (fd < 0) return NULL;
    void *p = map_file(fd, nbytes);
    if (!p) { close(fd); return NULL; }
    return wrap_mapping(fd, p, nbytes);
}

pct_storage *pct_storage_from_fd(int fd, size_t nbytes)
{
    struct stat st;
    if (fd < 0) {
        PyErr_Format(PyExc_RuntimeError, "_new_shared_fd_cpu: invalid file descriptor %d", fd);
        return NULL;
    }
    if (nbytes > (size_t)INT64_MAX) {
        PyErr_Format(PyExc_RuntimeError, "_new_shared_fd_cpu: size %zu is too large", nbytes);
        return NULL;
    }
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) { set_os_error("duplicate the descriptor of", nbytes); return NULL; }
    if (fstat(own, &st) < 0) {
        set_os_error("stat", nbytes);
        close(own);
        return NULL;
    }
    /* mapping past the end of the file would SIGBUS on first touch: check before */
    if (st.st_size < 0 || (uint64_t)st.st_size < (uint64_t)map_length(nbytes)) {
        PyErr_Format(PyExc_RuntimeError, "_new_shared_fd_cpu: the shared memory file holds %lld bytes, fewer than the %zu "
                     "requested", (long long)st.st_size, nbytes);
        close(own);
        return NULL;
    }
    void *p = map_file(own, nbytes);
    if (!p) { close(own); return NULL; }
    return wrap_mapping(own, p, nbytes);
}

int pct_storage_share(pct_storage *s)
{
    if (pct_storage_is_shared(s)) return 0;
    if (s->device_type != PCT_CPU) {
        PyErr_SetString(PyExc_RuntimeError, "share_memory_: only CPU storages can be moved to shared memory in this build");
        return -1;
    }
    if (atomic_load(&s->exports) > 0) {
        PyErr_SetString(PyExc_BufferError, "Existing exports of data: storage cannot be moved to shared memory");
        return -1;
    }
    if (!s->owner && s->allocator != &pct_cpu_allocator) {
        PyErr_Format(PyExc_RuntimeError, "share_memory_: cannot move a storage of allocator '%s' to shared memory",
                     s->allocator ? s->allocator->name : "none");
        return -1;
    }
    size_t n = s->nbytes;
    int fd = memory_file(n);
    if (fd < 0) return -1;
    void *p = map_file(fd, n);
    if (!p) { close(fd); return -1; }
    if (n) {
        void *src = s->data;
        Py_BEGIN_ALLOW_THREADS
        memcpy(p, src, n);
        Py_END_ALLOW_THREADS
    }
    /* from here nothing fails: release the old memory the way it was held */
    void *old = s->data;
    const pct_allocator *old_alloc = s->allocator;
    PyObject *old_owner = s->owner;
    s->data = p;
    s->allocator = &pct_shm_allocator;
    s->owner = NULL;
    s->shm_fd = fd;
    s->resizable = 0;
    s->readonly = 0; /* the shared copy is writable memory of our own */
    if (old_owner) {
        Py_DECREF(old_owner);
    } else {
        old_alloc->free(old, n);
        pct_cpu_memory_count(-(long long)n);
    }
    return 0;
}
