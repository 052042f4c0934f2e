/* tcpstore.c: TCPStore, a key-value store served over TCP by the master process.
 *
 * Note [TCPStore protocol]: a request is one frame
 *   u8 cmd | u32 nkeys | u32 alen | u32 blen | i64 n | nkeys x (u32 klen | key) | a | b
 * and every request gets one reply
 *   u8 status (0 ok, else a PCT_STORE_* code negated) | u32 len | i64 n | len bytes (value or message).
 * WAIT's reply is held back by the server until all its keys exist. The server is one thread
 * polling the listening socket, its clients and a wake-up pipe; it applies requests to its map
 * with pct_kv_apply (store.c), so the semantics are HashStore's. A client that gives up waiting
 * (timeout) closes its connection, so a late reply can never be taken for the next one's, and
 * reconnects on its next request. A peer that goes away is a DistNetworkError at once; a master
 * that stops answering is one after the store's timeout: nothing blocks without a deadline. */
#ifndef _GNU_SOURCE /* the build flags give it (setup.py); a test harness compiles this file alone */
#define _GNU_SOURCE
#endif
#include "store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HDR_REQ 21
#define HDR_REP 13
#define MAX_KEYS (1u << 20)
#define MAX_FIELD (1u << 30)

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* A growable byte buffer. Owns data. */
typedef struct bbuf { char *data; size_t len, cap; } bbuf;

