"""Precision-recall curve summaries for the pr_curves plugin: a 6 x num_thresholds float tensor of
true/false positives, true/false negatives, precision and recall per threshold."""
import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

from ._convert_np import make_np

# The plugin's own summary op caps thresholds here too; more are refused by its reader.
MAX_THRESHOLDS = 127
# Keeps precision and recall finite where no example reaches a threshold.
_MIN_COUNT = 1e-7


def compute_curve(labels, predictions, num_thresholds, weights=None):
    """Counts and ratios per threshold i / (num_thresholds - 1), from predictions in [0, 1]."""
    weights = 1.0 if weights is None else weights
    positive = labels.astype(np.float64)
    bucket = np.int32(np.floor(predictions * (num_thresholds - 1)))
    span = (0, num_thresholds - 1)
    pos_hist, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=positive * weights)
    neg_hist, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=(1.0 - positive) * weights)
    # an example counts as predicted positive at every threshold at or below its bucket
    tp = np.cumsum(pos_hist[::-1])[::-1]
    fp = np.cumsum(neg_hist[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_MIN_COUNT, tp + fp)
    recall = tp / np.maximum(_MIN_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    plugin = SummaryMetadata.PluginData(plugin_name="pr_curves", content=content)
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in data.shape])
    tensor = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=shape)
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=SummaryMetadata(plugin_data=plugin))])


def pr_curve(tag, labels, predictions, num_thresholds=MAX_THRESHOLDS, weights=None):
    num_thresholds = min(num_thresholds, MAX_THRESHOLDS)
    weights = None if weights is None else make_np(weights)
    data = compute_curve(make_np(labels), make_np(predictions), num_thresholds, weights)
    return _summary(tag, data, num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=MAX_THRESHOLDS):
    data = np.stack([make_np(x) if not isinstance(x, (list, tuple)) else np.asarray(x)
                     for x in (tp, fp, tn, fn, precision, recall)])
    return _summary(tag, data, min(num_thresholds, MAX_THRESHOLDS))
