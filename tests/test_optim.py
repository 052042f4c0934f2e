"""pyctorch.optim against torch.optim (for-loop implementations) and hand-computed values."""
import math
import warnings

import numpy as np
import pytest

from conftest import HAVE_TORCH, assert_same, requires_torch

import pyctorch
import pyctorch.optim

if HAVE_TORCH:
    import torch

SHAPES = [((3, 4), "float32"), ((5,), "float64"), ((2, 3, 2), "float32"), ((), "float64")]


def _init_arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dt) for shape, dt in SHAPES]


def _targets(seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dt) for shape, dt in SHAPES]


def _loss(lib, params, targets):
    """A fixed non-trivial loss: sum of w*(p-t)^2 + 0.1*p^4 over all params (gradients vary per step)."""
    total = None
    for k, (p, t) in enumerate(zip(params, targets)):
        term = ((p - t) * (p - t) * (k + 1.0)).sum() + (p * p * p * p * 0.1).sum()
        term = term.to(lib.float64) if hasattr(term, "to") else term
        total = term if total is None else total + term
    return total


def _make(lib, arrays):
    return [lib.tensor(a.copy(), requires_grad=True) for a in arrays]


def _groups(params, groups_spec):
    if groups_spec is None:
        return params
    return [{"params": [params[i] for i in idx], **opts} for idx, opts in groups_spec]


def _tol(dtype_name):
    # float32: torch's CPU add_(x, alpha=a) is a fused multiply-add (one rounding); pyctorch rounds a*x first, so
    # differ by ~1 ulp per op and drift a little over 20 momentum steps; float64 agrees to ~1e-15.
    return (2e-5, 1e-6) if dtype_name == "float32" else (1e-12, 1e-14)


TOL = {"float32": _tol("float32"), "float64": _tol("float64")}


def _to_pyc(v):
    """Convert a torch state-dict value to pyctorch (recursively)."""
    if isinstance(v, torch.Tensor):
        return pyctorch.tensor(v.detach().numpy().copy())
    if isinstance(v, dict):
        return {k: _to_pyc(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_to_pyc(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_to_pyc(x) for x in v)
    return v


def _run_pair(cls_name, kwargs, groups_spec=None, steps=20, lr_tensor=False):
    arrays, targets = _init_arrays(), _targets()
    pp, tp = _make(pyctorch, arrays), _make(torch, arrays)
    ptg = [pyctorch.tensor(t) for t in targets]
    ttg = [torch.tensor(t) for t in targets]
    pkw, tkw = dict(kwargs), dict(kwargs)
    if lr_tensor:
        pkw["lr"] = pyctorch.tensor(kwargs["lr"])
        tkw["lr"] = torch.tensor(kwargs["lr"])
    popt = getattr(pyctorch.optim, cls_name)(_groups(pp, groups_spec), foreach=False, **pkw)
    topt = getattr(torch.optim, cls_name)(_groups(tp, groups_spec), foreach=False, **tkw)
    for _ in range(steps):
        _step_both(popt, topt, pp, tp, ptg)
        assert_same(pp, tp, tol=TOL)
    return popt, topt, pp, tp, ptg, ttg


def _step_both(popt, topt, pp, tp, ptg):
    """One step in each library with bit-identical gradients: pyctorch's autograd gradient of the loss
    at pyctorch's parameters, copied into torch (so float32 rounding differences in the *loss gradient*
    cannot be amplified by momentum; only the optimizer update itself is compared)."""
    popt.zero_grad()
    topt.zero_grad()
    _loss(pyctorch, pp, ptg).backward()
    for p, t in zip(pp, tp):
        t.grad = torch.tensor(p.grad.numpy().copy())
    popt.step()
    topt.step()


SGD_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, momentum=0.9),
    dict(lr=0.01, momentum=0.9, dampening=0.3),
    dict(lr=0.01, momentum=0.9, nesterov=True),
    dict(lr=0.01, momentum=0.8, weight_decay=0.05),
    dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True),
    dict(lr=0.005, weight_decay=0.1, maximize=True),
]
ADAM_CASES = [
    dict(),
    dict(lr=0.01),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True),
]
GROUPS = [([0, 2], {"lr": 0.02}), ([1, 3], {})]


