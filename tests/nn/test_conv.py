"""Convolutions: torch.convolution and its fused backward, conv1d/2d/3d, conv_transpose1d/2d/3d, the
Conv*/ConvTranspose* modules. Compared with torch on identical values (forward, gradients of input,
weight and bias); numpy references, gradcheck and gradgradcheck run without torch."""
import itertools
import math

import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same, requires_torch, torch as T

F = P.nn.functional


def to_pct(a, dtype="float64", requires_grad=False):
    return P.tensor(np.asarray(a).tolist(), dtype=getattr(P, dtype)).requires_grad_(requires_grad)


def to_torch(a, dtype="float64", requires_grad=False):
    return T.tensor(np.asarray(a).tolist(), dtype=getattr(T, dtype)).requires_grad_(requires_grad)


def npy(t):
    return np.array(t.detach().double().tolist(), dtype=np.float64)


TOL = {"float64": (1e-10, 1e-10), "float32": (2e-4, 2e-4)}


def compare(fn_p, fn_t, arrays, dtype="float64", grads=True, layouts=None, tol=None):
    """Runs fn(lib, *tensors) in both libraries on the same values (None entries pass through) and
    compares the output and, with grads, the gradients of every tensor for one random grad_output.
    layouts[i] = "t" (last two dims transposed) or "s" (sliced): non-contiguous leaves."""
    rtol, atol = tol or TOL[dtype]
    layouts = layouts or [None] * len(arrays)

    def make(lib, conv):
        out = []
        for a, lay in zip(arrays, layouts):
            if a is None:
                out.append(None)
                continue
            if lay == "t":
                leaf = conv(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype, grads)
                out.append((leaf, leaf.transpose(-1, -2)))
            elif lay == "s":
                big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],))
                big[..., ::2] = a
                leaf = conv(big, dtype, grads)
                out.append((leaf, leaf[..., ::2]))
            else:
                leaf = conv(a, dtype, grads)
                out.append((leaf, leaf))
        return out

    ps, ts = make(P, to_pct), make(T, to_torch)
    yp = fn_p(*[x[1] if x else None for x in ps])
    yt = fn_t(*[x[1] if x else None for x in ts])
    assert_same(yp, yt, rtol, atol, what="forward")
    if not grads:
        return yp, yt
    go = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    yp.backward(to_pct(go, dtype))
    yt.backward(to_torch(go, dtype))
    for i, (p, t) in enumerate(zip(ps, ts)):
        if p is not None:
            assert_same(p[0].grad, t[0].grad, rtol, atol, what=f"grad of argument {i}")
    return yp, yt


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).uniform(-1, 1, shape)


# ---- numpy reference (always runs) --------------------------------------------------------------

def np_conv2d(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i, j in itertools.product(range(oh), range(ow)):
            patch = xp[:, g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + dilation[0] * (kh - 1) + 1:dilation[0],
                       j * stride[1]:j * stride[1] + dilation[1] * (kw - 1) + 1:dilation[1]]
            out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3)) + (b[oc] if b is not None else 0)
    return out


@pytest.mark.parametrize("stride,padding,dilation,groups", [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 2), 2),
                                                            ((1, 1), (1, 1), (1, 1), 4)])
