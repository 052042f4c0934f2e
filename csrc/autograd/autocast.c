/* autocast.c: CPU and CUDA autocast (torch.autocast("cpu" | "cuda")), as a step of the hooked op call
 * (Note [Dispatch hooks] in profiler.h). A call on CUDA tensors takes the CUDA state and list (cuda_policy below),
 * any other the CPU's.
 *
 * Each op of the table has a policy byte (the one list below, by op id), following
 * torch's CPU autocast lists:
 *   LOWER    run in the autocast dtype (bfloat16 by default): GEMMs, convolution, ...
 *   FP32     run in float32: prod, trace, the cross-entropy kernel, reflection/replication pads
 *   PROMOTE  run in the widest floating dtype of the inputs: cat, stack, index_copy
 * A floating tensor argument that is not float64 (and not a Python number) is cast with
 * the `to` op itself, so autograd records the cast and gradients flow back in the
 * original dtype. In-place and out= calls are not eligible, as in torch. The state is
 * thread-local like torch's. Casts of float32 leaves requiring grad to the lower dtype
 * are cached until the outermost autocast region exits (the weight cache).
 * Composite Python functions in torch's lists (linear, the losses, sdpa...) are wrapped
 * in pyctorch/amp/autocast_mode.py with the same policies.
 */
#include "profiler.h"
#include "python_values.h"
#include <stdlib.h>
#include <string.h>

enum { AC_NONE, AC_LOWER, AC_FP32, AC_PROMOTE, AC_PAD, AC_EINSUM, AC_FP32_UNLESS_DTYPE };

static const uint8_t policy[PCT_NUM_OPS] = {
    [PCT_OP_mm] = AC_LOWER, [PCT_OP_bmm] = AC_LOWER, [PCT_OP_addmm] = AC_LOWER, [PCT_OP_baddbmm] = AC_LOWER,
    [PCT_OP_matmul] = AC_LOWER, [PCT_OP_convolution] = AC_LOWER, [PCT_OP_tensordot] = AC_LOWER,
    [PCT_OP_inner] = AC_LOWER,
    [PCT_OP_einsum] = AC_EINSUM,      /* torch's einsum contracts pairs with bmm (autocast); one operand: a sum */
    [PCT_OP_prod] = AC_FP32, [PCT_OP_trace] = AC_FP32, [PCT_OP_cross_entropy_loss] = AC_FP32,
    [PCT_OP_pad] = AC_PAD,            /* reflection_pad1d/2d and replication_pad1d/2d/3d are fp32 ops */
    [PCT_OP_cat] = AC_PROMOTE, [PCT_OP_concat] = AC_PROMOTE, [PCT_OP_concatenate] = AC_PROMOTE,
    [PCT_OP_concatenate_axis] = AC_PROMOTE, [PCT_OP_stack] = AC_PROMOTE, [PCT_OP_hstack] = AC_PROMOTE,
    [PCT_OP_vstack] = AC_PROMOTE, [PCT_OP_dstack] = AC_PROMOTE, [PCT_OP_index_copy] = AC_PROMOTE,
};

/* torch's CUDA autocast lists, as far as they name ops of the table (torch.autocast("cuda"); the Python composites
 * among them are wrapped as for the CPU): GEMMs and convolution in the lower dtype; transcendental functions, the
 * norms, logsumexp and the losses in float32; the reductions that take a dtype= in float32 unless one is given
 * (torch's fp32_set_opt_dtype); cat, stack and the mixed-input ops in the widest input dtype. */
