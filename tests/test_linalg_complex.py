"""torch.linalg's LAPACK-backed functions on complex64 / complex128 (the c and z routines of
csrc/aten/cpu/linalg_lapack.c) and the composites built on them: values, dtypes, shapes and errors
against torch, gradients against torch's and by finite differences (pyctorch.autograd.gradcheck).

Matrices are well conditioned (a random complex A + n I); `nc` cases pass a non-contiguous view
(the transpose of a contiguous tensor) with the same values."""
import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same_outcome, requires_torch, torch as T
from pyctorch.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:torch\\.:UserWarning")  # the deprecation notes (both libraries)

DTYPES = ["complex64", "complex128"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _cplx(shape, seed=0):
    r = _rng(seed)
    return r.standard_normal(shape) + 1j * r.standard_normal(shape)


def _general(shape, seed=0):
    """well-conditioned complex matrices (square ones: + n I)"""
    a = _cplx(shape, seed)
    if len(shape) > 1 and shape[-1] == shape[-2] and shape[-1] > 0:
        a = a + shape[-1] * np.eye(shape[-1])
    return a


def _hpd(shape, seed=0):
    """hermitian positive-definite"""
    a = _cplx(shape, seed)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _tensor(M, a, dtype, nc=False):
    if nc and a.ndim >= 2:  # the same values through a transposed (non-contiguous) view
        return M.tensor(np.swapaxes(a, -1, -2).copy(), dtype=getattr(M, dtype)).mT
    return M.tensor(a, dtype=getattr(M, dtype))


def _tol(dtype):
    return 2e-4 if dtype == "complex64" else 1e-9


def _same(fn, arrays, dtype="complex128", tol=None, nc=False):
    """fn(pyctorch, *tensors) and fn(torch, *tensors): the same values, dtypes and shapes, or the same error."""
    tol = _tol(dtype) if tol is None else tol
    run = lambda M: fn(M, *[_tensor(M, a, dtype, nc) for a in arrays])  # noqa: E731
    try:
        run(P)
    except NotImplementedError:  # an op that lacks complex support (torch has them all): the test fails with it
        raise
    except Exception:  # noqa: BLE001 - compared with torch's below
        pass
    assert_same_outcome(lambda: run(P), lambda: run(T), tol, tol, message=True)


SQUARE = [(3, 3), (1, 1), (2, 1, 3, 3), (0, 3, 3)]


@requires_torch
@pytest.mark.parametrize("shape", SQUARE, ids=str)
@pytest.mark.parametrize("dtype, nc", [("complex64", False), ("complex128", False), ("complex128", True)],
                         ids=["complex64", "complex128", "complex128-nc"])
@pytest.mark.parametrize("name", ["inv", "inv_ex", "det", "slogdet", "lu_factor", "lu_factor_ex",
                                  "lu", "matrix_exp",
                                  "torch.det", "torch.logdet", "torch.slogdet", "torch.inverse", "method.det",
                                  "method.inverse"])
def test_square_functions(name, shape, dtype, nc):
    def fn(M, A):
        if name.startswith("torch."):
            return getattr(M, name[6:])(A)
        if name.startswith("method."):
            return getattr(A, name[7:])()
        return getattr(M.linalg, name)(A)
    _same(fn, [_general(shape)], dtype, nc=nc)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 5, 2), (2, 2, 4), (0, 3)], ids=str)
def test_rectangular_lu(shape, dtype):
    _same(lambda M, A: M.linalg.lu_factor_ex(A), [_general(shape)], dtype)
    _same(lambda M, A: M.linalg.lu(A), [_general(shape)], dtype)
    _same(lambda M, A: M.lu_unpack(*M.linalg.lu_factor(A)), [_general(shape)], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_singular(dtype):
    s = np.array([[1.0 + 1j, 2.0], [2.0 + 2j, 4.0 - 0j]]) * np.array([[1.0], [1.0]])
    s[1] = s[0] * (1 + 1j)
    for fn in [lambda M, A: M.linalg.det(A), lambda M, A: M.linalg.slogdet(A), lambda M, A: M.linalg.inv_ex(A).info, lambda M, A: M.linalg.lu_factor_ex(A).info]:
        _same(fn, [s], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 4)),
                                    ((3, 3), (4, 3, 2)), ((2, 1, 3, 3), (3, 3, 1)), ((0, 3, 3), (3, 1))], ids=str)
