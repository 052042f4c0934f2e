/* meta_backend.c: the meta device (torch's device="meta"): tensors with shapes, strides and dtypes but no data.
 *
 * Note [Meta storages]: a meta storage records its size in bytes and has no memory (data NULL); resizing it changes
 * the size. Nothing reads it: the dispatcher sends every op with a meta tensor here, the binding refuses item(),
 * tolist(), numpy() and buffers of meta tensors, and copying out of one raises torch's "Cannot copy out of meta
 * tensor; no data!".
 *
 * Note [Meta fallback]: no op has a kernel of its own in the meta slot yet; every op runs meta_fallback, which takes
 * shapes, dtypes and errors from the CPU kernel itself, so they are the CPU's (and torch's) by construction:
 *  - each meta tensor argument is replaced by a CPU stand-in of the same geometry over a private anonymous mapping
 *    of zeros (MAP_NORESERVE: memory is taken only for pages a kernel writes), the CPU kernel runs on the stand-ins,
 *    and its results become meta tensors again (fresh results get a meta storage of their size; views of a stand-in
 *    become views of the meta tensor it stood for);
 *  - factories asked for device="meta" run with every size set to 0 (they validate their arguments and give the
 *    dtype at no cost), and the meta result takes the sizes asked for;
 *  - in-place ops that read no other tensor (the random fills, fill_, zero_: what initialising a model on the meta
 *    device does) only return their target;
 *  - ops whose result shape depends on the data (nonzero, unique, masked_select, ...) raise torch's
 *    NotImplementedError, as torch's meta device does.
 * The price is the CPU kernel's time on zeros for ops that compute (a matmul of meta tensors runs a real GEMM of its
 * size); shape functions in the meta slot will replace the fallback op by op where that matters.
 */
#include "../backend.h"
#include "../error.h"
#include "../iter.h"
#include "../index.h"
#include "../out.h"
#include "../shapes_only.h"
#include "../standins.h"
#include <stdlib.h>
#include <string.h>

/* ---- storages ---- */

_Thread_local bool pct_shapes_only;

/* cpu(c) with the values of its products and loops skipped (Note [Shapes-only runs]) */
static pct_object *run_shapes_only(pct_kernel_fn cpu, pct_call *c)
{
    const bool outer = pct_shapes_only;
    pct_shapes_only = true;
    pct_object *r = cpu(c);
    pct_shapes_only = outer;
    return r;
}

static pct_storage *meta_storage_new(size_t nbytes, int device_index)
{
    (void)device_index;
    pct_storage *s = pct_storage_struct_new(NULL, nbytes, NULL, PCT_META, -1);
    if (s) s->resizable = 1;
    return s;
}

static const char copy_out_message[] = "Cannot copy out of meta tensor; no data!";

static int meta_copy(pct_tensor *dst, const pct_tensor *src)
{
    (void)src;
    if (dst->device_type != PCT_META) {
        pct_error_str(PCT_ERR_NOT_IMPLEMENTED, copy_out_message);
        return -1;
    }
    return 0;
}

static int meta_fill(pct_tensor *t, const pct_scalar *value)
{
    (void)t; (void)value;
    return 0;
}


/* ---- stand-ins (Note [Stand-ins] in standins.h) ---- */

static bool is_meta_tensor(const pct_tensor *t) { return t && t->device_type == PCT_META; }

/* Every element of stand-in storage st, read as dtype, set to 1 (through the CPU backend's fill). */
static int fill_ones(pct_storage *st, int dtype)
{
    int64_t n = (int64_t)(st->nbytes / (size_t)pct_dtype_itemsize[dtype]);
    pct_tensor *all = pct_tensor_from_storage(st, 1, &n, NULL, 0, dtype);
    if (!all) return -1;
    const pct_scalar one = {.kind = PCT_SCALAR_INT, .i = 1, .d = 1.0};
    int rc = pct_backends[PCT_CPU]->fill(all, &one);
    PCT_DECREF(all);
    return rc;
}

/* A meta storage's stand-in: zeros of its size (ones, read as the viewing tensor's dtype, where ctx says so) */
static pct_storage *meta_standin_storage(void *ctx, pct_storage *meta, const pct_tensor *t)
{
    const bool ones = *(const bool *)ctx;
    size_t nbytes = meta->nbytes;
    void *data = pct_zero_pages_allocator.alloc(nbytes);
    if (!data) return pct_error_nomem();
    pct_storage *st = pct_storage_struct_new(data, nbytes, &pct_zero_pages_allocator, PCT_CPU, -1);
    if (!st) { pct_zero_pages_allocator.free(data, nbytes); return NULL; }
    st->resizable = 1; /* an out= stand-in the kernel resizes moves to a bigger mapping */
    if (ones && fill_ones(st, t->dtype) < 0) { pct_storage_decref(st); return NULL; }
    return st;
}

/* A fresh result: the same geometry over a meta storage of its size. */
static pct_tensor *meta_fresh_result(void *ctx, pct_tensor *r, int device_index)
{
    (void)ctx; (void)device_index;
    pct_storage *st = meta_storage_new(r->storage->nbytes, -1);
    if (!st) { PCT_DECREF(r); return NULL; }
    pct_storage_decref(r->storage);
    r->storage = st;
    r->device_type = PCT_META;
    r->device_index = -1;
    return r;
}

