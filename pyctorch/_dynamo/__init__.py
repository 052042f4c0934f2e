"""torch._dynamo as it stands in pyctorch: the API surface, without graph capture.

pyctorch executes every op eagerly and has no bytecode tracer, so nothing here captures or
compiles: `is_compiling()` is False, `optimize(...)`, `disable` and the in-graph decorators hand
functions back unchanged, marks are recorded but read by nobody (decorators.py), `config` stores
torch's flags (config.py), and `pyctorch.compile` returns the model itself (Note [pyctorch.compile
returns the model] in eval_frame.py). What would need capture says so: `explain` and `export`
raise NotImplementedError.
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

_MISSING_CAPTURE = "pyctorch has no graph capture (no dynamo bytecode tracer) yet"


def is_compiling():
    """False: pyctorch never traces, so code always runs eagerly."""
    return False


def is_dynamo_supported():
    """False: pyctorch cannot capture graphs (callers use this to skip compile-only paths)."""
    return False


def reset():
    """Clears dynamo's compiled-code caches; pyctorch keeps none, so there is nothing to clear."""


def optimize(*args, **kwargs):
    """`optimize(backend)(fn)` gives `fn` back unchanged (eager); usable as a context manager too."""
    backend = args[0] if args else kwargs.pop("backend", "inductor")
    if kwargs.pop("disable", False):
        return OptimizeContext(backend, disable=True, **kwargs)
    return OptimizeContext(backend, **kwargs)


def explain(f, *extra_args, **extra_kwargs):
    raise NotImplementedError(f"torch._dynamo.explain needs graph capture: {_MISSING_CAPTURE}")


def export(f, *extra_args, **extra_kwargs):
    raise NotImplementedError(f"torch._dynamo.export needs graph capture: {_MISSING_CAPTURE}")


# Note [Backend names]
# torch lists the compiler backends registered in it; `pyctorch.compile` accepts each of these
# names and runs eagerly whatever the name, so the list says what is accepted, not what compiles.
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
