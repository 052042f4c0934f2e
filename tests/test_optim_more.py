"""RMSprop, Adagrad, Adamax, NAdam, RAdam, LBFGS and the fused C steps (_fused_adam_, _fused_adamw_,
_fused_sgd_, _fused_adagrad_) against torch.optim, plus hand-computed checks that run without torch."""
import inspect
import math

import numpy as np
import pytest

from conftest import HAVE_TORCH, assert_same, requires_torch

import pyctorch
import pyctorch.optim
from pyctorch import _C

if HAVE_TORCH:
    import torch

SHAPES = [((3, 4), "float32"), ((5,), "float64"), ((2, 3, 2), "float32"), ((), "float64"), ((7, 9), "float32")]


def _arrays(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dt) for shape, dt in SHAPES]


def _grads(params, targets, k_step):
    """The gradient of sum_k (k+1)(p-t)^2 + 0.1 p^4 at pyctorch's current params, in numpy (each library
    gets the same values, so only the optimizer updates are compared), times a step-dependent factor."""
    out = []
    for k, (p, t) in enumerate(zip(params, targets)):
        x = p.detach().numpy()
        g = (2 * (k + 1) * (x - t) + 0.4 * x ** 3) * (1 + 0.1 * math.sin(k_step + k))
        out.append(np.asarray(g, dtype=x.dtype))
    return out


def _tol(dtype):
    # float32: pyctorch's Python steps round add(alpha)/addcmul/lerp once per op where torch fuses a
    # multiply-add, and torch's sqrt (MKL) is not correctly rounded: ~1 ulp per op, drifting over the steps
    return (2e-5, 2e-6) if dtype == np.float32 else (1e-12, 1e-13)


# the parameters after each step; the fused C steps: only the sqrt's 1-ulp differences remain; the state
PARAM_TOL = {"float32": _tol(np.float32), "float64": _tol(np.float64)}
FUSED_TOL = {k: (r / 10, a / 10) for k, (r, a) in PARAM_TOL.items()}
STATE_TOL = {k: (r * 50, a * 50) for k, (r, a) in PARAM_TOL.items()}


def _to_torch(v):
    if isinstance(v, pyctorch.Tensor):
        return torch.tensor(v.detach().numpy().copy())
    if isinstance(v, dict):
        return {k: _to_torch(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_to_torch(x) for x in v)
    return v


def _to_pyc(v):
    if HAVE_TORCH and isinstance(v, torch.Tensor):
        return pyctorch.tensor(v.detach().numpy().copy())
    if isinstance(v, dict):
        return {k: _to_pyc(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_to_pyc(x) for x in v)
    return v


def _groups(params, spec):
    if spec is None:
        return params
    return [{"params": [params[i] for i in idx], **opts} for idx, opts in spec]


def _run_pair(cls, kwargs, steps=20, spec=None, pyc_extra=None, seed=0, torch_extra=None):
    arrays, targets = _arrays(seed), _arrays(seed + 1)
    pp = [pyctorch.tensor(a.copy(), requires_grad=True) for a in arrays]
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    popt = getattr(pyctorch.optim, cls)(_groups(pp, spec), **kwargs, **(pyc_extra or {}))
    topt = getattr(torch.optim, cls)(_groups(tp, spec), **kwargs, **(torch_extra or {}))
    for s in range(steps):
        _step_both(popt, topt, pp, tp, targets, s)
    return popt, topt, pp, tp, targets


def _step_both(popt, topt, pp, tp, targets, s):
    for p, t, g in zip(pp, tp, _grads(pp, targets, s)):
        p.grad = pyctorch.tensor(g.copy())
        t.grad = torch.tensor(g.copy())
    popt.step()
    topt.step()


CASES = [
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, eps=1e-3)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, eps=1e-6, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-4)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9))),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]
# the optimizers with a fused C step (the default path), with the option combinations it branches on
C_CASES = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.5), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True, maximize=True)),
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.0005, momentum=0.5, nesterov=True, maximize=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, maximize=True)),
]


@requires_torch
@pytest.mark.parametrize("cls,kwargs", CASES, ids=lambda x: str(x))
def test_matches_torch(cls, kwargs):
    popt, topt, pp, tp, targets = _run_pair(cls, kwargs, steps=0)
    for s in range(20):
        _step_both(popt, topt, pp, tp, targets, s)
        assert_same(pp, tp, tol=PARAM_TOL)
    assert_same(popt.state_dict(), topt.state_dict(), tol=STATE_TOL)


@requires_torch
@pytest.mark.parametrize("path", ["default", "fused", "foreach=False"])
@pytest.mark.parametrize("cls,kwargs", C_CASES, ids=lambda x: str(x))
def test_fused_paths_match_torch(cls, kwargs, path):
    extra = {"default": {}, "fused": {"fused": True}, "foreach=False": {"foreach": False}}[path]
    popt, topt, pp, tp, targets = _run_pair(cls, kwargs, steps=0, pyc_extra=extra,
                                            torch_extra=extra if path == "foreach=False" else None)
    for s in range(20):
        _step_both(popt, topt, pp, tp, targets, s)
        assert_same(pp, tp, tol=FUSED_TOL if path != "foreach=False" else PARAM_TOL)
    ps, ts = popt.state_dict(), topt.state_dict()
    if path == "fused":  # the group records fused=True (torch's records its own flag)
        for g in ps["param_groups"]:
            assert g["fused"] is True
            g["fused"] = None
        for st in ps["state"].values():
            if "step" in st:
                assert st["step"].dtype == pyctorch.float32
    assert_same(ps, ts, tol=STATE_TOL)


