/* dispatch.c: the operator table as data, and the call into a backend's kernel.
 * Backends other than the CPU fill their slots at import (csrc/cuda registers its
 * kernels into pct_ops[i].kernels[PCT_CUDA]); an empty slot raises NotImplementedError. */
#include "op.h"
#include "error.h"
#include "out.h"
#include "../python/pyobjects.h"

pct_op pct_ops[PCT_NUM_OPS] = {
#define PCT_OP(id, schema, variants, cpu) [PCT_OP_##id] = {#id, schema, variants, PCT_KIND_CUSTOM, 0, {cpu, NULL}, {{0}}},
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {#id, #id "(Tensor input, *, Tensor? out=None)", variants, PCT_KIND_UNARY, promo, {pct_cpu_unary, NULL}, {{0}}},
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {#id, schema, variants, PCT_KIND_BINARY, promo, {pct_cpu_binary, NULL}, {{0}}},
#include "ops.def"
};

int pct_ops_init(void)
{
    for (int i = 0; i < PCT_NUM_OPS; i++)
        if (pct_signature_parse(pct_ops[i].schema, &pct_ops[i].sig) < 0) return -1;
    return 0;
}

static const char *backend_name(int b) { return b == PCT_CUDA ? "CUDA" : "CPU"; }

PyObject *pct_dispatch(pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    int backend = -1, index = -1;
    /* The backend is that of the tensor arguments; 0-d CPU tensors may join any device. */
    for (int i = 0; i < sig->nparams; i++) {
        const pct_param *p = &sig->params[i];
        const pct_value *v = &c->v[i];
        const pct_tensor *t = NULL;
        if (v->none) continue;
        if (p->type == PCT_ARG_TENSOR) t = v->t;
        else if (p->type == PCT_ARG_TENSORLIST && PySequence_Fast_GET_SIZE(v->obj) > 0)
            t = (const pct_tensor *)PySequence_Fast_ITEMS(v->obj)[0];
        if (t && (backend < 0 || (backend == PCT_CPU && t->device_type != PCT_CPU))) {
            backend = t->device_type;
            index = t->device_index;
        }
    }
    if (backend < 0) backend = PCT_CPU; /* factories: the device argument is the kernel's business */
    if (backend != PCT_CPU) {
        for (int i = 0; i < sig->nparams; i++) {
            const pct_value *v = &c->v[i];
            if (sig->params[i].type != PCT_ARG_TENSOR || v->none) continue;
            if (v->t->device_type == PCT_CPU && v->t->ndim == 0) continue;
            if (v->t->device_type != backend || v->t->device_index != index) {
                PyErr_Format(PyExc_RuntimeError,
                             "Expected all tensors to be on the same device, but found at least two devices, cuda:%d and cpu!",
                             index);
                return NULL;
            }
        }
    }
    pct_kernel_fn k = c->op->kernels[backend];
    if (!k) {
        PyErr_Format(PyExc_NotImplementedError, "Could not run 'aten::%s' with arguments from the '%s' backend.",
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
    PyObject *r;
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

PyObject *pct_py_op_table(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    static const char *const kinds[] = {"custom", "unary", "binary"};
    static const char *const promos[] = {"default", "int_to_float", "compare", "bool_out"};
    PyObject *list = PyList_New(PCT_NUM_OPS);
    for (int i = 0; list && i < PCT_NUM_OPS; i++) {
        const pct_op *op = &pct_ops[i];
        char variants[4] = {0};
        int n = 0;
        if (op->variants & PCT_V_FUNC) variants[n++] = 'F';
        if (op->variants & PCT_V_METHOD) variants[n++] = 'M';
        if (op->variants & PCT_V_INPLACE) variants[n++] = 'I';
        PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", op->id, "name", op->sig.name, "schema", op->schema,
                                    "variants", variants, "kind", kinds[op->kind], "promotion", promos[op->promotion]);
        if (!d) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}
