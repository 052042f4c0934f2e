"""pyctorch.utils.benchmark: Timer, Measurement statistics and repr, Compare tables (as torch's)."""
import random
import re

import numpy as np
import pytest

import pyctorch as P
import pyctorch.utils.benchmark as PB
from pyctorch.utils.benchmark.utils.common import TaskSpec, select_unit, trim_sigfig
from conftest import requires_torch, HAVE_TORCH

if HAVE_TORCH:
    import torch.utils.benchmark as TB


def measurements(B):
    """A fixed set of Measurements (threads, sub_labels, descriptions, envs, warnings) for module B."""
    spec = B.utils.common.TaskSpec
    rng = random.Random(0)
    out = []
    for threads in (1, 4):
        for sub in ("float", "int", None):
            for n, desc in ((1, "n=1"), (100, "n=100"), (10000, "n=10000")):
                base = 2e-6 * n ** 0.7 * (1.5 if sub == "int" else 1) / threads ** 0.5
                noise = 0.3 if (sub == "int" and n == 100) else 0.02
                times = [base * 50 * (1 + noise * rng.random()) for _ in range(rng.choice([1, 3, 7, 12]))]
                out.append(B.Measurement(50, times, spec(
                    stmt="x + y" if sub else "torch.add(x,\n  y)", setup="x = torch.ones(n)\ny = x" if n == 100 else "pass",
                    label="add", sub_label=sub, description=desc, num_threads=threads)))
    out.append(B.Measurement(10, [3.0, 3.1, 2.9, 3.3], spec("sleep()", "pass", label="slow", description="big", env="A")))
    out.append(B.Measurement(10, [1e-8, 1.1e-8, 0.9e-8, 1.2e-8, 1e-8],
                             spec("sleep()", "x = 1", label="slow", description="big", env="BB")))
    out.append(B.Measurement(1000, [2e-4], spec("f()", "pass", description="solo desc")))
    return out


def rendering(B):
    ms = measurements(B)
    text = [re.sub(r" object at 0x[0-9a-f]+", "", repr(m)) for m in ms]
    text += [repr((m.median, m.iqr, m.significant_figures, m.has_warnings, m.times[:2])) for m in ms]
    for options in ((), ("trim",), ("color",), ("rowcolor",), ("warn",), ("trim", "warn", "color")):
        c = B.Compare(ms[:-1])
        if "trim" in options:
            c.trim_significant_figures()
        if "color" in options:
            c.colorize()
        if "rowcolor" in options:
            c.colorize(rowwise=True)
        if "warn" in options:
            c.highlight_warnings()
        text.append(str(c))
    text += [repr(B.utils.common.select_unit(t)) for t in (1e-9, 1e-6, 1.5e-3, 2, 999e-9, 1e-3, 12.0)]
    text += [repr(B.utils.common.trim_sigfig(x, n)) for x, n in ((3.14159, 2), (0.000123456, 3), (98765.4, 1))]
    return [t.replace("pyctorch.utils.benchmark", "torch.utils.benchmark") for t in text]


@requires_torch
def test_repr_and_compare_match_torch():
    ours, theirs = rendering(PB), rendering(TB)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b
    for p, t in zip(measurements(PB), measurements(TB)):
        assert p.mean == pytest.approx(t.mean, rel=1e-12)


def test_measurement_statistics_by_hand():
    m = PB.Measurement(10, [1e-5, 2e-5, 3e-5, 4e-5, 5e-5], TaskSpec("x", "pass", label="L", sub_label="s"))
    assert m.times == pytest.approx([1e-6, 2e-6, 3e-6, 4e-6, 5e-6])
    assert m.median == pytest.approx(3e-6) and m.mean == pytest.approx(3e-6)
    assert m.iqr == pytest.approx(np.percentile(m.times, 75) - np.percentile(m.times, 25))
    assert m.has_warnings and not m.meets_confidence(0.25)
    assert m.label == "L" and m.num_threads == 1 and m.title == "L: s" and m.as_row_name == "s"
    text = repr(m).splitlines()
    assert text[1:] == ["L: s", "  Median: 3.00 us", "  IQR:    2.00 us (2.00 to 4.00)",
                        "  5 measurements, 10 runs per measurement, 1 thread",
                        "  WARNING: Interquartile range is 66.7% of the median measurement.",
                        "           This suggests significant environmental influence."]
    one = PB.Measurement(7, [7e-3], TaskSpec("y = 1", "pass", num_threads=2))
    assert repr(one).splitlines()[1:] == ["y = 1", "  1.00 ms", "  1 measurement, 7 runs , 2 threads"]
    merged = PB.Measurement.merge([m, PB.Measurement(1, [6e-6], m.task_spec), one])
    assert len(merged) == 2 and merged[0].number_per_run == 1 and len(merged[0].times) == 6
    assert select_unit(2.5e-7) == ("ns", 1e-9) and select_unit(0.5) == ("ms", 1e-3)
    assert trim_sigfig(3.14159, 3) == pytest.approx(3.14, rel=1e-6)
    with pytest.raises(ValueError, match="Measurement"):
        PB.Compare([1.0])


def test_timer_runs_and_restores_threads():
    threads = P.get_num_threads()
    seen = []
    t = PB.Timer("x.add(1)", setup="x = torch.ones(8)", label="add", sub_label="f32", description="n=8",
                 num_threads=1)
    m = t.timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.median > 0
    m = t.blocked_autorange(min_run_time=0.02, callback=lambda n, s: seen.append(n))
    assert len(m.raw_times) >= 1 and sum(m.raw_times) >= 0.02 and seen and m.number_per_run == seen[0]
    m2 = PB.Timer("f(y)", globals={"f": P.neg, "y": P.ones(3)}, description="n=8", label="add").adaptive_autorange(
        threshold=0.5, min_run_time=0.01, max_run_time=0.2)
    assert len(m2.times) >= 4 or sum(m2.raw_times) > 0.2
    assert P.get_num_threads() == threads
    table = str(PB.Compare([m, m2]))
    assert table.splitlines()[0].startswith("[") and "f32" in table and "f(y)" in table and "n=8" in table
    with pytest.raises(ValueError, match="str"):
        PB.Timer(lambda: None)
    with pytest.raises(NotImplementedError, match="pyctorch does not implement"):
        PB.Timer("x", language="cpp")
    with pytest.raises(NotImplementedError):
        t.repeat()
