/* store.c: the in-memory map every store shares, the generic store verbs, HashStore,
 * FileStore and PrefixStore (see store.h). No Python here. */
#ifndef _GNU_SOURCE /* the build flags give it (setup.py); a test harness compiles this file alone */
#define _GNU_SOURCE
#endif
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int pct_store_fail(pct_store_err *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return status;
}

void pct_kv_rep_clear(pct_kv_rep *r)
{
    free(r->data);
    r->data = NULL;
    r->len = 0;
    r->n = 0;
}

/* ---- the map ---------------------------------------------------------------------------- */

enum { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_DEAD = 2 };

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

static pct_kv_entry *slot_for(const pct_kvmap *m, const char *key, size_t klen, bool for_insert)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1, i = hash_bytes(key, klen) & mask;
    pct_kv_entry *first_dead = NULL;
    for (;; i = (i + 1) & mask) {
        pct_kv_entry *e = &m->slots[i];
        if (e->state == SLOT_EMPTY) return for_insert ? (first_dead ? first_dead : e) : NULL;
        if (e->state == SLOT_DEAD) { if (!first_dead) first_dead = e; continue; }
        if (e->klen == klen && memcmp(e->key, key, klen) == 0) return e;
    }
}

static int kvmap_grow(pct_kvmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    while (m->live * 2 >= cap) cap *= 2;
    pct_kv_entry *old = m->slots;
    size_t oldcap = m->cap;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) { m->slots = old; return -1; }
    m->cap = cap;
    m->used = m->live;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].state == SLOT_LIVE) *slot_for(m, old[i].key, old[i].klen, true) = old[i];
    free(old);
    return 0;
}

void pct_kvmap_clear(pct_kvmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].state == SLOT_LIVE) { free(m->slots[i].key); free(m->slots[i].val); }
    free(m->slots);
    memset(m, 0, sizeof *m);
}

const pct_kv_entry *pct_kvmap_find(const pct_kvmap *m, const char *key, size_t klen)
{
    return slot_for(m, key, klen, false);
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n ? n : 1);
    if (d && n) memcpy(d, p, n);
    return d;
}

int pct_kvmap_put(pct_kvmap *m, const char *key, size_t klen, const char *val, size_t vlen)
{
    pct_kv_entry *e = slot_for(m, key, klen, false);
    if (!val) {
        if (e) { free(e->key); free(e->val); e->key = e->val = NULL; e->state = SLOT_DEAD; m->live--; }
        return 0;
    }
    char *v = dup_bytes(val, vlen);
    if (!v) return -1;
    if (e) { free(e->val); e->val = v; e->vlen = vlen; return 0; }
    if ((m->used + 1) * 4 >= m->cap * 3 && kvmap_grow(m) < 0) { free(v); return -1; }
    char *k = dup_bytes(key, klen);
    if (!k) { free(v); return -1; }
    e = slot_for(m, key, klen, true);
    if (e->state == SLOT_EMPTY) m->used++;
    *e = (pct_kv_entry){k, klen, v, vlen, SLOT_LIVE};
    m->live++;
    return 0;
}

