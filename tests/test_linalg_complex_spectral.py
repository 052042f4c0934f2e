"""complex64 / complex128 in the products (dot, vdot, mv, addmv, addmm, baddbmm, outer and the composites over them),
the spectral decompositions (linalg.eigh / eigvalsh, linalg.svd / svdvals, torch.svd, linalg.eig / eigvals) and what
is built on them (pinv, matrix_rank, cond, the norms, dist, the low-rank SVD), against torch.

Eigenvectors and singular vectors are defined up to a phase each, and LAPACKs may choose differently: they are checked
through what does not depend on it (A V = V diag(L), reconstructions, unitarity, moduli against torch's where the
values are distinct). Gradients are compared for losses invariant to those phases, and gradcheck'ed in complex128.
"""
import math

import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same, requires_torch, torch as T

CDTYPES = ["complex64", "complex128"]
TOLS = {"complex64": 2e-4, "complex128": 1e-9}


def _carr(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _herm(shape, seed=0):
    a = _carr(shape, seed)
    return a + np.conj(np.swapaxes(a, -1, -2))


def _layouts(L, a, dtype):
    """the same complex array contiguous, as the transpose of a transposed copy and as a strided slice"""
    dt = getattr(L, dtype)
    yield L.tensor(a, dtype=dt)
    if a.ndim >= 2:
        yield L.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dt).mT
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    big[..., ::2] = a
    yield L.tensor(big, dtype=dt)[..., ::2]


def _both(fn, arrays, dtype):
    """fn(lib, *tensors) on every layout of the arrays, for pyctorch and torch: pairs of results."""
    layouts = [list(_layouts(P, a, dtype)) for a in arrays]
    tlayouts = [list(_layouts(T, a, dtype)) for a in arrays]
    for i in range(3):
        got = fn(P, *[ls[min(i, len(ls) - 1)] for ls in layouts])
        exp = fn(T, *[ls[min(i, len(ls) - 1)] for ls in tlayouts])
        yield got, exp


def _tol(dtype, scale=1.0):
    return dict(rtol=TOLS[dtype] * scale, atol=TOLS[dtype] * scale)


# ---- products ----------------------------------------------------------------------------------

PRODUCTS = {
    "dot": (lambda L, x, y: L.dot(x, y), [(5,), (5,)]),
    "vdot": (lambda L, x, y: L.vdot(x, y), [(5,), (5,)]),
    "inner": (lambda L, x, y: L.inner(x, y), [(3, 4), (2, 4)]),
    "mv": (lambda L, a, x: L.mv(a, x), [(3, 4), (4,)]),
    "matmul_mv": (lambda L, a, x: a @ x, [(2, 3, 4), (4,)]),
    "matmul_vv": (lambda L, x, y: x @ y, [(4,), (4,)]),
    "addmv": (lambda L, v, a, x: L.addmv(v, a, x), [(3,), (3, 4), (4,)]),
    "addmv_complex_scalars": (lambda L, v, a, x: L.addmv(v, a, x, beta=0.5 - 1j, alpha=2 + 1j), [(3,), (3, 4), (4,)]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b), [(3, 2), (3, 4), (4, 2)]),
    "addmm_scalars": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=-2), [(3, 2), (3, 4), (4, 2)]),
    "addmm_complex_scalars": (lambda L, c, a, b: L.addmm(c, a, b, beta=1j, alpha=2 - 1j), [(2,), (3, 4), (4, 2)]),
    "addmm_beta0": (lambda L, c, a, b: L.addmm(c * math.nan, a, b, beta=0), [(3, 2), (3, 4), (4, 2)]),
    "baddbmm": (lambda L, c, a, b: L.baddbmm(c, a, b, beta=2, alpha=1j), [(2, 3, 2), (2, 3, 4), (2, 4, 2)]),
    "addbmm": (lambda L, c, a, b: L.addbmm(c, a, b, alpha=0.5j), [(3, 2), (2, 3, 4), (2, 4, 2)]),
    "addr": (lambda L, c, x, y: L.addr(c, x, y, beta=2j), [(3, 4), (3,), (4,)]),
    "outer": (lambda L, x, y: L.outer(x, y), [(3,), (4,)]),
    "ger": (lambda L, x, y: L.ger(x, y), [(3,), (4,)]),
    "tensordot": (lambda L, x, y: L.tensordot(x, y, dims=([1, 2], [0, 1])), [(2, 3, 4), (3, 4, 2)]),
    "einsum_bmm": (lambda L, x, y: L.einsum("bij,bjk->bik", x, y), [(2, 3, 4), (2, 4, 2)]),
    "einsum_dot": (lambda L, x, y: L.einsum("i,i->", x, y), [(4,), (4,)]),
    "einsum_trace_mul": (lambda L, x, y: L.einsum("ij,ji->", x, y), [(3, 4), (4, 3)]),
    "kron": (lambda L, x, y: L.kron(x, y), [(2, 3), (3, 2)]),
    "vecdot": (lambda L, x, y: L.linalg.vecdot(x, y), [(3, 4), (3, 4)]),
    "multi_dot": (lambda L, x, y, z: L.linalg.multi_dot([x, y, z]), [(2, 3), (3, 4), (4, 2)]),
}


