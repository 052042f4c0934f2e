"""complex64 / complex128 beyond pointwise arithmetic (issue 20): the random fills, where and the masked and index ops,
triangles, reductions (prod, cumsum, cumprod, logsumexp, std / var, trace, any / all), pointwise ops with extra
arguments (addcmul, addcdiv, lerp, nan_to_num, square), linspace / logspace with complex endpoints and the composites
over them (kron, diff, trapezoid, vander...). Which ops take complex tensors: csrc/aten/ops_complex.def.

Every check runs the same call in torch and pyctorch on the same complex inputs (contiguous, transposed and broadcast
ones, both complex dtypes) and compares values, dtypes and shapes; the seeded random fills must be bit-identical to
torch's; gradients of a real loss must match torch's (Note [Complex formula variants] in
pyctorch/autograd/_formulas.py) and pass pyctorch's gradcheck.
"""
import numpy as np
import pytest

import pyctorch
from conftest import assert_same, assert_same_outcome, requires_torch, torch

DTYPES = ["complex64", "complex128"]


def _array(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _make(L, shape, dtype, layout="c", seed=0):
    """A complex tensor of `shape`: contiguous ("c") or the transpose of a contiguous one ("t", last two dims)."""
    if layout == "t":
        a = _array(shape[:-2] + (shape[-1], shape[-2]), seed)
        return L.tensor(a, dtype=getattr(L, dtype)).transpose(-1, -2)
    return L.tensor(_array(shape, seed), dtype=getattr(L, dtype))


def both(fn, **kw):
    return assert_same_outcome(lambda: fn(pyctorch), lambda: fn(torch), **kw)


# ---- seeded random fills: torch's numbers, bit for bit ----

RANDOM = {
    "randn": lambda L, d: L.randn(5, dtype=d),
    "randn_long": lambda L, d: L.randn(3, 11, dtype=d),  # 66 reals: torch's 16-wide normal kernel
    "rand": lambda L, d: L.rand(7, dtype=d),
    "rand_long": lambda L, d: L.rand(4, 9, dtype=d),
    "randn_like": lambda L, d: L.randn_like(L.zeros(2, 13, dtype=d)),
    "rand_like": lambda L, d: L.rand_like(L.zeros(3, dtype=d)),
    "normal_": lambda L, d: L.zeros(4, 5, dtype=d).normal_(1.5, 3.0),
    "normal_short": lambda L, d: L.zeros(3, dtype=d).normal_(-1.0, 0.5),
    "uniform_": lambda L, d: L.zeros(4, 6, dtype=d).uniform_(-2, 3),
    "normal_strided": lambda L, d: (lambda z: (z[:, ::2].normal_(), z)[1])(L.zeros(4, 10, dtype=d)),
    "uniform_transposed": lambda L, d: L.zeros(5, 6, dtype=d).t().uniform_(),
    "randn_generator": lambda L, d: L.randn(20, dtype=d, generator=L.Generator().manual_seed(3)),
}


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_bit_identical(name, dtype):
    def run(L):
        L.manual_seed(1234)
        return RANDOM[name](L, getattr(L, dtype))
    assert_same(run(pyctorch), run(torch), exact=True)


def test_randn_complex_statistics():
    # E|z|^2 = 1 for the standard complex normal: each part has variance 1/2
    pyctorch.manual_seed(0)
    z = pyctorch.randn(20000, dtype=pyctorch.complex128)
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.05
    assert abs(float(z.real.var()) - 0.5) < 0.03 and abs(float(z.imag.var()) - 0.5) < 0.03


# ---- forward values against torch ----

_IDX = lambda L: L.tensor([[0, 1, 3], [2, 0, 1], [3, 3, 0]])  # noqa: E731
_INF, _NAN = float("inf"), float("nan")


def _non_finite(x):
    """x with NaN and infinite real and imaginary parts here and there."""
    x = x.masked_fill(x.real > 1, complex(_NAN, _INF))
    return x.masked_fill(x.imag < -0.5, complex(-_INF, 2.0)).masked_fill(x.imag > 1.2, complex(0.5, -_INF))

# name -> (fn(L, *inputs), input shapes); each input is complex, made in the parametrized dtype and layout
OPS = {
    "where": (lambda L, x, y: L.where(x.real > 0, x, y), [(3, 4), (3, 4)]),
    "where_broadcast": (lambda L, x, y: L.where(x.real > 0, x, y[:1]), [(3, 4), (3, 4)]),
    "where_scalar": (lambda L, x: L.where(x.imag > 0, x, 2 - 1j), [(3, 4)]),
    "where_real_other": (lambda L, x: L.where(x.imag > 0, x, x.real), [(3, 4)]),
    "masked_fill": (lambda L, x: x.masked_fill(x.real > 0, 1 + 2j), [(3, 4)]),
    "masked_fill_real": (lambda L, x: x.masked_fill(x.real > 0, 0.5), [(3, 4)]),
    "masked_select": (lambda L, x: x.masked_select(x.imag < 0), [(3, 4)]),
    "masked_scatter": (lambda L, x, y: x.masked_scatter(x.real > 0, y), [(3, 4), (3, 4)]),
    "triu": (lambda L, x: L.triu(x), [(3, 4)]),
    "tril": (lambda L, x: L.tril(x, -1), [(3, 4)]),
    "triu_": (lambda L, x: (x * 1).triu_(1), [(3, 4)]),
    "tril_batched": (lambda L, x: L.tril(x.reshape(3, 2, 2)), [(3, 4)]),
    "diag_embed": (lambda L, x: L.diag_embed(x), [(3, 4)]),
    "trace": (lambda L, x: L.trace(x), [(3, 4)]),
    "gather": (lambda L, x: x.gather(1, _IDX(L)), [(3, 4)]),
    "scatter": (lambda L, x, y: x.scatter(1, _IDX(L), y[:, :3]), [(3, 4), (3, 4)]),
    "scatter_value": (lambda L, x: x.scatter(1, _IDX(L), 2j), [(3, 4)]),
    "scatter_add": (lambda L, x, y: x.scatter_add(1, _IDX(L), y[:, :3]), [(3, 4), (3, 4)]),
    "scatter_reduce_add": (lambda L, x, y: x.scatter(1, _IDX(L), y[:, :3], reduce="add"), [(3, 4), (3, 4)]),
    "scatter_reduce_multiply": (lambda L, x, y: x.scatter(1, _IDX(L), y[:, :3], reduce="multiply"), [(3, 4), (3, 4)]),
    "scatter_value_multiply": (lambda L, x: x.scatter(1, _IDX(L), 2 + 1j, reduce="multiply"), [(3, 4)]),
    "index_add": (lambda L, x, y: x.index_add(0, L.tensor([0, 2, 0]), y[:, :4], alpha=2), [(3, 4), (3, 4)]),
    "index_copy": (lambda L, x, y: x.index_copy(0, L.tensor([2, 0]), y[:2]), [(3, 4), (3, 4)]),
    "index_fill": (lambda L, x: x.index_fill(1, L.tensor([0, 2]), -1j), [(3, 4)]),
    "index_put": (lambda L, x, y: x.index_put((L.tensor([0, 2]),), y[0]), [(3, 4), (3, 4)]),
    "index_put_accumulate": (lambda L, x, y: x.index_put((L.tensor([0, 0]),), y[:2], accumulate=True),
                             [(3, 4), (3, 4)]),
    "setitem_mask": (lambda L, x, y: (lambda z: (z.__setitem__(z.real > 0, y[z.real > 0]), z)[1])(x * 1),
                     [(3, 4), (3, 4)]),
    "take": (lambda L, x: L.take(x, L.tensor([0, 5, 11, 5])), [(3, 4)]),
    "put": (lambda L, x, y: x.put(L.tensor([0, 5, 11]), y[0, :3]), [(3, 4), (3, 4)]),
    "put_accumulate": (lambda L, x, y: x.put(L.tensor([1, 1, 2]), y[0, :3], accumulate=True), [(3, 4), (3, 4)]),
    "nonzero": (lambda L, x: L.nonzero(x * (x.real > 0)), [(3, 4)]),
    "argwhere": (lambda L, x: L.argwhere(x * (x.real > 0)), [(3, 4)]),
    "count_nonzero": (lambda L, x: L.count_nonzero(x * (x.real > 0)), [(3, 4)]),
    "count_nonzero_dim": (lambda L, x: L.count_nonzero(x * (x.imag > 0), dim=1), [(3, 4)]),
    "count_nonzero_imag_only": (lambda L, x: L.count_nonzero(x.imag * 1j), [(3, 4)]),
    "any": (lambda L, x: (x * (x.real > 1)).any(1), [(3, 4)]),
    "all": (lambda L, x: (x * (x.real > -1)).all(0), [(3, 4)]),
    "bool": (lambda L, x: [bool(x[0, 0]), bool(x[0, 0] * 0), bool(x[0, 0].real * 0 + 1j)], [(3, 4)]),
    "tile": (lambda L, x: x.tile(2, 1), [(3, 4)]),
    "repeat_interleave": (lambda L, x: x.repeat_interleave(2, 0), [(3, 4)]),
    "constant_pad": (lambda L, x: L.constant_pad_nd(x, (1, 2, 0, 1), 1 + 1j), [(3, 4)]),
    "pad": (lambda L, x: L.nn.functional.pad(x, (1, 2), value=0.5), [(3, 4)]),
    "reflect_pad": (lambda L, x: L.nn.functional.pad(x[None], (1, 2), mode="reflect"), [(3, 4)]),
    "block_diag": (lambda L, x, y: L.block_diag(x, y[:2]), [(3, 4), (3, 4)]),
    "kron": (lambda L, x, y: L.kron(x, y[:2, :2]), [(3, 4), (3, 4)]),
    "eye": (lambda L, x: L.eye(3, 4, dtype=x.dtype), [(3, 4)]),
    "prod": (lambda L, x: x.prod(), [(3, 4)]),
    "prod_dim": (lambda L, x: x.prod(0), [(3, 4)]),
    "prod_keepdim": (lambda L, x: x.prod(1, keepdim=True), [(3, 4)]),
    "prod_long": (lambda L, x: (x / x.abs()).reshape(-1).repeat(40).prod(), [(3, 4)]),
    "cumsum": (lambda L, x: x.cumsum(1), [(3, 4)]),
    "cumsum_dim0": (lambda L, x: L.cumsum(x, 0), [(3, 4)]),
    "cumprod": (lambda L, x: x.cumprod(1), [(3, 4)]),
    "cumprod_dim0": (lambda L, x: L.cumprod(x, 0), [(3, 4)]),
    "logsumexp": (lambda L, x: L.logsumexp(x, 1), [(3, 4)]),
    "logsumexp_all": (lambda L, x: L.logsumexp(x * 30, (0, 1), keepdim=True), [(3, 4)]),
    "std": (lambda L, x: x.std(), [(3, 4)]),
    "std_dim": (lambda L, x: x.std(1, keepdim=True), [(3, 4)]),
    "var": (lambda L, x: x.var(0), [(3, 4)]),
    "var_correction": (lambda L, x: L.var(x, 1, correction=0), [(3, 4)]),
    "var_unbiased_false": (lambda L, x: x.var(unbiased=False), [(3, 4)]),
    "std_mean": (lambda L, x: L.std_mean(x, 1), [(3, 4)]),
    "var_mean": (lambda L, x: L.var_mean(x, 0, keepdim=True), [(3, 4)]),
    "square": (lambda L, x: L.square(x), [(3, 4)]),
    "square_": (lambda L, x: (x * 1).square_(), [(3, 4)]),
    "pow_int": (lambda L, x: x ** 3, [(3, 4)]),
    "addcmul": (lambda L, x, y: L.addcmul(x, y, x[:1], value=2 - 1j), [(3, 4), (3, 4)]),
    "addcmul_real_value": (lambda L, x, y: L.addcmul(x, y, y, value=0.5), [(3, 4), (3, 4)]),
    "addcdiv": (lambda L, x, y: L.addcdiv(x, y, x, value=1j), [(3, 4), (3, 4)]),
    "lerp": (lambda L, x, y: L.lerp(x, y, 0.3), [(3, 4), (3, 4)]),
    "lerp_far": (lambda L, x, y: L.lerp(x, y, 0.8), [(3, 4), (3, 4)]),
    "lerp_complex_weight": (lambda L, x, y: L.lerp(x, y, 0.2 + 0.5j), [(3, 4), (3, 4)]),
    "lerp_tensor_weight": (lambda L, x, y: L.lerp(x, y, y * 0.3), [(3, 4), (3, 4)]),
    "nan_to_num": (lambda L, x: L.nan_to_num(_non_finite(x), nan=1.5, posinf=9.0), [(3, 4)]),
    "nan_to_num_defaults": (lambda L, x: L.nan_to_num(_non_finite(x)), [(3, 4)]),
    "diff": (lambda L, x: L.diff(x, dim=1), [(3, 4)]),
    "trapezoid": (lambda L, x: L.trapezoid(x), [(3, 4)]),
    "cumulative_trapezoid": (lambda L, x: L.cumulative_trapezoid(x, dim=0), [(3, 4)]),
    "vander": (lambda L, x: L.linalg.vander(x[0]), [(3, 4)]),
    "logaddexp": (lambda L, x, y: L.logaddexp(x, y[1:2]), [(3, 4), (3, 4)]),
    "logaddexp_non_finite": (lambda L, x, y: L.view_as_real(L.logaddexp(_non_finite(x), _non_finite(y).flip(0))),
                             [(3, 4), (3, 4)]),
    "logcumsumexp": (lambda L, x: L.logcumsumexp(x, 1), [(3, 4)]),
    "logcumsumexp_dim0": (lambda L, x: L.logcumsumexp(x * 20, 0), [(3, 4)]),
    "float_power": (lambda L, x: L.float_power(x, 2.5), [(3, 4)]),
    "float_power_real_base": (lambda L, x: L.float_power(x.real.abs(), x), [(3, 4)]),
    "ldexp": (lambda L, x: L.ldexp(x, L.tensor([1, 2, 3, 0])), [(3, 4)]),
    "sinc": (lambda L, x: L.sinc(x), [(3, 4)]),
    "sum_real_dtype": (lambda L, x: x.sum(0, dtype=L.float64), [(3, 4)]),
    "mean_real_dtype": (lambda L, x: x.mean(1, dtype=L.float64), [(3, 4)]),
    "div_rounding_none": (lambda L, x, y: L.div(x, y, rounding_mode=None), [(3, 4), (3, 4)]),
    "cov": (lambda L, x: L.cov(x), [(3, 4)]),
    "corrcoef": (lambda L, x: L.corrcoef(x), [(3, 4)]),
}

LINSPACE = {
    "linspace": lambda L, d: L.linspace(1 + 2j, 3 - 1j, 7, dtype=d),
    "linspace_inferred": lambda L, d: L.linspace(1 + 2j, 3, 5),
    "linspace_real_ends": lambda L, d: L.linspace(-1, 3, 6, dtype=d),
    "linspace_one": lambda L, d: L.linspace(1 + 2j, 3, 1, dtype=d),
    "linspace_two": lambda L, d: L.linspace(0.5j, 3, 2, dtype=d),
    "linspace_bad_dtype": lambda L, d: L.linspace(1 + 2j, 3, 5, dtype=L.float32),
    "logspace": lambda L, d: L.logspace(1 + 1j, 2 - 0.5j, 6, dtype=d),
    "logspace_base": lambda L, d: L.logspace(0.5j, 2, 4, base=2, dtype=d),
    "logspace_one": lambda L, d: L.logspace(1j, 2, 1, dtype=d),
}

# torch's own kernels round differently in a few ops (complex products accumulate in another order, the logsumexp
# shift, the pow of logspace): a relative tolerance of a few ulps in the dtype
TOL = {"complex64": dict(rtol=2e-5, atol=2e-6), "complex128": dict(rtol=1e-12, atol=1e-13)}


def _inputs(L, shapes, dtype, layout):
    return [_make(L, s, dtype, layout if len(s) > 1 else "c", seed=k) for k, s in enumerate(shapes)]


@requires_torch
@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_torch(name, dtype, layout):
    fn, shapes = OPS[name]
    got = fn(pyctorch, *_inputs(pyctorch, shapes, dtype, layout))
    expected = fn(torch, *_inputs(torch, shapes, dtype, layout))
    assert_same(got, expected, **TOL[dtype])


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(LINSPACE))
def test_linspace_logspace(name, dtype):
    both(lambda L: LINSPACE[name](L, getattr(L, dtype)), **TOL[dtype])


