"""Backward formulas of the SVD (csrc/aten/ops_linalg.def; the matrix norms on it are composites over svdvals).

For A = U diag(S) Vh (real, k = min(m, n) singular values, U m x k, Vh k x n) and a tall or
square A, the gradient of a loss with partials gU, gS, gVh is

    gA = U [ skew(U^T gU) S / E + S skew(V^T gV) / E + diag(gS) ] Vh + (I - U U^T) gU S^-1 Vh

with skew(X) = X - X^T, E[i, j] = S[j]^2 - S[i]^2 off the diagonal (1 on it, where the skew
parts vanish) and gV = gVh^T. A wide A is differentiated through A^T = V S U^T. Singular
vectors are defined up to sign, so only losses invariant to those signs have a well-defined
gradient (as in torch); repeated singular values make E vanish and the result infinite, as
torch's. Everything is written with differentiable ops, so double backward works.
"""
import pyctorch as torch

__all__ = ["svd_backward", "svdvals_backward"]


def _svd_backward(gU, gS, gVh, U, S, Vh):
    if gU is None and gVh is None:
        return None if gS is None else (U * gS.unsqueeze(-2)) @ Vh
    m, n = U.shape[-2], Vh.shape[-1]
    if m < n:
        t = lambda x: None if x is None else x.mT  # noqa: E731
        return _svd_backward(t(gVh), gS, t(gU), Vh.mT, S, U.mT).mT
    k = S.shape[-1]
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + torch.eye(k, dtype=S.dtype, device=S.device)
    inner = None
    if gU is not None:
        UtgU = U.mT @ gU
        inner = (UtgU - UtgU.mT) * S.unsqueeze(-2) / E
    if gVh is not None:
        VtgV = Vh @ gVh.mT
        term = S.unsqueeze(-1) * (VtgV - VtgV.mT) / E
        inner = term if inner is None else inner + term
    if gS is not None:
        inner = inner + torch.diag_embed(gS)
    gA = U @ inner
    if gU is not None and m > k:
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mT @ gUSinv)
    return gA @ Vh


def svd_backward(grads, results, legacy):
    """linalg.svd (U, S, Vh) or, legacy, torch.svd (U, S, V). A full U / Vh enters A only
    through its first k columns / rows, so both are narrowed to them (as torch does)."""
    U, S, Vh = results
    gU, gS, gVh = grads
    if legacy:
        Vh = Vh.mT
        gVh = None if gVh is None else gVh.mT
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    gU = None if gU is None else gU[..., :k]
    gVh = None if gVh is None else gVh[..., :k, :]
    return _svd_backward(gU, gS, gVh, U, S, Vh)


def svdvals_backward(g, A):
    """S = svdvals(A): gA = U diag(gS) Vh, with U and Vh recomputed (recorded under create_graph)."""
    U, _, Vh = torch.linalg.svd(A, full_matrices=False)
    return (U * g.unsqueeze(-2)) @ Vh