static int bbuf_put(bbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static void bbuf_consume(bbuf *b, size_t n)
{
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- the server -------------------------------------------------------------------------- */

typedef struct tcp_conn { int fd; bbuf in; } tcp_conn;           /* owns fd and in */
typedef struct tcp_waiter { int fd; size_t n; char **keys; size_t *klens; } tcp_waiter; /* owns keys */

typedef struct tcp_server {
    int listen_fd;       /* owned */
    int wake[2];         /* owned: a byte on wake[1] asks the thread to stop */
    pthread_t thread;
    bool running;
    pct_kvmap map;       /* owned; touched only by the server thread once it runs */
    tcp_conn *conns;     /* owned array */
    size_t nconns, capconns;
    tcp_waiter *waiters; /* owned array */
    size_t nwaiters, capwaiters;
    pid_t owner;         /* the process running the thread (a forked child has the memory, not the thread) */
} tcp_server;

static int reply(int fd, int status, const char *data, size_t len, int64_t n)
{
    char h[HDR_REP];
    h[0] = (char)(uint8_t)(-status);
    uint32_t l = (uint32_t)len;
    memcpy(h + 1, &l, 4);
    memcpy(h + 5, &n, 8);
    /* small replies go out in one send so a client never sees a header alone */
    if (len <= 4096) {
        char buf[HDR_REP + 4096];
        memcpy(buf, h, HDR_REP);
        if (len) memcpy(buf + HDR_REP, data, len);
        return send_all(fd, buf, HDR_REP + len);
    }
    return send_all(fd, h, HDR_REP) < 0 ? -1 : send_all(fd, data, len);
}

static void waiter_free(tcp_waiter *w)
{
    for (size_t i = 0; i < w->n; i++) free(w->keys[i]);
    free(w->keys);
    free(w->klens);
}

static bool waiter_ready(const tcp_server *srv, const tcp_waiter *w)
{
    for (size_t i = 0; i < w->n; i++)
        if (!pct_kvmap_find(&srv->map, w->keys[i], w->klens[i])) return false;
    return true;
}

/* Answers the waiters whose keys all exist now. */
static void wake_waiters(tcp_server *srv)
{
    for (size_t i = 0; i < srv->nwaiters;) {
        tcp_waiter *w = &srv->waiters[i];
        if (!waiter_ready(srv, w)) { i++; continue; }
        reply(w->fd, PCT_STORE_OK, NULL, 0, 0);
        waiter_free(w);
        srv->waiters[i] = srv->waiters[--srv->nwaiters];
    }
}

static void drop_conn(tcp_server *srv, size_t idx)
{
    int fd = srv->conns[idx].fd;
    for (size_t i = 0; i < srv->nwaiters;) {
        if (srv->waiters[i].fd == fd) {
            waiter_free(&srv->waiters[i]);
            srv->waiters[i] = srv->waiters[--srv->nwaiters];
        } else {
            i++;
        }
    }
    close(fd);
    free(srv->conns[idx].in.data);
    srv->conns[idx] = srv->conns[--srv->nconns];
}

/* Parses one complete frame at the start of `b`. Returns its length, 0 when incomplete, -1 when
 * malformed. keys/klens point into b (valid until b changes). */
static long parse_frame(const bbuf *b, pct_kv_req *r, const char ***keys, size_t **klens, size_t *nkeys)
{
    if (b->len < HDR_REQ) return 0;
    uint32_t nk, al, bl;
    memcpy(&nk, b->data + 1, 4);
    memcpy(&al, b->data + 5, 4);
    memcpy(&bl, b->data + 9, 4);
    if (nk > MAX_KEYS || al > MAX_FIELD || bl > MAX_FIELD) return -1;
    size_t off = HDR_REQ;
    for (uint32_t i = 0; i < nk; i++) {
        if (b->len < off + 4) return 0;
        uint32_t kl;
        memcpy(&kl, b->data + off, 4);
        if (kl > MAX_FIELD) return -1;
        off += 4 + (size_t)kl;
    }
    if (b->len < off + al + bl) return 0;
    *keys = malloc((nk ? nk : 1) * sizeof **keys);
    *klens = malloc((nk ? nk : 1) * sizeof **klens);
    if (!*keys || !*klens) { free(*keys); free(*klens); return -1; }
    off = HDR_REQ;
    for (uint32_t i = 0; i < nk; i++) {
        uint32_t kl;
        memcpy(&kl, b->data + off, 4);
        (*keys)[i] = b->data + off + 4;
        (*klens)[i] = kl;
        off += 4 + (size_t)kl;
    }
    *nkeys = nk;
    memset(r, 0, sizeof *r);
    r->cmd = (uint8_t)b->data[0];
    memcpy(&r->n, b->data + 13, 8);
    r->key = nk ? (*keys)[0] : "";
    r->klen = nk ? (*klens)[0] : 0;
    r->a = b->data + off;
    r->alen = al;
    r->b = b->data + off + al;
    r->blen = bl;
    return (long)(off + al + bl);
}

/* Handles one request from fd; -1 drops the connection. */
static int serve_one(tcp_server *srv, int fd, const pct_kv_req *r, const char **keys, const size_t *klens, size_t nk)
{
    pct_store_err err;
    if (r->cmd == PCT_KV_PING) return reply(fd, PCT_STORE_OK, NULL, 0, r->n);
    if (r->cmd == PCT_KV_WAIT || (r->cmd == PCT_KV_CHECK && nk != 1)) {
        bool all = true;
        for (size_t i = 0; i < nk && all; i++) all = pct_kvmap_find(&srv->map, keys[i], klens[i]) != NULL;
        if (r->cmd == PCT_KV_CHECK || all) return reply(fd, PCT_STORE_OK, NULL, 0, all);
        if (srv->nwaiters == srv->capwaiters) {
            size_t cap = srv->capwaiters ? srv->capwaiters * 2 : 8;
            tcp_waiter *w = realloc(srv->waiters, cap * sizeof *w);
            if (!w) return -1;
            srv->waiters = w;
            srv->capwaiters = cap;
        }
        tcp_waiter w = {fd, 0, calloc(nk, sizeof(char *)), calloc(nk, sizeof(size_t))};
        if (!w.keys || !w.klens) { waiter_free(&w); return -1; }
        for (size_t i = 0; i < nk; i++, w.n++) {
            if (!(w.keys[i] = malloc(klens[i] ? klens[i] : 1))) { waiter_free(&w); return -1; }
            memcpy(w.keys[i], keys[i], klens[i]);
            w.klens[i] = klens[i];
        }
        srv->waiters[srv->nwaiters++] = w;
        return 0;
    }
    if (nk != 1 && r->cmd != PCT_KV_NUMKEYS) return -1;
    pct_kv_rep rep = {0};
    bool mutated = false;
    int st = pct_kv_apply(&srv->map, r, &rep, &mutated, &err);
    int rc = st == PCT_STORE_OK || st == PCT_STORE_MISSING ? reply(fd, st, rep.data, rep.len, rep.n)
                                                          : reply(fd, st, err.msg, strlen(err.msg), 0);
    pct_kv_rep_clear(&rep);
    if (mutated) wake_waiters(srv);
    return rc;
}

/* Reads what fd has and serves every complete frame; -1 drops the connection. */
static int serve_conn(tcp_server *srv, size_t idx)
{
    tcp_conn *c = &srv->conns[idx];
    char buf[65536];
    ssize_t got = recv(c->fd, buf, sizeof buf, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (got <= 0 || bbuf_put(&c->in, buf, (size_t)got) < 0) return -1;
    for (;;) {
        pct_kv_req r;
        const char **keys = NULL;
        size_t *klens = NULL, nk = 0;
        long used = parse_frame(&c->in, &r, &keys, &klens, &nk);
        if (used <= 0) return (int)used;
        int rc = serve_one(srv, c->fd, &r, keys, klens, nk);
        free(keys);
        free(klens);
        if (rc < 0) return -1;
        c = &srv->conns[idx]; /* serve_one never moves conns, but stay safe */
        bbuf_consume(&c->in, (size_t)used);
    }
}

static void *server_main(void *arg)
{
    tcp_server *srv = arg;
    struct pollfd *pfd = NULL;
    size_t cap = 0;
    for (;;) {
        size_t n = srv->nconns + 2;
        if (n > cap) {
            struct pollfd *p = realloc(pfd, n * sizeof *p);
            if (!p) { sleep_ms(10); continue; }
            pfd = p;
            cap = n;
        }
        pfd[0] = (struct pollfd){srv->wake[0], POLLIN, 0};
        pfd[1] = (struct pollfd){srv->listen_fd, POLLIN, 0};
        for (size_t i = 0; i < srv->nconns; i++) pfd[i + 2] = (struct pollfd){srv->conns[i].fd, POLLIN, 0};
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pfd[0].revents) break;
        /* serve clients from the back so dropping one (swap with the last) keeps indices valid */
        for (size_t i = n - 2; i-- > 0;)
            if (pfd[i + 2].revents && serve_conn(srv, i) < 0) drop_conn(srv, i);
        if (pfd[1].revents & POLLIN) {
            int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                if (srv->nconns == srv->capconns) {
                    size_t c2 = srv->capconns ? srv->capconns * 2 : 8;
                    tcp_conn *cs = realloc(srv->conns, c2 * sizeof *cs);
                    if (!cs) { close(fd); continue; }
                    srv->conns = cs;
                    srv->capconns = c2;
                }
                srv->conns[srv->nconns++] = (tcp_conn){fd, {0}};
            }
        }
    }
    free(pfd);
    return NULL;
}

static void server_free(tcp_server *srv)
{
    if (!srv) return;
    /* Note [Stores after fork]: a forked child (a DataLoader worker) inherits the server's memory and
     * descriptors but not its thread. It must neither wake nor join the parent's thread: it only
     * closes its copies of the descriptors and frees its copy of the memory. */
    if (srv->running && srv->owner == getpid()) {
        char b = 1;
        while (write(srv->wake[1], &b, 1) < 0 && errno == EINTR) {}
        pthread_join(srv->thread, NULL);
    }
    while (srv->nconns) drop_conn(srv, srv->nconns - 1);
    for (size_t i = 0; i < srv->nwaiters; i++) waiter_free(&srv->waiters[i]);
    free(srv->waiters);
    free(srv->conns);
    pct_kvmap_clear(&srv->map);
    if (srv->listen_fd >= 0) close(srv->listen_fd);
    if (srv->wake[0] >= 0) close(srv->wake[0]);
    if (srv->wake[1] >= 0) close(srv->wake[1]);
    free(srv);
}

/* Listens on every address (IPv6 dual-stack, else IPv4) at `port` and starts the thread. */
static tcp_server *server_start(int port, int *bound_port, pct_store_err *err)
{
    tcp_server *srv = calloc(1, sizeof *srv);
    if (!srv) { pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); return NULL; }
    srv->listen_fd = srv->wake[0] = srv->wake[1] = -1;
    if (pipe2(srv->wake, O_CLOEXEC) < 0) { pct_store_fail(err, PCT_STORE_ERROR, "pipe: %s", strerror(errno)); goto fail; }
    int one = 1, zero = 0;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any};
        if (bind(fd, (struct sockaddr *)&a6, sizeof a6) < 0) {
            if (errno == EADDRINUSE) { close(fd); goto in_use; }
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) { pct_store_fail(err, PCT_STORE_NETWORK, "socket: %s", strerror(errno)); goto fail; }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
        if (bind(fd, (struct sockaddr *)&a4, sizeof a4) < 0) { close(fd); goto in_use; }
    }
    srv->listen_fd = fd;
    if (listen(fd, 1024) < 0) { pct_store_fail(err, PCT_STORE_NETWORK, "listen: %s", strerror(errno)); goto fail; }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    if (pthread_create(&srv->thread, NULL, server_main, srv) != 0) {
        pct_store_fail(err, PCT_STORE_ERROR, "TCPStore: cannot start the server thread");
        goto fail;
    }
    srv->running = true;
    srv->owner = getpid();
    return srv;