def test_conv2d_matches_numpy(stride, padding, dilation, groups):
    x, w, b = rand(2, 4, 7, 6), rand(8, 4 // groups, 3, 2, seed=1), rand(8, seed=2)
    got = F.conv2d(to_pct(x), to_pct(w), to_pct(b), stride, padding, dilation, groups)
    np.testing.assert_allclose(npy(got), np_conv2d(x, w, b, stride, padding, dilation, groups), rtol=1e-12, atol=1e-12)


def test_conv_transpose2d_is_the_adjoint_of_conv2d():
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for the same weight, stride, padding, dilation, groups
    x, w, y = rand(2, 4, 9, 8), rand(6, 2, 3, 2, seed=1), rand(2, 6, 5, 4, seed=2)
    args = dict(stride=2, padding=1, dilation=(1, 2), groups=2)
    cx = F.conv2d(to_pct(x), to_pct(w), **args)
    ty = F.conv_transpose2d(to_pct(y), to_pct(w), output_padding=(0, 1), **args)
    assert cx.shape == (2, 6, 5, 4) and ty.shape == (2, 4, 9, 8)
    assert math.isclose(float((cx * to_pct(y)).sum()), float((to_pct(x) * ty).sum()), rel_tol=1e-12)


def test_gradcheck_and_gradgradcheck():
    g = P.Generator().manual_seed(0)

    def r(*s):
        return P.randn(*s, dtype=P.float64, generator=g).requires_grad_()
    x, w, b = r(2, 4, 5, 6), r(6, 2, 3, 3), r(6)
    cases = [
        (lambda x, w, b: F.conv2d(x, w, b, 1, 1, 1, 2), (x, w, b)),
        (lambda x, w, b: F.conv2d(x, w, b, (2, 1), 0, (2, 1), 2), (x, w, b)),
        (lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 1, 1), (x, r(4, 3, 3, 3), r(3))),
        (lambda x, w: F.conv1d(x, w, None, 1, 1, 1, 4), (r(2, 4, 7), r(8, 1, 3))),          # depthwise
        (lambda x, w: F.conv_transpose1d(x, w, None, 2, 0, 1, 4, 1), (r(2, 4, 5), r(4, 2, 3))),
        (lambda x, w, b: F.conv2d(x, w, b), (x, r(3, 4, 1, 1), r(3))),                       # 1x1 direct path
        (lambda x, w: F.conv3d(x, w, None, 1, (1, 0, 1)), (r(1, 2, 3, 4, 3), r(2, 2, 2, 2, 2))),
    ]
    for fn, args in cases:
        assert P.autograd.gradcheck(fn, args)
        assert P.autograd.gradgradcheck(fn, args)


def test_grad_fn_names_and_double_backward_graph():
    x = P.randn(1, 2, 5, 5, dtype=P.float64, requires_grad=True)
    w = P.randn(3, 2, 3, 3, dtype=P.float64, requires_grad=True)
    y = F.conv2d(x, w)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    gx, = P.autograd.grad(y.sum(), x, create_graph=True)
    assert gx.grad_fn.name() == "ConvolutionBackwardBackward0"
    gw, = P.autograd.grad(gx.pow(2).sum(), w)   # d/dw of |d(sum conv)/dx|^2
    assert gw.shape == w.shape


