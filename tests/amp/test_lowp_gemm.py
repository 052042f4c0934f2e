"""bfloat16 / float16 matrix products (csrc/aten/cpu/gemm_lowp.c, blas.c): mm, addmm (alpha, beta),
bmm, matmul, linear against torch and against a float64 reference from the same rounded inputs,
over layouts (transposed, sliced, column-major output), odd K, ragged edges of the 6 x 64 tiles,
batches; the AVX512-BF16 path and the widening path (PYCTORCH_NO_BF16_GEMM=1, in a subprocess)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, requires_torch, torch

SHAPES = [(1, 1, 1), (3, 5, 2), (6, 64, 64), (7, 65, 63), (13, 300, 129), (64, 1, 70), (130, 257, 67),
          (1, 200, 300), (200, 64, 1)]


def _arr(shape, seed):
    return np.random.RandomState(seed).uniform(-2, 2, shape).astype(np.float32)


def _ref(a, b):
    """float64 product of the already-rounded inputs"""
    return np.array(a.double().tolist()) @ np.array(b.double().tolist())


def _check(got, a, b, dtype):
    ref = _ref(a, b)
    k = a.shape[-1]
    ulp = 2.0 ** -8 if dtype == "bfloat16" else 2.0 ** -11
    # one rounding of the result, plus float32 accumulation (tiny)
    bound = ulp * np.abs(ref) + 1e-6 * k * 4 + 1e-30
    err = np.abs(np.array(got.double().tolist()) - ref)
    assert (err <= bound * 1.01 + 1e-6).all(), f"max err {err.max()} (bound {bound.max()})"


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_mm_rounds_once(m, k, n, dtype, layout):
    dt = getattr(pyctorch, dtype)
    a = pyctorch.tensor(_arr((k, m) if layout[0] == "t" else (m, k), 1)).to(dt)
    b = pyctorch.tensor(_arr((n, k) if layout[1] == "t" else (k, n), 2)).to(dt)
    a = a.t() if layout[0] == "t" else a
    b = b.t() if layout[1] == "t" else b
    c = pyctorch.mm(a, b)
    assert c.dtype == dt and tuple(c.shape) == (m, n)
    _check(c, a, b, dtype)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_against_torch(dtype):
    for (m, k, n) in [(33, 129, 70), (128, 256, 192), (5, 1000, 3)]:
        A, B, C = _arr((m, k), 3), _arr((k, n), 4), _arr((m, n), 5)
        outs = []
        for lib in (pyctorch, torch):
            dt = getattr(lib, dtype)
            a, b, c = (lib.tensor(x).to(dt) for x in (A, B, C))
            outs.append((a @ b, lib.addmm(c, a, b, beta=0.5, alpha=2.0), lib.addmm(c, a, b, beta=0.0),
                         lib.nn.functional.linear(a, b.t(), c[0]),
                         lib.bmm(a[None].expand(3, m, k), b[None].expand(3, k, n)),
                         lib.matmul(a[:, ::2], b[::2])))
        for p, t in zip(*outs):
            scale = float(np.abs(np.array(t.double().tolist())).max())
            assert_same(p, t, rtol=2e-2 if dtype == "bfloat16" else 2e-3, atol=1e-2 * scale)


def test_addmm_beta_alpha_and_strided_output():
    a = pyctorch.tensor(_arr((20, 70), 6)).bfloat16()
    b = pyctorch.tensor(_arr((70, 90), 7)).bfloat16()
    c = pyctorch.tensor(_arr((90, 20), 8)).bfloat16().t()  # column-major C
    r = pyctorch.addmm(c, a, b, beta=0.5, alpha=-1.5)
    ref = 0.5 * np.array(c.double().tolist()) - 1.5 * _ref(a, b)
    np.testing.assert_allclose(np.array(r.double().tolist()), ref, rtol=1e-2, atol=2e-2)
    out = pyctorch.empty(90, 20, dtype=pyctorch.bfloat16).t()
    pyctorch.mm(a, b, out=out)
    _check(out, a, b, "bfloat16")
    nan_c = pyctorch.full((20, 90), float("nan")).bfloat16()
    r0 = pyctorch.addmm(nan_c, a, b, beta=0.0)  # beta == 0 ignores C, NaN included
    assert not np.isnan(np.array(r0.double().tolist())).any()


def test_special_values():
    a = pyctorch.tensor([[1.0, float("inf")], [float("nan"), 2.0]]).bfloat16()
    b = pyctorch.ones(2, 70).bfloat16()
    r = np.array((a @ b).double().tolist())
    assert np.isinf(r[0]).all() and np.isnan(r[1]).all()
    big = pyctorch.full((8, 300), 3.0e38).bfloat16()  # overflow to inf like torch
    assert np.isinf(np.array((big @ big.t()).double().tolist())).all()


def test_batched_and_broadcast_matmul():
    a = pyctorch.tensor(_arr((4, 3, 17, 40), 9)).bfloat16()
    b = pyctorch.tensor(_arr((3, 40, 66), 10)).bfloat16()
    r = a @ b
    assert tuple(r.shape) == (4, 3, 17, 66)
    ref = np.array(a.double().tolist()) @ np.array(b.double().tolist())
    np.testing.assert_allclose(np.array(r.double().tolist()), ref, rtol=8e-3, atol=1e-4 * 40)


def test_threads_give_the_same_bits():
    a = pyctorch.tensor(_arr((150, 300), 11)).bfloat16()
    b = pyctorch.tensor(_arr((300, 260), 12)).bfloat16()
    n = pyctorch.get_num_threads()
    try:
        pyctorch.set_num_threads(1)
        one = (a @ b).float().tolist()
        pyctorch.set_num_threads(2)
        two = (a @ b).float().tolist()
    finally:
        pyctorch.set_num_threads(n)
    assert one == two


def test_widening_path_agrees_with_native():
    """The float32-widening path (forced) gives the same rounded results within one ulp."""
    code = ("import pyctorch, numpy as np\n"
            "r = np.random.RandomState(0)\n"
            "a = pyctorch.tensor(r.uniform(-2, 2, (37, 300)).astype(np.float32)).bfloat16()\n"
            "b = pyctorch.tensor(r.uniform(-2, 2, (300, 70)).astype(np.float32)).bfloat16()\n"
            "print(repr((a @ b).float().tolist()))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for flag in ("0", "1"):
        env = dict(os.environ, PYCTORCH_NO_BF16_GEMM=flag, PYTHONPATH=root)
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        outs.append(np.array(eval(res.stdout)))
    np.testing.assert_allclose(outs[0], outs[1], rtol=2 ** -7, atol=1e-3)


CONVS = [  # (input shape, weight shape, kwargs)
    ((2, 16, 9, 11), (24, 16, 3, 3), dict(padding=1)),
    ((1, 16, 9, 11), (24, 16, 3, 3), dict(stride=2, dilation=2, padding=2)),
    ((2, 32, 7, 7), (64, 32, 1, 1), {}),                       # 1x1: the input is the GEMM operand
    ((2, 32, 7, 7), (64, 16, 3, 3), dict(groups=2, padding=1)),
    ((2, 8, 6, 6), (8, 1, 3, 3), dict(groups=8)),              # depthwise: the float32 engine
    ((3, 16, 20), (32, 16, 5), dict(padding=2)),               # conv1d
    ((1, 8, 5, 6, 7), (16, 8, 3, 3, 3), dict(padding=1)),      # conv3d
    ((2, 3, 40, 40), (16, 3, 3, 3), dict(padding=1)),          # few input channels (K = 27)
]


@requires_torch
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_bf16_convolution_matches_torch(case, bias):
    xs, ws, kw = CONVS[case]
    fn = {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(xs)]
    X, W, B = _arr(xs, 13), _arr(ws, 14), _arr((ws[0],), 15)
    outs = []
    for lib in (pyctorch, torch):
        args = [lib.tensor(X).bfloat16(), lib.tensor(W).bfloat16(), lib.tensor(B).bfloat16() if bias else None]
        outs.append(getattr(lib.nn.functional, fn)(*args, **kw))
    scale = float(np.abs(np.array(outs[1].double().tolist())).max())
    assert_same(outs[0], outs[1], rtol=1.6e-2, atol=4e-3 * scale)


def test_bf16_convolution_rounds_once():
    """Against a float64 convolution of the rounded inputs: within one bfloat16 rounding."""
    x = pyctorch.tensor(_arr((2, 16, 8, 8), 16)).bfloat16()
    w = pyctorch.tensor(_arr((32, 16, 3, 3), 17)).bfloat16()
    b = pyctorch.tensor(_arr((32,), 18)).bfloat16()
    got = np.array(pyctorch.nn.functional.conv2d(x, w, b, padding=1).double().tolist())
    ref = np.array(pyctorch.nn.functional.conv2d(x.double(), w.double(), b.double(), padding=1).tolist())
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-4).all()


# The backward of the bfloat16 convolution (Note [bfloat16 convolution], conv_engine.c): the cases above and
# transposed ones, whose input gradient is the forward primitive and whose data primitive has a bias.
CONV_GRADS = [(xs, ws, kw, False) for xs, ws, kw in CONVS] + [
    ((2, 16, 5, 5), (16, 24, 3, 3), dict(stride=2, padding=1, output_padding=1), True),
    ((2, 32, 6, 6), (32, 8, 3, 3), dict(groups=2, padding=1), True),
    ((2, 16, 7, 7), (16, 32, 1, 1), {}, True),
]


def _conv_grads(lib, case, bias, dtype):
    """(output, grad input, grad weight, grad bias or None) of CONV_GRADS[case] in dtype, for a fixed grad_output"""
    xs, ws, kw, transposed = CONV_GRADS[case]
    nsp = len(xs) - 2
    fn = getattr(lib.nn.functional, ("conv_transpose%dd" if transposed else "conv%dd") % nsp)
    nout = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    x = lib.tensor(_arr(xs, 21)).to(getattr(lib, dtype)).requires_grad_()
    w = lib.tensor(_arr(ws, 22)).to(getattr(lib, dtype)).requires_grad_()
    b = lib.tensor(_arr((nout,), 23)).to(getattr(lib, dtype)).requires_grad_() if bias else None
    y = fn(x, w, b, **kw)
    g = lib.tensor(_arr(tuple(y.shape), 24)).to(getattr(lib, dtype))
    grads = lib.autograd.grad(y, (x, w, b) if bias else (x, w), g)
    return (y, *grads, None) if not bias else (y, *grads)


@requires_torch
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", range(len(CONV_GRADS)))
def test_bf16_convolution_backward_matches_torch(case, bias):
    """Within bfloat16 roundings of torch's results; where torch's CPU kernel is itself further off (its oneDNN
    bfloat16 convolution backward on CPUs without AVX-512 loses about a bit more: grad_input twice our error on an
    AVX2 EPYC), ours must be no further than torch's from the float64 gradients of the same rounded inputs."""
    got, exp = _conv_grads(pyctorch, case, bias, "bfloat16"), _conv_grads(torch, case, bias, "bfloat16")
    exact = None
    for i, (name, a, e) in enumerate(zip(("output", "grad_input", "grad_weight", "grad_bias"), got, exp)):
        if e is None:
            continue
        assert a.dtype == pyctorch.bfloat16, name
        scale = float(np.abs(np.array(e.double().tolist())).max())
        try:
            assert_same(a, e, rtol=1.6e-2, atol=4e-3 * scale)
        except AssertionError:
            exact = exact or _conv_grads_of_rounded_inputs(case, bias)
            ours = np.abs(np.array(a.double().tolist()) - exact[i]).max()
            theirs = np.abs(np.array(e.double().tolist()) - exact[i]).max()
            assert ours <= theirs, f"{name}: our max error {ours} > torch's {theirs}"


