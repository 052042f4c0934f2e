"""torch.autograd.Variable: the pre-0.4 wrapper, today an alias of Tensor. `Variable(t, requires_grad=...)`
returns a detached alias of t with requires_grad set, and every tensor is an instance of it."""
import warnings

from .. import _C

__all__ = ["Variable", "variable"]


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            var = _C.empty((0,))
        elif isinstance(data, _C.Tensor):
            var = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        var.requires_grad_(bool(requires_grad))
        return var


class Variable(metaclass=_VariableMeta):
    """isinstance(t, Variable) is True for every tensor; Variable(t) is a detached alias of t.
    Variable._execution_engine.queue_callback(fn) runs fn when the running backward pass ends."""