@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name, dtype):
    fn, shapes = PRODUCTS[name]
    arrays = [_carr(s, seed=i) for i, s in enumerate(shapes)]
    for got, exp in _both(fn, arrays, dtype):
        assert_same(got, exp, **_tol(dtype, 10))


@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
def test_products_out_and_inplace(dtype):
    def run(L):
        dt = getattr(L, dtype)
        a, b = L.tensor(_carr((3, 4)), dtype=dt), L.tensor(_carr((4, 2), 1), dtype=dt)
        c = L.tensor(_carr((3, 2), 2), dtype=dt)
        out = L.empty(0, dtype=dt)
        L.addmm(c, a, b, alpha=1j, out=out)
        c2 = c.clone().addmm_(a, b, beta=2 - 1j)
        v = L.tensor(_carr((3,), 3), dtype=dt)
        v2 = v.clone().addmv_(a, L.tensor(_carr((4,), 4), dtype=dt), alpha=-1j)
        d = L.empty(0, dtype=dt)
        L.dot(v, v, out=d)
        return out, c2, v2, d
    assert_same(run(P), run(T), **_tol(dtype, 10))


@requires_torch
def test_product_dtype_errors():
    def run(L):
        x = L.tensor(_carr((3,)))
        return x.dot(x.real)
    with pytest.raises(RuntimeError):
        run(P)
    with pytest.raises(RuntimeError):
        run(T)


def _product_grads(L, name, kind):
    fn, shapes = PRODUCTS[name]
    xs = [L.tensor(_carr(s, seed=i)).requires_grad_() for i, s in enumerate(shapes)]
    out = fn(L, *xs)
    loss = out.abs().sum() if kind == "abs" else (out * out.conj()).real.sum()
    loss.backward()
    return [x.grad for x in xs]


_GRAD_PRODUCTS = ["dot", "vdot", "inner", "mv", "matmul_mv", "matmul_vv", "addmv", "addmv_complex_scalars", "addmm",
                  "addmm_complex_scalars", "baddbmm", "addbmm", "addr", "outer", "ger", "tensordot", "einsum_bmm",
                  "kron", "vecdot"]


@requires_torch
@pytest.mark.parametrize("kind", ["abs", "normsq"])
@pytest.mark.parametrize("name", _GRAD_PRODUCTS)
def test_product_gradients(name, kind):
    for g, e in zip(_product_grads(P, name, kind), _product_grads(T, name, kind)):
        assert_same(g, e, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", ["dot", "vdot", "mv", "addmv_complex_scalars", "addmm_complex_scalars", "baddbmm",
                                  "outer"])
def test_product_gradcheck(name):
    fn, shapes = PRODUCTS[name]
    xs = [P.tensor(_carr(s, seed=i)).requires_grad_() for i, s in enumerate(shapes)]
    assert P.autograd.gradcheck(lambda *a: fn(P, *a), xs)


# ---- eigh / eigvalsh ------------------------------------------------------------------------

EIGH_SHAPES = [(4, 4), (1, 1), (2, 3, 3), (0, 0), (2, 0, 0)]