@requires_torch
def test_out_and_inplace_forms():
    for dtype in DTYPES:
        def run(L):
            x = _make(L, (3, 4), dtype)
            o = L.empty(0, dtype=x.dtype.to_real())
            L.std(x, 1, out=o)
            c = L.empty(0, dtype=x.dtype)
            L.cumsum(x, 0, out=c)
            p = L.empty(0, dtype=x.dtype)
            L.prod(x, 1, out=p)
            y = x.clone()
            y.masked_fill_(y.real > 0, 3j)
            y.cumprod_(1)
            y.addcmul_(x, x, value=0.5j)
            return o, c, p, y
        for g, e in zip(run(pyctorch), run(torch)):
            assert_same(g, e, **TOL[dtype])


@requires_torch
def test_refusals_match_torch():
    # ops torch refuses on complex tensors stay refused, with its error type
    for call in [lambda L: L.clamp(_make(L, (3,), "complex64"), 0, 1),
                 lambda L: L.cummax(_make(L, (3,), "complex64"), 0),
                 lambda L: L.deg2rad(_make(L, (3,), "complex64")),
                 lambda L: L.div(_make(L, (3,), "complex64"), 2, rounding_mode="trunc"),
                 lambda L: _make(L, (3,), "complex64").float_power_(2),
                 lambda L: L.float_power(_make(L, (3,), "complex64"), 2, out=L.empty(3)),
                 lambda L: L.scatter_reduce(_make(L, (3,), "complex64"), 0, L.tensor([0, 1]),
                                            _make(L, (2,), "complex64"), "amax")]:
        both(call)


