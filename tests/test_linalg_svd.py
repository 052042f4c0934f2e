"""torch.linalg.svd / svdvals, torch.svd and the norms built on them (ord 2, -2, 'nuc').

Singular vectors are defined up to sign (and LAPACKs choose differently), so U and Vh are
checked through what does not depend on it: the reconstruction U diag(S) Vh, orthonormality,
and |U|, |Vh| against torch where the singular values are distinct."""
import math

import numpy as np
import pytest

import pyctorch as P
from conftest import HAVE_TORCH, requires_torch, torch as T

SHAPES = [(4, 3), (3, 4), (3, 3), (1, 1), (1, 5), (2, 5, 3), (2, 3, 5), (2, 2, 4, 3), (0, 3), (3, 0), (2, 0, 0), (0, 2, 2)]


def _rand(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _layouts(a):
    """the same matrix contiguous, as a transposed copy and as a strided slice"""
    yield "contiguous", P.tensor(a)
    yield "transposed", P.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    big[..., ::2] = a
    yield "strided", P.tensor(big)[..., ::2]


def _check_factorization(a, U, S, Vh, full, tol):
    m, n = a.shape[-2:]
    k = min(m, n)
    assert tuple(S.shape) == a.shape[:-2] + (k,)
    assert tuple(U.shape) == a.shape[:-2] + ((m, m) if full else (m, k))
    assert tuple(Vh.shape) == a.shape[:-2] + ((n, n) if full else (k, n))
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False) if a.size else s, rtol=tol, atol=tol)
    assert np.all(np.diff(s, axis=-1) <= tol)  # descending
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, rtol=tol, atol=tol)
    eye = lambda n: np.broadcast_to(np.eye(n), a.shape[:-2] + (n, n))  # noqa: E731
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye(u.shape[-1]), atol=tol)
    np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), eye(vh.shape[-2]), atol=tol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("full", [True, False])
