"""Tensor methods torch code calls that pyctorch spells differently or has only as functions."""
from . import _C
from .functional import allclose, isclose

_RENAMES = {"absolute": "abs", "absolute_": "abs_", "negative": "neg", "negative_": "neg_", "greater": "gt",
            "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}


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


def clamp_min(self, min):
    return self.clamp(min=min)


def clamp_max(self, max):
    return self.clamp(max=max)


_methods = {k: _C.Tensor.__dict__[v] for k, v in _RENAMES.items()}
_methods.update(isclose=isclose, allclose=allclose, equal=equal, where=where, ravel=ravel, clamp_min=clamp_min,
                clamp_max=clamp_max)
_C._add_tensor_methods({k: v for k, v in _methods.items() if not hasattr(_C.Tensor, k)})
_C._add_tensor_methods({"__format__": __format__})