@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", EIGH_SHAPES, ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(shape, dtype, uplo):
    a = _herm(shape)
    # only the uplo triangle is read: spoil the other one
    a = a + (np.triu(np.ones(shape[-2:]), 1) if uplo == "L" else np.tril(np.ones(shape[-2:]), -1)) * 7j
    tol = TOLS[dtype] * 10
    for x, tx in zip(_layouts(P, a, dtype), _layouts(T, a, dtype)):
        Lp, Vp = P.linalg.eigh(x, UPLO=uplo)
        Lt, Vt = T.linalg.eigh(tx, UPLO=uplo)
        assert_same(Lp, Lt, rtol=tol, atol=tol)
        assert_same(Vp.abs(), Vt.abs(), rtol=tol, atol=tol)  # distinct eigenvalues: columns equal up to a phase
        assert Vp.dtype == getattr(P, dtype)
        herm = tx.tril() + tx.tril(-1).mH if uplo == "L" else tx.triu() + tx.triu(1).mH
        v = T.from_numpy(Vp.numpy())
        assert_same(herm @ v, v * T.from_numpy(Lp.numpy()).unsqueeze(-2).to(v.dtype), rtol=tol, atol=tol)
        assert_same(P.linalg.eigvalsh(x, UPLO=uplo), T.linalg.eigvalsh(tx, UPLO=uplo), rtol=tol, atol=tol)


@requires_torch
def test_eigh_errors_and_out():
    for L in (P, T):
        with pytest.raises(RuntimeError, match="square"):
            L.linalg.eigh(L.zeros(2, 3, dtype=L.complex64))
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            L.linalg.eigvalsh(L.zeros(3, dtype=L.complex128))

    def run(L):
        x = L.tensor(_herm((3, 3)))
        w, v = L.empty(0, dtype=L.float64), L.empty(0, dtype=L.complex128)
        L.linalg.eigh(x, out=(w, v))
        return w, v.abs()
    assert_same(run(P), run(T), rtol=1e-9, atol=1e-9)


# ---- svd / svdvals / torch.svd ------------------------------------------------------------------

SVD_SHAPES = [(4, 3), (3, 4), (3, 3), (1, 1), (2, 5, 3), (2, 3, 5), (0, 3), (3, 0), (2, 0, 0)]


def _check_svd(a, U, S, Vh, full, tol):
    m, n = a.shape[-2:]
    k = min(m, n)
    assert tuple(U.shape) == a.shape[:-2] + ((m, m) if full else (m, k))
    assert tuple(Vh.shape) == a.shape[:-2] + ((n, n) if full else (k, n))
    u, s, vh = U.numpy().astype(np.complex128), S.numpy().astype(np.float64), Vh.numpy().astype(np.complex128)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, rtol=tol, atol=tol)
    eye = lambda n: np.broadcast_to(np.eye(n), a.shape[:-2] + (n, n))  # noqa: E731
    np.testing.assert_allclose(np.conj(np.swapaxes(u, -1, -2)) @ u, eye(u.shape[-1]), atol=tol)
    np.testing.assert_allclose(vh @ np.conj(np.swapaxes(vh, -1, -2)), eye(vh.shape[-2]), atol=tol)


@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, dtype, full):
    a = _carr(shape)
    tol = TOLS[dtype] * 10
    for x, tx in zip(_layouts(P, a, dtype), _layouts(T, a, dtype)):
        U, S, Vh = P.linalg.svd(x, full_matrices=full)
        Ut, St, Vht = T.linalg.svd(tx, full_matrices=full)
        assert U.dtype == Vh.dtype == getattr(P, dtype)
        assert_same(S, St, rtol=tol, atol=tol)
        k = min(shape[-2:])
        assert_same(U[..., :k].abs(), Ut[..., :k].abs(), rtol=tol, atol=tol)
        assert_same(Vh[..., :k, :].abs(), Vht[..., :k, :].abs(), rtol=tol, atol=tol)
        _check_svd(a, U, S, Vh, full, tol)
        assert_same(P.linalg.svdvals(x), T.linalg.svdvals(tx), rtol=tol, atol=tol)


