"""torch._dynamo's decorators and shape marks, with the effect they have without graph capture.

Marks are recorded where torch records them (so a library that reads them back finds them):
`mark_dynamic` adds dims to `t._dynamo_dynamic_indices`, `maybe_mark_dynamic` to
`t._dynamo_weak_dynamic_indices`, `mark_static` to `t._dynamo_static_indices` (a module or class
gets `_dynamo_marked_static = True`). Nothing reads them inside pyctorch: every call runs eagerly
on the shapes it is given.
"""
__all__ = ["allow_in_graph", "disallow_in_graph", "forbid_in_graph", "assume_constant_result",
           "graph_break", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address",
           "nonstrict_trace", "substitute_in_graph", "run"]


def _each(fn, decorator):
    if isinstance(fn, (list, tuple)):
        return [decorator(f) for f in fn]
    if not callable(fn):
        raise TypeError(f"{decorator.__name__} expects a callable")
    return fn


def allow_in_graph(fn):
    """Would let dynamo put `fn` into a graph as one call; eagerly it is just `fn`."""
    return _each(fn, allow_in_graph)


def disallow_in_graph(fn):
    """Would make dynamo break the graph at `fn`; eagerly it is just `fn`."""
    return _each(fn, disallow_in_graph)


def forbid_in_graph(fn):
    return _each(fn, forbid_in_graph)


def nonstrict_trace(traceable_fn):
    return _each(traceable_fn, nonstrict_trace)


def assume_constant_result(fn):
    """Marks `fn` as torch does (`fn._dynamo_marked_constant = True`) and returns it."""
    fn._dynamo_marked_constant = True
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    """A decorator giving back the Python replacement it decorates (used only while tracing)."""
    if not callable(original_fn):
        raise TypeError(f"substitute_in_graph expects a function but got {type(original_fn)!r}")

    def register(fn):
        return fn
    return register


def graph_break(msg=""):
    """Ends the current graph under dynamo; eager execution has none, so it does nothing."""


def run(fn=None):
    """Runs `fn` with what dynamo compiled before; pyctorch compiled nothing, so `fn` itself."""
    return fn


def _dims(t, index):
    """The marked dims as given (torch stores them unnormalized and checks them only when tracing)."""
    return set(index) if isinstance(index, (list, tuple)) else {index}


def _record(t, attr, dims):
    current = getattr(t, attr, None)
    setattr(t, attr, (set(current) if current else set()) | dims)
    t._has_dynamo_dim_marking = True


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Records that dims `index` of `t` vary between calls (no effect: see the module docstring)."""
    _record(t, "_dynamo_dynamic_indices", _dims(t, index))


def maybe_mark_dynamic(t, index):
    """Records a soft dynamic mark on dims `index` of `t` (no effect)."""
    _record(t, "_dynamo_weak_dynamic_indices", _dims(t, index))


def mark_static(t, index=None):
    """Records that dims `index` (all if None) of `t` stay fixed; a module or class is marked whole."""
    from .. import Tensor
    if not isinstance(t, Tensor):
        t._dynamo_marked_static = True
        return
    dims = set(range(t.dim())) if index is None else _dims(t, index)
    _record(t, "_dynamo_static_indices", dims)


def mark_static_address(t, guard=False):
    """Records that `t`'s storage keeps its address (meaningful only for CUDA graphs)."""
    from .. import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"