def test_solve(shapes, left, dtype):
    a, b = _general(shapes[0]), _cplx(shapes[1], 1)
    if not left and len(shapes[1]) >= 2:
        b = np.swapaxes(b, -1, -2).copy()
    _same(lambda M, A, B: M.linalg.solve(A, B, left=left), [a, b], dtype)
    _same(lambda M, A, B: M.linalg.solve_ex(A, B, left=left), [a, b], dtype, nc=True)
    if len(shapes[1]) >= 2:
        for adjoint in (False, True):
            _same(lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B, left=left, adjoint=adjoint), [a, b],
                  dtype)
        for upper in (True, False):
            t = np.triu(a) if upper else np.tril(a)
            for unit in (True, False):
                _same(lambda M, A, B: M.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit),
                      [t, b], dtype, nc=unit)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_solvers(dtype):
    a, b = _general((2, 3, 3)), _cplx((2, 3, 2), 1)
    hpd = _hpd((2, 3, 3))
    _same(lambda M, A, B: M.triangular_solve(B, A), [a, b], dtype)
    _same(lambda M, A, B: M.triangular_solve(B, A, upper=False, transpose=True, unitriangular=True), [a, b], dtype)
    _same(lambda M, A, B: M.cholesky_solve(B, M.linalg.cholesky(A)), [hpd, b], dtype)
    _same(lambda M, A, B: M.cholesky_solve(B, M.linalg.cholesky(A, upper=True), upper=True), [hpd, b], dtype)
    _same(lambda M, A: M.cholesky_inverse(M.linalg.cholesky(A)), [hpd], dtype)
    _same(lambda M, A: M.cholesky_inverse(M.linalg.cholesky(A, upper=True), upper=True), [hpd], dtype)
    _same(lambda M, A, B: M.lu_solve(B, *M.linalg.lu_factor(A)), [a, b], dtype)
    _same(lambda M, A: M.lu(A), [a], dtype)
    for herm in (False, True):
        m = hpd if herm else _general((2, 3, 3)) + np.swapaxes(_general((2, 3, 3)), -1, -2)
        _same(lambda M, A: M.linalg.ldl_factor_ex(A, hermitian=herm), [m], dtype)
        _same(lambda M, A, B: M.linalg.ldl_solve(*M.linalg.ldl_factor(A, hermitian=herm), B, hermitian=herm),
              [m, b], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0)], ids=str)
def test_cholesky(shape, dtype):
    a = _hpd(shape)
    for upper in (False, True):
        _same(lambda M, A: M.linalg.cholesky(A, upper=upper), [a], dtype)
        _same(lambda M, A: M.linalg.cholesky_ex(A, upper=upper), [a], dtype, nc=True)
        _same(lambda M, A: M.cholesky(A, upper), [a], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 2), (2, 2, 5), (0, 3), (3, 0)], ids=str)
def test_qr(shape, dtype):
    a = _general(shape)
    for mode in ("reduced", "complete", "r"):
        _same(lambda M, A: M.linalg.qr(A, mode=mode), [a], dtype)
    _same(lambda M, A: M.linalg.qr(A), [a], dtype, nc=True)
    _same(lambda M, A: M.qr(A, some=False), [a], dtype)
    _same(lambda M, A: M.geqrf(A), [a], dtype)
    if shape[-2] >= shape[-1]:
        _same(lambda M, A: M.linalg.householder_product(*M.geqrf(A)), [a], dtype)
        _same(lambda M, A: M.orgqr(*M.geqrf(A)), [a], dtype)
    c = _cplx(shape[:-2] + (shape[-2], 2), 5)
    for left in (True, False):
        for tr in (True, False):
            cc = c if left else np.swapaxes(c, -1, -2).copy()
            _same(lambda M, A, C: M.ormqr(*M.geqrf(A), C, left=left, transpose=tr), [a, cc], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 5, 3), (5, 1)), ((2, 5, 3), (2, 5)),
                                    ((4, 4), (4,))], ids=str)