@requires_torch
@pytest.mark.parametrize("some", [True, False])
@pytest.mark.parametrize("compute_uv", [True, False])
def test_legacy_svd(some, compute_uv):
    a = _carr((2, 4, 3))
    U, S, V = P.svd(P.tensor(a), some=some, compute_uv=compute_uv)
    Ut, St, Vt = T.svd(T.tensor(a), some=some, compute_uv=compute_uv)
    assert_same(S, St)
    assert_same(U.abs(), Ut.abs())
    assert_same(V.abs(), Vt.abs())
    if compute_uv:
        np.testing.assert_allclose((U.numpy()[..., :3] * S.numpy()[..., None, :]) @ np.conj(np.swapaxes(
            V.numpy()[..., :3], -1, -2)), a, atol=1e-10)


@requires_torch
def test_svd_nonfinite():
    for L in (P, T):
        x = L.tensor(_carr((3, 3)))
        x[1, 1] = complex(math.nan, 0)
        with pytest.raises(RuntimeError, match="non-finite"):
            L.linalg.svd(x)
        x[1, 1] = complex(math.inf, 0)
        assert bool(L.linalg.svdvals(x).isnan().all())


# ---- eig / eigvals ------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (1, 1), (2, 3, 3), (0, 0)], ids=str)
def test_eig_complex_input(shape, dtype):
    a = _carr(shape)
    tol = TOLS[dtype] * 100
    for x, tx in zip(_layouts(P, a, dtype), _layouts(T, a, dtype)):
        w, V = P.linalg.eig(x)
        wt, Vt = T.linalg.eig(tx)
        # geev's order and its normalisation (unit columns, largest component real) are torch's too
        assert_same(w, wt, rtol=tol, atol=tol)
        assert_same(V, Vt, rtol=tol, atol=tol)
        assert_same(P.linalg.eigvals(x), T.linalg.eigvals(tx), rtol=tol, atol=tol)


@requires_torch
def test_eig_out_dtypes():
    def run(L):
        x = L.tensor(_carr((3, 3)), dtype=L.complex64)
        w, v = L.empty(0, dtype=L.complex64), L.empty(0, dtype=L.complex64)
        L.linalg.eig(x, out=(w, v))
        return w, v
    assert_same(run(P), run(T), rtol=1e-4, atol=1e-4)
    for L in (P, T):
        x = L.tensor(_carr((3, 3)))
        with pytest.raises(RuntimeError):
            L.linalg.eigvals(x, out=L.empty(0, dtype=L.float64))
        x[0, 0] = complex(math.nan, 1)
        with pytest.raises(RuntimeError, match="infs or NaNs"):
            L.linalg.eig(x)


# ---- composites: pinv, rank, cond, norms ------------------------------------------------------

