"""The generic op test, driven by the op table: every pointwise entry runs against torch on
inputs of every dtype, broadcast and non-contiguous layouts, 0-d and empty tensors, with
Python scalars; function, method, in-place and out= forms; and bad inputs must raise the
exception type torch raises."""
import math

import numpy as np
import pytest

import pyctorch
import samples as SR
from conftest import assert_same, assert_same_outcome, requires_torch, torch

TABLE = SR.TABLE
UNARY = [e for e in TABLE if e["kind"] == "unary"]
BINARY = [e for e in TABLE if e["kind"] == "binary" and not e["name"].startswith("_")]
DEVICE = SR.DEVICE


def make_pair(values, dtype):
    """The same values as a pyctorch and a torch tensor."""
    return (pyctorch.tensor(values, dtype=getattr(pyctorch, dtype), device=DEVICE),
            torch.tensor(values, dtype=getattr(torch, dtype), device=SR.TORCH_DEVICE))


def _cases(entries):
    return [pytest.param(e, k, id=f"{e['id']}-{s.name}") for e in entries for k, s in SR.samples_for(e["id"], "op")]


def _inputs(entry, k):
    """The registry's op sample k of entry, made in pyctorch and in torch: (sample, pyctorch inputs, torch's)."""
    sample = SR.SAMPLES[entry["id"]][k]
    arrs = SR.arrays(entry["id"], k, sample)
    return (sample, SR.make_inputs(pyctorch, sample, arrs, device=DEVICE),
            SR.make_inputs(torch, sample, arrs, device=SR.TORCH_DEVICE))


def check_variants(entry, xp, xt):
    """The function, method (if any) and in-place (if any) forms give torch's outcome; in place returns self."""
    name = entry["name"]
    assert_same_outcome(lambda: getattr(pyctorch, name)(*xp), lambda: getattr(torch, name)(*xt))
    if "M" in entry["variants"]:
        assert_same_outcome(lambda: getattr(xp[0], name)(*xp[1:]), lambda: getattr(xt[0], name)(*xt[1:]))
    if "I" in entry["variants"]:
        p0, t0 = xp[0].clone(), xt[0].clone()
        got, exp = assert_same_outcome(lambda: getattr(p0, name + "_")(*xp[1:]),
                                       lambda: getattr(t0, name + "_")(*xt[1:]))
        if not isinstance(exp, Exception):
            assert got is p0
        assert_same(p0, t0)


@requires_torch
@pytest.mark.parametrize("entry,k", _cases(UNARY))
def test_unary(entry, k):
    _, xp, xt = _inputs(entry, k)
    check_variants(entry, xp, xt)


@requires_torch
@pytest.mark.parametrize("entry,k", _cases(BINARY))
def test_binary(entry, k):
    _, xp, xt = _inputs(entry, k)
    check_variants(entry, xp, xt)


def _out_cases():
    return [pytest.param(e, SR.samples_for(e["id"], "out")[0][0], id=e["id"]) for e in BINARY
            if "out=None" in e["schema"]]


@requires_torch
@pytest.mark.parametrize("entry,k", _out_cases())
def test_binary_out(entry, k):
    """A wrongly shaped out= is resized; a float64 out receives a cast result (the registry's out= sample)."""
    sample, xp, xt = _inputs(entry, k)
    po = pyctorch.empty(1, dtype=pyctorch.float64, device=DEVICE)
    to = torch.empty(1, dtype=torch.float64, device=SR.TORCH_DEVICE)
    # computed in the inputs' dtype, then cast: float32 inputs agree to float32's tolerance (torch's float32 igamma
    # is a few ulps off the correctly rounded value)
    f32 = any(getattr(i, "dtype", None) == "float32" for i in sample.inputs)
    tol = dict(rtol=1.3e-6, atol=1e-5) if f32 else {}
    got, exp = assert_same_outcome(lambda: SR.call(pyctorch, sample, xp, DEVICE, out=po),
                                   lambda: SR.call(torch, sample, xt, SR.TORCH_DEVICE, out=to), **tol)
    if not isinstance(exp, Exception):
        assert got is po
        assert_same(po, to, **tol)


@requires_torch
@pytest.mark.parametrize("a_dtype,b_dtype", [("int32", "float64"), ("uint8", "int8"), ("bool", "int16"),
                                             ("float16", "bfloat16"), ("int64", "float16"), ("bool", "bool")])
@pytest.mark.parametrize("op", ["add", "mul", "div", "eq", "maximum"])
def test_mixed_dtype_promotion(op, a_dtype, b_dtype):
    pa, ta = make_pair([[1, 0, 1]], a_dtype)
    pb, tb = make_pair([1, 1, 0], b_dtype)
    for a in (0, 1):
        assert_same_outcome(lambda: getattr(pyctorch, op)(pa if a else pa[0, 0], pb),
                            lambda: getattr(torch, op)(ta if a else ta[0, 0], tb))


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


# ---- the Python composites (PCT_COMPOSITE_PY entries, written in pyctorch/_composites.py): not in _C._op_table(), so
# the registry lists them apart (samples.PY_TABLE) and their "op" samples run here against torch ----
def _py_cases():
    return [pytest.param(e, k, id=f"{e['id']}-{k}") for e in SR.PY_TABLE for k, _ in SR.samples_for(e["id"], "op")]


def test_every_python_composite_has_op_samples():
    assert len(SR.PY_TABLE) >= 95
    assert [e["id"] for e in SR.PY_TABLE if not SR.samples_for(e["id"], "op")] == []


@requires_torch
@pytest.mark.parametrize("entry,k", _py_cases())
def test_python_composite(entry, k):
    sample = SR.SAMPLES[entry["id"]][k]
    arrs = SR.arrays(entry["id"], k, sample)
    xp, xt = (SR.make_inputs(T, sample, arrs, requires_grad=False, device=SR.device_for(T)) for T in (pyctorch, torch))
    assert_same_outcome(lambda: SR.call(pyctorch, sample, xp, DEVICE), lambda: SR.call(torch, sample, xt, SR.TORCH_DEVICE))
