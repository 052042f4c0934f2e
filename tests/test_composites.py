"""torch-namespace composites (pyctorch/_composites.py) and the special-function ops of ops_api.def, against
torch (values, dtypes, shapes, gradients, errors) and against numpy / hand values where torch is absent."""
import itertools
import math
import warnings

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, assert_same, torch as T

RNG = np.random.default_rng(0)


def arr(*shape, dtype=np.float64, low=-2.0, high=2.0):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def p_(a, requires_grad=False):
    if isinstance(a, np.ndarray):
        a = P.tensor(a.tolist(), dtype=getattr(P, str(a.dtype))).reshape(a.shape)
    return a.requires_grad_() if requires_grad else a


def t_(a, requires_grad=False):
    if isinstance(a, np.ndarray):
        a = T.tensor(a.tolist(), dtype=getattr(T, str(a.dtype))).reshape(a.shape)
    return a.requires_grad_() if requires_grad else a


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(name, *args, grad=(), kwargs=None, rtol=None, atol=None, method=False, fn=None):
    """Run `name` in pyctorch and torch on the same numpy inputs; compare every output and the gradients of
    the arguments whose positions are in `grad` (through a random weighted sum of the float outputs)."""
    kwargs = kwargs or {}
    pa = [p_(a, i in grad) for i, a in enumerate(args)]
    ta = [t_(a, i in grad) for i, a in enumerate(args)]
    if fn is not None:
        po, to = fn(P, *pa, **kwargs), fn(T, *ta, **kwargs)
    elif method:
        po, to = getattr(pa[0], name)(*pa[1:], **kwargs), getattr(ta[0], name)(*ta[1:], **kwargs)
    else:
        po, to = getattr(P, name)(*pa, **kwargs), getattr(T, name)(*ta, **kwargs)
    for p, t in zip(_leaves(po), _leaves(to)):
        assert_same(p, t, rtol, atol)
    if grad:
        ploss, tloss = 0, 0
        for p, t in zip(_leaves(po), _leaves(to)):
            if t.is_floating_point() and t.requires_grad:
                w = arr(*t.shape) if t.dim() else np.array(1.5)
                ploss = ploss + (p * p_(w.astype(str(t.dtype).split(".")[1]))).sum()
                tloss = tloss + (t * t_(w.astype(str(t.dtype).split(".")[1]))).sum()
        ploss.backward()
        tloss.backward()
        for i in grad:
            assert (pa[i].grad is None) == (ta[i].grad is None), f"grad presence of argument {i}"
            if ta[i].grad is not None:
                assert_same(pa[i].grad, ta[i].grad, rtol, atol)
    return po, to


def raises_like(fn):
    """fn(lib) raises the same exception type, with the same message, in pyctorch and torch."""
    with pytest.raises(Exception) as tinfo:
        fn(T)
    with pytest.raises(Exception) as pinfo:
        fn(P)
    assert type(pinfo.value) is type(tinfo.value), (pinfo.value, tinfo.value)
    assert str(pinfo.value).split("\n")[0] == str(tinfo.value).split("\n")[0]


def P_np(t):
    return np.array(t.detach().tolist())


# ---- numpy and hand-value checks (run without torch) ----

def test_special_functions_numpy():
    x = np.array([0.5, 1.0, 2.5, 7.0, 20.0, -0.5, -2.5])
    np.testing.assert_allclose(P_np(P.lgamma(p_(x))), [math.lgamma(v) for v in x], rtol=1e-14)
    # digamma: psi(1) = -gamma, psi(1/2) = -gamma - 2 log 2, psi(x + 1) = psi(x) + 1/x
    d = P_np(P.digamma(p_(np.array([1.0, 0.5, 3.5, 2.5]))))
    g = 0.5772156649015329
    np.testing.assert_allclose(d[:2], [-g, -g - 2 * math.log(2)], rtol=1e-14)
    np.testing.assert_allclose(d[2] - d[3], 1 / 2.5, rtol=1e-13)
    assert P_np(P.digamma(P.tensor([0.0, -0.0, -2.0]))).tolist()[:2] == [-math.inf, math.inf]
    assert math.isnan(P_np(P.digamma(P.tensor([-2.0])))[0])
    xi = np.array([0.0, 0.1, 1.0, 5.0, 29.0, 31.0, 100.0, -3.0])
    np.testing.assert_allclose(P_np(P.i0(p_(xi))), np.i0(xi), rtol=1e-14)
    assert P.lgamma(P.tensor([3])).dtype == P.float32 and P.i0(P.tensor([1], dtype=P.int64)).dtype == P.float32


def test_gcd_lcm_numpy():
    a, b = arr(50, dtype=np.int64, low=-60, high=60), arr(50, dtype=np.int64, low=-60, high=60)
    assert P_np(P.gcd(p_(a), p_(b))).tolist() == np.gcd(a, b).tolist()
    assert P_np(P.lcm(p_(a), p_(b))).tolist() == np.lcm(a, b).tolist()
    x = p_(a.copy())
    x.gcd_(p_(b))
    assert P_np(x).tolist() == np.gcd(a, b).tolist()
    with pytest.raises(NotImplementedError, match="gcd_cpu"):
        P.gcd(P.tensor([1.0]), P.tensor([2.0]))


