"""LayerNorm, RMSNorm, GroupNorm (and instance_norm): the fused kernels of csrc/aten/cpu/norm.c against
torch with identical weights (outputs, input/weight/bias gradients, saved statistics), against numpy
formulas, float64 gradcheck and gradgradcheck, and torch's errors."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import requires_torch, assert_same, torch as T


def to_pct(t):
    return P.tensor(np.array(t.detach().float().tolist() if t.dtype == T.bfloat16 else t.detach().tolist()),
                    dtype=getattr(P, str(t.dtype).split(".")[1]))


def to_torch(t):
    return T.tensor(np.array(t.detach().float().tolist() if t.dtype == P.bfloat16 else t.detach().tolist()),
                    dtype=getattr(T, str(t.dtype).split(".")[1]))


def pair(t, requires_grad=True):
    """The same values as a torch leaf and a pyctorch leaf."""
    return t.clone().requires_grad_(requires_grad), to_pct(t).requires_grad_(requires_grad)


def same_module(tm, pm):
    pm.load_state_dict({k: to_pct(v) for k, v in tm.state_dict().items()})


def run_both(tf, pf, tensors, grad_seed=0, tol=None):
    """Runs tf / pf on the same leaves, backpropagates the same random gradient, and compares the
    outputs and every leaf's gradient."""
    tl, pl = zip(*[pair(t) for t in tensors])
    yt, yp = tf(*tl), pf(*pl)
    assert_same(yp, yt, **(tol or {}))
    g = T.randn(yt.shape, generator=T.Generator().manual_seed(grad_seed), dtype=yt.dtype)
    yt.backward(g)
    yp.backward(to_pct(g))
    for a, b in zip(pl, tl):
        assert_same(a.grad, b.grad, **(tol or {}))


# ---- layer norm --------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("shape,ns", [((4, 7), (7,)), ((2, 3, 5), (5,)), ((2, 3, 5), (3, 5)), ((1, 6), (6,)),
                                      ((3, 1), (1,)), ((6,), (6,)), ((2, 3, 1030), (1030,))])
@pytest.mark.parametrize("dtype", [T and T.float32, T and T.float64])
def test_layer_norm_matches_torch(shape, ns, dtype):
    g = T.Generator().manual_seed(1)
    x = T.randn(shape, generator=g, dtype=dtype) * 3 + 1
    w = T.randn(ns, generator=g, dtype=dtype)
    b = T.randn(ns, generator=g, dtype=dtype)
    run_both(lambda x, w, b: T.nn.functional.layer_norm(x, ns, w, b),
             lambda x, w, b: PF.layer_norm(x, ns, w, b), [x, w, b], tol={"rtol": 1e-5, "atol": 1e-5})
    run_both(lambda x: T.nn.functional.layer_norm(x, ns), lambda x: PF.layer_norm(x, ns), [x],
             tol={"rtol": 1e-5, "atol": 1e-5})


@requires_torch
def test_native_layer_norm_outputs_and_backward_op():
    x = T.randn(3, 4, 5, dtype=T.float64)
    w, b = T.randn(4, 5, dtype=T.float64), T.randn(4, 5, dtype=T.float64)
    ref = T.native_layer_norm(x, [4, 5], w, b, 1e-5)
    got = P.native_layer_norm(to_pct(x), [4, 5], to_pct(w), to_pct(b), 1e-5)
    for a, r in zip(got, ref):
        assert_same(a, r)
    g = T.randn(3, 4, 5, dtype=T.float64)
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        rb = T.ops.aten.native_layer_norm_backward(g, x, [4, 5], ref[1], ref[2], w, b, mask)
        pb = P.native_layer_norm_backward(to_pct(g), to_pct(x), [4, 5], got[1], got[2], to_pct(w), to_pct(b), mask)
        for a, r in zip(pb, rb):
            assert (a is None) == (r is None)
            if a is not None:
                assert_same(a, r)
    # no weight: no weight gradient, as torch
    pb = P.native_layer_norm_backward(to_pct(g), to_pct(x), [4, 5], got[1], got[2], None, None, [True, True, True])
    assert pb[1] is None and pb[2] is None


def test_layer_norm_against_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8)) * 10 + 100  # a large mean: the statistics must not cancel
    w, b = rng.standard_normal(8), rng.standard_normal(8)
    y = PF.layer_norm(P.tensor(x, dtype=P.float32), (8,), P.tensor(w, dtype=P.float32), P.tensor(b, dtype=P.float32))
    mu = x.mean(-1, keepdims=True)
    ref = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(np.array(y.tolist()), ref, rtol=1e-4, atol=1e-4)
    out, mean, rstd = P.native_layer_norm(P.tensor(x), [8], None, None, 1e-5)
    np.testing.assert_allclose(np.array(mean.tolist()), mu, rtol=1e-12)
    assert tuple(mean.shape) == (5, 1) and tuple(rstd.shape) == (5, 1)


