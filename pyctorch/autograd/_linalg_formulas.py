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
from ._linalg_lapack_formulas import _diag_embed_any

__all__ = ["svd_backward", "svdvals_backward", "svd_backward_complex"]


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




def _svd_backward_complex(gU, gS, gVh, U, S, Vh):
    """_svd_backward for complex U, Vh: conjugate transposes where the real one transposes, plus the imaginary part
    of diag(U^H gU) / S on the diagonal (the phases of the singular vectors; torch's svd_backward). Only losses
    invariant to those phases have a gradient, as in torch."""
    if gU is None and gVh is None:
        return None if gS is None else (U * gS.unsqueeze(-2).to(U.dtype)) @ Vh
    m, n = U.shape[-2], Vh.shape[-1]
    if m < n:
        h = lambda x: None if x is None else x.mH  # noqa: E731
        return _svd_backward_complex(h(gVh), gS, h(gU), Vh.mH, S, U.mH).mH
    k = S.shape[-1]
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + torch.eye(k, dtype=S.dtype, device=S.device)
    inner = None
    if gU is not None:
        UhgU = U.mH @ gU
        skew = UhgU - UhgU.mH
        # the diagonal of skew is 2i Im(diag(U^H gU)): its share of the phases, i Im(.) / S
        inner = skew * S.unsqueeze(-2) / E + _diag_embed_any(skew.diagonal(0, -2, -1) / (2 * S))
    if gVh is not None:
        VhgV = Vh @ gVh.mH
        term = S.unsqueeze(-1) * (VhgV - VhgV.mH) / E
        inner = term if inner is None else inner + term
    if gS is not None:
        inner = inner + _diag_embed_any(gS.to(inner.dtype))
    gA = U @ inner
    if gU is not None and m > k:
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mH @ gUSinv)
    return gA @ Vh


def svd_backward_complex(grads, results, legacy):
    """svd_backward for complex tensors: torch.svd's V is Vh^H."""
    U, S, Vh = results
    if not U.dtype.is_complex:
        return svd_backward(grads, results, legacy)
    gU, gS, gVh = grads
    if legacy:
        Vh = Vh.mH
        gVh = None if gVh is None else gVh.mH
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    gU = None if gU is None else gU[..., :k]
    gVh = None if gVh is None else gVh[..., :k, :]
    return _svd_backward_complex(gU, gS, gVh, U, S, Vh)