# ---- gradients of a real loss: torch's conjugate Wirtinger convention ----

GRADS = ["where", "masked_fill", "masked_select", "masked_scatter", "triu", "tril", "diag_embed", "trace", "gather",
         "scatter", "scatter_add", "index_add", "index_copy", "index_fill", "index_put", "take", "put", "tile",
         "repeat_interleave", "constant_pad", "kron", "prod", "prod_dim", "cumsum", "cumprod", "cumprod_dim0",
         "logsumexp", "std", "std_dim", "var", "var_correction", "std_mean", "var_mean", "square", "pow_int", "addcmul",
         "addcdiv", "lerp", "lerp_far", "lerp_complex_weight", "lerp_tensor_weight", "diff", "trapezoid",
         "cumulative_trapezoid", "vander", "cov", "logcumsumexp", "sinc", "ldexp"]


def _loss(out):
    outs = out if isinstance(out, (tuple, list)) else [out]
    total = 0
    for o in outs:
        total = total + ((o * o.conj()).real.sum() if o.dtype.is_complex else (o * o).sum())
    return total


def _grads(L, name):
    fn, shapes = OPS[name]
    xs = [x.requires_grad_() for x in _inputs(L, shapes, "complex128", "c")]
    _loss(fn(L, *xs)).backward()
    return [x.grad for x in xs]