in_use:
    pct_store_fail(err, PCT_STORE_NETWORK,
                   "The server socket has failed to listen on any local network address. port: %d, useIpv6: false, "
                   "code: -%d, name: EADDRINUSE, message: address already in use", port, EADDRINUSE);
fail:
    server_free(srv);
    return NULL;
}

/* ---- the client -------------------------------------------------------------------------- */

typedef struct tcp_store {
    pct_store base;
    char *host;          /* owned */
    int port;
    int fd;              /* owned connection to the server, -1 until (re)connected */
    pthread_mutex_t mu;  /* one request at a time on fd */
    tcp_server *server;  /* owned on the master, else NULL */
    pid_t pid;           /* the process fd was connected in (Note [Stores after fork]) */
} tcp_store;

static const pct_store_vtable tcp_vt;

static int try_connect(const char *host, int port, int64_t deadline)
{
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, portstr, &hints, &res) != 0) return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc < 0 && errno == EINPROGRESS) {
            int64_t left = deadline - now_ms();
            struct pollfd p = {fd, POLLOUT, 0};
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (left > 0 && poll(&p, 1, (int)left) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && !soerr)
                rc = 0;
        }
        if (rc < 0) { close(fd); fd = -1; }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* Reads n bytes before the deadline; 0, TIMEOUT or NETWORK (peer gone). */
