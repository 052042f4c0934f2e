"""torch.fft, torch.stft and torch.istft (pyctorch/fft/, pyctorch/_stft.py, the primitives of ops_fft.def over
pocketfft): values, dtypes, shapes and errors against torch (skipped without torch), values against numpy.fft and
finite-difference gradients (always run). The primitives' gradients are also in the op registry (tests/samples.py).
Without pocketfft (a build that could not fetch its header) every transform raises one clear RuntimeError: the tests
of the transforms then skip with that reason."""
import numpy as np
import pytest

import pyctorch
from conftest import assert_same, assert_same_outcome, requires_torch, torch


def _pocketfft_missing():
    try:
        pyctorch.fft.fft(pyctorch.ones(2))
    except RuntimeError as e:
        return str(e)
    return None


MISSING = _pocketfft_missing()
needs_fft = pytest.mark.skipif(MISSING is not None, reason=f"pyctorch built without pocketfft: {MISSING}")

# (rtol, atol) with atol scaled by the largest magnitude: FFT rounding grows with log n times the signal's size
TOL = {"float32": (2e-5, 2e-5), "complex64": (2e-5, 2e-5), "float64": (1e-10, 1e-10), "complex128": (1e-10, 1e-10)}
SIZES = [1, 2, 5, 7, 8, 12, 17, 64, 97]
NORMS = [None, "backward", "ortho", "forward"]
C2C = ["fft", "ifft"]
R2C = ["rfft", "ihfft"]
C2R = ["irfft", "hfft"]
ND = {"fft2": "fftn", "ifft2": "ifftn", "rfft2": "rfftn", "irfft2": "irfftn", "hfft2": "hfftn", "ihfft2": "ihfftn"}
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _signal(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def both(fn, **kw):
    kw.setdefault("tol", TOL)
    kw.setdefault("scale_atol", True)
    return assert_same_outcome(lambda: _resolved(fn(pyctorch)), lambda: _resolved(fn(torch)), **kw)


def _resolved(r):
    # torch's inverse transforms of real signals return lazy conjugate views
    return r.resolve_conj() if hasattr(r, "resolve_conj") and not isinstance(r, tuple) else r


def _t(L, a, layout="c"):
    """a as a tensor of L: contiguous, transposed (last two dims) or sliced with a step."""
    if layout == "t":
        return L.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    if layout == "s":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        big[..., ::2] = a
        return L.from_numpy(big)[..., ::2]
    return L.from_numpy(a.copy())


# ---- without torch: numpy.fft and hand-computed values ----

@needs_fft
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", C2C + R2C + C2R)
def test_1d_against_numpy(name, norm, n):
    for dtype in ("float64", "complex128"):
        if name in REAL_ONLY and dtype == "complex128":
            continue
        if name in C2R and n == 1:  # an output of 2 * (1 - 1) = 0 points: an error, in numpy too
            continue
        a = _signal((3, n), dtype)
        got = getattr(pyctorch.fft, name)(pyctorch.from_numpy(a), norm=norm).numpy()
        want = getattr(np.fft, name)(a, norm=norm)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(want).max()))


@needs_fft
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("s_dim", [(None, None), ((4, 6), None), (None, (0, 2)), ((5, 3), (-1, 0)), ((3,), None)])
def test_nd_against_numpy(name, s_dim):
    s, dim = s_dim
    if name.endswith("2") and dim is None and s is not None and len(s) == 1:
        return  # the 2-d forms take two dims
    a = _signal((4, 5, 6), "float64")
    kw = {} if dim is None else {"dim": dim}
    got = getattr(pyctorch.fft, name)(pyctorch.from_numpy(a), s=s, norm="ortho", **kw).numpy()
    axes = dim if dim is not None else (None if s is None else tuple(range(3 - len(s), 3)))
    if name.endswith("2") and axes is None:
        axes = (-2, -1)
    want = getattr(np.fft, name)(a, s=s, axes=axes, norm="ortho")
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@needs_fft
def test_float32_against_numpy_and_round_trip():
    a = _signal((4, 33), "float32")
    r = pyctorch.fft.rfft(pyctorch.from_numpy(a))
    assert r.dtype == pyctorch.complex64
    np.testing.assert_allclose(r.numpy(), np.fft.rfft(a.astype(np.float64)), rtol=1e-5, atol=1e-4)
    back = pyctorch.fft.irfft(r, n=33)
    assert back.dtype == pyctorch.float32
    np.testing.assert_allclose(back.numpy(), a, rtol=1e-5, atol=1e-5)
    z = _signal((6, 10), "complex64")
    np.testing.assert_allclose(pyctorch.fft.ifftn(pyctorch.fft.fftn(pyctorch.from_numpy(z))).numpy(), z, atol=1e-5)


