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
/* _GNU_SOURCE (memfd_create) comes from the build flags (setup.py) */
#include "storage.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* mmap refuses length 0: an empty storage maps one byte (one page). */
static size_t map_length(size_t nbytes) { return nbytes ? nbytes : 1; }

/* Shared storages come from pct_storage_new_shared / pct_storage_from_fd, never from the
 * vtable (they are not resizable), so alloc only reports failure. */
static void *shm_alloc(size_t nbytes) { (void)nbytes; return NULL; }
static void shm_free(void *p, size_t nbytes) { munmap(p, map_length(nbytes)); }

const pct_allocator pct_shm_allocator = {"shm", shm_alloc, shm_free, NULL};

static void set_os_error(const char *what, size_t nbytes)
{
    int e = errno;
    pct_error(PCT_ERR_RUNTIME, "unable to %s shared memory of %zu bytes: %s (%d)", what, nbytes, strerror(e), e);
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
    pct_storage *s = pct_storage_struct_new(p, nbytes, &pct_shm_allocator, PCT_CPU, -1);
    if (!s) {
        munmap(p, map_length(nbytes));
        close(fd);
        return NULL;
    }
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
        pct_error(PCT_ERR_RUNTIME, "_new_shared_fd_cpu: invalid file descriptor %d", fd);
        return NULL;
    }
    if (nbytes > (size_t)INT64_MAX) {
        pct_error(PCT_ERR_RUNTIME, "_new_shared_fd_cpu: size %zu is too large", nbytes);
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
        pct_error(PCT_ERR_RUNTIME, "_new_shared_fd_cpu: the shared memory file holds %lld bytes, fewer than the %zu "
                     "requested", (long long)st.st_size, nbytes);
        close(own);
        return NULL;
    }
    void *p = map_file(own, nbytes);
    if (!p) { close(own); return NULL; }
    return wrap_mapping(own, p, nbytes);
}

int pct_storage_share_named(pct_storage *s);

/* 0 when s may be moved into shared memory (either strategy); -1 with torch's error otherwise. */
static int check_movable(const pct_storage *s)
{
    if (s->device_type != PCT_CPU) {
        pct_error_str(PCT_ERR_RUNTIME, "share_memory_: only CPU storages can be moved to shared memory in this build");
        return -1;
    }
    if (atomic_load(&s->exports) > 0) {
        pct_error_str(PCT_ERR_BUFFER, "Existing exports of data: storage cannot be moved to shared memory");
        return -1;
    }
    if (!s->owner && s->allocator != &pct_cpu_allocator) {
        pct_error(PCT_ERR_RUNTIME, "share_memory_: cannot move a storage of allocator '%s' to shared memory",
                     s->allocator ? s->allocator->name : "none");
        return -1;
    }
    return 0;
}

int pct_storage_share(pct_storage *s)
{
    if (pct_storage_is_shared(s)) return 0;
    if (pct_shm_by_name) return pct_storage_share_named(s);
    if (check_movable(s) < 0) return -1;
    size_t n = s->nbytes;
    int fd = memory_file(n);
    if (fd < 0) return -1;
    void *p = map_file(fd, n);
    if (!p) { close(fd); return -1; }
    if (n) {
        void *src = s->data;
        PCT_NOGIL_BEGIN
        memcpy(p, src, n);
        PCT_NOGIL_END
    }
    /* from here nothing fails: release the old memory the way it was held */
    void *old = s->data;
    const pct_allocator *old_alloc = s->allocator;
    pct_object *old_owner = s->owner;
    s->data = p;
    s->allocator = &pct_shm_allocator;
    s->owner = NULL;
    s->shm_fd = fd;
    s->resizable = 0;
    s->readonly = 0; /* the shared copy is writable memory of our own */
    if (old_owner) {
        PCT_DECREF(old_owner);
    } else {
        old_alloc->free(old, n);
        pct_cpu_memory_count(-(long long)n);
    }
    return 0;
}

