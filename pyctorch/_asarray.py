"""torch.asarray: a tensor of obj, sharing its memory where it can (torch's rules, in torch's order).

obj is tried as: a Tensor; a NumPy array or scalar (through from_numpy, any strides); an object with
`__dlpack__`; an object with the buffer protocol (bytes, bytearray, memoryview, array.array: frombuffer, read as
`dtype` or the default dtype); anything else is data for torch.tensor. The result aliases obj unless dtype or
device differ or copy=True; copy=False where aliasing is impossible raises torch's ValueError.
"""
from . import _C
from ._composites import _cpp

__all__ = ["asarray"]


def _convert(t, dtype, device, copy):
    """t as dtype on device: t itself, a clone (copy=True) or a converted copy (refused when copy=False)."""
    want_dtype = t.dtype if dtype is None else dtype
    want_device = t.device if device is None else _C.device(device)
    same_device = want_device.type == t.device.type and (want_device.index is None or
                                                          want_device.index == t.device.index)
    if want_dtype == t.dtype and same_device:
        return t.clone() if copy else t
    if copy is False:
        if not same_device:
            raise ValueError(f"can't alias tensor from device '{t.device}' to '{want_device}'.")
        raise ValueError(f"can't alias tensor with dtype '{_cpp(t.dtype)}' into dtype '{_cpp(want_dtype)}'.")
    return t.to(device=want_device, dtype=want_dtype)


def _aliased(obj, dtype):
    """A tensor sharing obj's memory, or None when obj offers none."""
    if isinstance(obj, _C.Tensor):
        return obj
    module = type(obj).__module__ or ""
    if module.startswith("numpy") and hasattr(obj, "__array_interface__"):
        import numpy
        return _C.from_numpy(numpy.asarray(obj))
    if hasattr(obj, "__dlpack__"):
        from .utils.dlpack import from_dlpack
        return from_dlpack(obj)
    try:
        memoryview(obj).release()
    except TypeError:
        return None
    return _C.frombuffer(obj, dtype=dtype if dtype is not None else _C.get_default_dtype())


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Converts obj to a tensor, sharing memory when dtype and device allow it and copy is not True."""
    t = _aliased(obj, dtype)
    if t is not None:
        result = _convert(t, dtype, device, copy)
    elif copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    else:
        result = _C.tensor(obj, dtype=dtype, device=device)
    if requires_grad and not (result.dtype.is_floating_point or result.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if requires_grad and not result.requires_grad:
        if result is obj:  # the caller's tensor keeps its flag: an alias carries the new one
            result = result.detach()
        result.requires_grad_(True)
    return result
