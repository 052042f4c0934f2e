"""Functions of the torch namespace written in Python on top of the op table."""
from . import _C

__all__ = ["is_tensor", "numel", "is_floating_point", "is_nonzero"]


def is_tensor(obj):
    return isinstance(obj, _C.Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)