def test_pointwise_numpy():
    x = np.array([-3.5, -1.0, -0.0, 0.0, 1e-300, 0.3, 2.0, 1e300, np.inf, -np.inf, np.nan])
    m, e = P.frexp(p_(x))
    nm, ne = np.frexp(x)
    np.testing.assert_array_equal(P_np(m), nm)
    assert P_np(e)[np.isfinite(x)].tolist() == ne[np.isfinite(x)].tolist() and e.dtype == P.int32
    y = np.array([0.0, 1.0, -2.0, np.inf, 3.0, 1.0, 1e300, 1e300, 2.0, 0.0, 1.0])
    np.testing.assert_array_equal(P_np(P.nextafter(p_(x), p_(y))), np.nextafter(x, y))
    keep = (x != 1e300) & (y != 1e300)
    x32, y32 = x[keep].astype(np.float32), y[keep].astype(np.float32)
    np.testing.assert_array_equal(P_np(P.nextafter(p_(x32), p_(y32))), np.nextafter(x32, y32))
    np.testing.assert_array_equal(P_np(P.nextafter(P.tensor([1.0], dtype=P.float16), P.tensor([2.0], dtype=P.float16))),
                                  [np.nextafter(np.float16(1), np.float16(2))])
    np.testing.assert_allclose(P_np(P.sinc(p_(x[:8]))), np.sinc(x[:8]), rtol=1e-14)
    np.testing.assert_allclose(P_np(P.ldexp(p_(x), P.tensor([3]))), np.ldexp(x, 3))
    np.testing.assert_allclose(P_np(P.deg2rad(P.tensor([180, 90]))), [math.pi, math.pi / 2], rtol=1e-7)
    np.testing.assert_allclose(P_np(P.rad2deg(p_(x[:8]))), np.rad2deg(x[:8]))
    np.testing.assert_allclose(P_np(P.logaddexp2(p_(x[:7]), p_(y[:7]))), np.logaddexp2(x[:7], y[:7]), rtol=1e-14)
    assert P_np(P.isneginf(p_(x))).tolist() == np.isneginf(x).tolist()
    assert P_np(P.isposinf(p_(x))).tolist() == np.isposinf(x).tolist()
    assert P_np(P.heaviside(p_(x[:7]), P.tensor([0.5], dtype=P.float64))).tolist() == np.heaviside(x[:7], 0.5).tolist()


def test_shapes_numpy():
    a = arr(3, 4)
    for k in range(-1, 5):
        np.testing.assert_array_equal(P_np(P.rot90(p_(a), k)), np.rot90(a, k))
    c = arr(2, 3, 4)
    np.testing.assert_array_equal(P_np(P.rot90(p_(c), 1, [2, 0])), np.rot90(c, 1, (2, 0)))
    assert P_np(P.tril_indices(4, 5, -1)).tolist() == list(map(list, np.tril_indices(4, -1, 5)))
    assert P_np(P.triu_indices(5, 3, 1)).tolist() == list(map(list, np.triu_indices(5, 1, 3)))
    np.testing.assert_array_equal(P_np(P.diff(p_(a), 2, 0)), np.diff(a, 2, 0))
    np.testing.assert_array_equal(P_np(P.diff(p_(a), prepend=p_(a[:, :1]), append=p_(a))),
                                  np.diff(a, prepend=a[:, :1], append=a))
    v = P.tensor([1, 5, 7])
    assert P_np(P.combinations(v, 2)).tolist() == [list(c) for c in itertools.combinations([1, 5, 7], 2)]
    assert P_np(P.combinations(v, 2, True)).tolist() == [list(c) for c in itertools.combinations_with_replacement(
        [1, 5, 7], 2)]
    prod = [list(c) for c in itertools.product([1, 5, 7], [0, 1])]
    assert P_np(P.cartesian_prod(v, P.tensor([0, 1]))).tolist() == prod
    bd = P_np(P.block_diag(P.ones(2, 2), P.tensor([3.0, 4.0]), P.tensor(5.0)))
    np.testing.assert_array_equal(bd, [[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 3, 4, 0], [0, 0, 0, 0, 5]])
    e, t = np.array([1, 4, 9, 2, 8]), np.array([2, 9, 3])
    assert P_np(P.isin(p_(e), p_(t))).tolist() == np.isin(e, t).tolist()
    assert P_np(P.isin(p_(e), p_(t), invert=True)).tolist() == np.isin(e, t, invert=True).tolist()
    big_e, big_t = arr(3000, dtype=np.int64, low=0, high=5000), arr(700, dtype=np.int64, low=0, high=5000)
    assert P_np(P.isin(p_(big_e), p_(big_t))).tolist() == np.isin(big_e, big_t).tolist()  # the sorted path
    idx = np.argsort(a, 1)
    np.testing.assert_array_equal(P_np(P.take_along_dim(p_(a), p_(idx), 1)), np.take_along_axis(a, idx, 1))
    np.testing.assert_array_equal(P_np(P.column_stack([P.tensor([1, 2]), P.tensor([[3, 4], [5, 6]])])),
                                  np.column_stack([[1, 2], [[3, 4], [5, 6]]]))
    assert P.atleast_3d(P.ones(4)).shape == np.atleast_3d(np.ones(4)).shape == (1, 4, 1)
    assert [t.shape for t in P.atleast_2d(P.tensor(1.0), P.ones(3))] == [(1, 1), (1, 3)]


