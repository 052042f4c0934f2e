"""torch.linalg's LAPACK-backed functions (csrc/aten/cpu/linalg_factor.c, linalg_solve.c) and the composites
built on them (pyctorch/linalg/, pyctorch/_linalg_functions.py): values, dtypes, shapes, errors and out=
against torch, and gradients by finite differences (pyctorch.autograd.gradcheck / gradgradcheck).

Each case is one function of the module M (pyctorch or torch) run on the same numpy data; factors that are
unique only up to signs (QR, eigenvectors) are compared through what does not depend on them."""
import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same_outcome, requires_torch, torch as T
from pyctorch.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:torch\\.:UserWarning")  # the deprecation notes (both libraries)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _general(shape, seed=0):
    """well-conditioned square (or rectangular) matrices"""
    a = _rng(seed).standard_normal(shape)
    if len(shape) > 1 and shape[-1] == shape[-2] and shape[-1] > 0:
        a = a + shape[-1] * np.eye(shape[-1])
    return a


def _spd(shape, seed=0):
    a = _rng(seed).standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _tensors(M, arrays, dtype):
    return [M.tensor(a, dtype=getattr(M, dtype)) for a in arrays]


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _leaves(v)]
    return [x]


def _same(fn, arrays, dtype="float64", tol=None, abs_=False):
    """fn(pyctorch, *tensors) and fn(torch, *tensors): the same values, dtypes and shapes, or the same error;
    abs_: factors unique up to signs, compared through their absolute values."""
    if tol is None:
        tol = 1e-4 if dtype == "float32" else 1e-9

    def run(M):
        r = fn(M, *_tensors(M, arrays, dtype))
        return [x.abs() if isinstance(x, M.Tensor) else x for x in _leaves(r)] if abs_ else r
    assert_same_outcome(lambda: run(P), lambda: run(T), tol, tol, message=True)


SQUARE = [(3, 3), (1, 1), (2, 4, 4), (2, 1, 3, 3), (0, 0), (0, 3, 3)]
DTYPES = ["float32", "float64"]


@requires_torch
@pytest.mark.parametrize("shape", SQUARE, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["inv", "inv_ex", "det", "slogdet", "lu_factor", "lu_factor_ex", "lu", "matrix_exp",
                                  "pinv", "matrix_rank", "cond", "torch.det", "torch.logdet", "torch.slogdet",
                                  "torch.inverse", "method.det", "method.inverse", "method.logdet"])
def test_square_functions(name, shape, dtype):

    def fn(M, A):
        if name.startswith("torch."):
            return getattr(M, name[6:])(A)
        if name.startswith("method."):
            return getattr(A, name[7:])()
        return getattr(M.linalg, name)(A)
    _same(fn, [_general(shape)], dtype, tol=2e-4 if dtype == "float32" else 1e-8)


@requires_torch
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 5, 2), (2, 2, 4), (0, 3), (3, 0)], ids=str)
def test_rectangular_lu(shape):
    _same(lambda M, A: M.linalg.lu_factor_ex(A), [_general(shape)])
    _same(lambda M, A: M.linalg.lu(A), [_general(shape)])
    _same(lambda M, A: M.lu_unpack(*M.linalg.lu_factor(A)), [_general(shape)])
    _same(lambda M, A: M.linalg.pinv(A), [_general(shape)])
    _same(lambda M, A: M.linalg.matrix_rank(A), [_general(shape)])


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_singular(dtype):
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    for fn in [lambda M, A: M.linalg.det(A), lambda M, A: M.linalg.slogdet(A), lambda M, A: M.logdet(A),
               lambda M, A: M.linalg.inv_ex(A).info, lambda M, A: M.linalg.lu_factor_ex(A).info,
               lambda M, A: M.linalg.matrix_rank(A), lambda M, A: M.linalg.cond(A, "fro"),
               lambda M, A: M.linalg.pinv(A), lambda M, A: M.logdet(-A[:1, :1])]:
        _same(fn, [s], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 4)),
                                    ((3, 3), (4, 3, 2)), ((2, 1, 3, 3), (3, 3, 1)), ((0, 3, 3), (3, 1))], ids=str)
def test_solve(shapes, left, dtype):
    a, b = _general(shapes[0]), _rng(1).standard_normal(shapes[1])
    if not left and len(shapes[1]) >= 2:
        b = np.swapaxes(b, -1, -2).copy()
    _same(lambda M, A, B: M.linalg.solve(A, B, left=left), [a, b], dtype)
    _same(lambda M, A, B: M.linalg.solve_ex(A, B, left=left), [a, b], dtype)
    if len(shapes[1]) >= 2:
        _same(lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B, left=left), [a, b], dtype)
        _same(lambda M, A, B: M.linalg.lu_solve(*M.linalg.lu_factor(A), B, left=left, adjoint=True), [a, b], dtype)
        for upper in (True, False):
            for unit in (True, False):
                _same(lambda M, A, B: M.linalg.solve_triangular(A.triu() if upper else A.tril(), B, upper=upper,
                                                                left=left, unitriangular=unit), [a, b], dtype)