COMPOSITES = {
    "pinv": (lambda L, a: L.linalg.pinv(a), (2, 4, 3)),
    "pinv_wide": (lambda L, a: L.linalg.pinv(a), (3, 5)),
    "pinv_hermitian": (lambda L, a: L.linalg.pinv(a + a.mH, hermitian=True), (2, 3, 3)),
    "pinverse": (lambda L, a: L.pinverse(a), (4, 3)),
    "matrix_rank": (lambda L, a: L.linalg.matrix_rank(a), (2, 4, 3)),
    "matrix_rank_deficient": (lambda L, a: L.linalg.matrix_rank(a[..., :1] * a[..., :1, :]), (4, 4)),
    "matrix_rank_hermitian": (lambda L, a: L.linalg.matrix_rank(a + a.mH, hermitian=True), (3, 3)),
    "cond": (lambda L, a: L.linalg.cond(a), (2, 3, 3)),
    "cond_2": (lambda L, a: L.linalg.cond(a, 2), (3, 4)),
    "cond_m2": (lambda L, a: L.linalg.cond(a, -2), (3, 3)),
    "vector_norm": (lambda L, a: L.linalg.vector_norm(a), (3, 4)),
    "vector_norm_dims": (lambda L, a: L.linalg.vector_norm(a, 3, dim=(0, 2), keepdim=True), (2, 3, 4)),
    "vector_norm_0": (lambda L, a: L.linalg.vector_norm(a, 0, dim=1), (3, 4)),
    "vector_norm_1": (lambda L, a: L.linalg.vector_norm(a, 1), (3, 4)),
    "vector_norm_half": (lambda L, a: L.linalg.vector_norm(a, 0.5, dim=-1), (3, 4)),
    "vector_norm_inf": (lambda L, a: L.linalg.vector_norm(a, math.inf, dim=0), (3, 4)),
    "vector_norm_ninf": (lambda L, a: L.linalg.vector_norm(a, -math.inf), (3, 4)),
    "vector_norm_dtype": (lambda L, a: L.linalg.vector_norm(a, dtype=L.complex128), (3, 4)),
    "linalg_norm": (lambda L, a: L.linalg.norm(a), (2, 3, 4)),
    "linalg_norm_vector": (lambda L, a: L.linalg.norm(a, 3, dim=1), (3, 4)),
    "linalg_norm_fro": (lambda L, a: L.linalg.norm(a, "fro"), (3, 4)),
    "linalg_norm_nuc": (lambda L, a: L.linalg.norm(a, "nuc", dim=(0, 1)), (3, 4)),
    "torch_norm": (lambda L, a: L.norm(a), (3, 4)),
    "torch_norm_p": (lambda L, a: L.norm(a, 3, dim=1), (3, 4)),
    "torch_norm_fro": (lambda L, a: L.norm(a, "fro"), (3, 4)),
    "torch_norm_nuc": (lambda L, a: L.norm(a, "nuc"), (3, 4)),
    "torch_norm_method": (lambda L, a: a.norm(1), (3, 4)),
    "dist": (lambda L, a: L.dist(a, a.flip(0)), (3, 4)),
    "dist_3": (lambda L, a: L.dist(a, a.flip(0), 3), (3, 4)),
    "diagonal": (lambda L, a: L.linalg.diagonal(a, offset=1), (2, 3, 4)),
}
for _ord in ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]:
    COMPOSITES[f"matrix_norm_{_ord}"] = (lambda L, a, _o=_ord: L.linalg.matrix_norm(a, _o), (2, 3, 4))


@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composites(name, dtype):
    fn, shape = COMPOSITES[name]
    for got, exp in _both(fn, [_carr(shape)], dtype):
        assert_same(got, exp, **_tol(dtype, 100))


def _composite_grads(L, name):
    fn, shape = COMPOSITES[name]
    x = L.tensor(_carr(shape)).requires_grad_()
    out = fn(L, x)
    (out.abs() if out.dtype.is_complex else out).sum().backward()
    return x.grad


_GRAD_COMPOSITES = ["pinv", "pinv_wide", "pinv_hermitian", "cond", "cond_m2", "vector_norm", "vector_norm_dims",
                    "vector_norm_1", "vector_norm_half", "vector_norm_inf", "linalg_norm", "linalg_norm_nuc",
                    "torch_norm", "torch_norm_p", "torch_norm_nuc", "dist", "dist_3", "matrix_norm_fro",
                    "matrix_norm_nuc", "matrix_norm_2", "matrix_norm_-2", "matrix_norm_1", "matrix_norm_inf"]


@requires_torch
@pytest.mark.parametrize("name", _GRAD_COMPOSITES)
def test_composite_gradients(name):
    assert_same(_composite_grads(P, name), _composite_grads(T, name), rtol=1e-7, atol=1e-9)


@requires_torch
@pytest.mark.parametrize("dtype", CDTYPES)
def test_lowrank(dtype):
    def run(L, fn):
        L.manual_seed(3)
        return fn(L, L.tensor(_carr((2, 6, 5)), dtype=getattr(L, dtype)))
    low = lambda L, a: L.svd_lowrank(a, q=3)  # noqa: E731
    pca = lambda L, a: L.pca_lowrank(a, q=3, center=True)  # noqa: E731
    for fn in (low, pca):
        (U, S, V), (Ut, St, Vt) = run(P, fn), run(T, fn)
        assert_same(S, St, **_tol(dtype, 100))
        assert_same(U.abs(), Ut.abs(), **_tol(dtype, 100))
        assert_same(V.abs(), Vt.abs(), **_tol(dtype, 100))


