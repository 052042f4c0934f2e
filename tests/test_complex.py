"""The complex dtypes (complex64 / cfloat, complex128 / cdouble, and complex32 / chalf as storage).

Each check runs the same call in torch and pyctorch and compares values, dtype, shape and exceptions (skipped without
torch); the NumPy and hand-computed checks always run. Note [Complex and float8 dtypes] in csrc/aten/dtype.h says what
is supported: conj() is computed (torch's lazy conjugate view has the same values, is_conj() False here).
"""
import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, assert_same_outcome, requires_torch, torch

Z = [[1 + 2j, 3 - 1j, -0.5j], [2.5, -1 - 1j, 0.25 + 4j]]
W = [[2.0, 1j, 1 + 1j], [-3 + 0.5j, 0.5, 2 - 2j]]


def both(fn, **kw):
    """fn(L) in torch and pyctorch, outcomes compared."""
    return assert_same_outcome(lambda: fn(pyctorch), lambda: fn(torch), **kw)


# ---- always-run checks (NumPy and hand-computed values) ----

def test_dtype_objects():
    assert pyctorch.cfloat is pyctorch.complex64 and pyctorch.cdouble is pyctorch.complex128
    assert pyctorch.chalf is pyctorch.complex32
    assert pyctorch.complex64.is_complex and not pyctorch.complex64.is_floating_point
    assert pyctorch.complex64.itemsize == 8 and pyctorch.complex128.itemsize == 16 and pyctorch.complex32.itemsize == 4
    assert pyctorch.complex64.to_real() is pyctorch.float32 and pyctorch.float64.to_complex() is pyctorch.complex128
    assert pyctorch.is_complex(pyctorch.zeros(1, dtype=pyctorch.cfloat)) and pyctorch.zeros(1, dtype=pyctorch.cdouble).is_complex()


def test_numpy_round_trip_and_values():
    a = np.array(Z, dtype=np.complex64)
    t = pyctorch.from_numpy(a)
    assert t.dtype == pyctorch.complex64 and t.tolist() == a.tolist()
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_allclose((t * t).numpy(), a * a, rtol=1e-6)
    np.testing.assert_allclose(t.abs().numpy(), np.abs(a), rtol=1e-6)
    np.testing.assert_allclose(t.exp().numpy(), np.exp(a), rtol=1e-5)
    np.testing.assert_allclose((t @ t.t()).numpy(), a @ a.T, rtol=1e-5)
    assert pyctorch.tensor(1 + 2j).item() == 1 + 2j and isinstance(pyctorch.tensor([1j]).tolist()[0], complex)


def test_real_imag_are_views():
    t = pyctorch.tensor(Z, dtype=pyctorch.cdouble)
    r, i = t.real, t.imag
    assert r.dtype == pyctorch.float64 and r.tolist() == np.real(np.array(Z)).tolist()
    assert i.tolist() == np.imag(np.array(Z)).tolist()
    r.add_(10)
    assert t[0, 0].item() == 11 + 2j


# ---- comparisons with torch ----

CREATION = {
    "tensor": lambda L: L.tensor(Z), "tensor_mixed": lambda L: L.tensor([1, 2.5, 1j, True]),
    "tensor_dtype": lambda L: L.tensor([1, 2], dtype=L.cdouble), "tensor_to_float": lambda L: L.tensor([1j], dtype=L.float32),
    "tensor_to_int": lambda L: L.tensor([1j], dtype=L.int64), "tensor_to_bool": lambda L: L.tensor([1j, 0j], dtype=L.bool),
    "zeros": lambda L: L.zeros(2, 3, dtype=L.cfloat), "ones": lambda L: L.ones(2, dtype=L.cdouble),
    "full": lambda L: L.full((2,), 1 + 2j), "full_dtype": lambda L: L.full((2,), 3, dtype=L.cfloat),
    "empty_shape": lambda L: L.empty(2, 3, dtype=L.cfloat).shape, "zeros_like": lambda L: L.zeros_like(L.tensor(Z)),
    "complex": lambda L: L.complex(L.tensor([1.0, 2.0]), L.tensor([[3.0], [4.0]])),
    "complex_double": lambda L: L.complex(L.tensor([1.0], dtype=L.float64), L.tensor([2.0], dtype=L.float64)),
    "complex_int": lambda L: L.complex(L.tensor([1]), L.tensor([2])),
    "complex_mixed": lambda L: L.complex(L.tensor([1.0]), L.tensor([2.0], dtype=L.float64)),
    "polar": lambda L: L.polar(L.tensor([1.0, 2.0]), L.tensor([0.5, -3.0])),
    "complex32": lambda L: L.tensor([1 + 2j, 0.5], dtype=L.complex32),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation(name):
    both(CREATION[name], exact=name not in ("polar",))


PROMOTIONS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
              "complex32", "complex64", "complex128", "uint16"]


