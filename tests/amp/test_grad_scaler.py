"""torch.amp.GradScaler on the CPU against torch's: the scale sequence (backoff on inf/NaN, growth
after growth_interval clean steps), skipped steps, unscale_ then clipping, parameters after each
step (SGD and the fused Adam path that reads grad_scale/found_inf), state_dict round trips,
enabled=False, the errors, the deprecated aliases; and the two fused ops it uses
(_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) directly."""
import math
import pickle

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, requires_torch, torch


def _model(lib, seed=0):
    rs = np.random.RandomState(seed)
    lin = lib.nn.Linear(5, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(rs.randn(3, 5).astype(np.float32)))
        lin.bias.copy_(lib.tensor(rs.randn(3).astype(np.float32)))
    x = lib.tensor(rs.randn(4, 5).astype(np.float32))
    return lin, x


def _train(lib, opt_name, steps=8, bad_steps=(2, 5), **scaler_kw):
    lin, x = _model(lib)
    if opt_name == "sgd":
        opt = lib.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    elif opt_name == "adam_fused":
        opt = lib.optim.Adam(lin.parameters(), lr=0.01, fused=True)
    else:
        opt = lib.optim.Adam(lin.parameters(), lr=0.01)
    scaler = lib.amp.GradScaler("cpu", **scaler_kw)
    scales, params = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = (lin(x) ** 2).mean()
        scaler.scale(loss).backward()
        if step in bad_steps:
            lin.weight.grad[0, 0] = float("inf") if step % 2 else float("nan")
        if step == 3:  # the documented unscale_ + clip pattern
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        params.append([p.detach().clone() for p in lin.parameters()])
    return scales, params, scaler


@requires_torch
@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adam_fused"])
def test_training_matches_torch(opt_name):
    kw = dict(init_scale=2.0 ** 10, growth_interval=2)
    sp, pp, _ = _train(pyctorch, opt_name, **kw)
    st, pt, _ = _train(torch, opt_name, **kw)
    assert sp == st
    for a, b in zip(pp, pt):
        for x, y in zip(a, b):
            assert_same(x, y, rtol=1e-5, atol=1e-6)


def test_scale_sequence_by_hand():
    scales, params, scaler = _train(pyctorch, "sgd", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25,
                                    growth_interval=2)
    # steps 2 and 5 skip (x0.25); two clean steps in a row grow it (x4)
    assert scales == [8.0, 32.0, 8.0, 8.0, 32.0, 8.0, 8.0, 32.0]
    for i in (2, 5):  # skipped steps leave the parameters alone
        for a, b in zip(params[i - 1], params[i]):
            assert a.tolist() == b.tolist()
    assert scaler.state_dict() == {"scale": 32.0, "growth_factor": 4.0, "backoff_factor": 0.25,
                                   "growth_interval": 2, "_growth_tracker": 0}


def test_state_dict_round_trip_and_pickle():
    _, _, s = _train(pyctorch, "sgd", steps=3, bad_steps=(), init_scale=16.0, growth_interval=5)
    sd = s.state_dict()
    assert sd["_growth_tracker"] == 3 and sd["scale"] == 16.0
    s2 = pyctorch.amp.GradScaler("cpu")
    s2.load_state_dict(sd)
    assert s2.state_dict() == sd and s2.get_scale() == 16.0
    s3 = pickle.loads(pickle.dumps(s))
    assert s3.state_dict() == sd
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        s2.load_state_dict({})


def test_disabled_is_a_passthrough():
    lin, x = _model(pyctorch)
    opt = pyctorch.optim.SGD(lin.parameters(), lr=0.1)
    s = pyctorch.amp.GradScaler("cpu", enabled=False)
    loss = (lin(x) ** 2).mean()
    assert s.scale(loss) is loss
    loss.backward()
    before = lin.weight.detach().clone()
    s.unscale_(opt)
    s.step(opt)
    s.update()
    assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()
    assert lin.weight.tolist() != before.tolist()