def test_lstsq(shapes, driver, dtype):
    a, b = _general(shapes[0]), _cplx(shapes[1], 2)
    _same(lambda M, A, B: M.linalg.lstsq(A, B, driver=driver), [a, b], dtype, tol=1e-3 if dtype == "complex64" else 1e-8)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_composites(dtype):
    rng = _rng(3)
    a, b, c, v = _cplx((3, 4), 3), _cplx((4, 5), 4), _cplx((5, 2), 5), _cplx(3, 6)
    _same(lambda M, A, B, C: M.linalg.multi_dot([A, B, C]), [a, b, c], dtype)
    _same(lambda M, A, B, C, V: M.linalg.multi_dot([V, A, B, C]), [a, b, c, v], dtype)
    sq = _general((2, 3, 3))
    for n in (-3, -1, 0, 1, 2, 5):
        _same(lambda M, A: M.linalg.matrix_power(A, n), [sq], dtype, tol=1e-3 if dtype == "complex64" else 1e-8)
    _same(lambda M, A: M.linalg.matrix_exp(A), [sq / 3], dtype, tol=1e-3 if dtype == "complex64" else 1e-8)
    x, y = _cplx((2, 1, 3), 7), _cplx((4, 3), 8)
    _same(lambda M, X, Y: M.linalg.cross(X, Y[None]), [x, y], dtype)
    _same(lambda M, X, Y: M.linalg.vecdot(X, Y), [x, y], dtype)
    t = _general((6, 6)).reshape(6, 2, 3)
    _same(lambda M, A: M.linalg.tensorinv(A, ind=1), [t], dtype)
    _same(lambda M, A, B: M.linalg.tensorsolve(A, B), [t, rng.standard_normal(6) + 0j], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_vander(dtype):
    _same(lambda M, X: M.linalg.vander(X), [_cplx((2, 4), 9)], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_methods(dtype):
    a, b, h = _general((2, 3, 3)), _cplx((2, 3, 2), 1), _hpd((3, 3))
    for fn, arrays in [(lambda M, A: A.inverse(), [a]), (lambda M, A: A.det(), [a]), (lambda M, A: A.logdet(), [a]),
                       (lambda M, A: A.slogdet(), [a]), (lambda M, A: A.matrix_power(3), [a]),
                       (lambda M, A: A.matrix_exp(), [a / 3]), (lambda M, A: A.geqrf(), [a]),
                       (lambda M, A: A.orgqr(A.geqrf()[1]), [a]),
                       (lambda M, A, B: A.geqrf()[0].ormqr(A.geqrf()[1], B, transpose=True), [a, b]),
                       (lambda M, A, B: B.cholesky_solve(M.linalg.cholesky(A)), [h, b]),
                       (lambda M, A: M.linalg.cholesky(A).cholesky_inverse(), [h]),
                       (lambda M, A, B: B.lu_solve(*M.linalg.lu_factor(A)), [a, b]),
                       (lambda M, A, B: B.triangular_solve(A), [a, b]), (lambda M, A: A.cholesky(), [h]),
                       (lambda M, A: A.qr(), [a]), (lambda M, A: A.lu(), [a])]:
        _same(fn, arrays, dtype)


ERRORS = {
    "inv_singular_batch": lambda M: M.linalg.inv(M.stack([M.eye(2), M.zeros(2, 2)]).to(M.complex64)),
    "solve_singular": lambda M: M.linalg.solve(M.zeros(3, 3, dtype=M.complex128), M.ones(3, dtype=M.complex128)),
    "solve_dtype": lambda M: M.linalg.solve(M.eye(3).to(M.complex64), M.ones(3, 4, dtype=M.complex128)),
    "cholesky_not_pd": lambda M: M.linalg.cholesky(-M.eye(2).to(M.complex128)),
    "lu_factor_singular": lambda M: M.linalg.lu_factor(M.zeros(2, 2, 2, dtype=M.complex64)),
    "lstsq_mixed": lambda M: M.linalg.lstsq(M.eye(3).to(M.complex64), M.ones(3, 1)),
    "ormqr_dtype": lambda M: M.ormqr(M.ones(3, 2, dtype=M.complex64), M.ones(2, dtype=M.complex64), M.ones(3, 2)),
    "ormqr_tau_dtype": lambda M: M.ormqr(M.ones(3, 2), M.ones(2, dtype=M.float64), M.ones(3, 2)),
    "inv_out_dtype": lambda M: M.linalg.inv(M.eye(2).to(M.complex128), out=M.empty(0, dtype=M.complex64)),
    "slogdet_out_dtype": lambda M: M.linalg.slogdet(M.eye(2).to(M.complex128),
                                                    out=(M.empty(0, dtype=M.complex128), M.empty(0, dtype=M.complex128))),
    "cholesky_not_pd_batch": lambda M: M.linalg.cholesky(M.stack([M.eye(2), -M.eye(2)]).to(M.complex64)),
    "inv_ex_check": lambda M: M.linalg.inv_ex(M.zeros(2, 2, 2, dtype=M.complex64), check_errors=True),
    "solve_mixed": lambda M: M.linalg.solve(M.eye(3).to(M.complex128), M.ones(3, dtype=M.float64)),
    "lu_solve_mixed": lambda M: M.linalg.lu_solve(*M.linalg.lu_factor(M.eye(3).to(M.complex128)), M.ones(3, 3)),
    "householder_mixed": lambda M: M.linalg.householder_product(M.eye(3).to(M.complex128), M.ones(3)),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    def run(M):
        try:
            r = ERRORS[case](M)
        except Exception as e:  # noqa: BLE001 - the type and text are what is compared
            return type(e).__name__, str(e)
        return "ok", repr([x.tolist() for x in r] if isinstance(r, tuple) else r.tolist())
    assert run(P) == run(T)


# ---- gradients ---------------------------------------------------------------------------------------------

def _loss(M, out):
    """a real loss of every floating or complex output, weighted so that every element counts differently"""
    loss = 0
    for i, o in enumerate(out if isinstance(out, (tuple, list)) else [out]):
        if not isinstance(o, M.Tensor) or not (o.dtype.is_floating_point or o.dtype.is_complex):
            continue
        w = np.linspace(0.3, 1.7, o.numel()).reshape(tuple(o.shape)) * (1 + 0.5j * (i + 1))
        if o.dtype.is_complex:
            loss = loss + (o * M.tensor(w, dtype=o.dtype)).real.sum() + 0.1 * (o.abs() ** 2).sum()
        else:
            loss = loss + (o * M.tensor(w.real, dtype=o.dtype)).sum()
    return loss


def _same_grads(fn, arrays, dtype="complex128"):
    def run(M):
        ts = [_tensor(M, a, dtype).requires_grad_(True) for a in arrays]
        gs = M.autograd.grad(_loss(M, fn(M, *ts)), ts, allow_unused=True)
        return [g if g is None else g.detach() for g in gs]
    tol = 1e-3 if dtype == "complex64" else 1e-8
    assert_same_outcome(lambda: run(P), lambda: run(T), tol, tol, message=True)


_A, _B, _H = _general((2, 3, 3)), _cplx((2, 3, 2), 1), _hpd((3, 3))
_TALL, _WIDE, _TAU, _C = _general((4, 3)), _general((3, 5)), 0.3 * _cplx(3, 4), _cplx((4, 2), 5)
GRADS = {
    "inv": (lambda M, A: M.linalg.inv(A), [_A]),
    "det": (lambda M, A: M.linalg.det(A), [_A]),
    "slogdet": (lambda M, A: M.linalg.slogdet(A), [_A]),
    "slogdet_sign": (lambda M, A: M.linalg.slogdet(A).sign, [_A]),
    "logdet": (lambda M, A: M.logdet(A), [_A]),
    "solve": (lambda M, A, B: M.linalg.solve(A, B), [_A, _B]),
    "solve_right": (lambda M, A, B: M.linalg.solve(A, B, left=False), [_A, np.swapaxes(_B, -1, -2).copy()]),
    "solve_vector": (lambda M, A, B: M.linalg.solve(A, B), [_A, _B[..., 0].copy()]),
    "solve_triangular": (lambda M, A, B: M.linalg.solve_triangular(A, B, upper=True), [np.triu(_A), _B]),
    "solve_triangular_right": (lambda M, A, B: M.linalg.solve_triangular(A, B, upper=False, left=False),
                               [np.tril(_A), np.swapaxes(_B, -1, -2).copy()]),
    "cholesky": (lambda M, A: M.linalg.cholesky(A), [_H]),
    "cholesky_upper": (lambda M, A: M.linalg.cholesky(A, upper=True), [_H]),
    # every direction of X is a hermitian one of X X^H (finite differences of cholesky need hermitian steps)
    "cholesky_gram": (lambda M, X: M.linalg.cholesky(X @ X.mH + 3 * M.eye(3, dtype=X.dtype)), [_cplx((3, 3), 6)]),
    "qr_tall": (lambda M, A: M.linalg.qr(A), [_TALL]),
    "qr_square": (lambda M, A: M.linalg.qr(A), [_A]),
    "qr_wide": (lambda M, A: M.linalg.qr(A), [_WIDE]),
    "lu_factor": (lambda M, A: M.linalg.lu_factor(A), [_A]),
    "lu": (lambda M, A: M.linalg.lu(A), [_A]),
    "lu_solve": (lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B), [_A, _B]),
    "lu_solve_adjoint": (lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B, adjoint=True), [_A, _B]),
    "lu_solve_right": (lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B, left=False),
                       [_A, np.swapaxes(_B, -1, -2).copy()]),
    "lu_solve_right_adjoint": (lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B, left=False,
                                                                 adjoint=True), [_A, np.swapaxes(_B, -1, -2).copy()]),
    "householder_product": (lambda M, A, t: M.linalg.householder_product(A, t), [_TALL, _TAU]),
    "ormqr": (lambda M, A, t, C: M.ormqr(A, t, C), [_TALL, _TAU, _C]),
    "ormqr_transpose": (lambda M, A, t, C: M.ormqr(A, t, C, transpose=True), [_TALL, _TAU, _C]),
    "matrix_exp": (lambda M, A: M.linalg.matrix_exp(A), [_A / 3]),
    "matrix_power": (lambda M, A: M.linalg.matrix_power(A, -2), [_A]),
    # the factor's gradient is torch's full matrix (its formula does not mask the triangle the forward reads)
    "cholesky_solve": (lambda M, L, B: M.cholesky_solve(B, L), [np.tril(_H), _B]),
    "cholesky_solve_upper": (lambda M, L, B: M.cholesky_solve(B, L, upper=True), [np.triu(_H), _B]),
    "cholesky_inverse": (lambda M, L: M.cholesky_inverse(L), [np.tril(_H)]),
    "multi_dot": (lambda M, A, B: M.linalg.multi_dot([A[0], B[0], B[1].mT]), [_A, _B]),
    "tensorinv": (lambda M, A: M.linalg.tensorinv(A, ind=1), [_general((6, 6)).reshape(6, 2, 3)]),
    "vecdot": (lambda M, A, B: M.linalg.vecdot(A, B), [_A, _A[::-1].copy()]),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads(name):
    fn, arrays = GRADS[name]
    try:  # a missing complex kernel fails the test with its own NotImplementedError
        ts = [_tensor(P, a, "complex128").requires_grad_(True) for a in arrays]
        P.autograd.grad(_loss(P, fn(P, *ts)), ts, allow_unused=True)
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 - compared with torch's below
        pass
    _same_grads(fn, arrays)


