"""torch._dynamo.eval_frame: the names libraries import from it (OptimizedModule above all).

Note [pyctorch.compile returns the model]
pyctorch has no frame evaluation hook and no graph capture, so `pyctorch.compile(model)` returns
`model` itself (pyctorch/_dropin.py) instead of wrapping it in an OptimizedModule. Code that asks
`isinstance(model, OptimizedModule)` to find `model._orig_mod` therefore sees an ordinary module,
which is what it gets back from unwrapping too. OptimizedModule is still a real class: building
one by hand wraps a module and runs it eagerly, with torch's `_orig_mod` attribute and the
attribute and state-dict forwarding torch's wrapper has.
"""
import contextlib
import functools

from ..nn.modules.module import Module

__all__ = ["OptimizedModule", "OptimizeContext", "disable", "innermost_fn", "is_compiling"]


def is_compiling():
    return False


class OptimizedModule(Module):
    """A module wrapped by torch.compile; here it forwards to `_orig_mod` and runs eagerly."""

    _torchdynamo_orig_callable = None

    def __init__(self, mod, dynamo_ctx=None):
        super().__init__()
        self._orig_mod = mod  # registered as a submodule, so parameters and state_dict keys carry the prefix
        self.dynamo_ctx = dynamo_ctx
        self._torchdynamo_orig_callable = mod.forward

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)


class OptimizeContext(contextlib.ContextDecorator):
    """What torch._dynamo.optimize(...) returns: applied to a function it gives the function back
    unchanged (pyctorch runs it eagerly); as a context manager it does nothing."""

    def __init__(self, backend="inductor", **options):
        self.backend = backend
        self.options = options

    def __call__(self, fn):
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def innermost_fn(fn):
    """Unwraps what torch's dynamo decorators wrapped; pyctorch's leave functions as they are."""
    while hasattr(fn, "_torchdynamo_orig_callable"):
        fn = fn._torchdynamo_orig_callable
    return fn


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Keep dynamo from compiling `fn`. pyctorch never compiles, so `fn` comes back unchanged
    (or, with no `fn`, a decorator that gives its argument back)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason, wrapping=wrapping)
    if not callable(fn):
        raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
    return fn


class DynamoStance:
    """The stance set by torch.compiler.set_stance: how compiled code would run."""
    __slots__ = ("stance", "skip_guard_eval_unsafe", "backend")

    def __init__(self, stance="default", skip_guard_eval_unsafe=False, backend=None):
        self.stance, self.skip_guard_eval_unsafe, self.backend = stance, skip_guard_eval_unsafe, backend

    def __eq__(self, other):
        return isinstance(other, DynamoStance) and \
            (self.stance, self.skip_guard_eval_unsafe, self.backend) == \
            (other.stance, other.skip_guard_eval_unsafe, other.backend)

    def __repr__(self):
        return (f"DynamoStance(stance={self.stance!r}, skip_guard_eval_unsafe={self.skip_guard_eval_unsafe}, "
                f"backend={self.backend!r})")


_stance = DynamoStance()


def _set_stance_now(stance):
    """Install `stance`; returns the one it replaces."""
    global _stance
    previous, _stance = _stance, stance
    return previous