static const uint8_t cuda_policy[PCT_NUM_OPS] = {
    [PCT_OP_mm] = AC_LOWER, [PCT_OP_bmm] = AC_LOWER, [PCT_OP_addmm] = AC_LOWER, [PCT_OP_baddbmm] = AC_LOWER,
    [PCT_OP_matmul] = AC_LOWER, [PCT_OP_convolution] = AC_LOWER, [PCT_OP_mv] = AC_LOWER, [PCT_OP_addmv] = AC_LOWER,
    [PCT_OP_einsum] = AC_LOWER,
    [PCT_OP_acos] = AC_FP32, [PCT_OP_asin] = AC_FP32, [PCT_OP_cosh] = AC_FP32, [PCT_OP_erfinv] = AC_FP32,
    [PCT_OP_exp] = AC_FP32, [PCT_OP_expm1] = AC_FP32, [PCT_OP_log] = AC_FP32, [PCT_OP_log10] = AC_FP32,
    [PCT_OP_log2] = AC_FP32, [PCT_OP_log1p] = AC_FP32, [PCT_OP_reciprocal] = AC_FP32, [PCT_OP_rsqrt] = AC_FP32,
    [PCT_OP_sinh] = AC_FP32, [PCT_OP_tan] = AC_FP32, [PCT_OP_pow] = AC_FP32, [PCT_OP_softplus] = AC_FP32,
    [PCT_OP_native_layer_norm] = AC_FP32, [PCT_OP_logsumexp] = AC_FP32, [PCT_OP_cross_entropy_loss] = AC_FP32,
    [PCT_OP_norm] = AC_FP32, [PCT_OP_upsample_nearest1d] = AC_FP32, [PCT_OP_upsample_linear1d] = AC_FP32,
    [PCT_OP_upsample_bilinear2d] = AC_FP32,
    [PCT_OP_prod] = AC_FP32_UNLESS_DTYPE, [PCT_OP_softmax] = AC_FP32_UNLESS_DTYPE,
    [PCT_OP_log_softmax] = AC_FP32_UNLESS_DTYPE, [PCT_OP_cumprod] = AC_FP32_UNLESS_DTYPE,
    [PCT_OP_cumsum] = AC_FP32_UNLESS_DTYPE, [PCT_OP_linalg_vector_norm] = AC_FP32_UNLESS_DTYPE,
    [PCT_OP_linalg_matrix_norm] = AC_FP32_UNLESS_DTYPE, [PCT_OP_sum] = AC_FP32_UNLESS_DTYPE,
    [PCT_OP_addcdiv] = AC_PROMOTE, [PCT_OP_addcmul] = AC_PROMOTE, [PCT_OP_atan2] = AC_PROMOTE, [PCT_OP_dot] = AC_PROMOTE,
    [PCT_OP_vdot] = AC_PROMOTE, [PCT_OP_index_put] = AC_PROMOTE, [PCT_OP_scatter_add] = AC_PROMOTE,
    [PCT_OP_tensordot] = AC_PROMOTE, [PCT_OP_cat] = AC_PROMOTE, [PCT_OP_stack] = AC_PROMOTE,
};

/* torch's autocast device types and their default lower-precision dtypes */
#define AC_NDEV 9
enum { DEV_CPU, DEV_CUDA };
static const char *const dev_names[AC_NDEV] = {"cpu", "cuda", "xpu", "ipu", "hpu", "xla", "mps", "mtia", "maia"};
static const int8_t dev_default[AC_NDEV] = {PCT_BFLOAT16, PCT_FLOAT16, PCT_FLOAT16, PCT_FLOAT16, PCT_BFLOAT16,
                                            PCT_BFLOAT16, PCT_FLOAT16, PCT_FLOAT16, PCT_BFLOAT16};
/* device types c10::Device parses but autocast does not know */
static const char *const other_devices[] = {"mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "lazy",
                                            "vulkan", "meta", "privateuseone"};

typedef struct cache_entry { PyObject *src, *cast; int dtype; } cache_entry;

typedef struct ac_state {
    bool init;
    bool enabled[AC_NDEV];
    int8_t dtype[AC_NDEV];
    bool cache_enabled;
    int nesting;
    cache_entry *cache;
    int ncache, capcache;
} ac_state;

static _Thread_local ac_state S;
static int active_threads; /* threads with CPU or CUDA autocast on, counted once per device (GIL-protected) */

static ac_state *state(void)
{
    if (!S.init) {
        S.init = true;
        memcpy(S.dtype, dev_default, sizeof S.dtype);
        S.cache_enabled = true;
    }
    return &S;
}