@requires_torch
@pytest.mark.parametrize("name", GRADS)
def test_gradient_matches_torch(name):
    got, expected = _grads(pyctorch, name), _grads(torch, name)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if e is not None:
            assert_same(g, e, rtol=1e-9, atol=1e-10)


_GRADCHECK = ["prod", "prod_dim", "cumprod", "logsumexp", "std_dim", "var", "square", "addcmul", "addcdiv", "lerp",
              "lerp_complex_weight", "where", "trace", "cumsum", "logcumsumexp"]


@pytest.mark.parametrize("name", _GRADCHECK)
def test_gradcheck(name):
    fn, shapes = OPS[name]
    xs = [x.requires_grad_() for x in _inputs(pyctorch, [tuple(min(d, 3) for d in s) for s in shapes],
                                              "complex128", "c")]
    assert pyctorch.autograd.gradcheck(lambda *a: fn(pyctorch, *a), xs)


@requires_torch
def test_prod_gradient_with_a_zero():
    def run(L):
        x = L.tensor([[1 + 1j, 0j, 2 - 1j], [0.5j, 1.5, -1 + 2j]], dtype=L.complex128, requires_grad=True)
        _loss(x.prod(1)).backward()
        return x.grad
    assert_same(run(pyctorch), run(torch), rtol=1e-12, atol=1e-12)