/* The value of an ADD counter: a decimal integer, or absent (0). */
static int parse_counter(const pct_kv_entry *e, int64_t *out)
{
    *out = 0;
    if (!e) return 0;
    char buf[32];
    if (e->vlen == 0 || e->vlen >= sizeof buf) return -1;
    memcpy(buf, e->val, e->vlen);
    buf[e->vlen] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int reply_bytes(pct_kv_rep *rep, const char *p, size_t n, pct_store_err *err)
{
    rep->data = dup_bytes(p, n);
    rep->len = n;
    return rep->data ? PCT_STORE_OK : pct_store_fail(err, PCT_STORE_ERROR, "out of memory");
}

int pct_kv_apply(pct_kvmap *m, const pct_kv_req *r, pct_kv_rep *rep, bool *mutated, pct_store_err *err)
{
    bool changed = false;
    int st = PCT_STORE_OK;
    const pct_kv_entry *e = (r->cmd == PCT_KV_NUMKEYS) ? NULL : pct_kvmap_find(m, r->key, r->klen);
    switch (r->cmd) {
    case PCT_KV_SET:
        if (pct_kvmap_put(m, r->key, r->klen, r->a ? r->a : "", r->alen) < 0) goto oom;
        changed = true;
        break;
    case PCT_KV_GET:
        if (!e) { st = PCT_STORE_MISSING; break; }
        st = reply_bytes(rep, e->val, e->vlen, err);
        break;
    case PCT_KV_ADD: {
        int64_t v;
        if (parse_counter(e, &v) < 0)
            return pct_store_fail(err, PCT_STORE_VALUE, "add: the value of key '%.*s' is not an integer",
                                  (int)(r->klen > 200 ? 200 : r->klen), r->key);
        v = (int64_t)((uint64_t)v + (uint64_t)r->n);
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%" PRId64, v);
        if (pct_kvmap_put(m, r->key, r->klen, buf, (size_t)len) < 0) goto oom;
        rep->n = v;
        changed = true;
        break;
    }
    case PCT_KV_CSET: {
        /* torch: an absent key is set only when `expected` is empty; a present one when it equals
         * `expected`; the reply is the value the key holds afterwards (or `expected` if absent). */
        bool swap = e ? (e->vlen == r->alen && memcmp(e->val, r->a, r->alen) == 0) : r->alen == 0;
        if (swap) {
            if (pct_kvmap_put(m, r->key, r->klen, r->b ? r->b : "", r->blen) < 0) goto oom;
            changed = true;
            st = reply_bytes(rep, r->b, r->blen, err);
        } else if (e) {
            st = reply_bytes(rep, e->val, e->vlen, err);
        } else {
            st = reply_bytes(rep, r->a, r->alen, err);
        }
        break;
    }
    case PCT_KV_CHECK:
        rep->n = e != NULL;
        break;
    case PCT_KV_DEL:
        rep->n = e != NULL;
        if (e) { pct_kvmap_put(m, r->key, r->klen, NULL, 0); changed = true; }
        break;
    case PCT_KV_NUMKEYS:
        rep->n = (int64_t)m->live;
        break;
    case PCT_KV_APPEND: {
        size_t old = e ? e->vlen : 0;
        char *v = malloc(old + r->alen + 1);
        if (!v) goto oom;
        if (old) memcpy(v, e->val, old);
        if (r->alen) memcpy(v + old, r->a, r->alen);
        int rc = pct_kvmap_put(m, r->key, r->klen, v, old + r->alen);
        free(v);
        if (rc < 0) goto oom;
        changed = true;
        break;
    }
    default:
        return pct_store_fail(err, PCT_STORE_ERROR, "store: unknown request %d", r->cmd);
    }
    if (mutated) *mutated = changed;
    return st;
oom:
    return pct_store_fail(err, PCT_STORE_ERROR, "store: out of memory");
}

/* ---- generic verbs ------------------------------------------------------------------------ */

static const pct_store_vtable file_vt;

int pct_store_set(pct_store *s, const char *key, size_t klen, const char *val, size_t vlen, pct_store_err *err)
{
    pct_kv_req r = {.cmd = PCT_KV_SET, .key = key, .klen = klen, .a = val, .alen = vlen};
    pct_kv_rep rep = {0};
    int st = s->vt->request(s, &r, &rep, err);
    pct_kv_rep_clear(&rep);
    return st;
}

int pct_store_wait(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                   pct_store_err *err)
{
    return s->vt->wait(s, keys, klens, n, timeout_ms, err);
}

int pct_store_get(pct_store *s, const char *key, size_t klen, pct_kv_rep *rep, pct_store_err *err)
{
    pct_kv_req r = {.cmd = PCT_KV_GET, .key = key, .klen = klen};
    int st = s->vt->request(s, &r, rep, err);
    if (st != PCT_STORE_MISSING) return st;
    int64_t timeout = atomic_load(&s->timeout_ms);
    st = s->vt->wait(s, &key, &klen, 1, timeout, err);
    if (st == PCT_STORE_ERROR && s->vt == &file_vt && strcmp(err->msg, "Wait timeout") == 0)
        return pct_store_fail(err, st, "Timeout waiting for key: %.*s after %lld ms", (int)(klen > 200 ? 200 : klen), key,
                              (long long)timeout); /* torch's FileStore::get text */
    if (st != PCT_STORE_OK) return st;
    pct_kv_rep_clear(rep);
    st = s->vt->request(s, &r, rep, err);
    return st == PCT_STORE_MISSING ? pct_store_fail(err, PCT_STORE_ERROR, "key was deleted while getting it") : st;
}

void pct_store_free(pct_store *s)
{
    if (s) s->vt->free(s);
}

/* Monotonic milliseconds, for deadlines. */
static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool map_has_all(const pct_kvmap *m, const char *const *keys, const size_t *klens, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!pct_kvmap_find(m, keys[i], klens[i])) return false;
    return true;
}

/* ---- HashStore: the map behind a mutex; waiters sleep on a condition variable ----------- */

