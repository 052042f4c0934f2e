"""Histogram summaries: numpy binning, optional merging down to max_bins, empty edge buckets trimmed."""
import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary

from ._convert_np import make_np


def tensorflow_bins():
    """The bucket edges TensorFlow's histogram op uses: +-1e-12 growing by 10% per bucket up to 1e20, and 0.

    Built by repeated multiplication (not powers) so every edge is bit-identical to the edges other
    writers (TensorFlow, torch) use, and the buckets of the same data compare equal."""
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0] + positive


def _merge_bins(counts, edges, max_bins):
    """Sum groups of neighbouring bins so at most about max_bins remain (the last group may be padded)."""
    group = len(counts) // max_bins
    padded = -len(counts) % group
    counts = np.concatenate([counts, np.zeros(padded, counts.dtype)]).reshape(-1, group).sum(axis=1)
    edges = np.concatenate([edges[:-1:group], edges[-1:]])
    return counts, edges


def _trim_empty_ends(counts, edges):
    """Keep the non-empty span of bins plus one empty bin before it, as (upper limits, counts).

    TensorBoard draws each bucket from the previous limit to its own; the empty leading bucket gives
    the first real bucket its lower edge."""
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("The histogram is empty: no value fell inside the bins.")
    first, last = int(nonzero[0]), int(nonzero[-1])
    leading = counts[first - 1] if first > 0 else 0
    kept_counts = [leading] + counts[first:last + 1].tolist()
    kept_limits = edges[first:last + 2].tolist()
    return kept_limits, kept_counts


def make_histogram(values, bins, max_bins=None):
    """A HistogramProto of `values` (any shape) binned with numpy's `bins` specification."""
    flat = np.asarray(values, dtype=float).reshape(-1)
    if flat.size == 0:
        raise ValueError("add_histogram: no values to bin (an empty input).")
    counts, edges = np.histogram(flat, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, edges = _merge_bins(counts, edges, max_bins)
    limits, kept_counts = _trim_empty_ends(counts, edges)
    return HistogramProto(min=flat.min(), max=flat.max(), num=flat.size, sum=flat.sum(),
                          sum_squares=flat.dot(flat), bucket_limit=limits, bucket=kept_counts)


def histogram(name, values, bins, max_bins=None):
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values), bins, max_bins))])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002 (torch's names)
    """A histogram whose buckets the caller computed."""
    def as_floats(seq):  # lists, numpy arrays and tensors alike
        return np.asarray(seq if isinstance(seq, (list, tuple)) else make_np(seq), dtype=float).reshape(-1).tolist()

    proto = HistogramProto(min=float(min), max=float(max), num=float(num), sum=float(sum),
                           sum_squares=float(sum_squares), bucket_limit=as_floats(bucket_limits),
                           bucket=as_floats(bucket_counts))
    return Summary(value=[Summary.Value(tag=name, histo=proto)])