@requires_torch
def test_layer_norm_non_contiguous_and_module():
    T.manual_seed(0)
    tm = T.nn.LayerNorm(6)
    with T.no_grad():
        tm.weight.normal_()
        tm.bias.normal_()
    pm = P.nn.LayerNorm(6)
    same_module(tm, pm)
    base = T.randn(6, 4, 3)
    xt, xp = pair(base)
    yt = tm(xt.transpose(0, 2))  # (3, 4, 6), strided
    yp = pm(xp.transpose(0, 2))
    assert_same(yp, yt, rtol=1e-5, atol=1e-5)
    yt.sum().backward()
    yp.sum().backward()
    assert_same(xp.grad, xt.grad, rtol=1e-5, atol=1e-5)
    assert_same(pm.weight.grad, tm.weight.grad, rtol=1e-5, atol=1e-5)
    assert_same(pm.bias.grad, tm.bias.grad, rtol=1e-5, atol=1e-5)
    assert list(pm.state_dict()) == list(tm.state_dict())
    assert repr(pm) == repr(tm)
    for kw in ({"bias": False}, {"elementwise_affine": False}):
        a, b = T.nn.LayerNorm((2, 3), **kw), P.nn.LayerNorm((2, 3), **kw)
        assert repr(a) == repr(b) and list(a.state_dict()) == list(b.state_dict())


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_layer_norm_reduced_precision(dtype):
    x = T.randn(4, 16).to(getattr(T, dtype))
    w, b = T.randn(16), T.randn(16)
    # same dtype parameters, and float32 parameters ("mixed", torch's CPU rule)
    for wt, bt in ((w.to(x.dtype), b.to(x.dtype)), (w, b)):
        ref = T.native_layer_norm(x, [16], wt, bt, 1e-5)
        got = P.native_layer_norm(to_pct(x), [16], to_pct(wt), to_pct(bt), 1e-5)
        for a, r in zip(got, ref):
            assert_same(a, r, rtol=2e-2, atol=2e-2)


@requires_torch
def test_layer_norm_errors():
    x = P.randn(2, 3, 4)
    cases = [
        (lambda: PF.layer_norm(x, (5,)), RuntimeError,
         "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 3, 4]"),
        (lambda: PF.layer_norm(x, (3, 4), P.ones(4)), RuntimeError,
         "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] and "
         "normalized_shape = [3, 4]"),
        (lambda: PF.layer_norm(x, (3, 4), P.ones(3, 4), P.ones(4)), RuntimeError, "Expected bias to be of same shape"),
        (lambda: PF.layer_norm(x, ()), RuntimeError, "Expected normalized_shape to be at least 1-dimensional"),
        (lambda: PF.layer_norm(x, (2, 3, 4, 5)), RuntimeError, "expected input with shape [*, 2, 3, 4, 5]"),
        (lambda: PF.layer_norm(x.long(), (4,)), NotImplementedError, "not implemented for 'Long'"),
        (lambda: PF.layer_norm(x.double(), (4,), P.ones(4)), RuntimeError, "mixed dtype (CPU)"),
    ]
    tx = T.randn(2, 3, 4)
    tcases = [lambda: T.nn.functional.layer_norm(tx, (5,)), lambda: T.nn.functional.layer_norm(tx, (3, 4), T.ones(4)),
              lambda: T.nn.functional.layer_norm(tx, (3, 4), T.ones(3, 4), T.ones(4)),
              lambda: T.nn.functional.layer_norm(tx, ()), lambda: T.nn.functional.layer_norm(tx, (2, 3, 4, 5)),
              lambda: T.nn.functional.layer_norm(tx.long(), (4,)),
              lambda: T.nn.functional.layer_norm(tx.double(), (4,), T.ones(4))]
    for (f, exc, msg), tf in zip(cases, tcases):
        with pytest.raises(exc) as ei:
            f()
        assert msg in str(ei.value)
        with pytest.raises(exc):
            tf()


def test_layer_norm_edge_shapes():
    out, mean, rstd = P.native_layer_norm(P.randn(0, 4), [4], None, None, 1e-5)
    assert tuple(out.shape) == (0, 4) and tuple(mean.shape) == (0, 1)
    out, mean, rstd = P.native_layer_norm(P.randn(3, 0), [0], None, None, 1e-5)
    assert tuple(out.shape) == (3, 0) and mean.tolist() == [[0.0]] * 3 and all(np.isnan(rstd.tolist()))
    y = PF.layer_norm(P.full((2, 5), 3.0), (5,))
    assert y.tolist() == [[0.0] * 5] * 2  # constant rows: zero output, finite rstd from eps