@requires_torch
@pytest.mark.parametrize("cls,kwargs", [("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
                                        ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
                                        ("RAdam", dict(lr=0.01, betas=(0.9, 0.9))), ("Adagrad", dict(lr=0.05)),
                                        ("Adam", dict(lr=0.01, amsgrad=True)), ("SGD", dict(lr=0.01, momentum=0.9))])
def test_param_groups_and_state_dict_round_trip(cls, kwargs):
    spec = [([0, 2, 4], {"lr": 0.02}), ([1, 3], {"weight_decay": 0.1})]
    popt, topt, pp, tp, targets = _run_pair(cls, kwargs, steps=7, spec=spec)
    assert_same(popt.state_dict(), topt.state_dict(), tol=STATE_TOL)

    # torch's state dict into a fresh pyctorch optimizer (on copies of torch's params), then continue
    pp2 = [pyctorch.tensor(t.detach().numpy().copy(), requires_grad=True) for t in tp]
    popt2 = getattr(pyctorch.optim, cls)(_groups(pp2, [([0, 2, 4], {"lr": 0.5}), ([1, 3], {})]), **kwargs)
    popt2.load_state_dict(_to_pyc(topt.state_dict()))
    assert popt2.param_groups[0]["lr"] == 0.02 and popt2.param_groups[0]["params"][1] is pp2[2]
    # loading casts floating state to the param's dtype ('step' excepted): compare with torch doing the same
    tp_l = [torch.tensor(t.detach().numpy().copy(), requires_grad=True) for t in tp]
    topt_l = getattr(torch.optim, cls)(_groups(tp_l, [([0, 2, 4], {}), ([1, 3], {})]), **kwargs)
    topt_l.load_state_dict(topt.state_dict())
    assert_same(popt2.state_dict(), topt_l.state_dict(), tol=STATE_TOL)

    # and pyctorch's state dict into a fresh torch optimizer
    tp2 = [torch.tensor(p.detach().numpy().copy(), requires_grad=True) for p in pp2]
    topt2 = getattr(torch.optim, cls)(_groups(tp2, [([0, 2, 4], {}), ([1, 3], {})]), **kwargs)
    topt2.load_state_dict(_to_torch(popt2.state_dict()))
    for s in range(7, 12):
        _step_both(popt2, topt2, pp2, tp2, targets, s)
        assert_same(pp2, tp2, tol=PARAM_TOL)
    assert_same(popt2.state_dict(), topt2.state_dict(), tol=STATE_TOL)


# ---------------------------------------------------------------- the fused C steps, bit for bit

def _torch_adam_reference(p, g, m, v, vmax, step, lr, b1, b2, wd, eps, amsgrad, maximize, decoupled):
    """torch's single-tensor Adam step, op by op, with a correctly rounded sqrt instead of MKL's."""
    g = -g if maximize else g
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            g = g.add(p, alpha=wd)
    m.lerp_(g, 1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
    u = v
    if amsgrad:
        torch.maximum(vmax, v, out=vmax)
        u = vmax
    denom = (torch.from_numpy(np.sqrt(u.numpy())) / bc2 ** 0.5).add_(eps)
    p.addcdiv_(m, denom, value=-(lr / bc1))


SIZES = [1013, 70001, 0, 8, 3]  # tails, a tensor of several work chunks, an empty one, tiny ones


def _lists(lib, dtype, rng, n_state):
    ps = [lib.tensor(rng.standard_normal(n).astype(dtype)) for n in SIZES]
    states = [[lib.zeros(n, dtype=getattr(lib, np.dtype(dtype).name)) for n in SIZES] for _ in range(n_state)]
    return ps, states


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("decoupled,amsgrad,maximize,wd,betas", [
    (False, False, False, 0.0, (0.9, 0.999)), (False, True, True, 0.1, (0.9, 0.99)),
    (True, False, True, 0.1, (0.3, 0.5)), (True, True, False, 0.0, (0.8, 0.9))])
def test_fused_adam_bitwise_equals_torch_ops(dtype, decoupled, amsgrad, maximize, wd, betas):
    rng = np.random.default_rng(3)
    pp, (pm, pv, px) = _lists(pyctorch, dtype, rng, 3)
    tp = [torch.tensor(p.numpy().copy()) for p in pp]
    tm, tv, tx = ([torch.zeros(n, dtype=getattr(torch, np.dtype(dtype).name)) for n in SIZES] for _ in range(3))
    steps = [pyctorch.tensor(0.0) for _ in SIZES]
    fn = _C._fused_adamw_ if decoupled else _C._fused_adam_
    lr, eps = 0.01, 1e-8
    for s in range(1, 8):
        grads = [rng.standard_normal(n).astype(dtype) for n in SIZES]
        for st in steps:
            st += 1
        fn(pp, [pyctorch.tensor(g) for g in grads], pm, pv, px if amsgrad else [], steps, lr=lr, beta1=betas[0],
           beta2=betas[1], weight_decay=wd, eps=eps, amsgrad=amsgrad, maximize=maximize)
        for i, g in enumerate(grads):
            _torch_adam_reference(tp[i], torch.tensor(g), tm[i], tv[i], tx[i], s, lr, betas[0], betas[1], wd, eps,
                                  amsgrad, maximize, decoupled)
    for a, b in zip(pp + pm + pv, tp + tm + tv):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert [st.item() for st in steps] == [7.0] * len(SIZES)


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.01, momentum=0.9, dampening=0.2, weight_decay=0.1),
                                dict(lr=0.01, momentum=0.9, nesterov=True, maximize=True)])