static int recv_all(int fd, char *p, size_t n, int64_t deadline, pct_store_err *err)
{
    while (n) {
        int64_t left = deadline - now_ms();
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = left > 0 ? poll(&pf, 1, left > 1 << 30 ? 1 << 30 : (int)left) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) return PCT_STORE_TIMEOUT;
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0)
            return pct_store_fail(err, PCT_STORE_NETWORK, "Failed to recv, got 0 bytes. Connection was likely closed. "
                                  "Did the remote server shutdown or crash?");
        if (r < 0) return pct_store_fail(err, PCT_STORE_NETWORK, "%s", strerror(errno));
        p += r;
        n -= (size_t)r;
    }
    return PCT_STORE_OK;
}

static int tcp_connect(tcp_store *t, int64_t timeout_ms, pct_store_err *err)
{
    int64_t deadline = now_ms() + timeout_ms;
    int delay = 5;
    for (;;) {
        t->fd = try_connect(t->host, t->port, deadline);
        t->pid = getpid();
        if (t->fd >= 0) return PCT_STORE_OK;
        if (now_ms() >= deadline)
            return pct_store_fail(err, PCT_STORE_NETWORK,
                                  "The client socket has timed out after %lldms while trying to connect to (%s, %d).",
                                  (long long)timeout_ms, t->host, t->port);
        sleep_ms(delay);
        if (delay < 100) delay *= 2;
    }
}

/* Sends one frame and reads its reply; the caller holds t->mu. timeout_ms bounds the wait for
 * the reply. On TIMEOUT err is left for the caller to fill. */
