"""Old import path of the less common layers, which now live in the modules where torch defines them
(activation, dropout, instancenorm, normalization, padding, loss, pooling, channelshuffle); kept so code and
checkpoints that name pyctorch.nn.modules.extras.<class> still resolve to the same classes."""
from .activation import (  # noqa: F401
    Hardswish, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink, Softshrink, Hardshrink, SELU, CELU, Threshold, GLU,
    Softmin, Softmax2d, RReLU)
from .dropout import AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .instancenorm import _InstanceNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .normalization import LocalResponseNorm  # noqa: F401
from .padding import ZeroPad3d, ConstantPad3d, ReflectionPad3d, ReplicationPad3d, CircularPad3d  # noqa: F401
from .loss import (MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss,  # noqa: F401
                   MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, PoissonNLLLoss, GaussianNLLLoss)
from .pooling import _LPPoolNd, LPPool1d, LPPool2d  # noqa: F401
from .channelshuffle import ChannelShuffle  # noqa: F401

__all__ = ["Hardswish", "Hardsigmoid", "LogSigmoid", "Softsign", "Tanhshrink", "Softshrink", "Hardshrink", "SELU",
           "CELU", "Threshold", "GLU", "Softmin", "Softmax2d", "RReLU", "AlphaDropout", "FeatureAlphaDropout",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "ZeroPad3d", "ConstantPad3d",
           "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d", "MarginRankingLoss", "HingeEmbeddingLoss",
           "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "LPPool1d", "LPPool2d",
           "ChannelShuffle"]