def test_svd_factorizes(shape, dtype, full):
    a = _rand(shape, dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for _, x in _layouts(a):
        U, S, Vh = P.linalg.svd(x, full_matrices=full)
        assert U.dtype == S.dtype == Vh.dtype == getattr(P, dtype)
        _check_factorization(a.astype(np.float64), U.double(), S.double(), Vh.double(), full, tol)
        np.testing.assert_allclose(P.linalg.svdvals(x).numpy(), S.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("some", [True, False])
def test_legacy_svd(some):
    a = _rand((2, 4, 3))
    U, S, V = P.svd(P.tensor(a), some=some)
    _check_factorization(a, U, S, V.mT, not some, 1e-10)
    U0, S0, V0 = P.svd(P.tensor(a), compute_uv=False)
    np.testing.assert_allclose(S0.numpy(), S.numpy(), rtol=1e-12)
    assert U0.shape == (2, 4, 4) and V0.shape == (2, 3, 3) and not U0.any() and not V0.any()
    assert P.tensor(a).svd()[1].allclose(S)


def test_empty_full_matrices_are_identities():
    U, S, Vh = P.linalg.svd(P.zeros(3, 0))
    assert U.tolist() == np.eye(3).tolist() and S.shape == (0,) and Vh.shape == (0, 0)


def test_return_types_and_repr():
    r = P.linalg.svd(P.eye(2))
    assert type(r).__name__ == "linalg_svd" and r._fields if hasattr(r, "_fields") else True
    assert r.U is r[0] and r.S is r[1] and r.Vh is r[2]
    assert repr(r).startswith("torch.return_types.linalg_svd(\nU=tensor(")
    assert P.svd(P.eye(2)).V is not None


@requires_torch
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 3), (0, 3)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_matches_torch(shape, full):
    a = _rand(shape, "float32", seed=3)
    p, t = P.linalg.svd(P.tensor(a), full_matrices=full), T.linalg.svd(T.tensor(a), full_matrices=full)
    for x, y in zip(p, t):
        assert tuple(x.shape) == tuple(y.shape) and tuple(x.stride()) == tuple(y.stride()) and str(x.dtype) == str(y.dtype)
    np.testing.assert_allclose(p.S.numpy(), t.S.numpy(), rtol=1e-5, atol=1e-5)
    k = min(shape[-2:])
    # distinct singular values: each vector is torch's up to sign
    np.testing.assert_allclose(np.abs(p.U.numpy()[..., :k]), np.abs(t.U.numpy()[..., :k]), atol=1e-4)
    np.testing.assert_allclose(np.abs(p.Vh.numpy()[..., :k, :]), np.abs(t.Vh.numpy()[..., :k, :]), atol=1e-4)
    ps, ts = P.svd(P.tensor(a), some=not full), T.svd(T.tensor(a), some=not full)
    assert [tuple(x.stride()) for x in ps] == [tuple(y.stride()) for y in ts]


def _outcome(M, fn):
    try:
        r = fn(M)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return "ok", repr([x.tolist() for x in r] if isinstance(r, tuple) else r.tolist())  # NaN-equal


ERROR_CASES = {
    "1d": lambda M: M.linalg.svd(M.ones(3)),
    "int": lambda M: M.linalg.svd(M.ones(3, 3, dtype=M.int64)),
    "half": lambda M: M.linalg.svd(M.ones(3, 3, dtype=M.float16)),
    "bf16_svdvals": lambda M: M.linalg.svdvals(M.ones(3, 3, dtype=M.bfloat16)),
    "bool_svdvals": lambda M: M.linalg.svdvals(M.ones(3, 3, dtype=M.bool)),
    "driver": lambda M: M.linalg.svd(M.ones(3, 3), driver="gesvd"),
    "legacy_1d": lambda M: M.svd(M.ones(3)),
    "nan": lambda M: M.linalg.svd(M.tensor([[1.0, float("nan")], [0.0, 1.0]])),
    "nan_batch": lambda M: M.linalg.svd(M.stack([M.eye(2), M.full((2, 2), float("inf"))])),
    "nan_legacy": lambda M: M.svd(M.full((2, 2), float("nan"))),
    "nan_svdvals": lambda M: M.linalg.svdvals(M.tensor([[1.0, float("nan")], [0.0, 1.0]])),
    "inf": lambda M: M.linalg.svd(M.tensor([[1.0, float("inf")], [0.0, 1.0]], dtype=M.float64)),
    "out_count": lambda M: M.linalg.svd(M.ones(2, 2), out=(M.empty(0), M.empty(0))),
    "out_type": lambda M: M.linalg.svd(M.ones(2, 2), out=M.empty(0)),
    "svdvals_out_dtype": lambda M: M.linalg.svdvals(M.ones(2, 2), out=M.empty(0, dtype=M.float64)),
    "nuc_3d_no_dim": lambda M: M.norm(M.ones(2, 2, 2), p="nuc"),
    "nuc_half": lambda M: M.linalg.matrix_norm(M.ones(2, 2, dtype=M.float16), "nuc"),
    "norm_bad_str": lambda M: M.norm(M.ones(2, 2), p="abc"),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_as_torch(case):
    p, t = _outcome(P, ERROR_CASES[case]), _outcome(T, ERROR_CASES[case])
    assert p == t


def test_non_finite():
    with pytest.raises(P.linalg.LinAlgError, match=r"\(Batch element 1\): The algorithm failed to converge because "
                                                    r"the input matrix contained non-finite values"):
        P.linalg.svd(P.stack([P.eye(2), P.full((2, 2), float("nan"))]))
    assert issubclass(P.linalg.LinAlgError, RuntimeError)
    with pytest.raises(P.linalg.LinAlgError):
        P.linalg.svdvals(P.full((3, 3), float("nan")))
    with pytest.raises(P.linalg.LinAlgError):
        P.linalg.matrix_norm(P.full((2, 2), float("nan")), 2)
    # an infinity (and no NaN) makes every result NaN, as torch's
    assert P.linalg.svdvals(P.full((3, 3), float("inf"))).isnan().all()
    U, S, Vh = P.linalg.svd(P.stack([P.eye(2), P.tensor([[1.0, float("-inf")], [0.0, 1.0]])]))
    assert not U[0].isnan().any() and U[1].isnan().all() and S[1].isnan().all() and Vh[1].isnan().all()
    assert math.isnan(float(P.linalg.matrix_norm(P.full((2, 2), float("inf")), "nuc")))


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("dims", [(-2, -1), (0, 2), (2, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_svd_norms_against_numpy(ord, dims, keepdim):
    a = _rand((3, 2, 4), seed=5)
    got = P.linalg.matrix_norm(P.tensor(a), ord, dim=dims, keepdim=keepdim)
    want = np.linalg.norm(a, ord, axis=dims, keepdims=keepdim)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    if ord == "nuc":
        np.testing.assert_allclose(P.norm(P.tensor(a), "nuc", dim=dims, keepdim=keepdim).numpy(), want, rtol=1e-12)


def test_norm_dtype_converts_first():
    a = _rand((3, 3), "float32", seed=7)
    r = P.linalg.matrix_norm(P.tensor(a), "nuc", dtype=P.float64)
    assert r.dtype == P.float64
    np.testing.assert_allclose(float(r), np.linalg.norm(a.astype(np.float64), "nuc"), rtol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)], ids=str)
def test_gradients_gradcheck(shape):
    x = P.tensor(_rand(shape, seed=11), requires_grad=True)
    gc = P.autograd.gradcheck
    assert gc(lambda x: (lambda r: (r.U * r.S.exp().unsqueeze(-2)) @ r.Vh)(P.linalg.svd(x, full_matrices=False)), (x,))
    assert gc(lambda x: P.linalg.svdvals(x), (x,))
    assert gc(lambda x: P.linalg.matrix_norm(x, "nuc"), (x,))
    assert P.autograd.gradgradcheck(lambda x: P.linalg.matrix_norm(x, 2), (x,))


def test_svdvals_gradient_is_u_vt():
    a = _rand((4, 3), seed=13)
    x = P.tensor(a, requires_grad=True)
    P.linalg.svdvals(x).sum().backward()
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(x.grad.numpy(), u @ vt, rtol=1e-10, atol=1e-12)


@requires_torch
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)], ids=str)
def test_gradients_match_torch(shape):
    a = _rand(shape, seed=17)
    fns = [lambda M, x: (lambda r: ((r[0] * r[1].unsqueeze(-2)) @ r[2]).sin().sum())(M.linalg.svd(x, full_matrices=False)),
           lambda M, x: (lambda r: (r[0][..., :1] ** 2).sum() + (r[2][..., :1, :] ** 3).abs().sum())(M.linalg.svd(x)),
           lambda M, x: (lambda r: (r[0] @ r[2].mT).cos().sum())(M.svd(x)),
           lambda M, x: M.linalg.matrix_norm(x, -2).sum() + M.linalg.norm(x, "nuc", dim=(-1, -2)).sum()]
    for f in fns:
        px, tx = P.tensor(a, requires_grad=True), T.tensor(a, requires_grad=True)
        f(P, px).backward()
        f(T, tx).backward()
        np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_large_batch_parallel_matches_single():
    a = _rand((64, 6, 5), "float32", seed=19)
    S = P.linalg.svdvals(P.tensor(a))
    for i in (0, 17, 63):
        np.testing.assert_allclose(S[i].numpy(), P.linalg.svdvals(P.tensor(a[i])).numpy(), rtol=1e-6)
