"""Result dtypes and dtype checks of ops whose tensors may differ in dtype, with reduced-precision
inputs: _softmax_backward_data / _log_softmax_backward_data (the result has grad_output's dtype,
whatever input_dtype says) and native_batch_norm / native_batch_norm_backward (torch's CPU rule for
mixed parameter dtypes, Note [Batch norm parameter dtypes] in csrc/aten/cpu/batch_norm.c), against
torch over every combination of dtypes: values, result dtypes, error types and messages."""
import itertools

import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same_outcome, requires_torch, torch as T

FLOATS = ["bfloat16", "float16", "float32", "float64"]
TOL = {"bfloat16": 2e-2, "float16": 2e-3, "float32": 1e-5, "float64": 1e-10}


# (rtol, atol) per result dtype; atol scales with the largest finite value of torch's result (scale_atol)
TOLS = {name: (tol, tol) for name, tol in TOL.items()}


def dt(lib, name):
    return None if name is None else getattr(lib, name)


# ---- softmax backward -----------------------------------------------------------------------------

def _aten(lib, name):
    return getattr(T.ops.aten, name) if lib is T else getattr(P._C, name)


@requires_torch
@pytest.mark.parametrize("op", ["_softmax_backward_data", "_log_softmax_backward_data"])
def test_softmax_backward_result_dtype_follows_grad_output(op):
    for gd, od, idt in itertools.product(FLOATS, FLOATS, FLOATS):
        def fn(lib):
            g = lib.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]]).to(dt(lib, gd))
            y = lib.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]).to(dt(lib, od))
            y = y.log() if "log" in op else y
            return _aten(lib, op)(g, y, 1, dt(lib, idt))
        assert_same_outcome(lambda: fn(P), lambda: fn(T), tol=TOLS, scale_atol=True, message=True,
                            what=f"{op} grad {gd} output {od} input_dtype {idt}")


@pytest.mark.parametrize("op", ["_softmax_backward_data", "_log_softmax_backward_data"])
def test_softmax_backward_numpy(op):
    g = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]])
    y = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    want = g - y * g.sum(1, keepdims=True) if "log" in op else y * (g - (g * y).sum(1, keepdims=True))
    yy = np.log(y) if "log" in op else y
    r = getattr(P._C, op)(P.tensor(g).bfloat16(), P.tensor(yy).bfloat16(), 1, P.float64)
    assert r.dtype == P.bfloat16
    np.testing.assert_allclose(np.array(r.float().tolist()), want, rtol=2e-2, atol=2e-2)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Half"):
        getattr(P._C, op)(P.tensor(g).float(), P.tensor(yy).float(), 1, P.float16)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_with_dtype_backward(dtype, name):
    """softmax(x, dim, dtype=float32) of a reduced-precision x: the gradient comes back in x's dtype."""
    def fn(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]]).to(dt(lib, dtype)).requires_grad_()
        y = getattr(lib, name)(x, 1, dtype=lib.float32)
        y.backward(lib.tensor([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]]))
        return y, x.grad
    assert_same_outcome(lambda: fn(P), lambda: fn(T), tol=TOLS, scale_atol=True, message=True, what=f"{name} {dtype}")


# ---- batch norm -----------------------------------------------------------------------------------

X = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [2.0, 0.0, 1.0], [-1.0, 1.0, 0.0]]
G = [[0.5, -1.0, 2.0], [1.0, 0.25, -0.5], [0.0, 1.5, 1.0], [-2.0, 0.5, 0.75]]


def _bn_backward(ind, wd, sd, train, saved, gd):
    def fn(lib):
        g, x = lib.tensor(G).to(dt(lib, gd)), lib.tensor(X).to(dt(lib, ind))
        w = None if wd is None else lib.tensor([0.5, 2.0, -1.0]).to(dt(lib, wd))
        rm = None if sd is None else lib.tensor([0.5, -1.0, 0.0]).to(dt(lib, sd))
        rv = None if sd is None else lib.tensor([1.5, 0.5, 2.0]).to(dt(lib, sd))
        sm = si = None
        if train:
            sm, si = lib.tensor([0.1, 0.2, 0.3]).to(dt(lib, saved)), lib.tensor([1.1, 1.2, 0.9]).to(dt(lib, saved))
        f = T.ops.aten.native_batch_norm_backward if lib is T else P.native_batch_norm_backward
        return f(g, x, w, rm, rv, sm, si, train, 1e-5, [True, True, True])
    return fn