@requires_torch
def test_promote_types_table():
    for a in PROMOTIONS:
        for b in PROMOTIONS:
            both(lambda L: L.promote_types(getattr(L, a), getattr(L, b)), message=True)


@requires_torch
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_result_type_with_scalars(default):
    cases = [lambda L: L.result_type(L.ones(2, dtype=L.float16), 1j), lambda L: L.result_type(L.ones(2), 1j),
             lambda L: L.result_type(L.ones(2, dtype=L.float64), 1j), lambda L: L.result_type(L.ones(2, dtype=L.int32), 1j),
             lambda L: L.result_type(L.tensor(1j), L.ones(2, dtype=L.float64)),
             lambda L: L.result_type(L.tensor(1j, dtype=L.cdouble), L.ones(2)),
             lambda L: L.result_type(L.ones(2, dtype=L.bfloat16), 1j), lambda L: (L.ones(2, dtype=L.int64) * 1j).dtype,
             lambda L: L.tensor([1j]).dtype, lambda L: L.full((1,), 1j).dtype]
    old_p, old_t = pyctorch.get_default_dtype(), torch.get_default_dtype()
    pyctorch.set_default_dtype(getattr(pyctorch, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        for case in cases:
            both(case)
    finally:
        pyctorch.set_default_dtype(old_p)
        torch.set_default_dtype(old_t)


def _z(L, dtype="cfloat"):
    return L.tensor(Z, dtype=getattr(L, dtype))


def _w(L, dtype="cfloat"):
    return L.tensor(W, dtype=getattr(L, dtype))


OPS = {
    "add": lambda L, d: _z(L, d) + _w(L, d), "sub": lambda L, d: _z(L, d) - _w(L, d), "mul": lambda L, d: _z(L, d) * _w(L, d),
    "div": lambda L, d: _z(L, d) / _w(L, d), "neg": lambda L, d: -_z(L, d), "add_alpha": lambda L, d: L.add(_z(L, d), _w(L, d), alpha=2),
    "add_alpha_complex": lambda L, d: L.add(_z(L, d), _w(L, d), alpha=1 - 2j), "sub_alpha": lambda L, d: L.sub(_z(L, d), _w(L, d), alpha=3),
    "rsub": lambda L, d: 1 - _z(L, d), "add_scalar": lambda L, d: _z(L, d) + 2j, "mul_scalar": lambda L, d: 2.5 * _z(L, d),
    "div_scalar": lambda L, d: _z(L, d) / (1 + 1j), "mul_real": lambda L, d: _z(L, d) * L.tensor([1.0, 2.0, -1.0]),
    "add_int": lambda L, d: _z(L, d) + L.tensor([1, 2, 3]), "real_times_j": lambda L, d: L.ones(3, dtype=L.float64) * 1j,
    "pow2": lambda L, d: _z(L, d) ** 2, "pow_half": lambda L, d: _z(L, d) ** 0.5, "pow_complex": lambda L, d: _z(L, d) ** (1 + 1j),
    "pow_tensor": lambda L, d: L.pow(_z(L, d), _w(L, d)), "exp": lambda L, d: _z(L, d).exp(), "log": lambda L, d: _z(L, d).log(),
    "log2": lambda L, d: _z(L, d).log2(), "log10": lambda L, d: _z(L, d).log10(), "log1p": lambda L, d: (_z(L, d) * 1e-3).log1p(),
    "expm1": lambda L, d: (_z(L, d) * 1e-3).expm1(), "exp2": lambda L, d: _z(L, d).exp2(),
    "sqrt": lambda L, d: _z(L, d).sqrt(), "rsqrt": lambda L, d: _z(L, d).rsqrt(), "reciprocal": lambda L, d: _z(L, d).reciprocal(),
    "sin": lambda L, d: _z(L, d).sin(), "cos": lambda L, d: _z(L, d).cos(), "tan": lambda L, d: _z(L, d).tan(),
    "asin": lambda L, d: _z(L, d).asin(), "acos": lambda L, d: _z(L, d).acos(), "atan": lambda L, d: _z(L, d).atan(),
    "sinh": lambda L, d: _z(L, d).sinh(), "cosh": lambda L, d: _z(L, d).cosh(), "tanh": lambda L, d: _z(L, d).tanh(),
    "asinh": lambda L, d: _z(L, d).asinh(), "acosh": lambda L, d: _z(L, d).acosh(), "atanh": lambda L, d: _z(L, d).atanh(),
    "sigmoid": lambda L, d: _z(L, d).sigmoid(), "abs": lambda L, d: _z(L, d).abs(), "angle": lambda L, d: _z(L, d).angle(),
    "sgn": lambda L, d: L.sgn(L.cat([_z(L, d).flatten(), L.zeros(1, dtype=getattr(L, d))])),
    "conj": lambda L, d: _z(L, d).conj(), "conj_physical": lambda L, d: L.conj_physical(_z(L, d)), "resolve_conj": lambda L, d: _z(L, d).conj().resolve_conj(),
    "eq": lambda L, d: _z(L, d) == _w(L, d), "ne": lambda L, d: _z(L, d) != _z(L, d), "eq_scalar": lambda L, d: _z(L, d) == 2.5,
    "isnan": lambda L, d: (_z(L, d) * float("nan")).isnan(), "isinf": lambda L, d: L.tensor([complex(math.inf, 0), 1j, complex(0, -math.inf)], dtype=getattr(L, d)).isinf(),
    "isfinite": lambda L, d: L.tensor([complex(math.inf, 0), 1j, complex(math.nan, 1)], dtype=getattr(L, d)).isfinite(),
    "logical_not": lambda L, d: L.logical_not(L.tensor([0j, 1j, 2], dtype=getattr(L, d))),
    "logical_and": lambda L, d: L.logical_and(_z(L, d), L.tensor([[0j, 1, 1], [1, 0, 1]], dtype=getattr(L, d))),
    "isreal": lambda L, d: L.isreal(_z(L, d)),
    "sum": lambda L, d: _z(L, d).sum(), "sum_dim": lambda L, d: _z(L, d).sum(1), "sum_keepdim": lambda L, d: _z(L, d).sum(0, keepdim=True),
    "mean": lambda L, d: _z(L, d).mean(), "mean_dim": lambda L, d: _z(L, d).mean(-1), "sum_real_dtype": lambda L, d: L.ones(2).sum(dtype=getattr(L, d)),
    "mm": lambda L, d: _z(L, d) @ _w(L, d).t(), "bmm": lambda L, d: L.bmm(_z(L, d).unsqueeze(0), _w(L, d).t().unsqueeze(0)),
    "matmul_batched": lambda L, d: L.matmul(L.stack([_z(L, d)] * 2), _w(L, d).t()),
    "mm_mixed": lambda L, d: L.mm(_z(L, d), L.ones(3, 2)), "bmm_mixed": lambda L, d: L.bmm(_z(L, d)[None], L.ones(1, 3, 2)),
    "real": lambda L, d: _z(L, d).real, "imag": lambda L, d: _z(L, d).imag, "real_fn": lambda L, d: L.real(_z(L, d)),
    "imag_real_tensor": lambda L, d: L.ones(2).imag, "view_as_real": lambda L, d: L.view_as_real(_z(L, d)),
    "view_as_complex": lambda L, d: L.view_as_complex(L.view_as_real(_z(L, d))),
    "view_as_complex_bad": lambda L, d: L.view_as_complex(L.ones(3, 3)), "view_as_real_bad": lambda L, d: L.view_as_real(L.ones(2)),
    "view_as_complex_stride": lambda L, d: L.view_as_complex(L.ones(2, 4)[:, ::2]),
    "to_float": lambda L, d: _z(L, d).to(L.float32), "to_int": lambda L, d: _z(L, d).to(L.int32), "to_bool": lambda L, d: _z(L, d).to(L.bool),
    "to_other": lambda L, d: _z(L, d).to(L.complex128 if d == "cfloat" else L.complex64),
    "to_half": lambda L, d: _z(L, d).to(L.complex32).to(L.complex64),
    "from_float": lambda L, d: L.tensor([1.5, -2]).to(getattr(L, d)), "from_int": lambda L, d: L.tensor([3, -2]).to(getattr(L, d)),
    "index": lambda L, d: _z(L, d)[1, 0:2], "adv_index": lambda L, d: _z(L, d)[L.tensor([1, 0])], "mask": lambda L, d: _z(L, d)[_z(L, d).abs() > 2],
    "setitem": lambda L, d: _z(L, d).index_fill(1, L.tensor([0]), 0) if False else _setitem(_z(L, d), 0, 7 + 7j),
    "cat": lambda L, d: L.cat([_z(L, d), _w(L, d)]), "stack": lambda L, d: L.stack([_z(L, d), _w(L, d)], 1),
    "transpose_contig": lambda L, d: _z(L, d).t().contiguous(), "flip": lambda L, d: _z(L, d).flip(0),
    "where": lambda L, d: L.where(_z(L, d).abs() > 2, _z(L, d), _w(L, d)), "clone": lambda L, d: _z(L, d).clone(),
    "fill": lambda L, d: _z(L, d).fill_(2 - 1j), "copy_from_real": lambda L, d: _z(L, d).copy_(L.ones(2, 3)),
    "item": lambda L, d: _z(L, d)[0, 1].item(), "tolist": lambda L, d: _z(L, d).tolist(),
    "repr": lambda L, d: repr(_z(L, d)), "repr_scaled": lambda L, d: repr(_z(L, d) * 1e5),
    "repr_nan": lambda L, d: repr(L.tensor([complex(math.nan, 1), complex(math.inf, -2)], dtype=getattr(L, d))),
    "H": lambda L, d: _z(L, d).mH, "adjoint": lambda L, d: _z(L, d).adjoint(),
    # refusals
    "lt": lambda L, d: _z(L, d) < _w(L, d), "sort": lambda L, d: _z(L, d).sort(), "max": lambda L, d: _z(L, d).max(),
    "clamp": lambda L, d: _z(L, d).clamp(0, 1), "relu": lambda L, d: _z(L, d).relu(), "floor": lambda L, d: _z(L, d).floor(),
    "softmax": lambda L, d: _z(L, d).softmax(0), "nansum": lambda L, d: _z(L, d).nansum(),
    "prod": lambda L, d: _z(L, d).prod(), "sign": lambda L, d: _z(L, d).sign(), "erf": lambda L, d: _z(L, d).erf(),
    "add_alpha_complex_real": lambda L, d: L.add(L.ones(2), L.ones(2), alpha=1j),
    "abs_out_complex": lambda L, d: L.abs(_z(L, d), out=L.empty(0, dtype=getattr(L, d))),
    "abs_out_real": lambda L, d: L.abs(_z(L, d), out=L.empty(0, dtype=getattr(L, d).to_real())),
    "requires_grad": lambda L, d: L.zeros(2, dtype=getattr(L, d), requires_grad=True).requires_grad,
    # products and quotients at the non-finite edges (Note [Complex products and quotients as torch's])
    "mul_nonfinite": lambda L, d: _edges(L, d) * _divisors(L, d),
    "div_nonfinite": lambda L, d: _edges(L, d) / _divisors(L, d),
    "div_nonfinite_strided": lambda L, d: _edges(L, d)[::2] / _divisors(L, d)[::2],
    "addcmul_nonfinite": lambda L, d: L.addcmul(L.zeros(15, dtype=getattr(L, d)), _edges(L, d), _divisors(L, d), value=1j),
    "addcdiv_nonfinite": lambda L, d: L.addcdiv(L.zeros(15, dtype=getattr(L, d)), _edges(L, d), _divisors(L, d)),
    "prod_nonfinite": lambda L, d: (_edges(L, d)[2:4] * _divisors(L, d)[3]).prod(),
    "prod_dim_nonfinite": lambda L, d: L.stack([_edges(L, d), _divisors(L, d)]).prod(0),
    "cumprod_nonfinite": lambda L, d: L.tensor([complex(math.inf, 1), 1, 2j, complex(1, math.inf)],
                                                dtype=getattr(L, d)).cumprod(0),
    "addcdiv_value": lambda L, d: L.addcdiv(_z(L, d), _z(L, d), _w(L, d) + 1, value=2 - 1j),
    # nn ops on complex tensors
    "embedding": lambda L, d: L.embedding(_z(L, d), L.tensor([[1, 0], [1, 1]])),
    "F_embedding_max_norm": lambda L, d: (lambda w: (L.nn.functional.embedding(L.tensor([0, 1]), w, max_norm=1.5), w))(
        _z(L, d).clone()),
    "embedding_renorm_": lambda L, d: L.embedding_renorm_(_z(L, d).t().contiguous(), L.tensor([0, 2, 2]), 1.0, 3.0),
    "embedding_renorm_inf": lambda L, d: L.embedding_renorm_(_z(L, d), L.tensor([1]), 0.5, math.inf),
    "adaptive_avg_pool1d": lambda L, d: L.adaptive_avg_pool1d(_z(L, d), 1),
    "adaptive_avg_pool1d_2": lambda L, d: L.adaptive_avg_pool1d(_z(L, d), 2),
    "adaptive_avg_pool2d": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_z(L, d)[None].expand(2, 2, 3), (1, 1)),
    "adaptive_avg_pool2d_3": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_z(L, d)[None], 3),
    "im2col": lambda L, d: L._C._nn.im2col(_z(L, d)[None, None], (2, 2), (1, 1), (1, 0), (1, 1)),
    "col2im": lambda L, d: L._C._nn.col2im(_z(L, d)[None].expand(1, 4, 3), (2, 4), (2, 2), (1, 1), (0, 0), (1, 1)),
    "fold": lambda L, d: L.nn.functional.fold(_z(L, d).reshape(1, 6, 1).expand(2, 6, 4), (3, 3), (3, 2)),
    "conj_physical_real_is_input": lambda L, d: (lambda r: (L.conj_physical(r) is r, r.conj_physical_() is r))(
        L.ones(2, dtype=getattr(L, d).to_real())),
    "conj_physical_real_out": lambda L, d: (lambda o: (L.conj_physical(L.ones(2), out=o) is o, o))(L.zeros(2)),
}