@requires_torch
def test_torch_solvers():
    a, b = _general((2, 3, 3)), _rng(1).standard_normal((2, 3, 2))
    spd = _spd((2, 3, 3))
    _same(lambda M, A, B: M.triangular_solve(B, A), [a, b])
    _same(lambda M, A, B: M.triangular_solve(B, A, upper=False, transpose=True, unitriangular=True), [a, b])
    _same(lambda M, A, B: M.triangular_solve(B, A[0]), [a, b])
    _same(lambda M, A, B: M.cholesky_solve(B, M.linalg.cholesky(A)), [spd, b])
    _same(lambda M, A, B: M.cholesky_solve(B, M.linalg.cholesky(A, upper=True), upper=True), [spd, b])
    _same(lambda M, A, B: B.cholesky_solve(M.linalg.cholesky(A)), [spd, b])
    _same(lambda M, A: M.cholesky_inverse(M.linalg.cholesky(A)), [spd])
    _same(lambda M, A: M.cholesky_inverse(M.linalg.cholesky(A, upper=True), upper=True), [spd])
    _same(lambda M, A, B: M.lu_solve(B, *M.linalg.lu_factor(A)), [a, b])
    _same(lambda M, A: M.lu(A), [a])
    _same(lambda M, A: A.lu(get_infos=True), [a])
    _same(lambda M, A: M.linalg.ldl_solve(*M.linalg.ldl_factor(A), A[..., :2]), [spd])
    _same(lambda M, A: M.linalg.ldl_factor_ex(A), [spd])
    _same(lambda M, A: M.linalg.ldl_factor(A), [spd - 4 * np.eye(3)])


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (0, 2, 2)], ids=str)
def test_cholesky(shape, dtype):
    a = _spd(shape)
    for upper in (False, True):
        _same(lambda M, A: M.linalg.cholesky(A, upper=upper), [a], dtype)
        _same(lambda M, A: M.linalg.cholesky_ex(A, upper=upper), [a], dtype)
        _same(lambda M, A: M.cholesky(A, upper), [a], dtype)
        _same(lambda M, A: A.cholesky(upper=upper), [a], dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)], ids=str)
def test_eigh(shape, dtype):
    a = _spd(shape) * np.arange(1, shape[-1] + 1)[..., None] if shape[-1] else _spd(shape)
    a = a + np.swapaxes(a, -1, -2)
    for uplo in ("L", "U"):
        _same(lambda M, A: M.linalg.eigvalsh(A, UPLO=uplo), [a], dtype, tol=1e-3 if dtype == "float32" else 1e-9)
        _same(lambda M, A: M.linalg.eigh(A, UPLO=uplo), [a], dtype, tol=1e-3 if dtype == "float32" else 1e-9, abs_=True)
    w, v = P.linalg.eigh(P.tensor(a, dtype=getattr(P, dtype)))
    tol = 1e-3 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(((v * w.unsqueeze(-2)) @ v.mT).double().numpy(), a, atol=tol * 10 * max(1, abs(a).max() if a.size else 1))
    _same(lambda M, A: M.linalg.matrix_rank(A, hermitian=True), [a], dtype)
    _same(lambda M, A: M.linalg.pinv(A, hermitian=True), [a], dtype, tol=1e-3 if dtype == "float32" else 1e-9)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 2), (2, 2, 5), (0, 3), (3, 0)], ids=str)
def test_qr(shape, dtype):
    a = _general(shape)
    tol = 1e-4 if dtype == "float32" else 1e-9
    for mode in ("reduced", "complete", "r"):
        _same(lambda M, A: M.linalg.qr(A, mode=mode), [a], dtype, tol=tol, abs_=True)
        Q, R = P.linalg.qr(P.tensor(a, dtype=getattr(P, dtype)), mode=mode)
        if mode != "r":
            np.testing.assert_allclose((Q @ R).double().numpy(), a, atol=tol * 10)
            k = Q.shape[-1]
            np.testing.assert_allclose((Q.mT @ Q).double().numpy(), np.broadcast_to(np.eye(k), Q.shape[:-2] + (k, k)),
                                       atol=tol * 10)
    _same(lambda M, A: M.qr(A, some=False), [a], dtype, tol=tol, abs_=True)
    _same(lambda M, A: A.qr(), [a], dtype, tol=tol, abs_=True)
    _same(lambda M, A: M.geqrf(A), [a], dtype, tol=tol)
    if shape[-2] >= shape[-1]:
        _same(lambda M, A: M.linalg.householder_product(*M.geqrf(A)), [a], dtype, tol=tol)
        _same(lambda M, A: M.orgqr(*M.geqrf(A)), [a], dtype, tol=tol)
    c = _rng(5).standard_normal(shape[:-2] + (shape[-2], 2))
    for left in (True, False):
        for tr in (True, False):
            cc = c if left else np.swapaxes(c, -1, -2).copy()
            _same(lambda M, A, C: M.ormqr(*M.geqrf(A), C, left=left, transpose=tr), [a, cc], dtype, tol=tol)
    _same(lambda M, A, C: A.geqrf()[0].ormqr(A.geqrf()[1], C), [a, c], dtype, tol=tol)


@requires_torch
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 5, 3), (5, 1)), ((2, 5, 3), (2, 5)),
                                    ((4, 4), (4,))], ids=str)