static const pct_standin_ops meta_standins = {
    .device_type = PCT_META,
    .make = meta_standin_storage,
    .fresh_result = meta_fresh_result,
};

/* ---- the fallback ---- */

/* Ops whose result shape depends on the values: torch's meta device has no kernel for them. */
static bool data_dependent(int op)
{
    switch (op) {
    case PCT_OP_nonzero: case PCT_OP_argwhere: case PCT_OP_masked_select: case PCT_OP_unique:
    case PCT_OP_unique_consecutive: case PCT_OP_unique_consecutive_kw: case PCT_OP_unique_consecutive_p1:
    case PCT_OP_unique_consecutive_p2: case PCT_OP_unique_consecutive_p3: case PCT_OP_bincount:
    case PCT_OP_repeat_interleave: case PCT_OP_repeat_interleave_idx:
        return true;
    default:
        return false;
    }
}

/* Integer division raises on a zero divisor: its stand-ins hold ones instead of zeros. */
static bool divides(int op)
{
    return op == PCT_OP_div_trunc || op == PCT_OP_floor_divide || op == PCT_OP_fmod || op == PCT_OP_remainder ||
           op == PCT_OP_div_mode;
}

/* In-place ops that only write values (what initialising a model does): on the meta device, nothing to do. */
static bool writes_values_only(int op)
{
    switch (op) {
    case PCT_OP_uniform_: case PCT_OP_normal_: case PCT_OP_random_default_: case PCT_OP_random_from_:
    case PCT_OP_random_to_: case PCT_OP_bernoulli_float_: case PCT_OP_exponential_: case PCT_OP_cauchy_:
    case PCT_OP_log_normal_: case PCT_OP_geometric_: case PCT_OP_fill_: case PCT_OP_zero_:
        return true;
    default:
        return false;
    }
}

static int param_index(const pct_signature *sig, const char *name, int type)
{
    for (int i = 0; i < sig->nparams; i++)
        if (sig->params[i].type == type && strcmp(sig->params[i].name, name) == 0) return i;
    return -1;
}

/* The tensor an in-place op writes: its out/self target, or the first argument of a method-only mutator (copy_, the
 * random fills). */
static pct_tensor *written_target(const pct_call *c)
{
    if (c->inplace) return c->out;
    const pct_signature *sig = &c->op->sig;
    size_t len = strlen(sig->name);
    if (len > 1 && sig->name[len - 1] == '_' && sig->nparams && sig->params[0].type == PCT_ARG_TENSOR && !c->v[0].none)
        return c->v[0].t;
    return NULL;
}

static bool reads_other_tensors(const pct_call *c, const pct_tensor *target)
{
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (v->none || i == sig->out_index) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR && v->t != target && !(v->t->flags & PCT_FLAG_WRAPPED_NUMBER))
            return true;
        if (sig->params[i].type == PCT_ARG_TENSORLIST && v->n > 0) return true;
    }
    return false;
}

/* A sized factory (empty, zeros, rand, new_ones, ...) run with its sizes set to 0: the meta result of the sizes asked
 * for, with the dtype (and requires_grad) the CPU kernel gave. */
static pct_object *sized_factory_result(pct_object *r, const pct_value *size, const pct_value *stride)
{
    if (!r) return NULL;
    if (!pct_is_tensor(r)) return r;
    pct_tensor *z = (pct_tensor *)r, *m = NULL;
    if (stride) {
        int64_t nbytes = pct_strided_nbytes(size->n, size->list, stride->list, 0, pct_dtype_itemsize[z->dtype]);
        pct_storage *st = nbytes < 0 ? NULL : meta_storage_new((size_t)nbytes, -1);
        if (st) {
            m = pct_tensor_from_storage(st, size->n, size->list, stride->list, 0, z->dtype);
            pct_storage_decref(st);
        }
    } else {
        m = pct_tensor_empty(size->n, size->list, z->dtype, PCT_META, -1);
    }
    if (m) m->flags |= z->flags & PCT_FLAG_REQUIRES_GRAD;
    PCT_DECREF(z);
    return (pct_object *)m;
}