GRADCHECK = ["inv", "det", "slogdet", "solve", "solve_right", "matrix_exp", "householder_product", "ormqr_transpose",
             "cholesky_gram", "qr_tall", "lu_solve_adjoint"]


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck(name):
    fn, arrays = GRADS[name]
    small = [a[0] if a.ndim == 3 else a for a in arrays]  # one matrix: finite differences are slow
    ts = [P.tensor(a, dtype=P.complex128).requires_grad_(True) for a in small]
    assert gradcheck(lambda *xs: _loss(P, fn(P, *xs)), ts, eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "solve"])
def test_gradgradcheck(name):
    fn, arrays = GRADS[name]
    ts = [P.tensor(a[0] if a.ndim == 3 else a, dtype=P.complex128).requires_grad_(True) for a in arrays]
    assert gradgradcheck(lambda *xs: _loss(P, fn(P, *xs)), ts, eps=1e-6, atol=1e-5)


@requires_torch
@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "slogdet_sign", "solve", "matrix_exp",
                                  "lu_solve_adjoint"])
def test_forward_ad(name):
    """the tangents of the complex ops (their JVPs transpose the backward formulas) as torch's"""
    fn, arrays = GRADS[name]
    try:  # a missing complex kernel fails the test with its own NotImplementedError
        with P.autograd.forward_ad.dual_level():
            fn(P, *[P.autograd.forward_ad.make_dual(_tensor(P, a, "complex128"), _tensor(P, a, "complex128"))
                    for a in arrays])
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 - compared with torch's below
        pass

    def run(M):
        fa = M.autograd.forward_ad
        with fa.dual_level():
            duals = [fa.make_dual(_tensor(M, a, "complex128"), _tensor(M, _cplx(a.shape, 11 + i), "complex128"))
                     for i, a in enumerate(arrays)]
            out = fn(M, *duals)
            return [fa.unpack_dual(o).tangent for o in (out if isinstance(out, tuple) else (out,))]
    assert_same_outcome(lambda: run(P), lambda: run(T), 1e-8, 1e-8, message=True)


