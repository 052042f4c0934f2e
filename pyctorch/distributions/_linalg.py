"""Small dense linear algebra that the multivariate families need and pyctorch.linalg does not
have yet (Cholesky factor, triangular solves). Written with table ops, so autograd differentiates
them without formulas of their own; the loops run over the matrix side n, which is small for the
event sizes distributions use. Where pyctorch.linalg gains the real function it is used instead.

Note [Python linalg]: these match torch's LAPACK results to rounding, not bit for bit.
"""
import numpy as np

import pyctorch as torch


def cholesky(a):
    """Lower Cholesky factor of symmetric positive-definite matrices a (..., n, n)."""
    native = getattr(torch.linalg, "cholesky", None)
    if native is not None:
        return native(a)
    n = a.shape[-1]
    # The factorisation reads only the lower triangle; symmetrising first spreads the gradient over
    # both triangles as torch's cholesky backward does (its gradient is symmetric).
    a = (a + a.mT) / 2
    columns = []
    for j in range(n):
        # column j of L: (a[:, j] - sum_{k<j} L[:, k] L[j, k]) / L[j, j], zero above the diagonal
        v = a[..., :, j]
        for k in range(j):
            v = v - columns[k] * columns[k][..., j:j + 1]
        pivot = v[..., j:j + 1].sqrt()
        below = (torch.arange(n, device=a.device) >= j).to(a.dtype)
        columns.append(v / pivot * below)
    return torch.stack(columns, dim=-1)


def solve_triangular(tri, rhs, *, upper):
    """Solve tri @ x = rhs for triangular tri (..., n, n) and rhs (..., n, k), by substitution."""
    native = getattr(torch.linalg, "solve_triangular", None)
    if native is not None:
        return native(tri, rhs, upper=upper)
    n = tri.shape[-1]
    tri, rhs = _broadcast_batch(tri, rhs)
    rows = [None] * n
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        r = rhs[..., i, :]
        for j in (range(i + 1, n) if upper else range(i)):
            r = r - tri[..., i, j:j + 1] * rows[j]
        rows[i] = r / tri[..., i, i:i + 1]
    return torch.stack(rows, dim=-2)


def _broadcast_batch(mat, rhs):
    batch = torch.broadcast_shapes(mat.shape[:-2], rhs.shape[:-2])
    return mat.expand(batch + mat.shape[-2:]), rhs.expand(batch + rhs.shape[-2:])


def triangular_inverse(tri, *, upper=False):
    """The inverse of lower (or upper) triangular matrices."""
    eye = torch.eye(tri.shape[-1], dtype=tri.dtype, device=tri.device)
    return solve_triangular(tri, eye.expand(tri.shape), upper=upper)


def cholesky_inverse(factor):
    """(L L^T)^{-1} from a lower Cholesky factor L."""
    inv = triangular_inverse(factor)
    return inv.mT @ inv


def eigvalsh(a):
    """Eigenvalues of symmetric matrices in ascending order (for constraint checks only: no grad)."""
    values = np.linalg.eigvalsh(a.detach().to(torch.float64).numpy())
    return torch.from_numpy(values).to(a.dtype)


def cholesky_succeeds(a):
    """Per matrix of a batch, whether a Cholesky factorisation exists (positive definite)."""
    flat = a.detach().to(torch.float64).numpy().reshape((-1,) + tuple(a.shape[-2:]))
    ok = []
    for m in flat:
        try:
            np.linalg.cholesky(m)
            ok.append(True)
        except np.linalg.LinAlgError:
            ok.append(False)
    return torch.tensor(ok, dtype=torch.bool).reshape(a.shape[:-2])


def cholesky_solve(rhs, factor):
    """(L L^T)^{-1} rhs for a lower Cholesky factor L (torch.cholesky_solve's argument order)."""
    native = getattr(torch, "cholesky_solve", None)
    if native is not None:
        return native(rhs, factor)
    return cholesky_inverse(factor) @ rhs


def logdet_pd(a):
    """log det of symmetric positive-definite matrices, from their Cholesky factor (the callers'
    matrices are positive definite, where this equals torch.linalg.slogdet(a).logabsdet)."""
    return 2 * cholesky(a).diagonal(dim1=-2, dim2=-1).log().sum(-1)