static pct_object *meta_fallback(pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    if (data_dependent(c->op_index)) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "Could not run 'aten::%s' with arguments from the 'Meta' backend.", sig->name);
        return NULL;
    }
    const int dev_i = param_index(sig, "device", PCT_ARG_DEVICE);
    const pct_value *dev = dev_i >= 0 ? &c->v[dev_i] : NULL;
    /* copying out: to("cpu"), and copy_ into a tensor with data */
    if (c->op_index == PCT_OP_copy_) {
        if (c->v[0].t->device_type != PCT_META) return pct_error_str(PCT_ERR_NOT_IMPLEMENTED, copy_out_message);
        /* torch checks the source broadcasts to the destination */
        int64_t shape[PCT_MAX_DIMS];
        int nd;
        const pct_tensor *src = c->v[1].t;
        if (!c->v[1].none &&
            pct_broadcast_shapes(c->v[0].t->ndim, c->v[0].t->sizes, src->ndim, src->sizes, &nd, shape) < 0)
            return NULL;
        PCT_INCREF(c->v[0].t);
        return (pct_object *)c->v[0].t;
    }
    if (dev && !dev->none && dev->dev.type != PCT_META && c->op_index == PCT_OP_to_device &&
        is_meta_tensor(c->v[0].t))
        return pct_error_str(PCT_ERR_NOT_IMPLEMENTED, copy_out_message);
    /* initialising in place (uniform_, normal_, fill_, zero_, ...): nothing to compute */
    pct_tensor *target = written_target(c);
    if (is_meta_tensor(target) && writes_values_only(c->op_index) && !reads_other_tensors(c, target)) {
        PCT_INCREF(target);
        return (pct_object *)target;
    }
    pct_call *sc = malloc(sizeof *sc);
    if (!sc) return pct_error_nomem();
    memcpy(sc, c, sizeof *sc);
    bool ones = divides(c->op_index);
    pct_standins s;
    pct_standins_init(&s, &meta_standins, &ones);
    pct_object *r = NULL;
    if (pct_standins_replace_args(&s, sc) < 0) goto done;
    /* a factory asked for the meta device: the CPU kernel with no elements */
    const pct_value *size = NULL, *stride = NULL;
    bool factory = dev && !dev->none && dev->dev.type == PCT_META;
    if (factory) {
        sc->v[dev_i].dev.type = PCT_CPU;
        sc->v[dev_i].dev.index = -1;
        /* to("meta") of a CPU tensor: a fresh copy to become meta, never the CPU tensor itself */
        int copy_i = c->op_index == PCT_OP_to_device && !is_meta_tensor(c->v[0].t) ? param_index(sig, "copy", PCT_ARG_BOOL)
                                                                                  : -1;
        if (copy_i >= 0) sc->v[copy_i].b = true;
        int si = param_index(sig, "size", PCT_ARG_INTLIST), ti = param_index(sig, "stride", PCT_ARG_INTLIST);
        if (si >= 0 && !sc->v[si].none) {
            size = &c->v[si];
            for (int d = 0; d < sc->v[si].n; d++)
                if (sc->v[si].list[d] > 0) sc->v[si].list[d] = 0; /* negative sizes keep their error */
            if (ti >= 0 && !sc->v[ti].none) stride = &c->v[ti];
        }
    }
    pct_kernel_fn cpu = c->op->kernels[PCT_CPU];
    if (!cpu) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "Could not run 'aten::%s' with arguments from the 'Meta' backend.", sig->name);
        goto done;
    }
    r = pct_standins_run_kernel(cpu, sc, run_shapes_only);
    if (r && pct_standins_finish(&s) < 0) PCT_CLEAR(r);
    /* a sized factory made an empty tensor of the dtype; anything else (arange, linspace, eye, to("meta") of a CPU
     * tensor, and every op on meta tensors) is made meta as it is */
    r = size ? sized_factory_result(r, size, stride) : pct_standins_results(&s, r);
done:
    pct_standins_release(&s);
    free(sc);
    return r;
}

/* ---- advanced indexing (index.h): the CPU's kernels on stand-ins ---- */

/* A boolean mask selects by its values, so the result's shape depends on them: refused as torch's meta device
 * refuses it. -1 with the error. */
static int refuse_masks(int n, pct_tensor **indices)
{
    for (int i = 0; i < n; i++)
        if (indices[i] && (indices[i]->dtype == PCT_BOOL || indices[i]->dtype == PCT_UINT8))
            return pct_error_str(PCT_ERR_NOT_IMPLEMENTED,
                                 "Could not run 'aten::nonzero' with arguments from the 'Meta' backend."), -1;
    return 0;
}

pct_object *pct_meta_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
{
    bool ones = false;
    if (refuse_masks(nindices, indices) < 0) return NULL;
    return pct_standins_index_get(&meta_standins, &ones, self, nindices, indices);
}

int pct_meta_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    if (self->device_type != PCT_META) return pct_error_str(PCT_ERR_NOT_IMPLEMENTED, copy_out_message), -1;
    bool ones = false;
    if (refuse_masks(nindices, indices) < 0) return -1;
    /* checks; the writes vanish */
    return pct_standins_index_put_(&meta_standins, &ones, self, nindices, indices, values, accumulate);
}

const pct_backend pct_meta_backend = {
    .name = "meta",
    .dispatch_name = "Meta",
    .storage_new = meta_storage_new,
    .copy = meta_copy,
    .fill = meta_fill,
    .synchronize = pct_single_stream_device_synchronize,
    .stream_new = pct_single_stream_new,
    .current_stream = pct_single_stream_current,
    .set_current_stream = pct_single_stream_set,
    .stream_synchronize = pct_single_stream_synchronize,
    .stream_query = pct_single_stream_query,
    .index_get = pct_meta_index_get,
    .index_put_ = pct_meta_index_put_,
    .fallback = meta_fallback,
};
