/* cuda_fallback.c: ops without a CUDA kernel run their CPU kernel on host copies.
 *
 * Note [CUDA fallback]: the op table's CUDA slots hold the kernels csrc/cuda has (and the device-neutral ones: Note
 * [Device-neutral copies], composites); any other op on CUDA tensors runs here, on stand-ins (Note [Stand-ins]): each
 * device storage the call reads is copied to the host whole, the CPU kernel runs, every stand-in storage is copied
 * back (the kernel may have written it: in-place ops, out=, running statistics, optimizer states), and fresh results
 * are copied to the device of the call's first CUDA tensor (or of its device= argument). The values are the CPU's,
 * so they match torch's CPU results (torch's CUDA kernels differ from its CPU ones by rounding only); random ops use
 * the CPU generator. The price is two transfers of every storage per op: fine for the rare op, slow for a training
 * loop, so each op warns once (as torch's MPS fallback does) and the kernels of csrc/cuda's .cu files replace it op by op.
 * On the simulated device (Note [Simulated CUDA device]) every op runs here, without the warning.
 */
#include "cuda_internal.h"
#include "aten/error.h"
#include "aten/index.h"
#include "aten/standins.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

pct_storage *pct_cuda_storage_to_host(const pct_storage *s);
int pct_cuda_storage_from_host(pct_storage *s, const pct_storage *h);

static pct_storage *standin_storage(void *ctx, pct_storage *s, const pct_tensor *t)
{
    (void)ctx; (void)t;
    return pct_cuda_storage_to_host(s);
}

/* a fresh CPU result: its storage copied to the device, the geometry kept */
static pct_tensor *fresh_result(void *ctx, pct_tensor *r, int device_index)
{
    (void)ctx;
    pct_storage *d = pct_cuda_storage_new(r->storage->nbytes, device_index);
    if (!d || pct_cuda_storage_from_host(d, r->storage) < 0) {
        if (d) pct_storage_decref(d);
        PCT_DECREF(r);
        return NULL;
    }
    pct_storage_decref(r->storage);
    r->storage = d;
    r->device_type = PCT_CUDA;
    r->device_index = d->device_index;
    return r;
}

static int written_back(void *ctx, pct_storage *dev, pct_storage *host)
{
    (void)ctx;
    return pct_cuda_storage_from_host(dev, host);
}

static const pct_standin_ops cuda_standins = {
    .device_type = PCT_CUDA,
    .make = standin_storage,
    .fresh_result = fresh_result,
    .written_back = written_back,
};

/* Warns once per op that it ran on the CPU (not on the simulated device, where every op does). */
static int warn_once(const pct_call *c)
{
    static unsigned char warned[PCT_NUM_OPS];
    if (!pct_cuda_drv->has_kernels || warned[c->op_index]) return 0;
    warned[c->op_index] = 1;
    return pct_warn(PCT_WARN_USER,
                    "The operator 'aten::%s' is not currently implemented for the CUDA device in pyctorch; it falls "
                    "back to its CPU kernel, with copies between the devices (Note [CUDA fallback]).",
                    c->op->sig.name);
}

static int param_named(const pct_signature *sig, const char *name, int type)
{
    for (int i = 0; i < sig->nparams; i++)
        if (sig->params[i].type == type && strcmp(sig->params[i].name, name) == 0) return i;
    return -1;
}

static atomic_llong fallback_runs;

int64_t pct_cuda_fallback_runs(void) { return (int64_t)atomic_load(&fallback_runs); }

/* The call's first argument, a tensor for every op a glue file routes with it (the index ops: their self/input): the
 * one place outside the typed argument structs that reads a slot by number, so glue shared by several ops can ask its
 * dtype (Note [Typed arguments]). */
const pct_tensor *pct_cuda_call_self(const pct_call *c) { return c->v[0].t; }

pct_object *pct_cuda_fallback(pct_call *c)
{
    atomic_fetch_add(&fallback_runs, 1);
    const pct_signature *sig = &c->op->sig;
    pct_kernel_fn cpu = c->op->kernels[PCT_CPU];
    if (!cpu)
        return pct_error(PCT_ERR_NOT_IMPLEMENTED, "Could not run 'aten::%s' with arguments from the 'CUDA' backend.",
                         sig->name);
    pct_call *sc = malloc(sizeof *sc);
    if (!sc) return pct_error_nomem();
    memcpy(sc, c, sizeof *sc);
    pct_standins s;
    pct_standins_init(&s, &cuda_standins, NULL);
    pct_object *r = NULL;
    /* a factory asked for a CUDA device: the CPU kernel makes it, and its result moves to that device */
    const int dev_i = param_named(sig, "device", PCT_ARG_DEVICE);
    if (dev_i >= 0 && !sc->v[dev_i].none && sc->v[dev_i].dev.type == PCT_CUDA) {
        if ((s.device_index = pct_cuda_resolve_device(sc->v[dev_i].dev.index)) < 0) goto done;
        sc->v[dev_i].dev.type = PCT_CPU;
        sc->v[dev_i].dev.index = -1;
    }
    if (warn_once(c) < 0 || pct_standins_replace_args(&s, sc) < 0) goto done;
    r = pct_standins_run_kernel(cpu, sc, NULL);
    if (r && pct_standins_finish(&s) < 0) PCT_CLEAR(r);
    r = pct_standins_results(&s, r);
done:
    pct_standins_release(&s);
    free(sc);
    return r;
}

/* ---- advanced indexing (index.h): the CPU's kernels on stand-ins ---- */

pct_object *pct_cuda_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
{
    atomic_fetch_add(&fallback_runs, 1);
    return pct_standins_index_get(&cuda_standins, NULL, self, nindices, indices);
}

int pct_cuda_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    atomic_fetch_add(&fallback_runs, 1);
    return pct_standins_index_put_(&cuda_standins, NULL, self, nindices, indices, values, accumulate);
}
