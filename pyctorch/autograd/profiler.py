"""torch.autograd.profiler: the profiler context manager and record_function.

The recording itself is in C (csrc/autograd/profiler.c): every operator call, backward
node and record_function region becomes one event in a C array; this module turns them
into FunctionEvents (pyctorch/autograd/profiler_util.py) when recording stops."""
import functools
from contextlib import ContextDecorator

from .. import _C
from .profiler_util import (EventList, FunctionEvent, FunctionEventAvg, _events_from_records,  # noqa: F401
                            _format_time, _format_memory, DeviceType)

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile:
    """Records the operators run inside the context (torch.autograd.profiler.profile).

    `record_shapes` keeps the input shapes of each operator, `profile_memory` the CPU bytes
    each one allocates (net of frees), `with_stack` the Python stack at each call."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            import warnings
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device is not None and use_device != "cpu":
            raise AssertionError(f"{use_device} is not a valid device for profiling: pyctorch profiles the CPU")
        self.use_device = None
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.entered = False
        self.trace_id = ""
        self._records = None
        self._function_events = None
        self._old_function_events = None
        self._next_id = 1
        self.profiling_start_time_ns = 0
        self.profiling_end_time_ns = 0

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True

    def _start_trace(self):
        self.entered = True
        _C._profiler_start(bool(self.record_shapes), bool(self.profile_memory), bool(self.with_stack))
        self.profiling_start_time_ns = _C._profiler_now_ns()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        records, start, stop, _ = _C._profiler_stop()
        self.profiling_end_time_ns = stop
        self._records = records
        return False

    def _ensure_function_events(self):
        if self._function_events is not None:
            return
        if self._records is None:
            return
        events = _events_from_records(self._records, profile_memory=self.profile_memory,
                                      with_flops=self.with_flops, first_id=self._next_id)
        self._next_id += len(events)
        self._records = None
        if self._old_function_events is not None:
            events = EventList(list(self._old_function_events) + list(events), profile_memory=self.profile_memory,
                               with_flops=self.with_flops)
            self._old_function_events = None
        self._function_events = events

    @property
    def function_events(self):
        self._ensure_function_events()
        return self._function_events

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __repr__(self):
        self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    export_chrome_trace.__doc__ = EventList.export_chrome_trace.__doc__

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """Total time spent on the CPU (the sum of the self times of all events)."""
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def events(self):
        self._check_finish()
        return self.function_events


class record_function(ContextDecorator):
    """Labels a block of code (context manager) or a function (decorator) in the profile:
    with record_function("label"): ...  The label covers every operator run inside it."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        self.record = _C._record_function_enter(self.name)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        record = self.record
        if record is None:
            raise AssertionError("Expected record to be set")
        _C._record_function_exit(record)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped


class emit_nvtx:
    """Accepted for source compatibility: pyctorch has no NVTX ranges to emit."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