@needs_fft
def test_hand_computed_values():
    # the DFT of an impulse is flat; of a constant, an impulse of height n
    assert pyctorch.fft.fft(pyctorch.tensor([1.0, 0, 0, 0])).tolist() == [1, 1, 1, 1]
    assert pyctorch.fft.rfft(pyctorch.ones(6, dtype=pyctorch.float64)).tolist() == [6, 0, 0, 0]
    # integers and bool take the default float dtype
    assert pyctorch.fft.fft(pyctorch.arange(4)).dtype == pyctorch.complex64
    assert pyctorch.fft.fft(pyctorch.tensor([True, False])).tolist() == [1, 1]


def test_fftfreq_and_shift_against_numpy():
    for n in (1, 2, 5, 8, 11):
        for d in (1.0, 0.1, 3):
            np.testing.assert_allclose(pyctorch.fft.fftfreq(n, d, dtype=pyctorch.float64).numpy(), np.fft.fftfreq(n, d))
            np.testing.assert_allclose(pyctorch.fft.rfftfreq(n, d, dtype=pyctorch.float64).numpy(),
                                       np.fft.rfftfreq(n, d))
    a = np.arange(30.0).reshape(5, 6)
    for dim in (None, 0, 1, (0, 1), -1):
        np.testing.assert_array_equal(pyctorch.fft.fftshift(pyctorch.from_numpy(a), dim).numpy(),
                                      np.fft.fftshift(a, dim))
        np.testing.assert_array_equal(pyctorch.fft.ifftshift(pyctorch.from_numpy(a), dim).numpy(),
                                      np.fft.ifftshift(a, dim))


def _numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


REAL_CHAINS = [("rfft", "abs"), ("rfft", "real"), ("rfft", "imag"), ("rfft", "angle"), ("fft", "abs"),
               ("ifft", "imag"), ("ihfft", "real"), ("rfftn", "abs"), ("fftn", "real"), ("irfft", None),
               ("hfft", None), ("irfftn", None)]


@needs_fft
@pytest.mark.parametrize("name,post", REAL_CHAINS)
def test_real_input_gradients_against_finite_differences(name, post):
    a = _signal((3, 6), "float64", seed=3)
    w = np.random.default_rng(1).standard_normal(getattr(np.fft, name)(a).shape)

    def loss(L, x):
        y = getattr(L.fft, name)(x, norm="ortho")
        y = getattr(L, post)(y) if post else y
        return (y * L.from_numpy(w)).sum()

    x = pyctorch.from_numpy(a.copy()).requires_grad_()
    loss(pyctorch, x).backward()
    num = _numeric_grad(lambda v: float(loss(pyctorch, pyctorch.from_numpy(v))), a)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-6)


# ---- against torch ----

@requires_torch
@needs_fft
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", C2C + R2C + C2R)
def test_1d_against_torch(name, dtype):
    for n in (5, 8, 17):
        for norm in NORMS:
            a = _signal((2, 3, n), dtype)
            for layout in ("c", "t", "s"):
                for kw in ({}, {"n": n + 3}, {"n": max(n - 2, 2)}, {"dim": 1}, {"dim": -3, "n": 4}):
                    both(lambda L: getattr(L.fft, name)(_t(L, a, layout), norm=norm, **kw))


@requires_torch
@needs_fft
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(ND) + sorted(set(ND.values())))
def test_nd_against_torch(name, dtype):
    a = _signal((3, 4, 7), dtype)
    for norm in NORMS:
        for layout in ("c", "t"):
            for kw in ({}, {"s": (6, 5)}, {"dim": (0, -1)}, {"s": (3, 8), "dim": (2, 0)}, {"s": (-1, 4)}):
                both(lambda L: getattr(L.fft, name)(_t(L, a, layout), norm=norm, **kw))


@requires_torch
@needs_fft
def test_batched_broadcast_and_expanded_inputs():
    a = _signal((4,), "float64")
    both(lambda L: L.fft.rfft(L.from_numpy(a).expand(3, 4)))
    both(lambda L: L.fft.fft(L.from_numpy(a).expand(2, 3, 4), dim=1))
    both(lambda L: L.fft.ifft(L.from_numpy(_signal((5, 2, 9), "complex128")).permute(2, 0, 1), dim=0))
    both(lambda L: L.fft.fft(L.tensor(3.0), dim=0))  # a 0-d tensor: torch's IndexError
    both(lambda L: L.fft.fftn(L.tensor(3.0)))


