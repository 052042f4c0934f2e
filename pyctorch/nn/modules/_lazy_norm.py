"""Lazy batch normalisation (num_features from dim 1 of the first input) and the base it shares
with the lazy instance norms (nn.modules.instancenorm).

Note [Lazy batch norm's home]: torch defines LazyBatchNorm*d in nn.modules.batchnorm, and pyctorch
keeps every class at torch's path (checkpoints and weights_only allow-lists name it). While
batchnorm.py is being edited elsewhere, the classes are written here and published under that path:
their __module__ says batchnorm and the batchnorm module holds them, so pickles and
`nn.modules.batchnorm.LazyBatchNorm1d` resolve. Moving them into batchnorm.py later changes nothing
for users.
"""
import pyctorch as torch
from ..parameter import UninitializedBuffer, UninitializedParameter
from . import batchnorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from .lazy import LazyModuleMixin

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """Placeholders for the affine parameters and running statistics that exist under the options."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        # built with no features, parameters or statistics; the placeholders take their places
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = torch.tensor(0, dtype=torch.long)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        # as torch: with neither affine parameters nor statistics nothing is lazy and
        # num_features stays 0
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        shape = (self.num_features,)
        for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
            if tensor is not None:
                tensor.materialize(shape)
        self._unwrap_materialized_buffers()  # reset_parameters writes the statistics' final tensors
        self.reset_parameters()


def _lazy_norm_class(eager, base):
    """The lazy twin of `eager`, whose lazy machinery comes before `base` (torch's hierarchy: the lazy
    class is not an instance of the eager one until its first forward)."""
    class _Lazy(_LazyNormBase, base):
        cls_to_become = eager
        _check_input_dim = getattr(eager, "_check_input_dim", base._check_input_dim)
        no_batch_dim = getattr(eager, "no_batch_dim", None)
    return _Lazy


class LazyBatchNorm1d(_lazy_norm_class(BatchNorm1d, _BatchNorm)):
    """BatchNorm1d whose num_features is taken from the first input."""


class LazyBatchNorm2d(_lazy_norm_class(BatchNorm2d, _BatchNorm)):
    """BatchNorm2d whose num_features is taken from the first input."""


class LazyBatchNorm3d(_lazy_norm_class(BatchNorm3d, _BatchNorm)):
    """BatchNorm3d whose num_features is taken from the first input."""


for _cls in (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d):  # Note [Lazy batch norm's home]
    _cls.__module__ = batchnorm.__name__
    setattr(batchnorm, _cls.__name__, _cls)
batchnorm.__all__ = list(batchnorm.__all__) + [n for n in __all__ if n not in batchnorm.__all__]