static int tcp_roundtrip(tcp_store *t, int cmd, const char *const *keys, const size_t *klens, size_t nk,
                         const pct_kv_req *req, int64_t timeout_ms, pct_kv_rep *rep, pct_store_err *err)
{
    int st;
    if (t->fd >= 0 && t->pid != getpid()) {
        /* a forked child: the connection belongs to the parent; talk on a connection of its own */
        close(t->fd);
        t->fd = -1;
    }
    if (t->fd < 0 && (st = tcp_connect(t, atomic_load(&t->base.timeout_ms), err)) != PCT_STORE_OK) return st;
    bbuf f = {0};
    uint8_t c = (uint8_t)cmd;
    uint32_t n32 = (uint32_t)nk, al = req ? (uint32_t)req->alen : 0, bl = req ? (uint32_t)req->blen : 0;
    int64_t n = req ? req->n : 0;
    int bad = bbuf_put(&f, &c, 1) | bbuf_put(&f, &n32, 4) | bbuf_put(&f, &al, 4) | bbuf_put(&f, &bl, 4) |
              bbuf_put(&f, &n, 8);
    for (size_t i = 0; i < nk; i++) {
        uint32_t kl = (uint32_t)klens[i];
        bad |= bbuf_put(&f, &kl, 4) | bbuf_put(&f, keys[i], klens[i]);
    }
    if (al) bad |= bbuf_put(&f, req->a, al);
    if (bl) bad |= bbuf_put(&f, req->b, bl);
    if (bad) { free(f.data); return pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); }
    if (send_all(t->fd, f.data, f.len) < 0) {
        st = pct_store_fail(err, PCT_STORE_NETWORK, "%s", strerror(errno)); /* "Broken pipe", as torch */
        free(f.data);
        goto drop;
    }
    free(f.data);
    int64_t deadline = timeout_ms < 0 ? INT64_MAX / 2 : now_ms() + timeout_ms;
    char h[HDR_REP];
    if ((st = recv_all(t->fd, h, HDR_REP, deadline, err)) != PCT_STORE_OK) goto drop;
    uint32_t len;
    memcpy(&len, h + 1, 4);
    memcpy(&rep->n, h + 5, 8);
    int status = -(int)(uint8_t)h[0];
    char *data = malloc(len + 1);
    if (!data) { st = pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); goto drop; }
    if ((st = recv_all(t->fd, data, len, deadline, err)) != PCT_STORE_OK) { free(data); goto drop; }
    data[len] = 0;
    if (status == PCT_STORE_MISSING) {
        free(data);
        return status;
    }
    if (status == PCT_STORE_OK && len == 0 && cmd != PCT_KV_GET && cmd != PCT_KV_CSET) {
        free(data); /* a numeric reply: no bytes, as pct_kv_apply gives */
        return status;
    }
    if (status == PCT_STORE_OK) {
        rep->data = data;
        rep->len = len;
        return status;
    }
    pct_store_fail(err, status, "%s", data);
    free(data);
    return status;
drop:
    close(t->fd);
    t->fd = -1;
    return st;
}