def test_linalg_and_statistics_numpy():
    a, b = arr(4, 3), arr(4, 3)
    np.testing.assert_allclose(P_np(P.cross(p_(a), p_(b), dim=1)), np.cross(a, b))
    x = arr(3, 10)
    fw, aw = arr(10, dtype=np.int64, low=1, high=4), arr(10, low=0.1, high=1.0)
    np.testing.assert_allclose(P_np(P.cov(p_(x))), np.cov(x), rtol=1e-12)
    np.testing.assert_allclose(P_np(P.cov(p_(x), correction=0, fweights=p_(fw), aweights=p_(aw))),
                               np.cov(x, ddof=0, fweights=fw, aweights=aw), rtol=1e-12)
    np.testing.assert_allclose(P_np(P.cov(p_(x), fweights=p_(fw), aweights=p_(aw))),
                               np.cov(x, fweights=fw, aweights=aw), rtol=1e-12)
    np.testing.assert_allclose(P_np(P.corrcoef(p_(x))), np.corrcoef(x), rtol=1e-12)
    y, xs = arr(3, 6), np.sort(arr(6))
    np.testing.assert_allclose(P_np(P.trapezoid(p_(y), p_(xs))), np.trapezoid(y, xs), rtol=1e-12)
    np.testing.assert_allclose(P_np(P.trapezoid(p_(y), dx=0.5, dim=0)), np.trapezoid(y, dx=0.5, axis=0), rtol=1e-12)
    np.testing.assert_allclose(P_np(P.cumulative_trapezoid(p_(y), p_(xs)))[:, -1], np.trapezoid(y, xs), rtol=1e-12)
    q = np.array([0.0, 0.1, 0.5, 0.93, 1.0])
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        np.testing.assert_allclose(P_np(P.quantile(p_(x), p_(q), 1, interpolation=method)),
                                   np.quantile(x, q, axis=1, method=method), rtol=1e-12)
    xn = x.copy()
    xn[0, 3] = xn[2, :] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns on the all-NaN row
        expect = np.nanquantile(xn, 0.3, axis=1)
    np.testing.assert_allclose(P_np(P.nanquantile(p_(xn), 0.3, 1)), expect, rtol=1e-12)
    h = arr(1000)
    for kw, nkw in (({}, {"bins": 100}), ({"bins": 7, "range": (-1.0, 1.5)}, {"bins": 7, "range": (-1.0, 1.5)}),
                    ({"bins": P.tensor([-2.0, -0.5, 0.0, 2.0], dtype=P.float64)}, {"bins": [-2.0, -0.5, 0.0, 2.0]})):
        hist, edges = P.histogram(p_(h), **kw)
        nh, ne = np.histogram(h, **nkw)
        np.testing.assert_allclose(P_np(edges), ne, rtol=1e-12)
        np.testing.assert_array_equal(P_np(hist), nh)
    hist, _ = P.histogram(p_(h), bins=5, weight=p_(np.abs(h)), density=True)
    np.testing.assert_allclose(P_np(hist), np.histogram(h, bins=5, weights=np.abs(h), density=True)[0], rtol=1e-12)


def test_windows_numpy():
    for n in (1, 2, 5, 8):
        np.testing.assert_allclose(P_np(P.hamming_window(n, False, dtype=P.float64)), np.hamming(n), atol=1e-15)
        np.testing.assert_allclose(P_np(P.hann_window(n, False, dtype=P.float64)), np.hanning(n), atol=1e-15)
        np.testing.assert_allclose(P_np(P.bartlett_window(n, False, dtype=P.float64)), np.bartlett(n), atol=1e-15)
        np.testing.assert_allclose(P_np(P.blackman_window(n, False, dtype=P.float64)), np.blackman(n), atol=1e-15)
        np.testing.assert_allclose(P_np(P.kaiser_window(n, False, 8.0, dtype=P.float64)), np.kaiser(n, 8.0),
                                   rtol=1e-13)
    assert P.hann_window(0).shape == (0,) and P.hann_window(5).dtype == P.float32


