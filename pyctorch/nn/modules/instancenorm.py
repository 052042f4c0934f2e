"""Instance normalization modules (torch.nn.modules.instancenorm)."""
import warnings

from .batchnorm import _NormBase
from .. import functional as F

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    no_batch_dim = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        nb = self.no_batch_dim
        if input.dim() not in (nb, nb + 1):
            raise ValueError(f"expected {nb}D or {nb + 1}D input (got {input.dim()}D input)")
        feature_dim = input.dim() - nb
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False")
        if input.dim() == nb:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    no_batch_dim = 4


# ---------------------------------------------------------------- lazy variants (nn.modules.lazy)
from ._lazy_norm import _lazy_norm_class  # noqa: E402

__all__ += ["LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyInstanceNorm1d(_lazy_norm_class(InstanceNorm1d, _InstanceNorm)):
    """InstanceNorm1d whose num_features is taken from the first input."""


class LazyInstanceNorm2d(_lazy_norm_class(InstanceNorm2d, _InstanceNorm)):
    """InstanceNorm2d whose num_features is taken from the first input."""


class LazyInstanceNorm3d(_lazy_norm_class(InstanceNorm3d, _InstanceNorm)):
    """InstanceNorm3d whose num_features is taken from the first input."""