/* Note [Storages shared by name]
 * The file_system strategy (torch.multiprocessing.set_sharing_strategy("file_system")) shares
 * a storage as a named file, /dev/shm/pyctorch_fs_<pid>_<token>_<n>, that the receiver opens
 * by name; no descriptor stays open on either side. The file holds the bytes, then (at
 * name_offset(nbytes), 64-byte aligned) a use count shared by every process: one use per
 * storage mapping it, plus one per message in flight (the sender's reducer takes it with
 * _shared_incref, the receiver returns it with _shared_decref once it holds its own). Whoever
 * brings the count to 0 removes the name; the mappings live on until unmapped.
 *
 * A process that dies holding uses (killed, or exiting with storages alive, or a message never
 * received) would leave the name behind, so every process that creates a name first starts a
 * watchdog: a detached process (a shell's background subshell, own session, SIGINT/SIGTERM/SIGHUP ignored) that
 * does nothing but read a pipe whose only writers are the creator and its forked children.
 * When the last of them is gone the read returns 0 and the watchdog removes every name of
 * /dev/shm carrying the creator's prefix (pid and a random token), then exits. So nothing of
 * ours outlives its creator; a receiver may still map the memory, but cannot pass it on by
 * name after the creator is gone. It is spawned (posix_spawn of /bin/sh): no code of this library runs in
 * the child, which a fork of a process with other threads could not do safely. */
static size_t name_offset(size_t nbytes) { return (nbytes + 63) & ~(size_t)63; }
static size_t named_length(size_t nbytes) { return name_offset(nbytes) + 64; }
static atomic_long *name_uses(pct_storage *s) { return (atomic_long *)((char *)s->data + name_offset(s->nbytes)); }
static void shm_named_free(void *p, size_t nbytes) { munmap(p, named_length(nbytes)); }

const pct_allocator pct_shm_named_allocator = {"shm_named", shm_alloc, shm_named_free, NULL};
int pct_shm_by_name = 0;

#define NAME_PREFIX "pyctorch_fs_"
static pid_t watchdog_owner = 0;   /* the process whose watchdog is running (getpid() at start) */
static char name_prefix[64];       /* "pyctorch_fs_<pid>_<token>_" */
static unsigned long name_counter = 0;

/* Starts the watchdog (Note [Storages shared by name]) with posix_spawn: a shell whose background subshell is
 * reparented to init when the shell exits (so it is never a child this process could wait for), in its own session,
 * ignoring SIGINT/SIGTERM/SIGHUP, holding nothing of ours but the pipe's read end (fd 3). posix_spawn runs no
 * pthread_atfork handlers and is safe in a process with other threads; nothing of this library runs in the child. */
static int start_watchdog(void)
{
    pid_t me = getpid();
    if (watchdog_owner == me) return 0;
    unsigned long long token = 0;
    if (syscall(SYS_getrandom, &token, sizeof token, 0) != (long)sizeof token) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        token = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^ ((unsigned long long)me << 40);
    }
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, NAME_PREFIX "%d_%016llx_", (int)me, token);
    /* the prefix is digits, hex and underscores: nothing the shell would read as syntax */
    char script[256];
    snprintf(script, sizeof script, "(trap '' INT TERM HUP; cat <&3 >/dev/null 2>&1; rm -f /dev/shm/%s*) &", prefix);
    char *const argv[] = {"sh", "-c", script, NULL};
    char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) { set_os_error("start the watchdog of", 0); return -1; }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0 && (rc = posix_spawnattr_init(&at)) != 0) posix_spawn_file_actions_destroy(&fa);
    if (rc == 0) {
        posix_spawn_file_actions_adddup2(&fa, fds[0], 3); /* dup2 clears close-on-exec on fd 3 */
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
        posix_spawn_file_actions_addclosefrom_np(&fa, 4); /* not the creator's other files (its stdout's reader) */
#endif
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setsigdefault(&at, &defaults);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        pid_t child;
        rc = posix_spawn(&child, "/bin/sh", &fa, &at, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        if (rc == 0) { /* the shell exits at once, leaving the subshell behind */
            int status = 0;
            while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = -1;
        }
    }
    close(fds[0]);
    if (rc != 0) {
        close(fds[1]);
        pct_error_str(PCT_ERR_RUNTIME, "unable to start the watchdog of shared memory files");
        return -1;
    }
    /* fds[1] stays open (close-on-exec) for this process's life: its end is the watchdog's signal.
     * A forked child inherits it, and starts a watchdog of its own when it creates names. */
    memcpy(name_prefix, prefix, (size_t)plen + 1);
    watchdog_owner = me;
    name_counter = 0;
    return 0;
}