def test_logaddexp_and_float_power_are_recorded():
    # Note [Complex outputs in autograd] (ops_complex.def): their complex formulas exist now (gradients against torch
    # and gradcheck: tests/test_complex_autograd.py)
    z = _make(pyctorch, (3,), "complex128").requires_grad_()
    assert pyctorch.logaddexp(z, z).requires_grad
    assert pyctorch.float_power(z, 2).requires_grad


# ---- the complex gaps closed against torch: 0-d selections, median of nothing, softmax to a real dtype ----

def _scalar(L, dtype, layout="c"):
    return _make(L, (2, 3), dtype, layout)[1, 2]


SELECTIONS = {
    "cummax_0d": lambda L, d: L.cummax(_scalar(L, d), 0),
    "cummin_0d": lambda L, d: L.cummin(_scalar(L, d), -1),
    "kthvalue_0d": lambda L, d: L.kthvalue(_scalar(L, d), 1),
    "kthvalue_0d_keepdim": lambda L, d: L.kthvalue(_scalar(L, d), 1, 0, True),
    "mode_0d": lambda L, d: L.mode(_scalar(L, d)),
    "mode_0d_keepdim": lambda L, d: _scalar(L, d).mode(0, keepdim=True),
    "median_empty": lambda L, d: L.median(L.zeros(0, 3, dtype=getattr(L, d))),
    "nanmedian_empty": lambda L, d: L.nanmedian(L.zeros(2, 0, dtype=getattr(L, d)).t()),
    "softmax_real_dtype": lambda L, d: L.softmax(_make(L, (3, 4), d, "t"), 0, dtype=L.float64),
    "log_softmax_real_dtype": lambda L, d: L.log_softmax(_make(L, (3, 4), d), 1, dtype=L.float32),
    "softmax_method_real_dtype": lambda L, d: _make(L, (3, 4), d).softmax(-1, dtype=L.float64),
    # what torch refuses stays refused, with its error
    "cummax_1d": lambda L, d: L.cummax(_make(L, (3,), d), 0),
    "cummin_2d": lambda L, d: L.cummin(_make(L, (2, 3), d), 1),
    "kthvalue_2d": lambda L, d: L.kthvalue(_make(L, (2, 3), d), 1),
    "kthvalue_0d_bad_k": lambda L, d: L.kthvalue(_scalar(L, d), 2),
    "cummax_0d_bad_dim": lambda L, d: L.cummax(_scalar(L, d), 1),
    "mode_2d": lambda L, d: L.mode(_make(L, (2, 3), d)),
    "median": lambda L, d: L.median(_make(L, (2, 3), d)),
    "median_0d": lambda L, d: L.median(_scalar(L, d)),
    "nanmedian": lambda L, d: L.nanmedian(_make(L, (2, 3), d)),
    "median_dim": lambda L, d: L.median(_make(L, (2, 3), d), 0),
    "median_dim_0d": lambda L, d: L.median(_scalar(L, d), 0),
    "median_dim_empty": lambda L, d: L.median(L.zeros(0, 3, dtype=getattr(L, d)), 1),
    "nanmedian_dim": lambda L, d: L.nanmedian(_make(L, (2, 3), d), 1),
    "softmax": lambda L, d: L.softmax(_make(L, (3, 4), d), 0),
    "softmax_complex_dtype": lambda L, d: L.softmax(_make(L, (3, 4), d), 1, dtype=L.complex128),
    "log_softmax": lambda L, d: L.log_softmax(_make(L, (3, 4), d), -1),
}


@requires_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_and_softmax_gaps(name, dtype):
    # log_softmax_real_dtype computes in float32: complex64's tolerance
    both(lambda L: SELECTIONS[name](L, dtype), **TOL["complex64" if name == "log_softmax_real_dtype" else dtype])


GAP_GRADS = {
    "softmax_real_dtype": lambda L, x: L.softmax(x.t(), 0, dtype=L.float64),
    "log_softmax_real_dtype": lambda L, x: L.log_softmax(x, 1, dtype=L.float64),
}
# torch's autograd refuses complex outputs of the selections (after the forward): so does pyctorch's
GAP_GRAD_REFUSED = {
    "cummax_0d": lambda L, x: L.cummax(x[1, 2], 0),
    "cummin_0d": lambda L, x: L.cummin(x[0, 1], -1),
    "kthvalue_0d": lambda L, x: L.kthvalue(x[2, 0], 1),
    "mode_0d": lambda L, x: L.mode(x[1, 1], 0, keepdim=True),
    "median_empty": lambda L, x: L.median(x[:0]),
    "nanmedian_empty": lambda L, x: L.nanmedian(x[:, :0]),
}


@requires_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(GAP_GRADS))
def test_softmax_real_dtype_gradients(name):
    def run(L):
        x = _make(L, (3, 4), "complex128").requires_grad_()
        _loss(GAP_GRADS[name](L, x) * 1.5).backward()
        return x.grad
    assert_same(run(pyctorch), run(torch), rtol=1e-12, atol=1e-12)