/* CPU or CUDA autocast on or off in this thread; the dispatch hook runs while any thread has one on. */
static void set_hooked_enabled(int d, bool on)
{
    ac_state *s = state();
    if (s->enabled[d] == on) return;
    s->enabled[d] = on;
    active_threads += on ? 1 : -1;
    if (active_threads > 0) pct_dispatch_hooks |= PCT_HOOK_AUTOCAST;
    else pct_dispatch_hooks &= ~PCT_HOOK_AUTOCAST;
}

/* ---- casting ---- */

/* the torch device type an autocast index stands for */
static int device_type_of(int d) { return d == DEV_CUDA ? PCT_CUDA : PCT_CPU; }

/* A floating tensor of the autocast device d (not float64, not a Python number) is cast. */
static bool eligible_on(const pct_tensor *t, int d)
{
    return t->device_type == device_type_of(d) && pct_dtype_is_floating(t->dtype) && t->dtype != PCT_FLOAT64 &&
           !(t->flags & PCT_FLAG_WRAPPED_NUMBER);
}


static void cache_clear(ac_state *s)
{
    for (int i = 0; i < s->ncache; i++) {
        Py_DECREF(s->cache[i].src);
        Py_DECREF(s->cache[i].cast);
    }
    free(s->cache);
    s->cache = NULL;
    s->ncache = s->capcache = 0;
}

/* t cast to dtype through the `to` op (new reference). */
static PyObject *cast_to(ac_state *s, pct_tensor *t, int dtype)
{
    const int d = t->device_type == PCT_CUDA ? DEV_CUDA : DEV_CPU;
    bool cacheable = s->cache_enabled && dtype == s->dtype[d] && t->dtype == PCT_FLOAT32 &&
                     pct_tensor_requires_grad(t) && !t->grad_fn && !t->base;
    if (cacheable)
        for (int i = 0; i < s->ncache; i++)
            if (s->cache[i].src == (PyObject *)t && s->cache[i].dtype == dtype) return Py_NewRef(s->cache[i].cast);
    PyObject *r = pct_op_cast(t, dtype);
    if (r && cacheable) {
        if (s->ncache == s->capcache) {
            int cap = s->capcache ? 2 * s->capcache : 16;
            cache_entry *e = realloc(s->cache, (size_t)cap * sizeof *e);
            if (!e) return r; /* uncached: still correct */
            s->cache = e;
            s->capcache = cap;
        }
        s->cache[s->ncache++] = (cache_entry){Py_NewRef((PyObject *)t), Py_NewRef(r), dtype};
    }
    return r;
}

/* The widest floating dtype among the eligible inputs, starting from the lower dtype. */
static int promote_step(int cur, const pct_tensor *t, int d)
{
    if (!eligible_on(t, d) || t->dtype == cur) return cur;
    if (cur == PCT_FLOAT32 || t->dtype == PCT_FLOAT32) return PCT_FLOAT32;
    PyErr_SetString(PyExc_RuntimeError, "Unexpected floating ScalarType in at::autocast::prioritize");
    return -1;
}

static const pct_value *param(const pct_call *c, const char *name)
{
    return pct_arg(c, name);
}

/* The dtype this call runs in under autocast, or -1 (no casting) / -2 (error). */
static int target_dtype(const pct_call *c, int pol, int lower, int d)
{
    const pct_signature *sig = &c->op->sig;
    switch (pol) {
    case AC_LOWER: return lower;
    case AC_FP32: return PCT_FLOAT32;
    case AC_FP32_UNLESS_DTYPE: return param(c, "dtype")->none ? PCT_FLOAT32 : -1;
    case AC_EINSUM: {
        const pct_value *v = param(c, "tensors");
        return !v->none && PySequence_Fast_GET_SIZE(v->obj) >= 2 ? lower : -1;
    }
    case AC_PAD: {
        const pct_value *mode = param(c, "mode"), *pad = param(c, "pad");
        const char *m = mode->none ? "constant" : PyUnicode_AsUTF8(mode->obj);
        if (!m) return -2;
        if (strcmp(m, "reflect") == 0) return pad->n <= 4 ? PCT_FLOAT32 : -1;
        if (strcmp(m, "replicate") == 0) return PCT_FLOAT32;
        return -1;
    }
    case AC_PROMOTE: {
        int cur = lower;
        for (int i = 0; i < sig->nparams && cur >= 0; i++) {
            const pct_value *v = &c->v[i];
            if (v->none || i == sig->out_index) continue;
            if (sig->params[i].type == PCT_ARG_TENSOR) cur = promote_step(cur, v->t, d);
            else if (sig->params[i].type == PCT_ARG_TENSORLIST)
                for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(v->obj) && cur >= 0; k++)
                    cur = promote_step(cur, (const pct_tensor *)PySequence_Fast_ITEMS(v->obj)[k], d);
        }
        return cur < 0 ? -2 : cur;
    }
    }
    return -1;
}