def test_errors():
    lin, x = _model(pyctorch)
    opt = pyctorch.optim.SGD(lin.parameters(), lr=0.1)
    s = pyctorch.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="_scale is None"):
        s.unscale_(opt)
    s.scale((lin(x) ** 2).mean()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this optimizer since the last update\(\)."):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)."):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called since the last update\(\)."):
        s.step(opt)
    s.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s.step(opt, closure=lambda: 0)
    with pytest.raises(AssertionError, match="growth factor"):
        pyctorch.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor"):
        pyctorch.amp.GradScaler("cpu", backoff_factor=1.0)
    h = pyctorch.zeros(2, dtype=pyctorch.float16, requires_grad=True)
    h.grad = pyctorch.ones(2, dtype=pyctorch.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        s.unscale_(pyctorch.optim.SGD([h], lr=0.1))


def test_scale_containers_and_new_scale():
    s = pyctorch.amp.GradScaler("cpu", init_scale=4.0)
    a, b = pyctorch.ones(2), pyctorch.ones(3)
    out = s.scale([a, (b, a)])
    assert isinstance(out, list) and isinstance(out[1], tuple) and out[1][0].tolist() == [4.0] * 3
    with pytest.raises(ValueError):
        s.scale(3.0)
    s.update(2.0)
    assert s.get_scale() == 2.0
    s.update(pyctorch.tensor(8.0))
    assert s.get_scale() == 8.0
    with pytest.raises(AssertionError):
        s.update(pyctorch.tensor([1.0, 2.0]))


def test_aliases():
    with pytest.warns(FutureWarning, match="torch.cpu.amp.GradScaler"):
        s = pyctorch.cpu.amp.GradScaler(init_scale=2.0)
    assert s.is_enabled() and s.get_scale() == 2.0 and isinstance(s, pyctorch.amp.GradScaler)
    with pytest.warns(UserWarning, match="CUDA is not available"), pytest.warns(FutureWarning, match="cuda.amp"):
        s = pyctorch.cuda.amp.GradScaler()
    assert not s.is_enabled()
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not pyctorch.amp.GradScaler().is_enabled()  # the default device is cuda, as in torch


# ---- the fused ops ----

def _grads(lib, dtype):
    rs = np.random.RandomState(1)
    big = rs.randn(70000).astype(np.float32)  # above the parallel grain
    gs = [lib.tensor(rs.randn(3, 4).astype(np.float32)).to(getattr(lib, dtype)),
          lib.tensor(big).to(getattr(lib, dtype)),
          lib.tensor(rs.randn(4, 6).astype(np.float32)).to(getattr(lib, dtype)).t()]  # non-contiguous
    return gs


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("bad", [None, "inf", "nan"])
def test_non_finite_check_and_unscale_matches_torch(dtype, bad):
    res = []
    for lib in (pyctorch, torch):
        gs = _grads(lib, dtype)
        if bad:
            gs[2][1, 2] = float(bad)
        found = lib.zeros(())
        inv = lib.full((), 0.125)
        lib._amp_foreach_non_finite_check_and_unscale_(gs, found, inv)
        res.append((gs, found))
    for a, b in zip(res[0][0], res[1][0]):
        assert_same(a, b)
    assert res[0][1].item() == res[1][1].item() == (1.0 if bad else 0.0)


@requires_torch
def test_non_finite_check_errors_match_torch():
    for lib in (pyctorch, torch):
        with pytest.raises(RuntimeError):
            lib._amp_foreach_non_finite_check_and_unscale_([lib.ones(2)], lib.zeros(2), lib.ones(()))
        with pytest.raises(RuntimeError):
            lib._amp_foreach_non_finite_check_and_unscale_([lib.ones(2)], lib.zeros(()), lib.ones((), dtype=lib.float64))
        with pytest.raises(RuntimeError):
            lib._amp_foreach_non_finite_check_and_unscale_([lib.ones(2, dtype=lib.int64)], lib.zeros(()), lib.ones(()))


@requires_torch
@pytest.mark.parametrize("found,tracker,interval", [(0.0, 0, 3), (0.0, 2, 3), (1.0, 2, 3), (0.0, 0, 1)])
def test_update_scale_matches_torch(found, tracker, interval):
    out = []
    for lib in (pyctorch, torch):
        s = lib.full((), 3.0e38 if interval == 1 else 1024.0)
        g = lib.full((), tracker, dtype=lib.int32)
        r = lib._amp_update_scale_(s, g, lib.full((), found), 2.0, 0.5, interval)
        assert r is s
        out.append((s.item(), g.item()))
    assert out[0] == out[1]
    assert math.isfinite(out[0][0])


def test_update_scale_checks():
    s, g, f = pyctorch.full((), 2.0), pyctorch.zeros((), dtype=pyctorch.int32), pyctorch.zeros(())
    with pytest.raises(RuntimeError):
        pyctorch._amp_update_scale_(s, g.long(), f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError):
        pyctorch._amp_update_scale_(s.double(), g, f, 2.0, 0.5, 2)
    pyctorch._amp_update_scale_(s, g, f, 2.0, 0.5, 1)
    assert s.item() == 4.0 and g.item() == 0
