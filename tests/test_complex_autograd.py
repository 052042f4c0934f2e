"""Complex autograd: gradients of complex tensors in torch's convention (Note [Complex outputs in autograd] in
csrc/aten/ops_complex.def, Note [Complex formula variants] in pyctorch/autograd/_formulas.py).

Each op runs on the same complex128 (and mixed real float64) leaves in torch and pyctorch; the gradients of two real
losses and of a complex grad_outputs in autograd.grad are compared, and pyctorch's gradcheck / gradgradcheck (which
treat a complex tensor as its real and imaginary parts, as torch's do) check the formulas against finite differences.
"""
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, requires_torch, torch

RNG_SEED = 20


def _arrays(specs, seed=RNG_SEED):
    """One array per spec: ("c", shape) complex128, ("r", shape) float64, ("p", shape) positive float64."""
    rng = np.random.default_rng(seed)
    out = []
    for kind, shape in specs:
        a = rng.standard_normal(shape)
        if kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        elif kind == "p":
            a = np.abs(a) + 0.5
        out.append(a)
    return out


C = lambda *s: ("c", s)  # noqa: E731
R = lambda *s: ("r", s)  # noqa: E731
P = lambda *s: ("p", s)  # noqa: E731

# name -> (fn(L, *leaves), leaf specs)
OPS = {}
for _u in ("neg", "abs", "angle", "sgn", "sqrt", "rsqrt", "reciprocal", "exp", "exp2", "expm1", "log", "log2",
           "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "sigmoid", "conj_physical", "conj", "clone", "positive"):
    OPS[_u] = (lambda L, x, _u=_u: getattr(L, _u)(x), [C(3, 4)])
for _b in ("add", "sub", "mul", "div", "pow", "rsub", "subtract", "multiply", "true_divide", "divide"):
    OPS[_b] = (lambda L, x, y, _b=_b: getattr(L, _b)(x, y), [C(3, 4), C(4)])
    OPS[_b + "_real_other"] = (lambda L, x, y, _b=_b: getattr(L, _b)(x, y), [C(3, 4), R(4)])
    OPS[_b + "_real_input"] = (lambda L, x, y, _b=_b: getattr(L, _b)(x, y), [P(3, 4), C(4)])
OPS.update({
    "add_alpha": (lambda L, x, y: L.add(x, y, alpha=2.5), [C(3), C(3)]),
    "add_complex_alpha": (lambda L, x, y: L.add(x, y, alpha=1 + 2j), [C(3), C(3)]),
    "add_complex_alpha_real_other": (lambda L, x, y: L.add(x, y, alpha=1 + 2j), [C(3), R(3)]),
    "sub_complex_alpha": (lambda L, x, y: L.sub(x, y, alpha=1 - 2j), [C(3), C(3)]),
    "rsub_complex_alpha": (lambda L, x, y: L.rsub(x, y, alpha=0.5 + 2j), [C(3), C(3)]),
    "mul_scalar": (lambda L, x: x * (2 - 3j), [C(3)]),
    "mul_real_by_complex_scalar": (lambda L, x: x * (2 - 3j), [R(3)]),
    "div_scalar": (lambda L, x: (1 + 1j) / x, [C(3)]),
    "pow_scalar": (lambda L, x: x ** 2.5, [C(3)]),
    "pow_complex_scalar": (lambda L, x: x ** (1 + 1j), [C(3)]),
    "pow_scalar_base": (lambda L, x: (1 + 2j) ** x, [C(3)]),
    "pow_negative_real_base": (lambda L, x, y: L.pow(x, y), [R(4), C(4)]),
    "sum": (lambda L, x: x.sum(), [C(3, 4)]),
    "sum_dim": (lambda L, x: x.sum(1, keepdim=True), [C(3, 4)]),
    "mean": (lambda L, x: x.mean(0), [C(3, 4)]),
    "mm": (lambda L, x, y: L.mm(x, y), [C(3, 4), C(4, 2)]),
    "mm_real_other": (lambda L, x, y: L.mm(x, y.to(L.complex128)), [C(3, 4), R(4, 2)]),
    "bmm": (lambda L, x, y: L.bmm(x, y), [C(2, 3, 4), C(2, 4, 2)]),
    # matrix @ vector, vector @ vector and where on complex tensors: no complex forward yet (mv, dot, where's kernel)
    "matmul": (lambda L, x, y: L.matmul(x, y), [C(2, 3, 4), C(4, 2)]),
    "matmul_2d": (lambda L, x, y: x @ y, [C(3, 4), C(4, 2)]),
    "matmul_vector_matrix": (lambda L, x, y: x @ y, [C(4), C(4, 3)]),
    "matmul_broadcast": (lambda L, x, y: x @ y, [C(3, 4), C(2, 4, 2)]),
    "flip": (lambda L, x: x.flip([0, 1]), [C(3, 4)]),
    "fliplr": (lambda L, x: L.fliplr(x), [C(3, 4)]),
    "flipud": (lambda L, x: L.flipud(x), [C(3, 4)]),
    "real": (lambda L, x: x.real, [C(3, 4)]),
    "imag": (lambda L, x: x.imag, [C(3, 4)]),
    "view_as_real": (lambda L, x: L.view_as_real(x), [C(3, 4)]),
    "view_as_complex": (lambda L, x: L.view_as_complex(x), [R(3, 2)]),
    "complex": (lambda L, x, y: L.complex(x, y), [R(3), R(3)]),
    "polar": (lambda L, x, y: L.polar(x, y), [P(3), R(3)]),
    "to_complex": (lambda L, x: x.to(L.complex128) * (1 + 2j), [R(3)]),
    "to_real": (lambda L, x: x.to(L.float64), [C(3)]),
    "copy_into_complex": (lambda L, x, y: L.zeros(3, 4, dtype=L.complex128).copy_(x) * y, [R(3, 4), C(3, 4)]),
    "fft_mul": (lambda L, x: L.fft.rfft(x) * (1 + 2j), [R(8)]),
    "fft_sum": (lambda L, x: L.fft.fft(x).sum(), [C(8)]),
    "ifft": (lambda L, x: L.fft.ifft(x * 2), [C(8)]),
    "irfft": (lambda L, x: L.fft.irfft(x), [C(5)]),
})
# logaddexp and float_power: their formulas' complex variants (ops.def), no longer on ops_complex.def's deny-list
# (a real other of logaddexp is left out: torch's own backward fails an internal check there)
OPS.update({
    "logaddexp": (lambda L, x, y: L.logaddexp(x, y), [C(3, 4), C(4)]),
    "float_power": (lambda L, x: L.float_power(x, 2.5), [C(3, 4)]),
    "float_power_complex_exponent": (lambda L, x, y: L.float_power(x, y), [C(3, 4), C(4)]),
    "float_power_real_base": (lambda L, x, y: L.float_power(x, y), [P(3, 4), C(4)]),
    "float_power_real_exponent": (lambda L, x, y: L.float_power(x, y), [C(3, 4), R(4)]),
    "float_power_complex_scalar": (lambda L, x: L.float_power(x, 1 - 0.5j), [C(3)]),
    "float_power_scalar_base": (lambda L, x: L.float_power(2.0, x), [C(3)]),
})
for _j in ("cat", "stack", "hstack", "vstack", "dstack", "concat", "concatenate"):
    OPS[_j] = (lambda L, x, y, _j=_j: getattr(L, _j)([x, y]), [C(3, 4), C(3, 4)])
OPS["cat_real_part"] = (lambda L, x, y: L.cat([x, y.to(L.complex128)]), [C(3, 4), R(3, 4)])
_VIEWS = {
    "view": lambda L, x: x.view(12), "reshape": lambda L, x: x.reshape(2, 6), "t": lambda L, x: x.t(),
    "transpose": lambda L, x: x.transpose(0, 1), "permute": lambda L, x: x.permute(1, 0),
    "flatten": lambda L, x: x.flatten(), "unflatten": lambda L, x: x.unflatten(1, (2, 2)),
    "squeeze": lambda L, x: x.unsqueeze(0).squeeze(0), "expand": lambda L, x: x[:1].expand(5, 4),
    "broadcast_to": lambda L, x: L.broadcast_to(x, (2, 3, 4)), "narrow": lambda L, x: x.narrow(1, 1, 2),
    "select": lambda L, x: x.select(1, 2), "unbind": lambda L, x: L.unbind(x)[1],
    "split": lambda L, x: x.split(2, 1)[1], "chunk": lambda L, x: x.chunk(2, 0)[0],
    "diagonal": lambda L, x: x.diagonal(), "as_strided": lambda L, x: x.as_strided((2, 2), (1, 2)),
    "unfold": lambda L, x: x.unfold(1, 2, 1), "movedim": lambda L, x: x.movedim(0, 1),
    "index_select": lambda L, x: x.index_select(1, L.tensor([0, 2, 2])), "roll": lambda L, x: x.roll(1, 0),
    "repeat": lambda L, x: x.repeat(2, 1), "diag": lambda L, x: L.diag(x), "diag_embed_1d": lambda L, x: L.diag(x[0]),
    "tensor_split": lambda L, x: x.tensor_split(2, 1)[0], "swapaxes": lambda L, x: x.swapaxes(0, 1),
    "basic_index": lambda L, x: x[1:, ::2], "advanced_index": lambda L, x: x[L.tensor([0, 2])],
    "view_as": lambda L, x: x.view_as(x), "reshape_as": lambda L, x: x.reshape_as(x),
    "expand_as": lambda L, x: x[:1].expand_as(x), "contiguous": lambda L, x: x.t().contiguous(),
    "type_as": lambda L, x: x.type_as(x), "adjoint": lambda L, x: x.adjoint(), "mH": lambda L, x: x.mH,
}
for _n, _f in _VIEWS.items():
    OPS[_n] = (_f, [C(3, 4)])

# in-place ops on complex tensors of a graph (the same formulas as their out-of-place forms)
INPLACE = {
    "mul_": (lambda L, x, y: (x * 1).mul_(y), [C(3), C(3)]),
    "add_alpha_": (lambda L, x, y: (x * 1).add_(y, alpha=2j), [C(3), C(3)]),
    "sub_": (lambda L, x, y: (x * 1).sub_(y), [C(3), R(3)]),
    "div_": (lambda L, x, y: (x * 1).div_(y), [C(3), C(3)]),
    "exp_": (lambda L, x: (x * 1).exp_(), [C(3)]),
    "sqrt_": (lambda L, x: (x * 1).sqrt_(), [C(3)]),
    "pow_": (lambda L, x: (x * 1).pow_(2), [C(3)]),
    "fill_": (lambda L, x: (x * 1).fill_(2.0) * x, [C(3)]),
    "zero_": (lambda L, x: (x * 1).zero_() + x, [C(3)]),
    "copy_": (lambda L, x, y: (x * 1).copy_(y), [C(3), C(3)]),
    "view_mul_": (lambda L, x, y: (lambda b: (b[0].mul_(y), b)[1])(x * 1), [C(2, 3), C(3)]),
    "mul_real_into_complex_": (lambda L, x, y: (x * 1).mul_(y), [C(3), R(3)]),
}
ALL = {**OPS, **INPLACE}


def _leaves(L, specs, seed=RNG_SEED):
    return [L.tensor(a).requires_grad_() for a in _arrays(specs, seed)]


def _loss(out, kind):
    if kind == "abs":
        return out.abs().sum() if out.dtype.is_complex else (out * out).sum()
    return (out * out.conj()).real.sum() if out.dtype.is_complex else (out * out.sin()).sum()


def _grads(L, name, kind):
    fn, specs = ALL[name]
    xs = _leaves(L, specs)
    _loss(fn(L, *xs), kind).backward()
    return [x.grad for x in xs]


@requires_torch
@pytest.mark.parametrize("kind", ["abs", "normsq"])
@pytest.mark.parametrize("name", sorted(ALL))
def test_gradient_matches_torch(name, kind):
    got, expected = _grads(pyctorch, name, kind), _grads(torch, name, kind)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if e is not None:
            assert_same(g, e, rtol=1e-9, atol=1e-10)


def _grad_with_complex_grad_outputs(L, name):
    fn, specs = ALL[name]
    xs = _leaves(L, specs)
    out = fn(L, *xs)
    go = _arrays([("c" if out.dtype.is_complex else "r", tuple(out.shape))], seed=7)[0]
    return L.autograd.grad(out, xs, L.tensor(go, dtype=out.dtype), allow_unused=True)


@requires_torch
@pytest.mark.parametrize("name", sorted(ALL))
def test_autograd_grad_with_complex_grad_outputs(name):
    got, expected = _grad_with_complex_grad_outputs(pyctorch, name), _grad_with_complex_grad_outputs(torch, name)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if e is not None:
            assert_same(g, e, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", sorted(ALL))
def test_gradcheck(name):
    fn, specs = ALL[name]
    xs = _leaves(pyctorch, specs)
    assert pyctorch.autograd.gradcheck(lambda *a: fn(pyctorch, *a), xs)


_GRADGRAD = ["mul", "div", "exp", "log", "sqrt", "reciprocal", "tanh", "sigmoid", "sin", "pow", "pow_scalar", "abs",
             "sgn", "angle", "mm", "sum", "mean", "add_complex_alpha", "mul_real_other", "div_real_input", "real",
             "view_as_real", "cat", "acosh", "atan", "rsqrt", "fft_mul", "mul_"]


@pytest.mark.parametrize("name", _GRADGRAD)
def test_gradgradcheck(name):
    fn, specs = ALL[name]
    xs = _leaves(pyctorch, specs)
    assert pyctorch.autograd.gradgradcheck(lambda *a: fn(pyctorch, *a), xs)


@requires_torch
@pytest.mark.parametrize("name", ["mul", "exp", "sgn", "div_real_input", "mm", "abs"])
def test_double_backward_matches_torch(name):
    def second(L):
        fn, specs = ALL[name]
        xs = _leaves(L, specs)
        out = fn(L, *xs)
        gs = L.autograd.grad(_loss(out, "normsq"), xs, create_graph=True)
        total = sum(((g * g.conj()).real.sum() if g.dtype.is_complex else (g * g).sum()) for g in gs)
        return L.autograd.grad(total, xs)
    for g, e in zip(second(pyctorch), second(torch)):
        assert_same(g, e, rtol=1e-8, atol=1e-10)


# ---- gradcheck on complex inputs and outputs ----

def test_gradcheck_catches_a_wrong_complex_gradient():
    class WrongConj(pyctorch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z  # the right one is g * 2 * z.conj()

    z = pyctorch.tensor([1 + 2j, -0.5 + 1j], dtype=pyctorch.complex128, requires_grad=True)
    assert not pyctorch.autograd.gradcheck(WrongConj.apply, (z,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        pyctorch.autograd.gradcheck(WrongConj.apply, (z,))


@requires_torch
def test_gradcheck_agrees_with_torch_on_a_wrong_complex_gradient():
    def make(L):
        class WrongConj(L.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                return g * 2 * ctx.saved_tensors[0]
        z = L.tensor([1 + 2j, -0.5 + 1j], dtype=L.complex128, requires_grad=True)
        return L.autograd.gradcheck(WrongConj.apply, (z,), raise_exception=False)
    assert make(pyctorch) == make(torch) is False


def test_gradcheck_complex_inputs_without_warning():
    z = pyctorch.tensor([1 + 2j], dtype=pyctorch.complex128, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pyctorch.autograd.gradcheck(lambda a: a.exp(), (z,))


# ---- errors ----

@requires_torch
@pytest.mark.parametrize("how", ["backward", "autograd_grad"])
def test_implicit_grad_of_a_complex_scalar_raises(how):
    def run(L):
        z = L.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        s = (z * z).sum()
        if how == "backward":
            s.backward()
        else:
            L.autograd.grad(s, z)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs") as got:
        run(pyctorch)
    with pytest.raises(RuntimeError) as expected:
        run(torch)
    assert str(got.value) == str(expected.value)


def test_a_complex_leaf_accumulates_a_complex_grad():
    z = pyctorch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (z * z.conj()).real.sum().backward()
    assert z.grad.dtype == pyctorch.complex64
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())


def test_linalg_eig_gradient_of_a_real_input():
    # eig's formula (torch's linalg_eig_backward) solves with the complex V^H; a real input keeps the real part
    # (tests/test_linalg_complex_spectral.py compares the gradients with torch)
    x = pyctorch.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=pyctorch.float64, requires_grad=True)
    vals = pyctorch.linalg.eigvals(x)
    assert vals.requires_grad
    (vals.abs() ** 2).sum().backward()
    # sum |lambda|^2 of a matrix with real eigenvalues: d/dA sum lambda^2 = d/dA trace(A^2) = 2 A^T
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([[2.0, 0.5], [1.0, 3.0]]), rtol=1e-10)


# ---- real paths unchanged ----

def test_conj_of_a_real_tensor_is_free():
    a = pyctorch.randn(3, requires_grad=True)
    b = a * 2
    assert b.conj() is b
    assert a.conj() is a


def test_real_backward_uses_the_formulas_real_variant():
    # Note [Complex formula variants]: the node of a real op runs the variant without conjugates, so its gradient is
    # the same expression as before complex autograd (bit for bit)
    a = pyctorch.tensor([0.3, -1.7, 2.5], dtype=pyctorch.float32, requires_grad=True)
    b = pyctorch.tensor([1.1, 0.2, -0.9], dtype=pyctorch.float32, requires_grad=True)
    (a / b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), (-np.ones(3, np.float32) * a.detach().numpy()
                                                   / (b.detach().numpy() * b.detach().numpy())))
    assert (a * b).grad_fn.name() == "MulBackward0"


@requires_torch
def test_setitem_of_a_complex_tensor():
    def run(L):
        z, w = _leaves(L, [C(3), C()])
        b = z * 1
        b[1] = w * w
        (b * b.conj()).real.sum().backward()
        return z.grad, w.grad
    for g, e in zip(run(pyctorch), run(torch)):
        assert_same(g, e, rtol=1e-12, atol=1e-12)


# ---- forward AD through complex outputs (torch's auto_element_wise: conj(formula(conj(tangent)))) ----

_FORWARD = {
    "exp": lambda L, x: x.exp(), "sin": lambda L, x: x.sin(), "abs": lambda L, x: x.abs(),
    "reciprocal": lambda L, x: x.reciprocal(), "sqrt": lambda L, x: x.sqrt(), "mul": lambda L, x: x * x * (2 - 1j),
    "div": lambda L, x: (1 + 1j) / x, "add_alpha": lambda L, x: L.add(x, x.exp(), alpha=1j), "sum": lambda L, x: x.sum(),
    "mm": lambda L, x: L.mm(x.reshape(2, 2), x.reshape(2, 2)), "conj_mul": lambda L, x: x * (x * 1j).exp(),
}
# not yet: view_as_real / view_as_complex (hence .real, .imag) and sgn / angle have no forward formula here


@requires_torch
@pytest.mark.parametrize("name", sorted(_FORWARD))
def test_forward_ad_matches_torch(name):
    def run(L):
        import importlib
        fwAD = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        x, t = (L.tensor(a) for a in _arrays([C(4), C(4)]))
        with fwAD.dual_level():
            return fwAD.unpack_dual(_FORWARD[name](L, fwAD.make_dual(x, t))).tangent
    assert_same(run(pyctorch), run(torch), rtol=1e-10, atol=1e-12)