def _edges(L, d):
    """dividends and factors with infinite and NaN parts"""
    inf, nan = math.inf, math.nan
    return L.tensor([complex(inf, nan), complex(nan, inf), complex(inf, 1), complex(1, 1), complex(-inf, inf)] * 3,
                    dtype=getattr(L, d))


def _divisors(L, d):
    return L.tensor([0.064 - 0.503j, 0j, complex(math.inf, 0), 1 + 0j, 3e38 - 1e30j] * 3, dtype=getattr(L, d))


def _setitem(t, k, v):
    t[k] = v
    return t


# torch computes these; pyctorch refuses them for now (the report of the complex dtypes' branch lists them)
GAPS = set()


@requires_torch
@pytest.mark.parametrize("dtype", ["cfloat", "cdouble"])
@pytest.mark.parametrize("name", [n if n not in GAPS else pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason="not implemented for complex yet")) for n in sorted(OPS)])
def test_op(name, dtype):
    both(lambda L: OPS[name](L, dtype))


@requires_torch
@pytest.mark.parametrize("dtype", ["cfloat", "cdouble"])
def test_nn_gradients(dtype):
    """the complex gradients of adaptive average pooling, im2col / col2im (F.unfold / F.fold), and torch's refusal of
    embedding's complex output"""
    def grads(L, fn):
        x = _z(L, dtype)[None].clone().requires_grad_()
        (fn(L, x).abs() ** 2).sum().backward()
        return x.grad

    both(lambda L: grads(L, lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, 1)))
    both(lambda L: grads(L, lambda L, x: L.nn.functional.adaptive_avg_pool2d(x[None], 1)))
    both(lambda L: grads(L, lambda L, x: L.nn.functional.unfold(x[None], (2, 2), padding=1) * (1 + 2j)))
    both(lambda L: grads(L, lambda L, x: L.nn.functional.fold(x.reshape(1, 6, 1).expand(1, 6, 2) * 1j, (3, 2), (3, 2),
                                                                  padding=(1, 0))))
    both(lambda L: L.nn.functional.embedding(L.tensor([0]), _z(L, dtype).requires_grad_()))