# ---- the complex products: every layout blas.c hands to OpenBLAS's c/z routines and the ones it packs first, or
# sends to the blocked loop (Note [BLAS dtypes] in csrc/aten/cpu/blas.c) ----

def _c(M, shape, dtype, seed=0):
    return M.tensor(_cplx(shape, seed), dtype=getattr(M, dtype))


def _nan_self(M, shape, dtype):
    return M.full(shape, complex(float("nan"), float("nan")), dtype=getattr(M, dtype))


# name -> fn(M, dtype): one product, inputs made from the same numpy values in both libraries
PRODUCT_CASES = {
    # mm: row-major (NoTrans), transposed (Trans), a leading dimension wider than the row, packed operands
    "mm": lambda M, d: M.mm(_c(M, (40, 24), d), _c(M, (24, 36), d, 1)),
    "mm_a_t": lambda M, d: M.mm(_c(M, (24, 40), d).mT, _c(M, (24, 36), d, 1)),
    "mm_b_t": lambda M, d: M.mm(_c(M, (40, 24), d), _c(M, (36, 24), d, 1).mT),
    "mm_both_t": lambda M, d: _c(M, (24, 40), d).mT @ _c(M, (36, 24), d, 1).mT,
    "mm_ld": lambda M, d: M.mm(_c(M, (40, 50), d)[:, 3:27], _c(M, (24, 60), d, 1)[:, 5:41]),
    "mm_inner_stride": lambda M, d: M.mm(_c(M, (40, 48), d)[:, ::2], _c(M, (24, 72), d, 1)[:, ::2]),
    "mm_sliced_both": lambda M, d: M.mm(_c(M, (80, 48), d)[::2, ::2], _c(M, (48, 72), d, 1)[::2, ::2]),
    "mm_conj": lambda M, d: M.mm(_c(M, (40, 24), d).conj(), _c(M, (24, 36), d, 1)),
    "mm_mH": lambda M, d: _c(M, (24, 40), d).mH @ _c(M, (24, 36), d, 1),
    "mm_resolved_conj": lambda M, d: _c(M, (24, 40), d).mH.resolve_conj() @ _c(M, (36, 24), d, 1).conj().mT,
    "mm_small": lambda M, d: M.mm(_c(M, (3, 4), d), _c(M, (4, 2), d, 1)),  # the blocked loop (below BLAS's size)
    "mm_small_strided": lambda M, d: M.mm(_c(M, (6, 8), d)[::2, ::2], _c(M, (4, 2), d, 1)),
    "mm_row": lambda M, d: M.mm(_c(M, (1, 64), d), _c(M, (64, 48), d, 1)),  # m == 1: gemv on B^T
    "mm_row_t": lambda M, d: M.mm(_c(M, (1, 64), d), _c(M, (48, 64), d, 1).mT),
    "mm_col": lambda M, d: M.mm(_c(M, (48, 64), d), _c(M, (64, 1), d, 1)),  # n == 1: gemv
    "mm_1x1": lambda M, d: M.mm(_c(M, (1, 3000), d), _c(M, (3000, 1), d, 1)),  # the dot
    "mm_1x1_strided": lambda M, d: M.mm(_c(M, (2, 3000), d)[:1], _c(M, (3000, 2), d, 1)[:, 1:]),
    "mm_out_col_major": lambda M, d: M.mm(_c(M, (40, 24), d), _c(M, (24, 36), d, 1),
                                          out=M.empty(36, 40, dtype=getattr(M, d)).mT),
    "mm_out_strided": lambda M, d: M.mm(_c(M, (40, 24), d), _c(M, (24, 36), d, 1),
                                        out=M.zeros(40, 72, dtype=getattr(M, d))[:, ::2]),
    "mm_out_resized": lambda M, d: M.mm(_c(M, (40, 24), d), _c(M, (24, 36), d, 1), out=M.empty(0, dtype=getattr(M, d))),
    "mm_empty_m": lambda M, d: M.mm(_c(M, (0, 24), d), _c(M, (24, 36), d, 1)),
    "mm_k0": lambda M, d: M.mm(_c(M, (40, 0), d), _c(M, (0, 36), d, 1)),
    "mm_mixed_dtypes": lambda M, d: M.mm(_c(M, (4, 3), d), _c(M, (3, 2), "complex64" if d == "complex128" else
                                                                  "complex128", 1)),
    "mm_real_and_complex": lambda M, d: M.mm(M.ones(4, 3), _c(M, (3, 2), d, 1)),
    # addmm: alpha / beta semantics (beta 0 ignores NaN, a real 0.5 is not 0, complex coefficients)
    "addmm_beta0_nan": lambda M, d: M.addmm(_nan_self(M, (40, 36), d), _c(M, (40, 24), d), _c(M, (24, 36), d, 1),
                                            beta=0),
    "addmm_beta0_nan_small": lambda M, d: M.addmm(_nan_self(M, (3, 2), d), _c(M, (3, 4), d), _c(M, (4, 2), d, 1),
                                                  beta=0.0, alpha=2),
    "addmm_beta_half": lambda M, d: M.addmm(_c(M, (40, 36), d, 2), _c(M, (40, 24), d), _c(M, (24, 36), d, 1),
                                            beta=0.5, alpha=2.0),
    "addmm_beta_half_small": lambda M, d: M.addmm(_c(M, (3, 2), d, 2), _c(M, (3, 4), d), _c(M, (4, 2), d, 1),
                                                  beta=0.5),
    "addmm_complex_coefs": lambda M, d: M.addmm(_c(M, (40, 36), d, 2), _c(M, (40, 24), d), _c(M, (24, 36), d, 1),
                                                beta=0.5 - 1j, alpha=1 + 2j),
    "addmm_complex_coefs_small": lambda M, d: M.addmm(_c(M, (3, 2), d, 2), _c(M, (3, 4), d), _c(M, (4, 2), d, 1),
                                                      beta=-1j, alpha=0.5j),
    "addmm_broadcast_self": lambda M, d: M.addmm(_c(M, (36,), d, 2), _c(M, (40, 24), d).mT.mT, _c(M, (24, 36), d, 1),
                                                 beta=0.5),
    "addmm_k0_beta_half": lambda M, d: M.addmm(_c(M, (4, 5), d, 2), _c(M, (4, 0), d), _c(M, (0, 5), d, 1), beta=0.5),
    "addmm_k0_beta0_nan": lambda M, d: M.addmm(_nan_self(M, (4, 5), d), _c(M, (4, 0), d), _c(M, (0, 5), d, 1), beta=0),
    "addmm_out": lambda M, d: M.addmm(_c(M, (40, 36), d, 2), _c(M, (40, 24), d), _c(M, (24, 36), d, 1), alpha=1j,
                                      out=M.full((40, 36), complex("nan"), dtype=getattr(M, d))),
    "addmm_out_is_self": lambda M, d: (lambda c: M.addmm(c, _c(M, (40, 24), d), _c(M, (24, 36), d, 1), beta=0.5,
                                                         out=c))(_c(M, (40, 36), d, 2)),
    "addmm_inplace_t": lambda M, d: _c(M, (36, 40), d, 2).mT.addmm_(_c(M, (40, 24), d), _c(M, (24, 36), d, 1),
                                                                    beta=0.5, alpha=-1),
    "addmm_inplace_nan_beta0": lambda M, d: _nan_self(M, (40, 36), d).addmm_(_c(M, (40, 24), d),
                                                                              _c(M, (24, 36), d, 1), beta=0),
    # batched: bmm / baddbmm / addbmm / matmul, broadcast batches (stride 0), transposed batches
    "bmm": lambda M, d: M.bmm(_c(M, (5, 20, 12), d), _c(M, (5, 12, 16), d, 1)),
    "bmm_t": lambda M, d: M.bmm(_c(M, (5, 12, 20), d).mT, _c(M, (5, 16, 12), d, 1).mT),
    "bmm_expanded": lambda M, d: M.bmm(_c(M, (1, 20, 12), d).expand(5, 20, 12), _c(M, (5, 12, 16), d, 1)),
    "bmm_batch_last": lambda M, d: M.bmm(_c(M, (20, 12, 5), d).permute(2, 0, 1), _c(M, (5, 12, 16), d, 1)),
    "bmm_small_batches": lambda M, d: M.bmm(_c(M, (64, 3, 4), d), _c(M, (64, 4, 2), d, 1)),
    "bmm_many_batches": lambda M, d: M.bmm(_c(M, (64, 16, 16), d), _c(M, (64, 16, 16), d, 1)),
    "bmm_empty_batch": lambda M, d: M.bmm(_c(M, (0, 3, 4), d), _c(M, (0, 4, 2), d, 1)),
    "bmm_k0": lambda M, d: M.bmm(_c(M, (2, 3, 0), d), _c(M, (2, 0, 2), d, 1)),
    "bmm_out": lambda M, d: M.bmm(_c(M, (5, 20, 12), d), _c(M, (5, 12, 16), d, 1),
                                  out=M.empty(5, 16, 20, dtype=getattr(M, d)).mT),
    "baddbmm_beta0_nan": lambda M, d: M.baddbmm(_nan_self(M, (5, 20, 16), d), _c(M, (5, 20, 12), d),
                                                _c(M, (5, 12, 16), d, 1), beta=0, alpha=1 - 1j),
    "baddbmm_broadcast": lambda M, d: M.baddbmm(_c(M, (20, 1), d, 2), _c(M, (5, 20, 12), d),
                                                _c(M, (5, 12, 16), d, 1), beta=0.5, alpha=2),
    "baddbmm_k0": lambda M, d: M.baddbmm(_c(M, (2, 3, 2), d, 2), _c(M, (2, 3, 0), d), _c(M, (2, 0, 2), d, 1),
                                         beta=0.5j),
    "addbmm": lambda M, d: M.addbmm(_c(M, (20, 16), d, 2), _c(M, (5, 20, 12), d), _c(M, (5, 12, 16), d, 1),
                                    beta=0.5, alpha=1j),
    "matmul_broadcast": lambda M, d: M.matmul(_c(M, (3, 1, 20, 12), d), _c(M, (4, 12, 16), d, 1)),
    "matmul_3d_2d": lambda M, d: _c(M, (3, 20, 12), d) @ _c(M, (16, 12), d, 1).mT,
    "matmul_2d_3d": lambda M, d: _c(M, (20, 12), d) @ _c(M, (3, 12, 16), d, 1),
    "matmul_vec_mat": lambda M, d: _c(M, (12,), d) @ _c(M, (3, 12, 16), d, 1),
    "matmul_mat_vec": lambda M, d: _c(M, (3, 20, 12), d) @ _c(M, (12,), d, 1),
    # mv / addmv: gemv on the matrix as it is (NoTrans), on its transpose (Trans), packed, with a strided vector
    "mv": lambda M, d: M.mv(_c(M, (64, 48), d), _c(M, (48,), d, 1)),
    "mv_t": lambda M, d: M.mv(_c(M, (48, 64), d).mT, _c(M, (48,), d, 1)),
    "mv_sliced": lambda M, d: M.mv(_c(M, (64, 96), d)[:, ::2], _c(M, (96,), d, 1)[::2]),
    "mv_expanded_vec": lambda M, d: M.mv(_c(M, (64, 48), d), _c(M, (1,), d, 1).expand(48)),
    "mv_empty": lambda M, d: M.mv(_c(M, (0, 48), d), _c(M, (48,), d, 1)),
    "mv_k0": lambda M, d: M.mv(_c(M, (5, 0), d), _c(M, (0,), d, 1)),
    "mv_out_strided": lambda M, d: M.mv(_c(M, (64, 48), d), _c(M, (48,), d, 1),
                                        out=M.zeros(128, dtype=getattr(M, d))[::2]),
    "addmv_beta0_nan": lambda M, d: M.addmv(_nan_self(M, (64,), d), _c(M, (64, 48), d), _c(M, (48,), d, 1), beta=0),
    "addmv_coefs": lambda M, d: M.addmv(_c(M, (64,), d, 2), _c(M, (48, 64), d).mT, _c(M, (48,), d, 1),
                                        beta=0.5, alpha=2 - 1j),
    "addmv_complex_beta": lambda M, d: M.addmv(_c(M, (1,), d, 2), _c(M, (64, 48), d), _c(M, (96,), d, 1)[::2],
                                               beta=1j),
    "addmv_inplace_nan_beta0": lambda M, d: _nan_self(M, (64,), d).addmv_(_c(M, (64, 48), d), _c(M, (48,), d, 1),
                                                                          beta=0.0),
    # dot / vdot: cdotu / cdotc and the loop for strides BLAS does not take
    "dot": lambda M, d: M.dot(_c(M, (300,), d), _c(M, (300,), d, 1)),
    "dot_strided": lambda M, d: M.dot(_c(M, (600,), d)[::2], _c(M, (900,), d, 1)[::3]),
    "dot_expanded": lambda M, d: M.dot(_c(M, (1,), d).expand(300), _c(M, (300,), d, 1)),
    "vdot": lambda M, d: M.vdot(_c(M, (300,), d), _c(M, (300,), d, 1)),
    "vdot_strided": lambda M, d: M.vdot(_c(M, (600,), d)[1::2], _c(M, (300,), d, 1)),
    "vdot_empty": lambda M, d: M.vdot(_c(M, (0,), d), _c(M, (0,), d, 1)),
}


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(PRODUCT_CASES))
def test_products_layouts(name, dtype):
    fn = PRODUCT_CASES[name]
    tol = 1e-4 if dtype == "complex64" else 1e-10
    assert_same_outcome(lambda: fn(P, dtype), lambda: fn(T, dtype), tol, tol, message=True)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["mm", "mm_a_t", "mm_out_col_major", "mm_inner_stride", "mv", "mv_t",
                                  "bmm_many_batches", "bmm_t"])