@requires_torch
@pytest.mark.parametrize("name", sorted(GAP_GRAD_REFUSED))
def test_selection_gradients_refused_as_torch(name):
    both(lambda L: GAP_GRAD_REFUSED[name](L, _make(L, (3, 4), "complex128").requires_grad_()))
    with (pyctorch.no_grad()):
        GAP_GRAD_REFUSED[name](pyctorch, _make(pyctorch, (3, 4), "complex128").requires_grad_())


# ---- complex NaN and infinity edges, as torch ----

_INF, _NAN = float("inf"), float("nan")
NONFINITE = {
    # torch's mean divides the complex sum by the count as a complex number: a NaN or infinite part spreads
    "mean": lambda L, d: L.tensor([complex(_NAN, 0), complex(0, _INF)], dtype=d).mean(),
    "mean_dim": lambda L, d: L.tensor([[complex(_INF, 1), 2j], [complex(1, _NAN), 1.0], [-0.0 + 1j, 3.0]], dtype=d).mean(1),
    "mean_negative_zero": lambda L, d: L.tensor([complex(-0.0, 1.0)], dtype=d).mean(),
    "mean_out": lambda L, d: L.mean(L.tensor([[complex(_INF, 1), 2j]], dtype=d), 0, out=L.empty(2, dtype=d)),
    "var_mean_keeps_parts": lambda L, d: L.var_mean(L.tensor([complex(_NAN, 0), complex(0, _INF)], dtype=d)),
    "sum_keeps_parts": lambda L, d: L.tensor([complex(_NAN, 0), complex(0, _INF)], dtype=d).sum(),
    # torch's add is a + alpha * b for every alpha: an infinite part of b makes the other part NaN
    "add_inf": lambda L, d: L.tensor([1 + 0j, 2j, complex(_INF, 1)], dtype=d) + L.tensor([_INF, -_INF, 1.0]),
    "add_nan": lambda L, d: L.tensor([1 + 0j, 2j], dtype=d) + L.tensor([complex(_NAN, 0), complex(0, _INF)], dtype=d),
    "sub_inf": lambda L, d: L.tensor([1 + 0j, 2j], dtype=d) - _INF,
    "rsub_inf": lambda L, d: L.rsub(L.tensor([complex(_INF, 0), 2j], dtype=d), 1.0),
    "add_alpha_inf": lambda L, d: L.add(L.tensor([1 + 0j], dtype=d), L.tensor([complex(_INF, 0)], dtype=d), alpha=2),
    # linspace: the parts apart
    "linspace_nan_start": lambda L, d: L.linspace(_NAN, 1.0, 5, dtype=d),
    "linspace_nan_end": lambda L, d: L.linspace(0, _NAN, 4, dtype=d),
    "linspace_nan_real_part": lambda L, d: L.linspace(complex(_NAN, 1), 1.0, 6, dtype=d),
    "linspace_nan_imag_part": lambda L, d: L.linspace(1.0, complex(2, _NAN), 5, dtype=d),
    "linspace_inf_end": lambda L, d: L.linspace(1.0, complex(_INF, 1), 5, dtype=d),
    "logspace_nan": lambda L, d: L.logspace(_NAN, 1.0, 3, dtype=d),
    # logdet of a singular matrix: log(0) + (-inf) through torch's add
    "logdet_zero": lambda L, d: L.logdet(L.zeros(2, 2, dtype=d)),
    "logdet_singular_batch": lambda L, d: L.logdet(L.tensor([[[1, 2], [2, 4]], [[1j, 0], [0, 2]]], dtype=d)),
}


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(NONFINITE))
def test_nonfinite_edges(name, dtype):
    both(lambda L: L.view_as_real(NONFINITE[name](L, getattr(L, dtype)))
         if not name.startswith("var_mean") else NONFINITE[name](L, getattr(L, dtype)), **TOL[dtype])


# ---- complex32 in torch.linalg: torch's refusals ----

LINALG_CHALF = {
    "inv": lambda L, a: L.linalg.inv(a), "inv_ex": lambda L, a: L.linalg.inv_ex(a), "inverse": lambda L, a: L.inverse(a),
    "det": lambda L, a: L.linalg.det(a), "torch_det": lambda L, a: L.det(a), "slogdet": lambda L, a: L.linalg.slogdet(a),
    "torch_slogdet": lambda L, a: L.slogdet(a), "logdet": lambda L, a: L.logdet(a),
    "solve": lambda L, a: L.linalg.solve(a, a), "solve_ex": lambda L, a: L.linalg.solve_ex(a, a),
    "lu_factor": lambda L, a: L.linalg.lu_factor(a), "tensorinv": lambda L, a: L.linalg.tensorinv(a, 1),
    "cholesky": lambda L, a: L.linalg.cholesky(a), "cholesky_ex": lambda L, a: L.linalg.cholesky_ex(a),
    "qr": lambda L, a: L.linalg.qr(a), "geqrf": lambda L, a: L.geqrf(a), "eig": lambda L, a: L.linalg.eig(a),
    "eigvals": lambda L, a: L.linalg.eigvals(a), "eigh": lambda L, a: L.linalg.eigh(a),
    "eigvalsh": lambda L, a: L.linalg.eigvalsh(a), "svd": lambda L, a: L.linalg.svd(a), "torch_svd": lambda L, a: L.svd(a),
    "svdvals": lambda L, a: L.linalg.svdvals(a), "cond": lambda L, a: L.linalg.cond(a),
    "lstsq": lambda L, a: L.linalg.lstsq(a, a), "pinv": lambda L, a: L.linalg.pinv(a),
    "matrix_rank": lambda L, a: L.linalg.matrix_rank(a),
    "solve_triangular": lambda L, a: L.linalg.solve_triangular(a, a, upper=True),
    "householder_product": lambda L, a: L.linalg.householder_product(a, a[0]),
    "ldl_factor": lambda L, a: L.linalg.ldl_factor(a),
    "lu_solve": lambda L, a: L.linalg.lu_solve(a, L.tensor([1, 2], dtype=L.int32), a),
    "vander": lambda L, a: L.linalg.vander(a[0]),
}