def test_output_mask_of_the_fused_backward():
    x, w, go = P.randn(2, 3, 6, 6), P.randn(4, 3, 3, 3), P.randn(2, 4, 4, 4)
    args = (None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    full = P.convolution_backward(go, x, w, *args, [True, True, True])
    for mask in itertools.product([False, True], repeat=3):
        part = P.convolution_backward(go, x, w, *args, list(mask))
        for m, a, b in zip(mask, part, full):
            assert (a is None) == (not m)
            if m:
                np.testing.assert_allclose(npy(a), npy(b), rtol=1e-6, atol=1e-6)
    assert full[2].shape == (4,)
    np.testing.assert_allclose(npy(full[2]), npy(go.sum((0, 2, 3))), rtol=1e-5, atol=1e-5)


def test_threads_give_the_same_result():
    # batch-parallel samples + a remainder sample run with threads inside (Note [Convolution threading])
    x, w = P.randn(3, 8, 20, 20), P.randn(16, 8, 3, 3)
    go = P.randn(3, 16, 20, 20)
    old = P.get_num_threads()
    try:
        res = []
        for n in (1, 2):
            P.set_num_threads(n)
            res.append(P.convolution_backward(go, x, w, [16], [1], [1], [1], False, [0], 1, [True, True, True]))
    finally:
        P.set_num_threads(old)
    for a, b in zip(*res):
        np.testing.assert_allclose(npy(a), npy(b), rtol=1e-5, atol=1e-4)


def test_error_types_without_torch():
    x, w = P.randn(2, 4, 5, 5), P.randn(6, 4, 3, 3)
    bad = [lambda: F.conv2d(P.randn(5, 5), w), lambda: F.conv2d(x, P.randn(6, 3, 3, 3)),
           lambda: F.conv2d(x, w, groups=0), lambda: F.conv2d(x, w, stride=0), lambda: F.conv2d(x, w, padding=-1),
           lambda: F.conv2d(x, w, dilation=0), lambda: F.conv2d(x, P.randn(6, 4, 7, 7)),
           lambda: F.conv2d(x, w, P.randn(5)), lambda: F.conv2d(x, w.double()),
           lambda: F.conv_transpose2d(x, P.randn(4, 3, 3, 3), stride=2, output_padding=2),
           lambda: F.conv2d(x, w, padding="same", stride=2), lambda: F.conv2d(x, w, padding="full")]
    for f in bad:
        with pytest.raises(RuntimeError):
            f()
    with pytest.raises(NotImplementedError):
        P.convolution(x.bool(), w.bool(), None, [1], [0], [1], False, [0], 1)


# ---- against torch ------------------------------------------------------------------------------

CONV2D = [  # N, C, O, H, W, kernel, stride, padding, dilation, groups, bias
    (2, 3, 4, 7, 6, 3, 1, 1, 1, 1, True),
    (1, 4, 6, 9, 8, (3, 2), (2, 1), (1, 0), (1, 2), 2, True),     # batch 1, mixed parameters
    (3, 6, 6, 8, 8, 3, 1, 1, 1, 6, True),                         # depthwise
    (2, 4, 8, 7, 7, 3, 2, 1, 1, 4, False),                        # depthwise, multiplier 2, strided
    (2, 4, 8, 5, 6, 1, 1, 0, 1, 1, True),                         # 1x1: plain GEMM
    (2, 4, 8, 6, 7, 1, 2, 0, 1, 2, True),                         # 1x1 strided
    (2, 2, 3, 4, 4, 5, 1, 2, 1, 1, True),                         # kernel larger than the input
    (1, 8, 4, 3, 3, 3, 3, 0, 1, 1, True),                         # one output position
    # enough channels for the direct float32 kernel (Note [Direct convolution]): strides, dilations, groups
    (2, 8, 16, 11, 10, 3, 2, 1, 1, 1, True),
    (1, 16, 32, 9, 9, (3, 2), (2, 3), (1, 0), (2, 1), 2, True),
    (2, 16, 16, 8, 8, 3, 1, 2, 2, 1, True),
    (1, 3, 16, 15, 15, 7, 2, 3, 1, 1, True),                      # a stem: 7x7 stride 2
    (2, 16, 24, 7, 9, 1, 2, 0, 1, 1, False),                      # 1x1 stride 2
    # depthwise rows wider than a vector (the vector loops and their tails)
    (2, 8, 8, 9, 37, 3, 1, 1, 1, 8, True),
    (1, 4, 8, 5, 20, (3, 5), 1, (1, 2), (1, 2), 4, True),
]


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CONV2D, ids=lambda c: "x".join(map(str, c[:5])) + f"_k{c[5]}s{c[6]}g{c[9]}")
def test_conv2d_vs_torch(case, dtype):
    n, c, o, h, w, k, s, p, d, g, bias = case
    kk = k if isinstance(k, tuple) else (k, k)
    arrays = [rand(n, c, h, w), rand(o, c // g, *kk, seed=1), rand(o, seed=2) if bias else None]
    compare(lambda x, wt, b: F.conv2d(x, wt, b, s, p, d, g), lambda x, wt, b: T.nn.functional.conv2d(x, wt, b, s, p, d, g),
            arrays, dtype)


@requires_torch
@pytest.mark.parametrize("layouts", [["t", "c", None], ["s", "t", "c"]], ids=["transposed_input", "sliced_input"])
def test_conv2d_non_contiguous_vs_torch(layouts):
    arrays = [rand(2, 3, 6, 7), rand(4, 3, 3, 3, seed=1), rand(4, seed=2)]
    compare(lambda x, w, b: F.conv2d(x, w, b, 1, 1), lambda x, w, b: T.nn.functional.conv2d(x, w, b, 1, 1), arrays,
            layouts=layouts)


@requires_torch
@pytest.mark.parametrize("case", [(2, 4, 6, 9, 3, 1, 1, 1, 1), (1, 4, 4, 10, 4, 2, 3, 2, 2), (2, 6, 6, 8, 5, 1, 2, 1, 6)])
def test_conv1d_vs_torch(case):
    n, c, o, length, k, s, p, d, g = case
    arrays = [rand(n, c, length), rand(o, c // g, k, seed=1), rand(o, seed=2)]
    compare(lambda x, w, b: F.conv1d(x, w, b, s, p, d, g), lambda x, w, b: T.nn.functional.conv1d(x, w, b, s, p, d, g),
            arrays)


@requires_torch
def test_conv3d_vs_torch():
    arrays = [rand(2, 4, 4, 5, 6), rand(6, 2, 2, 3, 2, seed=1), rand(6, seed=2)]
    compare(lambda x, w, b: F.conv3d(x, w, b, (1, 2, 1), (1, 0, 1), 1, 2),
            lambda x, w, b: T.nn.functional.conv3d(x, w, b, (1, 2, 1), (1, 0, 1), 1, 2), arrays)


CONV_T = [  # N, Cin, Cout, H, W, kernel, stride, padding, output_padding, groups, dilation
    (2, 4, 3, 5, 4, 3, 1, 0, 0, 1, 1),
    (2, 4, 6, 4, 5, 3, 2, 1, 1, 2, 1),
    (1, 6, 6, 5, 5, (3, 2), (2, 3), (0, 1), (1, 2), 3, 1),
    (2, 3, 4, 4, 4, 3, 1, 1, 1, 1, 2),              # output_padding < dilation
    (2, 4, 4, 4, 4, 3, 2, 1, 0, 4, 1),              # depthwise
    (2, 4, 5, 3, 3, 1, 1, 0, 0, 1, 1),              # 1x1: plain GEMM
    (2, 16, 8, 5, 6, 3, 1, 1, 0, 1, 1),             # stride 1: the direct kernel on the flipped weight
    (1, 16, 16, 5, 5, 3, 1, 2, 1, 2, 2),            # stride 1 with output_padding: the GEMM path
    (2, 16, 16, 6, 5, 3, 2, 1, 1, 1, 1),            # stride 2
]


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CONV_T, ids=lambda c: "_".join(map(str, c)))
def test_conv_transpose2d_vs_torch(case, dtype):
    n, ci, co, h, w, k, s, p, op, g, d = case
    kk = k if isinstance(k, tuple) else (k, k)
    arrays = [rand(n, ci, h, w), rand(ci, co // g, *kk, seed=1), rand(co, seed=2)]
    compare(lambda x, wt, b: F.conv_transpose2d(x, wt, b, s, p, op, g, d),
            lambda x, wt, b: T.nn.functional.conv_transpose2d(x, wt, b, s, p, op, g, d), arrays, dtype)


@requires_torch
def test_conv3d_strided_float32_vs_torch():
    compare(lambda x, w, b: F.conv3d(x, w, b, (1, 2, 2), 1), lambda x, w, b: T.nn.functional.conv3d(x, w, b, (1, 2, 2), 1),
            [rand(1, 8, 5, 6, 7), rand(16, 8, 3, 3, 3, seed=1), rand(16, seed=2)], "float32")


@requires_torch
def test_conv_transpose1d_and_3d_vs_torch():
    compare(lambda x, w, b: F.conv_transpose1d(x, w, b, 3, 1, 2, 2, 1),
            lambda x, w, b: T.nn.functional.conv_transpose1d(x, w, b, 3, 1, 2, 2, 1),
            [rand(2, 4, 6), rand(4, 3, 4, seed=1), rand(6, seed=2)])
    compare(lambda x, w: F.conv_transpose3d(x, w, None, 2, (0, 1, 0), 1),
            lambda x, w: T.nn.functional.conv_transpose3d(x, w, None, 2, (0, 1, 0), 1),
            [rand(1, 2, 3, 2, 3), rand(2, 3, 2, 3, 2, seed=1)])


@requires_torch
@pytest.mark.parametrize("fn,x_shape,w_shape", [
    ("conv1d", (4, 9), (6, 4, 3)), ("conv2d", (3, 6, 5), (4, 3, 2, 3)), ("conv3d", (2, 3, 4, 3), (2, 2, 2, 2, 2)),
    ("conv_transpose1d", (4, 5), (4, 3, 3)), ("conv_transpose2d", (4, 3, 4), (4, 2, 3, 3))])
def test_unbatched_vs_torch(fn, x_shape, w_shape):
    arrays = [rand(*x_shape), rand(*w_shape, seed=1)]
    yp, _ = compare(lambda x, w: getattr(F, fn)(x, w, None, 1, 1), lambda x, w: getattr(T.nn.functional, fn)(x, w, None, 1, 1),
                    arrays)
    assert yp.ndim == len(x_shape)
    assert getattr(P, fn) is getattr(F, fn)  # torch.conv2d is F.conv2d


@requires_torch
@pytest.mark.parametrize("kernel,dilation", [((3, 3), 1), ((2, 4), 1), ((4, 3), (2, 1)), ((2, 2), 3)])
def test_padding_same_and_valid_vs_torch(kernel, dilation):
    arrays = [rand(2, 4, 7, 6), rand(6, 2, *kernel, seed=1), rand(6, seed=2)]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that even kernels need an asymmetric pad
        yp, _ = compare(lambda x, w, b: F.conv2d(x, w, b, 1, "same", dilation, 2),
                        lambda x, w, b: T.nn.functional.conv2d(x, w, b, 1, "same", dilation, 2), arrays)
        compare(lambda x, w: F.conv1d(x, w, padding="same"), lambda x, w: T.nn.functional.conv1d(x, w, padding="same"),
                [rand(2, 3, 8), rand(2, 3, 4, seed=3)])
    assert yp.shape[2:] == (7, 6)
    compare(lambda x, w, b: F.conv2d(x, w, b, 1, "valid", dilation, 2),
            lambda x, w, b: T.nn.functional.conv2d(x, w, b, 1, "valid", dilation, 2), arrays)


@requires_torch
def test_bigger_problem_threads_and_column_blocks_vs_torch():
    # 3 samples (2 threads: two in parallel, one with threads inside), several column blocks per sample
    arrays = [rand(3, 32, 34, 33), rand(24, 32, 3, 3, seed=1), rand(24, seed=2)]
    compare(lambda x, w, b: F.conv2d(x, w, b, 1, 1), lambda x, w, b: T.nn.functional.conv2d(x, w, b, 1, 1), arrays,
            "float32", tol=(1e-3, 1e-3))
    compare(lambda x, w, b: F.conv_transpose2d(x, w, b, 1, 1),
            lambda x, w, b: T.nn.functional.conv_transpose2d(x, w, b, 1, 1),
            [rand(1, 24, 30, 31), arrays[1], rand(32, seed=3)], "float32", tol=(1e-3, 1e-3))


@requires_torch
def test_only_some_inputs_require_grad():
    x, w, b = rand(2, 3, 6, 6), rand(4, 3, 3, 3, seed=1), rand(4, seed=2)
    for need in itertools.product([False, True], repeat=3):
        if not any(need):
            continue
        ps = [to_pct(a, requires_grad=r) for a, r in zip((x, w, b), need)]
        ts = [to_torch(a, requires_grad=r) for a, r in zip((x, w, b), need)]
        F.conv2d(*ps, padding=1).sum().backward()
        T.nn.functional.conv2d(*ts, padding=1).sum().backward()
        for p, t in zip(ps, ts):
            assert (p.grad is None) == (t.grad is None)
            if t.grad is not None:
                assert_same(p.grad, t.grad, 1e-10, 1e-10)


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_float_vs_torch(dtype):
    x, w, b = rand(2, 3, 6, 6), rand(4, 3, 3, 3, seed=1), rand(4, seed=2)
    yp = F.conv2d(to_pct(x, dtype), to_pct(w, dtype), to_pct(b, dtype), 1, 1)
    yt = T.nn.functional.conv2d(to_torch(x, dtype), to_torch(w, dtype), to_torch(b, dtype), 1, 1)
    assert_same(yp, yt, 2e-2, 3e-2)


@requires_torch
def test_integer_conv_vs_torch():
    rng = np.random.default_rng(0)
    x, w, b = rng.integers(-5, 5, (2, 3, 5, 5)), rng.integers(-3, 3, (4, 3, 3, 3)), rng.integers(-3, 3, 4)
    yp = F.conv2d(P.tensor(x.tolist()), P.tensor(w.tolist()), P.tensor(b.tolist()), 1, 1)
    yt = T.nn.functional.conv2d(T.tensor(x.tolist()), T.tensor(w.tolist()), T.tensor(b.tolist()), 1, 1)
    assert yp.dtype == P.int64 and yp.tolist() == yt.tolist()


@requires_torch
def test_fused_backward_vs_torch_ops_aten():
    x, w, go = rand(2, 4, 7, 6), rand(6, 2, 3, 3, seed=1), rand(2, 6, 4, 6, seed=2)
    args = ([6], [2, 1], [1, 1], [1, 1], False, [0, 0], 2, [True, True, True])
    rp = P.convolution_backward(to_pct(go), to_pct(x), to_pct(w), *args)
    rt = T.ops.aten.convolution_backward(to_torch(go), to_torch(x), to_torch(w), *args)
    for a, b in zip(rp, rt):
        assert_same(a, b, 1e-10, 1e-10)


ERRORS = {
    "conv2d 2d input": lambda L: L.conv2d(L.randn(5, 5), L.randn(6, 4, 3, 3)),
    "conv1d 4d input": lambda L: L.conv1d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3)),
    "weight rank": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3)),
    "weight 1d": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6)),
    "channels": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 3, 3, 3)),
    "groups vs channels": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 2, 3, 3), groups=3),
    "groups vs out": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(5, 2, 3, 3), groups=2),
    "groups 0": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), groups=0),
    "no out channels": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(0, 4, 3, 3)),
    "kernel too big": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 7, 7)),
    "dilated kernel too big": lambda L: L.conv1d(L.randn(2, 4, 5), L.randn(6, 4, 3), dilation=3),
    "stride 0": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), stride=0),
    "dilation 0": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), dilation=0),
    "padding -1": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), padding=-1),
    "stride length": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), stride=(1, 1, 1)),
    "bias size": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), L.randn(5)),
    "bias rank": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), L.randn(6, 1)),
    "weight dtype": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3).double()),
    "bias dtype": lambda L: L.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), L.randn(6).double()),
    "same strided": lambda L: L.nn.functional.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), padding="same", stride=2),
    "padding string": lambda L: L.nn.functional.conv2d(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), padding="full"),
    "output_padding >= stride": lambda L: L.conv_transpose2d(L.randn(2, 4, 5, 5), L.randn(4, 3, 3, 3), stride=2,
                                                             output_padding=2),
    "output_padding 1d": lambda L: L.conv_transpose1d(L.randn(2, 4, 5), L.randn(4, 3, 3), stride=2, output_padding=2),
    "output_padding 3d": lambda L: L.conv_transpose3d(L.randn(1, 4, 3, 3, 3), L.randn(4, 3, 3, 3, 3), stride=2,
                                                      output_padding=2),
    "transposed channels": lambda L: L.conv_transpose2d(L.randn(2, 4, 5, 5), L.randn(3, 3, 3, 3)),
    "transposed bias": lambda L: L.conv_transpose2d(L.randn(2, 4, 5, 5), L.randn(4, 3, 3, 3), L.randn(4)),
    "transposed groups": lambda L: L.conv_transpose2d(L.randn(2, 4, 5, 5), L.randn(4, 3, 3, 3), groups=3),
    "negative output_padding": lambda L: L.conv_transpose2d(L.randn(2, 4, 5, 5), L.randn(4, 3, 3, 3), output_padding=-1),
    "transposed string padding": lambda L: L.nn.functional.conv_transpose2d(L.randn(2, 4, 5, 5), L.randn(4, 3, 3, 3),
                                                                            padding="same"),
    "convolution rank": lambda L: L.convolution(L.randn(4, 5, 5), L.randn(6, 4, 3, 3), None, [1], [0], [1], False, [0], 1),
    "convolution empty stride": lambda L: L.convolution(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), None, [], [0], [1],
                                                        False, [0], 1),
    "output_padding length": lambda L: L.convolution(L.randn(2, 4, 5, 5), L.randn(6, 4, 3, 3), None, [1], [0], [1],
                                                     False, [0, 0, 0], 1),
    "bool": lambda L: L.convolution(L.ones(2, 4, 5, 5).bool(), L.ones(6, 4, 3, 3).bool(), None, [1], [0], [1], False,
                                    [0], 1),
    "module groups": lambda L: L.nn.Conv2d(4, 6, 3, groups=4),
    "module groups 0": lambda L: L.nn.Conv2d(4, 6, 3, groups=0),
    "module padding string": lambda L: L.nn.Conv2d(4, 6, 3, padding="full"),
    "module same strided": lambda L: L.nn.Conv2d(4, 6, 3, padding="same", stride=2),
    "transposed padding_mode": lambda L: L.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
    "output_size range": lambda L: L.nn.ConvTranspose2d(4, 6, 3, stride=2)(L.randn(1, 4, 5, 5), output_size=(13, 12)),
    "output_size length": lambda L: L.nn.ConvTranspose2d(4, 6, 3, stride=2)(L.randn(1, 4, 5, 5), output_size=(12,)),
}