typedef struct hash_store {
    pct_store base;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast on every mutation; uses CLOCK_MONOTONIC */
    pct_kvmap map;     /* owned */
} hash_store;

static int hash_request(pct_store *s, const pct_kv_req *req, pct_kv_rep *rep, pct_store_err *err)
{
    hash_store *h = (hash_store *)s;
    bool mutated = false;
    pthread_mutex_lock(&h->mu);
    int st = pct_kv_apply(&h->map, req, rep, &mutated, err);
    if (mutated) pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return st;
}

static int hash_wait(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                     pct_store_err *err)
{
    hash_store *h = (hash_store *)s;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    int64_t ns = dl.tv_nsec + (timeout_ms % 1000) * 1000000;
    dl.tv_sec += timeout_ms / 1000 + ns / 1000000000;
    dl.tv_nsec = ns % 1000000000;
    int st = PCT_STORE_OK;
    pthread_mutex_lock(&h->mu);
    while (!map_has_all(&h->map, keys, klens, n)) {
        int rc = timeout_ms < 0 ? pthread_cond_wait(&h->cv, &h->mu) : pthread_cond_timedwait(&h->cv, &h->mu, &dl);
        if (rc == ETIMEDOUT && !map_has_all(&h->map, keys, klens, n)) {
            st = pct_store_fail(err, PCT_STORE_TIMEOUT, "Wait timeout");
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return st;
}

static void hash_free(pct_store *s)
{
    hash_store *h = (hash_store *)s;
    pct_kvmap_clear(&h->map);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

static const pct_store_vtable hash_vt = {"HashStore", hash_request, hash_wait, hash_free};

pct_store *pct_hash_store_new(pct_store_err *err)
{
    hash_store *h = calloc(1, sizeof *h);
    if (!h) { pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); return NULL; }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&h->mu, NULL);
    h->base.vt = &hash_vt;
    atomic_store(&h->base.timeout_ms, 300000);
    return &h->base;
}

/* ---- FileStore ---------------------------------------------------------------------------
 * Note [FileStore log]: the file is an append-only log of records
 *   u8 kind (1 set, 2 delete) | u32 key length | key | u32 value length | value
 * shared by every process that opens the path. Each request takes an exclusive flock, reads the
 * records appended since this process last looked into its cached map, applies the request
 * there and appends one record for the key it changed. Waits poll the log every 10 ms. */

typedef struct file_store {
    pct_store base;
    char *path;        /* owned */
    int fd;            /* owned: the log, opened O_RDWR|O_APPEND */
    int world_size;    /* -1: never remove the file */
    off_t pos;         /* bytes of the log already in `cache` */
    pct_kvmap cache;   /* owned: the map as of `pos` */
    pthread_mutex_t mu;/* serialises this process's threads around fd/pos/cache */
} file_store;

#define FILE_STORE_CLEANUP_KEY "cleanup/"

static int read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    size_t put = 0;
    while (put < n) {
        ssize_t w = write(fd, (const char *)buf + put, n - put);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        put += (size_t)w;
    }
    return 0;
}

/* Reads the records after f->pos into the cache (caller holds the flock). */
static int file_sync(file_store *f, pct_store_err *err)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0) return pct_store_fail(err, PCT_STORE_ERROR, "FileStore: %s: %s", f->path, strerror(errno));
    if (st.st_size <= f->pos) return PCT_STORE_OK;
    size_t n = (size_t)(st.st_size - f->pos);
    char *buf = malloc(n);
    if (!buf) return pct_store_fail(err, PCT_STORE_ERROR, "out of memory");
    if (lseek(f->fd, f->pos, SEEK_SET) < 0 || read_full(f->fd, buf, n) < 0) {
        free(buf);
        return pct_store_fail(err, PCT_STORE_ERROR, "FileStore: cannot read %s", f->path);
    }
    size_t i = 0;
    int status = PCT_STORE_OK;
    while (i + 5 <= n) {
        uint8_t kind = (uint8_t)buf[i];
        uint32_t kl, vl;
        memcpy(&kl, buf + i + 1, 4);
        if (i + 5 + kl + 4 > n) break;
        const char *key = buf + i + 5;
        memcpy(&vl, buf + i + 5 + kl, 4);
        if (i + 9 + kl + vl > n) break;
        const char *val = buf + i + 9 + kl;
        if (pct_kvmap_put(&f->cache, key, kl, kind == 1 ? val : NULL, vl) < 0) {
            status = pct_store_fail(err, PCT_STORE_ERROR, "out of memory");
            break;
        }
        i += 9 + (size_t)kl + vl;
    }
    f->pos += (off_t)i;
    free(buf);
    return status;
}