@requires_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(LINALG_CHALF))
def test_linalg_complex32_refused_as_torch(name):
    both(lambda L: LINALG_CHALF[name](L, L.tensor([[2 + 1j, 1.0], [0.5j, 3.0]]).to(L.complex32)))


# ---- complex inputs of silu, rms_norm, im2col / col2im, the adaptive average pools, embedding, normal ----

F_OPS = {
    "silu": (lambda L, x: L.nn.functional.silu(x), [(3, 4)]),
    "silu_method_inplace": (lambda L, x: L.nn.functional.silu(x * 1, inplace=True), [(3, 4)]),
    "rms_norm": (lambda L, x: L.nn.functional.rms_norm(x, (4,)), [(3, 4)]),
    "rms_norm_weight_eps": (lambda L, x, w: L.rms_norm(x, [3, 4], w, 1e-3), [(2, 3, 4), (3, 4)]),
    "rms_norm_real_weight": (lambda L, x, w: L.nn.functional.rms_norm(x, (4,), w.real), [(3, 4), (4,)]),
    "unfold": (lambda L, x: L.nn.functional.unfold(x, 2, padding=1), [(1, 2, 3, 4)]),
    "fold": (lambda L, x: L.nn.functional.fold(x, (3, 4), 2), [(1, 8, 6)]),
    # torch takes complex inputs only where every output size is 1 (a mean)
    "adaptive_avg_pool1d": (lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, 1), [(2, 3, 5)]),
    "adaptive_avg_pool2d": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (1, 1)), [(1, 3, 1, 5)]),
    "adaptive_avg_pool2d_ones": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1), [(2, 3, 5)]),
    "adaptive_avg_pool3d": (lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, (1, 1, 1)), [(1, 3, 3, 5)]),
    "pad_constant": (lambda L, x: L.nn.functional.pad(x, (1, 2), value=0.5), [(2, 3)]),
    "pad_reflect": (lambda L, x: L.nn.functional.pad(x, (1, 2), mode="reflect"), [(1, 2, 4)]),
    "pad_replicate_2d": (lambda L, x: L.nn.functional.pad(x, (2, 1, 1, 0), mode="replicate"), [(1, 2, 3, 4)]),
    "pad_circular": (lambda L, x: L.nn.functional.pad(x, (1, 1), mode="circular"), [(1, 2, 4)]),
    "embedding": (lambda L, w: L.nn.functional.embedding(L.tensor([[0, 2], [3, 0]]), w), [(4, 3)]),
    "embedding_padding": (lambda L, w: L.nn.functional.embedding(L.tensor([0, 2, 1, 2]), w, padding_idx=2), [(4, 3)]),
    "embedding_max_norm": (lambda L, w: (L.nn.functional.embedding(L.tensor([[0, 2], [3, 0]]), w, max_norm=1.2), w),
                           [(4, 3)]),
    "embedding_max_norm_p1": (lambda L, w: (L.nn.functional.embedding(L.tensor([1, 1, 3]), w, max_norm=0.5,
                                                                      norm_type=1.0), w), [(4, 3)]),
}


@requires_torch
@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(F_OPS))
def test_functional_gaps_match_torch(name, dtype, layout):
    fn, shapes = F_OPS[name]
    got = fn(pyctorch, *_inputs(pyctorch, shapes, dtype, layout))
    expected = fn(torch, *_inputs(torch, shapes, dtype, layout))
    assert_same(got, expected, **TOL[dtype])


@requires_torch
@pytest.mark.parametrize("name", sorted(n for n in F_OPS if n not in ("silu", "embedding", "embedding_padding",
                                                                      "embedding_max_norm", "embedding_max_norm_p1")))
def test_functional_gaps_gradients(name):
    fn, shapes = F_OPS[name]

    def run(L):
        xs = [x.requires_grad_() for x in _inputs(L, shapes, "complex128", "t")]
        _loss(fn(L, *xs)).backward()
        return [x.grad for x in xs]
    for g, e in zip(run(pyctorch), run(torch)):
        assert_same(g, e, rtol=1e-9, atol=1e-10)


# (not silu_: torch's complex gradient of it is not conjugated, so it is not the derivative gradcheck measures; the
# gradient is compared with torch's above)
@pytest.mark.parametrize("name", ["rms_norm", "rms_norm_weight_eps", "unfold", "fold", "adaptive_avg_pool2d", "pad_reflect",
                                  "pad_replicate_2d", "pad_circular"])
def test_functional_gaps_gradcheck(name):
    fn, shapes = F_OPS[name]
    xs = [x.requires_grad_() for x in _inputs(pyctorch, shapes, "complex128", "c")]
    assert pyctorch.autograd.gradcheck(lambda *a: fn(pyctorch, *a), xs)


