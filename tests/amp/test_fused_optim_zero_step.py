"""Fused optimizer steps with a zero divisor in their per-step scalars: Adam/AdamW at state step 0
(bias correction 1 - beta1 ** 0 = 0) and Adagrad with 1 + (step - 1) * lr_decay = 0. torch's fused
kernels (_fused_adam_, _fused_adamw_, _fused_adagrad_; fused=True) divide by zero in floating point
and give inf/NaN parameters, its foreach and for-loop steps raise ZeroDivisionError (from Python's
float division) after updating part of the state; pyctorch mirrors both, in every float dtype."""
import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T

DTYPES = ["float32", "float64", "bfloat16", "float16"]
TOL = {"float32": 1e-6, "float64": 1e-12, "bfloat16": 1e-2, "float16": 2e-3}
PARAM, GRAD = [1.0, -2.0, 0.5, 0.0], [0.1, 0.2, -0.3, 0.0]
EXP_AVG, EXP_AVG_SQ, MAX_SQ = [0.01, 0.0, 0.02, 0.0], [0.001, 0.0, 0.002, 0.0], [0.001, 0.0, 0.003, 0.0]


def npy(t):
    return np.array(t.float().tolist(), dtype=np.float64)


def fused(lib, name, dtype, step, amsgrad=False, beta1=0.9):
    """One fused call on a single 4-element parameter; returns [param, states...] after it."""
    d = getattr(lib, dtype)
    mk = lambda v: lib.tensor(v).to(d)  # noqa: E731
    p, g = [mk(PARAM)], [mk(GRAD)]
    steps = [lib.tensor(float(step))]
    fn = getattr(T, name) if lib is T else getattr(P._C, name)
    if name == "_fused_adagrad_":
        sums = [mk(EXP_AVG_SQ)]
        fn(p, g, sums, steps, lr=0.1, lr_decay=1.0, weight_decay=0.01, eps=1e-10, maximize=False)
        return [p[0], sums[0]]
    m, v, mx = [mk(EXP_AVG)], [mk(EXP_AVG_SQ)], [mk(MAX_SQ)] if amsgrad else []
    fn(p, g, m, v, mx, steps, lr=0.1, beta1=beta1, beta2=0.99, weight_decay=0.01, eps=1e-8, amsgrad=amsgrad,
       maximize=False)
    return [p[0], m[0], v[0]] + mx


CASES = [("_fused_adam_", False, 0.9), ("_fused_adam_", True, 0.9), ("_fused_adamw_", False, 0.9),
         ("_fused_adamw_", True, 0.9), ("_fused_adam_", False, 0.0), ("_fused_adagrad_", False, 0.9)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,amsgrad,beta1", CASES)
def test_zero_divisor_gives_inf_nan_and_the_usual_states(name, amsgrad, beta1, dtype):
    """The states are those of any other step (they do not depend on the step count); the parameter
    is NaN everywhere for Adam (0 / 0 in the denominator), -+inf or NaN for Adagrad (lr / 0)."""
    zero = fused(P, name, dtype, 0.0, amsgrad, beta1)
    assert all(t.dtype == getattr(P, dtype) for t in zero)
    other = fused(P, name, dtype, 1.0 if name == "_fused_adagrad_" else 3.0, amsgrad, beta1)
    for a, b in zip(zero[1:], other[1:]):
        assert np.array_equal(npy(a), npy(b))
    p = npy(zero[0])
    if name == "_fused_adagrad_":  # p - (lr / 0) * grad' / std: the sign of the weight-decayed gradient
        assert np.isneginf(p[:2]).all() and np.isposinf(p[2]) and np.isnan(p[3])
    else:
        assert np.isnan(p).all()


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,amsgrad,beta1", CASES)
def test_zero_divisor_matches_torch_fused_kernels(name, amsgrad, beta1, dtype):
    got = fused(P, name, dtype, 0.0, amsgrad, beta1)
    want = fused(T, name, dtype, 0.0, amsgrad, beta1)
    for a, b in zip(got, want):
        a, b = npy(a), npy(b)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_array_equal(np.isinf(a) * np.sign(a), np.isinf(b) * np.sign(b))
        fin = np.isfinite(b)
        np.testing.assert_allclose(a[fin], b[fin], rtol=TOL[dtype], atol=TOL[dtype] * 1e-3)


def test_nonempty_max_exp_avg_sqs_without_amsgrad_raises():
    p = [P.tensor([1.0])]
    with pytest.raises(RuntimeError, match=r"Expected max_exp_avg_sqs.empty\(\) to be true"):
        P._C._fused_adam_(p, [P.tensor([0.1])], [P.zeros(1)], [P.zeros(1)], [P.zeros(1)], [P.tensor(1.0)], lr=0.1,
                          beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)


def scenario(lib, cls, kw):
    """Two parameters; after one ordinary step the second one's step count is set so that its next
    step is 0 (Adam) or makes Adagrad's divisor 0. The outcome, the parameters and the states."""
    ws = [lib.nn.Parameter(lib.tensor([1.0, -2.0])), lib.nn.Parameter(lib.tensor([0.5, 3.0]))]
    extra = dict(lr_decay=1.0) if cls == "Adagrad" else {}
    opt = getattr(lib.optim, cls)(ws, lr=0.1, weight_decay=0.01, **extra, **kw)
    for w in ws:
        w.grad = w.detach() * 0.1 + 0.05
    opt.step()
    opt.state[ws[1]]["step"].fill_(-1.0)
    try:
        opt.step()
        outcome = "ok"
    except ZeroDivisionError as e:
        outcome = f"ZeroDivisionError: {e}"
    states = [{k: npy(v.detach()) for k, v in opt.state[w].items()} for w in ws]
    return outcome, [npy(w.detach()) for w in ws], states


KINDS = [dict(fused=True), dict(foreach=True), dict(foreach=False), {}]


@pytest.mark.parametrize("cls", ["Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("kw", KINDS, ids=["fused", "foreach", "for-loop", "default"])
def test_optimizer_zero_step(cls, kw):
    outcome, params, states = scenario(P, cls, kw)
    if kw.get("fused"):
        assert outcome == "ok" and not np.isfinite(params[1]).any() and np.isfinite(params[0]).all()
    else:
        assert outcome == "ZeroDivisionError: float division by zero"
        assert np.isfinite(params[1]).all()  # the parameter never moves by lr / 0
    assert states[1]["step"] == 0


@requires_torch
@pytest.mark.parametrize("cls", ["Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("kw", KINDS, ids=["fused", "foreach", "for-loop", "default"])
def test_optimizer_zero_step_matches_torch(cls, kw):
    """The outcome, and the parameters and states torch leaves behind (the foreach step updates the
    moments of every parameter before it raises, the for-loop those up to the failing one)."""
    got, want = scenario(P, cls, kw), scenario(T, cls, kw)
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1]):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[np.isfinite(b)], b[np.isfinite(b)], rtol=1e-6)
    for sa, sb in zip(got[2], want[2]):
        assert sorted(sa) == sorted(sb)
        for k in sb:
            np.testing.assert_allclose(sa[k], sb[k], rtol=1e-6, err_msg=k)
