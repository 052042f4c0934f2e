/* gloo_shim.h: the C interface of the one C++ file (gloo_shim.cc) that talks to Gloo.
 *
 * Everything here runs without the GIL and without Python. Every function catches Gloo's C++
 * exceptions and returns -1 (or NULL) with the message in err[0..errlen). Buffers are borrowed:
 * the caller keeps them alive (and unmoved) until the call returns, or for the p2p handles
 * until pct_gloo_p2p_wait returned and pct_gloo_p2p_free ran.
 * Only built when Gloo is found (PCT_HAVE_GLOO). */
#ifndef PCT_GLOO_SHIM_H
#define PCT_GLOO_SHIM_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The rendezvous store as callbacks (the shim never sees pct_store). get returns a malloc'd
 * copy the shim frees. Each returns 0, or -1 with err filled. */
typedef struct pct_gloo_store_cb {
    void *ctx;
    int (*set)(void *ctx, const char *key, const void *val, size_t n, char *err, size_t errlen);
    int (*get)(void *ctx, const char *key, void **val, size_t *n, char *err, size_t errlen);
    int (*wait)(void *ctx, const char *const *keys, size_t nkeys, int64_t timeout_ms, char *err, size_t errlen);
} pct_gloo_store_cb;

/* out[i] = a[i] op b[i] for n elements (out may alias a or b). */
typedef void (*pct_gloo_reduce_fn)(void *out, const void *a, const void *b, size_t n);

/* A connected full mesh of `size` ranks (owns the Gloo context and device). */
typedef struct pct_gloo pct_gloo;

/* Gloo listens on `iface` (a network interface name, as GLOO_SOCKET_IFNAME gives) when it is
 * non-empty, else on the address `hostname` resolves to. */
pct_gloo *pct_gloo_connect(const pct_gloo_store_cb *store, const char *hostname, const char *iface, int rank,
                           int size, int64_t timeout_ms, char *err, size_t errlen);
void pct_gloo_free(pct_gloo *g);

/* Collectives. elsize is 1, 2, 4 or 8; counts are elements; tag numbers the collective (every
 * rank passes the same); timeout_ms bounds it. */
int pct_gloo_allreduce(pct_gloo *g, void *buf, size_t count, size_t elsize, pct_gloo_reduce_fn fn,
                       uint32_t tag, int64_t timeout_ms, char *err, size_t errlen);
int pct_gloo_reduce(pct_gloo *g, void *buf, size_t count, size_t elsize, pct_gloo_reduce_fn fn, int root,
                    uint32_t tag, int64_t timeout_ms, char *err, size_t errlen);
int pct_gloo_broadcast(pct_gloo *g, void *buf, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms,
                       char *err, size_t errlen);
/* out holds size * nbytes. */
int pct_gloo_allgather(pct_gloo *g, const void *in, void *out, size_t nbytes, uint32_t tag, int64_t timeout_ms,
                       char *err, size_t errlen);
/* out (root only) holds size * nbytes. */
int pct_gloo_gather(pct_gloo *g, const void *in, void *out, size_t nbytes, int root, uint32_t tag,
                    int64_t timeout_ms, char *err, size_t errlen);
/* ins (root only): size buffers of nbytes. */
int pct_gloo_scatter(pct_gloo *g, void *const *ins, void *out, size_t nbytes, int root, uint32_t tag,
                     int64_t timeout_ms, char *err, size_t errlen);
/* Byte counts per rank; the blocks lie back to back in in/out. */
int pct_gloo_alltoallv(pct_gloo *g, const void *in, const int64_t *in_bytes, void *out, const int64_t *out_bytes,
                       uint32_t tag, int64_t timeout_ms, char *err, size_t errlen);
int pct_gloo_barrier(pct_gloo *g, uint32_t tag, int64_t timeout_ms, char *err, size_t errlen);

/* Point to point: post a send or receive now, wait for it later (owns Gloo's buffer). */
typedef struct pct_gloo_p2p pct_gloo_p2p;
pct_gloo_p2p *pct_gloo_send(pct_gloo *g, void *buf, size_t nbytes, int dst, uint64_t tag, char *err, size_t errlen);
/* src < 0: from any rank. */
pct_gloo_p2p *pct_gloo_recv(pct_gloo *g, void *buf, size_t nbytes, int src, uint64_t tag, char *err, size_t errlen);
/* 0 when done (*peer: the other rank), -1 with err (timeout or a broken pair). */
int pct_gloo_p2p_wait(pct_gloo_p2p *p, int64_t timeout_ms, int *peer, char *err, size_t errlen);
void pct_gloo_p2p_free(pct_gloo_p2p *p);

#ifdef __cplusplus
}
#endif
#endif
