"""optim.Muon and optim.swap_in_optimizer_params_and_state against torch.optim, plus checks that run without torch
(the Newton-Schulz result is close to orthogonal; the swap restores the live optimizer)."""
import numpy as np
import pytest

from conftest import HAVE_TORCH, requires_torch

import pyctorch
import pyctorch.optim

if HAVE_TORCH:
    import torch

SHAPES = [(8, 4), (4, 8), (6, 6)]
CONFIGS = [{"lr": 0.02}, {"lr": 0.02, "nesterov": False, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.01},
           {"lr": 0.05, "momentum": 0.0, "ns_steps": 3, "adjust_lr_fn": "original"},
           {"lr": 0.01, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-5}]


def _data(seed=0, steps=4):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]
    return init, grads


def _run(lib, config, steps=4):
    init, grads = _data(steps=steps)
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    opt = lib.optim.Muon(params, **config)
    for k in range(steps):
        for p, g in zip(params, grads[k]):
            p.grad = lib.tensor(g)
        opt.step()
    return [p.detach().numpy() for p in params], [opt.state[p]["momentum_buffer"].numpy() for p in params]


@requires_torch
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_muon_matches_torch(config):
    ours, ours_bufs = _run(pyctorch, config)
    theirs, their_bufs = _run(torch, config)
    for a, b in zip(ours + ours_bufs, theirs + their_bufs):
        # same ops in the same order, bfloat16 Newton-Schulz included: equal up to float32 rounding
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_newton_schulz_is_nearly_orthogonal():
    from pyctorch.optim._muon import _zeropower_via_newtonschulz
    g = pyctorch.tensor(np.random.default_rng(1).standard_normal((6, 10)).astype(np.float32))
    o = _zeropower_via_newtonschulz(g, (3.4445, -4.7750, 2.0315), 5, 1e-7).float()
    assert o.dtype == pyctorch.float32 and o.shape == (6, 10)
    s = np.linalg.svd(o.numpy(), compute_uv=False)
    assert np.all((s > 0.5) & (s < 1.5)), s  # the quintic's fixed band around 1, not exactly 1
    tall = _zeropower_via_newtonschulz(g.T.contiguous(), (3.4445, -4.7750, 2.0315), 5, 1e-7)
    np.testing.assert_allclose(tall.float().numpy(), o.numpy().T, rtol=0, atol=0)


def test_muon_update_rule_by_hand():
    """One step, momentum 0: p <- p(1 - lr wd) - lr * sqrt(max(1, rows/cols)) * NS(g)."""
    from pyctorch.optim._muon import _zeropower_via_newtonschulz
    init, grads = _data()
    p = pyctorch.tensor(init[0].copy(), requires_grad=True)
    opt = pyctorch.optim.Muon([p], lr=0.1, momentum=0.0, weight_decay=0.5, nesterov=False)
    p.grad = pyctorch.tensor(grads[0][0])
    opt.step()
    ns = _zeropower_via_newtonschulz(pyctorch.tensor(grads[0][0]), (3.4445, -4.7750, 2.0315), 5, 1e-7).float()
    expected = init[0] * (1 - 0.1 * 0.5) - 0.1 * np.sqrt(8 / 4) * ns.numpy()
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6, atol=1e-6)


def _errors(lib):
    out = []
    w = lib.zeros(3, 3, requires_grad=True)
    for args, kwargs in [((), {"lr": -1.0}), ((), {"momentum": -0.5}), ((), {"weight_decay": -1.0}),
                         ((), {"adjust_lr_fn": "nope"}), ((), {"lr": lib.ones(2)})]:
        try:
            lib.optim.Muon([w], *args, **kwargs)
            out.append(None)
        except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
            out.append((type(e).__name__, str(e)))
    for bad in [lib.zeros(3, requires_grad=True), lib.zeros(2, 2, 2, requires_grad=True)]:
        try:
            lib.optim.Muon([bad])
            out.append(None)
        except ValueError as e:
            out.append(str(e))
    c = lib.zeros(2, 2, dtype=lib.complex64, requires_grad=True)
    opt = lib.optim.Muon([c])
    c.grad = lib.ones(2, 2, dtype=lib.complex64)
    try:
        opt.step()
    except RuntimeError as e:
        out.append(str(e))
    try:
        lib.optim._muon.muon([w], [lib.ones(3, 3)], [lib.zeros(3, 3)], foreach=True, lr=0.1, weight_decay=0.0,
                             momentum=0.9, nesterov=True, ns_coefficients=(1, 1, 1), ns_steps=1, eps=1e-7,
                             adjust_lr_fn=None, has_complex=False)
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_muon_errors():
    errs = _errors(pyctorch)
    assert errs[0] == ("ValueError", "Learning rate should be >= 0 but is: -1.0")
    assert "Muon only supports 2D parameters" in errs[5]
    if HAVE_TORCH:
        assert errs == _errors(torch)


