"""Text rendering of tensors (``repr``/``str``), matching PyTorch's layout.

Everything here works on a duck-typed tensor and only relies on:
``dim()``, ``shape``, ``numel()``, ``dtype`` (with ``is_floating_point`` /
``is_complex``), ``tolist()``, ``t[i]`` and ``t[a:b]`` along dim 0,
``requires_grad``, ``grad_fn`` and ``device``.  All statistics needed to
choose a number format are computed in plain Python from ``tolist()``
values, so no tensor arithmetic is ever dispatched while printing.

The torch-like module (for dtype objects and ``get_default_dtype``) is passed
explicitly; when omitted, ``pyctorch`` is imported lazily (a module-level
import would be circular).
"""

import contextlib
import dataclasses
import math
from typing import Any, Dict, Optional

__all__ = [
    "PrintOptions",
    "PRINT_OPTS",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "tensor_str",
    "tensor_str_with_suffix",
    "tensor_repr",
]


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------


@dataclasses.dataclass
class PrintOptions:
    """Global knobs controlling how tensors are rendered."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


PRINT_OPTS = PrintOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Configure tensor printing (same semantics as ``torch.set_printoptions``).

    ``profile`` ('default', 'short' or 'full') is applied first, then any of
    the explicit numeric options override it.  ``sci_mode`` is always
    assigned, so calling this without it returns to automatic selection.
    Unknown profile names are silently ignored, as in torch.
    """
    if profile is not None:
        preset = _PROFILES.get(profile)
        if preset is not None:
            for key, val in preset.items():
                setattr(PRINT_OPTS, key, val)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> Dict[str, Any]:
    """Current options as a dict usable as ``set_printoptions(**opts)``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily apply ``set_printoptions(**kwargs)`` inside a ``with``."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------
# number formatting
# --------------------------------------------------------------------------


class _ValueFormatter:
    """Chooses one fixed-width style for a set of values and applies it.

    ``values`` are plain Python numbers (the possibly summarized contents).
    For floating data the style is one of: integer-looking (``1.``),
    fixed-point with ``precision`` decimals, or scientific notation.
    """

    __slots__ = ("floating", "int_mode", "sci_mode", "max_width", "precision")

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.precision = PRINT_OPTS.precision

        if not floating:
            widest = 1
            for v in values:
                n = len(str(v))
                if n > widest:
                    widest = n
            self.max_width = widest
            return

        useful = [float(v) for v in values if v == v and v != 0 and not math.isinf(v)]
        if not useful:
            # only zeros / nan / inf: keep the defaults
            return

        magnitudes = [abs(v) for v in useful]
        smallest = min(magnitudes)
        largest = max(magnitudes)

        self.int_mode = all(v.is_integer() for v in useful)

        forced = PRINT_OPTS.sci_mode
        if forced is None:
            self.sci_mode = (
                largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
            )
        else:
            self.sci_mode = forced

        p = self.precision
        if self.sci_mode:
            spec, extra = "." + str(p) + "e", 0
        elif self.int_mode:
            # integral floats get a trailing '.' so reserve a column for it
            spec, extra = ".0f", 1
        else:
            spec, extra = "." + str(p) + "f", 0
        widest = 1
        for v in useful:
            n = len(format(v, spec)) + extra
            if n > widest:
                widest = n
        self.max_width = widest

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            value = float(value)
            if self.sci_mode:
                text = format(value, "%d.%de" % (self.max_width, self.precision))
            elif self.int_mode:
                text = format(value, ".0f")
                if not (math.isnan(value) or math.isinf(value)):
                    text = text + "."
            else:
                text = format(value, ".%df" % self.precision)
        else:
            text = str(value)
        pad = self.max_width - len(text)
        if pad > 0:
            text = " " * pad + text
        return text


class _ComplexFormatter:
    """Pairs a formatter for real parts with one for imaginary parts."""

    def __init__(self, values):
        vals = [complex(v) for v in values]
        self.real = _ValueFormatter([v.real for v in vals], True)
        self.imag = _ValueFormatter([v.imag for v in vals], True)

    def element_width(self):
        # "re" + "im" + "j"
        return self.real.width() + self.imag.width() + 1

    def format(self, value):
        value = complex(value)
        re_txt = self.real.format(value.real)
        im_txt = (self.imag.format(value.imag) + "j").lstrip()
        if im_txt[0] in "+-":
            return re_txt + im_txt
        return re_txt + "+" + im_txt


class _RealFormatterAdapter:
    def __init__(self, inner):
        self.inner = inner

    def element_width(self):
        return self.inner.width()

    def format(self, value):
        return self.inner.format(value)


# --------------------------------------------------------------------------
# data gathering (with summarization)
# --------------------------------------------------------------------------


class _Skip:
    """Marker standing for the elided middle part of a summarized axis."""

    __slots__ = ()

    def __repr__(self):
        return "..."


_SKIP = _Skip()


def _gather(t, ndim, summarize, edge):
    """Nested Python lists of the values that will be shown.

    When summarizing, axes longer than ``2 * edge`` keep only ``edge``
    leading and trailing entries, with ``_SKIP`` in between.
    """
    if ndim == 0 or not summarize:
        return t.tolist()
    n = t.shape[0]
    cut = n > 2 * edge
    if ndim == 1:
        if not cut:
            return t.tolist()
        return t[0:edge].tolist() + [_SKIP] + t[n - edge:n].tolist()
    if cut:
        head = [_gather(t[i], ndim - 1, summarize, edge) for i in range(edge)]
        tail = [_gather(t[i], ndim - 1, summarize, edge) for i in range(n - edge, n)]
        return head + [_SKIP] + tail
    return [_gather(t[i], ndim - 1, summarize, edge) for i in range(n)]


def _flatten(node, ndim, out):
    if ndim == 0:
        out.append(node)
        return out
    if ndim == 1:
        out.extend(v for v in node if v is not _SKIP)
        return out
    for child in node:
        if child is not _SKIP:
            _flatten(child, ndim - 1, out)
    return out


# --------------------------------------------------------------------------
# layout
# --------------------------------------------------------------------------


def _layout_vector(items, indent, fmt):
    # every entry costs its width plus ", "
    slot = fmt.element_width() + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / slot))
    cells = [" ..." if v is _SKIP else fmt.format(v) for v in items]
    rows = []
    for start in range(0, len(cells), per_line):
        rows.append(", ".join(cells[start:start + per_line]))
    sep = ",\n" + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def _layout(node, ndim, indent, fmt):
    if ndim == 0:
        return fmt.format(node)
    if ndim == 1:
        return _layout_vector(node, indent, fmt)
    parts = []
    for child in node:
        if child is _SKIP:
            parts.append("...")
        else:
            parts.append(_layout(child, ndim - 1, indent + 1, fmt))
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _make_formatter(values, dtype):
    if getattr(dtype, "is_complex", False):
        return _ComplexFormatter(values)
    return _RealFormatterAdapter(
        _ValueFormatter(values, bool(getattr(dtype, "is_floating_point", False)))
    )


def tensor_str(t, indent=0):
    """Only the bracketed contents of ``t`` (no ``tensor(`` / suffixes).

    ``indent`` is the column at which the opening bracket sits.
    """
    if t.numel() == 0:
        return "[]"
    ndim = t.dim()
    summarize = t.numel() > PRINT_OPTS.threshold
    edge = PRINT_OPTS.edgeitems
    if summarize and ndim > 0 and not edge:
        return "[...]"
    data = _gather(t, ndim, summarize, edge)
    fmt = _make_formatter(_flatten(data, ndim, []), t.dtype)
    return _layout(data, ndim, indent, fmt)


# --------------------------------------------------------------------------
# full repr
# --------------------------------------------------------------------------


def _join_suffixes(body, suffixes, indent):
    pieces = [body]
    # mirrors torch's (slightly over-estimating) measure of the last line
    current = len(body) - body.rfind("\n") + 1
    limit = PRINT_OPTS.linewidth
    for suffix in suffixes:
        if current + len(suffix) + 2 > limit:
            pieces.append(",\n" + " " * indent + suffix)
            current = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            current += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def _grad_fn_label(t):
    try:
        fn = t.grad_fn
    except RuntimeError:
        return "Invalid"
    if fn is None:
        return None
    name = None
    getter = getattr(fn, "name", None)
    if callable(getter):
        try:
            name = getter()
        except Exception:
            name = None
    if not name:
        name = type(fn).__name__
    return str(name).rsplit("::", 1)[-1]


def _dtype_text(dtype):
    return repr(dtype)


def _default_module():
    import pyctorch  # noqa: WPS433 (lazy on purpose: avoids an import cycle)

    return pyctorch


def tensor_str_with_suffix(t, torch_module=None):
    """The complete ``repr(t)``, e.g. ``tensor([1., 2.], requires_grad=True)``."""
    mod = torch_module if torch_module is not None else _default_module()
    # a subclass prints under its own name, as torch's (Parameter's own repr adds its header to "tensor(")
    subclass = isinstance(t, mod.Tensor) and type(t) is not mod.Tensor and type(t).__name__ != "Parameter"
    prefix = type(t).__name__ + "(" if subclass else "tensor("
    indent = len(prefix)
    suffixes = []

    device = getattr(t, "device", None)
    if device is not None:
        dev_type = getattr(device, "type", "cpu")
        if dev_type != "cpu":
            suffixes.append("device='" + str(device) + "'")

    dtype = t.dtype
    default_dtype = mod.get_default_dtype()
    float64 = getattr(mod, "float64", None)
    if default_dtype == float64 and float64 is not None:
        default_complex = getattr(mod, "complex128", None)
    else:
        default_complex = getattr(mod, "complex64", None)
    implicit = [default_dtype, getattr(mod, "int64", None), getattr(mod, "bool", None)]
    if default_complex is not None:
        implicit.append(default_complex)
    dtype_is_implicit = any(d is not None and dtype == d for d in implicit)

    if getattr(t, "is_meta", False):
        # no values: the size and (unless the default) the dtype stand for them, as torch prints
        suffixes.append("size=" + str(tuple(t.shape)))
        if dtype != default_dtype:
            suffixes.append("dtype=" + _dtype_text(dtype))
        body = "..."
    elif t.numel() == 0:
        # nothing to infer the type/shape from, so spell them out
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if dtype != default_dtype:
            suffixes.append("dtype=" + _dtype_text(dtype))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(t.shape)))
        if not dtype_is_implicit:
            suffixes.append("dtype=" + _dtype_text(dtype))
        body = tensor_str(t, indent)

    grad_label = _grad_fn_label(t)
    if grad_label is not None:
        suffixes.append("grad_fn=<" + grad_label + ">")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")

    return _join_suffixes(prefix + body, suffixes, indent)


# ``str(t)`` and ``repr(t)`` are identical for plain tensors.
tensor_repr = tensor_str_with_suffix