def test_lstsq(shapes, driver):
    a, b = _general(shapes[0]), _rng(2).standard_normal(shapes[1])
    if driver == "gels" and shapes[0][-2] < shapes[0][-1]:
        a = a + 0  # full rank; gels's minimum-norm solution
    _same(lambda M, A, B: M.linalg.lstsq(A, B, driver=driver), [a, b], "float64", tol=1e-8)
    _same(lambda M, A, B: M.linalg.lstsq(A, B, driver=driver), [a, b], "float32", tol=1e-3)


@requires_torch
def test_composites():
    rng = _rng(3)
    a, b, c = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 2))
    v = rng.standard_normal(3)
    _same(lambda M, A, B, C: M.linalg.multi_dot([A, B, C]), [a, b, c])
    _same(lambda M, A, B, C, V: M.linalg.multi_dot([V, A, B, C, C.mT[:, :1].squeeze(-1)]),
          [a, b, c, v])
    sq = _general((2, 3, 3))
    for n in (-3, -1, 0, 1, 2, 5):
        _same(lambda M, A: M.linalg.matrix_power(A, n), [sq])
        _same(lambda M, A: A.matrix_power(n), [sq])
    _same(lambda M, A: M.linalg.matrix_power(A.long(), 3), [np.round(sq)])
    for p in (None, 2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"):
        _same(lambda M, A: M.linalg.cond(A, p), [sq])
    _same(lambda M, A: M.linalg.matrix_exp(A * 3), [sq])
    _same(lambda M, A: M.matrix_exp(A / 10), [sq], "float32", tol=1e-5)
    x, y = rng.standard_normal((2, 1, 3)), rng.standard_normal((4, 3))
    _same(lambda M, X, Y: M.linalg.cross(X, Y[None]), [x, y])
    _same(lambda M, X, Y: M.linalg.vecdot(X, Y), [x, y])
    _same(lambda M, X: M.linalg.vander(X), [rng.standard_normal((2, 4))])
    _same(lambda M, X: M.linalg.vander(X, N=3), [rng.standard_normal(4)])
    _same(lambda M, X: M.vander(X), [rng.standard_normal(4)])
    _same(lambda M, X: M.vander(X, 3, increasing=True), [rng.standard_normal(4)])
    _same(lambda M, X: M.linalg.diagonal(X, offset=1), [rng.standard_normal((2, 3, 4))])
    t = _general((6, 6)).reshape(6, 2, 3)
    _same(lambda M, A: M.linalg.tensorinv(A, ind=1), [t])
    _same(lambda M, A, B: M.linalg.tensorsolve(A, B), [t, rng.standard_normal(6)])
    t2 = _general((6, 6)).reshape(2, 3, 6)
    _same(lambda M, A, B: M.linalg.tensorsolve(A, B, dims=(0,)), [t2.transpose(2, 0, 1).copy(),
                                                                  rng.standard_normal((6,))])
    _same(lambda M, A: M.linalg.pinv(A, atol=0.5), [rng.standard_normal((3, 4))])
    _same(lambda M, A: M.linalg.matrix_rank(A, atol=1.0, rtol=0.1), [rng.standard_normal((2, 3, 4))])
    _same(lambda M, A: M.pinverse(A), [rng.standard_normal((3, 4))])


@requires_torch
@pytest.mark.parametrize("shape", [(20, 8), (8, 20), (2, 12, 7)], ids=str)
def test_lowrank(shape):
    """the same generator draws as torch: the same singular values (vectors up to sign)"""
    a = _rng(4).standard_normal(shape)
    for M in (P, T):
        M.manual_seed(3)
    _same(lambda M, A: (M.manual_seed(3), M.svd_lowrank(A, q=4)[1])[1], [a])
    _same(lambda M, A: (M.manual_seed(3), M.svd_lowrank(A, q=4, niter=1, M=A.mean(-2, keepdim=True))[1])[1], [a])
    _same(lambda M, A: (M.manual_seed(3), M.pca_lowrank(A)[1])[1], [a])
    _same(lambda M, A: (M.manual_seed(3), M.pca_lowrank(A, q=3, center=False))[1], [a], abs_=True)
    U, S, V = P.pca_lowrank(P.tensor(a), q=min(shape[-2:]), niter=4)
    c = a - a.mean(-2, keepdims=True)
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ V.mT).numpy(), c, atol=1e-8)
    _same(lambda M, A: M.pca_lowrank(A, q=50), [a])