@requires_torch
def test_numpy_and_dlpack():
    both(lambda L: L.from_numpy(np.array(Z, dtype=np.complex128)))
    both(lambda L: L.tensor(np.array(Z, dtype=np.complex64)))
    both(lambda L: L.tensor([np.complex64(1 + 1j), np.complex128(2j)]))
    assert_same(pyctorch.from_dlpack(torch.tensor(Z)), torch.tensor(Z), exact=True)
    assert_same(torch.from_dlpack(pyctorch.tensor(Z, dtype=pyctorch.cdouble)), torch.tensor(Z, dtype=torch.cdouble),
                exact=True)
    both(lambda L: L.ones(2, dtype=L.complex32).numpy())


def _h(L):
    return L.tensor([[1 + 2j, 3 - 1j, -0.5j], [2.5, 0j, complex(math.inf, 1)]], dtype=L.complex32)


# torch's CPU kernels that take complex32 (Note [Widened complex32] in csrc/aten/dispatch.c)
COMPLEX32_OPS = {
    "add": lambda L: _h(L) + _h(L), "sub": lambda L: L.sub(_h(L), _h(L) * 1j, alpha=2),
    "mul": lambda L: _h(L) * (_h(L) + 1), "mul_scalar": lambda L: _h(L) * 2, "neg": lambda L: -_h(L),
    "abs": lambda L: _h(L).abs(), "sgn": lambda L: _h(L)[:, :2].sgn(), "conj_physical": lambda L: L.conj_physical(_h(L)),
    "isnan": lambda L: (_h(L) * math.nan).isnan(), "isinf": lambda L: _h(L).isinf(), "isfinite": lambda L: _h(L).isfinite(),
    "eq": lambda L: _h(L) == _h(L).conj_physical(), "ne": lambda L: _h(L) != 1, "where": lambda L: L.where(_h(L).isinf(), _h(L), _h(L) * 2),
    "vector_norm": lambda L: L.linalg.vector_norm(_h(L)[:, :2]), "norm": lambda L: _h(L)[0].norm(),
    "norm_dim": lambda L: L.linalg.vector_norm(_h(L), 1, dim=1),
    "masked_fill": lambda L: _h(L).masked_fill(_h(L).isinf(), 7j), "addcmul": lambda L: L.addcmul(_h(L), _h(L), _h(L)),
    "all": lambda L: _h(L).all(), "any": lambda L: _h(L).any(dim=1), "count_nonzero": lambda L: _h(L).count_nonzero(),
    "nonzero": lambda L: _h(L).nonzero(), "tril": lambda L: _h(L).tril(), "triu": lambda L: _h(L).triu(1),
    "tile": lambda L: _h(L).tile(2, 1),
    # still refused, as torch refuses them (a complex32 dtype= on a real input: refused, not widened again)
    "vector_norm_dtype_only": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.complex32),
    "add_inplace": lambda L: _h(L).add_(1), "mul_inplace": lambda L: (lambda h: (h.mul_(h), h))(_h(L)),
    "abs_out": lambda L: L.abs(_h(L), out=L.empty(0, dtype=L.float16)),
    "add_out": lambda L: L.add(_h(L), 1j, out=L.empty(0, dtype=L.complex32)),
    # still refused, as torch refuses them (a complex32 dtype= on a real input: refused, not widened again)
    "vector_norm_dtype_only": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.complex32),
    "flip": lambda L: _h(L).flip(1), "div": lambda L: _h(L) / _h(L), "exp": lambda L: _h(L).exp(), "sum": lambda L: _h(L).sum(),
}