@requires_torch
@pytest.mark.parametrize("ind", FLOATS)
def test_batch_norm_backward_dtype_combinations(ind):
    """Every combination of weight / running statistics / saved statistics / grad_out dtypes."""
    other = "float32" if ind != "float32" else "bfloat16"
    for train, wd, sd, gd in itertools.product([False, True], [None] + FLOATS, [None] + FLOATS, [ind, other]):
        if not train and sd is None:
            continue
        for saved in (FLOATS if train else [None]):
            assert_same_outcome(lambda: _bn_backward(ind, wd, sd, train, saved, gd)(P),
                                lambda: _bn_backward(ind, wd, sd, train, saved, gd)(T), tol=TOLS, scale_atol=True,
                                message=True,
        what=f"input {ind} train {train} weight {wd} stats {sd} saved {saved} grad {gd}")


@requires_torch
@pytest.mark.parametrize("ind", FLOATS)
def test_batch_norm_forward_dtype_combinations(ind):
    for train, wd, bd, sd in itertools.product([False, True], [None] + FLOATS, [None] + FLOATS, [None] + FLOATS):
        if not train and sd is None:
            continue

        def fn(lib):
            x = lib.tensor(X).to(dt(lib, ind))
            w = None if wd is None else lib.tensor([0.5, 2.0, -1.0]).to(dt(lib, wd))
            b = None if bd is None else lib.tensor([0.1, 0.2, -1.0]).to(dt(lib, bd))
            rm = None if sd is None else lib.tensor([0.5, -1.0, 0.0]).to(dt(lib, sd))
            rv = None if sd is None else lib.tensor([1.5, 0.5, 2.0]).to(dt(lib, sd))
            out = lib.native_batch_norm(x, w, b, rm, rv, train, 0.1, 1e-5)
            return list(out) + [t for t in (rm, rv) if t is not None]
        assert_same_outcome(lambda: fn(P), lambda: fn(T), tol=TOLS, scale_atol=True, message=True,
                            what=f"input {ind} train {train} weight {wd} bias {bd} stats {sd}")


def test_batch_norm_backward_mixed_rules_numpy():
    """bfloat16 input with float32 parameters: float32 parameter gradients; float64 statistics raise."""
    x, g = np.array(X), np.array(G)
    rm, rv, w = np.array([0.5, -1.0, 0.0]), np.array([1.5, 0.5, 2.0]), np.array([0.5, 2.0, -1.0])
    gi, gw, gb = P.native_batch_norm_backward(
        P.tensor(G).bfloat16(), P.tensor(X).bfloat16(), P.tensor(w).float(), P.tensor(rm).float(),
        P.tensor(rv).float(), None, None, False, 1e-5, [True, True, True])
    assert (gi.dtype, gw.dtype, gb.dtype) == (P.bfloat16, P.float32, P.float32)
    inv = 1 / np.sqrt(rv + 1e-5)
    np.testing.assert_allclose(np.array(gi.float().tolist()), g * inv * w, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(np.array(gw.tolist()), (g * (x - rm) * inv).sum(0), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(np.array(gb.tolist()), g.sum(0), rtol=2e-2, atol=2e-2)
    with pytest.raises(RuntimeError, match="expect parameter to have scalar type of Float"):
        P.native_batch_norm_backward(P.tensor(G).bfloat16(), P.tensor(X).bfloat16(), None, P.tensor(rm),
                                     P.tensor(rv), None, None, False, 1e-5, [True, True, True])
    with pytest.raises(RuntimeError, match="expected scalar type BFloat16 but found Double"):
        P.native_batch_norm_backward(P.tensor(G).bfloat16(), P.tensor(X).bfloat16(), P.tensor(w).bfloat16(),
                                     P.tensor(rm), P.tensor(rv), None, None, False, 1e-5, [True, True, True])
    with pytest.raises(RuntimeError, match="expected scalar type BFloat16 but found Float"):
        P.native_batch_norm_backward(P.tensor(G).float(), P.tensor(X).bfloat16(), None, P.tensor(rm).float(),
                                     P.tensor(rv).float(), None, None, False, 1e-5, [True, True, True])