def _conv_grads_of_rounded_inputs(case, bias):
    """The float64 (output, gradients) of CONV_GRADS[case] from inputs rounded to bfloat16 first, as numpy arrays."""
    xs, ws, kw, transposed = CONV_GRADS[case]
    fn = getattr(pyctorch.nn.functional, ("conv_transpose%dd" if transposed else "conv%dd") % (len(xs) - 2))
    nout = ws[1] * kw.get("groups", 1) if transposed else ws[0]

    def rounded(a):
        return pyctorch.tensor(a).bfloat16().double().requires_grad_()
    x, w = rounded(_arr(xs, 21)), rounded(_arr(ws, 22))
    b = rounded(_arr((nout,), 23)) if bias else None
    y = fn(x, w, b, **kw)
    g = pyctorch.tensor(_arr(tuple(y.shape), 24)).bfloat16().double()
    grads = pyctorch.autograd.grad(y, (x, w, b) if bias else (x, w), g)
    return [np.array(t.tolist()) for t in (y, *grads)]


@pytest.mark.parametrize("case", range(len(CONV_GRADS)))
def test_bf16_convolution_backward_rounds_once(case):
    """Each gradient is a float32 sum rounded once to bfloat16: within one bfloat16 rounding of the float64
    gradients of the same rounded inputs (a bfloat16 sum per product or per sample would be far off)."""
    low = _conv_grads(pyctorch, case, True, "bfloat16")
    xs, ws, kw, transposed = CONV_GRADS[case]
    nsp = len(xs) - 2
    fn = getattr(pyctorch.nn.functional, ("conv_transpose%dd" if transposed else "conv%dd") % nsp)
    x = low[0].new_tensor(_arr(xs, 21)).bfloat16().double().requires_grad_()
    w = low[0].new_tensor(_arr(ws, 22)).bfloat16().double().requires_grad_()
    b = low[0].new_tensor(_arr((low[3].shape[0],), 23)).bfloat16().double().requires_grad_()
    y = fn(x, w, b, **kw)
    g = pyctorch.tensor(_arr(tuple(y.shape), 24)).bfloat16().double()
    ref = pyctorch.autograd.grad(y, (x, w, b), g)
    for name, got, r in zip(("grad_input", "grad_weight", "grad_bias"), low[1:], ref):
        r = np.array(r.tolist())
        terms = np.prod(low[0].shape) / r.size * 4 * 4  # a loose bound of the float32 sum's own error
        err = np.abs(np.array(got.double().tolist()) - r)
        bound = 2.0 ** -8 * np.abs(r) + 2.0 ** -20 * terms
        assert (err <= bound).all(), f"{name}: max err {err.max()} over the bound"


