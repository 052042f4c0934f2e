"""The one comparison of a pyctorch outcome with torch's (tests/conftest.py re-exports it).

assert_same(got, expected) checks, recursively through tuples, lists and dicts (torch.return_types, Size and
named tuples included):
  * tensors: a tensor on both sides (a numpy oracle's array: a tensor or an array beside it), the same dtype,
    shape and device, then the values: exactly for integers and bool, within TOL[dtype] for floating dtypes
    (NaN == NaN, an infinity only equals itself);
  * tuples and lists: the same length; a named tuple or struct sequence (torch.return_types.max, Size) the same
    class name and module on both sides; a list on one side and a tuple on the other is a difference;
  * dicts (state dicts): the same keys in the same order, then each value;
  * Python scalars: the same type (bool, int, float), equal (NaN == NaN; floats within rtol/atol when given);
  * None on one side only None on the other; dtypes and devices by name; any other value (strings, numpy
    scalars, classes) equal (==) and of the same type;
  * exceptions (what outcome() returns for a call that raised): pyctorch must raise too, an instance of
    the builtin class torch's exception derives from (RuntimeError, TypeError...; NotImplementedError is
    a RuntimeError), and with exact=True of the same class name; a result on one side and an exception
    on the other fails.
Options (each one a need of some tests; tests/test_comparison.py shows each one failing on what it checks):
  * rtol/atol override the per-dtype tolerances for every dtype; tol= replaces the table;
  * exact=True asks equal values whatever the dtype (indexing, copies, sorting), 0.0 and -0.0 told apart, and the
    same exception class;
  * values=False compares everything but the values (random or uninitialised results, the meta device);
    max_numel skips the values of larger tensors (the fuzzer);
  * check_dtype=False compares the values of tensors whose dtypes may differ (a float64 numpy reference for a
    float32 result), every other check kept;
  * scale_atol=True scales atol by the largest finite |expected| (at least 1): reduced-precision results whose
    error grows with the magnitude of the output (float16 / bfloat16 attention, matmul);
  * message=True asks exceptions of the same class with the same message (what a user reads when torch refuses a
    call), values compared as without it.
"""
import math
import os
import re
import warnings

import numpy as np


class _DeviceMap(dict):
    def get(self, key, default=None):
        return super().get(key, key)


# CUDA runs where torch has no GPU (Note [Simulated CUDA device]; tests/samples.py's TORCH_DEVICE): torch's results are
# on the CPU, pyctorch's must be on the CUDA device the run names.
_EXPECTED_DEVICE = _DeviceMap(
    {"cpu": os.environ["PYCTORCH_TEST_DEVICE"] + ("" if ":" in os.environ["PYCTORCH_TEST_DEVICE"] else ":0")}
    if os.environ.get("PYCTORCH_TEST_DEVICE", "cpu") != "cpu"
    and os.environ.get("PYCTORCH_TEST_TORCH_DEVICE", os.environ.get("PYCTORCH_TEST_DEVICE")) == "cpu" else {})

# (rtol, atol) per dtype: torch.testing.assert_close's defaults.
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
       "complex32": (1e-3, 1e-3), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def dtype_name(x):
    """'float32' for torch.float32, pyctorch.float32, or a tensor of that dtype."""
    return str(getattr(x, "dtype", x)).split(".")[-1]


def is_tensor(x):
    return hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "is_floating_point")


def to_numpy(t):
    """A float64 / int / bool numpy copy of a pyctorch or torch tensor (float16 and bfloat16 widened)."""
    if getattr(t, "_is_zerotensor", lambda: False)():  # torch's efficient zeros have no data to read
        return np.zeros(tuple(t.shape))
    name = dtype_name(t)
    t = t.detach() if hasattr(t, "detach") else t
    if name in ("bfloat16", "float16") or name.startswith("float8"):
        return np.array(t.float().tolist(), dtype=np.float64)
    if name == "complex32":  # no numpy dtype: widened
        return np.array(t.tolist(), dtype=np.complex128)
    return np.array(t.tolist(), dtype=np.bool_ if name == "bool" else np.dtype(name))


def builtin_base(exc_type):
    """The first builtin exception class among exc_type's bases (torch's LinAlgError -> RuntimeError)."""
    for cls in exc_type.__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def outcome(fn):
    """fn()'s result, or the exception it raised (warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
            return e


def assert_same_outcome(fn_got, fn_expected, *args, **kw):
    """Runs both calls (torch's first) and asserts their outcomes agree (assert_same's options); returns them
    (got, expected)."""
    expected = outcome(fn_expected)
    got = outcome(fn_got)
    assert_same(got, expected, *args, **kw)
    return got, expected


def is_array(x):
    """A tensor of either library, or a numpy array (a numpy oracle's result)."""
    return is_tensor(x) or isinstance(x, np.ndarray)


def _class(x):
    """A value's class as compared: its name and its module, pyctorch's modules named as torch's."""
    module = getattr(type(x), "__module__", "") or ""
    return type(x).__name__, "torch" + module[len("pyctorch"):] if module.startswith("pyctorch") else module


def _parts_agree(a, b):
    """Per element: the same NaN-ness and the same infinities (a float array, or a complex one part by part)."""
    with np.errstate(invalid="ignore"):
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            a, b = a.astype(np.complex128), b.astype(np.complex128)
            return _parts_agree(a.real, b.real) & _parts_agree(a.imag, b.imag)
        return (np.isnan(a) == np.isnan(b)) & (np.isinf(a) == np.isinf(b)) & (~np.isinf(b) | (a == b))


def _assert_values(a, b, dtype, rtol, atol, tol, exact, scale_atol, what):
    if a.dtype.kind == "c" and b.dtype.kind == "c" and not exact:
        # complex: NaN and inf part by part (NaN + infj is a value of its own), closeness by the modulus of the
        # difference where both are finite, as torch.testing.assert_close measures it
        r, at = (tol or TOL).get(dtype, (0.0, 0.0))
        r, at = r if rtol is None else rtol, at if atol is None else atol
        if scale_atol:
            finite = np.abs(b[np.isfinite(b)])
            at = at * max(1.0, float(finite.max()) if finite.size else 1.0)
        with np.errstate(invalid="ignore", over="ignore"):
            close = ~(np.isfinite(a) & np.isfinite(b)) | (np.abs(a - b) <= at + r * np.abs(b))
        ok = _parts_agree(a, b) & close
        if not ok.all():
            raise AssertionError(f"{what}: values differ (rtol {r}, atol {at}) at {np.argwhere(~ok)[:5].tolist()}: "
                                 f"{a[~ok][:5].tolist()} != torch {b[~ok][:5].tolist()}")
        return
    if a.dtype.kind == "c" or b.dtype.kind == "c":  # exact: both parts equal, NaN where torch has NaN
        a, b = a.astype(np.complex128), b.astype(np.complex128)
        _assert_values(a.real, b.real, dtype, rtol, atol, tol, True, scale_atol, what + " (real part)")
        _assert_values(a.imag, b.imag, dtype, rtol, atol, tol, True, scale_atol, what + " (imaginary part)")
        return
    if exact or dtype not in (tol or TOL):
        ok = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
        if exact and a.dtype.kind == "f" and b.dtype.kind == "f":  # 0.0 and -0.0 told apart
            ok = ok & ~((b == 0) & (np.signbit(a) != np.signbit(b)))
        if not np.all(ok):
            raise AssertionError(f"{what}: values differ at {np.argwhere(~ok)[:5].tolist()}: "
                                 f"{a[~ok][:5].tolist()} != torch {b[~ok][:5].tolist()}")
        return
    r, at = (tol or TOL)[dtype]
    r, at = r if rtol is None else rtol, at if atol is None else atol
    if scale_atol:
        finite = np.abs(b[np.isfinite(b)])
        at = at * max(1.0, float(finite.max()) if finite.size else 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        same_nan = np.isnan(a) == np.isnan(b)
        inf_ok = (np.isinf(a) == np.isinf(b)) & (~np.isinf(b) | (a == b))
        close = ~(np.isfinite(a) & np.isfinite(b)) | (np.abs(a - b) <= at + r * np.abs(b))
    ok = same_nan & inf_ok & close
    if not ok.all():
        raise AssertionError(f"{what}: values differ (rtol {r}, atol {at}) at {np.argwhere(~ok)[:5].tolist()}: "
                             f"{a[~ok][:5].tolist()} != torch {b[~ok][:5].tolist()}")


def assert_same(got, expected, rtol=None, atol=None, *, tol=None, exact=False, values=True, max_numel=None,
                check_dtype=True, scale_atol=False, message=False, what="result"):
    """got (pyctorch) is the same outcome as expected (torch): see the module's docstring."""
    kw = dict(rtol=rtol, atol=atol, tol=tol, exact=exact, values=values, max_numel=max_numel,
              check_dtype=check_dtype, scale_atol=scale_atol, message=message)
    if isinstance(expected, BaseException) or isinstance(got, BaseException):
        assert isinstance(expected, BaseException), f"{what}: pyctorch raised {type(got).__name__}: {got}; " \
                                                    f"torch returned {expected!r}"
        assert isinstance(got, BaseException), f"{what}: torch raised {type(expected).__name__}: {expected}; " \
                                               f"pyctorch returned {got!r}"
        same_kind = isinstance(got, builtin_base(type(expected)))
        if exact or message:
            same_kind = same_kind and type(got).__name__ == type(expected).__name__
        assert same_kind, f"{what}: pyctorch raised {type(got).__name__}: {got}\n torch raised " \
                          f"{type(expected).__name__}: {expected}"
        if message:
            assert str(got) == str(expected), f"{what}: pyctorch's message {str(got)!r}\n != torch's " \
                                              f"{str(expected)!r}"
        return
    if is_array(expected):
        assert is_tensor(got) if is_tensor(expected) else is_array(got), \
            f"{what}: torch gives a {type(expected).__name__}, pyctorch {type(got).__name__} {got!r}"
        if check_dtype:
            assert dtype_name(got) == dtype_name(expected), f"{what}: dtype {dtype_name(got)} != torch " \
                                                            f"{dtype_name(expected)}"
        assert tuple(got.shape) == tuple(expected.shape), f"{what}: shape {tuple(got.shape)} != torch " \
                                                          f"{tuple(expected.shape)}"
        devices = str(getattr(got, "device", "cpu")), _EXPECTED_DEVICE.get(str(getattr(expected, "device", "cpu")))
        assert devices[0] == devices[1], f"{what}: device {devices[0]} != torch {devices[1]}"
        numel = expected.size if isinstance(expected, np.ndarray) else expected.numel()
        if values and (max_numel is None or numel <= max_numel):
            _assert_values(to_numpy(got), to_numpy(expected), dtype_name(expected), rtol, atol, tol, exact,
                           scale_atol, what)
    elif isinstance(expected, (tuple, list, dict)):
        assert _class(got) == _class(expected), f"{what}: torch gives a {_class(expected)}, pyctorch " \
                                                f"{_class(got)} {got!r}"
        assert len(got) == len(expected), f"{what}: {len(got)} items != torch {len(expected)}"
        if isinstance(expected, dict):
            assert list(got) == list(expected), f"{what}: keys {list(got)} != torch {list(expected)}"
            for k in expected:
                assert_same(got[k], expected[k], what=f"{what}[{k!r}]", **kw)
            return
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, what=f"{what}[{i}]", **kw)
    elif isinstance(expected, (bool, int, float)) and type(expected) in (bool, int, float):
        assert type(got) is type(expected), f"{what}: torch gives {type(expected).__name__} {expected!r}, " \
                                            f"pyctorch {type(got).__name__} {got!r}"
        if not values:
            return
        if isinstance(expected, float) and (math.isnan(expected) or rtol is not None or atol is not None):
            assert (math.isnan(got) and math.isnan(expected)) or \
                math.isclose(got, expected, rel_tol=rtol or 0.0, abs_tol=atol or 0.0), f"{what}: {got!r} != torch " \
                                                                                     f"{expected!r}"
        else:
            assert got == expected, f"{what}: {got!r} != torch {expected!r}"
            if exact and isinstance(expected, float) and expected == 0:
                assert math.copysign(1, got) == math.copysign(1, expected), f"{what}: {got!r} != torch {expected!r}"
    elif expected is None:
        assert got is None, f"{what}: torch gives None, pyctorch {got!r}"
    elif type(expected).__name__ in ("dtype", "device", "str", "layout", "memory_format"):
        assert str(got) == str(expected), f"{what}: {got!r} != torch {expected!r}"
    else:
        assert type(got).__name__ == type(expected).__name__ and got == expected, \
            f"{what}: {type(got).__name__} {got!r} != torch {type(expected).__name__} {expected!r}"


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def assert_same_text(got, expected, rtol, atol, exact_prefixes=()):
    """Printed output (a script's, a library's): the same lines with the same words, the numbers in them within
    rtol/atol (NaN == NaN), and the lines starting with one of exact_prefixes (sampled tokens) identical."""
    got_lines, want_lines = got.strip().splitlines(), expected.strip().splitlines()
    assert len(got_lines) == len(want_lines), f"\npyctorch:\n{got}\ntorch:\n{expected}"
    for a, b in zip(got_lines, want_lines):
        if a.startswith(tuple(exact_prefixes)) or b.startswith(tuple(exact_prefixes)):
            assert a == b, f"line differs: {a!r} vs torch {b!r}"
            continue
        assert _NUMBER.sub("#", a) == _NUMBER.sub("#", b), f"line differs: {a!r} vs torch {b!r}"
        numbers = [np.array([float(x) for x in _NUMBER.findall(line)]) for line in (a, b)]
        _assert_values(numbers[0], numbers[1], "float64", rtol, atol, None, False, False, f"{a!r} vs torch {b!r}")
