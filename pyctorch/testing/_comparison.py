"""torch.testing.assert_close for pyctorch: the same rules, defaults and failure messages as torch's.

The comparison walks `actual` and `expected` together: sequences (not strings) element by
element, mappings key by key, and every leaf pair is compared as None, bool, Python/numpy
number or tensor-like (anything torch.as_tensor accepts, of directly related types). The
first failing leaf raises; its message is torch's, with "The failure occurred for item
[i]['k']" appended for nested inputs.
"""
import cmath
import collections.abc
import warnings

import numpy as np

from .. import _C

__all__ = ["assert_close", "assert_allclose", "default_tolerances"]

# {dtype name: (rtol, atol)} for inexact dtypes; exact dtypes compare with (0, 0)
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
# Python scalars compare with the tolerances of the dtype torch gives them
_NUMBER_DTYPE = {int: "int64", float: "float64", complex: "complex128"}


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def default_tolerances(*inputs, dtype_precisions=None):
    """The loosest (rtol, atol) over the dtypes of `inputs` (tensors or dtypes)."""
    table = _TOLERANCES if dtype_precisions is None else {
        _dtype_name(k): v for k, v in dtype_precisions.items()}
    rtols, atols = [0.0], [0.0]
    for item in inputs:
        if isinstance(item, _C.Tensor):
            item = item.dtype
        elif not isinstance(item, _C.dtype):
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(item)} instead.")
        rtol, atol = table.get(_dtype_name(item), (0.0, 0.0))
        rtols.append(rtol)
        atols.append(atol)
    return max(rtols), max(atols)


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, torch's message and the item path."""

    def __init__(self, exc_type, message, path=()):
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message
        self.path = path

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.exc_type(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([p]) for p in self.path)
        return self.exc_type(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This leaf kind does not handle these inputs; try the next one."""


def _tolerances(names, rtol, atol, path):
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _difference_lines(abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    exact = rtol == 0 and atol == 0
    lines = []
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol), ("relative", rel_diff, rel_idx, rtol)):
        line = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        if not exact:
            line += f" (up to {tol} allowed)"
        lines.append(line)
    return exact, lines


def _mismatch_message(identifier, default_identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    exact, lines = _difference_lines(abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol)
    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    head = f"{identifier} are not {'equal' if exact else 'close'}!\n\n"
    body = (extra.strip() + "\n" if extra else "") + "\n".join(lines)
    return (head + body).strip()


def _scalar_message(actual, expected, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(identifier, "Scalars", f"Expected {expected} but got {actual}.",
                             abs_diff, None, atol, rel_diff, None, rtol)


# ------------------------------------------------------------------ leaves
# Each _pair_* checks whether it handles the inputs (else raises _Unsupported), converts them
# and fixes the tolerances, and returns the comparison to run later: like torch, every pair is
# built before any is compared, so a structural error anywhere wins over a value mismatch.

def _pair_none(actual, expected, path, options):
    if actual is not None and expected is not None:
        raise _Unsupported

    def compare():
        if not (actual is None and expected is None):
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)
    return compare


def _pair_bool(actual, expected, path, options):
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    a, e = bool(actual), bool(expected)

    def compare():
        if a is not e:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {a} is not {e}", path)
    return compare


def _pair_number(actual, expected, path, options):
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    a, e = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPE.get(type(x), "int64") for x in (a, e)],
                             options["rtol"], options["atol"], path)

    def compare():
        if options["check_dtype"] and type(a) is not type(e):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", path)
        if a == e or (options["equal_nan"] and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= atol + rtol * abs(e):
            return
        raise _Mismatch(AssertionError, _scalar_message(a, e, rtol, atol), path)
    return compare


def _as_tensor(value):
    if isinstance(value, _C.Tensor):
        return value
    try:
        from .. import as_tensor
        return as_tensor(value)
    except Exception:
        raise _Unsupported from None


def _unravel(flat, shape):
    index = []
    for size in reversed(tuple(shape)):
        flat, rem = divmod(flat, size)
        index.append(rem)
    return tuple(reversed(index))


def _tensor_message(actual, expected, matches, rtol, atol, identifier=None):
    import pyctorch
    total = matches.numel()
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, ok = actual.flatten(), expected.flatten(), matches.flatten()
    if not a.dtype.is_floating_point and not a.dtype.is_complex:
        a, e = a.to(pyctorch.int64), e.to(pyctorch.int64)  # no wrap-around in the differences
    abs_diff = (a - e).abs()
    abs_diff[ok] = 0  # only mismatches compete for "greatest"
    max_abs, abs_at = pyctorch.max(abs_diff, 0)
    rel_diff = abs_diff / e.abs()
    rel_diff[ok] = 0
    max_rel, rel_at = pyctorch.max(rel_diff, 0)
    return _mismatch_message(identifier, "Tensor-likes", extra,
                             max_abs.item(), _unravel(int(abs_at), matches.shape), atol,
                             max_rel.item(), _unravel(int(rel_at), matches.shape), rtol)


def _compare_values(actual, expected, rtol, atol, equal_nan, path, identifier=None):
    import pyctorch
    matches = pyctorch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        message = _scalar_message(actual.item(), expected.item(), rtol, atol, identifier)
    else:
        message = _tensor_message(actual, expected, matches, rtol, atol, identifier)
    raise _Mismatch(AssertionError, message, path)


def _pair_tensor(actual, expected, path, options):
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not options["allow_subclasses"] and type(actual) is not type(expected)):
        raise _Unsupported
    a, e = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([_dtype_name(a.dtype), _dtype_name(e.dtype)],
                             options["rtol"], options["atol"], path)

    def differ(attribute, x, y):
        raise _Mismatch(AssertionError,
                        f"The values for attribute '{attribute}' do not match: {x} != {y}.", path)

    def compare():
        import pyctorch
        x, y = a, e
        if x.shape != y.shape:
            differ("shape", x.shape, y.shape)
        if x.layout != y.layout:
            if options["check_layout"]:
                differ("layout", x.layout, y.layout)
        elif options["check_stride"] and x.stride() != y.stride():
            differ("stride()", x.stride(), y.stride())
        if options["check_device"] and x.device != y.device:
            differ("device", x.device, y.device)
        if options["check_dtype"] and x.dtype != y.dtype:
            differ("dtype", x.dtype, y.dtype)
        if x.device.type == "meta" or y.device.type == "meta":
            return  # attributes only
        if x.device != y.device:
            x, y = x.cpu(), y.cpu()
        if x.dtype != y.dtype:
            common = pyctorch.promote_types(x.dtype, y.dtype)
            x, y = x.to(common), y.to(common)
        _compare_values(x, y, rtol, atol, options["equal_nan"], path)
    return compare


_PAIRS = (_pair_none, _pair_bool, _pair_number, _pair_tensor)


def _originate(actual, expected, path, options, out):
    """Appends to `out` the comparison of every leaf pair; raises _Mismatch on a structural error."""
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if isinstance(actual, seq) and isinstance(expected, seq) \
            and not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i in range(len(actual)):
            _originate(actual[i], expected[i], path + (i,), options, out)
        return
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _Mismatch(AssertionError,
                            "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}", path)
        try:
            keys = sorted(a_keys)
        except Exception:
            keys = list(a_keys)
        for key in keys:
            _originate(actual[key], expected[key], path + (key,), options, out)
        return
    for make_pair in _PAIRS:
        try:
            out.append(make_pair(actual, expected, path, options))
            return
        except _Unsupported:
            continue
    raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.", path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises AssertionError unless `actual` and `expected` are close, exactly as torch.testing.assert_close.

    Close means |actual - expected| <= atol + rtol * |expected| elementwise (infinities only
    equal to themselves, NaN only with equal_nan=True) with matching shape and, unless
    disabled, device, dtype, layout (and stride with check_stride=True). Default (rtol, atol):
    float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7),
    every other dtype (0, 0); give both or neither. Inputs may be tensors, numpy arrays, Python
    or numpy scalars, None, and sequences or mappings of these. `msg` replaces the message of a
    value mismatch (str) or edits it (a callable taking the generated message); errors in the
    inputs' structure or in the arguments keep torch's own message.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    comparisons = []
    try:
        _originate(actual, expected, (), options, comparisons)
    except _Mismatch as failure:
        raise failure.to_error() from None
    for compare in comparisons:
        try:
            compare()
        except _Mismatch as failure:
            raise failure.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since torch 1.12 in favour of assert_close (looser defaults, no dtype check)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
                  "future release. Please use `torch.testing.assert_close()` instead.",
                  FutureWarning, stacklevel=2)
    import pyctorch
    if not isinstance(actual, _C.Tensor):
        actual = pyctorch.tensor(actual)
    if not isinstance(expected, _C.Tensor):
        expected = pyctorch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        loose = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
        pairs = [loose.get(_dtype_name(t.dtype), (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)