def test_products_threaded(name, dtype):
    """The larger products split across two threads (Note [GEMM threading], blas_gemv's split) and the batch loop
    in parallel (Note [Batch parallelism])"""
    big = {"mm": lambda M, d: M.mm(_c(M, (160, 96), d), _c(M, (96, 144), d, 1)),
           "mm_a_t": lambda M, d: M.mm(_c(M, (96, 160), d).mT, _c(M, (96, 144), d, 1)),
           "mm_out_col_major": lambda M, d: M.mm(_c(M, (160, 96), d), _c(M, (96, 144), d, 1),
                                                 out=M.empty(144, 160, dtype=getattr(M, d)).mT),
           "mm_inner_stride": lambda M, d: M.mm(_c(M, (160, 192), d)[:, ::2], _c(M, (96, 144), d, 1)),
           "mv": lambda M, d: M.mv(_c(M, (600, 500), d), _c(M, (500,), d, 1)),
           "mv_t": lambda M, d: M.mv(_c(M, (500, 600), d).mT, _c(M, (500,), d, 1))}
    fn = big.get(name, PRODUCT_CASES[name])
    tol = 1e-4 if dtype == "complex64" else 1e-10
    saved = P.get_num_threads()
    P.set_num_threads(2)
    try:
        assert_same_outcome(lambda: fn(P, dtype), lambda: fn(T, dtype), tol, tol, message=True)
    finally:
        P.set_num_threads(saved)