@requires_torch
@pytest.mark.parametrize("kwargs", SGD_CASES, ids=str)
def test_sgd_matches_torch(kwargs):
    popt, topt, *_ = _run_pair("SGD", kwargs)
    ps, ts = popt.state_dict(), topt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)


@requires_torch
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=str)
def test_adam_matches_torch(cls, kwargs):
    popt, topt, *_ = _run_pair(cls, kwargs)
    ps, ts = popt.state_dict(), topt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)


@requires_torch
@pytest.mark.parametrize("cls,kwargs", [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=0.01)),
                                        ("AdamW", dict(lr=0.01, amsgrad=True))])
def test_param_groups_match_torch(cls, kwargs):
    spec = [([0, 2], {"lr": 0.03}), ([1, 3], {"weight_decay": 0.2})]
    popt, topt, *_ = _run_pair(cls, kwargs, groups_spec=spec)
    ps, ts = popt.state_dict(), topt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)
    assert ps["param_groups"][0]["params"] == [0, 1] and ps["param_groups"][1]["params"] == [2, 3]


@requires_torch
@pytest.mark.parametrize("cls,kwargs", [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=0.01)),
                                        ("AdamW", dict(lr=0.01, weight_decay=0.1))])
def test_tensor_lr_matches_torch(cls, kwargs):
    _run_pair(cls, kwargs, steps=10, lr_tensor=True)


@requires_torch
@pytest.mark.parametrize("cls,kwargs", [("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)),
                                        ("Adam", dict(lr=0.01, amsgrad=True)),
                                        ("AdamW", dict(lr=0.01))])
def test_load_torch_state_dict_then_continue(cls, kwargs):
    popt, topt, pp, tp, ptg, ttg = _run_pair(cls, kwargs, groups_spec=GROUPS, steps=7)
    # A fresh pyctorch optimizer on fresh copies of torch's params, loaded from torch's state dict.
    pp2 = [pyctorch.tensor(t.detach().numpy().copy(), requires_grad=True) for t in tp]
    spec = [([0, 2], {"lr": 0.5}), ([1, 3], {"lr": 0.5})]  # hyperparameters get overwritten by the load
    popt2 = getattr(pyctorch.optim, cls)(_groups(pp2, spec), **kwargs)
    popt2.load_state_dict(_to_pyc(topt.state_dict()))
    assert popt2.param_groups[0]["lr"] == 0.02
    assert popt2.param_groups[0]["params"][0] is pp2[0]
    ps, ts = popt2.state_dict(), topt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)
    for _ in range(5):
        _step_both(popt2, topt, pp2, tp, ptg)
        assert_same(pp2, tp, tol=TOL)
    ps, ts = popt2.state_dict(), topt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)


# ---------------------------------------------------------------- always-run checks (hand-computed)


def _p(values, dtype=pyctorch.float64):
    return pyctorch.tensor(values, dtype=dtype, requires_grad=True)


def test_sgd_hand_computed():
    p = _p([1.0, -2.0])
    opt = pyctorch.optim.SGD([p], lr=0.1, momentum=0.5, weight_decay=0.1)
    g = [0.5, 1.0]
    p.grad = pyctorch.tensor(g, dtype=pyctorch.float64)
    opt.step()
    # step 1: d = g + 0.1*p ; buf = d ; p -= 0.1*buf
    d1 = [g[0] + 0.1 * 1.0, g[1] + 0.1 * -2.0]
    x1 = [1.0 - 0.1 * d1[0], -2.0 - 0.1 * d1[1]]
    np.testing.assert_allclose(p.tolist(), x1, rtol=1e-15)
    opt.step()
    d2 = [g[i] + 0.1 * x1[i] for i in range(2)]
    buf2 = [0.5 * d1[i] + d2[i] for i in range(2)]
    x2 = [x1[i] - 0.1 * buf2[i] for i in range(2)]
    np.testing.assert_allclose(p.tolist(), x2, rtol=1e-15)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].tolist(), buf2, rtol=1e-15)


def test_sgd_maximize_nesterov_hand_computed():
    p = _p([1.0])
    opt = pyctorch.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, maximize=True)
    p.grad = pyctorch.tensor([2.0], dtype=pyctorch.float64)
    opt.step()
    # g=-2, buf=-2, update = g + 0.9*buf = -3.8 ; p = 1 + 0.38
    np.testing.assert_allclose(p.tolist(), [1.38], rtol=1e-15)