@requires_torch
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("name", sorted(COMPLEX32_OPS))
def test_complex32_op(name):
    both(lambda L: COMPLEX32_OPS[name](L))


_CAST_WARNINGS = """
import sys, warnings
L = __import__(sys.argv[1])
z = L.tensor([1 + 2j, 3 - 1j])
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    z.to(L.float32); z.float(); L.zeros(2).copy_(z); z.type_as(L.zeros(1, dtype=L.float64)); z.to(L.complex128)
print([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in seen])
"""


def test_complex_to_real_cast_warns_once():
    """torch warns once per process when a copy drops imaginary parts (a fresh interpreter each)"""
    def seen(lib):
        r = subprocess.run([sys.executable, "-c", _CAST_WARNINGS, lib], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout.strip()
    want = "[('UserWarning', 'Casting complex values to real discards the imaginary part')]"
    assert seen("pyctorch") == want
    if torch is not None:
        assert seen("torch") == want


@requires_torch
def test_save_load_both_ways():
    for d in ("complex64", "complex128", "complex32"):
        buf = io.BytesIO()
        pyctorch.save(pyctorch.tensor(Z, dtype=getattr(pyctorch, d)), buf)
        buf.seek(0)
        assert_same(torch.load(buf), torch.tensor(Z, dtype=getattr(torch, d)), exact=True)
        buf = io.BytesIO()
        torch.save(torch.tensor(Z, dtype=getattr(torch, d)), buf)
        buf.seek(0)
        assert_same(pyctorch.load(buf), torch.tensor(Z, dtype=getattr(torch, d)), exact=True)


@requires_torch
def test_complex32_storage_only():
    calls = [lambda L: L.zeros(2, dtype=L.chalf), lambda L: L.tensor(Z).to(L.chalf).to(L.cfloat),
             lambda L: L.cat([L.ones(2, dtype=L.chalf)] * 2), lambda L: repr(L.tensor([1 + 2j, 0.5]).to(L.chalf)),
             lambda L: L.tensor(Z).to(L.chalf).real, lambda L: L.ones(2, dtype=L.chalf).exp(),
             lambda L: L.ones(2, dtype=L.chalf).sum()]
    for call in calls:
        both(call)


@requires_torch
@pytest.mark.parametrize("name", ["abs", "angle"])
@pytest.mark.parametrize("out_dtype", ["float32", "float64", "float16", "complex64", "complex128", "int64", "bool"])
def test_real_result_into_out(name, out_dtype):
    # a complex input's real result is cast into out= (torch.can_cast); abs alone wants its input's complex dtype
    both(lambda L: getattr(L, name)(L.tensor(Z[0], dtype=L.complex64),
                                   out=L.empty(3, dtype=getattr(L, out_dtype))))
