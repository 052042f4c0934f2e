"""Padding layers (torch.nn.modules.padding): zero, constant, reflection, replication and circular
padding of the last one or two dims, all through F.pad."""
from .module import Module
from .. import functional as F

__all__ = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d", "ConstantPad3d",
           "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d"]


def _ntuple(x, n):
    try:
        return tuple(x)
    except TypeError:
        return (x,) * n


class _ConstantPadNd(Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 2)


class ConstantPad2d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 4)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ModePadNd(Module):
    mode = None

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReflectionPad2d(_ModePadNd):
    mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReplicationPad1d(_ModePadNd):
    mode = "replicate"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReplicationPad2d(_ModePadNd):
    mode = "replicate"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class _CircularPadNd(_ModePadNd):
    mode = "circular"
    dims = ()

    def forward(self, input):
        if input.dim() not in self.dims:  # torch's _check_input_dim
            raise ValueError(f"expected {self.dims[0]}D or {self.dims[1]}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    dims = (2, 3)

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class CircularPad2d(_CircularPadNd):
    dims = (3, 4)

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ConstantPad3d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 6)


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad3d(_ModePadNd):
    mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)


class ReplicationPad3d(_ModePadNd):
    mode = "replicate"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)


class CircularPad3d(_CircularPadNd):
    dims = (4, 5)

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)
