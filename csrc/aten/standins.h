/* standins.h: running a CPU kernel for another device, on CPU stand-ins of that device's tensors.
 *
 * Note [Stand-ins]: a backend without a kernel of its own for an op (the meta device for every op, Note [Meta
 * fallback]; CUDA for the ops it has no kernel for yet, Note [CUDA fallback]) runs the CPU kernel on stand-ins:
 *  - each storage of the device that the call's tensors view gets one CPU storage standing for it (the backend's
 *    `make`: zeros for meta, a copy of the bytes for CUDA), and each such tensor becomes a CPU tensor of the same
 *    geometry over it, so tensors that share memory still share it and in-place writes and views keep their aliasing;
 *  - the CPU kernel runs on a copy of the call whose tensor arguments (tensor lists, tuples of tensors, out=) are the
 *    stand-ins;
 *  - its results become tensors of the device again: a stand-in returned is the tensor it stood for; a view of a
 *    stand-in is the same view of the device storage (sharing the version counter and base of the tensor it stood
 *    for); a fresh CPU tensor goes through the backend's `fresh_result` (a meta storage, a copy to the GPU);
 *  - a stand-in whose geometry the kernel changed (an out= it resized, t_(), as_strided_()) hands the change to its
 *    tensor, and the backend's `written_back` (CUDA: the bytes, back to the device) runs before results return.
 *
 * Ownership: a pct_standins owns its stand-in storages and tensors, the tensor-list arrays and tuples it made, and
 * borrows the device tensors and storages of the call (which outlives it). Release it with pct_standins_release.
 */
#ifndef PCT_STANDINS_H
#define PCT_STANDINS_H
#include "op.h"
#include <string.h>

typedef struct pct_standin_ops {
    int device_type;
    /* the CPU storage (new reference, resizable where the device's is) standing for device storage s, which tensor t
     * (of dtype t->dtype) views; NULL with an error */
    pct_storage *(*make)(void *ctx, pct_storage *s, const pct_tensor *t);
    /* a fresh CPU result of the kernel as a device tensor on device_index (r consumed); NULL with an error */
    pct_tensor *(*fresh_result)(void *ctx, pct_tensor *r, int device_index);
    /* after the kernel: the stand-in `host` of device storage `dev` may have been written; 0, or -1 with an error */
    int (*written_back)(void *ctx, pct_storage *dev, pct_storage *host);
} pct_standin_ops;

typedef struct pct_standin {
    pct_tensor *device;   /* the device tensor (borrowed) */
    pct_tensor *host;     /* its stand-in (owned) */
} pct_standin;

typedef struct pct_standins {
    const pct_standin_ops *ops;
    void *ctx;
    int device_index;           /* of the first device tensor seen: where fresh results go */
    int n, cap;
    pct_standin *items;         /* owned array */
    int nstorages, storages_cap;
    pct_storage **dev_storages, **host_storages; /* owned arrays; host storages owned, device ones borrowed */
    int nlists, nseqs;
    pct_tensor **lists[PCT_MAX_PARAMS]; /* tensor-list arrays made for the call (owned) */
    pct_object *seqs[PCT_MAX_PARAMS];   /* tuples made for object arguments holding device tensors (owned) */
} pct_standins;

static inline void pct_standins_init(pct_standins *s, const pct_standin_ops *ops, void *ctx)
{
    memset(s, 0, sizeof *s);
    s->ops = ops;
    s->ctx = ctx;
    s->device_index = -1;
}
void pct_standins_release(pct_standins *s);
/* The stand-in of device tensor t (made once per tensor); borrowed from s, NULL with an error. */
pct_tensor *pct_standin_of(pct_standins *s, pct_tensor *t);
/* sc (a copy of the call) with every device tensor among its arguments and out= replaced by its stand-in; -1 with an
 * error */
int pct_standins_replace_args(pct_standins *s, pct_call *sc);
/* After the kernel: geometry changes handed back and written_back run for every stand-in storage; -1 with an error. */
int pct_standins_finish(pct_standins *s);
/* The kernel's result with every tensor in it made a device tensor (r consumed; new reference or NULL). */
pct_object *pct_standins_results(pct_standins *s, pct_object *r);
/* run(cpu, sc) (cpu(sc) when run is NULL) with sc's out= entered as the call's out target (Note [out= arguments]) */
pct_object *pct_standins_run_kernel(pct_kernel_fn cpu, pct_call *sc, pct_object *(*run)(pct_kernel_fn, pct_call *));

/* Advanced indexing (index.h) on stand-ins: the CPU's index kernels with every operand of the device replaced; a new
 * reference / 0, or NULL / -1 with an error. */
pct_object *pct_standins_index_get(const pct_standin_ops *ops, void *ctx, pct_tensor *self, int nindices,
                                   pct_tensor **indices);
int pct_standins_index_put_(const pct_standin_ops *ops, void *ctx, pct_tensor *self, int nindices, pct_tensor **indices,
                            pct_tensor *values, bool accumulate);

#endif
