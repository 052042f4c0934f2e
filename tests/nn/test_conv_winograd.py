"""The float32 forward of 3x3 stride-1 convolutions by Winograd's F(2x2, 3x3) (Note [Winograd convolution],
csrc/aten/cpu/conv_winograd.c), on AVX-512 CPUs, and their input gradient (the forward of the flipped,
transposed weight over the padded grad_output, as is a stride-1 conv_transpose2d); elsewhere the same cases
check the other paths.

The transforms add a few ulps of rounding, so each output is held to the float64 numpy convolution within
2e-6 of the output's largest magnitude (a wrong tile, padding row or channel tail is off by about that
magnitude), and to torch's float32 convolution the same way when torch is present. The cases cover tile
tails (odd sizes), channel tails (not multiples of 16), every padding, chunks that end inside a sample and
span several, both thread modes (threads sharing a chunk, threads taking whole chunks) and a
non-contiguous input."""
import numpy as np
import pytest

import pyctorch as P
from test_conv import np_conv2d
from conftest import requires_torch, torch as T

F = P.nn.functional

# N, C, O, H, W, padding
CASES = [
    (8, 64, 64, 8, 8, 1),        # ResNet-18 on 32x32: layer1
    (8, 128, 128, 4, 4, 1),      # layer2
    (8, 96, 80, 2, 2, 1),        # a 2x2 output: one tile per sample, mostly padding
    (3, 17, 33, 5, 7, 1),        # odd sizes: half tiles; channel tails on both sides
    (2, 48, 31, 8, 5, 0),        # no padding
    (1, 20, 40, 6, 6, 2),        # padding 2: the output is larger than the input
    (2, 16, 24, 30, 30, (1, 0)),  # chunks ending inside a sample; asymmetric padding
    (1, 64, 64, 40, 40, 1),      # one sample, several chunks
    (6, 32, 48, 12, 12, 1),      # chunks of several samples
]


def _pair(v):
    return (v, v) if isinstance(v, int) else v


def _arrays(n, c, o, h, w, seed=0):
    rng = np.random.default_rng(seed + n + c + o + h + w)
    return (rng.uniform(-1, 1, (n, c, h, w)), rng.uniform(-1, 1, (o, c, 3, 3)) * 0.1, rng.uniform(-1, 1, o))


def _as_pct(a):
    return P.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


def _close(got, want):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape
    scale = np.abs(want).max() if want.size else 1.0
    err = np.abs(got - want).max() if want.size else 0.0
    assert err <= 2e-6 * scale, f"max error {err:.3g} against a largest output of {scale:.3g}"


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    old = P.get_num_threads()
    P.set_num_threads(request.param)
    yield request.param
    P.set_num_threads(old)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}x{c[1]}x{c[3]}x{c[4]}-o{c[2]}-p{c[5]}" for c in CASES])
def test_winograd_forward_matches_float64(case, bias, threads):
    n, c, o, h, w, p = case
    x, wt, b = _arrays(n, c, o, h, w)
    b = b if bias else None
    y = F.conv2d(_as_pct(x), _as_pct(wt), _as_pct(b) if bias else None, 1, p)
    want = np_conv2d(x.astype(np.float32).astype(np.float64), wt.astype(np.float32).astype(np.float64),
                     None if b is None else b.astype(np.float32).astype(np.float64), (1, 1), _pair(p), (1, 1), 1)
    _close(y.numpy(), want)


def _input_gradient(go, wt, p):
    """dL/dx of a stride-1 3x3 convolution with padding p: go convolved with the flipped, transposed weight"""
    flipped = np.ascontiguousarray(np.transpose(wt[:, :, ::-1, ::-1], (1, 0, 2, 3)))
    ph, pw = _pair(p)
    return np_conv2d(go, flipped, None, (1, 1), (2 - ph, 2 - pw), (1, 1), 1)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}x{c[1]}x{c[3]}x{c[4]}-o{c[2]}-p{c[5]}" for c in CASES])
def test_winograd_input_gradient_matches_float64(case, threads):
    n, c, o, h, w, p = case
    x, wt, _ = _arrays(n, c, o, h, w, seed=11)
    xp = _as_pct(x).requires_grad_()
    y = F.conv2d(xp, _as_pct(wt), None, 1, p)
    go = np.random.default_rng(5).uniform(-1, 1, tuple(y.shape)).astype(np.float32)
    y.backward(_as_pct(go))
    _close(xp.grad.numpy(), _input_gradient(go.astype(np.float64), wt.astype(np.float32).astype(np.float64), p))


def test_winograd_stride1_transposed_convolution(threads):
    x, wt, b = _arrays(3, 40, 24, 7, 6, seed=13)           # conv_transpose2d's weight is [in, out, 3, 3]
    y = F.conv_transpose2d(_as_pct(x), _as_pct(wt.reshape(40, 24, 3, 3)), _as_pct(b[:24]), 1, 1)
    w64 = wt.astype(np.float32).astype(np.float64).reshape(40, 24, 3, 3)
    want = np_conv2d(x.astype(np.float32).astype(np.float64),
                     np.ascontiguousarray(np.transpose(w64[:, :, ::-1, ::-1], (1, 0, 2, 3))),
                     b[:24].astype(np.float32).astype(np.float64), (1, 1), (1, 1), (1, 1), 1)
    _close(y.numpy(), want)


def test_winograd_non_contiguous_input_and_module(threads):
    x, wt, b = _arrays(4, 32, 32, 9, 7, seed=3)
    xs = np.ascontiguousarray(np.swapaxes(x, 2, 3))            # [4, 32, 7, 9] in memory
    xp = _as_pct(xs).transpose(2, 3)                            # a [4, 32, 9, 7] view, not contiguous
    assert not xp.is_contiguous()
    conv = P.nn.Conv2d(32, 32, 3, padding=1)
    with P.no_grad():
        conv.weight.copy_(_as_pct(wt))
        conv.bias.copy_(_as_pct(b))
    want = np_conv2d(np.asarray(xp.double().numpy()), np.asarray(conv.weight.double().detach().numpy()),
                     np.asarray(conv.bias.double().detach().numpy()), (1, 1), (1, 1), (1, 1), 1)
    _close(conv(xp).detach().numpy(), want)


def test_winograd_empty_batch():
    y = F.conv2d(P.zeros(0, 16, 4, 4), P.zeros(16, 16, 3, 3), None, 1, 1)
    assert tuple(y.shape) == (0, 16, 4, 4)


@requires_torch
@pytest.mark.parametrize("case", CASES[:6], ids=[f"{c[0]}x{c[1]}x{c[3]}x{c[4]}" for c in CASES[:6]])
def test_winograd_matches_torch(case):
    n, c, o, h, w, p = case
    x, wt, b = _arrays(n, c, o, h, w, seed=7)
    xp = _as_pct(x).requires_grad_()
    ours = F.conv2d(xp, _as_pct(wt), _as_pct(b), 1, p)
    go = np.random.default_rng(3).uniform(-1, 1, tuple(ours.shape)).astype(np.float32)
    ours.backward(_as_pct(go))
    xt, wtt, bt = [T.from_numpy(np.ascontiguousarray(a, dtype=np.float32)) for a in (x, wt, b)]
    xt.requires_grad_()
    theirs = T.nn.functional.conv2d(xt, wtt, bt, 1, p)
    theirs.backward(T.from_numpy(go))
    _close(ours.detach().numpy(), theirs.detach().numpy().astype(np.float64))
    _close(xp.grad.numpy(), xt.grad.numpy().astype(np.float64))