def test_fused_sgd_bitwise_equals_torch(dtype, kw):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(n).astype(dtype) for n in SIZES]
    pp = [pyctorch.tensor(a.copy(), requires_grad=True) for a in arrays]
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    popt, topt = pyctorch.optim.SGD(pp, **kw), torch.optim.SGD(tp, **kw)
    for _ in range(8):
        for p, t in zip(pp, tp):
            g = rng.standard_normal(tuple(p.shape)).astype(dtype)
            p.grad, t.grad = pyctorch.tensor(g), torch.tensor(g)
        popt.step()
        topt.step()
    for p, t in zip(pp, tp):
        np.testing.assert_array_equal(p.detach().numpy(), t.detach().numpy())
    if kw.get("momentum"):
        for p, t in zip(pp, tp):
            np.testing.assert_array_equal(popt.state[p]["momentum_buffer"].numpy(),
                                          topt.state[t]["momentum_buffer"].numpy())


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_adagrad_bitwise_equals_torch_ops(dtype):
    rng = np.random.default_rng(5)
    pp, (ps,) = _lists(pyctorch, dtype, rng, 1)
    for s in ps:
        s.fill_(0.1)
    tp = [torch.tensor(p.numpy().copy()) for p in pp]
    ts = [torch.full((n,), 0.1, dtype=getattr(torch, np.dtype(dtype).name)) for n in SIZES]
    steps = [pyctorch.tensor(0.0) for _ in SIZES]
    lr, lr_decay, wd, eps = 0.1, 0.01, 0.1, 1e-10
    for s in range(1, 8):
        grads = [rng.standard_normal(n).astype(dtype) for n in SIZES]
        for st in steps:
            st += 1
        _C._fused_adagrad_(pp, [pyctorch.tensor(g) for g in grads], ps, steps, lr=lr, lr_decay=lr_decay,
                           weight_decay=wd, eps=eps, maximize=True)
        for i, g in enumerate(grads):
            g = -torch.tensor(g)
            g = g.add(tp[i], alpha=wd)
            ts[i].addcmul_(g, g, value=1)
            std = torch.from_numpy(np.sqrt(ts[i].numpy())).add_(eps)
            tp[i].addcdiv_(g, std, value=-(lr / (1 + (s - 1) * lr_decay)))
    for a, b in zip(pp + ps, tp + ts):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("cls,kw", [("Adam", dict(lr=0.01, weight_decay=0.1, eps=1e-3)), ("AdamW", dict(lr=0.01)),
                                    ("Adagrad", dict(lr=0.05, weight_decay=0.1)),
                                    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.1))])
def test_fused_half_dtypes_match_torch(dtype, cls, kw):
    # float16/bfloat16 compute in float and round every op's result, as torch's op-by-op step stores them
    rng = np.random.default_rng(6)
    x = rng.standard_normal(517)
    pp = pyctorch.tensor(x, dtype=getattr(pyctorch, dtype), requires_grad=True)
    tp = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    popt, topt = getattr(pyctorch.optim, cls)([pp], **kw), getattr(torch.optim, cls)([tp], **kw)
    for _ in range(10):
        g = rng.standard_normal(517)
        pp.grad = pyctorch.tensor(g, dtype=getattr(pyctorch, dtype))
        tp.grad = torch.tensor(g, dtype=getattr(torch, dtype))
        popt.step()
        topt.step()
    a, b = np.array(pp.detach().float().tolist()), tp.detach().float().numpy()
    assert str(pp.dtype) == str(tp.dtype)
    assert (a != b).sum() <= 5  # SGD: add(alpha) on 16-bit tensors differs in a rare rounding
    np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2)


