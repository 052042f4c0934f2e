/* autograd.h: the dynamic graph (nodes and edges), recording above the dispatcher,
 * and the backward engine.
 *
 * A node is a GC-tracked Python object (pyctorch._C._Node; Function contexts subclass
 * it). Ownership:
 *   edges[i].node        one reference (the next node; NULL: that input needs no grad)
 *   edges[i].meta.sizes, outputs[i].sizes   owned copies (malloc'd, NULL for 0-d)
 *   saved[i].obj         one reference to a saved value (tensor or Python object) until
 *                        released after backward (retain_graph=False); under saved tensor
 *                        hooks, what the pack hook returned
 *   saved[i].unpack      one reference to the unpack hook of a packed value, or NULL
 *   saved[i].history     one reference to the grad_fn (or AccumulateGrad) of a packed input, or NULL
 *   fn                   one reference: the backward callable of a formula node
 *   variable             AccumulateGrad: one (strong) reference to its leaf tensor; the
 *                        leaf points back through a weak reference (t->grad_acc)
 *   *_hooks, retained, metadata, dict   owned references or NULL
 * Saved outputs are stored as history-free aliases (same storage and version counter)
 * so an output never owns the node that owns it: no reference cycle per op.
 * Kernels never see autograd: recording wraps pct_dispatch (record.c).
 */
#ifndef PCT_AUTOGRAD_H
#define PCT_AUTOGRAD_H
#include <Python.h> /* first, as Python requires: autograd nodes are Python objects */
#include "../aten/op.h"

typedef enum pct_node_kind {
    PCT_NODE_FORMULA,    /* fn(grads, results, needs, *saved) -> grads per edge */
    PCT_NODE_ACCUMULATE, /* AccumulateGrad of a leaf */
    PCT_NODE_FUNCTION,   /* a Python autograd.Function: self._apply_backward(grads) */
} pct_node_kind;

typedef struct pct_meta {    /* dtype and shape of a tensor crossing an edge */
    int8_t dtype;            /* -1: no tensor (not differentiable) */
    int8_t device_type, device_index;
    int32_t ndim;
    int64_t *sizes;
} pct_meta;

typedef struct pct_edge {
    PyObject *node;          /* the node that receives this gradient, or NULL */
    uint32_t input_nr;       /* which of its outputs */
    pct_meta meta;           /* the input's metadata, for validation and sum_to */
} pct_edge;

typedef struct pct_saved {
    PyObject *obj;           /* the value, NULL once released */
    int64_t version;         /* version counter value at save time (tensors) */
    uint8_t is_tensor;
    uint8_t is_output;       /* an output alias: re-attached to this node on unpack */
    uint32_t output_nr;
    PyObject *unpack;        /* Note [Saved tensor hooks]: obj is packed; NULL: obj is the value */
    PyObject *history;       /* a packed input that required grad: its grad_fn or grad accumulator */
    uint32_t history_nr;     /* which output of `history` it was */
} pct_saved;

typedef struct pct_node {
    PyObject_HEAD
    uint8_t kind;
    uint8_t released;        /* saved values were freed by a backward */
    uint8_t has_saved;
    int16_t op_index;        /* 1 + the op a formula node was recorded for (0: none): names grad_fn._saved_* */
    uint64_t seq;            /* creation order: the engine runs later nodes first */
    PyObject *name;          /* e.g. "MulBackward0" */
    PyObject *fn;
    int nedges, nsaved, noutputs;
    int nparams;             /* saved[0..nparams) are the fn's parameters, the rest outputs */
    pct_edge *edges;
    pct_saved *saved;        /* nsaved entries: formula parameters then outputs */
    pct_meta *outputs;       /* noutputs entries */
    PyObject *variable;
    PyObject *pre_hooks, *post_hooks, *tensor_pre_hooks, *retained;
    PyObject *metadata, *dict, *weakrefs;
    PyObject *trace;         /* anomaly mode: the forward traceback (str) */
} pct_node;

extern PyTypeObject pct_NodeType;
#define PCT_NODE_CHECK(o) PyObject_TypeCheck((o), &pct_NodeType)

/* Thread-local grad mode (record.c: recording is what it turns off) and anomaly mode. */
extern _Thread_local int pct_grad_enabled;
extern int pct_anomaly_enabled;

