"""The generic op test, driven by the op table: every pointwise entry runs against torch on
inputs of every dtype, broadcast and non-contiguous layouts, 0-d and empty tensors, with
Python scalars; function, method, in-place and out= forms; and bad inputs must raise the
exception type torch raises."""
import math

import numpy as np
import pytest

import pyctorch
from conftest import DTYPE_NAMES, assert_same, requires_torch, torch

TABLE = pyctorch._C._op_table()
UNARY = [e for e in TABLE if e["kind"] == "unary"]
BINARY = [e for e in TABLE if e["kind"] == "binary" and not e["name"].startswith("_")]


def values_for(dtype, shape, rng, positive=False):
    """Sample values that exercise a dtype (negative, zero, fractions, large)."""
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dtype == "uint8":
        v = rng.integers(0, 20, n)
    elif dtype.startswith("int"):
        v = rng.integers(1 if positive else -9, 10, n)
    else:
        v = rng.uniform(0.1 if positive else -3, 3, n).round(3)
    return v.reshape(shape).tolist() if shape else v[0].item()


def make_pair(values, dtype, layout):
    """The same values as a torch and a pyctorch tensor, with the requested layout."""
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    p = pyctorch.tensor(values, dtype=getattr(pyctorch, dtype))
    if layout == "transposed":
        t, p = t.t(), p.t()
    elif layout == "strided":
        t, p = t[:, ::2], p[:, ::2]
    return p, t


LAYOUTS = {  # layout name -> base shape before the layout transform
    "contiguous": (3, 4),
    "transposed": (4, 3),
    "strided": (3, 6),
    "zero_dim": (),
    "empty": (0, 3),
}


def run_both(fn_p, fn_t):
    """Runs the same call in both libraries; both raise the same exception type, or both return."""
    try:
        expected = fn_t()
    except Exception as e:  # torch refuses: pyctorch must refuse the same way
        with pytest.raises(type(e)):
            fn_p()
        return None, None
    return fn_p(), expected


def domain_positive(name):
    return name in {"sqrt", "rsqrt", "log", "log2", "log10", "acosh", "pow", "float_power", "reciprocal", "xlogy"}


@requires_torch
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("entry", UNARY, ids=lambda e: e["id"])
def test_unary(entry, dtype, layout):
    name = entry["name"]
    rng = np.random.default_rng(0)
    vals = values_for(dtype, LAYOUTS[layout], rng, positive=domain_positive(name))
    if name in {"asin", "acos", "atanh", "erfinv"} and dtype.startswith("float"):
        vals = (np.asarray(vals) / 4).tolist()
    p, t = make_pair(vals, dtype, layout)
    got, exp = run_both(lambda: getattr(pyctorch, name)(p), lambda: getattr(torch, name)(t))
    if exp is not None:
        assert_same(got, exp)
    if "M" in entry["variants"]:
        got, exp = run_both(lambda: getattr(p, name)(), lambda: getattr(t, name)())
        if exp is not None:
            assert_same(got, exp)
    if "I" in entry["variants"]:
        p2, t2 = make_pair(vals, dtype, layout)
        got, exp = run_both(lambda: getattr(p2, name + "_")(), lambda: getattr(t2, name + "_")())
        if exp is not None:
            assert got is p2
            assert_same(p2, t2)


BINARY_CASES = {  # name -> (shape a, shape b or "scalar_int"/"scalar_float")
    "same": ((3, 4), (3, 4)),
    "broadcast": ((3, 1), (1, 4)),
    "zero_dim_b": ((2, 3), ()),
    "empty": ((0, 3), (1, 3)),
    "scalar_int": ((2, 3), "int"),
    "scalar_float": ((2, 3), "float"),
    "transposed": ((4, 3), (4, 3)),
}


@requires_torch
@pytest.mark.parametrize("case", list(BINARY_CASES))
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("entry", BINARY, ids=lambda e: e["id"])
def test_binary(entry, dtype, case):
    name = entry["name"]
    rng = np.random.default_rng(1)
    sa, sb = BINARY_CASES[case]
    positive = domain_positive(name) or name in {"floor_divide", "remainder", "fmod", "div", "divide", "true_divide"}
    pa, ta = make_pair(values_for(dtype, sa, rng, positive), dtype, "contiguous")
    if sb == "int":
        pb = tb = 3
    elif sb == "float":
        pb = tb = 2.5
    else:
        pb, tb = make_pair(values_for(dtype, sb, rng, positive), dtype, "contiguous")
    if case == "transposed":
        pa, ta, pb, tb = pa.t(), ta.t(), pb.t(), tb.t()
    got, exp = run_both(lambda: getattr(pyctorch, name)(pa, pb), lambda: getattr(torch, name)(ta, tb))
    if exp is not None:
        assert_same(got, exp)
    if "M" in entry["variants"]:
        got, exp = run_both(lambda: getattr(pa, name)(pb), lambda: getattr(ta, name)(tb))
        if exp is not None:
            assert_same(got, exp)
    if "I" in entry["variants"]:
        pc, tc = pa.clone(), ta.clone()
        got, exp = run_both(lambda: getattr(pc, name + "_")(pb), lambda: getattr(tc, name + "_")(tb))
        if exp is not None:
            assert_same(pc, tc)


