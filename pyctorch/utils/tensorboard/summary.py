"""The Summary protobufs SummaryWriter writes, one builder per kind (torch's module of the same name)."""
from ._custom_scalars import custom_scalars
from ._histogram import histogram, histogram_raw, make_histogram, tensorflow_bins
from ._hparams import hparams
from ._image import image
from ._pr_curve import compute_curve, pr_curve, pr_curve_raw
from ._scalar import scalar
from ._text import text

__all__ = ["custom_scalars", "histogram", "histogram_raw", "make_histogram", "tensorflow_bins", "hparams", "image",
           "compute_curve", "pr_curve", "pr_curve_raw", "scalar", "text"]
