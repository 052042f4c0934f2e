"""BatchNorm1d/2d/3d and F.batch_norm (csrc/aten/cpu/batch_norm.c) against torch with identical weights:
outputs and gradients over several training steps, running statistics (unbiased variance, momentum,
momentum=None cumulative average), eval mode, state_dict contents, torch's input checks and errors;
numpy references, float64 gradcheck and gradgradcheck."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import requires_torch, assert_same, torch as T

TOL = {"rtol": 1e-5, "atol": 1e-5}


def to_pct(t):
    return P.tensor(np.array(t.detach().float().tolist() if t.dtype == T.bfloat16 else t.detach().tolist()),
                    dtype=getattr(P, str(t.dtype).split(".")[1]))


def copy_module(tm, pm):
    pm.load_state_dict({k: to_pct(v) for k, v in tm.state_dict().items()})


def train_steps(tcls, pcls, shape, steps=3, kwargs=None, perm=None, seed=0):
    """Runs `steps` forward/backward passes in training mode on both frameworks with the same data
    and compares outputs, gradients and the buffers after each step."""
    kwargs = kwargs or {}
    T.manual_seed(seed)
    tm = tcls(shape[1], **kwargs)
    with T.no_grad():
        if tm.weight is not None:
            tm.weight.uniform_(0.5, 1.5)
        if tm.bias is not None:
            tm.bias.uniform_(-0.5, 0.5)
    pm = pcls(shape[1], **kwargs)
    copy_module(tm, pm)
    g = T.Generator().manual_seed(seed + 1)
    for _ in range(steps):
        x = T.randn(shape, generator=g) * 2 + 0.5
        if perm:
            x = x.permute(perm).contiguous().permute(np.argsort(perm).tolist())  # same shape, strided
        xt = x.clone().requires_grad_()
        xp = to_pct(x).requires_grad_()
        if perm:
            xp_in = xp.permute(perm).contiguous().permute(np.argsort(perm).tolist())
        else:
            xp_in = xp
        yt, yp = tm(xt), pm(xp_in)
        assert_same(yp, yt, **TOL)
        gy = T.randn(yt.shape, generator=g)
        yt.backward(gy)
        yp.backward(to_pct(gy))
        assert_same(xp.grad, xt.grad, **TOL)
        for name, p in pm.named_parameters():
            assert_same(p.grad, getattr(tm, name).grad, **TOL)
        assert_same(pm.state_dict(), tm.state_dict(), **TOL)
    return tm, pm


@requires_torch
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 5)), ("BatchNorm1d", (4, 3, 7)),
                                       ("BatchNorm2d", (2, 4, 3, 5)), ("BatchNorm3d", (2, 3, 2, 3, 2)), ("BatchNorm2d", (3, 2, 40, 33))])
def test_training_steps_and_eval(cls, shape):
    tm, pm = train_steps(getattr(T.nn, cls), getattr(P.nn, cls), shape)
    assert int(pm.num_batches_tracked) == 3 and pm.num_batches_tracked.dtype == P.int64
    tm.eval()
    pm.eval()
    x = T.randn(shape)
    xt, xp = x.clone().requires_grad_(), to_pct(x).requires_grad_()
    yt, yp = tm(xt), pm(xp)
    assert_same(yp, yt, **TOL)
    yt.pow(2).sum().backward()
    yp.pow(2).sum().backward()
    assert_same(xp.grad, xt.grad, **TOL)
    assert_same(pm.weight.grad, tm.weight.grad, **TOL)
    assert_same(pm.bias.grad, tm.bias.grad, **TOL)
    assert_same(pm.state_dict(), tm.state_dict(), **TOL)  # eval mode leaves the running statistics alone


@requires_torch
@pytest.mark.parametrize("kwargs", [{"momentum": None}, {"momentum": 0.5}, {"affine": False},
                                    {"track_running_stats": False}, {"bias": False, "eps": 1e-3}])
def test_options(kwargs):
    tm, pm = train_steps(T.nn.BatchNorm1d, P.nn.BatchNorm1d, (6, 4, 3), steps=4, kwargs=kwargs)
    assert repr(pm) == repr(tm)
    tm.eval()
    pm.eval()
    x = T.randn(5, 4, 3)
    assert_same(pm(to_pct(x)), tm(x), **TOL)


@requires_torch
def test_non_contiguous_input():
    train_steps(T.nn.BatchNorm2d, P.nn.BatchNorm2d, (3, 4, 5, 6), steps=2, perm=(0, 2, 3, 1))


@requires_torch
def test_state_dict_matches_torch():
    for kwargs in ({}, {"affine": False}, {"track_running_stats": False}, {"bias": False}):
        st, sp = T.nn.BatchNorm2d(3, **kwargs).state_dict(), P.nn.BatchNorm2d(3, **kwargs).state_dict()
        assert list(sp) == list(st)
        for k in st:
            assert_same(sp[k], st[k])
    m = P.nn.BatchNorm1d(3)
    sd = T.nn.BatchNorm1d(3).state_dict()
    del sd["num_batches_tracked"]  # a checkpoint from before the counter existed still loads
    m.load_state_dict({k: to_pct(v) for k, v in sd.items()})
    assert int(m.num_batches_tracked) == 0


def test_running_stats_against_numpy():
    rng = np.random.default_rng(0)
    m = P.nn.BatchNorm1d(3, momentum=0.2)
    xs = [rng.standard_normal((5, 3, 4)) * 3 + 1 for _ in range(3)]
    rm, rv = np.zeros(3), np.ones(3)
    for x in xs:
        y = m(P.tensor(x, dtype=P.float32))
        mean = x.mean((0, 2))
        var = x.var((0, 2))
        ref = (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
        np.testing.assert_allclose(np.array(y.tolist()), ref, rtol=1e-4, atol=1e-4)
        rm = 0.8 * rm + 0.2 * mean
        rv = 0.8 * rv + 0.2 * x.var((0, 2), ddof=1)  # the unbiased variance, as torch
    np.testing.assert_allclose(np.array(m.running_mean.tolist()), rm, rtol=1e-5)
    np.testing.assert_allclose(np.array(m.running_var.tolist()), rv, rtol=1e-5)
    # momentum=None: the cumulative average over the batches seen
    m = P.nn.BatchNorm1d(3, momentum=None, dtype=P.float64)
    for x in xs:
        m(P.tensor(x))
    np.testing.assert_allclose(np.array(m.running_mean.tolist()), np.mean([x.mean((0, 2)) for x in xs], 0), rtol=1e-10)
    m.reset_running_stats()
    assert m.running_mean.tolist() == [0.0] * 3 and m.running_var.tolist() == [1.0] * 3
    assert int(m.num_batches_tracked) == 0


def test_errors():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size "
                                         r"torch.Size\(\[1, 3\]\)"):
        P.nn.BatchNorm1d(3)(P.randn(1, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        PF.batch_norm(P.randn(1, 3, 1), None, None, training=True)
    m = P.nn.BatchNorm1d(3).eval()
    assert tuple(m(P.randn(1, 3)).shape) == (1, 3)  # batch 1 is fine in eval mode
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        P.nn.BatchNorm1d(3)(P.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        P.nn.BatchNorm2d(3)(P.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 5D input \(got 3D input\)"):
        P.nn.BatchNorm3d(3)(P.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        P.nn.BatchNorm1d(3)(P.randn(2, 4))
    x = P.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        PF.batch_norm(x, P.zeros(3), P.ones(3), P.ones(2), training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        PF.batch_norm(x, None, None, training=False)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        PF.batch_norm(x.long(), P.zeros(3), P.ones(3), training=False)
    with pytest.raises(RuntimeError, match="mixed dtype"):
        PF.batch_norm(x.double(), P.zeros(3), P.ones(3), training=True)


@requires_torch
def test_native_batch_norm_outputs_and_mixed_dtype():
    x = T.randn(4, 3, 5)
    for training in (True, False):
        rmt, rvt = T.randn(3), T.rand(3) + 0.5
        rmp, rvp = to_pct(rmt), to_pct(rvt)
        ref = T.native_batch_norm(x, None, None, rmt, rvt, training, 0.1, 1e-5)
        got = P.native_batch_norm(to_pct(x), None, None, rmp, rvp, training, 0.1, 1e-5)
        for a, r in zip(got, ref):
            assert_same(a, r, **TOL)
        assert_same(rmp, rmt, **TOL)
        assert_same(rvp, rvt, **TOL)
    # bfloat16 input with float32 statistics: float32 saved statistics, as torch
    xb = x.bfloat16()
    rmt, rvt = T.zeros(3), T.ones(3)
    ref = T.native_batch_norm(xb, T.ones(3), T.zeros(3), rmt, rvt, True, 0.1, 1e-5)
    got = P.native_batch_norm(to_pct(xb), P.ones(3), P.zeros(3), to_pct(T.zeros(3)), to_pct(T.ones(3)), True, 0.1, 1e-5)
    for a, r in zip(got, ref):
        assert_same(a, r, rtol=2e-2, atol=2e-2)


def test_empty_batch_keeps_running_stats():
    m = P.nn.BatchNorm1d(3)
    y = m(P.randn(0, 3))
    assert tuple(y.shape) == (0, 3)
    assert m.running_mean.tolist() == [0.0] * 3 and m.running_var.tolist() == [1.0] * 3


def test_gradcheck_and_gradgradcheck():
    P.manual_seed(0)
    x = P.randn(4, 3, 2, dtype=P.float64, requires_grad=True)
    w = P.randn(3, dtype=P.float64, requires_grad=True)
    b = P.randn(3, dtype=P.float64, requires_grad=True)
    train = lambda x, w, b: PF.batch_norm(x, None, None, w, b, training=True)  # noqa: E731
    assert gradcheck(train, (x, w, b))
    assert gradgradcheck(train, (x, w, b))
    rm, rv = P.randn(3, dtype=P.float64), P.rand(3, dtype=P.float64) + 0.5
    ev = lambda x, w, b: PF.batch_norm(x, rm, rv, w, b, training=False)  # noqa: E731
    assert gradcheck(ev, (x, w, b))
    assert gradgradcheck(ev, (x, w, b))
    x2 = P.randn(5, 3, dtype=P.float64, requires_grad=True)
    assert gradgradcheck(lambda x: PF.batch_norm(x, None, None, training=True).pow(2), (x2,))
    # the fused backward op as a function of its inputs
    g = P.randn(4, 3, 2, dtype=P.float64, requires_grad=True)
    _, sm, si = P.native_batch_norm(x.detach(), None, None, None, None, True, 0.1, 1e-5)
    sm.requires_grad_()
    si.requires_grad_()
    assert gradcheck(lambda g, x, w, sm, si: P.native_batch_norm_backward(g, x, w, None, None, sm, si, True, 1e-5,
                                                                          [True, True, True]), (g, x, w, sm, si))