def test_pixel_shuffle_roundtrip_and_modules():
    x = P.tensor(arr(2, 8, 3, 5).tolist())
    y = P.nn.PixelShuffle(2)(x)
    assert y.shape == (2, 2, 6, 10)
    assert P.equal(P.nn.PixelUnshuffle(2)(y), x)
    assert repr(P.nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert P.nn.functional.pixel_shuffle(x, 1).shape == x.shape


def test_real_tensor_identities():
    x = P.randn(3, 4)
    assert P.real(x) is x and P.conj(x) is x and x.resolve_conj() is x and x.resolve_neg() is x and x.real is x
    assert not x.is_conj() and not x.is_neg()
    assert P.equal(P.adjoint(x), x.t()) and P.equal(x.mH, x.t()) and P.positive(x) is x
    assert P.isreal(x).all()
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        x.imag


def test_quantile_gradient_and_gradcheck():
    from pyctorch.autograd import gradcheck
    x = P.tensor(arr(4, 7).tolist(), dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda t: P.quantile(t, P.tensor([0.2, 0.75], dtype=P.float64), dim=1), (x,))
    pos = P.tensor(arr(9, low=0.2, high=4.0).tolist(), dtype=P.float64, requires_grad=True)
    for op in (P.lgamma, P.digamma, P.i0, P._C._i1, P.sinc, lambda t: P.frexp(t).mantissa):
        assert gradcheck(op, (pos,))
    a = P.tensor(arr(5, 3).tolist(), dtype=P.float64, requires_grad=True)
    b = P.tensor(arr(4, 3).tolist(), dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda u, v: P.cdist(u, v), (a, b))
    assert gradcheck(lambda u, v: P.cdist(u, v, p=1.5), (a, b))
    assert gradcheck(lambda u: P.cov(u.t()), (a,))
    assert gradcheck(lambda u, v: P.logaddexp2(u, v[:, :1]), (a, a.detach().clone().requires_grad_()))


# ---- torch comparisons ----

@requires_torch
def test_special_functions_match_torch():
    x = np.concatenate([np.linspace(-9.7, 40.0, 301), [0.0, -0.0, -3.0, 1e-8, 700.0]])
    for name in ("lgamma", "digamma", "i0"):
        compare(name, x)
        compare(name, x.astype(np.float32), rtol=2e-5, atol=1e-5)
        compare(name, x[:5].astype(np.int64))
    pos = arr(3, 4, low=0.1, high=5.0)
    for name in ("lgamma", "digamma", "i0"):
        compare(name, pos, grad=(0,))
        compare(name + "_", pos.copy(), method=True)
    compare("i1", pos, grad=(0,), fn=lambda lib, t: lib.special.i1(t) if lib is T else lib._C._i1(t))
    # (torch's gradient for an integer exponent computes 2 ** other in integers: 0 for negative exponents)
    compare("ldexp", arr(3, 4), arr(4, dtype=np.int64, low=-3, high=3))
    compare("ldexp", arr(3, 4), arr(4, dtype=np.int64, low=0, high=3), grad=(0,))
    for a, b in ((np.int64, np.int64), (np.int8, np.int64), (np.int16, np.int16), (np.uint8, np.uint8)):
        compare("gcd", arr(40, dtype=a, low=0, high=90), arr(40, dtype=b, low=0, high=90))
        compare("lcm", arr(40, dtype=a, low=0, high=10), arr(40, dtype=b, low=0, high=10))
    raises_like(lambda lib: lib.gcd(lib.tensor([True]), lib.tensor([True])))


@requires_torch
def test_pointwise_match_torch():
    x = np.concatenate([arr(20), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    y = np.concatenate([arr(20), [0.0, 2.0, np.inf, np.inf, 1.0]])
    for dt in (np.float64, np.float32):
        compare("logaddexp2", x.astype(dt), y.astype(dt))
        compare("nextafter", x.astype(dt), y.astype(dt))
        compare("sinc", x.astype(dt))
        compare("deg2rad", x.astype(dt))
        compare("rad2deg", x.astype(dt))
        compare("heaviside", x.astype(dt), y.astype(dt))
        compare("isneginf", x.astype(dt))
        compare("isposinf", x.astype(dt))
        compare("frexp", x.astype(dt))
    for name in ("nextafter",):
        for dt in (T.float16, T.bfloat16):
            a, b = T.tensor([1.0, -1.0, 0.0, 3.0], dtype=dt), T.tensor([2.0, 0.0, -1.0, -3.0], dtype=dt)
            pa, pb = P.tensor([1.0, -1.0, 0.0, 3.0], dtype=getattr(P, str(dt)[6:])), P.tensor(
                [2.0, 0.0, -1.0, -3.0], dtype=getattr(P, str(dt)[6:]))
            assert_same(getattr(P, name)(pa, pb), getattr(T, name)(a, b))
    ints = arr(6, dtype=np.int64, low=-5, high=5)
    for name in ("sinc", "deg2rad", "rad2deg", "isneginf", "isposinf", "isreal", "positive"):
        compare(name, ints)
    compare("deg2rad", np.array([True, False]))
    compare("heaviside", ints, np.array([7]))
    g = arr(3, 4)
    for name in ("logaddexp2",):
        compare(name, g, arr(4), grad=(0, 1))
    compare("sinc", np.array([0.0, 0.5, -1.25]), grad=(0,))
    compare("deg2rad", g, grad=(0,))
    compare("rad2deg", g, grad=(0,))
    compare("ldexp", g, np.array([1.5]), grad=(0, 1))
    compare("frexp", g, grad=(0,))
    compare("clamp_min", g, arr(4), grad=(0, 1))
    compare("clamp_max", g, arr(3, 1), grad=(0, 1))
    compare("clamp_min", ints, kwargs={"min": 1.5})
    compare("clamp_max", g, 0.25, method=True)
    for name in ("sinc_", "deg2rad_", "rad2deg_"):
        compare(name, g.copy(), method=True)
    compare("nextafter_", g.copy(), arr(4), method=True)
    compare("heaviside_", g.copy(), arr(4), method=True)
    compare("ldexp_", g.copy(), np.array([2.0]), method=True)
    raises_like(lambda lib: lib.heaviside(lib.tensor([1.0]), lib.tensor([1])))
    raises_like(lambda lib: lib.logaddexp2(lib.tensor([1]), lib.tensor([2])))
    raises_like(lambda lib: lib.nextafter(lib.tensor([1]), lib.tensor([2])))
    raises_like(lambda lib: lib.positive(lib.tensor([True])))
    raises_like(lambda lib: lib.frexp(lib.tensor([1])))
    out = T.empty(0), P.empty(0)
    assert_same(P.deg2rad(P.tensor([90.0]), out=out[1]), T.deg2rad(T.tensor([90.0]), out=out[0]))
    assert_same(out[1], out[0])


@requires_torch
def test_shape_functions_match_torch():
    a = arr(4, 5)
    nc = arr(5, 8)[:, ::2].T  # non-contiguous in both libraries after the transpose below
    compare("diff", a, grad=(0,))
    compare("diff", a, kwargs={"n": 2, "dim": 0}, grad=(0,))
    compare("diff", a, arr(4, 1), arr(4, 2), fn=lambda lib, x, pre, app: lib.diff(x, prepend=pre, append=app),
            grad=(0, 1, 2))
    compare("diff", np.array([True, False, False, True]))
    compare("diff", arr(2, 3, dtype=np.int64), kwargs={"n": 5, "dim": 0})
    compare("diff", a, fn=lambda lib, x: x.t().diff(dim=0))
    compare("atleast_1d", np.array(3.0))
    compare("atleast_2d", arr(3))
    compare("atleast_3d", arr(3, 2))
    compare("atleast_3d", arr(3), arr(2, 2), fn=lambda lib, x, y: lib.atleast_3d([x, y]))
    compare("column_stack", arr(3), arr(3, 2), fn=lambda lib, x, y: lib.column_stack((x, y)), grad=(0, 1))
    compare("row_stack", arr(3), arr(2, 3), fn=lambda lib, x, y: lib.row_stack((x, y)), grad=(0, 1))
    compare("block_diag", arr(2, 3), arr(3), np.array(2.0), arr(0, 2), grad=(0, 1, 2))
    compare("block_diag", arr(2, 2, dtype=np.int32), arr(2, dtype=np.float32))
    compare("cartesian_prod", arr(3), arr(2), arr(2), grad=(0, 1, 2))
    compare("cartesian_prod", arr(3))
    compare("combinations", arr(5), kwargs={"r": 3}, grad=(0,))
    compare("combinations", arr(4), kwargs={"with_replacement": True})
    compare("combinations", arr(2, dtype=np.int64), kwargs={"r": 3})
    compare("combinations", arr(3), kwargs={"r": 0})
    for args in ((3, 3), (4, 6, 1), (5, 3, -2), (0, 3), (3, 0, 5)):
        assert_same(P.tril_indices(*args), T.tril_indices(*args))
        assert_same(P.triu_indices(*args), T.triu_indices(*args))
    assert_same(P.tril_indices(3, 4, dtype=P.int32), T.tril_indices(3, 4, dtype=T.int32))
    compare("diagflat", arr(2, 2), kwargs={"offset": -1}, grad=(0,))
    compare("diagflat", arr(3), method=True)
    for k in (-3, 0, 1, 2, 3, 6):
        compare("rot90", arr(2, 3, 4), k, [2, -3], grad=(0,))
    compare("rot90", nc, method=True, fn=lambda lib, x: lib.rot90(x.t(), 1))
    idx = np.argsort(a, 1)[:, :3]
    compare("take_along_dim", a, idx, kwargs={"dim": 1}, grad=(0,))
    compare("take_along_dim", a, np.array([[0], [1], [2], [3]]), kwargs={"dim": -1})
    compare("take_along_dim", a, np.array([[3, 0, 1, 2, 0]]), kwargs={"dim": 0})
    compare("take_along_dim", a, np.array([0, 7, 19]), grad=(0,))
    compare("narrow_copy", a, 1, 1, 3, grad=(0,))
    compare("select_scatter", a, arr(5), 0, -1, grad=(0, 1))
    compare("slice_scatter", a, arr(4, 2), kwargs={"dim": 1, "start": 1, "end": 5, "step": 2}, grad=(0, 1))
    compare("slice_scatter", a, arr(2, 5), grad=(0, 1), kwargs={"start": -2})
    compare("diagonal_scatter", a, arr(4), kwargs={"offset": 1}, grad=(0, 1))
    compare("diagonal_scatter", arr(3, 4, 4), arr(4, 3), kwargs={"dim1": 1, "dim2": 0}, grad=(0, 1))
    e = arr(3, 4, dtype=np.int64, low=0, high=9)
    compare("isin", e, np.array([2, 5, 7]))
    compare("isin", e, np.array([2.0, 5.5]), kwargs={"invert": True})
    compare("isin", e.astype(np.float64), np.array([], dtype=np.float64))
    assert_same(P.isin(P.tensor([1, 2]), 2.5), T.isin(T.tensor([1, 2]), 2.5))
    assert_same(P.isin(2, P.tensor([1, 2])), T.isin(2, T.tensor([1, 2])))


@requires_torch
def test_shape_errors_match_torch():
    for fn in (lambda lib: lib.diff(lib.tensor(1.0)), lambda lib: lib.diff(lib.ones(3), n=-1),
               lambda lib: lib.diff(lib.ones(2, 3), prepend=lib.tensor(1.0)),
               lambda lib: lib.block_diag(lib.ones(2, 2, 2)), lambda lib: lib.cartesian_prod(lib.ones(2, 2)),
               lambda lib: lib.cartesian_prod(), lambda lib: lib.combinations(lib.arange(3), r=-1),
               lambda lib: lib.tril_indices(3, 3, dtype=lib.float32), lambda lib: lib.tril_indices(-1, 3),
               lambda lib: lib.triu_indices(3, -2),
               lambda lib: lib.rot90(lib.ones(2, 3), 1, [0]), lambda lib: lib.rot90(lib.ones(3), 1),
               lambda lib: lib.rot90(lib.ones(2, 3), 1, [1, -1]), lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 5]),
               lambda lib: lib.isin(lib.tensor([1]), lib.tensor([True])),
               lambda lib: lib.take_along_dim(lib.ones(3, 4), lib.tensor([[0.0]]), dim=1),
               lambda lib: lib.take_along_dim(lib.ones(3, 4), lib.tensor([0]), dim=1),
               lambda lib: lib.take_along_dim(lib.ones(3, 4), lib.tensor([[0], [1]]), dim=1),
               lambda lib: lib.select_scatter(lib.ones(3, 4), lib.ones(3), 0, 0),
               lambda lib: lib.slice_scatter(lib.ones(3, 4), lib.ones(2, 4), 0, 0, 1),
               lambda lib: lib.diagonal_scatter(lib.ones(3, 4), lib.ones(4)),
               lambda lib: lib.column_stack([]), lambda lib: lib.adjoint(lib.ones(3)),
               lambda lib: lib.atleast_1d(1)):
        raises_like(fn)


@requires_torch
def test_linalg_functions_match_torch():
    compare("cross", arr(4, 3), arr(4, 3), kwargs={"dim": -1}, grad=(0, 1))
    compare("cross", arr(3, 2, 1), arr(3, 1, 5), kwargs={"dim": 0}, grad=(0, 1))
    compare("cross", arr(3, 4, dtype=np.int64), arr(3, 4, dtype=np.int64), kwargs={"dim": 0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare("cross", arr(2, 3), arr(2, 3), method=True)
    compare("addbmm", arr(2, 3), arr(4, 2, 5), arr(4, 5, 3), grad=(0, 1, 2))
    compare("addbmm", arr(3), arr(4, 2, 5), arr(4, 5, 3), kwargs={"beta": 0.5, "alpha": -2}, grad=(0, 1, 2))
    compare("addbmm", arr(2, 3), arr(4, 2, 5), arr(4, 5, 3), method=True)
    compare("addr", arr(2, 3), arr(2), arr(3), grad=(0, 1, 2))
    compare("addr", arr(3), arr(2), arr(3), kwargs={"beta": 2, "alpha": 0.5}, grad=(0, 1, 2))
    compare("addr", arr(2, 3, dtype=np.int64), arr(2, dtype=np.int64), arr(3, dtype=np.int64))
    compare("addr", np.full((2, 3), np.nan), arr(2), arr(3), kwargs={"beta": 0})
    compare("chain_matmul", arr(2, 3), arr(3, 7), arr(7, 1), arr(1, 4), grad=(0, 1, 2, 3))
    compare("chain_matmul", arr(2, 3))
    for p in (2.0, 1.0, 0.5, 3.0, 0.0, math.inf):
        compare("cdist", arr(5, 3), arr(4, 3), kwargs={"p": p}, grad=(0, 1))
    compare("cdist", arr(2, 30, 3), arr(1, 28, 3), grad=(0, 1))  # the matmul form (> 25 rows)
    compare("cdist", arr(2, 5, 3), arr(2, 4, 3), kwargs={"compute_mode": "use_mm_for_euclid_dist"}, grad=(0, 1))
    compare("cdist", arr(30, 3), arr(4, 3), kwargs={"compute_mode": "donot_use_mm_for_euclid_dist"}, grad=(0, 1))
    compare("cdist", arr(5, 3).astype(np.float32), arr(4, 3).astype(np.float32), rtol=1e-5, atol=1e-5)
    compare("cdist", arr(0, 3), arr(4, 3))
    for p in (2, 1, 3.5, math.inf):
        compare("dist", arr(3, 4), arr(4), p, grad=(0, 1))
    compare("dist", arr(3), arr(3, dtype=np.int64))
    compare("pairwise_distance", arr(3, 4), arr(3, 4), grad=(0, 1))
    compare("cosine_similarity", arr(3, 4), arr(3, 4), grad=(0, 1))
    for fn in (lambda lib: lib.cross(lib.ones(2, 4), lib.ones(2, 4)),
               lambda lib: lib.cross(lib.ones(3, 4), lib.ones(3, 4), dim=1),
               lambda lib: lib.cross(lib.ones(3, 4), lib.ones(2, 3, 4)),
               lambda lib: lib.cross(lib.ones(3), lib.ones(3, dtype=lib.int64), dim=0),
               lambda lib: lib.addbmm(lib.zeros(2, 3), lib.ones(4, 2, 5), lib.ones(3, 5, 3)),
               lambda lib: lib.chain_matmul(), lambda lib: lib.chain_matmul(lib.ones(2)),
               lambda lib: lib.chain_matmul(lib.ones(2, 3), lib.ones(4, 2)),
               lambda lib: lib.cdist(lib.ones(3), lib.ones(3)), lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)),
               lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.long), lib.ones(2, 3, dtype=lib.long)),
               lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1),
               lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="foo"),
               lambda lib: lib.dist(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64))):
        raises_like(fn)