@requires_torch
@needs_fft
def test_errors_against_torch():
    x = _signal((4, 5), "float32")

    def err(f):
        both(f, message=True)
    err(lambda L: L.fft.fft(L.from_numpy(x), norm="xyz"))
    err(lambda L: L.fft.fft(L.from_numpy(x), n=0))
    err(lambda L: L.fft.irfft(L.from_numpy(x), n=-1))
    err(lambda L: L.fft.fft(L.from_numpy(x), dim=2))
    err(lambda L: L.fft.fftn(L.from_numpy(x), dim=(0, 0)))
    err(lambda L: L.fft.fftn(L.from_numpy(x), s=(3,), dim=(0, 1)))
    err(lambda L: L.fft.fftn(L.from_numpy(x), s=(3, 3, 3)))
    err(lambda L: L.fft.fftn(L.from_numpy(x), s=(0, 3)))
    err(lambda L: L.fft.fft(L.from_numpy(x).half()))
    err(lambda L: L.fft.rfft(L.from_numpy(x).bfloat16()))
    err(lambda L: L.fft.rfft(L.from_numpy(x).to(L.complex64)))
    for name in ("rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"):
        err(lambda L: getattr(L.fft, name)(L.from_numpy(x).to(L.complex64)))
    err(lambda L: L.fft.rfftn(L.from_numpy(x), dim=[]))
    err(lambda L: L.fft.irfft(L.ones(1)))  # 2 * (1 - 1) output points
    err(lambda L: L.fft.fft(L.from_numpy(x), out=L.empty(2)))
    err(lambda L: L.fft.fftfreq(5, dtype=L.int64))
    err(lambda L: L.fft.fftshift(L.from_numpy(x), dim=5))


@requires_torch
@needs_fft
def test_out_and_freq_against_torch():
    x = _signal((4, 6), "float64")
    both(lambda L: (lambda o: (L.fft.fft(L.from_numpy(x), out=o), o)[1])(L.empty(0, dtype=L.complex128)))
    both(lambda L: (lambda o: (L.fft.irfft(L.from_numpy(x), out=o), o)[1])(L.empty(4, 10, dtype=L.float64)))
    for n in (1, 4, 7):
        for d in (1.0, 0.25):
            both(lambda L: L.fft.fftfreq(n, d), exact=True)
            both(lambda L: L.fft.rfftfreq(n, d, dtype=L.float64), exact=True)
    both(lambda L: L.fft.fftfreq(3, requires_grad=True))
    for dim in (None, 0, (1, 0), -1):
        both(lambda L: L.fft.fftshift(L.from_numpy(x), dim), exact=True)
        both(lambda L: L.fft.ifftshift(L.from_numpy(x), dim), exact=True)


def _grad(L, name, post, a, w, kw):
    x = L.from_numpy(a.copy()).requires_grad_()
    y = getattr(L.fft, name)(x, **kw)
    y = getattr(L, post)(y) if post else y
    (y * L.from_numpy(w)).sum().backward()
    return x.grad


@requires_torch
@needs_fft
@pytest.mark.parametrize("name,post", REAL_CHAINS + [("fft2", "imag"), ("ihfft2", "abs"), ("hfftn", None)])
@pytest.mark.parametrize("norm", NORMS)
def test_real_input_gradients_against_torch(name, post, norm):
    for kw in ({}, {"dim": 0}):
        if name.endswith(("n", "2")):
            kw = {"dim": (0, 1)} if kw else {}
        a = _signal((4, 6), "float64", seed=2)
        shape = getattr(torch.fft, name)(torch.from_numpy(a), **kw).shape
        w = np.random.default_rng(4).standard_normal(tuple(shape))
        both(lambda L: _grad(L, name, post, a, w, dict(kw, norm=norm)))


@requires_torch
@needs_fft
@pytest.mark.parametrize("name", ["irfft", "hfft", "fft", "ifft", "irfftn", "fftn"])
def test_complex_leaf_gradients_against_torch(name):
    # complex leaves: the gradient is the conjugate Wirtinger derivative, as torch's
    z = _signal((3, 5), "complex128", seed=5)

    def f(L):
        x = L.from_numpy(z.copy()).requires_grad_()
        y = getattr(L.fft, name)(x, norm="ortho")
        y = y.real if y.dtype.is_complex else y
        (y * L.arange(y.numel(), dtype=L.float64).reshape(y.shape)).sum().backward()
        return x.grad
    both(f)


