/* profiler.h: the hooks every op call may take on its way to the dispatcher: the
 * profiler's event recording and CPU autocast (autocast.c).
 *
 * Note [Dispatch hooks]
 * The binding calls pct_autograd_dispatch directly unless the one global word
 * pct_dispatch_hooks is non-zero: with no profiler running and autocast off in every
 * thread, an op pays one load and one predictable branch. When a hook is on, the call
 * goes through pct_hooked_dispatch, which opens a profiler event (before autocast, as
 * torch's RecordFunction sits above its Autocast key, so the casts are nested events),
 * applies the autocast casts of the op's policy, and runs autograd + the kernel.
 * The word is only written with the GIL held.
 */
#ifndef PCT_PROFILER_H
#define PCT_PROFILER_H
#include "autograd.h"

enum { PCT_HOOK_PROFILER = 1, PCT_HOOK_AUTOCAST = 2, PCT_HOOK_FORWARD_AD = 4 };
extern int pct_dispatch_hooks __attribute__((visibility("hidden")));

/* An op call with the hooks that are on (profiler event, autocast casts). */
PyObject *pct_hooked_dispatch(pct_call *c);
/* The one C entry of an op call: the hooks that are on, autograd recording, then the dispatcher. The binding calls it
 * after parsing Python arguments; autograd and autocast call ops by id through it (pct_call_init, then the
 * arguments). New reference, or NULL with an exception. */
static inline PyObject *pct_op_call(pct_call *c)
{
    /* Note [Dispatch hooks]: one predictable branch when no profiler or autocast is on */
    return __builtin_expect(pct_dispatch_hooks != 0, 0) ? pct_hooked_dispatch(c) : pct_autograd_dispatch(c);
}
/* The backward engine's call of one node: with the profiler recording, it is wrapped in
 * "autograd::engine::evaluate_function: <node>" and "<node>" events. */
PyObject *pct_profiled_node_apply(pct_node *n, PyObject *grads);
int pct_profiler_install(PyObject *module);

/* autocast.c. Casts the floating tensor arguments of c as the op's autocast policy says
 * (when autocast is on for the CPU in this thread and the call is eligible). The new
 * tensors and lists replace the borrowed ones in c->v and are owned through held[]
 * (at most PCT_MAX_PARAMS entries; *nheld counts them). 0, or -1 with an exception. */
int pct_autocast_apply(pct_call *c, PyObject **held, int *nheld);
int pct_autocast_install(PyObject *module);

/* forward_ad.c (Note [Forward AD]). Nonzero while this thread's tangent propagation is suspended. */
extern _Thread_local int pct_forward_ad_suspended;
/* True when op calls on this thread must take the forward AD hook. */
static inline int pct_forward_ad_on(void)
{
    return __builtin_expect((pct_dispatch_hooks & PCT_HOOK_FORWARD_AD) != 0, 0) && !pct_forward_ad_suspended;
}
/* An op call with the forward AD hook around autograd recording and the kernel. */
PyObject *pct_forward_ad_dispatch(pct_call *c);
/* The hook's two halves for calls that are not table ops (indexing: op_index -1 getitem, -2 setitem): begin gives a
 * new reference to a state (None: nothing to do) or NULL with an exception; finish(state, r) steals both, calls
 * the state with r and returns r (NULL when r is NULL or the state raised). */
PyObject *pct_forward_ad_begin(int op_index, int mode, PyObject *args);
PyObject *pct_forward_ad_finish(PyObject *state, PyObject *r);
/* dst (an alias of src made by autograd: a saved output unpacked) gets src's tangents; 0 or -1 with an exception. */
int pct_forward_ad_copy(PyObject *src, PyObject *dst);
int pct_forward_ad_install(PyObject *module);

#endif