/* node.c */
pct_node *pct_node_new(PyTypeObject *type, int kind, int nedges, int noutputs);
/* Fills edge/meta slot i from an input tensor (NULL or not requiring grad: no edge). */
int pct_node_set_edge(pct_node *n, int i, pct_tensor *input);
int pct_node_set_output(pct_node *n, int i, pct_tensor *output);
/* Kept for callers that finish building a node: sizes are copied as each meta is set. */
int pct_node_finish_meta(pct_node *n);
int pct_meta_copy(pct_meta *dst, const pct_meta *src);
/* The edge a gradient for `t` flows into: its grad_fn, or its grad accumulator (new ref). */
PyObject *pct_gradient_edge(pct_tensor *t, uint32_t *input_nr);
void pct_node_release_saved(pct_node *n);
/* Unpacks saved slot i (new reference), checking its version; NULL with exception. */
PyObject *pct_saved_unpack(pct_node *n, int i);
/* Raises torch's RuntimeError for a saved tensor modified in place since its save at saved_version, naming
 * `node`'s output output_nr as where it came from (node NULL or None: a leaf, no name); returns NULL. */
PyObject *pct_modified_error(PyObject *tensor, int64_t saved_version, PyObject *node, uint32_t output_nr);
/* Makes `t` an output of node n (grad_fn, output_nr, requires_grad). */
void pct_set_history(pct_tensor *t, pct_node *n, uint32_t output_nr);
uint64_t pct_next_sequence_nr(void);

/* record.c: dispatch with autograd recording. */
PyObject *pct_autograd_dispatch(pct_call *c);
/* Shorthands of pct_op_call (profiler.h) for the calls autograd makes: op(a) / op(a, b) with tensors in the first parameters, the rest at their
 * defaults; with inplace, a is written (the in-place variant op_). */
PyObject *pct_op_call1(int op_index, pct_tensor *a);
PyObject *pct_op_call2(int op_index, pct_tensor *a, pct_tensor *b, bool inplace);
/* t.to(dtype) */
PyObject *pct_op_cast(pct_tensor *t, int dtype);
/* A node whose backward is the Python callable fn(grads, results, needs, *saved): used by
 * indexing and view rebasing. inputs/outputs are tensors (NULL entries: none). */
pct_node *pct_record_callable(const char *name, PyObject *fn, PyObject *saved_tuple, int ninputs,
                              pct_tensor *const *inputs, int noutputs, pct_tensor *const *outputs);
/* True when grad mode is on and any of the tensors requires grad. */
bool pct_any_requires_grad(int n, pct_tensor *const *ts);
/* After an in-place op gave view `t` the history `n`: rebase its root (CopySlices). */
int pct_rebase_view_history(pct_tensor *t);
/* A view whose storage was written since its grad_fn was recorded (an in-place op on its
 * base or on another view) gets a fresh as_strided history from its base; 0 or -1. */
int pct_refresh_view_history(pct_tensor *t);
/* In-place checks on a target tensor (leaf / view of leaf that requires grad). */
int pct_check_inplace(pct_tensor *t);

/* saved_hooks.c: Note [Saved tensor hooks] */
extern _Thread_local int pct_saved_hooks_on; /* nonzero while saved tensor hooks are set on this thread */
/* Replaces a saved tensor by what the innermost pack hook returns (no-op for non-tensors); 0 or -1. */
int pct_saved_pack(pct_saved *s);
/* The same with a given pair (SavedTensor.register_hooks); s must hold a tensor. */
int pct_saved_pack_with(pct_saved *s, PyObject *pack, PyObject *unpack);
/* unpack(obj) for a packed slot: a new reference to a tensor, or NULL with an exception. */
PyObject *pct_saved_call_unpack(pct_saved *s);
int pct_saved_hooks_install(PyObject *module);
/* record.c: a parsed argument as the Python value a formula reads (new reference; NULL with an exception). */
PyObject *pct_value_as_python(const pct_param *p, const pct_value *v);
/* record.c: the op's PCT_GRAD formulas (NULL-terminated), NULL where it has none. */
const char *const *pct_op_grad_formulas(int op_index);
/* record.c: bit i set when an op's formulas read only parameter i's shape and dtype (a stand-in is saved). */
uint32_t pct_op_meta_mask(int op_index);

/* engine.c */
PyObject *pct_run_backward(PyObject *roots, PyObject *grad_roots, int keep_graph, int create_graph,
                           PyObject *inputs, int accumulate, int allow_unused);
/* Calls the backward of one node (exposed as Node._apply for CopySlices). */
PyObject *pct_node_apply(pct_node *n, PyObject *grads);

/* python_autograd.c: the _C functions of the autograd layer. */
int pct_autograd_install(PyObject *module);
/* points the dispatcher's pct_composite_caller at pct_op_call (Note [Composite ops], op.h) */
void pct_composite_caller_install(void);

/* Helpers in pyctorch.autograd._formulas, imported on first use (borrowed). */
PyObject *pct_formulas_module(void);

/* A tuple of the strings of a NULL-terminated list (a formula list of the op table), or None for NULL
 * (forward_ad.c). */
PyObject *pct_strings_tuple(const char *const *f);

#endif
