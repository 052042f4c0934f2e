"""pow(Tensor, Scalar) for the exponents torch's kernel recognises (2, 3, -2 by products; 0.5, -0.5, -1 as sqrt,
rsqrt and reciprocal, for float32, float64 and bfloat16): the same bits as those formulas in the tensor's compute type (numpy, always) and as torch."""
import numpy as np
import pytest

import pyctorch

try:
    import torch
except ImportError:  # the numpy checks still run
    torch = None

SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38, 1e-20]


def values(dtype, n=4099, seed=0):
    rs = np.random.RandomState(seed)
    x = np.concatenate([rs.randn(n) * 10.0 ** rs.randint(-5, 6, n), SPECIAL]).astype(dtype)
    return x


def expected(x, e):
    """the formula torch's CPU kernel applies, in x's own dtype (float32 products round after each multiply)"""
    one = x.dtype.type(1)
    with np.errstate(all="ignore"):
        return {2: x * x, 3: x * x * x, -2: one / (x * x), 0.5: np.sqrt(x), -0.5: one / np.sqrt(x), -1: one / x}[e]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", [2, 3, -2, 0.5, -0.5, -1, 2.0, 3.0, -2.0, -1.0])
def test_special_exponents_match_the_formula_bit_for_bit(dtype, e):
    x = values(dtype)
    got = pyctorch.pow(pyctorch.tensor(x), e).numpy()
    np.testing.assert_array_equal(got, expected(x, e))
    # the ** operator, a strided input (every other element) and a scalar that is a 0-d float
    np.testing.assert_array_equal((pyctorch.tensor(x) ** e).numpy(), expected(x, e))
    np.testing.assert_array_equal(pyctorch.tensor(x)[::2].pow(e).numpy(), expected(x[::2], e))


@pytest.mark.parametrize("e", [2, 3, -2, 0.5, -0.5, -1])
def test_pow_is_the_unary_op_to_the_bit(e):
    x = pyctorch.tensor(values(np.float32))
    other = {0.5: pyctorch.sqrt, -0.5: pyctorch.rsqrt, -1: pyctorch.reciprocal}.get(e)
    if other is not None:
        assert pyctorch.equal(pyctorch.pow(x, e).nan_to_num(7.0), other(x).nan_to_num(7.0))


@pytest.mark.parametrize("e", [2, 3, -2, 0.5, -0.5, -1, 1, 0, 1.5])
def test_out_and_inplace(e):
    x = values(np.float32)
    out = pyctorch.empty(len(x), dtype=pyctorch.float64)
    pyctorch.pow(pyctorch.tensor(x), e, out=out)
    ref = pyctorch.pow(pyctorch.tensor(x), e).double()
    assert pyctorch.equal(out.nan_to_num(7.0), ref.nan_to_num(7.0))
    y = pyctorch.tensor(x)
    y.pow_(e)
    assert pyctorch.equal(y.nan_to_num(7.0), pyctorch.pow(pyctorch.tensor(x), e).nan_to_num(7.0))
    if e in (0.5, -0.5, 1.5):  # a float result cannot go back into an integer tensor
        with pytest.raises(RuntimeError, match="can't be cast"):
            pyctorch.arange(4).pow_(e)
    if e == -1:
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            pyctorch.arange(4).pow_(e)


def test_integer_tensor_by_a_float_exponent_is_float():
    x = pyctorch.arange(1, 6)
    for e in (0.5, -0.5, -1.0, 3.0, -2.0):
        r = x ** e
        assert r.dtype == pyctorch.float32
        np.testing.assert_array_equal(r.numpy(), expected(np.arange(1, 6).astype(np.float32), e))
    assert (x ** 3).dtype == pyctorch.int64 and (x ** 3).tolist() == [1, 8, 27, 64, 125]
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        x ** -1


def test_complex_exponent_is_not_taken_for_its_real_part():
    z = pyctorch.tensor([1 + 1j, 2 - 0.5j], dtype=pyctorch.complex64)
    got = (z ** (2 + 1j)).numpy()
    np.testing.assert_allclose(got, np.array([1 + 1j, 2 - 0.5j], dtype=np.complex64) ** (2 + 1j), rtol=1e-5)