@pytest.mark.filterwarnings("ignore::UserWarning")  # frombuffer's note on a non-writable buffer (none here)
@pytest.mark.parametrize("dtype", DTYPES)
def test_products_misaligned_data(dtype):
    """A complex tensor over a buffer that starts half an element off its natural alignment (frombuffer with an
    offset) is packed before OpenBLAS's c/z kernels see it (Note [BLAS dtypes]); torch 2.13 itself crashes on mm of
    such a complex128 tensor, so numpy is the oracle here."""
    npdt = np.complex64 if dtype == "complex64" else np.complex128
    isz, n = np.dtype(npdt).itemsize, 40
    half = isz // 2
    vals = _cplx((n * n,), 3).astype(npdt)
    buf = bytearray(half) + bytearray(vals.tobytes())
    c = P.frombuffer(buf, dtype=getattr(P, dtype), offset=half, count=n * n).view(n, n)
    assert c.data_ptr() % isz != 0
    a = vals.reshape(n, n)
    tol = 1e-4 if dtype == "complex64" else 1e-11
    out = P.frombuffer(bytearray(half + n * n * isz), dtype=getattr(P, dtype), offset=half, count=n * n).view(n, n)
    got = {"mm": (c @ c).numpy(), "mm_t": (c.mT @ c).numpy(), "mv": P.mv(c, c[0]).numpy(),
           "row": (c[:1] @ c).numpy(), "dot": (c[:1] @ c[:, 1:2]).numpy(), "vdot": P.vdot(c[0], c[1]).numpy(),
           "addmm": P.addmm(c, c, c, beta=0.5, alpha=1j).numpy(), "out": P.mm(c, c, out=out).numpy()}
    want = {"mm": a @ a, "mm_t": a.T @ a, "mv": a @ a[0], "row": a[:1] @ a, "dot": a[:1] @ a[:, 1:2],
            "vdot": np.vdot(a[0], a[1]), "addmm": 0.5 * a + 1j * (a @ a), "out": a @ a}
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=tol, atol=tol * n, err_msg=k)
    assert out.data_ptr() % isz != 0