def _adam_ref(x, grads, lr, b1, b2, eps, wd=0.0, decoupled=False, amsgrad=False):
    m = v = vmax = 0.0
    for t, g in enumerate(grads, 1):
        if wd and decoupled:
            x = x * (1 - lr * wd)
        elif wd:
            g = g + wd * x
        m = m + (g - m) * (1 - b1)
        v = v * b2 + (1 - b2) * g * g
        vmax = max(vmax, v)
        denom = math.sqrt(vmax if amsgrad else v) / math.sqrt(1 - b2 ** t) + eps
        x = x - lr / (1 - b1 ** t) * m / denom
    return x


@pytest.mark.parametrize("cls,kw", [
    ("Adam", dict()), ("Adam", dict(weight_decay=0.1)), ("Adam", dict(amsgrad=True)),
    ("AdamW", dict()), ("AdamW", dict(weight_decay=0.3, amsgrad=True)),
])
def test_adam_hand_computed(cls, kw):
    grads = [0.5, -1.0, 2.0, 0.1]
    p = _p([1.5])
    opt = getattr(pyctorch.optim, cls)([p], lr=0.1, betas=(0.9, 0.99), eps=1e-8, **kw)
    for g in grads:
        p.grad = pyctorch.tensor([g], dtype=pyctorch.float64)
        opt.step()
    decoupled = cls == "AdamW"
    wd = kw.get("weight_decay", 0.01 if decoupled else 0.0)
    ref = _adam_ref(1.5, grads, 0.1, 0.9, 0.99, 1e-8, wd=wd, decoupled=decoupled, amsgrad=kw.get("amsgrad", False))
    np.testing.assert_allclose(p.tolist(), [ref], rtol=1e-12)
    st = opt.state[p]
    assert st["step"].dtype == pyctorch.float32 and st["step"].dim() == 0 and st["step"].item() == 4.0
    assert ("max_exp_avg_sq" in st) == kw.get("amsgrad", False)
    assert st["exp_avg"].dtype == pyctorch.float64


def test_adamw_default_weight_decay_and_flags():
    p = _p([1.0])
    assert pyctorch.optim.AdamW([p]).defaults["weight_decay"] == 0.01
    assert pyctorch.optim.AdamW([p]).defaults["decoupled_weight_decay"] is True
    assert pyctorch.optim.Adam([p]).defaults["weight_decay"] == 0
    assert isinstance(pyctorch.optim.AdamW([p]), pyctorch.optim.Adam)