int pct_storage_share_named(pct_storage *s)
{
    if (pct_storage_is_shared(s)) return 0;
    if (check_movable(s) < 0) return -1;
    size_t n = s->nbytes, len = named_length(n);
    if (start_watchdog() < 0) return -1;
    char name[128];
    int fd = -1;
    for (int tries = 0; tries < 16 && fd < 0; tries++) {
        snprintf(name, sizeof name, "/%s%lu", name_prefix, name_counter++);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) { set_os_error("create", n); return -1; }
    char *owned_name = strdup(name);
    if (!owned_name || ftruncate(fd, (off_t)len) < 0) {
        if (owned_name) set_os_error("size", n); else pct_error_nomem();
        free(owned_name);
        close(fd);
        shm_unlink(name);
        return -1;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the name and the mapping are enough */
    if (p == MAP_FAILED) {
        set_os_error("map", n);
        free(owned_name);
        shm_unlink(name);
        return -1;
    }
    atomic_init((atomic_long *)((char *)p + name_offset(n)), 1);
    if (n) {
        void *src = s->data;
        PCT_NOGIL_BEGIN
        memcpy(p, src, n);
        PCT_NOGIL_END
    }
    void *old = s->data;
    const pct_allocator *old_alloc = s->allocator;
    pct_object *old_owner = s->owner;
    s->data = p;
    s->allocator = &pct_shm_named_allocator;
    s->owner = NULL;
    s->shm_fd = -1;
    s->shm_name = owned_name;
    s->resizable = 0;
    s->readonly = 0;
    if (old_owner) {
        PCT_DECREF(old_owner);
    } else {
        old_alloc->free(old, n);
        pct_cpu_memory_count(-(long long)n);
    }
    return 0;
}

pct_storage *pct_storage_from_name(const char *name, size_t nbytes)
{
    if (strncmp(name, "/" NAME_PREFIX, sizeof NAME_PREFIX) != 0 || strchr(name + 1, '/') || strlen(name) > 120) {
        pct_error(PCT_ERR_RUNTIME, "_new_shared_filename_cpu: '%s' is not a pyctorch shared memory name", name);
        return NULL;
    }
    if (nbytes > (size_t)INT64_MAX / 2) {
        pct_error(PCT_ERR_RUNTIME, "_new_shared_filename_cpu: size %zu is too large", nbytes);
        return NULL;
    }
    size_t len = named_length(nbytes);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        pct_error(PCT_ERR_RUNTIME, "unable to open shared memory object <%s> in read-write mode: %s (%d)", name,
                     strerror(e), e);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size != (uint64_t)len) {
        pct_error(PCT_ERR_RUNTIME, "_new_shared_filename_cpu: the shared memory file <%s> does not hold a storage of "
                     "%zu bytes", name, nbytes);
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) { set_os_error("map", nbytes); return NULL; }
    char *owned_name = strdup(name);
    pct_storage *s = owned_name ? pct_storage_struct_new(p, nbytes, &pct_shm_named_allocator, PCT_CPU, -1) : NULL;
    if (!s) {
        if (!owned_name) pct_error_nomem();
        free(owned_name);
        munmap(p, len);
        return NULL;
    }
    s->shm_name = owned_name;
    atomic_fetch_add(name_uses(s), 1);
    return s;
}

int pct_storage_name_uses(pct_storage *s, int delta)
{
    if (!s->shm_name) {
        pct_error_str(PCT_ERR_RUNTIME, "this storage is not shared by name (file_system strategy)");
        return -1;
    }
    long before = atomic_fetch_add(name_uses(s), (long)delta);
    if (before + delta <= 0) shm_unlink(s->shm_name);
    return 0;
}

void pct_storage_drop_name(pct_storage *s)
{
    if (atomic_fetch_sub(name_uses(s), 1) == 1) shm_unlink(s->shm_name);
    free(s->shm_name);
    s->shm_name = NULL;
}

int pct_storage_shared_fd(pct_storage *s)
{
    if (s->shm_fd >= 0) return s->shm_fd;
    if (!s->shm_name) {
        pct_error_str(PCT_ERR_RUNTIME, "this storage is not in shared memory");
        return -1;
    }
    int fd = shm_open(s->shm_name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        pct_error(PCT_ERR_RUNTIME, "unable to reopen shared memory object <%s> (its creating process may have "
                     "exited): %s (%d)", s->shm_name, strerror(e), e);
        return -1;
    }
    s->shm_fd = fd;
    return fd;
}
