/* store.h: key-value stores for rendezvous (torch.distributed's Store family), in plain C.
 *
 * No Python here: every function may run without the GIL (the binding releases it around
 * them) and from any thread (the Gloo shim calls a store while connecting its mesh).
 *
 * One set of semantics, three places to keep the map:
 *   pct_kvmap      an in-memory map; pct_kv_apply runs one request against it. HashStore, the
 *                  TCPStore server and FileStore's cache all go through it, so set/add/compare_set/
 *                  delete mean the same thing everywhere.
 *   pct_store      a store object: a vtable (request, wait, free) plus its timeout.
 *                  Generic verbs (get = wait + GET, multi_get, ...) are written once over the vtable.
 * Errors: functions return PCT_STORE_OK or a negative status and fill a pct_store_err with
 * torch's message text; the binding turns the status into DistStoreError (timeout),
 * DistNetworkError (socket) or RuntimeError (anything else).
 */
#ifndef PCT_STORE_H
#define PCT_STORE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    PCT_STORE_OK = 0,
    PCT_STORE_MISSING = -1,  /* GET of an absent key (internal: callers wait first) */
    PCT_STORE_TIMEOUT = -2,  /* DistStoreError */
    PCT_STORE_NETWORK = -3,  /* DistNetworkError */
    PCT_STORE_ERROR = -4,    /* RuntimeError (out of memory, bad file, protocol) */
    PCT_STORE_VALUE = -5,    /* ValueError (bad argument, e.g. add to a non-integer value) */
};

/* A failure's message, filled by the failing function (inline storage, nothing to free). */
typedef struct pct_store_err {
    char msg[512];
} pct_store_err;

/* Sets err->msg from a printf format and returns `status`. */
int pct_store_fail(pct_store_err *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

enum pct_kv_cmd {
    PCT_KV_SET = 1, PCT_KV_GET, PCT_KV_ADD, PCT_KV_CSET, PCT_KV_CHECK, PCT_KV_DEL, PCT_KV_NUMKEYS, PCT_KV_APPEND,
    PCT_KV_WAIT, /* TCP protocol only: reply when every key exists */
    PCT_KV_PING, /* TCP protocol only: validates a new connection */
};

/* One request. Borrowed pointers: the caller owns key/a/b for the duration of the call.
 *   SET key a | GET key | ADD key n | CSET key a(expected) b(desired) | CHECK key | DEL key |
 *   NUMKEYS | APPEND key a */
typedef struct pct_kv_req {
    int cmd;
    const char *key; size_t klen;
    const char *a; size_t alen;
    const char *b; size_t blen;
    int64_t n;
} pct_kv_req;

/* One reply: data is malloc'd and owned by whoever holds the reply (pct_kv_rep_clear frees it).
 * GET and CSET return bytes in data; ADD the new value, CHECK/DEL 0 or 1, NUMKEYS the count in n. */
typedef struct pct_kv_rep {
    char *data; size_t len;
    int64_t n;
} pct_kv_rep;
void pct_kv_rep_clear(pct_kv_rep *r);

/* An in-memory map. Owns every key and value (malloc'd). Linear probing over a power-of-two
 * table; deleted slots are tombstones until the next growth. */
typedef struct pct_kv_entry { char *key; size_t klen; char *val; size_t vlen; int state; } pct_kv_entry;
typedef struct pct_kvmap {
    pct_kv_entry *slots; /* owned */
    size_t cap, used, live;
} pct_kvmap;
void pct_kvmap_clear(pct_kvmap *m);
const pct_kv_entry *pct_kvmap_find(const pct_kvmap *m, const char *key, size_t klen);
/* Stores a copy of val under key (replacing); deletes it when val is NULL. 0, or -1 out of memory. */
int pct_kvmap_put(pct_kvmap *m, const char *key, size_t klen, const char *val, size_t vlen);
/* Runs one request. *mutated (may be NULL) is set when the request changed `req->key`.
 * Returns OK, MISSING (GET of an absent key), VALUE or ERROR with err filled. */
int pct_kv_apply(pct_kvmap *m, const pct_kv_req *req, pct_kv_rep *rep, bool *mutated, pct_store_err *err);

typedef struct pct_store pct_store;
/* A store kind's functions: static tables, one per kind, never freed. */
typedef struct pct_store_vtable {
    const char *name;
    /* One non-blocking request (never PCT_KV_WAIT). */
    int (*request)(pct_store *s, const pct_kv_req *req, pct_kv_rep *rep, pct_store_err *err);
    /* Returns OK when all keys exist, TIMEOUT after timeout_ms (< 0: forever). */
    int (*wait)(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                pct_store_err *err);
    void (*free)(pct_store *s);
} pct_store_vtable;

/* The common header of every store; the concrete stores embed it first.
 * timeout_ms is read by every blocking verb and written by set_timeout (atomic: Gloo's
 * threads may read it while Python sets it). */
struct pct_store {
    const pct_store_vtable *vt;
    _Atomic int64_t timeout_ms;
};

/* Generic verbs over the vtable (store.c). */
int pct_store_set(pct_store *s, const char *key, size_t klen, const char *val, size_t vlen, pct_store_err *err);
/* Waits up to the store's timeout for key, then returns its value in rep. */
int pct_store_get(pct_store *s, const char *key, size_t klen, pct_kv_rep *rep, pct_store_err *err);
int pct_store_wait(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                   pct_store_err *err);
void pct_store_free(pct_store *s);

/* Constructors; NULL with err filled. */
pct_store *pct_hash_store_new(pct_store_err *err);
/* FileStore over `path` (the file is created; its folder must exist). world_size >= 1: the
 * last of world_size stores to be freed removes the file, as torch's does; -1: never. */
pct_store *pct_file_store_new(const char *path, int world_size, int64_t timeout_ms, pct_store_err *err);
/* A view of `inner` with every key prefixed by "prefix/". Borrows inner: the caller keeps it
 * alive for the life of the prefix store (the binding holds the Python object). */
pct_store *pct_prefix_store_new(const char *prefix, pct_store *inner, pct_store_err *err);
const char *pct_prefix_store_prefix(const pct_store *s);

/* TCPStore (tcpstore.c). The master also runs the server thread. port 0 asks the kernel for a
 * free port (read it back with pct_tcp_store_port). world_size > 0 with wait_for_workers: the
 * constructor returns once world_size clients have connected, or TIMEOUT. */
pct_store *pct_tcp_store_new(const char *host, int port, int world_size, bool is_master, int64_t timeout_ms,
                             bool wait_for_workers, pct_store_err *err);
int pct_tcp_store_port(const pct_store *s);
bool pct_tcp_store_is_tcp(const pct_store *s);

#endif
