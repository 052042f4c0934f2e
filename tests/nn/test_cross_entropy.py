"""F.cross_entropy with class-index targets, through the fused kernel of csrc/aten/cpu/cross_entropy.c:
torch's values and gradients for every combination of weight, ignore_index, label_smoothing and
reduction, 1-D and K-dimensional inputs, reduced precision, errors, gradcheck and gradgradcheck."""
import itertools

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import requires_torch, assert_same, torch as T


def to_pct(t):
    return P.tensor(np.array(t.detach().float().tolist() if t.dtype == T.bfloat16 else t.detach().tolist()),
                    dtype=getattr(P, str(t.dtype).split(".")[1]))


@requires_torch
@pytest.mark.parametrize("shape", [(6, 5), (5,), (3, 4, 2, 2), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [T and T.float32, T and T.float64])
def test_matches_torch(shape, dtype):
    g = T.Generator().manual_seed(0)
    x = T.randn(shape, generator=g, dtype=dtype) * 3
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t0 = T.randint(0, c, tshape, generator=g)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == T.float32 else {}
    for w, red, ls, ign in itertools.product([None, T.rand(c, generator=g, dtype=dtype)], ["none", "mean", "sum"],
                                             [0.0, 0.25], [-100, 1]):
        t = t0.clone()
        if len(shape) > 1:
            t.view(-1)[1] = ign  # one ignored target
        xt, xp = x.clone().requires_grad_(), to_pct(x).requires_grad_()
        kw = dict(reduction=red, label_smoothing=ls, ignore_index=ign)
        lt = T.nn.functional.cross_entropy(xt, t, weight=w, **kw)
        lp = PF.cross_entropy(xp, to_pct(t), weight=None if w is None else to_pct(w), **kw)
        assert_same(lp, lt, **tol)
        gy = T.randn(lt.shape, generator=g, dtype=dtype)
        lt.backward(gy)
        lp.backward(to_pct(gy))
        assert_same(xp.grad, xt.grad, **tol)


def test_against_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 11)) * 4
    t = rng.integers(0, 11, 7)
    loss = PF.cross_entropy(P.tensor(x), P.tensor(t), reduction="none")
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    np.testing.assert_allclose(np.array(loss.tolist()), -logp[np.arange(7), t], rtol=1e-12)
    xp = P.tensor(x, requires_grad=True)
    PF.cross_entropy(xp, P.tensor(t)).backward()
    ref = np.exp(logp)
    ref[np.arange(7), t] -= 1
    np.testing.assert_allclose(np.array(xp.grad.tolist()), ref / 7, rtol=1e-10, atol=1e-14)


@requires_torch
def test_large_rows_and_extremes():
    x = T.randn(64, 3000) * 10
    x[0, 5] = 1e4  # a dominant logit
    x[1] = -1e4
    t = T.randint(0, 3000, (64,))
    xt, xp = x.clone().requires_grad_(), to_pct(x).requires_grad_()
    lt, lp = T.nn.functional.cross_entropy(xt, t), PF.cross_entropy(xp, to_pct(t))
    assert_same(lp, lt, rtol=1e-5, atol=1e-5)
    lt.backward()
    lp.backward()
    assert_same(xp.grad, xt.grad, rtol=1e-5, atol=1e-7)
    xb = x.bfloat16()
    assert_same(PF.cross_entropy(to_pct(xb), to_pct(t)), T.nn.functional.cross_entropy(xb, t), rtol=2e-2, atol=2e-2)
    # every target ignored: mean is 0/0 = nan, sum is 0, as torch
    allign = T.full((64,), -100)
    assert np.isnan(PF.cross_entropy(to_pct(x), to_pct(allign)).item())
    assert PF.cross_entropy(to_pct(x), to_pct(allign), reduction="sum").item() == 0.0
    nan_row = x.clone()
    nan_row[3, 7] = float("nan")
    assert_same(PF.cross_entropy(to_pct(nan_row), to_pct(t), reduction="none"),
                T.nn.functional.cross_entropy(nan_row, t, reduction="none"), rtol=1e-5, atol=1e-5)


def test_errors():
    x = P.randn(4, 5)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        PF.cross_entropy(x, P.tensor([1, 2, 3, 5]))
    with pytest.raises(IndexError, match="Target -5 is out of bounds."):
        PF.cross_entropy(x, P.tensor([1, 2, 3, -5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target batch_size \(3\)."):
        PF.cross_entropy(x, P.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        PF.cross_entropy(x, P.tensor([1, 2, 3, 4], dtype=P.int32))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 5 classes or no classes"):
        PF.cross_entropy(x, P.tensor([1, 2, 3, 4]), weight=P.ones(4))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        PF.cross_entropy(x, P.tensor([1, 2, 3, 4]), weight=P.ones(5, dtype=P.float64))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        PF.cross_entropy(x, P.tensor([1, 2, 3, 4]), reduction="avg")
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 3\]"):
        PF.cross_entropy(P.randn(2, 5, 4), P.zeros(2, 3, dtype=P.int64))
    assert tuple(PF.cross_entropy(P.randn(0, 5), P.zeros(0, dtype=P.int64), reduction="none").shape) == (0,)
    assert PF.cross_entropy(x, P.tensor([1, 2, 3, 4], dtype=P.uint8)).dtype == P.float32


def test_gradcheck_and_gradgradcheck():
    P.manual_seed(0)
    x = P.randn(4, 5, dtype=P.float64, requires_grad=True)
    t = P.tensor([1, 0, -100, 4])
    w = P.rand(5, dtype=P.float64)
    for red in ("mean", "sum", "none"):
        for kw in ({}, {"weight": w, "label_smoothing": 0.1}):
            f = lambda x: PF.cross_entropy(x, t, reduction=red, **kw)  # noqa: E731
            assert gradcheck(f, (x,))
            assert gradgradcheck(f, (x,))
    x3 = P.randn(2, 3, 2, dtype=P.float64, requires_grad=True)
    t3 = P.tensor([[0, 2], [1, 1]])
    assert gradgradcheck(lambda x: PF.cross_entropy(x, t3, label_smoothing=0.2), (x3,))