def _swap_case(lib):
    """An Adam optimizer stepped once; then a step inside the swap on other tensors and another state."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Linear(4, 2))
    opt = lib.optim.Adam([{"params": model[0].parameters()}, {"params": model[1].parameters(), "lr": 0.01}], lr=0.1)
    x = lib.arange(6.0).reshape(2, 3) / 6
    model(x).square().sum().backward()
    opt.step()
    live_params = [p.detach().clone() for p in model.parameters()]
    live_state = {k: v.clone() for k, v in opt.state[model[0].weight].items()}
    osd = opt.state_dict()
    osd = {"state": {k: {n: t.clone() for n, t in v.items()} for k, v in osd["state"].items()},
           "param_groups": [dict(g, lr=g["lr"] * 10) for g in osd["param_groups"]]}
    swap_params = {n: p.detach().clone().requires_grad_(True) for n, p in model.named_parameters()}
    groups_before = [g["params"] for g in opt.param_groups]
    with lib.optim.swap_in_optimizer_params_and_state(opt, swap_params, osd):
        assert [g["lr"] for g in opt.param_groups] == [1.0, 0.1]
        for p in swap_params.values():
            p.grad = lib.ones_like(p)
        opt.step()
    assert all(a is b for a, b in zip(groups_before, (g["params"] for g in opt.param_groups)))
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    for a, b in zip(live_params, model.parameters()):
        assert lib.equal(a, b)
    for k, v in live_state.items():
        assert lib.equal(v, opt.state[model[0].weight][k])
    return ([p.detach().numpy() for p in swap_params.values()],
            [osd["state"][0]["exp_avg"].numpy(), osd["state"][3]["exp_avg_sq"].numpy()])


def test_swap_in_optimizer_params_and_state():
    params, states = _swap_case(pyctorch)
    if HAVE_TORCH:
        tparams, tstates = _swap_case(torch)
        for a, b in zip(params + states, tparams + tstates):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def _swap_errors(lib):
    model = lib.nn.Linear(2, 2)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    out = []

    def attempt(params, osd):
        try:
            with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
                pass
            out.append(None)
        except RuntimeError as e:
            out.append(str(e))
    named = dict(model.named_parameters())
    attempt(named, {"state": {}, "param_groups": []})          # no state yet
    model(lib.ones(1, 2)).sum().backward()
    opt.step()
    good = opt.state_dict()
    attempt(named, [])
    attempt(named, {"state": [], "param_groups": good["param_groups"]})
    attempt(named, {"state": good["state"], "param_groups": {}})
    attempt(named, {"state": good["state"], "param_groups": []})
    attempt(named, {"state": good["state"], "param_groups": [dict(good["param_groups"][0], extra=1)]})
    attempt(named, {"state": good["state"], "param_groups": [dict(good["param_groups"][0], params=[0])]})
    attempt(named, {"state": {**good["state"], 7: {}}, "param_groups": good["param_groups"]})
    attempt({"w": named["weight"]}, good)
    attempt(named, {"state": {0: 1}, "param_groups": good["param_groups"]})
    return out


def test_swap_in_errors():
    errs = _swap_errors(pyctorch)
    assert errs[0] == "swap_in_optimizer_params_and_state requires initialized optimizer state."
    assert all(e is not None for e in errs)
    if HAVE_TORCH:
        assert errs == _swap_errors(torch)