def test_layer_norm_gradcheck_and_gradgradcheck():
    P.manual_seed(0)
    x = P.randn(3, 4, 5, dtype=P.float64, requires_grad=True)
    w = P.randn(5, dtype=P.float64, requires_grad=True)
    b = P.randn(5, dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda x, w, b: PF.layer_norm(x, (5,), w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: PF.layer_norm(x, (5,), w, b), (x, w, b))
    assert gradgradcheck(lambda x: PF.layer_norm(x, (4, 5)), (x,))
    # the fused backward op as a function of every input (its formula differentiates a composite)
    g = P.randn(3, 4, 5, dtype=P.float64, requires_grad=True)
    _, m, r = P.native_layer_norm(x.detach(), [5], None, None, 1e-5)
    m.requires_grad_()
    r.requires_grad_()
    assert gradcheck(lambda g, x, m, r, w: P.native_layer_norm_backward(g, x, [5], m, r, w, None, [True, True, True]),
                     (g, x, m, r, w))


def test_layer_norm_statistics_outputs_differentiable():
    # mean and rstd are outputs with gradients of their own (torch's native_layer_norm)
    x = P.randn(3, 6, dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda x: P.native_layer_norm(x, [6], None, None, 1e-5)[1], (x,))
    assert gradcheck(lambda x: P.native_layer_norm(x, [6], None, None, 1e-5)[2], (x,))


@requires_torch
def test_layer_norm_double_backward_matches_torch():
    x0 = T.randn(4, 6, dtype=T.float64)
    w0 = T.randn(6, dtype=T.float64)
    xt, xp = pair(x0)
    wt, wp = pair(w0)
    gt = T.autograd.grad(T.nn.functional.layer_norm(xt, (6,), wt).pow(2).sum(), [xt, wt], create_graph=True)
    gp = P.autograd.grad(PF.layer_norm(xp, (6,), wp).pow(2).sum(), [xp, wp], create_graph=True)
    (gt[0].sin().sum() + gt[1].pow(2).sum()).backward()
    (gp[0].sin().sum() + gp[1].pow(2).sum()).backward()
    assert_same(xp.grad, xt.grad)
    assert_same(wp.grad, wt.grad)


# ---- RMS norm ------------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("eps", [None, 1e-6])
@pytest.mark.parametrize("shape,ns", [((4, 8), (8,)), ((2, 3, 4), (3, 4)), ((5, 700), (700,))])
def test_rms_norm_matches_torch(eps, shape, ns):
    g = T.Generator().manual_seed(2)
    x = T.randn(shape, generator=g) * 0.1
    w = T.randn(ns, generator=g)
    run_both(lambda x, w: T.nn.functional.rms_norm(x, ns, w, eps), lambda x, w: PF.rms_norm(x, ns, w, eps), [x, w],
             tol={"rtol": 1e-5, "atol": 1e-5})
    run_both(lambda x: T.nn.functional.rms_norm(x, ns, eps=eps), lambda x: PF.rms_norm(x, ns, eps=eps), [x],
             tol={"rtol": 1e-5, "atol": 1e-5})


@requires_torch
def test_rms_norm_module_and_reduced_precision():
    tm, pm = T.nn.RMSNorm([3, 4]), P.nn.RMSNorm([3, 4])
    assert repr(pm) == repr(tm) and list(pm.state_dict()) == list(tm.state_dict())
    x = T.randn(2, 3, 4) * 0.01
    assert_same(pm(to_pct(x)), tm(x))
    xb = x.bfloat16()
    assert_same(PF.rms_norm(to_pct(xb), (4,)), T.nn.functional.rms_norm(xb, (4,)), rtol=1e-2, atol=1e-2)
    wb = T.randn(4).bfloat16()
    assert_same(PF.rms_norm(to_pct(xb), (4,), to_pct(wb)), T.nn.functional.rms_norm(xb, (4,), wb), rtol=1e-2, atol=1e-2)
    out, rstd = P._C._fused_rms_norm(to_pct(xb), [4], None, None)
    assert rstd.dtype == P.float32 and tuple(rstd.shape) == (2, 3, 1)  # torch keeps float32 statistics


def test_rms_norm_against_numpy_and_gradcheck():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6))
    y = PF.rms_norm(P.tensor(x), (6,))
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + np.finfo(np.float64).eps)
    np.testing.assert_allclose(np.array(y.tolist()), ref, rtol=1e-12)
    xp = P.tensor(x, requires_grad=True)
    w = P.randn(6, dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda x, w: PF.rms_norm(x, (6,), w, 1e-3), (xp, w))
    assert gradgradcheck(lambda x, w: PF.rms_norm(x, (6,), w, 1e-3), (xp, w))
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*5\]"):
        PF.rms_norm(P.randn(2, 4), (5,))
    with pytest.raises(NotImplementedError):
        PF.rms_norm(P.ones(2, 4, dtype=P.int64), (4,))


