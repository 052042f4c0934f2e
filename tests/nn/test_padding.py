"""Padding (F.pad: constant / reflect / replicate / circular; torch.constant_pad_nd) against torch:
values and input gradients for 1-, 2- and 3-d padding, negative (cropping) amounts, unbatched and
non-contiguous inputs, dtypes, torch's errors; the modules and their reprs; float64 gradcheck
and hand-computed values that run without torch."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None
MODES = ["constant", "reflect", "replicate", "circular"]


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(arr, dtype="float64", grad=False):
    p = P.tensor(arr.tolist(), dtype=getattr(P, dtype)).requires_grad_(grad)
    t = T.tensor(arr, dtype=getattr(T, dtype)).requires_grad_(grad) if T is not None else None
    return p, t


def check(arr, pad, mode, value=None, dtype="float64", seed=0):
    xp, xt = both(arr, dtype, grad=True)
    kw = {} if value is None else {"value": value}
    yp, yt = PF.pad(xp, pad, mode, **kw), TF.pad(xt, pad, mode, **kw)
    assert_same(yp, yt)
    if yt.numel() == 0:
        return  # torch leaves the gradient of an empty reflect / replicate output uninitialised
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape))
    yp.backward(P.tensor(g.tolist(), dtype=yp.dtype))
    yt.backward(T.tensor(g, dtype=yt.dtype))
    assert_same(xp.grad, xt.grad)


# ---- hand-computed values ---------------------------------------------------------------------

def test_modes_by_hand():
    x = P.arange(4.0).view(1, 4)
    assert PF.pad(x, (2, 1)).tolist() == [[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0]]
    assert PF.pad(x, (2, 1), value=7).tolist() == [[7.0, 7.0, 0.0, 1.0, 2.0, 3.0, 7.0]]
    assert PF.pad(x, (2, 1), "reflect").tolist() == [[2.0, 1.0, 0.0, 1.0, 2.0, 3.0, 2.0]]
    assert PF.pad(x, (2, 1), "replicate").tolist() == [[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0]]
    assert PF.pad(x, (2, 1), "circular").tolist() == [[2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0]]
    assert PF.pad(x, (-1, 2), "circular").tolist() == [[1.0, 2.0, 3.0, 1.0, 2.0]]  # wraps inside the crop
    assert PF.pad(x, (-1, -1)).tolist() == [[1.0, 2.0]]
    assert P.constant_pad_nd(P.arange(3), [1, 1], 2.7).tolist() == [2, 0, 1, 2, 2]  # the value in the dtype


def test_reflect_gradient_by_hand():
    x = P.arange(4.0, requires_grad=True).view(1, 4)
    x.retain_grad()
    PF.pad(x, (2, 1), "reflect").sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 3.0, 1.0]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", [(2, 1), (1, 2, 2, 0), (1, -1, 0, 2)])
def test_gradcheck_float64(mode, pad):
    x = P.tensor(rand((2, 3, 4)).tolist(), dtype=P.float64, requires_grad=True)
    assert P.autograd.gradcheck(lambda t: PF.pad(t, pad, mode), (x,))
    assert P.autograd.gradgradcheck(lambda t: PF.pad(t, pad, mode), (x,))


def test_constant_pad_nd_gradcheck():
    x = P.tensor(rand((2, 3, 4)).tolist(), dtype=P.float64, requires_grad=True)
    assert P.autograd.gradcheck(lambda t: P.constant_pad_nd(t, [1, -2, 2, 1, 1, 0], 0.5), (x,))


def test_results_are_new_tensors():
    x = P.ones(2, 3)
    for mode in MODES:
        y = PF.pad(x, (0, 0), mode)
        assert y.tolist() == x.tolist() and y.data_ptr() != x.data_ptr()


# ---- against torch ----------------------------------------------------------------------------

def _circular_reads_its_own_padding(shape, pad):
    """Circular padding larger than what is left after cropping: torch copies from output memory it
    has not written yet (garbage values; an overlap error for single rows); pyctorch refuses."""
    if any(p > shape[-1 - k // 2] for k, p in enumerate(pad)):
        return False  # torch's own error comes first
    for k in range(len(pad) // 2):
        n, left, right = shape[-1 - k], pad[2 * k], pad[2 * k + 1]
        kept = n + min(left, 0) + min(right, 0)
        if n + left + right > 0 and (left > kept or right > kept):
            return True
    return False


@requires_torch
@pytest.mark.parametrize("mode", MODES)
def test_grid_against_torch(mode):
    rng = np.random.default_rng(3)
    n = 0
    for nsp in (1, 2, 3):
        for lead in ((), (2,), (2, 3)):
            if mode != "constant" and len(lead) == 0:
                continue
            for _ in range(8):
                shape = lead + tuple(int(s) for s in rng.integers(1, 6, size=nsp))
                pad = [int(v) for v in rng.integers(-2, 4, size=2 * nsp)]
                arr = rand(shape, seed=n)
                n += 1
                if mode == "circular" and _circular_reads_its_own_padding(shape, pad):
                    with pytest.raises(RuntimeError, match="refer to a single memory location"):
                        PF.pad(P.tensor(arr.tolist()), pad, mode)
                    continue
                try:
                    TF.pad(T.tensor(arr), pad, mode)
                except RuntimeError:
                    with pytest.raises(RuntimeError):
                        PF.pad(P.tensor(arr.tolist()), pad, mode)
                    continue
                check(arr, pad, mode, seed=n)


@requires_torch
def test_constant_value_and_dtypes():
    arr = rand((2, 3, 4))
    check(arr, (1, 2, 0, 1), "constant", value=-2.5)
    check(arr, (1, 2), "reflect", dtype="float32")
    for dtype in ("int64", "uint8", "bool", "float16", "bfloat16"):
        xp, xt = both((arr > 0).astype(np.float64) * 3, dtype)
        assert_same(PF.pad(xp, (1, 2, 2, 1), value=1), TF.pad(xt, (1, 2, 2, 1), value=1))
        assert_same(P.constant_pad_nd(xp, [2, 1], 2), T.constant_pad_nd(xt, [2, 1], 2))
        assert_same(PF.pad(xp, (1, 2), "circular"), TF.pad(xt, (1, 2), "circular"))
        if dtype == "bool":
            for mode in ("reflect", "replicate"):
                with pytest.raises(NotImplementedError):
                    PF.pad(xp, (1, 1), mode)
        else:
            assert_same(PF.pad(xp, (1, 2), "reflect"), TF.pad(xt, (1, 2), "reflect"))
            assert_same(PF.pad(xp, (1, 2, 3, 0), "replicate"), TF.pad(xt, (1, 2, 3, 0), "replicate"))


@requires_torch
def test_non_contiguous_inputs():
    base = rand((2, 5, 6), seed=8)
    for view in (lambda x: x.transpose(-1, -2), lambda x: x[:, ::2, 1:], lambda x: x[:1]):
        for mode in MODES:
            xp, xt = both(base, grad=True)
            vp, vt = view(xp), view(xt)
            yp, yt = PF.pad(vp, (1, 2, 2, 1), mode), TF.pad(vt, (1, 2, 2, 1), mode)
            assert_same(yp, yt)
            (yp * yp).sum().backward()
            (yt * yt).sum().backward()
            assert_same(xp.grad, xt.grad)


@requires_torch
@pytest.mark.parametrize("call", [
    lambda F, x: F.pad(x, (1,)), lambda F, x: F.pad(x, (1, 1) * 4), lambda F, x: F.pad(x, (3, 1), "reflect"),
    lambda F, x: F.pad(x, (1, 1, 3, 0), "reflect"), lambda F, x: F.pad(x, (1, 1), "reflect", 2.0),
    lambda F, x: F.pad(x, (1, 1), "bogus"), lambda F, x: F.pad(x[0, 0], (1, 1), "reflect"),
    lambda F, x: F.pad(x, (1, 1, 1, 1, 1, 1, 1, 1), "replicate"), lambda F, x: F.pad(x, (4, 0), "circular"),
    lambda F, x: F.pad(x, (-2, -2), "circular"), lambda F, x: F.pad(x, (-2, -1), "replicate"),
    lambda F, x: F.pad(x, (-4, 1), "constant"), lambda F, x: F.pad(x[:, :0], (1, 1), "reflect"),
    lambda F, x: F.pad(x, (1.5, 1)),
])
def test_errors_match_torch(call):
    xp, xt = both(rand((2, 3, 3)), "float32")
    with pytest.raises(Exception) as te:
        call(TF, xt)
    with pytest.raises(Exception) as pe:
        call(PF, xp)
    assert isinstance(pe.value, type(te.value)) or isinstance(te.value, type(pe.value)), (te.value, pe.value)


def test_errors_without_torch():
    x = P.ones(2, 3, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        PF.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        PF.pad(x, (3, 1), "reflect")
    with pytest.raises(NotImplementedError, match="Padding size 4 is not supported for 2D input tensor"):
        PF.pad(x[0], (1, 1, 1, 1), "reflect")
    with pytest.raises(RuntimeError, match="doesn't take in value argument"):
        PF.pad(x, (1, 1), "replicate", 1.0)
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        PF.pad(x, (4, 1), "circular")
    with pytest.raises(RuntimeError, match="_pad_backward"):
        P._C._pad_backward(P.ones(2, 3, 4), [2, 3, 3], [1, 1], "reflect")


# ---- modules ----------------------------------------------------------------------------------

MODULES = ["ZeroPad1d(2)", "ZeroPad2d((1, 2, 0, 1))", "ConstantPad1d((1, 2), 3.5)", "ConstantPad2d(1, -1.0)",
           "ReflectionPad1d(2)", "ReflectionPad2d((1, 0, 2, 1))", "ReplicationPad1d((0, 3))", "ReplicationPad2d(2)",
           "CircularPad1d(1)", "CircularPad2d((1, 2, 2, 0))"]


@requires_torch
@pytest.mark.parametrize("spec", MODULES)
def test_modules_match_torch(spec):
    mp, mt = eval("P.nn." + spec), eval("T.nn." + spec)
    assert repr(mp) == repr(mt)
    arr = rand((2, 3, 5) if "1d" in spec else (2, 3, 4, 5), seed=2)
    xp, xt = both(arr)
    assert_same(mp(xp), mt(xt))
    assert_same(mp(xp[0]), mt(xt[0]))  # unbatched
    if "Circular" in spec:
        with pytest.raises(ValueError):
            mp(xp[0, 0])
