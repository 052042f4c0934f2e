"""Profiler results: FunctionEvent (one recorded region), FunctionEventAvg (regions grouped
by key), EventList (a list of either, with torch's summary table and the Chrome trace
export). Times are in microseconds, memory in bytes, as in torch.autograd.profiler_util."""
import enum
import os
from collections import OrderedDict

__all__ = ["EventList", "FormattedTimesMixin", "Interval", "Kernel", "FunctionEvent", "FunctionEventAvg",
           "StringTable", "MemRecordsAcc"]


class DeviceType(enum.Enum):
    CPU = 0
    CUDA = 1

    def __str__(self):
        return "DeviceType." + self.name


def _format_time(time_us):
    """'1.234s', '12.345ms' or '123.456us', like torch."""
    if time_us >= 1e6:
        return "%.3fs" % (time_us / 1e6)
    if time_us >= 1e3:
        return "%.3fms" % (time_us / 1e3)
    return "%.3fus" % time_us


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        if time_us != 0:
            raise AssertionError(f"Expected time_us == 0 but got {time_us}")
        return "NaN"
    return "%.2f%%" % (time_us * 100.0 / total_time_us)


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return "%.2f %s" % (nbytes / size, unit)
    return "%d B" % nbytes


class FormattedTimesMixin:
    """The *_str properties of the time fields, and the per-call averages."""

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(self.device_time))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class Kernel:
    def __init__(self, name, device, duration):
        self.name, self.device, self.duration = name, device, duration


class StringTable(dict):
    def __missing__(self, key):
        self[key] = key
        return key


class MemRecordsAcc:
    """Kept for API compatibility: pyctorch attributes memory to events while recording."""

    def __init__(self, mem_records):
        self._mem_records = list(mem_records)

    def in_interval(self, start_us, end_us):
        return iter(())


class FunctionEvent(FormattedTimesMixin):
    """One profiled region: an operator call, a record_function block or a backward node."""

    def __init__(self, id, name, thread, start_us, end_us, fwd_thread=None, input_shapes=None, stack=None,
                 scope=0, use_device=None, cpu_memory_usage=0, device_memory_usage=0, is_async=False,
                 is_remote=False, sequence_nr=-1, node_id=-1, device_type=DeviceType.CPU, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None, concrete_inputs=None,
                 kwinputs=None, is_user_annotation=False, metadata_json=None, overload_name="", input_types=None,
                 category="cpu_op"):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.input_types = input_types
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs or {}
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = device_resource_id if device_resource_id is not None else thread
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.metadata_json = metadata_json
        self.category = category

    def append_kernel(self, name, device, duration):
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    device_time_total = 0
    self_device_time_total = 0
    self_device_memory_usage = 0

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} {self.use_device}_time={self.device_time_str} "
                f"name={self.name} thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {self.use_device}_memory_usage={self.device_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The sum of the events sharing a key (key_averages)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other):
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if self.key is None:  # the first event gives the descriptive fields
            for name in ("key", "node_id", "is_async", "is_remote", "cpu_parent", "cpu_children", "overload_name",
                         "input_shapes", "stack", "scope", "device_type", "is_legacy", "use_device",
                         "is_user_annotation"):
                setattr(self, name, getattr(other, name))
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        dev = self.use_device or "cuda"
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{dev}_time={self.self_device_time_total_str} "
                f"{dev}_time={self.device_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {dev}_memory_usage={self.device_memory_usage}>")