@requires_torch
def test_statistics_match_torch():
    x = arr(3, 7)
    fw, aw = arr(7, dtype=np.int64, low=0, high=3), arr(7, low=0.1, high=2.0)
    compare("cov", x, grad=(0,))
    compare("cov", x, kwargs={"correction": 0}, grad=(0,))
    compare("cov", x, fn=lambda lib, t: lib.cov(t, fweights=(p_ if lib is P else t_)(fw),
                                                 aweights=(p_ if lib is P else t_)(aw)), grad=(0,))
    compare("cov", x, fn=lambda lib, t: lib.cov(t, correction=2, aweights=(p_ if lib is P else t_)(aw)), grad=(0,))
    compare("cov", arr(6), grad=(0,))
    compare("cov", arr(4, dtype=np.int64))
    compare("cov", arr(2, 6)[:, ::2], method=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare("cov", np.ones((3, 1)))
    compare("corrcoef", x, grad=(0,))
    compare("corrcoef", arr(5, dtype=np.int64, low=0, high=9))
    compare("corrcoef", arr(5), method=True)
    y, xs = arr(3, 6), np.sort(arr(6))
    compare("trapezoid", y, grad=(0,))
    compare("trapezoid", y, xs, grad=(0, 1))
    compare("trapezoid", y, np.sort(arr(3, 6), 1), kwargs={"dim": 1}, grad=(0, 1))
    compare("trapezoid", y, kwargs={"dx": 0.3, "dim": 0}, grad=(0,))
    compare("trapezoid", arr(4, dtype=np.int64))
    compare("trapezoid", arr(3, 0))
    compare("trapz", y, xs, grad=(0, 1))
    compare("cumulative_trapezoid", y, grad=(0,))
    compare("cumulative_trapezoid", y, xs, grad=(0, 1))
    compare("cumulative_trapezoid", y, kwargs={"dx": 2.0, "dim": 0}, grad=(0,))
    compare("cumulative_trapezoid", arr(4, dtype=np.int64))
    compare("cumulative_trapezoid", arr(3, 0))
    xn = arr(4, 9)
    xn[1, 2] = xn[3, :] = np.nan
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        for name in ("quantile", "nanquantile"):
            compare(name, xn, np.array([0.0, 0.25, 0.5, 0.9, 1.0]), 1, kwargs={"interpolation": method})
            compare(name, x, 0.37, kwargs={"interpolation": method}, grad=(0,))
    compare("quantile", x, np.array([0.1, 0.6]), grad=(0,))
    compare("quantile", x, np.array([0.1, 0.6]), 0, True, grad=(0,))
    compare("quantile", x, np.array(0.3), -1, True, grad=(0,))
    compare("quantile", x, np.array([0.3]), None, True)
    compare("quantile", x.astype(np.float32), 0.4, 1, method=True)
    compare("nanquantile", xn, 0.4, 1, method=True)
    compare("quantile", arr(6, 4)[::2], 0.5, 0)
    h = arr(200)
    compare("histogram", h)
    compare("histogram", h.astype(np.float32), kwargs={"bins": 13, "range": (-1.0, 1.0), "density": True})
    compare("histogram", h, fn=lambda lib, t: lib.histogram(t, bins=lib.tensor([-2.0, 0.0, 0.5, 2.0],
                                                                                 dtype=lib.float64)))
    compare("histogram", h, fn=lambda lib, t: lib.histogram(t, bins=6, weight=t.abs()))
    compare("histogram", np.array([1.0, 1.0]), kwargs={"bins": 2})
    compare("histogram", np.zeros(0), kwargs={"bins": 2})
    compare("histogram", np.array([1.0, np.nan, 2.0, 5.0]), kwargs={"bins": 3, "range": (0.0, 4.0)})
    compare("histogram", h, 4, method=True)
    for fn in (lambda lib: lib.cov(lib.ones(2, 2, 2)),
               lambda lib: lib.cov(lib.ones(3, 4), fweights=lib.ones(4)),
               lambda lib: lib.cov(lib.ones(3, 4), fweights=-lib.ones(4, dtype=lib.long)),
               lambda lib: lib.cov(lib.ones(3, 4), aweights=lib.ones(3)),
               lambda lib: lib.cov(lib.ones(3, 4), aweights=lib.ones(4, dtype=lib.long)),
               lambda lib: lib.cov(lib.ones(3, 4), fweights=lib.ones(1, 4, dtype=lib.long)),
               lambda lib: lib.cov(lib.ones(3, 4), aweights=-lib.ones(4)),
               lambda lib: lib.trapezoid(lib.ones(3, 4), lib.ones(3)), lambda lib: lib.trapezoid(lib.tensor(1.0)),
               lambda lib: lib.quantile(lib.arange(4), 0.5), lambda lib: lib.quantile(lib.ones(3), 1.5),
               lambda lib: lib.quantile(lib.ones(3), lib.tensor([[0.5]])), lambda lib: lib.quantile(lib.ones(0), 0.5),
               lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="foo"),
               lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
               lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5, 2.0])),
               lambda lib: lib.quantile(lib.ones(3, 3), 0.5, dim=5),
               lambda lib: lib.histogram(lib.tensor([1, 2])), lambda lib: lib.histogram(lib.ones(2), bins=0),
               lambda lib: lib.histogram(lib.ones(2), bins=2, range=(3.0, 1.0)),
               lambda lib: lib.histogram(lib.ones(2), bins=2, weight=lib.ones(3))):
        raises_like(fn)