/* The autocast device of a call: CUDA when its first tensor (or tensor list's first tensor) is, else the CPU. */
static int call_device(const pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (v->none) continue;
        const pct_tensor *t = sig->params[i].type == PCT_ARG_TENSOR ? v->t
                              : sig->params[i].type == PCT_ARG_TENSORLIST && PySequence_Fast_GET_SIZE(v->obj)
                                  ? (const pct_tensor *)PySequence_Fast_ITEMS(v->obj)[0] : NULL;
        if (t) return t->device_type == PCT_CUDA ? DEV_CUDA : DEV_CPU;
    }
    return DEV_CPU;
}

int pct_autocast_apply(pct_call *c, PyObject **held, int *nheld)
{
    if (c->inplace || c->out) return 0;
    ac_state *s = state();
    const int d = call_device(c);
    int pol = d == DEV_CUDA ? cuda_policy[c->op_index] : policy[c->op_index];
    if (!pol || !s->enabled[d]) return 0;
    int dtype = target_dtype(c, pol, s->dtype[d], d);
    if (dtype == -2) return -1;
    if (dtype < 0) return 0;
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        pct_value *v = &c->v[i];
        if (v->none || i == sig->out_index) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR) {
            if (!eligible_on(v->t, d) || v->t->dtype == dtype) continue;
            PyObject *r = cast_to(s, v->t, dtype);
            if (!r) return -1;
            held[(*nheld)++] = r;
            v->t = (pct_tensor *)r;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST) {
            Py_ssize_t n = PySequence_Fast_GET_SIZE(v->obj);
            PyObject **items = PySequence_Fast_ITEMS(v->obj);
            bool any = false;
            for (Py_ssize_t k = 0; k < n && !any; k++) {
                const pct_tensor *t = (const pct_tensor *)items[k];
                any = eligible_on(t, d) && t->dtype != dtype;
            }
            if (!any) continue;
            PyObject *list = PyList_New(n);
            if (!list) return -1;
            held[(*nheld)++] = list;
            for (Py_ssize_t k = 0; k < n; k++) {
                pct_tensor *t = (pct_tensor *)items[k];
                PyObject *r = eligible_on(t, d) && t->dtype != dtype ? cast_to(s, t, dtype) : Py_NewRef((PyObject *)t);
                if (!r) return -1;
                PyList_SET_ITEM(list, k, r);
            }
            pct_value_set_tensorlist(v, list);
        }
    }
    return 0;
}

/* ---- Python entry points ---- */

/* The autocast index of a device string ("cpu", "cuda:0"); -1 for a device type autocast
 * does not know (is_autocast_available is False); -2 with RuntimeError when unparsable. */
static int device_index(PyObject *o)
{
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "device_type must be str, not %s", Py_TYPE(o)->tp_name);
        return -2;
    }
    size_t n = strcspn(s, ":");
    for (int i = 0; i < AC_NDEV; i++)
        if (strlen(dev_names[i]) == n && strncmp(s, dev_names[i], n) == 0) return i;
    for (size_t i = 0; i < sizeof other_devices / sizeof *other_devices; i++)
        if (strlen(other_devices[i]) == n && strncmp(s, other_devices[i], n) == 0) return -1;
    PyErr_Format(PyExc_RuntimeError,
                 "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
                 "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: %s", s);
    return -2;
}

