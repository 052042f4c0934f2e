"""torch.profiler / torch.autograd.profiler: events recorded in C at the op-call entry (names,
nesting, shapes, memory, stacks, backward nodes), key_averages tables in torch's layout, the
Chrome trace export, schedules and step(), record_function; compared with torch where its
output is deterministic (table layout, schedule actions, recorded top-level op names)."""
import gzip
import json
import os
import threading

import pytest

import pyctorch
from pyctorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule
from conftest import requires_torch, torch

LONG = "x" * 60  # a name as wide as the name column, so both tables use the same widths


def work(lib):
    a = lib.ones(3, 4)
    b = lib.ones(3, 4)
    with lib.profiler.record_function(LONG):
        c = a + b
        d = c * a
    return d.sum()


def ops_of(events):
    return [e.name for e in events if e.name.startswith("aten::")]


def test_ops_recorded_with_aten_names_and_nesting():
    a, b = pyctorch.ones(3, 4), pyctorch.ones(3, 4)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("block"):
            c = a.add(b)
            a.mul_(2)
        c.sum()
    ev = prof.events()
    names = [e.name for e in ev]
    assert names == ["block", "aten::add", "aten::mul_", "aten::sum"]
    blk = ev[0]
    assert [ch.name for ch in blk.cpu_children] == ["aten::add", "aten::mul_"]
    assert ev[1].cpu_parent is blk and ev[3].cpu_parent is None
    for e in ev:
        assert e.time_range.end >= e.time_range.start
        assert e.thread == threading.get_native_id()
    # self time = total minus the children's totals
    kids = sum(ch.cpu_time_total for ch in blk.cpu_children)
    assert blk.self_cpu_time_total == pytest.approx(blk.cpu_time_total - kids)
    assert blk.is_user_annotation and not ev[1].is_user_annotation


def test_nothing_recorded_outside_and_record_function_is_cheap_noop():
    with record_function("outside"):  # no profiler: a no-op
        pyctorch.ones(2).add(1)
    with profile() as prof:
        pyctorch.ones(2)
    pyctorch.ones(2).add(1)
    assert ops_of(prof.events()) == ["aten::ones"]
    assert not pyctorch._C._profiler_enabled()


def test_record_function_decorator_and_autograd_aliases():
    @record_function("my_fn")
    def f(x):
        return x * 2

    with pyctorch.autograd.profiler.profile() as prof:
        f(pyctorch.ones(2))
        with pyctorch.autograd.profiler.record_function("inner"):
            pyctorch.ones(1)
    names = [e.name for e in prof.function_events]
    assert names[:3] == ["aten::ones", "my_fn", "aten::mul"] and "inner" in names
    assert pyctorch.profiler.record_function is pyctorch.autograd.profiler.record_function


def test_backward_events():
    x = pyctorch.ones(3, requires_grad=True)
    with profile() as prof:
        (x * 2).sum().backward()
    names = [e.name for e in prof.events()]
    assert "autograd::engine::evaluate_function: MulBackward0" in names
    assert "autograd::engine::evaluate_function: SumBackward0" in names
    ev = {e.name: e for e in prof.events()}
    assert ev["MulBackward0"].cpu_parent.name == "autograd::engine::evaluate_function: MulBackward0"
    # the backward's own ops nest under the node event
    inside = [c.name for c in ev["MulBackward0"].cpu_children]
    assert inside and all(n.startswith("aten::") for n in inside)
    assert "torch::autograd::AccumulateGrad" in names


def test_record_shapes_and_types():
    a = pyctorch.ones(2, 3)
    with profile(record_shapes=True) as prof:
        pyctorch.add(a, a)
        a.add(1.5)
        pyctorch.cat([a, a])
    ev = prof.events()
    assert ev[0].input_shapes == [[2, 3], [2, 3], []]
    assert ev[1].input_shapes[:2] == [[2, 3], []]
    assert ev[0].input_types[:2] == ["float", "float"] and ev[1].input_types[1] == "Scalar"
    assert ev[2].input_shapes[0] == []  # tensor lists read [] as in torch
    t = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in t and "[[2, 3], [2, 3], []]" in t
    assert "Input Shapes" not in prof.key_averages().table()


def test_profile_memory():
    with profile(profile_memory=True) as prof:
        x = pyctorch.empty(1000)  # 4000 bytes, kept
        y = pyctorch.ones(10) + 1
        del y
    ev = prof.events()
    assert ev[0].name == "aten::empty" and ev[0].cpu_memory_usage == 4000
    assert ev[0].self_cpu_memory_usage == 4000
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::empty"].cpu_memory_usage == 4000
    table = prof.key_averages().table(sort_by="cpu_memory_usage")
    assert "CPU Mem" in table and "Self CPU Mem" in table and "3.91 KB" in table
    del x


def test_with_stack():
    with profile(with_stack=True) as prof:
        pyctorch.ones(2)
    stack = prof.events()[0].stack
    assert stack and os.path.basename(__file__) in stack[0] and "test_with_stack" in stack[0]
    t = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in t


def test_key_averages_counts_sorting_and_totals():
    a = pyctorch.ones(4)
    with profile() as prof:
        for _ in range(5):
            a.add(1)
        a.sum()
    avg = prof.key_averages()
    by = {e.key: e for e in avg}
    assert by["aten::add"].count == 5 and by["aten::sum"].count == 1
    assert by["aten::add"].cpu_time == pytest.approx(by["aten::add"].cpu_time_total / 5)
    rows = [line.split()[0] for line in avg.table(sort_by="count").splitlines()[3:-2]]
    assert rows[0] == "aten::add"
    totals = [e.cpu_time_total for e in sorted(avg, key=lambda e: -e.cpu_time_total)]
    table = avg.table(sort_by="cpu_time_total", row_limit=1)
    assert len(table.splitlines()) == 6  # sep, header, sep, one row, sep, total
    assert table.splitlines()[-1].startswith("Self CPU time total: ")
    assert prof.profiler.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in prof.events()))
    assert totals[0] >= totals[-1]
    assert avg.total_average().count == 6


