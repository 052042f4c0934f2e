"""F.unfold / F.fold (torch's im2col / col2im) and the Unfold / Fold modules: against torch on identical
values (forward and gradients), numpy references, gradcheck and gradgradcheck."""
import itertools

import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same, requires_torch, torch as T

F = P.nn.functional


def npy(t):
    return np.array(t.detach().double().tolist(), dtype=np.float64)


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).uniform(-1, 1, shape)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def np_unfold(x, k, d, p, s):
    """Reference: rows (c, ki, kj), one column per block position, row-major over the blocks."""
    k, d, p, s = map(_pair, (k, d, p, s))
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c * k[0] * k[1], oh * ow))
    for ch, ki, kj in itertools.product(range(c), range(k[0]), range(k[1])):
        row = (ch * k[0] + ki) * k[1] + kj
        for i, j in itertools.product(range(oh), range(ow)):
            out[:, row, i * ow + j] = xp[:, ch, i * s[0] + ki * d[0], j * s[1] + kj * d[1]]
    return out


PARAMS = [  # kernel, dilation, padding, stride
    (2, 1, 0, 1), ((2, 3), 1, (1, 0), (1, 2)), (3, 2, 1, 2), ((1, 2), (2, 1), (0, 2), (3, 1)),
]


@pytest.mark.parametrize("k,d,p,s", PARAMS)
def test_unfold_matches_numpy(k, d, p, s):
    x = rand(2, 3, 7, 6)
    got = F.unfold(P.tensor(x.tolist(), dtype=P.float64), k, d, p, s)
    np.testing.assert_array_equal(npy(got), np_unfold(x, k, d, p, s))


@pytest.mark.parametrize("k,d,p,s", PARAMS)
def test_fold_is_the_adjoint_of_unfold(k, d, p, s):
    # <unfold(x), c> == <x, fold(c)>, and fold(unfold(ones)) counts how many blocks cover each pixel
    x = rand(2, 3, 7, 6)
    u = F.unfold(P.tensor(x.tolist(), dtype=P.float64), k, d, p, s)
    c = rand(*u.shape, seed=5)
    f = F.fold(P.tensor(c.tolist(), dtype=P.float64), (7, 6), k, d, p, s)
    assert f.shape == (2, 3, 7, 6)
    np.testing.assert_allclose(float((npy(u) * c).sum()), float((x * npy(f)).sum()), rtol=1e-12)
    ones = P.ones(1, 1, 7, 6, dtype=P.float64)
    cover = F.fold(F.unfold(ones, k, d, p, s), (7, 6), k, d, p, s)
    np.testing.assert_array_equal(npy(cover), _coverage((7, 6), k, d, p, s))


