/* dispatch.c: the operator table as data, and the call into a backend's kernel.
 * Backends other than the CPU fill their slots at import (csrc/cuda registers its
 * kernels into pct_ops[i].kernels[PCT_CUDA]); an empty slot raises NotImplementedError. */
#include "op.h"
#include "error.h"
#include "out.h"
#include "backend.h"
#include "cuda_api.h"
#include "iter.h"

pct_op pct_ops[PCT_NUM_OPS] = {
#define PCT_OP(id, schema, variants, cpu) [PCT_OP_##id] = {#id, schema, variants, PCT_KIND_CUSTOM, 0, {cpu, NULL}, {{0}}},
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {#id, #id "(Tensor input, *, Tensor? out=None)", variants, PCT_KIND_UNARY, promo, {pct_cpu_unary_##id, NULL}, {{0}}},
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {#id, schema, variants, PCT_KIND_BINARY, promo, {pct_cpu_binary_##id, NULL}, {{0}}},
/* Note [Composite ops] (op.h): one impl in every backend's slot */
#define PCT_COMPOSITE(id, schema, variants, impl) \
    [PCT_OP_##id] = {#id, schema, variants, PCT_KIND_COMPOSITE, 0, {[PCT_CPU] = impl, [PCT_CUDA] = impl, [PCT_META] = impl}, {{0}}},
#include "ops.def"
};

pct_object *(*pct_composite_caller)(pct_call *c) = pct_dispatch;

/* torch.set_default_device / `with torch.device(d)`: where factories without tensor arguments and without device=
 * make their result (the CPU by default; set by the binding) */
pct_device_arg pct_default_device = {.none = true, .type = PCT_CPU, .index = -1};

/* the CUDA slot is filled when its library loads (Note [Lazy CUDA] in cuda_api.h) */
const pct_backend *pct_backends[PCT_NUM_BACKENDS] = {[PCT_CPU] = &pct_cpu_backend, [PCT_META] = &pct_meta_backend};

const char *pct_device_type_name(int device_type)
{
    return device_type == PCT_CUDA ? "cuda" : device_type == PCT_META ? "meta" : "cpu";
}

const pct_backend *pct_backend_of(int device_type)
{
    const pct_backend *b = device_type >= 0 && device_type < PCT_NUM_BACKENDS ? pct_backends[device_type] : NULL;
    if (b) return b;
    if (device_type != PCT_CUDA) return pct_error_str(PCT_ERR_ASSERTION, "Torch not compiled with CUDA enabled");
    const pct_cuda_api *cuda = pct_cuda(); /* loads the library: it fills pct_backends[PCT_CUDA] */
    return cuda ? cuda->backend : NULL;
}

static const char *backend_name(int b) { return b == PCT_CUDA ? "CUDA" : b == PCT_META ? "Meta" : "CPU"; }

/* The op's `device` parameter (factories, to), or -1; looked up once per op. */
static int device_param(int op)
{
    static int8_t slot[PCT_NUM_OPS]; /* 0: not looked up yet; else the parameter's index + 1, or -1 */
    if (__builtin_expect(slot[op] == 0, 0)) {
        const pct_signature *sig = &pct_ops[op].sig;
        int found = -1;
        for (int i = 0; i < sig->nparams && found < 0; i++)
            if (sig->params[i].type == PCT_ARG_DEVICE && strcmp(sig->params[i].name, "device") == 0) found = i;
        slot[op] = (int8_t)(found < 0 ? -1 : found + 1);
    }
    return slot[op] < 0 ? -1 : slot[op] - 1;
}

/* Every tensor argument on the backend's device, except 0-d CPU tensors (which join any device): else torch's error. */
static int check_one_device(const pct_call *c, int backend, int index)
{
    const pct_signature *sig = &c->op->sig;
    int expected = -1; /* torch expects the first tensor's device (a 0-d CPU tensor aside) */
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (sig->params[i].type != PCT_ARG_TENSOR || v->none) continue;
        if (v->t->device_type == PCT_CPU && v->t->ndim == 0) continue;
        if (expected < 0) expected = v->t->device_type;
        if (v->t->device_type == backend && v->t->device_index == index) continue;
        if (backend == PCT_META || v->t->device_type == PCT_META)
            pct_error(PCT_ERR_RUNTIME, "Tensor on device %s is not on the expected device %s!",
                      pct_device_type_name(v->t->device_type == expected ? backend : v->t->device_type),
                      pct_device_type_name(expected));
        else
            pct_error(PCT_ERR_RUNTIME,
                      "Expected all tensors to be on the same device, but found at least two devices, cuda:%d and cpu!",
                      index);
        return -1;
    }
    return 0;
}

/* Note [Barebones unsigned dtypes]: torch 2.13 has uint16, uint32 and uint64 with "limited support": copies,
 * views, fills, a few pointwise ops and reductions, sorting. Their enum values follow the fully supported dtypes and
 * kernels' X-macro tables (PCT_FORALL_DTYPES) have no loops for them, so one check decides for a whole custom op:
 * the dispatcher, which reads every tensor argument's device anyway, also notes whether the first tensor (torch's
 * self, whose dtype its kernels dispatch on), the out= tensor or a dtype argument is unsigned, and refuses the call
 * as torch does unless the op is listed in ops_unsigned.def. An unsigned index, mask or weight meets the kernel's
 * own argument checks, as in torch. Pointwise table ops are not refused here: they may compute in a float
 * (uint16 * 2.5), and their loop tables decide. */
static const uint8_t unsigned_ok[PCT_NUM_OPS] = {
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) [PCT_OP_##id] = 1,
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) [PCT_OP_##id] = 1,
#include "ops.def"
#define PCT_UNSIGNED_OK(id) [PCT_OP_##id] = 1,
#define PCT_UNSIGNED_INPUTS(id, name) [PCT_OP_##id] = 2,
#include "ops_unsigned.def"
};
static const char *const unsigned_refusal_name[PCT_NUM_OPS] = {
#define PCT_UNSIGNED_INPUTS(id, name) [PCT_OP_##id] = name,
#define PCT_UNSIGNED_REFUSED(id, name) [PCT_OP_##id] = name,
#include "ops_unsigned.def"
};

const char *pct_unsigned_refusal_name(int op_index) { return unsigned_refusal_name[op_index]; }

/* Note [Complex and float8 dtypes] (dtype.h): the same refusal for the complex and storage-only dtypes, from
 * ops_complex.def: 2 = any of them, 1 = complex64/complex128 only, 3 = those and complex32 (the kernel refuses it with
 * torch's error); the table's pointwise ops decide by their loops. */
static const uint8_t complex_ok[PCT_NUM_OPS] = {
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) [PCT_OP_##id] = 2,
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) [PCT_OP_##id] = 2,
#include "ops.def"
#define PCT_STORAGE_OK(id) [PCT_OP_##id] = 2,
#define PCT_COMPLEX_OK(id) [PCT_OP_##id] = 1,
#define PCT_COMPLEX32_CHECKED(id) [PCT_OP_##id] = 3,
#include "ops_complex.def"
};

/* -1 with torch's refusal where the op does not take the complex or storage-only dtype it was given, else 0. */
static int refuse_complex(const pct_call *c, int dtype)
{
    const int ok = complex_ok[c->op_index];
    if (ok == 2 || (ok == 1 && !pct_dtype_is_storage_only(dtype)) || (ok == 3 && pct_dtype_is_complex(dtype))) return 0;
    const char *name = unsigned_refusal_name[c->op_index];
    if (name) pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, pct_dtype_cpp_name[dtype]);
    else pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'", c->op->sig.name, pct_dtype_cpp_name[dtype]);
    return -1;
}

/* Note [Widened complex32]: torch's CPU kernels of a few ops (PCT_COMPLEX32_WIDENED in ops_complex.def) take
 * ComplexHalf, computing each element in complex<float>. Here such a call runs again with complex64 copies of its
 * complex32 tensor arguments. A result of its own is narrowed as torch's would be typed: complex64 to complex32,
 * float32 (abs, the norms) to float16; bool and int64 results stay. A complex32 out= or in-place target is computed
 * into its complex64 copy, which is then copied back into it (resized first, as out= is). */
static const bool complex32_widened[PCT_NUM_OPS] = {
    false,
#define PCT_COMPLEX32_WIDENED(id) [PCT_OP_##id] = true,
#include "ops_complex.def"
};

/* set while a widened call runs: a complex32 that is not a tensor argument (a dtype= argument) then meets
 * refuse_complex instead of widening again */
static _Thread_local bool widening_complex32;

static pct_object *dispatch_widened_complex32(pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    pct_tensor *orig[PCT_MAX_PARAMS] = {0}, *out = c->out, *wide_out = NULL;
    pct_object *r = NULL;
    int i;
    widening_complex32 = true;
    for (i = 0; i < sig->nparams; i++) {
        pct_value *v = &c->v[i];
        if (v->none || sig->params[i].type != PCT_ARG_TENSOR || v->t->dtype != PCT_COMPLEX32) continue;
        pct_tensor *wide = pct_to_dtype(v->t, PCT_COMPLEX64, false);
        if (!wide) goto restore;
        orig[i] = v->t;
        v->t = wide;
        if (out == orig[i]) wide_out = wide; /* the in-place target, or the out= slot */
    }
    if (out && out->dtype == PCT_COMPLEX32 && !wide_out) {
        if (!(wide_out = pct_to_dtype(out, PCT_COMPLEX64, false))) goto restore;
        c->out = wide_out;
        r = pct_dispatch(c);
        c->out = out;
        PCT_DECREF(wide_out); /* r holds it where the call succeeded */
    } else {
        if (wide_out) c->out = wide_out;
        r = pct_dispatch(c);
        c->out = out;
    }
restore:
    widening_complex32 = false;
    for (i = 0; i < sig->nparams; i++) {
        if (!orig[i]) continue;
        PCT_DECREF(c->v[i].t);
        c->v[i].t = orig[i];
    }
    if (!r || !pct_is_tensor(r)) return r;
    pct_tensor *t = (pct_tensor *)r;
    if (out && out->dtype == PCT_COMPLEX32) { /* the complex64 target's values into the caller's */
        if ((out->ndim != t->ndim || memcmp(out->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0) &&
            pct_out_resize_quiet(out, t->ndim, t->sizes) < 0) {
            PCT_DECREF(r);
            return NULL;
        }
        const int rc = pct_copy_(out, t);
        PCT_DECREF(r);
        if (rc < 0) return NULL;
        PCT_INCREF(out);
        return (pct_object *)out;
    }
    const int narrow = out ? -1 : t->dtype == PCT_COMPLEX64 ? PCT_COMPLEX32 : t->dtype == PCT_FLOAT32 ? PCT_FLOAT16 : -1;
    if (narrow < 0) return r;
    pct_tensor *n = pct_to_dtype(t, narrow, false);
    PCT_DECREF(r);
    return (pct_object *)n;
}

/* Note [Result tuples]: a kernel of several results returns a plain tuple of tensors (pct_result_tuple) and never
 * names a Python type. Which ops give torch's named tuples (torch.return_types.max with .values and .indices) is
 * data, in ops_returns.def; the binding reads it here and makes the named tuple, <name>_out when out= was given, so
 * kernels of every backend return the same plain results and what Python sees is built in csrc/python alone. */
static const pct_op_returns op_returns[PCT_NUM_OPS] = {
#define PCT_RETURNS(id, ...) \
    [PCT_OP_##id] = {(int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), {__VA_ARGS__}},
#include "ops_returns.def"
#undef PCT_RETURNS
};

const pct_op_returns *pct_op_returns_of(int op_index) { return op_returns[op_index].n ? &op_returns[op_index] : NULL; }

/* The unsigned dtype of the first argument that has one (results only: a dtype= argument, out= or the in-place
 * target), or -1. */
static int unsigned_argument(const pct_call *c, bool results_only)
{
    const pct_signature *sig = &c->op->sig;
    if (results_only && c->out && pct_dtype_is_barebones(c->out->dtype)) return c->out->dtype;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        const int type = sig->params[i].type;
        if (v->none || (results_only && type != PCT_ARG_DTYPE && i != sig->out_index)) continue;
        int d = type == PCT_ARG_TENSOR ? v->t->dtype
              : type == PCT_ARG_DTYPE ? v->dtype
              : type == PCT_ARG_TENSORLIST && v->n > 0 ? v->items[0]->dtype : -1;
        if (pct_dtype_is_barebones(d)) return d;
    }
    return -1;
}

/* -1 with torch's refusal where the op does not take the unsigned dtypes it was given, else 0. */
static int refuse_unsigned(const pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    int dtype = unsigned_argument(c, unsigned_ok[c->op_index] == 2);
    if (dtype < 0) return 0; /* inputs only: none of the results is unsigned */
    const char *name = unsigned_refusal_name[c->op_index];
    switch (c->op_index) { /* refusals that depend on the arguments */
    case PCT_OP_softmax: case PCT_OP_log_softmax: { /* a float dtype= converts the input first */
        if (!c->v[2].none && !pct_dtype_is_barebones(c->v[2].dtype)) return 0;
        const int nd = c->v[0].t->ndim; /* torch's kernel for the last dim, or the general one */
        const bool last = nd <= 1 || c->v[1].i == -1 || c->v[1].i == nd - 1;
        if (!last) name = c->op_index == PCT_OP_softmax ? "softmax_kernel_impl" : "log_softmax_kernel_impl";
        break;
    }
    case PCT_OP_count_nonzero: /* torch counts along dims as (x != 0).sum(dims); only the whole count refuses */
        if (!c->v[1].none) return 0;
        break;
    case PCT_OP_rand_like: case PCT_OP_randn_like: { /* a float dtype= makes a float tensor */
        const pct_value *d = pct_arg(c, "dtype");
        if (!d->none && !pct_dtype_is_barebones(d->dtype)) return 0;
        break;
    }
    case PCT_OP_max_dim: case PCT_OP_min_dim: case PCT_OP_mode: case PCT_OP_kthvalue: case PCT_OP_cummax:
    case PCT_OP_cummin: /* torch answers a 0-d or empty input without its kernel */
        if (c->v[0].t->ndim == 0 || c->v[0].t->numel == 0) return 0;
        break;
    case PCT_OP_max_other: case PCT_OP_min_other: /* with a float other: maximum/minimum in that float */
        if (pct_dtype_is_floating(c->v[1].t->dtype)) return 0;
        break;
    case PCT_OP_cumsum: case PCT_OP_cumprod: /* a 0-d or empty input is a copy in torch */
        if (c->v[0].t->ndim == 0 || c->v[0].t->numel == 0) return 0;
        break;
    case PCT_OP_topk: /* a 0-d one only */
        if (c->v[0].t->ndim == 0) return 0;
        break;
    case PCT_OP_cross_entropy_loss: /* an unsigned target meets the kernel's own target check */
        if (!pct_dtype_is_barebones(c->v[0].t->dtype)) return 0;
        break;
    case PCT_OP_pad: { /* constant and circular padding copy; reflect and replicate have kernels without them */
        const char *mode = c->v[2].str;
        if (strcmp(mode, "reflect") && strcmp(mode, "replicate")) return 0;
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_pad%dd\" not implemented for '%s'",
                     mode[2] == 'f' ? "reflection" : "replication", c->v[1].n / 2, pct_dtype_cpp_name[dtype]);
        return -1;
    }
    case PCT_OP_div_mode: /* rounding_mode=None is a true division, in float */
        if (c->v[2].none) return 0;
        name = strcmp(c->v[2].str, "trunc") == 0 ? "div_trunc_cpu" : "div_floor_cpu";
        break;
    case PCT_OP_scatter_reduce: { /* sum and prod share the plain scatter's loop */
        const char *r = c->v[4].str;
        if (strcmp(r, "sum") && strcmp(r, "prod")) {
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"scatter_gather_tensor_cpu_reduce_%s\" not implemented for '%s'", r,
                         pct_dtype_cpp_name[dtype]);
            return -1;
        }
        break;
    }
    case PCT_OP_clamp: case PCT_OP_clip:
        if (c->v[1].none && c->v[2].none) return 0; /* the kernel's "At least one of 'min' or 'max'" comes first */
        if ((!c->v[1].none && c->v[1].s.kind == PCT_SCALAR_FLOAT) || (!c->v[2].none && c->v[2].s.kind == PCT_SCALAR_FLOAT))
            return 0; /* a float bound: computed in the default float, as in torch */
        if (c->v[2].none) name = "clamp_min_scalar_cpu";
        else if (c->v[1].none) name = "clamp_max_scalar_cpu";
        break;
    default: break;
    }
    if (name) pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, pct_dtype_cpp_name[dtype]);
    else pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'", sig->name, pct_dtype_cpp_name[dtype]);
    return -1;
}