/* "/a, /b": torch prints the keys it waited for with a leading slash. */
static void key_list(char *out, size_t cap, const char *const *keys, const size_t *klens, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < n && used + 8 < cap; i++) {
        int w = snprintf(out + used, cap - used, "%s/%.*s", i ? ", " : "", (int)(klens[i] > 100 ? 100 : klens[i]), keys[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

static int tcp_request(pct_store *s, const pct_kv_req *req, pct_kv_rep *rep, pct_store_err *err)
{
    tcp_store *t = (tcp_store *)s;
    int64_t timeout = atomic_load(&s->timeout_ms);
    pthread_mutex_lock(&t->mu);
    size_t nk = req->cmd == PCT_KV_NUMKEYS ? 0 : 1;
    int st = tcp_roundtrip(t, req->cmd, &req->key, &req->klen, nk, req, timeout, rep, err);
    pthread_mutex_unlock(&t->mu);
    if (st == PCT_STORE_TIMEOUT)
        pct_store_fail(err, st, "Socket Timeout: the store did not answer within %lldms", (long long)timeout);
    return st;
}

static int tcp_wait(pct_store *s, const char *const *keys, const size_t *klens, size_t n, int64_t timeout_ms,
                    pct_store_err *err)
{
    tcp_store *t = (tcp_store *)s;
    pct_kv_rep rep = {0};
    pthread_mutex_lock(&t->mu);
    int st = tcp_roundtrip(t, PCT_KV_WAIT, keys, klens, n, NULL, timeout_ms, &rep, err);
    pthread_mutex_unlock(&t->mu);
    pct_kv_rep_clear(&rep);
    if (st == PCT_STORE_TIMEOUT) {
        char ks[400];
        key_list(ks, sizeof ks, keys, klens, n);
        pct_store_fail(err, st, "wait timeout after %lldms, keys: %s", (long long)timeout_ms, ks);
    }
    return st;
}

static void tcp_free(pct_store *s)
{
    tcp_store *t = (tcp_store *)s;
    if (t->fd >= 0) close(t->fd);
    server_free(t->server);
    pthread_mutex_destroy(&t->mu);
    free(t->host);
    free(t);
}

static const pct_store_vtable tcp_vt = {"TCPStore", tcp_request, tcp_wait, tcp_free};

#define INIT_KEY "init/"

pct_store *pct_tcp_store_new(const char *host, int port, int world_size, bool is_master, int64_t timeout_ms,
                             bool wait_for_workers, pct_store_err *err)
{
    tcp_store *t = calloc(1, sizeof *t);
    if (!t) { pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); return NULL; }
    t->fd = -1;
    pthread_mutex_init(&t->mu, NULL);
    t->base.vt = &tcp_vt;
    atomic_store(&t->base.timeout_ms, timeout_ms);
    t->port = port;
    if (!(t->host = strdup(host))) { pct_store_fail(err, PCT_STORE_ERROR, "out of memory"); goto fail; }
    if (is_master && !(t->server = server_start(port, &t->port, err))) goto fail;
    if (tcp_connect(t, timeout_ms, err) != PCT_STORE_OK) goto fail;
    /* validate: a PING round trip proves a pyctorch store answers at the other end */
    pct_kv_req ping = {.cmd = PCT_KV_PING, .n = 0x70637464};
    pct_kv_rep rep = {0};
    pthread_mutex_lock(&t->mu);
    int st = tcp_roundtrip(t, PCT_KV_PING, NULL, NULL, 0, &ping, timeout_ms, &rep, err);
    pthread_mutex_unlock(&t->mu);
    int64_t echo = rep.n;
    pct_kv_rep_clear(&rep);
    if (st == PCT_STORE_OK && echo != 0x70637464) st = pct_store_fail(err, PCT_STORE_NETWORK, "TCPStore: the server at %s:%d is not a store", host, t->port);
    if (st == PCT_STORE_TIMEOUT) st = pct_store_fail(err, st, "TCPStore: no answer from %s:%d within %lldms", host, t->port, (long long)timeout_ms);
    if (st != PCT_STORE_OK) goto fail;
    if (wait_for_workers && world_size > 0) {
        /* every member counts itself in; the master waits for all of them, as torch's does */
        pct_kv_req add = {.cmd = PCT_KV_ADD, .key = INIT_KEY, .klen = strlen(INIT_KEY), .n = 1};
        if (tcp_request(&t->base, &add, &rep, err) != PCT_STORE_OK) goto fail;
        int64_t deadline = now_ms() + timeout_ms;
        add.n = 0;
        while (is_master && rep.n < world_size) {
            if (now_ms() >= deadline) {
                pct_store_fail(err, PCT_STORE_TIMEOUT, "Timed out after %lld seconds waiting for clients. %lld/%d clients joined.",
                               (long long)(timeout_ms / 1000), (long long)rep.n, world_size);
                goto fail;
            }
            sleep_ms(10);
            if (tcp_request(&t->base, &add, &rep, err) != PCT_STORE_OK) goto fail;
        }
    }
    return &t->base;
fail:
    tcp_free(&t->base);
    return NULL;
}

int pct_tcp_store_port(const pct_store *s)
{
    return s->vt == &tcp_vt ? ((const tcp_store *)s)->port : -1;
}

bool pct_tcp_store_is_tcp(const pct_store *s)
{
    return s->vt == &tcp_vt;
}