static int file_append(file_store *f, const char *key, size_t klen, pct_store_err *err)
{
    const pct_kv_entry *e = pct_kvmap_find(&f->cache, key, klen);
    uint32_t kl = (uint32_t)klen, vl = e ? (uint32_t)e->vlen : 0;
    size_t n = 9 + (size_t)kl + vl;
    char *rec = malloc(n);
    if (!rec) return pct_store_fail(err, PCT_STORE_ERROR, "out of memory");
    rec[0] = e ? 1 : 2;
    memcpy(rec + 1, &kl, 4);
    memcpy(rec + 5, key, kl);
    memcpy(rec + 5 + kl, &vl, 4);
    if (vl) memcpy(rec + 9 + kl, e->val, vl);
    int rc = write_full(f->fd, rec, n);
    free(rec);
    if (rc < 0) return pct_store_fail(err, PCT_STORE_ERROR, "FileStore: cannot write %s: %s", f->path, strerror(errno));
    f->pos += (off_t)n; /* we held the lock since syncing: our record ends the log */
    return PCT_STORE_OK;
}

static int file_lock(file_store *f, int how)
{
    while (flock(f->fd, how) < 0)
        if (errno != EINTR) return -1;
    return 0;
}

static int file_request(pct_store *s, const pct_kv_req *req, pct_kv_rep *rep, pct_store_err *err)
{
    file_store *f = (file_store *)s;
    pthread_mutex_lock(&f->mu);
    if (file_lock(f, LOCK_EX) < 0) {
        pthread_mutex_unlock(&f->mu);
        return pct_store_fail(err, PCT_STORE_ERROR, "FileStore: cannot lock %s: %s", f->path, strerror(errno));
    }
    bool mutated = false;
    int st = file_sync(f, err);
    if (st == PCT_STORE_OK) st = pct_kv_apply(&f->cache, req, rep, &mutated, err);
    if (mutated && (st == PCT_STORE_OK || st == PCT_STORE_MISSING)) {
        int wst = file_append(f, req->key, req->klen, err);
        if (wst != PCT_STORE_OK) st = wst;
    }
    file_lock(f, LOCK_UN);
    pthread_mutex_unlock(&f->mu);
    if (req->cmd == PCT_KV_DEL) rep->n = 1; /* torch's FileStore reports every delete as done */
    return st;
}

static int file_wait(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                     pct_store_err *err)
{
    file_store *f = (file_store *)s;
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        int st = file_lock(f, LOCK_SH) < 0 ? pct_store_fail(err, PCT_STORE_ERROR, "FileStore: cannot lock %s", f->path)
                                            : file_sync(f, err);
        bool done = st == PCT_STORE_OK && map_has_all(&f->cache, keys, klens, n);
        file_lock(f, LOCK_UN);
        pthread_mutex_unlock(&f->mu);
        if (st != PCT_STORE_OK) return st;
        if (done) return PCT_STORE_OK;
        if (timeout_ms >= 0 && now_ms() >= deadline)
            return pct_store_fail(err, PCT_STORE_ERROR, "Wait timeout"); /* torch's FileStore: a RuntimeError */
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
}

static void file_free(pct_store *s)
{
    file_store *f = (file_store *)s;
    if (f->fd >= 0 && f->world_size > 0) {
        /* the last of world_size stores to leave removes the file */
        pct_kv_req r = {.cmd = PCT_KV_ADD, .key = FILE_STORE_CLEANUP_KEY, .klen = strlen(FILE_STORE_CLEANUP_KEY), .n = 1};
        pct_kv_rep rep = {0};
        pct_store_err err;
        pthread_mutex_lock(&f->mu);
        if (file_lock(f, LOCK_EX) == 0) {
            bool mutated;
            if (file_sync(f, &err) == PCT_STORE_OK && pct_kv_apply(&f->cache, &r, &rep, &mutated, &err) == PCT_STORE_OK) {
                if (rep.n >= f->world_size) unlink(f->path);
                else file_append(f, r.key, r.klen, &err);
            }
            file_lock(f, LOCK_UN);
        }
        pthread_mutex_unlock(&f->mu);
    }
    if (f->fd >= 0) close(f->fd);
    pct_kvmap_clear(&f->cache);
    pthread_mutex_destroy(&f->mu);
    free(f->path);
    free(f);
}

static const pct_store_vtable file_vt = {"FileStore", file_request, file_wait, file_free};