@requires_torch
def test_norm_dtype_errors():
    for L in (P, T):
        x = L.tensor(_carr((3,)))
        with pytest.raises(RuntimeError, match="dtype should be complex"):
            L.linalg.vector_norm(x, dtype=L.float64)
        with pytest.raises(RuntimeError):
            L.linalg.vector_norm(x, out=L.empty(0, dtype=L.complex128))


# ---- gradients of the decompositions -------------------------------------------------------------

W = np.random.default_rng(5).standard_normal((4, 4))


def _spectral_loss(L, name, x):
    """losses invariant to the phases of eigen- and singular vectors"""
    w = L.tensor(W)
    if name == "eigh":
        lam, V = L.linalg.eigh(x + x.mH)
        return (lam * L.arange(4.0)).sum() + ((V.abs() ** 2) * w).sum()
    if name == "eigh_reconstruct":
        lam, V = L.linalg.eigh(x + x.mH)
        return ((V * lam.exp().unsqueeze(-2)) @ V.mH).abs().sum()
    if name == "eigvalsh":
        return (L.linalg.eigvalsh(x + x.mH) ** 2).sum()
    if name == "svd":
        U, S, Vh = L.linalg.svd(x, full_matrices=False)
        return S.sum() + ((U.abs() ** 2) * w[:, :3]).sum() + ((Vh.abs() ** 2) * w[:3, :3]).sum()
    if name == "svd_reconstruct":
        U, S, Vh = L.linalg.svd(x, full_matrices=False)
        return ((U * (S ** 2).unsqueeze(-2)) @ Vh).abs().sum()
    if name == "svd_wide":
        U, S, Vh = L.linalg.svd(x.mT, full_matrices=True)
        return S.sum() + ((U.abs() ** 2) * w[:3, :3]).sum() + ((Vh[:3].abs() ** 2) * w[:3]).sum()
    if name == "torch_svd":
        U, S, V = L.svd(x)
        return ((U * S.unsqueeze(-2)) @ V.mH).abs().sum() + ((V.abs() ** 2) * w[:3, :3]).sum()
    if name == "svdvals":
        return L.linalg.svdvals(x).pow(3).sum()
    if name == "eig":
        lam, V = L.linalg.eig(x)
        return (lam.abs() ** 2 * L.arange(4.0)).sum() + ((V.abs() ** 2) * w).sum()
    if name == "eigvals":
        return (L.linalg.eigvals(x) * L.tensor([1, 2j, 3, -1j])).real.sum()
    raise KeyError(name)


_SPECTRAL = {"eigh": (4, 4), "eigh_reconstruct": (4, 4), "eigvalsh": (4, 4), "svd": (4, 3), "svd_reconstruct": (4, 3),
             "svd_wide": (4, 3), "torch_svd": (4, 3), "svdvals": (4, 3), "eig": (4, 4), "eigvals": (4, 4)}


def _spectral_grad(L, name, real=False):
    a = _carr(_SPECTRAL[name], seed=11)
    x = L.tensor(a.real if real else a).requires_grad_()
    _spectral_loss(L, name, x).backward()
    return x.grad


_EIG = ("eig", "eigvals")


@requires_torch
@pytest.mark.parametrize("name", [n
                                  for n in sorted(_SPECTRAL)])
def test_spectral_gradients(name):
    assert_same(_spectral_grad(P, name), _spectral_grad(T, name), rtol=1e-7, atol=1e-9)


@requires_torch
@pytest.mark.parametrize("name", ["eig", "eigvals"])
def test_eig_gradient_of_real_input(name):
    assert_same(_spectral_grad(P, name, real=True), _spectral_grad(T, name, real=True), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["eigh", "eigh_reconstruct", "svd", "svd_wide", "torch_svd"] +
                         list(_EIG))
def test_spectral_gradcheck(name):
    x = P.tensor(_carr(_SPECTRAL[name], seed=11)).requires_grad_()
    assert P.autograd.gradcheck(lambda t: _spectral_loss(P, name, t), [x])


@pytest.mark.parametrize("name", ["vector_norm_half", "matrix_norm_nuc", "matrix_norm_2", "pinv", "cond"])
def test_composite_gradcheck(name):
    fn, shape = COMPOSITES[name]
    x = P.tensor(_carr(shape)).requires_grad_()
    assert P.autograd.gradcheck(lambda t: fn(P, t), [x])
