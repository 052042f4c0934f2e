"""The fast CPU paths of softmax / log_softmax (row chunks, short rows, prefetch), their fused
backward, exact GELU's rational erf, linalg.vector_norm through the vectorized reduction, and
reductions with few kept outputs (dense vertical blocks): compared with torch, plus hand checks."""
import math

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, requires_torch
from conftest import torch as T

DT = {"float32": np.float32, "float64": np.float64}


def pair(shape, dtype="float32", scale=1.0, seed=0):
    a = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(DT.get(dtype, np.float32))
    p = pyctorch.from_numpy(a.copy())
    if dtype == "bfloat16":
        p = p.to(pyctorch.bfloat16)
    if T is None:
        return p, None
    t = T.from_numpy(a.copy())
    return p, (t.to(T.bfloat16) if dtype == "bfloat16" else t)


# ---- softmax / log_softmax ----

SHAPES = [((2048, 96), -1), ((3, 17), -1), ((7, 1), -1), ((5, 1000), -1), ((37, 4101), -1), ((100, 16), -1),
          ((64, 512, 8), -1), ((4, 33, 5), 1), ((33,), 0)]


@requires_torch
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_softmax_matches_torch(fn, dtype, shape, dim):
    p, t = pair(shape, dtype, scale=4.0)
    assert_same(getattr(pyctorch, fn)(p, dim), getattr(T, fn)(t, dim))


@requires_torch
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_special_rows(fn):
    rows = [[1.0, float("nan"), 2.0], [float("-inf")] * 3, [float("inf"), 1.0, 2.0], [0.0, 0.0, 0.0],
            [float("-inf"), 0.0, -100.0], [-1e30, 1e30, 0.0]]
    a = np.array(rows, dtype=np.float32)
    assert_same(getattr(pyctorch, fn)(pyctorch.from_numpy(a), -1), getattr(T, fn)(T.from_numpy(a), -1))
    wide = np.full((3, 50), -np.inf, dtype=np.float32)
    wide[:, 7] = 0.0  # masked rows: exactly one-hot
    out = getattr(pyctorch, fn)(pyctorch.from_numpy(wide), -1)
    assert_same(out, getattr(T, fn)(T.from_numpy(wide), -1))


@requires_torch
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_noncontiguous(fn):
    p, t = pair((96, 130), scale=3.0)
    assert_same(getattr(pyctorch, fn)(p.t(), -1), getattr(T, fn)(t.t(), -1))
    assert_same(getattr(pyctorch, fn)(p[:, ::3], -1), getattr(T, fn)(t[:, ::3], -1))


def test_softmax_hand_values():
    x = np.array([[0.0, math.log(3.0)], [1.0, 1.0]], dtype=np.float32)
    y = pyctorch.softmax(pyctorch.from_numpy(x), -1).numpy()
    np.testing.assert_allclose(y, [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)
    ly = pyctorch.log_softmax(pyctorch.from_numpy(np.zeros((2, 40), np.float32)), -1).numpy()
    np.testing.assert_allclose(ly, np.full((2, 40), -math.log(40.0)), rtol=1e-6)


@requires_torch
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((64, 96), -1), ((37, 4101), -1), ((4, 33, 5), 1), ((5, 1), -1)])
def test_softmax_backward_matches_torch(fn, dtype, shape, dim):
    p, t = pair(shape, dtype, scale=3.0)
    gp, gt = pair(shape, dtype, seed=1)
    yt = getattr(T, fn)(t, dim)
    yp = pyctorch.from_numpy(yt.numpy().copy())
    name = "_softmax_backward_data" if fn == "softmax" else "_log_softmax_backward_data"
    got = getattr(pyctorch, name)(gp, yp, dim, getattr(pyctorch, dtype))
    want = getattr(T.ops.aten, name)(gt, yt, dim, getattr(T, dtype))
    # the backward sums grad along dim: two float32 sums of n terms in different orders (torch's blocks follow the
    # CPU's vector width) differ by about n * eps * |grad|, so the absolute tolerance grows with n past 1000 terms
    n = shape[dim]
    assert_same(got, want, atol=1e-5 * max(1.0, n / 1000) if dtype == "float32" else None)


def test_softmax_gradcheck():
    x = pyctorch.from_numpy(np.random.default_rng(3).standard_normal((3, 21))).requires_grad_(True)
    assert pyctorch.autograd.gradcheck(lambda v: pyctorch.softmax(v, -1), (x,))
    assert pyctorch.autograd.gradcheck(lambda v: pyctorch.log_softmax(v, -1), (x,))


# ---- exact GELU (rational erf) ----

def _gelu_exact(x):
    return np.array([v * 0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x.astype(np.float64)])


