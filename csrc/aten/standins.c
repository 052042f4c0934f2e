/* standins.c: CPU kernels on stand-ins of another device's tensors (Note [Stand-ins] in standins.h). */
#include "standins.h"
#include "error.h"
#include "out.h"
#include "index.h"
#include <stdlib.h>

void pct_standins_release(pct_standins *s)
{
    for (int i = 0; i < s->n; i++) PCT_DECREF(s->items[i].host);
    for (int i = 0; i < s->nstorages; i++) pct_storage_decref(s->host_storages[i]);
    for (int i = 0; i < s->nlists; i++) free(s->lists[i]);
    for (int i = 0; i < s->nseqs; i++) PCT_DECREF(s->seqs[i]);
    free(s->items);
    free(s->dev_storages);
    free(s->host_storages);
}

static bool on_device(const pct_standins *s, const pct_tensor *t) { return t && t->device_type == s->ops->device_type; }

/* Grows an array of elem-sized items to hold one more; -1 with MemoryError. */
static int grow(void **items, int n, int *cap, size_t elem)
{
    if (n < *cap) return 0;
    int c = *cap ? 2 * *cap : 8;
    void *p = realloc(*items, elem * (size_t)c);
    if (!p) return pct_error_nomem(), -1;
    *items = p;
    *cap = c;
    return 0;
}

/* The stand-in storage of t's storage (made once per storage); borrowed, NULL with an error. */
static pct_storage *host_storage_of(pct_standins *s, pct_tensor *t)
{
    for (int i = 0; i < s->nstorages; i++)
        if (s->dev_storages[i] == t->storage) return s->host_storages[i];
    int cap = s->storages_cap;
    if (grow((void **)&s->dev_storages, s->nstorages, &cap, sizeof *s->dev_storages) < 0) return NULL;
    if (grow((void **)&s->host_storages, s->nstorages, &s->storages_cap, sizeof *s->host_storages) < 0) return NULL;
    pct_storage *h = s->ops->make(s->ctx, t->storage, t);
    if (!h) return NULL;
    s->dev_storages[s->nstorages] = t->storage;
    s->host_storages[s->nstorages++] = h;
    return h;
}

pct_tensor *pct_standin_of(pct_standins *s, pct_tensor *t)
{
    for (int i = 0; i < s->n; i++)
        if (s->items[i].device == t) return s->items[i].host;
    if (grow((void **)&s->items, s->n, &s->cap, sizeof *s->items) < 0) return NULL;
    pct_storage *h = host_storage_of(s, t);
    if (!h) return NULL;
    pct_tensor *c = pct_tensor_from_storage(h, t->ndim, t->sizes, t->strides, t->offset, t->dtype);
    if (!c) return NULL;
    if (s->device_index < 0) s->device_index = t->device_index;
    s->items[s->n++] = (pct_standin){t, c};
    return c;
}

/* An object argument as the CPU kernel gets it: a tuple or list holding device tensors becomes a tuple of their
 * stand-ins (owned by s); anything else stays (borrowed). NULL with an error. */
static pct_object *object_with_standins(pct_standins *s, pct_object *o)
{
    pct_object *const *items;
    int64_t n;
    if (!pct_sequence_items(o, &items, &n)) return o;
    bool any = false;
    for (int64_t k = 0; k < n && !any; k++) any = pct_is_tensor(items[k]) && on_device(s, (pct_tensor *)items[k]);
    if (!any) return o;
    if (s->nseqs == PCT_MAX_PARAMS) return pct_error_str(PCT_ERR_RUNTIME, "pyctorch internal error: too many sequences");
    pct_object **copy = malloc(sizeof *copy * (size_t)(n ? n : 1));
    if (!copy) return pct_error_nomem();
    for (int64_t k = 0; k < n; k++) {
        pct_object *x = items[k];
        if (pct_is_tensor(x) && on_device(s, (pct_tensor *)x)) x = (pct_object *)pct_standin_of(s, (pct_tensor *)x);
        copy[k] = x ? pct_newref(x) : NULL; /* a NULL makes the tuple fail and release the rest */
    }
    pct_object *t = pct_tuple_steal(n, copy);
    free(copy);
    if (t) s->seqs[s->nseqs++] = t;
    return t;
}

int pct_standins_replace_args(pct_standins *s, pct_call *sc)
{
    const pct_signature *sig = &sc->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        pct_value *v = &sc->v[i];
        if (v->none) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR && on_device(s, v->t)) {
            if (!(v->t = pct_standin_of(s, v->t))) return -1;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST && v->n > 0) {
            pct_tensor **items = malloc(sizeof *items * (size_t)v->n);
            if (!items) return pct_error_nomem(), -1;
            s->lists[s->nlists++] = items;
            for (int32_t k = 0; k < v->n; k++)
                if (!(items[k] = on_device(s, v->items[k]) ? pct_standin_of(s, v->items[k]) : v->items[k])) return -1;
            v->items = items;
        } else if (sig->params[i].type == PCT_ARG_OBJECT && v->obj && !(v->obj = object_with_standins(s, v->obj))) {
            return -1;
        }
    }
    if (on_device(s, sc->out) && !(sc->out = pct_standin_of(s, sc->out))) return -1;
    return 0;
}

pct_object *pct_standins_run_kernel(pct_kernel_fn cpu, pct_call *sc, pct_object *(*run)(pct_kernel_fn, pct_call *))
{
    const pct_signature *sig = &sc->op->sig;
    if (sig->out_index < 0 || sc->v[sig->out_index].none) return run ? run(cpu, sc) : cpu(sc);
    const pct_call *prev;
    if (pct_out_enter(sc, &prev) < 0) return NULL; /* Note [out= arguments]: the stand-in is the out tensor now */
    pct_object *r = run ? run(cpu, sc) : cpu(sc);
    pct_out_leave(prev);
    return r;
}

