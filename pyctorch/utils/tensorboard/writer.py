"""SummaryWriter: log scalars, histograms, images, text, hyperparameters and more as TensorBoard event files.

The event files are written by tensorboard's own EventFileWriter, and every record is one of
tensorboard's protobuf messages, so TensorBoard reads them as it reads torch's.
"""
import os
import socket
import time
from datetime import datetime

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ._convert_np import make_np
from .summary import (custom_scalars, histogram, histogram_raw, hparams, image, pr_curve, pr_curve_raw, scalar,
                      tensorflow_bins, text)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """One event file in one directory: stamps events with wall time and step and queues them for writing."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


def default_log_dir(comment=""):
    """runs/<Mon><day>_<hh>-<mm>-<ss>_<hostname><comment>, torch's naming, so runs of both sort together."""
    return os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)


class SummaryWriter:
    """Writes summaries for TensorBoard into `log_dir` (default: runs/<datetime>_<hostname><comment>).

    Values may be pyctorch tensors, numpy arrays or Python numbers. `purge_step` tells TensorBoard to
    drop events at or after that step left by a crashed earlier run in the same directory. Events are
    written when `max_queue` are pending, every `flush_secs` seconds, and on flush() and close()."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        self.log_dir = log_dir if log_dir else default_log_dir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = None
        self.all_writers = None  # log dir -> FileWriter: the main one and add_scalars' per-tag ones
        self.default_bins = tensorflow_bins()
        self._get_file_writer()

    def _get_file_writer(self):
        """The main FileWriter; a closed writer opens a new event file when used again, as torch's does."""
        if self.file_writer is None or self.all_writers is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # a START session log at purge_step makes TensorBoard discard the older events from there on
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # ---------------------------------------------------------------------------------------- scalars
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
                  global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several scalars in one chart: each goes to its own run, log_dir/<main_tag with / as _>_<tag>,
        under the tag main_tag."""
        walltime = time.time() if walltime is None else walltime
        main_dir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run_dir = main_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(run_dir)
            if writer is None:
                writer = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[run_dir] = writer
            writer.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_custom_scalars(self, layout):
        """layout: {category: {chart title: ["Multiline", [tags]] or ["Margin", [value, lower, upper]]}}."""
        self._add(custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"a margin chart takes 3 tags (value, lower, upper), got {len(tags)}")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    # ------------------------------------------------------------------------------------- histograms
    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """bins: 'tensorflow' (TensorFlow's exponential buckets) or anything numpy.histogram takes."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,  # noqa: A002
                          global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts): one count per bucket limit is needed.")
        self._add(histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                  global_step, walltime)

    # ----------------------------------------------------------------------------------------- images
    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image laid out as `dataformats` (CHW, HWC, HW, ...): floats in [0, 1], or uint8 in [0, 255]."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (NCHW, NHWC, ...) shown as one grid, 8 a row."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid) rendered to an image."""
        from ._image import figure_to_chw  # matplotlib is imported only here
        if isinstance(figure, list):
            self.add_image(tag, np.stack([figure_to_chw(f, close) for f in figure]), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_chw(figure, close), global_step, walltime, dataformats="CHW")

    # ---------------------------------------------------------------------------------- text, hparams
    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """One hparams-plugin session in the run log_dir/<run_name> (default: the current time): the
        hyperparameters, the metric names, and each metric's value as a scalar there."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("add_hparams: hparam_dict and metric_dict must both be dicts.")
        experiment, session_start, session_end = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run_dir) as run:
            for summary in (experiment, session_start, session_end):
                run.file_writer.add_summary(summary, global_step)
            for name, value in metric_dict.items():
                run.add_scalar(name, value, global_step)

    # -------------------------------------------------------------------------------------- pr curves
    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """labels: 0/1 ground truth; predictions: probabilities in [0, 1] of the positive class."""
        self._add(pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        self._add(pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                               false_negative_counts, precision, recall, num_thresholds), global_step, walltime)

    # -------------------------------------------------------------------------------------- embedding
    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points (N x D) for the projector, with optional labels (N, or N rows of columns) and thumbnails
        (N x C x H x W in [0, 1])."""
        from google.protobuf import text_format
        from tensorboard.compat import tf
        from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

        from . import _embedding
        mat = make_np(mat)
        step = 0 if global_step is None else global_step
        subdir = f"{step:05d}/{_embedding.encode_tag(tag)}"
        logdir = self._get_file_writer().get_logdir()
        folder = os.path.join(logdir, subdir)
        if tf.io.gfile.exists(folder):
            if not tf.io.gfile.isdir(folder):
                raise NotADirectoryError(f"add_embedding: {folder} is a file, not a directory for the embedding")
            print(f"warning: add_embedding overwrites {folder}; give each call its own global_step or tag")
        else:
            tf.io.gfile.makedirs(folder)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError(f"add_embedding: {len(metadata)} metadata rows for {mat.shape[0]} points")
            _embedding.write_metadata(metadata, folder, metadata_header)
        if label_img is not None:
            label_img = make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError(f"add_embedding: {label_img.shape[0]} label images for {mat.shape[0]} points")
            _embedding.write_sprite(label_img, folder)
        if mat.ndim != 2:
            raise AssertionError(f"add_embedding: mat must be 2-D (points x dimensions), got shape {mat.shape}")
        _embedding.write_matrix(mat, folder)
        # one config lists every embedding this writer logged
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.append(
            _embedding.embedding_info(tag, step, subdir, metadata is not None, label_img))
        with tf.io.gfile.GFile(os.path.join(logdir, "projector_config.pbtxt"), "wb") as f:
            f.write(text_format.MessageToString(self._projector_config).encode())

    # ---------------------------------------------------------------------------------- not yet here
    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        raise NotImplementedError(
            "SummaryWriter.add_graph: pyctorch has no graph layer yet (no tracer or JIT to record the model's "
            "graph from), so there is no graph to log; the other add_* methods work.")

    def _not_yet(self, method):
        raise NotImplementedError(f"SummaryWriter.{method} is not implemented in pyctorch yet.")

    def add_onnx_graph(self, prototxt):
        self._not_yet("add_onnx_graph")

    def add_image_with_boxes(self, *args, **kwargs):
        self._not_yet("add_image_with_boxes")

    def add_video(self, *args, **kwargs):
        self._not_yet("add_video")

    def add_audio(self, *args, **kwargs):
        self._not_yet("add_audio")

    def add_mesh(self, *args, **kwargs):
        self._not_yet("add_mesh")

    def add_tensor(self, *args, **kwargs):
        self._not_yet("add_tensor")

    # ---------------------------------------------------------------------------------------- lifetime
    def flush(self):
        """Write everything pending to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        """Flush and close every event file; closing twice is harmless."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