def test_gelu_against_exact_values():
    x = np.concatenate([np.linspace(-12, 12, 4001), [0.0, 1e-30, -1e-30, 5.657, -5.657, 100.0, -100.0]]).astype(np.float32)
    got = pyctorch.nn.functional.gelu(pyctorch.from_numpy(x)).numpy().astype(np.float64)
    # 1 + erf(x / sqrt 2) cancels in the left tail (torch's form too): absolute error ~1e-7 |x|
    np.testing.assert_allclose(got, _gelu_exact(x), rtol=2e-6, atol=1e-6)
    assert got[-1] == 0.0 and math.copysign(1.0, got[-1]) < 0  # -100 * 0 = -0.0, as torch


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_gelu_matches_torch_wide_range(dtype):
    a = np.concatenate([np.linspace(-20, 20, 100003), [-3e38, -1e20, 1e20, float("-inf"), float("nan")]])
    a = a.astype(DT.get(dtype, np.float32))
    p = pyctorch.from_numpy(a.copy())
    t = T.from_numpy(a.copy())
    if dtype == "bfloat16":
        p, t = p.to(pyctorch.bfloat16), t.to(T.bfloat16)
    F, TF = pyctorch.nn.functional, T.nn.functional
    assert_same(F.gelu(p), TF.gelu(t))
    g = np.random.default_rng(2).standard_normal(a.shape).astype(a.dtype)
    gp, gt = pyctorch.from_numpy(g.copy()), T.from_numpy(g.copy())
    if dtype == "bfloat16":
        gp, gt = gp.to(pyctorch.bfloat16), gt.to(T.bfloat16)
    assert_same(pyctorch.gelu_backward(gp, p), T.ops.aten.gelu_backward(gt, t))


@requires_torch
@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 33, 1000])
def test_gelu_tails_and_noncontiguous(n):
    p, t = pair((3, n), scale=3.0)
    F, TF = pyctorch.nn.functional, T.nn.functional
    assert_same(F.gelu(p), TF.gelu(t))
    assert_same(F.gelu(p.t()), TF.gelu(t.t()))
    assert_same(F.gelu(p[:, ::2]), TF.gelu(t[:, ::2]))


def test_gelu_gradcheck():
    x = pyctorch.from_numpy(np.random.default_rng(4).standard_normal(17) * 3).requires_grad_(True)
    assert pyctorch.autograd.gradcheck(lambda v: pyctorch.nn.functional.gelu(v), (x,))


# ---- vector_norm and reductions with few outputs ----

@requires_torch
@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, float("inf"), float("-inf"), -1])
@pytest.mark.parametrize("dim", [None, -1, 0, (0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_norm_matches_torch(ord, dim, dtype):
    p, t = pair((37, 70), dtype)
    assert_same(pyctorch.linalg.vector_norm(p, ord, dim), T.linalg.vector_norm(t, ord, dim))
    assert_same(pyctorch.linalg.vector_norm(p.t(), ord, dim, keepdim=True),
                T.linalg.vector_norm(t.t(), ord, dim, keepdim=True))


@requires_torch
def test_vector_norm_dtype_out_and_errors():
    p, t = pair((5, 6))
    assert_same(pyctorch.linalg.vector_norm(p, dtype=pyctorch.float64), T.linalg.vector_norm(t, dtype=T.float64))
    out = pyctorch.empty(())
    pyctorch.linalg.vector_norm(p, out=out)
    assert_same(out, T.linalg.vector_norm(t))
    with pytest.raises(RuntimeError):
        pyctorch.linalg.vector_norm(pyctorch.arange(4))
    with pytest.raises(RuntimeError):
        pyctorch.linalg.vector_norm(pyctorch.empty(0), float("inf"))
    assert_same(pyctorch.linalg.vector_norm(pair((1,))[0]), T.linalg.vector_norm(pair((1,))[1]))


def test_vector_norm_hand_values():
    x = pyctorch.tensor([[3.0, 4.0], [0.0, -5.0]])
    assert abs(pyctorch.linalg.vector_norm(x).item() - math.sqrt(50.0)) < 1e-6
    assert pyctorch.linalg.vector_norm(x, 1, dim=1).tolist() == [7.0, 5.0]
    assert pyctorch.linalg.vector_norm(x, float("inf")).item() == 5.0


@requires_torch
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "prod", "var", "argmax", "argmin", "logsumexp"])
@pytest.mark.parametrize("shape,dim", [((64, 512, 8), 1), ((6, 200, 4), 1), ((3, 300, 2), 1), ((5, 70, 16), 1),
                                       ((64, 512, 8), -1), ((4096, 16), 1), ((2, 9, 3), 1)])
def test_reduction_few_outputs(op, shape, dim):
    p, t = pair(shape, scale=0.5 if op == "prod" else 1.0)
    if op in ("argmax", "argmin"):  # ties resolve to the first index
        p, t = p.round(), t.round()
    assert_same(getattr(p, op)(dim), getattr(t, op)(dim))
    # a non-dense block (sliced rows) takes the register-folding path
    assert_same(getattr(p[:, ::2], op)(dim), getattr(t[:, ::2], op)(dim))


def test_reduction_few_outputs_hand_values():
    x = np.arange(2 * 64 * 4, dtype=np.float64).reshape(2, 64, 4)
    got = pyctorch.from_numpy(x.copy()).sum(1).numpy()
    np.testing.assert_array_equal(got, x.sum(1))
    ties = np.zeros((1, 80, 2), dtype=np.float32)
    ties[0, [5, 40], 0] = 1.0
    assert pyctorch.from_numpy(ties).argmax(1).tolist() == [[5, 0]]