@requires_torch
@pytest.mark.parametrize("entry", [e for e in BINARY if "out=None" in e["schema"]], ids=lambda e: e["id"])
def test_binary_out(entry):
    name = entry["name"]
    pa, ta = make_pair([[1.5, 2.0], [3.0, 4.0]], "float32", "contiguous")
    pb, tb = make_pair([2.0, 0.5], "float32", "contiguous")
    # a wrongly shaped out= is resized; a float64 out receives a cast result
    po, to = pyctorch.empty(1, dtype=pyctorch.float64), torch.empty(1, dtype=torch.float64)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, exp = run_both(lambda: getattr(pyctorch, name)(pa, pb, out=po), lambda: getattr(torch, name)(ta, tb, out=to))
    if exp is not None:
        assert got is po
        assert_same(po, to)


@requires_torch
@pytest.mark.parametrize("a_dtype,b_dtype", [("int32", "float64"), ("uint8", "int8"), ("bool", "int16"),
                                             ("float16", "bfloat16"), ("int64", "float16"), ("bool", "bool")])
@pytest.mark.parametrize("op", ["add", "mul", "div", "eq", "maximum"])
def test_mixed_dtype_promotion(op, a_dtype, b_dtype):
    pa, ta = make_pair([[1, 0, 1]], a_dtype, "contiguous")
    pb, tb = make_pair([1, 1, 0], b_dtype, "contiguous")
    for a, b in [(0, 0), (1, 1)]:
        got, exp = run_both(lambda: getattr(pyctorch, op)(pa if a else pa[0, 0], pb),
                            lambda: getattr(torch, op)(ta if a else ta[0, 0], tb))
        if exp is not None:
            assert_same(got, exp)


@pytest.mark.parametrize("a,b", [(pyctorch.int32, pyctorch.float16), (pyctorch.uint8, pyctorch.int8),
                                 (pyctorch.bool, pyctorch.bool), (pyctorch.float16, pyctorch.bfloat16)])
def test_promote_types_table(a, b):
    expected = {("int32", "float16"): "float16", ("uint8", "int8"): "int16", ("bool", "bool"): "bool",
                ("float16", "bfloat16"): "float32"}
    key = (repr(a).split(".")[1], repr(b).split(".")[1])
    assert repr(pyctorch.promote_types(a, b)) == "torch." + expected[key]


def test_scalar_promotion_rules():
    i = pyctorch.tensor([1, 2])
    assert (i + 2.5).dtype == pyctorch.float32
    assert (i + 2).dtype == pyctorch.int64
    assert (pyctorch.tensor([1, 2], dtype=pyctorch.uint8) + 1000).dtype == pyctorch.uint8
    assert (pyctorch.tensor([True]) + 1).dtype == pyctorch.int64
    assert (pyctorch.tensor([1.0], dtype=pyctorch.float16) * 2.5).dtype == pyctorch.float16
    assert (i / 2).tolist() == [0.5, 1.0]
    assert pyctorch.result_type(i, 1.0) == pyctorch.float32


def test_integer_division_by_zero_raises_not_crashes():
    for op in (pyctorch.floor_divide, pyctorch.remainder, pyctorch.fmod):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(pyctorch.tensor([1, 2]), pyctorch.tensor([0, 1]))
    big = pyctorch.tensor([-(2 ** 63)])
    assert (big // -1).tolist() == [-(2 ** 63)]


def test_values_against_numpy():
    x = np.linspace(-2, 2, 11)
    p = pyctorch.tensor(x.tolist(), dtype=pyctorch.float64)
    np.testing.assert_allclose(pyctorch.exp(p).numpy(), np.exp(x))
    np.testing.assert_allclose(pyctorch.tanh(p).numpy(), np.tanh(x))
    np.testing.assert_allclose((p * p - 1).numpy(), x * x - 1)
    np.testing.assert_array_equal((p > 0).numpy(), x > 0)
    np.testing.assert_allclose(pyctorch.atan2(p, p + 3).numpy(), np.arctan2(x, x + 3))
    np.testing.assert_allclose(pyctorch.erfinv(pyctorch.erf(p)).numpy(), x, atol=1e-12)
    assert math.isnan(pyctorch.sqrt(pyctorch.tensor(-1.0)).item())


def test_every_table_entry_is_callable():
    for e in TABLE:
        if "F" in e["variants"]:
            # private ops and torch.special's special_<name> ops are in _C only
            assert callable(getattr(pyctorch._C if e["name"].startswith(("_", "special_")) else pyctorch, e["name"]))
        if "M" in e["variants"]:
            assert callable(getattr(pyctorch.Tensor, e["name"]))
        if "I" in e["variants"]:
            assert callable(getattr(pyctorch.Tensor, e["name"] + "_"))