pct_store *pct_file_store_new(const char *path, int world_size, int64_t timeout_ms, pct_store_err *err)
{
    file_store *f = calloc(1, sizeof *f);
    if (!f) { pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); return NULL; }
    f->fd = -1;
    pthread_mutex_init(&f->mu, NULL);
    f->base.vt = &file_vt;
    atomic_store(&f->base.timeout_ms, timeout_ms);
    f->world_size = world_size;
    f->path = strdup(path);
    if (!f->path) { pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); goto fail; }
    f->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        pct_store_fail(err, PCT_STORE_ERROR, "open() failed (path: %s): %s", path, strerror(errno));
        goto fail;
    }
    /* make the cleanup counter a key, as torch's FileStore does (it shows in num_keys) */
    pct_kv_req r = {.cmd = PCT_KV_ADD, .key = FILE_STORE_CLEANUP_KEY, .klen = strlen(FILE_STORE_CLEANUP_KEY), .n = 0};
    pct_kv_rep rep = {0};
    if (file_request(&f->base, &r, &rep, err) != PCT_STORE_OK) goto fail;
    return &f->base;
fail:
    f->world_size = -1;
    file_free(&f->base);
    return NULL;
}

/* ---- PrefixStore: "prefix/key" on the inner store ----------------------------------------- */

typedef struct prefix_store {
    pct_store base;
    pct_store *inner;  /* borrowed: the binding keeps the inner store's Python object alive */
    char *prefix;      /* owned, "prefix/" with the slash */
    size_t plen;
} prefix_store;

static char *prefixed(const prefix_store *p, const char *key, size_t klen)
{
    char *k = malloc(p->plen + klen + 1);
    if (!k) return NULL;
    memcpy(k, p->prefix, p->plen);
    if (klen) memcpy(k + p->plen, key, klen);
    k[p->plen + klen] = 0;
    return k;
}

static int prefix_request(pct_store *s, const pct_kv_req *req, pct_kv_rep *rep, pct_store_err *err)
{
    prefix_store *p = (prefix_store *)s;
    if (req->cmd == PCT_KV_NUMKEYS) return p->inner->vt->request(p->inner, req, rep, err);
    pct_kv_req r = *req;
    char *k = prefixed(p, req->key, req->klen);
    if (!k) return pct_store_fail(err, PCT_STORE_ERROR, "out of memory");
    r.key = k;
    r.klen = p->plen + req->klen;
    int st = p->inner->vt->request(p->inner, &r, rep, err);
    free(k);
    return st;
}

static int prefix_wait(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                       pct_store_err *err)
{
    prefix_store *p = (prefix_store *)s;
    char **ks = calloc(n ? n : 1, sizeof *ks);
    size_t *ls = calloc(n ? n : 1, sizeof *ls);
    int st = PCT_STORE_OK;
    if (!ks || !ls) { st = pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); goto done; }
    for (size_t i = 0; i < n; i++) {
        if (!(ks[i] = prefixed(p, keys[i], klens[i]))) { st = pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); goto done; }
        ls[i] = p->plen + klens[i];
    }
    st = p->inner->vt->wait(p->inner, (const char *const *)ks, ls, n, timeout_ms, err);
done:
    if (ks) for (size_t i = 0; i < n; i++) free(ks[i]);
    free(ks);
    free(ls);
    return st;
}

static void prefix_free(pct_store *s)
{
    prefix_store *p = (prefix_store *)s;
    free(p->prefix);
    free(p);
}

static const pct_store_vtable prefix_vt = {"PrefixStore", prefix_request, prefix_wait, prefix_free};

pct_store *pct_prefix_store_new(const char *prefix, pct_store *inner, pct_store_err *err)
{
    prefix_store *p = calloc(1, sizeof *p);
    size_t n = strlen(prefix);
    if (p) p->prefix = malloc(n + 2);
    if (!p || !p->prefix) {
        if (p) free(p);
        pct_store_fail(err, PCT_STORE_ERROR, "out of memory");
        return NULL;
    }
    memcpy(p->prefix, prefix, n);
    p->prefix[n] = '/';
    p->prefix[n + 1] = 0;
    p->plen = n + 1;
    p->inner = inner;
    p->base.vt = &prefix_vt;
    atomic_store(&p->base.timeout_ms, atomic_load(&inner->timeout_ms));
    return &p->base;
}

const char *pct_prefix_store_prefix(const pct_store *s)
{
    return s->vt == &prefix_vt ? ((const prefix_store *)s)->prefix : NULL;
}