@requires_torch
@needs_fft
def test_gradient_through_complex_arithmetic():
    a = _signal((8,), "float64")
    both(lambda L: (lambda x: ((L.fft.rfft(x) * (1 + 2j)).abs().sum().backward(), x.grad)[1])(
        L.from_numpy(a.copy()).requires_grad_()))


@requires_torch
@needs_fft
def test_gradient_through_a_complex_sum():
    a = _signal((8,), "float64")
    both(lambda L: (lambda x: (L.view_as_real(L.fft.fft(x).sum()).sum().backward(), x.grad)[1])(
        L.from_numpy(a.copy()).requires_grad_()))


# ---- stft / istft ----

STFT_CASES = [dict(n_fft=64), dict(n_fft=64, hop_length=10, win_length=50), dict(n_fft=31, center=False),
              dict(n_fft=64, normalized=True, onesided=False), dict(n_fft=32, pad_mode="constant"),
              dict(n_fft=40, win_length=33, hop_length=7)]


@requires_torch
@needs_fft
@pytest.mark.parametrize("kw", STFT_CASES)
@pytest.mark.parametrize("windowed", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_stft_istft_against_torch(kw, windowed, batched):
    sig = _signal((2, 300) if batched else (300,), "float64")
    wl = kw.get("win_length", kw["n_fft"])

    def win(L):
        return L.hann_window(wl, dtype=L.float64) if windowed else None
    both(lambda L: L.stft(L.from_numpy(sig), window=win(L), return_complex=True, **kw))
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    both(lambda L: L.istft(L.stft(L.from_numpy(sig), window=win(L), return_complex=True, **kw), window=win(L),
                           **ikw))
    both(lambda L: L.from_numpy(sig).stft(window=win(L), return_complex=True, **kw).istft(window=win(L), **ikw))


@requires_torch
@needs_fft
def test_stft_variants_and_errors_against_torch():
    sig = _signal((2, 200), "float32")
    z = _signal((200,), "complex128")
    both(lambda L: L.stft(L.from_numpy(sig), 16, return_complex=False))
    both(lambda L: L.stft(L.from_numpy(z), 16))
    both(lambda L: L.istft(L.stft(L.from_numpy(z), 16), 16, return_complex=True))
    for length in (150, 250):
        both(lambda L: L.istft(L.stft(L.from_numpy(sig), 16, return_complex=True), 16, length=length))
    both(lambda L: L.stft(L.from_numpy(sig), 16), message=True)  # return_complex required for real inputs
    both(lambda L: L.stft(L.from_numpy(sig), 400, return_complex=True))
    both(lambda L: L.stft(L.from_numpy(sig), 16, hop_length=0, return_complex=True))
    both(lambda L: L.stft(L.from_numpy(sig), 16, window=L.ones(5), return_complex=True))
    both(lambda L: L.istft(L.from_numpy(sig), 16), message=True)
    both(lambda L: L.istft(L.stft(L.from_numpy(sig), 16, return_complex=True), 18))


@requires_torch
@needs_fft
def test_stft_gradient_against_torch():
    sig = _signal((120,), "float64")

    def f(L):
        x = L.from_numpy(sig.copy()).requires_grad_()
        L.stft(x, 32, window=L.hann_window(32, dtype=L.float64), return_complex=True).abs().sum().backward()
        return x.grad
    both(f)


def test_without_pocketfft_the_error_is_clear():
    if MISSING is None:
        assert pyctorch.fft.fft(pyctorch.ones(3)).shape == (3,)
    else:
        assert "pocketfft" in MISSING


def test_pyctorch_does_not_import_torch_for_fft():
    import sys
    assert "torch" not in pyctorch.fft.__dict__ and "torch" not in sys.modules["pyctorch._stft"].__dict__


@needs_fft
def test_forward_ad_through_rfft():
    import pyctorch.autograd.forward_ad as fwAD
    x = pyctorch.from_numpy(_signal((8,), "float64"))
    t = pyctorch.from_numpy(_signal((8,), "float64", seed=1))
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(pyctorch.fft.rfft(fwAD.make_dual(x, t))).tangent
        np.testing.assert_allclose(tangent.numpy(), np.fft.rfft(t.numpy()))
