"""torch.utils._python_dispatch: the checks libraries make for traceable wrapper subclasses.

A traceable wrapper subclass is a Tensor subclass that can be taken apart into inner tensors and rebuilt
(`__tensor_flatten__` / `__tensor_unflatten__`), the protocol graph capture uses for subclasses such as DTensor or
float8 wrappers. pyctorch has no __torch_dispatch__ level, so these functions only answer whether a tensor or type
follows that protocol."""
from .. import _C

__all__ = ["is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type"]


def _has_traceable_wrapper_subclass_protocol(t):
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t):
    """Whether t is an instance of a Tensor subclass with __tensor_flatten__ and __tensor_unflatten__."""
    return isinstance(t, _C.Tensor) and type(t) is not _C.Tensor and _has_traceable_wrapper_subclass_protocol(t)


def is_traceable_wrapper_subclass_type(t):
    """Whether t is a Tensor subclass type with __tensor_flatten__ and __tensor_unflatten__."""
    return issubclass(t, _C.Tensor) and t is not _C.Tensor and _has_traceable_wrapper_subclass_protocol(t)