def test_bf16_convolution_backward_widening_path_agrees():
    """PYCTORCH_NO_BF16_GEMM=1 (the float32 engine) gives the same gradients within one bfloat16 rounding."""
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import test_lowp_gemm as t\n"
            "print(repr([[r.double().tolist() for r in t._conv_grads(t.pyctorch, c, True, 'bfloat16')[1:]]"
            " for c in (0, 1, 2, 8)]))\n" % os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for flag in ("0", "1"):
        env = dict(os.environ, PYCTORCH_NO_BF16_GEMM=flag, PYTHONPATH=root + os.pathsep + os.path.join(root, "tests"))
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        outs.append(eval(res.stdout))
    for case_a, case_b in zip(*outs):
        for a, b in zip(case_a, case_b):
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=2 ** -7, atol=1e-2)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("shape", [(64, 96), (4, 16, 96), (3, 5, 7, 96), (5, 96)])
def test_linear_with_bias_rounds_once_as_torch(dtype, shape):
    """F.linear with a bias is one addmm (product + bias rounded once), as torch's: a bfloat16 result equals torch's bit
    for bit (float16 and float32 within rounding: torch's GEMMs for them sum in another order)."""
    rs = np.random.RandomState(7)
    x, w, b = rs.randn(*shape), rs.randn(80, 96), rs.randn(80)
    outs = []
    for lib in (pyctorch, torch):
        d = getattr(lib, dtype)
        args = [lib.tensor(a.astype(np.float32)).to(d) for a in (x, w, b)]
        outs.append(np.array(lib.nn.functional.linear(*args).float().tolist()))
    if dtype == "bfloat16":
        np.testing.assert_array_equal(outs[0], outs[1])
    else:
        np.testing.assert_allclose(outs[0], outs[1], rtol=2.0 ** -10 if dtype == "float16" else 1e-5, atol=1e-4)