def _step_wildcard(name):
    # the ProfilerStep#N regions of a schedule aggregate into one row
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with the summary helpers."""

    def __init__(self, *args, **kwargs):
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = True

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's summary table: one row per event, sorted by the attribute `sort_by`
        (e.g. "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage", "count")."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width, max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, with_flops=self._with_flops,
                            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                            time_unit=time_unit)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """One FunctionEventAvg per key (the name, and the input shapes / top stack frames when
        grouping by them), in order of first appearance."""
        stats = OrderedDict()
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(evt.overload_name)
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += list(evt.stack[:group_by_stack_n])
            key = tuple(key)
            if key not in stats:
                stats[key] = FunctionEventAvg()
            stats[key].add(evt)
        out = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        for avg in out:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for evt in self:
            total += evt
            total.key = None
        total.key = "Total"
        return total

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace ("traceEvents" of complete "X" events, ts and
        dur in microseconds), which chrome://tracing and Perfetto open."""
        import json
        pid = os.getpid()
        threads = sorted({e.thread for e in self if isinstance(e, FunctionEvent)})
        events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
                  {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
        for tid in threads:
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": f"thread {tid} (python)"}})
        for n, e in enumerate(self):
            if not isinstance(e, FunctionEvent):
                raise RuntimeError("export_chrome_trace() needs the recorded events, not key averages")
            args = {"External id": n + 1}
            if e.input_types is not None:
                args["Input Dims"] = e.input_shapes
                args["Input type"] = e.input_types
            if e.cpu_memory_usage:
                args["CPU Mem"] = e.cpu_memory_usage
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            events.append({"ph": "X", "cat": e.category, "name": e.trace_name, "pid": pid, "tid": e.thread,
                           "ts": round(e.time_range.start, 3), "dur": round(e.time_range.elapsed_us(), 3),
                           "args": args})
        doc = {"schemaVersion": 1, "deviceProperties": [], "record_shapes": int(any(e.input_types is not None for e in self)),
            "displayTimeUnit": "ms", "traceEvents": events, "traceName": str(path)}
        opener = open
        if str(path).endswith(".gz"):
            import gzip
            opener = gzip.open
        with opener(path, "wt") as f:
            json.dump(doc, f)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Folded stacks (for flamegraph.pl): 'frame;frame;...;op value' per event with a stack."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    frames = ";".join(reversed([s.replace(" ", "_") for s in e.stack]))
                    f.write("%s;%s %d\n" % (frames, e.name.replace(" ", "_"), int(getattr(e, metric))))


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    """The fixed-width summary table of torch's profiler (same columns, widths and formats)."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = EventList(sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")), reverse=True),
                           profile_memory=profile_memory, with_flops=with_flops)
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    has_overload = any(e.overload_name for e in events)
    stacks = [e.stack for e in events if e.stack]
    has_stack = bool(stacks)

    name_w = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    shapes_w = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_w = min(shapes_w, max_shapes_column_width)
    src_w = None
    if has_stack:
        src_w = max(len(s) for st in stacks for s in st) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)

    headers = ["Name"] + (["Overload Name"] if has_overload else [])
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    with_node = any(e.node_id != -1 for e in events)
    if with_node:
        headers.append("Node ID")
    widths = [name_w] * (2 if has_overload else 1) + [12] * (len(headers) - (2 if has_overload else 1))
    aligns = [">"] * len(widths)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
        aligns.append(">")
    if has_stack:
        headers.append("Source Location")
        widths.append(src_w)
        aligns.append("<")
    row_format = "".join("{: %s%d}  " % (a, w) for a, w in zip(aligns, widths))
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def unit(t_us, default):
        return {"s": "%.3fs" % (t_us / 1e6), "ms": "%.3fms" % (t_us / 1e3),
                "us": "%.3fus" % t_us}.get(time_unit, default)

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]

    def trim_path(path):
        if len(path) > src_w:
            path = path[len(path) - src_w:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name]
        if has_overload:
            row.append(e.overload_name)
        row += [_format_time_share(e.self_cpu_time_total, total), unit(e.self_cpu_time_total, e.self_cpu_time_total_str),
                _format_time_share(e.cpu_time_total, total) if not e.is_async else 0,
                unit(e.cpu_time_total, e.cpu_time_total_str), unit(e.cpu_time, e.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if with_node:
            row.append(e.node_id)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if has_stack:
            row.append(trim_path(e.stack[0]) if e.stack else "")
        lines.append(row_format.format(*row))
        if has_stack:
            blank = [""] * (len(headers) - 1)
            for frame in e.stack[1:]:
                lines.append(row_format.format(*(blank + [trim_path(frame)])))
            lines.append(row_format.format(*(blank + [""])))
    lines.append(sep)
    lines.append("Self CPU time total: " + unit(total, _format_time(total)))
    return "".join(line + "\n" for line in lines)


def _events_from_records(records, use_device=None, profile_memory=False, with_flops=False, first_id=1):
    """EventList of FunctionEvents from the C recorder's tuples (pyctorch._C._profiler_stop), with
    parent/children links. Names of the schedule's ProfilerStep#N regions are kept as recorded;
    key_averages groups them under "ProfilerStep*"."""
    events = []
    categories = ("cpu_op", "user_annotation", "cpu_op", "cpu_op")
    for i, (name, kind, start, end, tid, parent, mem, shapes, types, stack) in enumerate(records):
        e = FunctionEvent(first_id + i, name, tid, start / 1000.0, end / 1000.0, fwd_thread=tid,
                          input_shapes=shapes if shapes is not None else [], stack=stack, use_device=use_device,
                          cpu_memory_usage=mem, is_user_annotation=kind == 1, input_types=types,
                          category=categories[kind])
        e._record_parent = parent
        if kind == 1:
            e.name = _step_wildcard(name)
            e.trace_name = name
        events.append(e)
    for e in events:
        if e._record_parent >= 0:
            p = events[e._record_parent]
            e.cpu_parent = p
            p.cpu_children.append(e)
        del e._record_parent
    return EventList(events, use_device=use_device, profile_memory=profile_memory, with_flops=with_flops)