def _coverage(size, k, d, p, s):
    k, d, p, s = map(_pair, (k, d, p, s))
    cnt = np.zeros((size[0] + 2 * p[0], size[1] + 2 * p[1]))
    oh = (size[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (size[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    for i, j, ki, kj in itertools.product(range(oh), range(ow), range(k[0]), range(k[1])):
        cnt[i * s[0] + ki * d[0], j * s[1] + kj * d[1]] += 1
    return cnt[p[0]:p[0] + size[0], p[1]:p[1] + size[1]][None, None]


def test_gradcheck_and_gradgradcheck():
    g = P.Generator().manual_seed(0)
    x = P.randn(2, 3, 5, 6, dtype=P.float64, generator=g).requires_grad_()
    c = P.randn(2, 12, 12, dtype=P.float64, generator=g).requires_grad_()
    for fn, arg in [(lambda x: F.unfold(x, (2, 3), 1, (1, 0), (1, 2)), x),
                    (lambda x: F.unfold(x, 2, 2, 1, 1), x[0].detach().requires_grad_()),
                    (lambda c: F.fold(c, (5, 6), 2, 1, 0, (2, 1)), c[:, :, :10].detach().requires_grad_()),
                    (lambda c: F.fold(c, (4, 5), 2, 1, 0, 1), c[0].detach().requires_grad_())]:
        assert P.autograd.gradcheck(fn, (arg,))
        assert P.autograd.gradgradcheck(fn, (arg,))


def test_modules_without_torch():
    u, f = P.nn.Unfold(2, padding=1), P.nn.Fold((4, 5), 2, padding=1)
    assert repr(u) == "Unfold(kernel_size=2, dilation=1, padding=1, stride=1)"
    assert repr(f) == "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=1, stride=1)"
    x = P.randn(2, 3, 4, 5)
    assert u(x).shape == (2, 12, 30) and f(u(x)).shape == (2, 3, 4, 5)


def test_errors_without_torch():
    x = P.randn(2, 3, 4, 5)
    for bad in [lambda: F.unfold(x, 0), lambda: F.unfold(x, 2, stride=0), lambda: F.unfold(x, 7),
                lambda: F.unfold(P.randn(1, 2, 3, 4, 5), 2), lambda: F.fold(P.randn(1, 12, 10), (4, 4), 2),
                lambda: F.fold(P.randn(1, 13, 9), (4, 4), 2)]:
        with pytest.raises(RuntimeError):
            bad()
    with pytest.raises(NotImplementedError):
        F.unfold(x.long(), 2)


# ---- against torch ------------------------------------------------------------------------------

def _pair_tensors(a, dtype="float64", layout=None):
    tp, tt = getattr(P, dtype), getattr(T, dtype)
    if layout == "t":
        base = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        lp, lt = P.tensor(base.tolist(), dtype=tp).requires_grad_(), T.tensor(base.tolist(), dtype=tt).requires_grad_()
        return (lp, lp.transpose(-1, -2)), (lt, lt.transpose(-1, -2))
    lp, lt = P.tensor(a.tolist(), dtype=tp).requires_grad_(), T.tensor(a.tolist(), dtype=tt).requires_grad_()
    return (lp, lp), (lt, lt)


def _run_both(fp, ft, a, layout=None, dtype="float64", tol=1e-12):
    (lp, xp), (lt, xt) = _pair_tensors(a, dtype, layout)
    yp, yt = fp(xp), ft(xt)
    assert_same(yp, yt, tol, tol)
    go = np.random.default_rng(3).standard_normal(tuple(yt.shape))
    yp.backward(P.tensor(go.tolist(), dtype=getattr(P, dtype)))
    yt.backward(T.tensor(go.tolist(), dtype=getattr(T, dtype)))
    assert_same(lp.grad, lt.grad, tol, tol)


@requires_torch
@pytest.mark.parametrize("k,d,p,s", PARAMS)
@pytest.mark.parametrize("shape,layout", [((2, 3, 7, 6), None), ((3, 6, 7), "t"), ((1, 2, 5, 9), None)],
                         ids=["batched", "unbatched_transposed", "batch1"])
def test_unfold_vs_torch(k, d, p, s, shape, layout):
    _run_both(lambda x: F.unfold(x, k, d, p, s), lambda x: T.nn.functional.unfold(x, k, d, p, s), rand(*shape), layout)


@requires_torch
@pytest.mark.parametrize("k,d,p,s", PARAMS)
@pytest.mark.parametrize("batched", [True, False])
def test_fold_vs_torch(k, d, p, s, batched):
    size = (7, 6)
    blocks = np_unfold(np.zeros((1, 2) + size), k, d, p, s).shape[1:]
    shape = ((2,) if batched else ()) + blocks
    _run_both(lambda c: F.fold(c, size, k, d, p, s), lambda c: T.nn.functional.fold(c, size, k, d, p, s), rand(*shape))


@requires_torch
def test_bigger_float32_vs_torch():
    # enough planes for the threaded paths
    _run_both(lambda x: F.unfold(x, 3, 1, 1, 1), lambda x: T.nn.functional.unfold(x, 3, 1, 1, 1),
             rand(2, 16, 30, 28), dtype="float32", tol=1e-6)
    _run_both(lambda c: F.fold(c, (30, 28), 3, 1, 1, 1), lambda c: T.nn.functional.fold(c, (30, 28), 3, 1, 1, 1),
             rand(2, 144, 840), dtype="float32", tol=1e-5)


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "bool"])
def test_other_dtypes_vs_torch(dtype):
    x = rand(2, 3, 5, 4)
    if dtype == "bool":
        x = x > 0
    xp, xt = P.tensor(x.tolist(), dtype=getattr(P, dtype)), T.tensor(x.tolist(), dtype=getattr(T, dtype))
    up, ut = F.unfold(xp, 2, 1, 1, 1), T.nn.functional.unfold(xt, 2, 1, 1, 1)
    assert str(up.dtype) == str(ut.dtype) and npy(up).tolist() == ut.double().numpy().tolist()
    fp, ft = F.fold(up, (5, 4), 2, 1, 1, 1), T.nn.functional.fold(ut, (5, 4), 2, 1, 1, 1)
    assert str(fp.dtype) == str(ft.dtype)
    np.testing.assert_allclose(npy(fp), ft.double().numpy(), rtol=1e-2, atol=1e-2)


@requires_torch
def test_modules_vs_torch():
    for args, kw in [((2,), dict(padding=1)), (((2, 3),), dict(dilation=(1, 2), stride=2))]:
        tu, pu = T.nn.Unfold(*args, **kw), P.nn.Unfold(*args, **kw)
        assert repr(tu) == repr(pu)
        x = rand(2, 3, 6, 7)
        u = pu(P.tensor(x.tolist()))
        np.testing.assert_allclose(npy(u), tu(T.tensor(x.tolist())).double().numpy(), rtol=1e-6)
        tf, pf = T.nn.Fold((6, 7), *args, **kw), P.nn.Fold((6, 7), *args, **kw)
        assert repr(tf) == repr(pf)
        np.testing.assert_allclose(npy(pf(u)), tf(T.tensor(npy(u).tolist(), dtype=T.float32)).double().numpy(),
                                   rtol=1e-5, atol=1e-6)


ERRORS = {
    "unfold 0d": lambda L: L.nn.functional.unfold(L.randn(()), 2),
    "unfold 1d": lambda L: L.nn.functional.unfold(L.randn(5), 2),
    "unfold 2d": lambda L: L.nn.functional.unfold(L.randn(3, 5), 2),
    "unfold 5d": lambda L: L.nn.functional.unfold(L.randn(1, 2, 3, 4, 5), 2),
    "unfold zero channels": lambda L: L.nn.functional.unfold(L.randn(2, 0, 3, 4), 2),
    "unfold kernel 0": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), 0),
    "unfold stride 0": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), 2, stride=0),
    "unfold dilation first": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), 2, stride=0, dilation=0, padding=-1),
    "unfold padding": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), 2, padding=-1),
    "unfold no blocks": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), 7, stride=2),
    "unfold kernel length": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), (2, 2, 2)),
    "unfold stride length": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5), 2, stride=(1,)),
    "unfold long": lambda L: L.nn.functional.unfold(L.randn(2, 3, 4, 5).long(), 2),
    "fold length": lambda L: L.nn.functional.fold(L.randn(1, 12, 10), (4, 4), 2),
    "fold channels": lambda L: L.nn.functional.fold(L.randn(1, 13, 9), (4, 4), 2),
    "fold 4d": lambda L: L.nn.functional.fold(L.randn(2, 1, 12, 9), (4, 4), 2),
    "fold zero channels": lambda L: L.nn.functional.fold(L.randn(1, 0, 9), (4, 4), 2),
    "fold stride first": lambda L: L.nn.functional.fold(L.randn(1, 12, 9), (4, 4), 2, stride=0, dilation=0, padding=-1),
    "fold output too small": lambda L: L.nn.functional.fold(L.randn(1, 12, 9), (1, 1), 2),
    "fold output_size length": lambda L: L.nn.functional.fold(L.randn(1, 12, 9), (4, 4, 4), 2),
    "fold long": lambda L: L.nn.functional.fold(L.randn(1, 12, 9).long(), (4, 4), 2),
}


@requires_torch
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_like_torch(name):
    with pytest.raises(Exception) as te:
        ERRORS[name](T)
    with pytest.raises(type(te.value)) as pe:
        ERRORS[name](P)
    assert str(pe.value).split("\n")[0] == str(te.value).split("\n")[0]


@requires_torch
def test_empty_batch_vs_torch():
    assert tuple(F.unfold(P.randn(0, 2, 3, 4), 2).shape) == tuple(T.nn.functional.unfold(T.randn(0, 2, 3, 4), 2).shape)
    assert tuple(F.fold(P.randn(0, 12, 9), (4, 4), 2).shape) == tuple(
        T.nn.functional.fold(T.randn(0, 12, 9), (4, 4), 2).shape)