@requires_torch
def test_windows_match_torch():
    for name in ("hamming_window", "hann_window", "bartlett_window", "blackman_window", "kaiser_window"):
        for n in (0, 1, 2, 5, 10):
            for periodic in (True, False):
                for dt in ("float32", "float64"):
                    assert_same(getattr(P, name)(n, periodic, dtype=getattr(P, dt)),
                                getattr(T, name)(n, periodic, dtype=getattr(T, dt)), atol=1e-6)
        assert getattr(P, name)(4, requires_grad=True).requires_grad
        raises_like(lambda lib: getattr(lib, name)(-1))
    assert_same(P.hamming_window(7, True, 0.6, 0.3), T.hamming_window(7, True, 0.6, 0.3))
    assert_same(P.kaiser_window(7, False, 3.0), T.kaiser_window(7, False, 3.0))
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
        P.hann_window(4, dtype=P.long)


@requires_torch
def test_activations_match_torch():
    x = arr(2, 8, 3, 4)
    compare("pixel_shuffle", x, 2, grad=(0,))
    compare("pixel_shuffle", arr(18, 2, 1), 3, grad=(0,))
    compare("pixel_unshuffle", arr(2, 1, 2, 4, 6), 2, grad=(0,))
    compare("pixel_unshuffle", x, 1)
    for fn in (lambda lib: lib.pixel_shuffle(lib.ones(2, 2), 2), lambda lib: lib.pixel_shuffle(lib.ones(1, 5, 2, 2), 2),
               lambda lib: lib.pixel_shuffle(lib.ones(1, 4, 2, 2), 0),
               lambda lib: lib.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2),
               lambda lib: lib.pixel_unshuffle(lib.ones(1, 1, 4, 3), 2),
               lambda lib: lib.pixel_unshuffle(lib.ones(4, 3), 2),
               lambda lib: lib.hardshrink(lib.tensor([1, 2]))):
        raises_like(fn)
    g = np.concatenate([arr(12), [0.5, -0.5, np.nan]])
    compare("threshold", g, 0.1, 20.0, grad=(0,))
    compare("threshold", arr(5, dtype=np.int64), 1.5, 9.7)
    compare("hardshrink", g, grad=(0,))
    compare("hardshrink", g, kwargs={"lambd": 1.2}, method=True)
    compare("selu", g[:-1], grad=(0,))
    compare("celu", g[:-1], 0.7, grad=(0,))
    compare("prelu", arr(2, 3, 4), np.array([0.1, 0.2, -0.3]), grad=(0, 1))
    compare("prelu", arr(2, 3), np.array([0.25]), method=True)
    for name in ("relu_", "selu_", "celu_"):
        compare(name, g.copy())
    compare("threshold_", g.copy(), 0.0, -1.0)
    for name in ("threshold", "hardshrink", "pixel_shuffle", "pixel_unshuffle", "selu_", "celu_"):
        assert hasattr(P.nn.functional, name)
    compare("threshold", g, fn=lambda lib, t: lib.nn.functional.threshold(t, 0.2, -3.0), grad=(0,))
    compare("hardshrink", g, fn=lambda lib, t: lib.nn.functional.hardshrink(t, 0.3), grad=(0,))
    compare("PixelShuffle", x, fn=lambda lib, t: lib.nn.PixelShuffle(2)(t), grad=(0,))
    compare("PixelUnshuffle", arr(1, 2, 4, 6), fn=lambda lib, t: lib.nn.PixelUnshuffle(2)(t), grad=(0,))


