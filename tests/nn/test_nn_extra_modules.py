"""nn.AdaptiveLogSoftmaxWithLoss, F.fractional_max_pool2d / nn.FractionalMaxPool2d (given samples: torch's
windows exactly; drawn samples: shapes and properties) and nn.DataParallel (the pass-through torch is
without GPUs) against torch, with hand checks that run without it."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn as PN
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None


def _copy_params(pm, tm):
    with P.no_grad():
        for (kp, vp), (kt, vt) in zip(pm.named_parameters(), tm.named_parameters()):
            assert kp == kt
            vp.copy_(P.tensor(vt.detach().double().numpy().tolist(), dtype=vp.dtype))


# ---- adaptive log softmax ----

def test_adaptive_log_softmax_properties():
    m = PN.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    x = P.randn(5, 8)
    lp = m.log_prob(x)
    assert lp.shape == (5, 10)
    np.testing.assert_allclose(lp.exp().sum(1).detach().numpy(), np.ones(5), rtol=1e-5)
    t = P.tensor([0, 4, 9, 2, 7])
    out, loss = m(x, t)
    np.testing.assert_allclose(out.detach().numpy(), lp.gather(1, t.unsqueeze(1)).squeeze(1).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert m.predict(x).tolist() == lp.argmax(1).tolist()
    loss.backward()
    assert m.head.weight.grad is not None and m.tail[1][1].weight.grad is not None
    with pytest.raises(ValueError):
        PN.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(RuntimeError, match="Target values should be in"):
        m(x, P.tensor([0, 1, 2, 3, 10]))


@requires_torch
def test_adaptive_log_softmax_vs_torch():
    pm = PN.AdaptiveLogSoftmaxWithLoss(8, 12, [2, 5, 9], div_value=2.0, head_bias=True, dtype=P.float64)
    tm = T.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [2, 5, 9], div_value=2.0, head_bias=True, dtype=T.float64)
    _copy_params(pm, tm)
    x = np.random.default_rng(0).standard_normal((7, 8))
    t = [0, 3, 11, 6, 1, 8, 5]
    px, tx = P.tensor(x.tolist(), dtype=P.float64, requires_grad=True), T.tensor(x, requires_grad=True)
    po, to = pm(px, P.tensor(t)), tm(tx, T.tensor(t))
    assert_same(po.output, to.output)
    assert_same(po.loss, to.loss)
    po.loss.backward()
    to.loss.backward()
    assert_same(px.grad, tx.grad)
    for (_, a), (_, b) in zip(pm.named_parameters(), tm.named_parameters()):
        assert_same(a.grad, b.grad)
    assert_same(pm.log_prob(px), tm.log_prob(tx))
    assert_same(pm.predict(px), tm.predict(tx))
    po, to = pm(px[0], P.tensor(3)), tm(tx[0], T.tensor(3))  # unbatched
    assert_same(po.output, to.output)
    assert list(pm.state_dict()) == list(tm.state_dict())


# ---- fractional max pooling ----

def test_fractional_max_pool2d_properties():
    x = P.randn(2, 3, 11, 9, dtype=P.float64, requires_grad=True)
    y, i = PF.fractional_max_pool2d(x, 2, output_size=(5, 4), return_indices=True)
    assert y.shape == i.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().flatten(2).gather(2, i.flatten(2)).view_as(y).numpy())
    assert PN.FractionalMaxPool2d(3, output_ratio=0.5)(x[0]).shape == (3, 5, 4)
    s = P.rand(2, 3, 2, dtype=P.float64)
    assert gradcheck(lambda a: PF.fractional_max_pool2d(a, (2, 3), (4, 3), _random_samples=s), (x,))


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", [((2, 2), (5, 4)), ((3, 2), (4, 7)), ((2, 3), (1, 1)), ((1, 1), (11, 9))])
def test_fractional_max_pool2d_vs_torch(dtype, case):
    k, osz = case
    rng = np.random.default_rng(1)
    x, s = rng.standard_normal((2, 3, 11, 9)), rng.uniform(0, 1, (2, 3, 2))
    px = P.tensor(x.tolist(), dtype=getattr(P, dtype), requires_grad=True)
    tx = T.tensor(x, dtype=getattr(T, dtype), requires_grad=True)
    ps, ts = P.tensor(s.tolist(), dtype=getattr(P, dtype)), T.tensor(s, dtype=getattr(T, dtype))
    po = PF.fractional_max_pool2d(px, k, osz, return_indices=True, _random_samples=ps)
    to = TF.fractional_max_pool2d(tx, k, osz, return_indices=True, _random_samples=ts)
    assert_same(po[0], to[0])
    assert_same(po[1], to[1])
    g = rng.standard_normal(tuple(to[0].shape))
    po[0].backward(P.tensor(g.tolist(), dtype=po[0].dtype))
    to[0].backward(T.tensor(g, dtype=to[0].dtype))
    assert_same(px.grad, tx.grad)
    pm = PN.FractionalMaxPool2d(k, output_size=osz, _random_samples=ps[:1])
    tm = T.nn.FractionalMaxPool2d(k, output_size=osz, _random_samples=ts[:1])
    assert_same(pm(px[0].detach()), tm(tx[0].detach()))


@requires_torch
def test_fractional_max_pool2d_seeded_samples_match_torch():
    # the samples come from rand() on the default generator, which draws torch's numbers for a seed
    x = np.random.default_rng(2).standard_normal((2, 3, 11, 9)).astype(np.float32)
    P.manual_seed(3)
    T.manual_seed(3)
    po = PN.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)(P.tensor(x.tolist()))
    to = T.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)(T.tensor(x))
    assert_same(po[0], to[0])
    assert_same(po[1], to[1])


# ---- DataParallel ----

def test_data_parallel_is_a_pass_through():
    lin = PN.Linear(3, 2)
    dp = PN.DataParallel(lin)
    assert dp.module is lin and dp.device_ids == []
    x = P.randn(4, 3)
    assert P.equal(dp(x), lin(x))
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert PN.parallel.DataParallel is PN.DataParallel
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        PN.parallel.data_parallel(lin, x)


@requires_torch
def test_data_parallel_vs_torch():
    tm = T.nn.DataParallel(T.nn.Sequential(T.nn.Linear(3, 2)))
    pm = PN.DataParallel(PN.Sequential(PN.Linear(3, 2)))
    assert list(pm.state_dict()) == list(tm.state_dict())
    assert pm.device_ids == tm.device_ids
    pm.load_state_dict({k: P.tensor(v.numpy().tolist()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    assert_same(pm(P.tensor(x.tolist())), tm(T.tensor(x)))