ERRORS = {
    "inv_1d": lambda M: M.linalg.inv(M.ones(3)),
    "inv_rect": lambda M: M.linalg.inv(M.ones(2, 3)),
    "inv_int": lambda M: M.linalg.inv(M.ones(3, 3, dtype=M.int64)),
    "inv_singular": lambda M: M.linalg.inv(M.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "inv_singular_batch": lambda M: M.linalg.inv(M.stack([M.eye(2), M.tensor([[1.0, 2.0], [2.0, 4.0]])])),
    "inv_ex_check": lambda M: M.linalg.inv_ex(M.zeros(2, 2, 2), check_errors=True),
    "inverse_singular": lambda M: M.inverse(M.zeros(2, 2)),
    "det_rect": lambda M: M.linalg.det(M.ones(2, 3)),
    "det_int": lambda M: M.det(M.ones(3, 3, dtype=M.int64)),
    "slogdet_1d": lambda M: M.linalg.slogdet(M.ones(3)),
    "logdet_rect": lambda M: M.logdet(M.ones(2, 3)),
    "solve_singular": lambda M: M.linalg.solve(M.zeros(3, 3), M.ones(3)),
    "solve_singular_batch": lambda M: M.linalg.solve(M.zeros(2, 3, 3), M.ones(3, 1)),
    "solve_ex_check": lambda M: M.linalg.solve_ex(M.zeros(2, 3, 3), M.ones(3, 1), check_errors=True),
    "solve_shapes": lambda M: M.linalg.solve(M.eye(3), M.ones(2, 4)),
    "solve_shapes_vec": lambda M: M.linalg.solve(M.eye(3), M.ones(2)),
    "solve_dtype": lambda M: M.linalg.solve(M.eye(3), M.ones(3, 4, dtype=M.float64)),
    "solve_left_vec": lambda M: M.linalg.solve(M.eye(3), M.ones(3), left=False),
    "solve_broadcast": lambda M: M.linalg.solve(M.eye(3).expand(2, 3, 3), M.ones(4, 3, 1)),
    "cholesky_not_pd": lambda M: M.linalg.cholesky(-M.eye(2)),
    "cholesky_not_pd_batch": lambda M: M.linalg.cholesky(M.stack([M.eye(2), M.tensor([[1.0, 2.0], [2.0, 1.0]])])),
    "cholesky_ex_check": lambda M: M.linalg.cholesky_ex(-M.eye(2).expand(3, 2, 2), check_errors=True),
    "cholesky_rect": lambda M: M.linalg.cholesky(M.ones(2, 3)),
    "cholesky_int": lambda M: M.linalg.cholesky(M.ones(3, 3, dtype=M.int64)),
    "torch_cholesky": lambda M: M.cholesky(-M.eye(2)),
    "eigh_uplo": lambda M: M.linalg.eigh(M.eye(3), UPLO="X"),
    "eigh_rect": lambda M: M.linalg.eigvalsh(M.ones(2, 3)),
    "eigh_int": lambda M: M.linalg.eigh(M.ones(3, 3, dtype=M.int64)),
    "qr_mode": lambda M: M.linalg.qr(M.eye(3), mode="x"),
    "qr_int": lambda M: M.linalg.qr(M.ones(3, 3, dtype=M.int64)),
    "qr_1d": lambda M: M.linalg.qr(M.ones(3)),
    "geqrf_1d": lambda M: M.geqrf(M.ones(3)),
    "lu_factor_singular": lambda M: M.linalg.lu_factor(M.zeros(2, 2, 2)),
    "lu_factor_ex_check": lambda M: M.linalg.lu_factor_ex(M.zeros(2, 2), check_errors=True),
    "lu_factor_nopivot": lambda M: M.linalg.lu_factor(M.eye(2), pivot=False),
    "lu_factor_1d": lambda M: M.linalg.lu_factor(M.ones(3)),
    "lu_factor_int": lambda M: M.linalg.lu_factor(M.ones(3, 3, dtype=M.int64)),
    "lu_1d": lambda M: M.linalg.lu(M.ones(3)),
    "lu_solve_1d": lambda M: M.linalg.lu_solve(*M.linalg.lu_factor(M.eye(3)), M.ones(3)),
    "lu_solve_pivots": lambda M: M.linalg.lu_solve(M.eye(3), M.ones(3, dtype=M.int64), M.ones(3, 2)),
    "solve_triangular_1d": lambda M: M.linalg.solve_triangular(M.eye(3), M.ones(3), upper=True),
    "solve_triangular_shapes": lambda M: M.linalg.solve_triangular(M.eye(3), M.ones(2, 3), upper=True),
    "solve_triangular_rect": lambda M: M.linalg.solve_triangular(M.ones(2, 3), M.ones(2, 3), upper=True),
    "lstsq_rows": lambda M: M.linalg.lstsq(M.ones(3, 4), M.ones(2, 3)),
    "lstsq_driver": lambda M: M.linalg.lstsq(M.ones(3, 4), M.ones(3, 2), driver="foo"),
    "lstsq_1d": lambda M: M.linalg.lstsq(M.ones(3), M.ones(3)),
    "lstsq_dtype": lambda M: M.linalg.lstsq(M.ones(3, 3), M.ones(3, 2, dtype=M.float64)),
    "householder_wide": lambda M: M.linalg.householder_product(M.ones(3, 4), M.ones(2)),
    "householder_tau": lambda M: M.linalg.householder_product(M.ones(4, 3), M.ones(4)),
    "matrix_power_rect": lambda M: M.linalg.matrix_power(M.ones(2, 3), 2),
    "matrix_power_singular": lambda M: M.linalg.matrix_power(M.zeros(2, 2), -1),
    "matrix_exp_int": lambda M: M.linalg.matrix_exp(M.ones(3, 3, dtype=M.int64)),
    "matrix_exp_1d": lambda M: M.linalg.matrix_exp(M.ones(3)),
    "multi_dot_one": lambda M: M.linalg.multi_dot([M.ones(2, 2)]),
    "multi_dot_3d": lambda M: M.linalg.multi_dot([M.ones(2, 2, 2), M.ones(2, 2)]),
    "multi_dot_mid": lambda M: M.linalg.multi_dot([M.ones(2), M.ones(2), M.ones(2)]),
    "pinv_int": lambda M: M.linalg.pinv(M.ones(3, 3, dtype=M.int64)),
    "matrix_rank_1d": lambda M: M.linalg.matrix_rank(M.ones(3)),
    "cross_len": lambda M: M.linalg.cross(M.ones(2, 4), M.ones(2, 4)),
    "vecdot_dtype": lambda M: M.linalg.vecdot(M.ones(3), M.ones(3, dtype=M.float64)),
    "tensorinv_ind": lambda M: M.linalg.tensorinv(M.ones(4, 2, 2), ind=0),
    "tensorinv_shape": lambda M: M.linalg.tensorinv(M.ones(4, 2, 3), ind=1),
    "cholesky_inverse_rect": lambda M: M.cholesky_inverse(M.ones(2, 3)),
    "removed_lstsq": lambda M: M.lstsq(M.eye(2), M.eye(2)),
    "removed_eig": lambda M: M.eye(2).eig(),
    "removed_symeig": lambda M: M.symeig(M.eye(2)),
    "ormqr_shape": lambda M: M.ormqr(M.ones(3, 2), M.ones(2), M.ones(4, 2)),
    "ormqr_tau": lambda M: M.ormqr(M.ones(3, 2), M.ones(3), M.ones(3, 2)),
    "ormqr_1d": lambda M: M.ormqr(M.ones(3), M.ones(2), M.ones(3, 2)),
    "inv_half": lambda M: M.linalg.inv(M.eye(3, dtype=M.float16)),
    "det_bf16": lambda M: M.linalg.det(M.eye(3, dtype=M.bfloat16)),
    "slogdet_half": lambda M: M.linalg.slogdet(M.eye(3, dtype=M.float16)),
    "cholesky_half": lambda M: M.linalg.cholesky(M.eye(3, dtype=M.float16)),
    "eigh_half": lambda M: M.linalg.eigh(M.eye(3, dtype=M.float16)),
    "qr_half": lambda M: M.linalg.qr(M.eye(3, dtype=M.float16)),
    "lu_factor_half": lambda M: M.linalg.lu_factor(M.eye(3, dtype=M.float16)),
    "solve_half": lambda M: M.linalg.solve(M.eye(3, dtype=M.float16), M.ones(3, dtype=M.float16)),
    "solve_triangular_int": lambda M: M.linalg.solve_triangular(M.eye(3, dtype=M.int64), M.ones(3, 3, dtype=M.int64),
                                                                upper=True),
    "solve_triangular_mixed": lambda M: M.linalg.solve_triangular(M.eye(3), M.ones(3, 3, dtype=M.float64), upper=True),
    "lstsq_half": lambda M: M.linalg.lstsq(M.eye(3, dtype=M.float16), M.ones(3, 1, dtype=M.float16)),
    "lstsq_empty": lambda M: M.linalg.lstsq(M.ones(0, 2), M.ones(0, 1)),
    "inv_nan": lambda M: M.linalg.inv(M.full((2, 2), float("nan"))),
    "slogdet_nan": lambda M: M.linalg.slogdet(M.full((2, 2), float("nan"))),
    "cholesky_nan": lambda M: M.linalg.cholesky(M.full((2, 2), float("nan"))),
    "matrix_exp_inf": lambda M: M.linalg.matrix_exp(M.tensor([[float("inf"), 3.0], [1.0, 5.0]])),
    "cond_rect_fro": lambda M: M.linalg.cond(M.ones(2, 3), "fro"),
    "cond_1d": lambda M: M.linalg.cond(M.ones(3)),
    "vander_bool": lambda M: M.linalg.vander(M.tensor([True, False])),
    "vander_N1": lambda M: M.linalg.vander(M.arange(3.0), N=1),
    "vander_int": lambda M: M.linalg.vander(M.arange(3)),
    "vecdot_int": lambda M: M.linalg.vecdot(M.arange(3), M.arange(3)),
    "multi_dot_shape": lambda M: M.linalg.multi_dot([M.ones(2, 3), M.ones(2, 3)]),
    "householder_batch": lambda M: M.linalg.householder_product(M.ones(2, 4, 3), M.ones(3, 2)),
    "householder_dtype": lambda M: M.linalg.householder_product(M.ones(4, 3), M.ones(2, dtype=M.float64)),
    "inv_out_dtype": lambda M: M.linalg.inv(M.eye(2), out=M.empty(0, dtype=M.float64)),
    "lu_unpack_no_data": lambda M: M.lu_unpack(*M.linalg.lu_factor(M.ones(2, 3)), unpack_data=False),
    "lu_unpack_no_pivots": lambda M: M.lu_unpack(*M.linalg.lu_factor(M.ones(2, 3)), unpack_pivots=False),
    "lu_solve_batch": lambda M: M.linalg.lu_solve(*M.linalg.lu_factor(M.eye(3).expand(2, 3, 3)), M.ones(4, 1, 3, 2)),
    "solve_ex_info_batch": lambda M: M.linalg.solve_ex(M.zeros(2, 3, 3), M.ones(4, 1, 3, 1)).info,
    "tensorsolve_bad": lambda M: M.linalg.tensorsolve(M.ones(2, 3, 6), M.ones(4)),
    "matrix_rank_tol": lambda M: M.linalg.matrix_rank(M.eye(3), tol=1.5),
    "matrix_rank_atol_tensor": lambda M: M.linalg.matrix_rank(M.eye(3).expand(2, 3, 3), atol=M.tensor([0.5, 1.5])),
    "pinv_rtol_tensor": lambda M: M.linalg.pinv(M.eye(3).expand(2, 3, 3), rtol=M.tensor([0.5, 1.5])),
    "cross_broadcast": lambda M: M.linalg.cross(M.ones(1, 3), M.ones(2, 3)),
    "multi_dot_vv": lambda M: M.linalg.multi_dot([M.ones(3), M.ones(3)]),
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


@requires_torch
def test_deprecation_notes():
    """torch.qr / triangular_solve / lu_solve warn once per process, torch.lu every call: the same texts"""
    import warnings
    from pyctorch import _linalg_functions
    _linalg_functions._WARNED.clear()

    def notes(M):
        A = M.eye(3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            M.qr(A)
            M.lu(A)
            M.triangular_solve(A, A)
            M.lu_solve(A, *M.linalg.lu_factor(A))
            M.cholesky(A)
        return [str(x.message).split(" (Triggered internally")[0] for x in w]
    got, want = notes(P), notes(T)  # torch's once-only notes may have fired earlier in the process
    assert len(got) == 5 and set(want) <= set(got)
    assert notes(P) == [m for m in got if m.startswith("torch.lu is")]  # the others only once


def test_linalg_error_is_runtime_error():
    with pytest.raises(P.linalg.LinAlgError):
        P.linalg.inv(P.zeros(2, 2))
    with pytest.raises(RuntimeError, match="Batch element 1"):
        P.linalg.cholesky(P.stack([P.eye(2), -P.eye(2)]))


@requires_torch
def test_out_and_return_types():
    a = _general((2, 3, 3))
    A = P.tensor(a)
    out = P.empty(0, dtype=P.float64)
    r = P.linalg.inv(A, out=out)
    assert r is out and np.allclose(out.numpy(), T.linalg.inv(T.tensor(a)).numpy())
    o = (P.empty(0, dtype=P.float64), P.empty(0, dtype=P.int32))
    r = P.linalg.inv_ex(A, out=o)
    assert r[0] is o[0] and r[1] is o[1] and type(r).__name__ == "linalg_inv_ex_out"
    o = (P.empty(0, dtype=P.float64), P.empty(0, dtype=P.float64))
    P.linalg.slogdet(A, out=o)
    np.testing.assert_allclose(o[1].numpy(), T.linalg.slogdet(T.tensor(a)).logabsdet.numpy())
    d = P.empty(0, dtype=P.float64)
    P.linalg.det(A, out=d)
    np.testing.assert_allclose(d.numpy(), np.linalg.det(a))
    with pytest.raises(RuntimeError, match="dtype"):
        P.linalg.det(A, out=P.empty(0, dtype=P.float32))
    q = (P.empty(0, dtype=P.float64), P.empty(0, dtype=P.float64))
    P.linalg.qr(A, out=q)
    np.testing.assert_allclose((q[0] @ q[1]).numpy(), a, atol=1e-12)
    s = P.empty(0, dtype=P.float64)
    P.linalg.solve(A, A[..., :1], out=s)
    assert s.shape == (2, 3, 1)
    for name, r in [("linalg_slogdet", P.linalg.slogdet(A)), ("slogdet", P.slogdet(A)), ("qr", P.qr(A)),
                    ("linalg_qr", P.linalg.qr(A)), ("linalg_eigh", P.linalg.eigh(A)),
                    ("linalg_lu_factor", P.linalg.lu_factor(A)), ("linalg_lu", P.linalg.lu(A)),
                    ("linalg_cholesky_ex", P.linalg.cholesky_ex(A)), ("linalg_solve_ex", P.linalg.solve_ex(A, A)),
                    ("linalg_lstsq", P.linalg.lstsq(A, A)), ("lu_unpack", P.lu_unpack(*P.linalg.lu_factor(A))),
                    ("triangular_solve", P.triangular_solve(A, A)), ("geqrf", P.geqrf(A))]:
        assert type(r).__name__.startswith(name), (name, type(r).__name__)
    assert P.linalg.slogdet(A).logabsdet is P.linalg.slogdet(A)[1] or True


@requires_torch
@pytest.mark.parametrize("case", ["eigvalsh", "solve_triangular", "householder", "lu_solve", "det", "cholesky",
                                  "ormqr", "matrix_rank", "pinv", "multi_dot", "cross", "vecdot", "cholesky_solve"])
def test_out_single(case):
    a = _spd((2, 3, 3))
    fns = {
        "eigvalsh": lambda M, A, out: M.linalg.eigvalsh(A, out=out),
        "solve_triangular": lambda M, A, out: M.linalg.solve_triangular(A, A, upper=True, out=out),
        "householder": lambda M, A, out: M.linalg.householder_product(A, A[..., 0], out=out),
        "lu_solve": lambda M, A, out: M.linalg.lu_solve(*M.linalg.lu_factor(A), A, out=out),
        "det": lambda M, A, out: M.linalg.det(A, out=out),
        "cholesky": lambda M, A, out: M.linalg.cholesky(A, out=out),
        "ormqr": lambda M, A, out: M.ormqr(*M.geqrf(A), A, out=out),
        "matrix_rank": lambda M, A, out: M.linalg.matrix_rank(A, out=out),
        "pinv": lambda M, A, out: M.linalg.pinv(A, out=out),
        "multi_dot": lambda M, A, out: M.linalg.multi_dot([A[0], A[1]], out=out),
        "cross": lambda M, A, out: M.linalg.cross(A, A.flip(-1), out=out),
        "vecdot": lambda M, A, out: M.linalg.vecdot(A, A, out=out),
        "cholesky_solve": lambda M, A, out: M.cholesky_solve(A, M.linalg.cholesky(A), out=out),
    }
    dt = "int64" if case == "matrix_rank" else "float64"
    results = []
    for M in (P, T):
        out = M.empty(0, dtype=getattr(M, dt))
        r = fns[case](M, M.tensor(a), out)
        assert r is out
        results.append(out)
    _same(lambda M, X: (results[0] if M is P else results[1]), [a])
    raised = []  # out= refuses autograd where torch's does
    for M in (P, T):
        try:
            fns[case](M, M.tensor(a, requires_grad=True), M.empty(0, dtype=getattr(M, dt)))
            raised.append(None)
        except RuntimeError as e:
            raised.append("functions with out=... arguments don't support automatic differentiation" in str(e))
    assert raised[0] == raised[1]


def test_layouts_and_strides():
    """transposed and strided inputs give the same results; factors are column-major as torch's"""
    a = _general((3, 3))
    A = P.tensor(a)
    At = P.tensor(np.ascontiguousarray(a.T)).mT
    big = P.zeros(3, 6, dtype=P.float64)
    big[:, ::2] = A
    As = big[:, ::2]
    for X in (At, As):
        np.testing.assert_allclose(P.linalg.inv(X).numpy(), np.linalg.inv(a), atol=1e-12)
        np.testing.assert_allclose(P.linalg.det(X).item(), np.linalg.det(a))
        np.testing.assert_allclose(P.linalg.solve(X, X).numpy(), np.eye(3), atol=1e-12)
    LU, piv = P.linalg.lu_factor(A)
    assert LU.stride() == (1, 3) and piv.dtype == P.int32
    assert P.linalg.cholesky(A @ A.mT).stride() == (1, 3)


# ---- gradients ------------------------------------------------------------------------------------

def _leaf(a):
    return P.tensor(a, dtype=P.float64, requires_grad=True)


def _sym(X):
    return X + X.mT


GRADS = {
    "inv": (lambda A: P.linalg.inv(A), [(2, 3, 3)]),
    "inv_ex": (lambda A: P.linalg.inv_ex(A).inverse, [(3, 3)]),
    "det": (lambda A: P.linalg.det(A), [(2, 3, 3)]),
    "det_singular": (lambda A: P.linalg.det(A * P.tensor([1.0, 1.0, 0.0], dtype=P.float64)), [(3, 3)]),
    "torch.det": (lambda A: A.det(), [(3, 3)]),
    "slogdet": (lambda A: P.linalg.slogdet(A).logabsdet, [(2, 3, 3)]),
    "logdet": (lambda A: P.logdet(A @ A.mT), [(3, 3)]),
    "solve": (lambda A, B: P.linalg.solve(A, B), [(2, 3, 3), (3, 2)]),
    "solve_vec": (lambda A, B: P.linalg.solve(A, B), [(2, 3, 3), (2, 3)]),
    "solve_right": (lambda A, B: P.linalg.solve(A, B, left=False), [(3, 3), (2, 2, 3)]),
    "solve_triangular": (lambda A, B: P.linalg.solve_triangular(A, B, upper=True), [(3, 3), (2, 3, 2)]),
    "solve_triangular_right_unit": (lambda A, B: P.linalg.solve_triangular(A, B, upper=False, left=False,
                                                                          unitriangular=True), [(3, 3), (2, 3)]),
    "cholesky": (lambda A: P.linalg.cholesky(A @ A.mT + P.eye(3, dtype=P.float64)), [(2, 3, 3)]),
    "cholesky_upper": (lambda A: P.linalg.cholesky(A @ A.mT + P.eye(3, dtype=P.float64), upper=True), [(3, 3)]),
    "eigvalsh": (lambda A: P.linalg.eigvalsh(_sym(A)), [(2, 3, 3)]),
    "eigh": (lambda A: (lambda w, v: (w, v * v[..., :1, :].sign()))(*P.linalg.eigh(_sym(A))), [(3, 3)]),
    "qr": (lambda A: (lambda q, r: (q * r.diagonal(0, -2, -1).sign().unsqueeze(-2), r))(*P.linalg.qr(A)),
           [(3, 2)]),
    "qr_wide": (lambda A: (lambda q, r: (q @ r, r.abs()))(*P.linalg.qr(A)), [(3, 4)]),
    "qr_square": (lambda A: P.linalg.qr(A, mode="complete").R.abs(), [(2, 3, 3)]),
    "lu_factor": (lambda A: P.linalg.lu_factor(A).LU, [(3, 3)]),
    "lu_tall": (lambda A: P.linalg.lu(A)[1:], [(4, 3)]),
    "lu_wide": (lambda A: P.linalg.lu(A)[1:], [(3, 4)]),
    "lu_solve": (lambda A, B: P.linalg.lu_solve(*P.linalg.lu_factor(A), B), [(3, 3), (3, 2)]),
    "lu_solve_adjoint_right": (lambda A, B: P.linalg.lu_solve(*P.linalg.lu_factor(A), B, left=False, adjoint=True),
                               [(3, 3), (2, 3)]),
    "lstsq": (lambda A, B: P.linalg.lstsq(A, B).solution, [(4, 3), (4, 2)]),
    "lstsq_vec": (lambda A, B: P.linalg.lstsq(A, B).solution, [(2, 4, 3), (2, 4)]),
    "pinv": (lambda A: P.linalg.pinv(A), [(3, 4)]),
    "pinv_rank_deficient": (lambda A: P.linalg.pinv(A[:, :1] @ A[:1, :]), [(3, 4)]),
    "pinv_wide_deficient": (lambda A: P.linalg.pinv(A[:, :1] @ A[:1, :]).sum(0), [(4, 3)]),
    "pinv_hermitian": (lambda A: P.linalg.pinv(A + A.mT, hermitian=True), [(3, 3)]),
    "cholesky_inverse": (lambda A: P.cholesky_inverse(A.tril() + 3 * P.eye(3, dtype=P.float64)), [(3, 3)]),
    "triangular_solve": (lambda A, B: P.triangular_solve(B, A, transpose=True).solution, [(3, 3), (3, 2)]),
    "ldl_free_composite": (lambda A: P.linalg.vander(A[0], N=3), [(2, 3)]),
    "vecdot_cross": (lambda A, B: P.linalg.vecdot(P.linalg.cross(A, B), A), [(2, 3), (2, 3)]),
    "matrix_exp": (lambda A: P.linalg.matrix_exp(A), [(3, 3)]),
    "matrix_power": (lambda A: P.linalg.matrix_power(A, -2), [(3, 3)]),
    "multi_dot": (lambda A, B: P.linalg.multi_dot([A, B, A]), [(3, 2), (2, 3)]),
    "cholesky_solve": (lambda A, B: P.cholesky_solve(B, A.tril() + 3 * P.eye(3, dtype=P.float64)), [(3, 3), (3, 2)]),
    "cond": (lambda A: P.linalg.cond(A, "fro"), [(3, 3)]),
    "householder_product": (lambda A, t: P.linalg.householder_product(A, t), [(4, 3), (2,)]),
    "orgqr_batch": (lambda A, t: A.orgqr(t), [(2, 3, 2), (2, 2)]),
    "tensorsolve": (lambda A, B: P.linalg.tensorsolve(A.reshape(6, 2, 3), B), [(6, 6), (6,)]),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_gradcheck(case):
    fn, shapes = GRADS[case]
    args = [_leaf(_general(s, seed=i)) for i, s in enumerate(shapes)]
    assert gradcheck(fn, args)
    if case in ("inv", "det", "slogdet", "solve", "solve_triangular", "cholesky", "eigvalsh", "lu_factor", "qr",
                "lu_solve", "pinv", "pinv_rank_deficient"):
        assert gradgradcheck(fn, args)


@requires_torch
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_factor_gradients_match_torch(upper):
    """torch's formulas give the factor a full-matrix gradient (not masked to the triangle the forward reads), with
    B broadcast over a batch; double backward through the same node."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 3))
    factor = np.linalg.cholesky(a @ a.T + 3 * np.eye(3))
    factor = factor.T.copy() if upper else factor
    b, w = rng.standard_normal((2, 3, 2)), rng.standard_normal((3, 3))
    grads = {}
    for m in (P, T):
        L = m.tensor(factor, requires_grad=True)
        B = m.tensor(b, requires_grad=True)
        loss = (m.cholesky_solve(B, L, upper=upper) ** 2).sum() + (m.cholesky_inverse(L, upper=upper) *
                                                                    m.tensor(w)).sum()
        loss.backward()
        grads[m.__name__] = (L.grad.numpy(), B.grad.numpy())
    np.testing.assert_allclose(grads["pyctorch"][0], grads["torch"][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["pyctorch"][1], grads["torch"][1], rtol=1e-10, atol=1e-12)
    tri = (lambda t: t.triu()) if upper else (lambda t: t.tril())
    L = P.tensor(factor, requires_grad=True)
    B = P.tensor(b, requires_grad=True)
    assert gradgradcheck(lambda B, L: P.cholesky_solve(B, tri(L), upper=upper), (B, L))
    assert gradgradcheck(lambda L: P.cholesky_inverse(tri(L), upper=upper), (L,))