@requires_torch
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_like_torch(name):
    with pytest.raises(Exception) as te:
        ERRORS[name](T)
    with pytest.raises(type(te.value)) as pe:
        ERRORS[name](P)
    assert str(pe.value).split("\n")[0] == str(te.value).split("\n")[0]


# ---- modules ------------------------------------------------------------------------------------

MODULES = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, bias=False)),
    ("Conv2d", (3, 8, 3), {}),
    ("Conv2d", (4, 8, (3, 5)), dict(padding="same", dilation=2, groups=4)),
    ("Conv2d", (4, 4, 3), dict(padding="valid", groups=4)),
    ("Conv3d", (2, 4, 2), dict(padding=(1, 0, 1))),
    ("ConvTranspose1d", (4, 2, 3), dict(dilation=2)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, groups=2, output_padding=1)),
    ("ConvTranspose3d", (2, 3, (2, 1, 2)), dict(stride=(1, 2, 1), bias=False)),
]


@requires_torch
@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] + str(i) for i, m in enumerate(MODULES)])
def test_module_init_repr_and_forward_vs_torch(name, args, kw):
    T.manual_seed(11)
    P.manual_seed(11)
    tm, pm = getattr(T.nn, name)(*args, **kw), getattr(P.nn, name)(*args, **kw)
    assert repr(pm) == repr(tm)
    assert list(pm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():  # seeded default init gives torch's numbers
        np.testing.assert_array_equal(npy(pm.state_dict()[k]), v.double().numpy(), err_msg=k)
    nd = len(tm.weight.shape) - 2
    x = rand(2, args[0], *([5] * nd))
    assert_same(pm(to_pct(x, "float32")), tm(to_torch(x, "float32")), 1e-5, 1e-5)


@requires_torch
def test_conv_transpose_output_size_vs_torch():
    T.manual_seed(0)
    P.manual_seed(0)
    tm, pm = T.nn.ConvTranspose2d(4, 6, 3, stride=2), P.nn.ConvTranspose2d(4, 6, 3, stride=2)
    x = rand(1, 4, 5, 5)
    for size in [(11, 12), (1, 6, 12, 11), None]:
        yp, yt = pm(to_pct(x, "float32"), output_size=size), tm(to_torch(x, "float32"), output_size=size)
        assert_same(yp, yt, 1e-5, 1e-5)
    yp = pm(to_pct(x[0], "float32"), output_size=(6, 12, 11))  # unbatched with channels in output_size
    assert yp.shape == (6, 12, 11)


def test_module_basics_without_torch():
    m = P.nn.Conv2d(4, 6, 3, padding=1, bias=False)
    assert m.weight.shape == (6, 4, 3, 3) and m.bias is None and m.kernel_size == (3, 3)
    assert repr(m) == "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)"
    bound = 1 / math.sqrt(4 * 9)  # kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert float(m.weight.abs().max()) <= bound
    m2 = P.nn.Conv2d(4, 6, 3, dtype=P.float64)
    assert m2.weight.dtype == P.float64 and m2(P.randn(1, 4, 5, 5, dtype=P.float64)).shape == (1, 6, 3, 3)
    t = P.nn.ConvTranspose2d(6, 4, 3, stride=2, output_padding=1)
    assert t.weight.shape == (6, 4, 3, 3)
    assert t(P.randn(2, 6, 5, 5)).shape == (2, 4, 12, 12)
    with pytest.raises(ValueError):
        P.nn.Conv2d(4, 6, 3, padding_mode="mirror")
    with pytest.raises(ValueError):
        P.nn.Conv1d(3, 6, 3, groups=2)
    assert P.nn.Conv2d(4, 6, 3, padding_mode="reflect").padding_mode == "reflect"


_PATHS_SCRIPT = r"""
import sys, json
import pyctorch as P
F = P.nn.functional
g = P.Generator().manual_seed(0)
out = []
for (x_shape, w_shape, kw) in [((2, 16, 9, 8), (24, 16, 3, 3), dict(padding=1)),
                               ((3, 8, 11, 10), (16, 4, 3, 2), dict(stride=2, dilation=(1, 2), groups=2)),
                               ((1, 16, 7, 7), (16, 16, 1, 1), {})]:
    x = P.randn(*x_shape, generator=g).requires_grad_()
    w = P.randn(*w_shape, generator=g).requires_grad_()
    y = F.conv2d(x, w, **kw)
    y.backward(P.ones_like(y))
    yt = F.conv_transpose2d(y.detach(), w.detach(), **kw)
    out.append([y.tolist(), x.grad.tolist(), w.grad.tolist(), yt.tolist()])
json.dump(out, sys.stdout)
"""


def test_portable_and_avx512_paths_agree():
    # PYCTORCH_NO_AVX512=1 sends float32 through the im2col + OpenBLAS engine (what CPUs without
    # AVX-512 run); the default run uses the direct and packed kernels where the CPU has AVX-512
    import json
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    runs = []
    for flag in ("1", "0"):
        env = dict(os.environ, PYCTORCH_NO_AVX512=flag, PYTHONPATH=root)
        r = subprocess.run([sys.executable, "-c", _PATHS_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout))
    for a, b in zip(*runs):
        for u, v in zip(a, b):
            np.testing.assert_allclose(np.array(u), np.array(v), rtol=1e-4, atol=1e-4)


def test_padding_same_even_kernel_warns_and_keeps_the_size():
    x = P.randn(1, 2, 5, 6)
    with pytest.warns(UserWarning, match="even kernel lengths"):
        y = F.conv2d(x, P.randn(3, 2, 2, 4), padding="same")
    assert y.shape == (1, 3, 5, 6)
    assert F.conv2d(x, P.randn(3, 2, 3, 3), padding="same").shape == (1, 3, 5, 6)


# ---- whole-batch GEMM (Note [Convolution GEMM]), shared row padding, strided col2im ----

BATCH_GEMM = [
    # n, c, o, h, w, k, s, p, d, g, bias
    (8, 32, 24, 7, 9, 1, 1, 0, 1, 1, True),       # 1x1: 64-column panels straddle samples (63 positions)
    (3, 12, 18, 7, 7, 1, 1, 0, 1, 3, True),       # 1x1, groups
    (2, 16, 16, 9, 9, 1, 1, 1, 1, 1, True),       # 1x1 with padding wider than the kernel: direct kernel
    (2, 16, 16, 9, 10, 3, 1, 2, 1, 1, False),     # padding == span: rows share their padding
    (2, 16, 16, 9, 10, 3, 1, 3, 1, 1, True),      # padding > span: they do not
    (2, 16, 16, 8, 11, 3, 1, (1, 2), (1, 2), 1, True),
    (3, 4, 6, 9, 9, 3, 2, 1, 1, 1, True),         # few output channels: im2col while packing, strided
    (2, 4, 6, 11, 13, 3, 1, 1, 2, 2, True),       # the same, dilated, groups
]


@requires_torch
@pytest.mark.parametrize("case", BATCH_GEMM, ids=lambda c: "x".join(map(str, c[:5])) + f"_k{c[5]}p{c[7]}g{c[9]}")
def test_batch_gemm_paths_vs_torch(case):
    n, c, o, h, w, k, s, p, d, g, bias = case
    arrays = [rand(n, c, h, w), rand(o, c // g, k, k, seed=1), rand(o, seed=2) if bias else None]
    compare(lambda x, wt, b: F.conv2d(x, wt, b, s, p, d, g), lambda x, wt, b: T.nn.functional.conv2d(x, wt, b, s, p, d, g),
            arrays, "float32")


@requires_torch
@pytest.mark.parametrize("stride,padding", [(2, 0), (2, 1), (2, 2), (3, 1), ((1, 2), (0, 3))])
def test_conv_transpose_strided_col2im_vs_torch(stride, padding):
    # stride 2 with 3 taps along the rows: the three taps' rows are added in one pass (im2col.c)
    s = stride if isinstance(stride, tuple) else (stride, stride)
    arrays = [rand(2, 8, 5, 7), rand(8, 4, 3, 3, seed=1), rand(4, seed=2)]
    compare(lambda x, wt, b: F.conv_transpose2d(x, wt, b, stride, padding, (s[0] - 1, s[1] - 1)),
            lambda x, wt, b: T.nn.functional.conv_transpose2d(x, wt, b, stride, padding, (s[0] - 1, s[1] - 1)),
            arrays, "float32")


@requires_torch
def test_strided_input_gradient_in_column_blocks_vs_torch():
    # a column block ends inside a row of output positions (Note [Column blocking])
    arrays = [rand(1, 64, 81, 83), rand(8, 64, 3, 3, seed=1), None]
    compare(lambda x, wt, b: F.conv2d(x, wt, b, 2, 1), lambda x, wt, b: T.nn.functional.conv2d(x, wt, b, 2, 1),
            arrays, "float32", tol=(1e-3, 1e-3))


def test_forward_does_not_depend_on_the_thread_count():
    # every output element is summed in one order whatever the threads (packed driver, direct tiles)
    g = P.Generator().manual_seed(0)
    cases = [((5, 32, 7, 9), (24, 32, 1, 1), {}), ((4, 16, 12, 12), (16, 16, 3, 3), {"padding": 1}),
             ((3, 4, 9, 9), (6, 4, 3, 3), {"stride": 2, "padding": 1})]
    old = P.get_num_threads()
    try:
        for xs, ws, kw in cases:
            x, w, b = P.randn(*xs, generator=g), P.randn(*ws, generator=g), P.randn(ws[0], generator=g)
            wt = P.randn(xs[1], 4, 3, 3, generator=g)
            res = []
            for nt in (1, 2):
                P.set_num_threads(nt)
                res.append((F.conv2d(x, w, b, **kw).tolist(), F.conv_transpose2d(x, wt, None, 2, 1, 1).tolist()))
            assert res[0] == res[1], (xs, ws, kw)
    finally:
        P.set_num_threads(old)