@requires_torch
def test_dropout_family_matches_torch():
    x = arr(4, 5, 3, 2)
    for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"):
        for p in (0.0, 0.3, 1.0):
            for train in (True, False):
                T.manual_seed(7)
                P.manual_seed(7)
                compare(name, x, p, train, grad=(0,))
                T.manual_seed(3)
                P.manual_seed(3)
                compare(name + "_", x.copy(), p, train)
    for name in ("alpha_dropout", "feature_alpha_dropout"):
        T.manual_seed(1)
        P.manual_seed(1)
        compare(name, x, fn=lambda lib, t: getattr(lib.nn.functional, name)(t, 0.4, True), grad=(0,))
        raises_like(lambda lib: getattr(lib.nn.functional, name)(lib.ones(3), 1.5, True))
    raises_like(lambda lib: lib.feature_dropout(lib.ones(3), 0.5, True))


@requires_torch
def test_methods_and_identities_match_torch():
    for name in ("diff", "diagflat", "rot90", "isneginf", "isposinf", "isreal", "take_along_dim", "cross", "addbmm",
                 "addr", "dist", "cov", "corrcoef", "quantile", "nanquantile", "narrow_copy", "select_scatter",
                 "slice_scatter", "diagonal_scatter", "heaviside", "logaddexp2", "deg2rad", "rad2deg", "positive",
                 "nextafter", "ldexp", "frexp", "sinc", "lgamma", "digamma", "i0", "gcd", "lcm", "hardshrink",
                 "prelu", "conj", "resolve_conj", "resolve_neg", "adjoint", "histogram", "clamp_min_", "clamp_max_",
                 "lgamma_", "digamma_", "i0_", "gcd_", "lcm_", "sinc_", "heaviside_", "nextafter_", "ldexp_",
                 "deg2rad_", "rad2deg_", "addbmm_", "addr_", "is_conj", "is_neg", "conj_physical"):
        assert hasattr(T.Tensor, name) and hasattr(P.Tensor, name), name
    torch_names = [n for n in ("diff", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "row_stack",
                               "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices",
                               "diagflat", "rot90", "isin", "isneginf", "isposinf", "isreal", "take_along_dim", "gcd",
                               "lcm", "cross", "addbmm", "addr", "chain_matmul", "cdist", "dist", "cov", "corrcoef",
                               "trapezoid", "cumulative_trapezoid", "quantile", "nanquantile", "narrow_copy",
                               "select_scatter", "slice_scatter", "diagonal_scatter", "clamp_min", "clamp_max",
                               "heaviside", "logaddexp2", "deg2rad", "rad2deg", "positive", "nextafter", "ldexp",
                               "frexp", "sinc", "lgamma", "digamma", "i0", "hamming_window", "hann_window",
                               "bartlett_window", "blackman_window", "kaiser_window", "pairwise_distance",
                               "cosine_similarity", "pixel_shuffle", "pixel_unshuffle", "relu_", "selu", "celu",
                               "threshold", "hardshrink", "prelu", "dropout", "alpha_dropout", "feature_dropout",
                               "real", "conj", "resolve_conj", "resolve_neg", "adjoint", "histogram")]
    assert [n for n in torch_names if not hasattr(P, n)] == []
    x = arr(3, 4)
    compare("adjoint", x, grad=(0,))
    compare("mH", x, fn=lambda lib, t: t.mH)
    compare("H", x, fn=lambda lib, t: t.H)
    compare("real", x, fn=lambda lib, t: t.real, grad=(0,))
    compare("conj_physical", x)
    for fn in (lambda lib: lib.ones(3).H, lambda lib: lib.ones(2, 3, 4).H, lambda lib: lib.ones(3).mH,
               lambda lib: lib.histogram(lib.tensor([1.0, math.nan])),
               lambda lib: lib.histogram(lib.tensor([1.0, math.inf]))):
        raises_like(fn)
    assert P.narrow_copy(P.ones(3, 4).t(), 0, 1, 2).is_contiguous()
    out = P.empty(5, 2)
    P.narrow_copy(P.ones(3, 4), 1, 1, 2, out=out)
    assert out.shape == (3, 2)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        P.diff(P.ones(3, requires_grad=True), out=P.empty(2))
