"""torch.compiler: the public face of torch's compiler stack.

`compile` is pyctorch.compile (Note [Compiled callables] in pyctorch/_dynamo/eval_frame.py); `is_compiling()`
and `is_dynamo_compiling()` are True while a capture runs the asking code; `disable`, `allow_in_graph`,
`assume_constant_result` and `substitute_in_graph` hand functions back (a capture records the op calls of
whatever runs); `set_stance` sets how compiled callables run ("force_eager", "eager_on_recompile",
"fail_on_recompile") with torch's call, context-manager and decorator forms; `cudagraph_mark_step_begin` does
nothing because pyctorch records no CUDA graphs; `wrap_numpy` converts tensors to NumPy arrays and back around
a NumPy function, as torch does outside compiled code.
"""
import functools

from .._dynamo import (allow_in_graph, assume_constant_result, disable, list_backends, reset,  # noqa: F401
                       substitute_in_graph)
from .._dynamo import config  # noqa: F401
from .._dynamo.eval_frame import DynamoStance, _set_stance_now

__all__ = ["compile", "reset", "allow_in_graph", "substitute_in_graph", "list_backends", "disable",
           "set_stance", "cudagraph_mark_step_begin", "wrap_numpy", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "assume_constant_result"]


def compile(*args, **kwargs):
    """Same as pyctorch.compile."""
    from .._dropin import compile as _compile
    return _compile(*args, **kwargs)


def is_compiling():
    """True while torch.compile captures the code that asks (Note [Compile capture])."""
    from .._dynamo.capture import is_capturing
    return is_capturing()


def is_dynamo_compiling():
    """True while torch.compile captures the code that asks (pyctorch's capture stands for dynamo's tracer)."""
    from .._dynamo.capture import is_capturing
    return is_capturing()


def is_exporting():
    """False: pyctorch has no torch.export."""
    return False


def cudagraph_mark_step_begin():
    """Marks a new iteration for CUDA graphs made by compiled code. pyctorch records no CUDA
    graphs (it compiles nothing), so there is nothing to mark: a no-op, on CPU and GPU alike."""


class _SetStance:
    """What set_stance returns. Made, it sets the stance at once (the plain call); as a context
    manager it restores the previous stance on exit; as a decorator it undoes the immediate
    setting and sets the stance around each call of the function instead, as torch does."""

    def __init__(self, stance):
        self.stance = stance
        self.previous = _set_stance_now(stance)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_stance_now(self.previous)
        return False

    def __call__(self, fn):
        _set_stance_now(self.previous)
        stance = self.stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            previous = _set_stance_now(stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_stance_now(previous)
        return with_stance


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Sets how compiled callables run: "default", "force_eager" (always eagerly), "eager_on_recompile" (no new
    captures: arguments no cached graph accepts run eagerly), "fail_on_recompile" (those raise)."""
    if force_backend is not None and stance != "default":
        raise RuntimeError("non-default stance cannot have force_backend set")
    return _SetStance(DynamoStance(stance, skip_guard_eval_unsafe, force_backend))


def wrap_numpy(fn):
    """Turns a function on NumPy arrays into one on tensors: tensor arguments go in as arrays
    (sharing memory, CPU only) and array results come back as tensors."""
    from .. import Tensor, as_tensor
    from ..utils._pytree import tree_map_only
    import numpy as np

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = tree_map_only(Tensor, lambda t: t.numpy(), (args, kwargs))
        out = fn(*args, **kwargs)
        return tree_map_only(np.ndarray, as_tensor, out)  # NumPy scalars stay scalars, as in torch
    return wrapped