REFUSED_AS_TORCH = {
    "rms_norm_bad_shape": lambda L: L.nn.functional.rms_norm(_make(L, (2, 2), "complex64"), (3,)),
    "rms_norm_bad_weight": lambda L: L.rms_norm(_make(L, (2, 2), "complex64"), (2,), _make(L, (3,), "complex64")),
    "rms_norm_too_many_dims": lambda L: L.rms_norm(_make(L, (2, 2), "complex64"), (2, 2, 2)),
    "rms_norm_empty_shape": lambda L: L.rms_norm(_make(L, (2, 2), "complex64"), ()),
    "normal_complex_std": lambda L: L.normal(_make(L, (2,), "complex64"), _make(L, (2,), "complex64")),
    "normal_float_complex_std": lambda L: L.normal(1.0, _make(L, (2,), "complex64")),
    "normal_negative_std": lambda L: L.normal(_make(L, (2,), "complex64"), -1.0),
    # torch's autograd refuses these complex outputs (silu_ in place is recorded: gradients above)
    "silu_grad": lambda L: L.nn.functional.silu(_make(L, (2, 3), "complex128").requires_grad_()),
    "embedding_grad": lambda L: L.nn.functional.embedding(L.tensor([1]), _make(L, (2, 3), "complex128").requires_grad_()),
    "normal_grad": lambda L: L.normal(_make(L, (2, 3), "complex128").requires_grad_(), 2.0),
    "normal_tensor_std_grad": lambda L: L.normal(_make(L, (2, 3), "complex128").requires_grad_(), L.ones(3)),
    "adaptive_avg_pool1d": lambda L: L.nn.functional.adaptive_avg_pool1d(_make(L, (2, 3, 5), "complex64"), 2),
    "adaptive_avg_pool2d": lambda L: L.nn.functional.adaptive_avg_pool2d(_make(L, (2, 3, 5), "complex128"), (2, 1)),
    "adaptive_avg_pool3d": lambda L: L.nn.functional.adaptive_avg_pool3d(_make(L, (1, 2, 3, 5), "complex64"), 2),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(REFUSED_AS_TORCH))
def test_functional_gap_refusals(name):
    both(REFUSED_AS_TORCH[name])


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_with_a_complex_mean_is_torchs(dtype):
    # the seeded complex fill (bit-identical to torch's, above) plus the mean
    def run(L):
        L.manual_seed(5)
        mean = _make(L, (3, 4), dtype, "t")
        return L.normal(mean, 0.5), L.normal(mean, L.full((4,), 2.0)), L.normal(mean[0], 1.0, out=L.empty(4, dtype=mean.dtype))
    for g, e in zip(run(pyctorch), run(torch)):
        assert_same(g, e, **TOL[dtype])


# ---- scatter_reduce / index_reduce on complex tensors: sum, prod and mean as torch; amax / amin refused ----

_SR_INDEX = [[0, 1, 0, 2], [1, 1, 0, 2], [2, 0, 0, 1]]
SCATTER_REDUCE = {
    f"{r}_{'self' if inc else 'noself'}": (lambda L, x, y, r=r, inc=inc:
                                            x.scatter_reduce(0, L.tensor(_SR_INDEX), y, r, include_self=inc))
    for r in ("sum", "prod", "mean") for inc in (True, False)
}
SCATTER_REDUCE.update({
    "index_reduce_prod": lambda L, x, y: x.index_reduce(0, L.tensor([2, 0, 2]), y, "prod"),
    "index_reduce_mean": lambda L, x, y: x.index_reduce(1, L.tensor([3, 3, 0, 1]), y, "mean"),
    "index_reduce_exclude_self": lambda L, x, y: x.index_reduce(1, L.tensor([3, 3, 0, 1]), y, "mean", include_self=False),
    "index_reduce_mean_self": lambda L, x, y: L.index_reduce(x, 0, L.tensor([1, 1, 1]), y, "mean"),
    "scatter_reduce_amax": lambda L, x, y: x.scatter_reduce(0, L.tensor(_SR_INDEX), y, "amax"),
    "scatter_reduce_amin": lambda L, x, y: x.scatter_reduce(0, L.tensor(_SR_INDEX), y, "amin", include_self=False),
    "index_reduce_amax": lambda L, x, y: x.index_reduce(0, L.tensor([2, 0, 2]), y, "amax"),
    # bincount's complex weights: cast to float64, the imaginary parts dropped
    "bincount_weights": lambda L, x, y: L.bincount(L.tensor([0, 3, 3, 1]), weights=y.flatten()[:4]),
    "bincount_weights_minlength": lambda L, x, y: L.bincount(L.tensor([2, 0, 0]), y[1, :3], minlength=5),
    "scatter_reduce_grad": lambda L, x, y: x.requires_grad_().scatter_reduce(0, L.tensor(_SR_INDEX), y, "sum"),
})


@requires_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SCATTER_REDUCE))
def test_scatter_reduce_and_index_reduce(name, dtype, layout):
    both(lambda L: SCATTER_REDUCE[name](L, *_inputs(L, [(3, 4), (3, 4)], dtype, layout)), **TOL[dtype])