@requires_torch
@pytest.mark.parametrize("memory", [False, True])
@pytest.mark.parametrize("shapes", [False, True])
def test_table_layout_matches_torch(memory, shapes):
    """Same header, separator and column widths as torch's table for the same options."""
    tables = []
    for lib in (pyctorch, torch):
        with lib.profiler.profile(record_shapes=shapes, profile_memory=memory) as prof:
            work(lib)
        tables.append(prof.key_averages(group_by_input_shape=shapes).table(
            sort_by="self_cpu_time_total", row_limit=4, max_shapes_column_width=30))
    p, t = (x.splitlines() for x in tables)
    assert p[0] == t[0] and p[1] == t[1] and p[2] == t[2]  # separator, header, separator
    assert p[-2] == t[-2] and p[-1].split(":")[0] == t[-1].split(":")[0]
    assert len(p[3]) == len(t[3])  # row width


@requires_torch
def test_top_level_ops_match_torch():
    names = []
    for lib in (pyctorch, torch):
        a = lib.ones(2, 2)
        with lib.profiler.profile() as prof:
            b = a + a
            c = b * a
            c.sum()
            lib.matmul(a, a)
        names.append([e.name for e in prof.events() if e.cpu_parent is None])
    assert names[0] == names[1]


@requires_torch
def test_schedule_matches_torch():
    for kw in (dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1), dict(wait=0, warmup=2, active=1),
               dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3, skip_first_wait=1)):
        with pytest.warns(UserWarning) if kw["warmup"] == 0 else _nullcontext():
            ps = schedule(**kw)
        ts = torch.profiler.schedule(**kw)
        assert [ps(i).name for i in range(20)] == [ts(i).name for i in range(20)]
    with pytest.raises(AssertionError):
        schedule(wait=0, warmup=0, active=0)


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")  # torch warns the same
def test_schedule_steps_and_on_trace_ready():
    ready = []

    def handler(p):
        ready.append(sorted({e.key for e in p.key_averages()}))

    x = pyctorch.ones(2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=handler) as p:
        for step in range(10):
            x.add(step)
            p.step()
    assert len(ready) == 2
    for keys in ready:
        assert "ProfilerStep*" in keys and "aten::add" in keys
    assert p.step_num == 10


def test_start_stop_api_and_steps_recorded():
    p = profile(schedule=schedule(wait=0, warmup=1, active=2, repeat=1))
    p.start()
    for _ in range(4):
        pyctorch.ones(3).sum()
        p.step()
    p.stop()
    steps = [e for e in p.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#1", "ProfilerStep#2"]
    assert all(any(c.name == "aten::sum" for c in s.cpu_children) for s in steps)


def test_profiler_not_reentrant_and_nested_error():
    with profile():
        with pytest.raises(RuntimeError):
            pyctorch._C._profiler_start(False, False, False)
    p = pyctorch.autograd.profiler.profile()
    with pytest.raises(RuntimeError, match="finish"):
        p.key_averages()


def test_export_chrome_trace(tmp_path):
    a = pyctorch.ones(2, 3)
    with profile(record_shapes=True) as prof:
        with record_function("region"):
            a.add(a)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    assert [e["name"] for e in ev] == ["region", "aten::add"]
    for e in ev:
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        assert e["pid"] == os.getpid() and e["tid"] == threading.get_native_id()
    assert ev[1]["args"]["Input Dims"][:2] == [[2, 3], [2, 3]]
    assert ev[0]["cat"] == "user_annotation" and ev[1]["cat"] == "cpu_op"
    # the op lies inside the region in time (Perfetto nests by time)
    assert ev[0]["ts"] <= ev[1]["ts"] and ev[1]["ts"] + ev[1]["dur"] <= ev[0]["ts"] + ev[0]["dur"] + 1e-3
    assert any(e.get("ph") == "M" and e["name"] == "thread_name" for e in doc["traceEvents"])


def test_tensorboard_trace_handler(tmp_path):
    d = tmp_path / "tb"
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=pyctorch.profiler.tensorboard_trace_handler(str(d), worker_name="w", use_gzip=True)) as p:
        for _ in range(3):
            pyctorch.ones(2)
            p.step()
    files = os.listdir(d)
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(".pt.trace.json.gz")
    with gzip.open(d / files[0], "rt") as f:
        assert "traceEvents" in json.load(f)


def test_other_threads_recorded_with_their_ids():
    tids = {}

    def run():
        tids["worker"] = threading.get_native_id()
        pyctorch.ones(5).sum()

    with profile() as prof:
        t = threading.Thread(target=run)
        t.start()
        t.join()
        pyctorch.ones(1)
    threads = {e.thread for e in prof.events()}
    assert tids["worker"] in threads and threading.get_native_id() in threads


def test_events_survive_exceptions_and_unclosed_regions():
    with profile() as prof:
        r = record_function("open")
        r.__enter__()  # never exited: closed at stop
        with pytest.raises(RuntimeError):
            pyctorch.ones(2, 3) @ pyctorch.ones(2, 3)
    names = [e.name for e in prof.events()]
    assert names[0] == "open" and "aten::matmul" in names
    assert prof.events()[0].time_range.end >= prof.events()[-1].time_range.end - 1e-3


def test_supported_activities_and_actions():
    assert ProfilerActivity.CPU in pyctorch.profiler.supported_activities()
    assert [a.name for a in ProfilerAction] == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"]
    with pytest.raises(ValueError):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CPU])