@pytest.mark.skipif(torch is None, reason="torch is not installed: the comparison with torch is skipped")
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("e", [2, 3, -2, 0.5, -0.5, -1, 1, 0, 2.0, 3.0, -1.0])
def test_matches_torch(dtype, e):
    """float16 by 0.5, -0.5, -1 goes through pow on torch's CPU (pow(-inf, 0.5) is inf, not sqrt's NaN)"""
    x = values(np.float32)
    t = torch.pow(torch.tensor(x).to(getattr(torch, dtype)), e)
    p = pyctorch.pow(pyctorch.tensor(x).to(getattr(pyctorch, dtype)), e)
    assert str(p.dtype) == str(t.dtype)
    tn, pn = t.float().numpy(), p.float().numpy()
    if dtype == "bfloat16" and e in (3, -2):
        # torch rounds bfloat16 products after each multiply (Vectorized<BFloat16>); the loops here round once
        np.testing.assert_allclose(pn, tn, rtol=2 ** -7, equal_nan=True)
    elif dtype in ("float32", "float64") and e == 0.5:
        # torch's float sqrt is MKL's (1 ulp); pyctorch's is IEEE-exact
        np.testing.assert_allclose(pn, tn, rtol=2 ** -23, equal_nan=True)
    else:
        np.testing.assert_array_equal(pn, tn)


@pytest.mark.skipif(torch is None, reason="torch is not installed: the comparison with torch is skipped")
@pytest.mark.parametrize("e", [2, 3, -2, 0.5, -0.5, -1, 1.5])
def test_gradient_matches_torch(e):
    x = np.random.RandomState(1).rand(64).astype(np.float32) + 0.5
    xt, xp = torch.tensor(x, requires_grad=True), pyctorch.tensor(x, requires_grad=True)
    torch.pow(xt, e).sum().backward()
    pyctorch.pow(xp, e).sum().backward()
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_float32_vector_pow_keeps_the_double_pow_bits():
    """float32 pow through libmvec's double pow (vecmath.c): pow in double rounded once, the exponents 2, 3 and -2
    of a tensor exponent as the float products of the table loop, lane by lane; ragged tails and scalar exponents."""
    rng = np.random.default_rng(5)
    a = rng.uniform(0.01, 10, 4099).astype(np.float32)
    b = rng.uniform(-4, 4, 4099).astype(np.float32)
    b[::7], b[::11], b[::13] = 3, -2, 2
    want = (a.astype(np.float64) ** b.astype(np.float64)).astype(np.float32)
    for e, f in ((3, lambda v: (v * v) * v), (-2, lambda v: np.float32(1) / (v * v)), (2, lambda v: v * v)):
        want[b == e] = f(a[b == e])
    for n in (4099, 17, 16, 15, 1):
        got = pyctorch.pow(pyctorch.tensor(a[:n]), pyctorch.tensor(b[:n])).numpy()
        np.testing.assert_array_equal(got, want[:n])
    for e in (1.5, -0.75, 2.5, 7.0):
        got = (pyctorch.tensor(a) ** e).numpy()
        np.testing.assert_array_equal(got, (a.astype(np.float64) ** e).astype(np.float32))


def test_float32_vector_pow_avx2_loop():
    """The AVX2 loop (PYCTORCH_NO_AVX512=1 selects it at run time): the same double-pow bits."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, pyctorch as P; r = np.random.default_rng(1); a = r.uniform(0.01, 9, 1003)"
            ".astype(np.float32); b = r.uniform(-3, 3, 1003).astype(np.float32); "
            "w = (a.astype(np.float64) ** b.astype(np.float64)).astype(np.float32); "
            "print(np.array_equal(P.pow(P.tensor(a), P.tensor(b)).numpy(), w))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYCTORCH_NO_AVX512="1"), timeout=120)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
