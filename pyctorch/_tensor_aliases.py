"""Tensor methods torch code calls that pyctorch spells differently or has only as functions (attached by
pyctorch/_tensor.py)."""
from . import _C
from .functional import _RENAMES, allclose, isclose


def __format__(self, format_spec):
    # a 0-d tensor formats like its Python number (f"{loss:.4f}"), as in torch
    if self.dim() == 0 and not self.is_meta and type(self) is _C.Tensor:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)


def equal(self, other):
    return tuple(self.shape) == tuple(other.shape) and bool((self == other).all())


def where(self, condition, other):
    return _C.where(condition, self, other)


def ravel(self):
    return self.reshape(-1)


def _check_new_device(device):
    if device is not None and _C.device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {_C.device(device).type} was passed")


def new(self, *args, device=None):
    """The legacy constructor: new() is empty, new(*sizes) / new(torch.Size) uninitialized, new(tensor) an
    alias of a tensor of the same dtype, new(data) a copy of the data; always self's dtype."""
    _check_new_device(device)
    if not args:
        return _C.empty(0, dtype=self.dtype)
    if len(args) == 1 and isinstance(args[0], _C.Tensor):
        other = args[0]
        if other.dtype != self.dtype:
            raise TypeError(f"expected {self.dtype} (got {other.dtype})")
        return other.view(other.shape)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], _C.Size)):
        return _C.empty(*args, dtype=self.dtype)
    if len(args) == 1:
        return _C.tensor(args[0], dtype=self.dtype)
    raise TypeError(f"new() received an invalid combination of arguments - got {tuple(type(a).__name__ for a in args)}")


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new tensor holding a copy of data, with self's dtype and device unless given (torch's Tensor.new_tensor)."""
    _check_new_device(device)
    dtype = self.dtype if dtype is None else dtype
    if isinstance(data, _C.Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        result = data.detach().to(dtype=dtype, copy=True)
    else:
        result = _C.tensor(data, dtype=dtype)
    return result.requires_grad_(requires_grad) if requires_grad else result


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                      pin_memory=False):
    """empty_strided with self's dtype and device unless given (torch's Tensor.new_empty_strided)."""
    _check_new_device(device)
    return _C.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, requires_grad=requires_grad)


TENSOR_METHODS = {k + inplace: _C.Tensor.__dict__[v + inplace] for k, v in _RENAMES.items() for inplace in ("", "_")
                  if v + inplace in _C.Tensor.__dict__}
TENSOR_METHODS.update(isclose=isclose, allclose=allclose, equal=equal, where=where, ravel=ravel, new=new, new_tensor=new_tensor,
                new_empty_strided=new_empty_strided)
TENSOR_METHOD_OVERRIDES = {"__format__": __format__}  # over object's