def test_invalid_arguments():
    p = _p([1.0])
    O = pyctorch.optim
    with pytest.raises(ValueError, match="Invalid learning rate"):
        O.SGD([p], lr=-1.0)
    with pytest.raises(ValueError, match="Invalid momentum value"):
        O.SGD([p], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="Invalid weight_decay value"):
        O.SGD([p], lr=0.1, weight_decay=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        O.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        O.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        O.Adam([p], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        O.AdamW([p], betas=(0.9, -0.1))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        O.Adam([p], eps=-1e-8)
    with pytest.raises(ValueError, match="Invalid weight_decay value"):
        O.Adam([p], weight_decay=-0.1)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        O.Adam([p], lr=pyctorch.tensor([0.1, 0.2]))
    # accepted as torch accepts them; capturable=True needs a graph-capturable device at step time
    cap = O.Adam([p], capturable=True)
    p.grad = pyctorch.ones_like(p)
    with pytest.raises(AssertionError, match="If capturable=True, params and state_steps must be on supported"):
        cap.step()
    p.grad = None
    O.AdamW([p], differentiable=True)
    O.SGD([p], differentiable=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        O.SGD([p], fused=True, differentiable=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        O.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        O.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        O.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        O.SGD([p * 2], lr=0.1)
    O.SGD([p], lr=0.1, foreach=True, fused=None)  # accepted and ignored
    O.Adam([p], foreach=False, fused=False)


def test_add_param_group():
    a, b, c = _p([1.0]), _p([2.0]), _p([3.0])
    opt = pyctorch.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["params"] == [b] or opt.param_groups[1]["params"][0] is b
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([c])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {c}})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        opt.add_param_group({"params": [c, c]})
    assert any("duplicate parameters" in str(x.message) for x in w)
    assert len(opt.param_groups) == 3


def test_required_lr_in_subclass():
    from pyctorch.optim.optimizer import required

    class Plain(pyctorch.optim.Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, dict(lr=lr))

    with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
        Plain([_p([1.0])])
    opt = Plain([{"params": [_p([1.0])], "lr": 0.1}])
    assert opt.param_groups[0]["lr"] == 0.1


def test_zero_grad_modes():
    p = _p([1.0, 2.0])
    opt = pyctorch.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0]
    (p * p).sum().backward()
    assert p.grad.tolist() == [2.0, 4.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grad: parameter untouched, no state
    assert p.tolist() == [1.0, 2.0] and len(opt.state) == 0


def test_closure_and_grad_mode():
    p = _p([3.0])
    opt = pyctorch.optim.SGD([p], lr=0.25)
    seen = {}

    def closure():
        seen["grad_enabled"] = pyctorch.is_grad_enabled()
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with pyctorch.no_grad():
        loss = opt.step(closure)
    assert seen["grad_enabled"] is True
    assert loss.item() == 9.0
    assert p.tolist() == [3.0 - 0.25 * 6.0]
    assert opt.step() is None
    assert not p.requires_grad or p.grad_fn is None  # the in-place update is not recorded


def test_step_hooks():
    p = _p([1.0])
    opt = pyctorch.optim.Adam([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", len(o.state))))
    from pyctorch.utils.hooks import RemovableHandle
    assert isinstance(h1, RemovableHandle) and isinstance(h2, RemovableHandle)
    p.grad = pyctorch.tensor([1.0], dtype=pyctorch.float64)
    opt.step()
    assert calls == [("pre", True), ("post", 1)]
    h1.remove()
    opt.step()
    assert calls[2:] == [("post", 1)]
    h2.remove()
    opt.step()
    assert len(calls) == 3

    # a pre hook may replace the arguments (here: supply a closure)
    def add_closure(o, args, kwargs):
        return args, {"closure": lambda: 42}

    with opt.register_step_pre_hook(add_closure):
        assert opt.step() == 42
    assert opt.step() is None


def test_state_dict_layout_and_roundtrip():
    a, b = _p([1.0, 2.0]), _p([[3.0]], pyctorch.float32)
    opt = pyctorch.optim.SGD([{"params": [a], "lr": 0.1}, {"params": [b]}], lr=0.2, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        ((a * a).sum() + (b * b).sum().double()).backward()
        opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1]
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][0]["lr"] == 0.1 and sd["param_groups"][1]["lr"] == 0.2
    assert set(sd["state"][0]) == {"momentum_buffer"}
    a2, b2 = _p(a.tolist()), _p(b.tolist(), pyctorch.float32)
    opt2 = pyctorch.optim.SGD([{"params": [a2]}, {"params": [b2]}], lr=1.0, momentum=0.9)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["params"][0] is a2
    assert opt2.state[b2]["momentum_buffer"].tolist() == opt.state[b]["momentum_buffer"].tolist()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        pyctorch.optim.SGD([a2, b2], lr=1.0).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        pyctorch.optim.SGD([{"params": [a2, b2]}, {"params": [_p([0.0])]}], lr=1.0).load_state_dict(sd)


def test_python_subclass():
    class SignSGD(pyctorch.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        @pyctorch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with pyctorch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    st["n"] = st.get("n", 0) + 1
                    p.add_(p.grad.sign(), alpha=-group["lr"])
            return loss

    p = _p([1.0, -1.0, 0.5])
    opt = SignSGD([p], lr=0.25)
    hits = []
    opt.register_step_post_hook(lambda o, a, k: hits.append(1))
    (p * p * p).sum().backward()
    opt.step()
    assert p.tolist() == [0.75, -1.25, 0.25]  # grad 3p^2 >= 0
    assert opt.state[p]["n"] == 1 and hits == [1]
    assert opt.state_dict()["state"] == {0: {"n": 1}}
    assert "SignSGD" in repr(opt) and "lr: 0.25" in repr(opt)
