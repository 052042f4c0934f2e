#define _POSIX_C_SOURCE 200809L
/* store_harness.c: the C stores (csrc/distributed/store.c, tcpstore.c) driven without Python,
 * built by test_dist_store.py with AddressSanitizer and UndefinedBehaviorSanitizer, so their
 * memory handling is checked on every run. Prints "ok" and exits 0 when every check holds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "distributed/store.h"

static int failures;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) { fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); failures++; } \
    } while (0)

static int req(pct_store *s, int cmd, const char *key, const char *a, const char *b, int64_t n, pct_kv_rep *rep)
{
    pct_store_err err;
    pct_kv_req r = {.cmd = cmd, .key = key, .klen = key ? strlen(key) : 0, .a = a, .alen = a ? strlen(a) : 0,
                    .b = b, .blen = b ? strlen(b) : 0, .n = n};
    memset(rep, 0, sizeof *rep);
    return s->vt->request(s, &r, rep, &err);
}

/* The verbs every store shares; `many` keys exercise the map's growth and tombstones. */
static void exercise(pct_store *s, int many)
{
    pct_kv_rep rep;
    pct_store_err err;
    CHECK(pct_store_set(s, "a", 1, "xyz", 3, &err) == PCT_STORE_OK);
    CHECK(pct_store_get(s, "a", 1, &rep, &err) == PCT_STORE_OK && rep.len == 3 && memcmp(rep.data, "xyz", 3) == 0);
    pct_kv_rep_clear(&rep);
    CHECK(req(s, PCT_KV_ADD, "n", NULL, NULL, 5, &rep) == PCT_STORE_OK && rep.n == 5);
    CHECK(req(s, PCT_KV_ADD, "n", NULL, NULL, -7, &rep) == PCT_STORE_OK && rep.n == -2);
    CHECK(req(s, PCT_KV_ADD, "a", NULL, NULL, 1, &rep) == PCT_STORE_VALUE);
    CHECK(req(s, PCT_KV_CSET, "a", "xyz", "q", 0, &rep) == PCT_STORE_OK && rep.len == 1 && rep.data[0] == 'q');
    pct_kv_rep_clear(&rep);
    CHECK(req(s, PCT_KV_CSET, "zz", "nope", "q", 0, &rep) == PCT_STORE_OK && rep.len == 4);
    pct_kv_rep_clear(&rep);
    CHECK(req(s, PCT_KV_APPEND, "a", "rs", NULL, 0, &rep) == PCT_STORE_OK);
    CHECK(pct_store_get(s, "a", 1, &rep, &err) == PCT_STORE_OK && rep.len == 3 && memcmp(rep.data, "qrs", 3) == 0);
    pct_kv_rep_clear(&rep);
    char key[32], val[32];
    for (int i = 0; i < many; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d", i * 7);
        CHECK(pct_store_set(s, key, strlen(key), val, strlen(val), &err) == PCT_STORE_OK);
    }
    for (int i = 0; i < many; i += 2) {
        snprintf(key, sizeof key, "k%d", i);
        CHECK(req(s, PCT_KV_DEL, key, NULL, NULL, 0, &rep) == PCT_STORE_OK && rep.n == 1);
    }
    for (int i = 0; i < many; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d", i * 7);
        int st = req(s, PCT_KV_GET, key, NULL, NULL, 0, &rep);
        CHECK(i % 2 ? st == PCT_STORE_OK && rep.len == strlen(val) && memcmp(rep.data, val, rep.len) == 0
                    : st == PCT_STORE_MISSING);
        pct_kv_rep_clear(&rep);
    }
    const char *keys[] = {"never"};
    size_t lens[] = {5};
    CHECK(pct_store_wait(s, keys, lens, 1, 30, &err) != PCT_STORE_OK);
}

typedef struct { pct_store *s; int delay_ms; } setter_arg;

static void *late_setter(void *p)
{
    setter_arg *a = p;
    struct timespec ts = {0, a->delay_ms * 1000000L};
    nanosleep(&ts, NULL);
    pct_store_err err;
    pct_store_set(a->s, "late", 4, "1", 1, &err);
    return NULL;
}

static void wait_wakes(pct_store *waiter, pct_store *setter)
{
    pthread_t th;
    setter_arg a = {setter, 50};
    pthread_create(&th, NULL, late_setter, &a);
    const char *keys[] = {"late"};
    size_t lens[] = {4};
    pct_store_err err;
    CHECK(pct_store_wait(waiter, keys, lens, 1, 5000, &err) == PCT_STORE_OK);
    pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
    pct_store_err err;
    pct_store *h = pct_hash_store_new(&err);
    exercise(h, 300);
    wait_wakes(h, h);
    pct_store *p = pct_prefix_store_new("pre", h, &err);
    exercise(p, 50);
    pct_kv_rep rep;
    CHECK(pct_store_get(h, "pre/a", 5, &rep, &err) == PCT_STORE_OK);
    pct_kv_rep_clear(&rep);
    pct_store_free(p);
    pct_store_free(h);

    if (argc > 1) {
        char path[4096];
        snprintf(path, sizeof path, "%s/harness_file", argv[1]);
        pct_store *f = pct_file_store_new(path, 2, 2000, &err);
        pct_store *f2 = pct_file_store_new(path, 2, 2000, &err);
        CHECK(f && f2);
        if (f && f2) {
            exercise(f, 100);
            CHECK(pct_store_get(f2, "a", 1, &rep, &err) == PCT_STORE_OK && rep.len == 3);
            pct_kv_rep_clear(&rep);
            wait_wakes(f2, f);
        }
        pct_store_free(f);
        pct_store_free(f2);
        CHECK(access(path, F_OK) != 0); /* the last of world_size stores removed the file */
    }

    pct_store *m = pct_tcp_store_new("127.0.0.1", 0, 2, true, 3000, false, &err);
    CHECK(m != NULL);
    if (m) {
        pct_store *c = pct_tcp_store_new("127.0.0.1", pct_tcp_store_port(m), 2, false, 3000, false, &err);
        CHECK(c != NULL);
        if (c) {
            exercise(c, 200);
            char big[100000];
            memset(big, 'b', sizeof big);
            CHECK(pct_store_set(c, "big", 3, big, sizeof big, &err) == PCT_STORE_OK);
            CHECK(pct_store_get(m, "big", 3, &rep, &err) == PCT_STORE_OK && rep.len == sizeof big);
            pct_kv_rep_clear(&rep);
            wait_wakes(c, m);
            pct_store_free(c);
        }
        pct_store_free(m);
    }
    /* a client whose master is gone: an error within the timeout */
    pct_store *gone = pct_tcp_store_new("127.0.0.1", 1, 1, false, 200, false, &err);
    CHECK(gone == NULL && strstr(err.msg, "timed out after 200ms") != NULL);
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