static int known_device(PyObject *o)
{
    int d = device_index(o);
    if (d == -1) PyErr_SetString(PyExc_RuntimeError, "unsupported scalarType");
    return d < 0 ? -1 : d;
}

static PyObject *dtype_obj(int d) { return Py_NewRef(pct_python_values.dtype_objects[d]); }

static PyObject *py_is_available(PyObject *m, PyObject *dev)
{
    (void)m;
    int d = device_index(dev);
    if (d == -2) return NULL;
    return PyBool_FromLong(d >= 0);
}

/* is_autocast_enabled() (CUDA) / is_autocast_enabled(device_type) */
static PyObject *py_is_enabled(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs > 1) { PyErr_SetString(PyExc_TypeError, "is_autocast_enabled() takes at most 1 argument"); return NULL; }
    int d = nargs ? known_device(args[0]) : DEV_CUDA;
    if (d < 0) return NULL;
    return PyBool_FromLong(state()->enabled[d]);
}

static int set_enabled(int d, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0) return -1;
    if (d == DEV_CPU || d == DEV_CUDA) set_hooked_enabled(d, on);
    else state()->enabled[d] = on;
    return 0;
}

/* set_autocast_enabled(enabled) (CUDA) / set_autocast_enabled(device_type, enabled) */
static PyObject *py_set_enabled(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs < 1 || nargs > 2) { PyErr_SetString(PyExc_TypeError, "set_autocast_enabled() takes 1 or 2 arguments"); return NULL; }
    int d = nargs == 2 ? known_device(args[0]) : DEV_CUDA;
    if (d < 0 || set_enabled(d, args[nargs - 1]) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_get_dtype(PyObject *m, PyObject *dev)
{
    (void)m;
    int d = known_device(dev);
    return d < 0 ? NULL : dtype_obj(state()->dtype[d]);
}

static PyObject *py_set_dtype(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "set_autocast_dtype() takes 2 arguments"); return NULL; }
    int d = known_device(args[0]);
    if (d < 0) return NULL;
    const int dtype = pct_python_values.dtype_of(args[1]);
    if (dtype < 0) {
        PyErr_Format(PyExc_TypeError, "set_autocast_dtype(): argument 'dtype' must be torch.dtype, not %s",
                     Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    state()->dtype[d] = (int8_t)dtype;
    Py_RETURN_NONE;
}

static int deprecated(const char *old, const char *new_)
{
    return PyErr_WarnFormat(PyExc_DeprecationWarning, 1, "torch.%s() is deprecated. Please use torch.%s instead.", old,
                            new_);
}

static PyObject *py_is_cpu_enabled(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')") < 0) return NULL;
    return PyBool_FromLong(state()->enabled[DEV_CPU]);
}

static PyObject *py_set_cpu_enabled(PyObject *m, PyObject *flag)
{
    (void)m;
    if (deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)") < 0) return NULL;
    if (set_enabled(DEV_CPU, flag) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_get_cpu_dtype(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')") < 0) return NULL;
    return dtype_obj(state()->dtype[DEV_CPU]);
}

static PyObject *py_get_gpu_dtype(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')") < 0) return NULL;
    return dtype_obj(state()->dtype[DEV_CUDA]);
}

static PyObject *set_dev_dtype(int d, PyObject *dt)
{
    const int dtype = pct_python_values.dtype_of(dt);
    if (dtype < 0) {
        PyErr_Format(PyExc_TypeError, "expected torch.dtype, not %s", Py_TYPE(dt)->tp_name);
        return NULL;
    }
    state()->dtype[d] = (int8_t)dtype;
    Py_RETURN_NONE;
}

static PyObject *py_set_cpu_dtype(PyObject *m, PyObject *dt)
{
    (void)m;
    if (deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)") < 0) return NULL;
    return set_dev_dtype(DEV_CPU, dt);
}

static PyObject *py_set_gpu_dtype(PyObject *m, PyObject *dt)
{
    (void)m;
    if (deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)") < 0) return NULL;
    return set_dev_dtype(DEV_CUDA, dt);
}

static PyObject *py_is_cache_enabled(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(state()->cache_enabled);
}

static PyObject *py_set_cache_enabled(PyObject *m, PyObject *flag)
{
    (void)m;
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    state()->cache_enabled = on;
    Py_RETURN_NONE;
}

static PyObject *py_increment_nesting(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(++state()->nesting);
}

static PyObject *py_decrement_nesting(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(--state()->nesting);
}

static PyObject *py_clear_cache(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    cache_clear(state());
    Py_RETURN_NONE;
}

/* The CPU autocast dtype when CPU autocast is on in this thread, else None: the one call the
 * Python wrappers of composite functions make when autocast is off. */
static PyObject *py_cpu_active(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!(pct_dispatch_hooks & PCT_HOOK_AUTOCAST) || !state()->enabled[DEV_CPU]) Py_RETURN_NONE;
    return dtype_obj(S.dtype[DEV_CPU]);
}

/* _autocast_cast(tensor, dtype): the cast autocast makes of one argument (through the weight
 * cache), for the Python wrappers of composite functions. */
static PyObject *py_autocast_cast(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    const int dtype = nargs == 2 ? pct_python_values.dtype_of(args[1]) : -1;
    if (dtype < 0 || !pct_is_tensor_object(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_autocast_cast(tensor, dtype)");
        return NULL;
    }
    pct_tensor *t = (pct_tensor *)args[0];
    if (!eligible_on(t, t->device_type == PCT_CUDA ? DEV_CUDA : DEV_CPU) || t->dtype == dtype) return Py_NewRef(args[0]);
    return cast_to(state(), t, dtype);
}

/* The policy names by op id, for tests: {"mm": "lower_precision_fp", ...} */
static PyObject *py_policies(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    static const char *const names[] = {"", "lower_precision_fp", "fp32", "promote", "fp32_pad", "lower_precision_fp_pairs"};
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < PCT_NUM_OPS; i++) {
        if (!policy[i]) continue;
        PyObject *v = PyUnicode_FromString(names[policy[i]]);
        if (!v || PyDict_SetItemString(d, pct_ops[i].id, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyMethodDef autocast_methods[] = {
    {"_is_autocast_available", py_is_available, METH_O, NULL},
    {"is_autocast_enabled", (PyCFunction)(void (*)(void))py_is_enabled, METH_FASTCALL, NULL},
    {"set_autocast_enabled", (PyCFunction)(void (*)(void))py_set_enabled, METH_FASTCALL, NULL},
    {"get_autocast_dtype", py_get_dtype, METH_O, NULL},
    {"set_autocast_dtype", (PyCFunction)(void (*)(void))py_set_dtype, METH_FASTCALL, NULL},
    {"is_autocast_cpu_enabled", py_is_cpu_enabled, METH_NOARGS, NULL},
    {"set_autocast_cpu_enabled", py_set_cpu_enabled, METH_O, NULL},
    {"get_autocast_cpu_dtype", py_get_cpu_dtype, METH_NOARGS, NULL},
    {"set_autocast_cpu_dtype", py_set_cpu_dtype, METH_O, NULL},
    {"get_autocast_gpu_dtype", py_get_gpu_dtype, METH_NOARGS, NULL},
    {"set_autocast_gpu_dtype", py_set_gpu_dtype, METH_O, NULL},
    {"is_autocast_cache_enabled", py_is_cache_enabled, METH_NOARGS, NULL},
    {"set_autocast_cache_enabled", py_set_cache_enabled, METH_O, NULL},
    {"autocast_increment_nesting", py_increment_nesting, METH_NOARGS, NULL},
    {"autocast_decrement_nesting", py_decrement_nesting, METH_NOARGS, NULL},
    {"clear_autocast_cache", py_clear_cache, METH_NOARGS, NULL},
    {"_autocast_cpu_active", py_cpu_active, METH_NOARGS, NULL},
    {"_autocast_policies", py_policies, METH_NOARGS, NULL},
    {"_autocast_cast", (PyCFunction)(void (*)(void))py_autocast_cast, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

int pct_autocast_install(PyObject *module)
{
    return PyModule_AddFunctions(module, autocast_methods);
}