pct_object *pct_dispatch(pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    int backend = -1, index = -1;
    bool has_unsigned = false; /* Note [Barebones unsigned dtypes] */
    int complex_dtype = -1;    /* Note [Complex and float8 dtypes]: the first complex or storage-only dtype */
    /* The backend is that of the tensor arguments; 0-d CPU tensors may join any device. */
    for (int i = 0; i < sig->nparams; i++) {
        const pct_param *p = &sig->params[i];
        const pct_value *v = &c->v[i];
        const pct_tensor *t = NULL;
        if (v->none) continue;
        if (p->type == PCT_ARG_TENSOR) t = v->t;
        else if (p->type == PCT_ARG_TENSORLIST && v->n > 0) t = v->items[0];
        else if (p->type == PCT_ARG_DTYPE) {
            has_unsigned |= pct_dtype_is_barebones(v->dtype);
            if (complex_dtype < 0 && pct_dtype_is_limited(v->dtype) && !pct_dtype_is_barebones(v->dtype)) complex_dtype = v->dtype;
        }
        if (!t) continue;
        if (backend < 0) has_unsigned |= pct_dtype_is_barebones(t->dtype); /* the first tensor: torch's self */
        /* any tensor argument: a kernel's own tables have no rows for these dtypes */
        if (complex_dtype < 0 && pct_dtype_is_limited(t->dtype) && !pct_dtype_is_barebones(t->dtype)) complex_dtype = t->dtype;
        if (backend < 0 || (backend == PCT_CPU && t->device_type != PCT_CPU)) {
            backend = t->device_type;
            index = t->device_index;
        }
    }
    if (c->out) has_unsigned |= pct_dtype_is_barebones(c->out->dtype); /* out= or the in-place target */
    if (has_unsigned && unsigned_ok[c->op_index] != 1 && refuse_unsigned(c) < 0) return NULL;
    if (c->out && complex_dtype < 0 && pct_dtype_is_limited(c->out->dtype) && !pct_dtype_is_barebones(c->out->dtype))
        complex_dtype = c->out->dtype;
    if (complex_dtype == PCT_COMPLEX32 && complex32_widened[c->op_index] && !widening_complex32)
        return dispatch_widened_complex32(c); /* Note [Widened complex32] */
    if (complex_dtype >= 0 && refuse_complex(c, complex_dtype) < 0) return NULL;
    /* Note [Backends]: a factory's device= argument picks the backend (empty(..., device="meta"), and
     * empty_like(meta_tensor, device="cpu") too, as torch's); to(device) of a meta tensor stays on the meta backend,
     * which refuses to copy out of it */
    const int dev_slot = device_param(c->op_index);
    /* a factory (no tensor argument) given no device= takes the default device, as torch's device mode does */
    if (dev_slot >= 0 && c->v[dev_slot].none && backend < 0 && !pct_default_device.none) {
        c->v[dev_slot].none = 0;
        c->v[dev_slot].dev.type = pct_default_device.type;
        c->v[dev_slot].dev.index = pct_default_device.index;
    }
    if (dev_slot >= 0 && !c->v[dev_slot].none) {
        const int want = c->v[dev_slot].dev.type;
        /* a *_like / new_* factory reads only the shape of its meta input; a meta out= keeps the meta backend */
        if (want == PCT_META || (want == PCT_CPU && backend == PCT_META && c->op_index != PCT_OP_to_device &&
                                 !(c->out && c->out->device_type == PCT_META))) {
            backend = want;
            index = -1;
        } else if (want == PCT_CUDA) {
            if (c->v[dev_slot].dev.index == PCT_DEVICE_NEGATIVE_INDEX)
                return pct_error_str(PCT_ERR_RUNTIME, "Device index must not be negative");
            if (!pct_backend_of(PCT_CUDA)) return NULL; /* not built: torch's "not compiled with CUDA" */
            backend = want;
            index = c->v[dev_slot].dev.index;
        }
    }
    if (backend < 0) backend = PCT_CPU;
    /* the ops that move data between devices take tensors of two (Note [Device-neutral copies]) */
    const bool moves = c->op_index == PCT_OP_copy_ || c->op_index == PCT_OP_to_device || c->op_index == PCT_OP_to_other ||
                       c->op_index == PCT_OP_type_as ||
                       (dev_slot >= 0 && !c->v[dev_slot].none); /* zeros_like(x, device=...): x gives a shape */
    if (backend != PCT_CPU && !moves && check_one_device(c, backend, index) < 0)
        return NULL;
    pct_kernel_fn k = c->op->kernels[backend];
    if (!k && pct_backends[backend]) k = pct_backends[backend]->fallback;
    if (!k) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "Could not run 'aten::%s' with arguments from the '%s' backend.",
                     sig->name, backend_name(backend));
        return NULL;
    }
    /* in-place and out= results count as writes: one version bump unless the kernel made its own */
    pct_tensor *target = c->out;
    if (target && target->storage->readonly && pct_check_writable(target) < 0) return NULL;
    /* method-only mutators (copy_, fill_, zero_, the random fills) write their first argument */
    if (sig->nparams && sig->params[0].type == PCT_ARG_TENSOR && !c->v[0].none && c->v[0].t->storage->readonly &&
        sig->name[strlen(sig->name) - 1] == '_' && pct_check_writable(c->v[0].t) < 0)
        return NULL;
    long before = target ? atomic_load(&target->version->value) : 0;
    pct_object *r;
    if (sig->out_index >= 0 && !c->v[sig->out_index].none) {
        const pct_call *prev;
        if (pct_out_enter(c, &prev) < 0) return NULL; /* Note [out= arguments] */
        r = k(c);
        pct_out_leave(prev);
    } else {
        r = k(c);
    }
    if (r && target && atomic_load(&target->version->value) == before) pct_tensor_bump_version(target);
    return r;
}

const pct_value *pct_arg(const pct_call *c, const char *name)
{
    static const pct_value none = {.none = 1};
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++)
        if (strcmp(sig->params[i].name, name) == 0) return &c->v[i];
    return &none;
}

void pct_call_init(pct_call *c, int op_index)
{
    c->op = &pct_ops[op_index];
    c->op_index = op_index;
    c->out = NULL;
    c->inplace = false;
    c->nowned = 0;
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_param *p = &sig->params[i];
        pct_value *v = &c->v[i];
        v->none = p->has_default ? p->def.none : 1;
        v->s = p->def.s; /* the largest union member: copies whichever is set */
        v->n = p->def.n;
        if (p->type == PCT_ARG_INTLIST) memcpy(v->list, p->def.list, sizeof(int64_t) * (size_t)p->def.n);
    }
}
