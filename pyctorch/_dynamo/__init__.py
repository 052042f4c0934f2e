"""torch._dynamo: graph capture for torch.compile (pyctorch's is a traced run with guards, not a bytecode
tracer: Note [Compile capture] in capture.py, Note [Compiled callables] and Note [Graph breaks] in
eval_frame.py), with torch's API around it: `optimize`, `explain`, `reset`, `config`, the marks and decorators.
"""

from . import config, exc  # noqa: F401
from . import config  # noqa: F401  (torch._dynamo.config)
from . import eval_frame  # noqa: F401
from .decorators import (allow_in_graph, assume_constant_result, disallow_in_graph,  # noqa: F401
                         forbid_in_graph, graph_break, mark_dynamic, mark_static, mark_static_address,
                         maybe_mark_dynamic, nonstrict_trace, run, substitute_in_graph)
from .eval_frame import OptimizedModule, OptimizeContext, disable  # noqa: F401

__all__ = ["allow_in_graph", "assume_constant_result", "disallow_in_graph", "forbid_in_graph",
           "graph_break", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address",
           "nonstrict_trace", "substitute_in_graph", "run", "optimize", "disable", "reset", "explain",
           "export", "is_compiling", "is_dynamo_supported", "list_backends", "OptimizedModule", "config"]

_MISSING_CAPTURE = "pyctorch's capture runs the function (torch.compile, torch.export); dynamo's bytecode-level " \
    "export is not implemented"


def is_compiling():
    """True while torch.compile captures a function (its code runs once under capture)."""
    from .capture import is_capturing
    return is_capturing()


def is_dynamo_supported():
    """True: torch.compile captures graphs on this Python."""
    return True


def reset():
    """Forgets every compiled callable's cached graphs (they are captured again on their next call)."""
    from .eval_frame import _ALL
    for compiled in list(_ALL):
        compiled.reset()


def optimize(*args, **kwargs):
    """`optimize(backend)(fn)`: fn compiled with that backend (as torch.compile(fn, backend=...)); with
    disable=True, fn unchanged. Usable as a context manager too, where it changes nothing."""
    backend = args[0] if args else kwargs.pop("backend", "inductor")
    if kwargs.pop("disable", False):
        return OptimizeContext(backend, disable=True, **kwargs)
    return OptimizeContext(backend, **kwargs)


def explain(f, *extra_args, **extra_kwargs):
    """torch._dynamo.explain(f)(*args, **kwargs) -> ExplainOutput: captures one call of f and reports its graph
    (none when there was a break: Note [Graph breaks]), the breaks with their reasons and user frames, the op
    count and the guards. The old form explain(f, *args) returns the output at once."""
    from ._explain import explain_call
    if extra_args or extra_kwargs:
        import warnings
        warnings.warn("explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead.  "
                      "If you don't migrate, we may break your explain call in the future if your user defined "
                      "kwargs conflict with future kwargs added to explain(f).", FutureWarning, stacklevel=2)
        return explain_call(f, extra_args, extra_kwargs)

    def inner(*args, **kwargs):
        return explain_call(f, args, kwargs)
    return inner


def export(f, *extra_args, **extra_kwargs):
    raise NotImplementedError(f"torch._dynamo.export needs graph capture: {_MISSING_CAPTURE}")


# Note [Backend names]
# torch lists the compiler backends registered in it; `pyctorch.compile` accepts each of these
# names: "inductor" is pyctorch's compiler, the others run the captured graph as "eager" does (backends.py).
# The debugging backends ("eager", "aot_eager") appear only when the "debug" tag is not excluded; torch 2.13
# registers no "onnxrt" backend, onnxruntime installed or not (its module is a placeholder).
_BACKENDS = {"cudagraphs": (), "inductor": (), "openxla": (), "tvm": (),
             "eager": ("debug",), "aot_eager": ("debug",)}


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names torch would list that pyctorch.compile accepts (see Note [Backend names])."""
    exclude = set(exclude_tags or ())
    names = []
    for name, tags in _BACKENDS.items():
        if exclude.intersection(tags):
            continue
        names.append(name)
    return sorted(names)
