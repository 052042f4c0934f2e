"""torch.distributed.tensor: the placement types, and DTensor's names without DTensor itself yet.

pyctorch has no DeviceMesh and no DTensor: libraries import these names unconditionally (transformers
does whenever torch.distributed.is_available()) and only build DTensors when they shard a model, so
the class exists for isinstance checks and annotations (no pyctorch tensor is a DTensor) and every
constructor raises NotImplementedError.
"""
from ... import Tensor
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "Shard", "Replicate", "Partial", "Placement",
           "ones", "empty", "full", "rand", "randn", "zeros"]


def _missing(name):
    return NotImplementedError(f"pyctorch does not implement torch.distributed.tensor.{name} yet")


class DTensor(Tensor):
    """A tensor distributed over a device mesh; pyctorch cannot make one yet."""

    def __new__(cls, *args, **kwargs):
        raise _missing("DTensor")

    @staticmethod
    def from_local(*args, **kwargs):
        raise _missing("DTensor.from_local")


def _raiser(name):
    def fn(*args, **kwargs):
        raise _missing(name)
    fn.__name__ = name
    return fn


distribute_tensor = _raiser("distribute_tensor")
distribute_module = _raiser("distribute_module")
ones, empty, full, rand, randn, zeros = (_raiser(n) for n in ("ones", "empty", "full", "rand", "randn", "zeros"))