@requires_torch
def test_fused_equals_default_and_close_to_python_loop():
    arrays = _arrays(7)
    outs = {}
    for mode, extra in (("default", {}), ("fused", {"fused": True}), ("loop", {"foreach": False})):
        for cls in ("Adam", "AdamW"):
            ps = [pyctorch.tensor(a.copy(), requires_grad=True) for a in arrays]
            opt = getattr(pyctorch.optim, cls)(ps, lr=0.01, weight_decay=0.1, amsgrad=True, **extra)
            for s in range(15):
                for p, g in zip(ps, _grads(ps, _arrays(8), s)):
                    p.grad = pyctorch.tensor(g)
                opt.step()
            outs[mode, cls] = [p.detach().numpy() for p in ps]
    for cls in ("Adam", "AdamW"):
        for a, b, c in zip(outs["default", cls], outs["fused", cls], outs["loop", cls]):
            np.testing.assert_array_equal(a, b)  # the same C step
            rtol, atol = _tol(a.dtype)
            np.testing.assert_allclose(a, c, rtol=rtol, atol=atol)


@requires_torch
def test_fused_non_contiguous_params_and_grads():
    rng = np.random.default_rng(9)
    base = rng.standard_normal((6, 5)).astype(np.float32)
    pp = pyctorch.tensor(base.copy()).t().detach().requires_grad_()  # a non-contiguous leaf
    tp = torch.tensor(base.copy()).t().detach().requires_grad_()
    assert not pp.is_contiguous()
    popt, topt = pyctorch.optim.AdamW([pp], lr=0.05), torch.optim.AdamW([tp], lr=0.05)
    for _ in range(5):
        g = rng.standard_normal((6, 5)).astype(np.float32)
        pp.grad = pyctorch.tensor(g).t()  # non-contiguous too
        tp.grad = torch.tensor(g).t()
        popt.step()
        topt.step()
    np.testing.assert_allclose(pp.detach().numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(popt.state[pp]["exp_avg"].numpy(), topt.state[tp]["exp_avg"].numpy(), rtol=1e-6)


@requires_torch
def test_fused_grad_scale_and_found_inf():
    """GradScaler's protocol for fused steps: grads are divided by grad_scale; found_inf=1 skips the step
    (and the step count)."""
    for cls in ("Adam", "SGD", "Adagrad"):
        x = np.linspace(-1, 1, 11).astype(np.float32)
        pp, tp = pyctorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        kw = dict(lr=0.1, momentum=0.9) if cls == "SGD" else dict(lr=0.1)
        popt = getattr(pyctorch.optim, cls)([pp], fused=True, **kw)
        topt = getattr(torch.optim, cls)([tp], fused=True, **kw)
        assert popt._step_supports_amp_scaling
        for found in (0.0, 1.0, 0.0):
            g = (x * 64).astype(np.float32)
            pp.grad, tp.grad = pyctorch.tensor(g), torch.tensor(g)
            popt.grad_scale, topt.grad_scale = pyctorch.tensor(64.0), torch.tensor(64.0)
            popt.found_inf, topt.found_inf = pyctorch.tensor(found), torch.tensor(found)
            before = pp.detach().numpy().copy()
            popt.step()
            topt.step()
            if found:
                np.testing.assert_array_equal(pp.detach().numpy(), before)
            np.testing.assert_allclose(pp.detach().numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(pp.grad.numpy(), tp.grad.numpy(), rtol=1e-6)
        if cls != "SGD":
            assert popt.state[pp]["step"].item() == topt.state[tp]["step"].item() == 2.0


# ---------------------------------------------------------------- C op validation (runs without torch)

def _adam_args(n=2, size=3, dtype=pyctorch.float32):
    mk = lambda: [pyctorch.zeros(size, dtype=dtype) for _ in range(n)]  # noqa: E731
    return mk(), [pyctorch.ones(size, dtype=dtype) for _ in range(n)], mk(), mk(), [], \
        [pyctorch.tensor(1.0) for _ in range(n)]


_KW = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)


def test_fused_op_validation():
    assert pyctorch._fused_adam_ is _C._fused_adam_ and pyctorch._fused_sgd_ is _C._fused_sgd_  # torch's names
    p, g, m, v, x, s = _adam_args()
    _C._fused_adam_(p, g, m, v, x, s, **_KW)
    assert p[0].tolist() == pytest.approx([-0.1] * 3)
    with pytest.raises(RuntimeError, match="expected exp_avg_sqs to hold 2 tensors"):
        _C._fused_adam_(p, g, m, v[:1], x, s, **_KW)
    with pytest.raises(RuntimeError, match="expected max_exp_avg_sqs to hold 2 tensors"):
        _C._fused_adamw_(p, g, m, v, x, s, **dict(_KW, amsgrad=True))
    with pytest.raises(RuntimeError, match="expected state_steps to hold 2 tensors"):
        _C._fused_adam_(p, g, m, v, x, s[:1], **_KW)
    with pytest.raises(RuntimeError, match=r"grads\[1\] has shape \[4\] but self\[1\] has shape \[3\]"):
        _C._fused_adam_(p, [g[0], pyctorch.ones(4)], m, v, x, s, **_KW)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        _C._fused_adam_(p, [g[0], g[1].double()], m, v, x, s, **_KW)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        _C._fused_sgd_([p[0], p[1].double()], g, [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0,
                       nesterov=False, maximize=False, is_first_step=False)
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        _C._fused_adam_(p, g, m, v, x, [s[0], pyctorch.ones(2)], **_KW)
    pi, gi, mi, vi, xi, si = _adam_args(dtype=pyctorch.int64)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        _C._fused_adam_(pi, gi, mi, vi, xi, si, **_KW)
    with pytest.raises(NotImplementedError, match="no tensor arguments"):
        _C._fused_adam_([], [], [], [], [], [], **_KW)
    with pytest.raises(RuntimeError, match="expected momentum_buffer_list to hold 2 tensors"):
        _C._fused_sgd_(p, g, [], weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0, nesterov=False,
                       maximize=False, is_first_step=True)
    with pytest.raises(RuntimeError, match="expected state_sums to hold 2 tensors"):
        _C._fused_adagrad_(p, g, m[:1], s, lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False)
    with pytest.raises(TypeError):
        _C._fused_adam_(p, g, m, v, x, s, lr=0.1)  # missing keyword arguments
    # nothing was touched by the failed calls
    assert p[0].tolist() == pytest.approx([-0.1] * 3) and p[1].tolist() == pytest.approx([-0.1] * 3)


def test_fused_op_versions_and_found_inf():
    p, g, m, v, x, s = _adam_args()
    v0 = p[0]._version
    _C._fused_adam_(p, g, m, v, x, s, **_KW)
    assert p[0]._version > v0 and m[0]._version > 0 and v[1]._version > 0
    before = [t.tolist() for t in p]
    _C._fused_adam_(p, g, m, v, x, s, found_inf=pyctorch.tensor(1.0), **_KW)
    assert [t.tolist() for t in p] == before
    _C._fused_sgd_(p, g, [], weight_decay=0.0, momentum=0.0, lr=0.5, dampening=0.0, nesterov=False, maximize=False,
                   is_first_step=False, grad_scale=pyctorch.tensor(2.0))
    assert g[0].tolist() == [0.5] * 3  # unscaled in place
    assert p[0].tolist() == pytest.approx([before[0][0] - 0.25] * 3)


def test_fused_sgd_mixed_new_and_old_buffers():
    """A param whose gradient appears later gets its buffer on its own first step."""
    a = pyctorch.tensor([1.0, 2.0], requires_grad=True)
    b = pyctorch.tensor([3.0], requires_grad=True)
    opt = pyctorch.optim.SGD([a, b], lr=0.1, momentum=0.5)
    a.grad = pyctorch.tensor([1.0, 1.0])
    opt.step()  # b has no grad yet
    assert "momentum_buffer" not in opt.state[b]
    b.grad = pyctorch.tensor([2.0])
    opt.step()
    assert opt.state[a]["momentum_buffer"].tolist() == [1.5, 1.5]
    assert opt.state[b]["momentum_buffer"].tolist() == [2.0]
    assert a.tolist() == pytest.approx([1.0 - 0.1 - 0.15, 2.0 - 0.1 - 0.15])
    assert b.tolist() == pytest.approx([3.0 - 0.2])


# ---------------------------------------------------------------- LBFGS

def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def _lbfgs_run(lib, x0, steps, **kw):
    x = lib.tensor(x0.copy(), requires_grad=True)
    opt = lib.optim.LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return x.detach().numpy(), losses, opt


@requires_torch
@pytest.mark.parametrize("kw", [dict(lr=0.05, history_size=7), dict(line_search_fn="strong_wolfe"),
                                dict(line_search_fn="strong_wolfe", history_size=3, max_iter=7, max_eval=12)])
def test_lbfgs_matches_torch_float64(kw):
    x0 = np.array([-1.5, 2.0, 0.5, -0.3, 1.2])
    px, pl, popt = _lbfgs_run(pyctorch, x0, 5, **kw)
    tx, tl, topt = _lbfgs_run(torch, x0, 5, **kw)
    np.testing.assert_allclose(px, tx, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(pl, tl, rtol=1e-9)
    ps, ts = popt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert set(ps) == set(ts)
    assert ps["func_evals"] == ts["func_evals"] and ps["n_iter"] == ts["n_iter"]
    assert len(ps["old_dirs"]) == len(ts["old_dirs"])
    np.testing.assert_allclose(ps["d"].numpy(), ts["d"].numpy(), rtol=1e-7, atol=1e-9)


@requires_torch
def test_lbfgs_state_dict_from_torch_and_back():
    """torch's LBFGS state (history lists, step length, previous gradient) loads into pyctorch and back."""
    x0 = np.array([-1.5, 2.0, 0.5, -0.3, 1.2])
    kw = dict(line_search_fn="strong_wolfe", history_size=4, max_iter=6)
    _, _, topt = _lbfgs_run(torch, x0, 2, **kw)
    tx = topt._params[0]
    px = pyctorch.tensor(tx.detach().numpy().copy(), requires_grad=True)
    popt = pyctorch.optim.LBFGS([px], **kw)
    popt.load_state_dict(_to_pyc(topt.state_dict()))
    st = popt.state[px]
    assert len(st["old_dirs"]) == 4 and isinstance(st["old_dirs"][0], pyctorch.Tensor) and st["n_iter"] == topt.state[tx]["n_iter"] > 6

    def closure_for(lib, x, opt):
        def closure():
            opt.zero_grad()
            loss = _rosenbrock(x)
            loss.backward()
            return loss
        return closure

    for _ in range(2):
        popt.step(closure_for(pyctorch, px, popt))
        topt.step(closure_for(torch, tx, topt))
    np.testing.assert_allclose(px.detach().numpy(), tx.detach().numpy(), rtol=1e-9, atol=1e-11)
    tx2 = torch.tensor(px.detach().numpy().copy(), requires_grad=True)
    topt2 = torch.optim.LBFGS([tx2], **kw)
    topt2.load_state_dict(_to_torch(popt.state_dict()))
    assert topt2.state[tx2]["func_evals"] == popt.state[px]["func_evals"]
    popt.step(closure_for(pyctorch, px, popt))
    topt2.step(closure_for(torch, tx2, topt2))
    np.testing.assert_allclose(px.detach().numpy(), tx2.detach().numpy(), rtol=1e-9, atol=1e-11)


@requires_torch
def test_lbfgs_float32_first_step_matches_torch():
    x0 = np.array([-1.5, 2.0, 0.5, -0.3, 1.2], dtype=np.float32)
    px, pl, popt = _lbfgs_run(pyctorch, x0, 1, lr=0.05)
    tx, tl, topt = _lbfgs_run(torch, x0, 1, lr=0.05)
    np.testing.assert_allclose(px, tx, rtol=1e-5, atol=1e-6)
    assert popt.state[popt._params[0]]["func_evals"] == 20
    # with the line search, float32 rounding of the loss can change its decisions: only the first
    # evaluation is the same, then both make progress
    px, pl, _ = _lbfgs_run(pyctorch, x0, 3, line_search_fn="strong_wolfe")
    tx, tl, _ = _lbfgs_run(torch, x0, 3, line_search_fn="strong_wolfe")
    assert pl[0] == tl[0] and pl[2] < pl[1] < pl[0] and tl[2] < tl[1] < tl[0]
    np.testing.assert_allclose(pl[1:], tl[1:], rtol=2e-2)


def test_lbfgs_converges_on_a_quadratic():
    """On a convex quadratic with the line search L-BFGS reaches the exact minimiser A^-1 b."""
    A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
    b = np.array([1.0, -2.0, 0.5])
    x = pyctorch.zeros(3, dtype=pyctorch.float64, requires_grad=True)
    At, bt = pyctorch.tensor(A), pyctorch.tensor(b)
    opt = pyctorch.optim.LBFGS([x], line_search_fn="strong_wolfe", tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x * (At @ x)).sum() - (bt * x).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(A, b), rtol=1e-6)
    assert opt.state[x]["n_iter"] < 20  # it stopped on its tolerances


def test_lbfgs_arguments():
    x = pyctorch.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        pyctorch.optim.LBFGS([{"params": [x]}, {"params": [pyctorch.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        pyctorch.optim.LBFGS([x], lr=-1)
    assert pyctorch.optim.LBFGS([x], max_iter=8).defaults["max_eval"] == 10
    opt = pyctorch.optim.LBFGS([x], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    with pytest.raises(TypeError):
        opt.step()  # the closure is required


# ---------------------------------------------------------------- differentiable=True, capturable, errors

@requires_torch
@pytest.mark.parametrize("cls,kw", [("Adam", dict(lr=0.1)), ("AdamW", dict(lr=0.1, amsgrad=True)),
                                    ("RMSprop", dict(lr=0.1, centered=True, momentum=0.5)), ("Adagrad", dict(lr=0.1)),
                                    ("Adamax", dict(lr=0.1)), ("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1)),
                                    ("SGD", dict(lr=0.1, weight_decay=0.1))])
def test_differentiable_step_gradients_match_torch(cls, kw):
    """The updated parameter is differentiable with respect to the old parameter and the gradient."""
    def run(lib):
        rng = np.random.default_rng(0)
        p0 = lib.tensor(rng.standard_normal(4), requires_grad=True)
        g = lib.tensor(rng.standard_normal(4), requires_grad=True)
        w = lib.tensor(rng.standard_normal(4))
        p = p0.clone()
        p.grad = g
        opt = getattr(lib.optim, cls)([p], differentiable=True, **kw)
        opt.step()
        gp, gg = lib.autograd.grad((p * w).sum(), [p0, g])
        return p.detach().numpy(), gp.numpy(), gg.numpy()

    for a, b in zip(run(pyctorch), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls,kw", [("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
                                    ("AdamW", dict(lr=0.1)), ("RMSprop", dict(lr=0.1, centered=True, momentum=0.5)),
                                    ("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1, betas=(0.5, 0.6))),
                                    ("Adamax", dict(lr=0.1)), ("Adagrad", dict(lr=0.1)),
                                    ("SGD", dict(lr=0.1, weight_decay=0.1))])
def test_differentiable_step_gradcheck(cls, kw):
    """float64 finite differences agree with the gradients through a differentiable step."""
    def fn(p0, g):
        p = p0.clone()
        p.grad = g
        getattr(pyctorch.optim, cls)([p], differentiable=True, **kw).step()
        return p

    gen = pyctorch.Generator().manual_seed(0)
    p0 = pyctorch.randn(4, dtype=pyctorch.float64, generator=gen).requires_grad_()
    g = pyctorch.randn(4, dtype=pyctorch.float64, generator=gen).requires_grad_()
    assert pyctorch.autograd.gradcheck(fn, (p0, g))


@pytest.mark.parametrize("cls", ["RMSprop", "Adamax", "NAdam", "RAdam", "Adam"])
def test_capturable_needs_a_capturable_device(cls):
    p = pyctorch.zeros(2, requires_grad=True)
    opt = getattr(pyctorch.optim, cls)([p], capturable=True)  # accepted, as torch accepts it
    p.grad = pyctorch.ones(2)
    with pytest.raises(AssertionError, match="If capturable=True, .* must be on supported devices"):
        opt.step()


def test_constructor_errors():
    p = pyctorch.zeros(2, requires_grad=True)
    O = pyctorch.optim
    checks = [
        (O.RMSprop, dict(lr=-1), "Invalid learning rate"), (O.RMSprop, dict(eps=-1), "Invalid epsilon value"),
        (O.RMSprop, dict(momentum=-1), "Invalid momentum value"), (O.RMSprop, dict(alpha=-1), "Invalid alpha value"),
        (O.RMSprop, dict(weight_decay=-1), "Invalid weight_decay value"),
        (O.Adagrad, dict(lr_decay=-1), "Invalid lr_decay value"),
        (O.Adagrad, dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value"),
        (O.Adagrad, dict(eps=-1), "Invalid epsilon value"),
        (O.Adamax, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
        (O.Adamax, dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
        (O.NAdam, dict(momentum_decay=-1), "Invalid momentum_decay value"),
        (O.NAdam, dict(weight_decay=-1), "Invalid weight_decay value"),
        (O.RAdam, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
        (O.RAdam, dict(lr=pyctorch.tensor([0.1, 0.2])), "Tensor lr must be 1-element"),
        (O.Adam, dict(lr=pyctorch.tensor(0.1), foreach=True), "lr as a Tensor is not supported"),
    ]
    for cls, kw, msg in checks:
        with pytest.raises(ValueError, match=msg):
            cls([p], **kw)
    for cls in (O.Adam, O.AdamW, O.SGD, O.Adagrad):
        with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
            cls([p], lr=0.1, fused=True, differentiable=True)
        with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
            cls([p], lr=0.1, fused=True, foreach=True)
    q = pyctorch.zeros(2, dtype=pyctorch.int64)
    opt = O.Adam([q], fused=True)
    q.grad = pyctorch.zeros(2, dtype=pyctorch.int64)
    with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating point"):
        opt.step()
    opt = O.Adam([p], foreach=True, differentiable=True)
    p.grad = pyctorch.ones(2)
    with pytest.raises(AssertionError, match="_foreach ops don't support autograd"):
        opt.step()


@requires_torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam", "LBFGS"])
def test_signatures_and_defaults_match_torch(name):
    ps = inspect.signature(getattr(pyctorch.optim, name).__init__)
    ts = inspect.signature(getattr(torch.optim, name).__init__)
    assert [(p.name, p.kind, p.default) for p in ps.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in ts.parameters.values()]
    p, t = pyctorch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    assert getattr(pyctorch.optim, name)([p]).defaults == getattr(torch.optim, name)([t]).defaults
    if name != "LBFGS":  # the functional forms take the same arguments
        fname = name.lower()
        mod_p = __import__(f"pyctorch.optim.{fname}", fromlist=[fname])
        mod_t = __import__(f"torch.optim.{fname}", fromlist=[fname])
        fp, ft = inspect.signature(getattr(mod_p, fname)), inspect.signature(getattr(mod_t, fname))
        assert [(p.name, p.kind) for p in fp.parameters.values()] == [(p.name, p.kind) for p in ft.parameters.values()]


# ---------------------------------------------------------------- hand-computed steps (no torch)

def _one_param(values):
    return pyctorch.tensor(values, dtype=pyctorch.float64, requires_grad=True)


def test_rmsprop_hand_computed():
    p = _one_param([1.0])
    opt = pyctorch.optim.RMSprop([p], lr=0.1, alpha=0.9, eps=1e-8, momentum=0.5, centered=True)
    x, sq, ga, buf = 1.0, 0.0, 0.0, 0.0
    for g in (0.5, -1.0, 2.0):
        p.grad = pyctorch.tensor([g], dtype=pyctorch.float64)
        opt.step()
        sq = 0.9 * sq + 0.1 * g * g
        ga = ga + (g - ga) * 0.1
        avg = math.sqrt(sq - ga * ga) + 1e-8
        buf = 0.5 * buf + g / avg
        x -= 0.1 * buf
    assert p.tolist() == pytest.approx([x], rel=1e-12)
    assert set(opt.state[p]) == {"step", "square_avg", "momentum_buffer", "grad_avg"}


def test_adagrad_adamax_hand_computed():
    p = _one_param([1.0])
    opt = pyctorch.optim.Adagrad([p], lr=0.5, lr_decay=0.1, initial_accumulator_value=0.25)
    x, s = 1.0, 0.25
    for k, g in enumerate((0.5, -1.0, 2.0)):
        p.grad = pyctorch.tensor([g], dtype=pyctorch.float64)
        opt.step()
        s += g * g
        x -= 0.5 / (1 + k * 0.1) * g / (math.sqrt(s) + 1e-10)
    assert p.tolist() == pytest.approx([x], rel=1e-12)
    q = _one_param([1.0])
    opt = pyctorch.optim.Adamax([q], lr=0.1, betas=(0.9, 0.99))
    x, m, u = 1.0, 0.0, 0.0
    for k, g in enumerate((0.5, -1.0, 2.0), 1):
        q.grad = pyctorch.tensor([g], dtype=pyctorch.float64)
        opt.step()
        m = m + (g - m) * 0.1
        u = max(u * 0.99, abs(g) + 1e-8)
        x -= 0.1 / (1 - 0.9 ** k) * m / u
    assert q.tolist() == pytest.approx([x], rel=1e-12)


def test_nadam_radam_hand_computed():
    p = _one_param([1.0])
    opt = pyctorch.optim.NAdam([p], lr=0.1)
    x, m, v, mu_prod = 1.0, 0.0, 0.0, 1.0
    for k, g in enumerate((0.5, -1.0, 2.0), 1):
        p.grad = pyctorch.tensor([g], dtype=pyctorch.float64)
        opt.step()
        mu = 0.9 * (1 - 0.5 * 0.96 ** (k * 0.004))
        mu_next = 0.9 * (1 - 0.5 * 0.96 ** ((k + 1) * 0.004))
        mu_prod = float(np.float32(mu_prod) * np.float32(mu))  # a float32 state tensor times a number
        m = m + (g - m) * 0.1
        v = 0.999 * v + 0.001 * g * g
        den = math.sqrt(v / (1 - 0.999 ** k)) + 1e-8
        x -= 0.1 * (1 - mu) / (1 - mu_prod) * g / den + 0.1 * mu_next / (1 - mu_prod * mu_next) * m / den
    assert p.tolist() == pytest.approx([x], rel=1e-10)
    q = _one_param([1.0])
    opt = pyctorch.optim.RAdam([q], lr=0.1, betas=(0.9, 0.9))
    x, m, v = 1.0, 0.0, 0.0
    rho_inf = 2 / (1 - 0.9) - 1
    rectified = 0
    for k, g in enumerate([0.5, -1.0, 2.0, 0.3, 0.7, -0.2, 1.1, 0.4], 1):
        q.grad = pyctorch.tensor([g], dtype=pyctorch.float64)
        opt.step()
        m = m + (g - m) * 0.1
        v = 0.9 * v + 0.1 * g * g
        bc1, bc2 = 1 - 0.9 ** k, 1 - 0.9 ** k
        rho_t = rho_inf - 2 * k * 0.9 ** k / bc2
        if rho_t > 5:
            rectified += 1
            r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            x -= m / bc1 * 0.1 * (math.sqrt(bc2) / (math.sqrt(v) + 1e-8)) * r
        else:
            x -= m / bc1 * 0.1
    assert 0 < rectified < 8  # both branches ran
    assert q.tolist() == pytest.approx([x], rel=1e-12)


def test_state_layout_and_dtypes():
    p = pyctorch.zeros(3, dtype=pyctorch.float64, requires_grad=True)
    expected = {
        "RMSprop": ({"momentum": 0.9, "centered": True}, {"step", "square_avg", "momentum_buffer", "grad_avg"}),
        "Adagrad": ({}, {"step", "sum"}),
        "Adamax": ({}, {"step", "exp_avg", "exp_inf"}),
        "NAdam": ({}, {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
        "RAdam": ({}, {"step", "exp_avg", "exp_avg_sq"}),
        "Adam": ({"amsgrad": True}, {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}),
    }
    for name, (kw, keys) in expected.items():
        opt = getattr(pyctorch.optim, name)([p], **kw)
        p.grad = pyctorch.ones(3, dtype=pyctorch.float64)
        opt.step()
        st = opt.state[p]
        assert set(st) == keys, name
        assert st["step"].dtype == pyctorch.float32 and st["step"].dim() == 0 and st["step"].item() == 1.0
        for k in keys - {"step", "mu_product"}:
            assert st[k].dtype == pyctorch.float64 and tuple(st[k].shape) == (3,)
    # Adagrad's state exists from construction on
    q = pyctorch.zeros(2, requires_grad=True)
    opt = pyctorch.optim.Adagrad([q], initial_accumulator_value=0.5)
    assert opt.state[q]["sum"].tolist() == [0.5, 0.5] and opt.state[q]["step"].item() == 0.0
