"""Backward formulas of the LAPACK-backed torch.linalg ops (csrc/aten/ops_linalg.def, second part).

They follow torch's tools/autograd/FunctionsManual.cpp: every one is written with differentiable ops (the
solvers below have formulas of their own), so double backward works. They are written for complex tensors
(torch's conjugate Wirtinger convention: adjoints .mH and .conj(), which are no-ops on real tensors, so a real
gradient runs the same operations as before), except eigh_backward and eigvalsh_backward (real only).
"""
import pyctorch as torch

__all__ = ["inv_backward", "det_backward", "slogdet_backward", "solve_backward_A", "solve_backward_B",
           "solve_triangular_backward_A", "solve_triangular_backward_B", "cholesky_backward", "eigh_backward",
           "eigvalsh_backward", "eigh_backward_complex", "eigvalsh_backward_complex", "eig_backward", "eigvals_backward",
           "qr_backward", "lu_factor_ex_backward", "lu_backward", "lu_solve_backward_LU",
           "lu_solve_backward_B", "lstsq_backward", "householder_product_backward",
           "ormqr_backward"]


def _sum_to(g, shape):
    """g reduced over the broadcast batch dims to shape."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    if lead > 0:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g


def _vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def inv_backward(g, Ainv):
    if g is None:
        return None
    return -(Ainv.mH @ g @ Ainv.mH)


def det_backward(g, A, det):
    """d det / dA = det A^{-T} (the gradient: g conj(det) A^{-H}); for singular matrices torch's SVD form: with
    A = U S Vh, det = det(U) det(Vh) prod(S) and the gradient g conj(det(U) det(Vh)) U diag(prod_{j != i} S_j) Vh."""
    if g is None:
        return None
    if A.shape[-1] == 0:
        return torch.zeros_like(A)
    gd = (g * det.conj()).unsqueeze(-1).unsqueeze(-1)
    if bool((det != 0).all()):
        return gd * torch.linalg.inv(A).mH
    U, S, Vh = torch.linalg.svd(A)
    n = S.shape[-1]
    prods = []
    for i in range(n):  # prod_{j != i} S_j (n is small where matrices are singular in practice)
        others = torch.cat([S[..., :i], S[..., i + 1:]], -1)
        prods.append(others.prod(-1) if n > 1 else torch.ones_like(S[..., 0]))
    P = torch.stack(prods, -1)
    sign = torch.linalg.det(U) * torch.linalg.det(Vh)
    return (g * sign.conj()).unsqueeze(-1).unsqueeze(-1) * ((U * P.unsqueeze(-2).to(U.dtype)) @ Vh)


def slogdet_backward(grads, results, A):
    """g A^{-H} with g = g_logabsdet, and for complex A the sign's share i Im(g_sign conj(sign))
    (d sign = i Im(tr(A^{-1} dA)) sign)."""
    gsign, g = grads
    if not A.dtype.is_complex or gsign is None:
        if g is None:
            return None
        return g.unsqueeze(-1).unsqueeze(-1).to(A.dtype) * torch.linalg.inv(A).mH
    share = (gsign * results[0].conj()).imag * 1j
    g = share if g is None else g + share
    return g.unsqueeze(-1).unsqueeze(-1) * torch.linalg.inv(A).mH


def solve_backward_B(g, A, B, left):
    if g is None:
        return None
    gB = torch.linalg.solve(A.mH, g, left=left)
    return _sum_to(gB, B.shape)


def solve_backward_A(g, A, B, X, left):
    if g is None:
        return None
    gB = torch.linalg.solve(A.mH, g, left=left)
    if _vector_rhs(A, B):
        gA = -gB.unsqueeze(-1) * X.conj().unsqueeze(-2)
    elif left:
        gA = -gB @ X.mH
    else:
        gA = -X.mH @ gB
    return _sum_to(gA, A.shape)


def _tri_mask(gA, upper, unitriangular):
    if upper:
        return gA.triu(1 if unitriangular else 0)
    return gA.tril(-1 if unitriangular else 0)


def solve_triangular_backward_B(g, A, B, upper, left, unitriangular):
    if g is None:
        return None
    gB = torch.linalg.solve_triangular(A.mH, g, upper=not upper, left=left, unitriangular=unitriangular)
    return _sum_to(gB, B.shape)


def solve_triangular_backward_A(g, A, X, upper, left, unitriangular):
    if g is None:
        return None
    gB = torch.linalg.solve_triangular(A.mH, g, upper=not upper, left=left, unitriangular=unitriangular)
    gA = -gB @ X.mH if left else -X.mH @ gB
    return _sum_to(_tri_mask(gA, upper, unitriangular), A.shape)


def _half_diag(X):
    """X with its diagonal halved"""
    n = X.shape[-1]
    real = X.real.dtype if X.dtype.is_complex else X.dtype
    return X * (1 - 0.5 * torch.eye(n, dtype=real, device=X.device))


def cholesky_backward(gL, upper, L):
    if gL is None:
        return None
    if upper:
        L, gL = L.mH, gL.mH
    eye = torch.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(L.shape)
    Linv = torch.linalg.solve_triangular(L, eye, upper=False)
    # torch's: phi = tril(L^H gL) made hermitian but for its diagonal (halved, kept complex), gA = L^{-H} phi L^{-1}
    phi = (L.mH @ gL).tril()
    phi = 0.5 * (phi + phi.tril(-1).mH)
    return Linv.mH @ phi @ Linv


def eigh_backward(grads, results):
    gL, gV = grads
    L, V = results
    if gV is None:
        if gL is None:
            return None
        return (V * gL.unsqueeze(-2)) @ V.mT
    VhgV = V.mT @ gV
    VhgV = 0.5 * (VhgV - VhgV.mT)
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    n = L.shape[-1]
    eye = torch.eye(n, dtype=L.dtype, device=L.device)
    inner = VhgV / (E + eye) * (1 - eye)
    if gL is not None:
        inner = inner + torch.diag_embed(gL)
    return V @ inner @ V.mT


def eigvalsh_backward(g, A, UPLO):
    _, V = torch.linalg.eigh(A, UPLO)
    return (V * g.unsqueeze(-2)) @ V.mT


def _eig_inner(L, VhgV, gL):
    """(VhgV / E^*) with gL on the diagonal: E[i, j] = L[j] - L[i] (torch's linalg_eig_backward)."""
    n = L.shape[-1]
    eye = torch.eye(n, dtype=L.real.dtype if L.dtype.is_complex else L.dtype, device=L.device)
    Lc = L.conj()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye
    inner = VhgV / E
    if gL is not None:
        inner = inner * (1 - eye) + _diag_embed_any(gL.to(inner.dtype))
    return inner


def _diag_embed_any(x):
    """diag_embed of a real or complex x (the complex one from its parts: no complex diag_embed kernel here)."""
    if not x.dtype.is_complex:
        return torch.diag_embed(x)
    return torch.complex(torch.diag_embed(x.real), torch.diag_embed(x.imag))


def eigh_backward_complex(grads, results):
    """eigh of a Hermitian A = V diag(L) V^H: gA = V (skew-Hermitian part of V^H gV / E + diag(gL)) V^H. The
    eigenvectors are defined up to a phase each, so only losses invariant to them have a gradient (as in torch)."""
    gL, gV = grads
    L, V = results
    if not V.dtype.is_complex:
        return eigh_backward(grads, results)
    if gV is None:
        if gL is None:
            return None
        return (V * gL.unsqueeze(-2)) @ V.mH
    VhgV = V.mH @ gV
    VhgV = 0.5 * (VhgV - VhgV.mH)
    return V @ _eig_inner(L, VhgV, gL) @ V.mH


def eigvalsh_backward_complex(g, A, UPLO):
    _, V = torch.linalg.eigh(A, UPLO)
    return (V * g.unsqueeze(-2)) @ V.mH


def eig_backward(grads, results):
    """linalg.eig, A = V diag(L) V^-1 (columns of V of unit norm): gA = V^-H (diag(gL) + P(V^H gV) / E^*) V^H, where
    P removes what the normalisation of the columns of V takes away, V^H V diag(Re(diag(V^H gV))) (torch's
    linalg_eig_backward). Complex: the eigenvectors are defined up to a phase, so only losses invariant to them have a
    gradient; a real A keeps the real part (the engine's cast)."""
    gL, gV = grads
    L, V = results
    if gV is None:
        if gL is None:
            return None
        return torch.linalg.solve(V.mH, gL.unsqueeze(-1) * V.mH)
    VhgV = V.mH @ gV
    d = VhgV.diagonal(0, -2, -1).real
    VhgV = VhgV - V.mH @ (V * d.unsqueeze(-2))
    return torch.linalg.solve(V.mH, _eig_inner(L, VhgV, gL) @ V.mH)


def eigvals_backward(g, A):
    """eigvals: the eigenvalue part of eig_backward with V recomputed (torch's linalg_eigvals runs linalg_eig when a
    gradient is needed)."""
    L, V = torch.linalg.eig(A)
    return torch.linalg.solve(V.mH, g.unsqueeze(-1) * V.mH)


def _qr_backward_tall(gQ, gR, Q, R):
    """m >= n, reduced: gA = [gQ + Q syminvadj(triu(gR R^H - Q^H gQ))] R^{-H}."""
    M = None
    if gR is not None:
        M = gR @ R.mH
    if gQ is not None:
        M = -(Q.mH @ gQ) if M is None else M - Q.mH @ gQ
    M = M.triu()
    M = _half_diag(M + M.mH)
    gA = Q @ M
    if gQ is not None:
        gA = gA + gQ
    return torch.linalg.solve_triangular(R.mH, gA, upper=False, left=False)


def qr_backward(grads, results, mode):
    gQ, gR = grads
    Q, R = results
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if m >= n:
        return _qr_backward_tall(gQ, gR, Q, R)
    # wide: A = [X | Y] with X = Q R_X and R_Y = Q^H Y
    RX, RY = R[..., :, :m], R[..., :, m:]
    gRX = None if gR is None else gR[..., :, :m]
    gRY = None if gR is None else gR[..., :, m:]
    Y = Q @ RY
    if gRY is not None:
        gQ = Y @ gRY.mH if gQ is None else gQ + Y @ gRY.mH
    gX = _qr_backward_tall(gQ, gRX, Q, RX)
    gY = torch.zeros_like(Y) if gRY is None else Q @ gRY
    return torch.cat([gX, gY], -1)


def lu_backward(gL, gU, P, L, U):
    """torch's linalg_lu_backward (pivoted)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = None
        if gL is not None:
            gA = (L.mH @ gL).tril(-1)
        if gU is not None:
            t = (gU @ U.mH).triu()
            gA = t if gA is None else gA + t
        gA = torch.linalg.solve_triangular(U.mH, gA, upper=False, left=False)
        gA = torch.linalg.solve_triangular(L.mH, gA, upper=True, left=True, unitriangular=True)
        return P @ gA
    if m < n:
        U1, U2 = U[..., :, :k], U[..., :, k:]
        gA = None
        if gL is not None:
            gA = L.mH @ gL
        if gU is not None:
            t = gU.triu() @ U.mH
            gA = -t if gA is None else gA - t
        gA = torch.linalg.solve_triangular(U1.mH, gA.tril(-1), upper=False, left=False)
        if gU is not None:
            gA = torch.cat([gA + gU[..., :, :k].triu(), gU[..., :, k:]], -1)
        gA = torch.linalg.solve_triangular(L.mH, gA, upper=True, left=True, unitriangular=True)
        if gU is None:
            gA = torch.cat([gA, torch.zeros_like(U2)], -1)
        return P @ gA
    L1, L2 = L[..., :k, :], L[..., k:, :]
    gA = None
    if gU is not None:
        gA = gU @ U.mH
    if gL is not None:
        t = L.mH @ gL.tril(-1)
        gA = -t if gA is None else gA - t
    gA = torch.linalg.solve_triangular(L1.mH, gA.triu(), upper=True, left=True, unitriangular=True)
    if gL is not None:
        gA = torch.cat([gA + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
    gA = torch.linalg.solve_triangular(U.mH, gA, upper=False, left=False)
    if gL is None:
        gA = torch.cat([gA, torch.zeros_like(L2)], -2)
    return P @ gA


def lu_factor_ex_backward(g, LU, pivots):
    if g is None:
        return None
    P, L, U = torch.lu_unpack(LU, pivots)
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    return lu_backward(g[..., :, :k], g[..., :k, :], P, L, U)


def lu_solve_backward_B(g, LU, pivots, left, adjoint):
    if g is None:
        return None
    return torch.linalg.lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)


def lu_solve_backward_LU(g, LU, pivots, X, left, adjoint):
    """torch's linalg_lu_solve_LU (P is real: P.mT)."""
    if g is None:
        return None
    P, L, U = torch.lu_unpack(LU, pivots)
    if left != adjoint:
        gR = torch.linalg.solve_triangular(U.mH, -((g if left else g.mH) @ (X.mH if left else X)), upper=False)
        gL = torch.linalg.solve_triangular(L.mH, gR @ U.mH, upper=True, left=True, unitriangular=True).tril(-1)
        gLU = gL + gR.triu()
    else:
        gR = -P.mT @ (X if left else X.mH) @ (g.mH if left else g) @ P
        gR = torch.linalg.solve_triangular(L.mH, gR, upper=True, left=False, unitriangular=True)
        gU = torch.linalg.solve_triangular(U.mH, L.mH @ gR, upper=False, left=False).triu()
        gLU = gR.tril(-1) + gU
    return _sum_to(gLU, LU.shape)


def _lstsq_decomposed(A, B):
    if B.ndim == A.ndim - 1:
        return (torch.linalg.pinv(A) @ B.unsqueeze(-1)).squeeze(-1)
    return torch.linalg.pinv(A) @ B


def lstsq_backward(g, A, B, needs):
    """the solution is pinv(A) @ B (torch's linalg_lstsq_backward differentiates the same way)"""
    if g is None:
        return [None, None]
    from ._formulas import recompute_vjp
    return recompute_vjp(_lstsq_decomposed, (A, B), needs, g)


def _householder_decomposed(A, tau, ncols=None):
    """H_1 ... H_k applied to the first n columns of I, H_i = I - tau_i v_i v_i^H (v_i: 1 at row i, A's column i
    below it), built from differentiable ops."""
    m, n = A.shape[-2], A.shape[-1] if ncols is None else ncols
    k = tau.shape[-1]
    rows = torch.arange(m, device=A.device).unsqueeze(-1)
    Q = torch.eye(m, n, dtype=A.dtype, device=A.device).expand(A.shape[:-1] + (n,))
    for i in reversed(range(k)):
        col = A[..., :, i:i + 1]
        v = col * (rows > i).to(A.dtype) + (rows == i).to(A.dtype)  # (a product: where lacks complex)
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mH @ Q))
    return Q


def householder_product_backward(g, A, tau, needs):
    if g is None:
        return [None, None]
    from ._formulas import recompute_vjp
    return recompute_vjp(_householder_decomposed, (A, tau), needs, g)


def _ormqr_decomposed(A, tau, C, left, transpose):
    Q = _householder_decomposed(A, tau, A.shape[-2])
    if transpose:  # the conjugate transpose for complex, as torch's ormqr
        Q = Q.mH
    return Q @ C if left else C @ Q


def ormqr_backward(g, A, tau, C, left, transpose, needs):
    if g is None:
        return [None, None, None]
    from ._formulas import recompute_vjp
    return recompute_vjp(lambda a, t, c: _ormqr_decomposed(a, t, c, left, transpose), (A, tau, C), needs, g)
