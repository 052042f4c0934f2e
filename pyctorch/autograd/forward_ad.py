"""torch.autograd.forward_ad: forward-mode automatic differentiation with dual tensors.

Inside `with dual_level():`, `make_dual(primal, tangent)` gives a tensor that carries `tangent`; every op computes
its result's tangent (the Jacobian-vector product) with the op's forward formula as it runs, and `unpack_dual`
reads it back. The machinery is pyctorch/autograd/_forward_ad.py (Note [Forward AD] in csrc/autograd/forward_ad.c).
"""
from collections import namedtuple

from .. import _C
from . import _forward_ad as _impl

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


def enter_dual_level():
    """Enters a new forward grad level and returns its index (torch supports one level at a time)."""
    if _impl._levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _impl.push_level(True)


def exit_dual_level(*, level=None):
    """Exits the given (by default the innermost) level: every tangent made at it is dropped."""
    if level is None:
        level = len(_impl._levels) - 1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != len(_impl._levels) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _impl.pop_level(level)


def _level(level):
    if level is None:
        level = len(_impl._levels) - 1
    if level < 0 or level >= len(_impl._levels):
        return None
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` that carries `tangent` as its forward gradient at `level`."""
    k = _level(level)
    if k is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not isinstance(tensor, _C.Tensor):
        raise TypeError(f"make_dual(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    if not isinstance(tangent, _C.Tensor):
        raise TypeError(f"make_dual(): argument 'tangent' must be Tensor, not {type(tangent).__name__}")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    dual = _impl.alias_without_tangents(tensor, k)
    _impl.set_tangent(dual, tangent, _impl.level_of(k))
    return dual


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__module__ = "torch.autograd.forward_ad"
UnpackedDualTensor.__doc__ = "Namedtuple returned by unpack_dual: the primal view and the tangent (or None)."


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor at `level`: a view of it without tangent, and its tangent (or None)."""
    k = _level(level)
    if k is None or not isinstance(tensor, _C.Tensor):
        return UnpackedDualTensor(tensor, None)
    tangent = _impl.get_tangent(tensor, _impl.level_of(k))
    return UnpackedDualTensor(_impl.alias_without_tangents(tensor, k), tangent)


class dual_level:
    """Context manager of a forward AD level: `with dual_level(): ...` enters one and exits it at the end."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper
