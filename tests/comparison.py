"""The one comparison of a pyctorch outcome with torch's (tests/conftest.py re-exports it).

assert_same(got, expected) checks, recursively through tuples and lists (torch.return_types and Size
included):
  * tensors: a tensor on both sides, the same dtype and shape, then the values: exactly for integers and
    bool, within TOL[dtype] for floating dtypes (NaN == NaN, an infinity only equals itself);
  * Python scalars: the same type (bool, int, float), equal (NaN == NaN; floats within rtol/atol when given);
  * None on one side only None on the other; dtypes and devices by name; strings equal;
  * exceptions (what outcome() returns for a call that raised): pyctorch must raise too, an instance of
    the builtin class torch's exception derives from (RuntimeError, TypeError...; NotImplementedError is
    a RuntimeError), and with exact=True of the same class name; a result on one side and an exception
    on the other fails.
Options: rtol/atol override the per-dtype tolerances for every dtype, tol= replaces the table, exact=True
asks equal values whatever the dtype (indexing, copies) and the same exception class, values=False compares dtype and shape only
(random or uninitialised results, the meta device), max_numel skips the values of larger tensors.
"""
import math
import warnings

import numpy as np

# (rtol, atol) per dtype: torch.testing.assert_close's defaults.
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}
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
    if name in ("bfloat16", "float16"):
        return np.array(t.float().tolist(), dtype=np.float64)
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


def assert_same_outcome(fn_got, fn_expected, **kw):
    """Runs both calls (torch's first) and asserts their outcomes agree; returns them (got, expected)."""
    expected = outcome(fn_expected)
    got = outcome(fn_got)
    assert_same(got, expected, **kw)
    return got, expected


def _assert_values(a, b, dtype, rtol, atol, tol, exact, what):
    if exact or dtype not in (tol or TOL):
        ok = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
        if not np.all(ok):
            raise AssertionError(f"{what}: values differ at {np.argwhere(~ok)[:5].tolist()}: "
                                 f"{a[~ok][:5].tolist()} != torch {b[~ok][:5].tolist()}")
        return
    r, at = (tol or TOL)[dtype]
    r, at = r if rtol is None else rtol, at if atol is None else atol
    with np.errstate(invalid="ignore", over="ignore"):
        same_nan = np.isnan(a) == np.isnan(b)
        inf_ok = (np.isinf(a) == np.isinf(b)) & (~np.isinf(b) | (a == b))
        close = ~(np.isfinite(a) & np.isfinite(b)) | (np.abs(a - b) <= at + r * np.abs(b))
    ok = same_nan & inf_ok & close
    if not ok.all():
        raise AssertionError(f"{what}: values differ (rtol {r}, atol {at}) at {np.argwhere(~ok)[:5].tolist()}: "
                             f"{a[~ok][:5].tolist()} != torch {b[~ok][:5].tolist()}")


def assert_same(got, expected, rtol=None, atol=None, *, tol=None, exact=False, values=True, max_numel=None,
                what="result"):
    """got (pyctorch) is the same outcome as expected (torch): see the module's docstring."""
    kw = dict(rtol=rtol, atol=atol, tol=tol, exact=exact, values=values, max_numel=max_numel)
    if isinstance(expected, BaseException) or isinstance(got, BaseException):
        assert isinstance(expected, BaseException), f"{what}: pyctorch raised {type(got).__name__}: {got}; " \
                                                    f"torch returned {expected!r}"
        assert isinstance(got, BaseException), f"{what}: torch raised {type(expected).__name__}: {expected}; " \
                                               f"pyctorch returned {got!r}"
        same_kind = isinstance(got, builtin_base(type(expected)))
        if exact:
            same_kind = same_kind and type(got).__name__ == type(expected).__name__
        assert same_kind, f"{what}: pyctorch raised {type(got).__name__}: {got}\n torch raised " \
                          f"{type(expected).__name__}: {expected}"
        return
    if is_tensor(expected):
        assert is_tensor(got), f"{what}: torch gives a Tensor, pyctorch {type(got).__name__} {got!r}"
        assert dtype_name(got) == dtype_name(expected), f"{what}: dtype {dtype_name(got)} != torch " \
                                                        f"{dtype_name(expected)}"
        assert tuple(got.shape) == tuple(expected.shape), f"{what}: shape {tuple(got.shape)} != torch " \
                                                          f"{tuple(expected.shape)}"
        if values and (max_numel is None or expected.numel() <= max_numel):
            _assert_values(to_numpy(got), to_numpy(expected), dtype_name(expected), rtol, atol, tol, exact, what)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{what}: torch gives a {type(expected).__name__}, pyctorch " \
                                               f"{type(got).__name__} {got!r}"
        assert len(got) == len(expected), f"{what}: {len(got)} items != torch {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, what=f"{what}[{i}]", **kw)
    elif isinstance(expected, (bool, int, float)):
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
    elif expected is None:
        assert got is None, f"{what}: torch gives None, pyctorch {got!r}"
    elif type(expected).__name__ in ("dtype", "device", "str", "layout", "memory_format"):
        assert str(got) == str(expected), f"{what}: {got!r} != torch {expected!r}"
