"""TaskSpec and Measurement: what was timed and what came out, with torch's statistics and repr.

Statistics follow torch.utils.benchmark: median and quartiles by linear interpolation, the
significant-figure estimate from the interquartile points (z = 1.645, float32 arithmetic as
torch does it, so tables print the same digits), and the same IQR warnings.
"""
import collections
import contextlib
import dataclasses
import math
import textwrap
from typing import Optional

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGFIGS = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds
_IQR_WARN = 0.1
_IQR_GROSS_WARN = 0.25


def _f32(x):
    """x as a float32 tensor (torch.tensor(python float) is float32 too)."""
    import pyctorch
    return pyctorch.tensor(x, dtype=pyctorch.float32)


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What a Timer runs and how it is labelled (everything but the globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: Optional[str] = None
    sub_label: Optional[str] = None
    description: Optional[str] = None
    env: Optional[str] = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the one-line stmt) with the sub_label after a colon."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self):
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return "setup: " + self.setup

    def summarize(self):
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASK_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(sorted_values, q):
    """Linear-interpolation quantile of an ascending sequence (torch.quantile's default)."""
    rank = q * (len(sorted_values) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    w = rank - lo
    a, b = sorted_values[lo], sorted_values[hi]
    return a + w * (b - a) if w < 0.5 else b - (b - a) * (1 - w)


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of `number_per_run` executions each (`raw_times`), for one TaskSpec.

    The TaskSpec's fields read through (m.label, m.num_threads...). times, median, mean,
    iqr and significant_figures are per single execution, in seconds.
    """
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: Optional[dict] = None

    def __post_init__(self):
        self._sorted = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    def _stats(self):
        if not self.raw_times or self._sorted:
            return
        values = sorted(self.times)
        self._sorted = tuple(values)
        self._median = _quantile(values, 0.5)
        import pyctorch
        self._mean = pyctorch.tensor(values, dtype=pyctorch.float64).mean().item()
        self._p25 = _quantile(values, 0.25)
        self._p75 = _quantile(values, 0.75)
        spread = self.iqr / self.median
        for threshold, hint in ((_IQR_GROSS_WARN, "This suggests significant environmental influence."),
                                (_IQR_WARN, "This could indicate system fluctuation.")):
            if not spread < threshold:
                self._warnings += (f"  WARNING: Interquartile range is {spread * 100:.1f}% of the median "
                                   f"measurement.\n           {hint}",)
                break

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._stats()
        return self._median

    @property
    def mean(self):
        self._stats()
        return self._mean

    @property
    def iqr(self):
        self._stats()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """How many digits of the median the spread of the interquartile points supports (1 to 4)."""
        self._stats()
        n = len(self._sorted)
        points = self._sorted[n // 4:math.ceil(3 * n / 4)]
        std = _f32(list(points)).std(unbiased=False).item()
        ci = max(1.645 * std / math.sqrt(len(points)), _MIN_CONFIDENCE_INTERVAL)
        digits = int(_f32(self._median / ci).log10().floor())
        return min(max(digits, 1), _MAX_SIGFIGS)

    @property
    def has_warnings(self):
        self._stats()
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._stats()
        n = len(self._sorted)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        if n > 1:
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, {threads}")
        else:
            lines.append(f"  {n} measurement, {self.number_per_run} runs , {threads}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct TaskSpec, pooling all per-run times (number_per_run=1)."""
        pooled = collections.OrderedDict()
        for m in measurements:
            pooled.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec) for spec, times in pooled.items()]


def select_unit(t):
    """('ns' | 'us' | 'ms' | 's', seconds per unit) that prints `t` seconds with O(1) digits."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_f32(t).log10().item() // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """`x` rounded to `n` significant figures (in float32, like torch: 3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(_f32(x).abs().log10().ceil().item())
    scale = 10 ** (magnitude - n)
    return float(_f32(x / scale).round() * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run a block with pyctorch.set_num_threads(n), restoring the previous count afterwards."""
    import pyctorch
    before = pyctorch.get_num_threads()
    try:
        pyctorch.set_num_threads(n)
        yield
    finally:
        pyctorch.set_num_threads(before)