# ---- group norm ------------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((4, 6), 3), ((2, 8, 3, 3), 1),
                                          ((1, 4, 7), 4)])
def test_group_norm_matches_torch(shape, groups):
    g = T.Generator().manual_seed(4)
    x = T.randn(shape, generator=g) * 2 - 1
    c = shape[1]
    w, b = T.randn(c, generator=g), T.randn(c, generator=g)
    run_both(lambda x, w, b: T.nn.functional.group_norm(x, groups, w, b),
             lambda x, w, b: PF.group_norm(x, groups, w, b), [x, w, b], tol={"rtol": 1e-5, "atol": 1e-5})
    run_both(lambda x: T.nn.functional.group_norm(x, groups), lambda x: PF.group_norm(x, groups), [x],
             tol={"rtol": 1e-5, "atol": 1e-5})


@requires_torch
def test_group_norm_module_stats_and_errors():
    T.manual_seed(5)
    tm = T.nn.GroupNorm(2, 4)
    with T.no_grad():
        tm.weight.normal_()
    pm = P.nn.GroupNorm(2, 4)
    same_module(tm, pm)
    assert repr(pm) == repr(tm) and list(pm.state_dict()) == list(tm.state_dict())
    x = T.randn(3, 4, 5, 2)
    xt, xp = pair(x.permute(0, 1, 3, 2), False)  # non-contiguous
    assert_same(pm(xp), tm(xt), rtol=1e-5, atol=1e-5)
    ref = T.native_group_norm(x, None, None, 3, 4, 10, 2, 1e-5)
    got = P.native_group_norm(to_pct(x), None, None, 3, 4, 10, 2, 1e-5)
    for a, r in zip(got, ref):
        assert_same(a, r, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups \(4\)"):
        P.nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        PF.group_norm(P.randn(2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to the number of channels"):
        PF.group_norm(P.randn(2, 3, 4), 3, P.ones(2))
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor but received 1"):
        PF.group_norm(P.randn(3), 1)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        PF.group_norm(P.randn(1, 4), 4)
    with pytest.raises(T and ValueError):
        T.nn.functional.group_norm(T.randn(1, 4), 4)


def test_group_norm_against_numpy_and_gradcheck():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 3))
    y = PF.group_norm(P.tensor(x), 2)
    xs = x.reshape(2, 2, -1)
    ref = ((xs - xs.mean(-1, keepdims=True)) / np.sqrt(xs.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(np.array(y.tolist()), ref, rtol=1e-10)
    xp = P.tensor(x, requires_grad=True)
    w = P.randn(4, dtype=P.float64, requires_grad=True)
    b = P.randn(4, dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda x, w, b: PF.group_norm(x, 2, w, b), (xp, w, b))
    assert gradgradcheck(lambda x, w, b: PF.group_norm(x, 2, w, b), (xp, w, b))


# ---- instance norm --------------------------------------------------------------------------------

@requires_torch
def test_instance_norm_matches_torch():
    x = T.randn(3, 4, 6)
    w, b = T.randn(4), T.randn(4)
    rmt, rvt = T.zeros(4), T.ones(4)
    rmp, rvp = to_pct(rmt), to_pct(rvt)
    run_both(lambda x, w, b: T.nn.functional.instance_norm(x, rmt, rvt, w, b, momentum=0.3),
             lambda x, w, b: PF.instance_norm(x, rmp, rvp, w, b, momentum=0.3), [x, w, b],
             tol={"rtol": 1e-5, "atol": 1e-5})
    assert_same(rmp, rmt, rtol=1e-5, atol=1e-6)
    assert_same(rvp, rvt, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        PF.instance_norm(P.randn(2, 3, 1))


def test_gradient_reaches_weight_when_only_weight_requires_grad():
    # grouped formulas ("input, weight, bias: ...") must record the op when any of their targets
    # requires grad, not only the first (csrc/autograd/record.c reads every target)
    x = P.randn(3, 5)
    w = P.randn(5, requires_grad=True)
    b = P.randn(5, requires_grad=True)
    y = PF.layer_norm(x, (5,), w, b)
    assert y.requires_grad
    y.sum().backward()
    xhat = PF.layer_norm(x, (5,))
    np.testing.assert_allclose(np.array(w.grad.tolist()), np.array(xhat.sum(0).tolist()), rtol=1e-5, atol=1e-6)
    assert b.grad.tolist() == [3.0] * 5
    m = P.nn.GroupNorm(1, 2)
    m(P.randn(2, 2, 3)).sum().backward()
    assert m.bias.grad.tolist() == [6.0, 6.0]
