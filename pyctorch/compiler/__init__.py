"""torch.compiler: the public face of torch's compiler stack, over pyctorch's eager execution.

pyctorch has no graph compiler (pyctorch/_dynamo/__init__.py says what that means for each
name). `compile` is pyctorch.compile (it returns the model itself); `is_compiling()` and
friends are False because nothing is ever traced; `disable`, `allow_in_graph`,
`assume_constant_result` and `substitute_in_graph` hand functions back; `set_stance` stores the
stance (readable as `torch._dynamo.eval_frame._stance`) with torch's call, context-manager and
decorator forms; `cudagraph_mark_step_begin` does nothing because CUDA graphs are only recorded
by compiled code on a GPU, which pyctorch never produces; `wrap_numpy` converts tensors to NumPy
arrays and back around a NumPy function, as torch does outside compiled code.
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
    """Same as pyctorch.compile (returns the model itself: Note [pyctorch.compile returns the model])."""
    from .._dropin import compile as _compile
    return _compile(*args, **kwargs)


def is_compiling():
    """False: pyctorch never traces code for a compiler."""
    return False


def is_dynamo_compiling():
    """False: pyctorch has no dynamo tracer."""
    return False


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
    """Sets how compiled code would run ("default", "force_eager", "eager_on_recompile",
    "fail_on_recompile", ...). pyctorch always runs eagerly, so the stance is stored only."""
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