int pct_standins_finish(pct_standins *s)
{
    for (int i = 0; i < s->n; i++) {
        pct_tensor *d = s->items[i].device;
        const pct_tensor *c = s->items[i].host;
        bool same = d->ndim == c->ndim && d->offset == c->offset && d->dtype == c->dtype &&
                    !memcmp(d->sizes, c->sizes, sizeof(int64_t) * (size_t)c->ndim) &&
                    !memcmp(d->strides, c->strides, sizeof(int64_t) * (size_t)c->ndim);
        if (same) continue;
        d->offset = c->offset;
        if (pct_tensor_set_shape(d, c->ndim, c->sizes, c->strides) < 0) return -1;
    }
    for (int i = 0; i < s->nstorages; i++)
        if (s->ops->written_back && s->ops->written_back(s->ctx, s->dev_storages[i], s->host_storages[i]) < 0) return -1;
    return 0;
}

/* The device tensor a result tensor r of the CPU kernel stands for (new reference; r is consumed). */
static pct_tensor *result_to_device(pct_standins *s, pct_tensor *r)
{
    for (int i = 0; i < s->n; i++) {
        if (r == s->items[i].host) { /* the kernel returned its (stand-in) argument: the device tensor itself */
            PCT_DECREF(r);
            PCT_INCREF(s->items[i].device);
            return s->items[i].device;
        }
    }
    for (int i = 0; i < s->n; i++) {
        if (r->storage != s->items[i].host->storage) continue;
        /* a view of a stand-in: the same view of the device storage, with the version counter and root of the device
         * tensor it stood for */
        pct_tensor *m = s->items[i].device;
        pct_storage_incref(m->storage);
        pct_storage_decref(r->storage);
        r->storage = m->storage;
        atomic_fetch_add_explicit(&m->version->refcount, 1, memory_order_relaxed);
        pct_version *old = r->version;
        r->version = m->version;
        if (atomic_fetch_sub_explicit(&old->refcount, 1, memory_order_acq_rel) == 1) free(old);
        PCT_SETREF(r->base, pct_newref(m->base ? m->base : (pct_object *)m));
        r->device_type = m->device_type;
        r->device_index = m->device_index;
        return r;
    }
    /* a fresh result. A result shared with anything else (a CPU argument returned as it is) is left alone: a new
     * tensor object takes its place. */
    if (r->head.refcount != 1 || atomic_load(&r->storage->refcount) != 1) {
        pct_tensor *a = pct_tensor_new_alias(r, false);
        PCT_DECREF(r);
        if (!a) return NULL;
        r = a;
    }
    return s->ops->fresh_result(s->ctx, r, s->device_index);
}

pct_object *pct_standins_results(pct_standins *s, pct_object *r)
{
    if (!r) return NULL;
    if (pct_is_tensor(r)) return (pct_object *)result_to_device(s, (pct_tensor *)r);
    pct_object *const *items;
    int64_t n;
    if (!pct_sequence_items(r, &items, &n)) return r; /* None, a number */
    /* a tuple the kernel just made (a multi-output result): its items are replaced in place */
    pct_object **slots = (pct_object **)items;
    for (int64_t i = 0; i < n; i++) {
        if (!pct_is_tensor(slots[i])) continue;
        pct_tensor *m = result_to_device(s, (pct_tensor *)slots[i]);
        slots[i] = (pct_object *)m;
        if (!m) { /* keep the tuple valid for its release */
            slots[i] = pct_none();
            PCT_DECREF(r);
            return NULL;
        }
    }
    return r;
}

/* self, the indices (NULL entries kept) and values replaced by their stand-ins where they are the device's; -1 with an
 * error */
static int index_operands(pct_standins *s, pct_tensor **self, int n, pct_tensor **indices, pct_tensor **values)
{
    for (int i = 0; i < n; i++)
        if (on_device(s, indices[i]) && !(indices[i] = pct_standin_of(s, indices[i]))) return -1;
    if (on_device(s, *self) && !(*self = pct_standin_of(s, *self))) return -1;
    if (values && on_device(s, *values) && !(*values = pct_standin_of(s, *values))) return -1;
    return 0;
}

pct_object *pct_standins_index_get(const pct_standin_ops *ops, void *ctx, pct_tensor *self, int nindices,
                                   pct_tensor **indices)
{
    pct_standins s;
    pct_standins_init(&s, ops, ctx);
    pct_tensor *idx[PCT_MAX_DIMS];
    memcpy(idx, indices, sizeof *idx * (size_t)nindices);
    pct_object *r = NULL;
    if (index_operands(&s, &self, nindices, idx, NULL) == 0)
        r = pct_standins_results(&s, pct_cpu_index_get(self, nindices, idx));
    pct_standins_release(&s);
    return r;
}

int pct_standins_index_put_(const pct_standin_ops *ops, void *ctx, pct_tensor *self, int nindices, pct_tensor **indices,
                            pct_tensor *values, bool accumulate)
{
    pct_standins s;
    pct_standins_init(&s, ops, ctx);
    pct_tensor *idx[PCT_MAX_DIMS];
    memcpy(idx, indices, sizeof *idx * (size_t)nindices);
    int rc = index_operands(&s, &self, nindices, idx, &values);
    if (rc == 0) rc = pct_cpu_index_put_(self, nindices, idx, values, accumulate);
    if (rc == 0) rc = pct_standins_finish(&s);
    pct_standins_release(&s);
    return rc;
}
