"""Torch operators the weight parametrizations need and pyctorch's op table lacks, written with
table ops so autograd differentiates them without formulas of their own: norm_except_dim,
_weight_norm, matrix_exp, householder_product, and (without gradient) geqrf and the sign-fixed QR
factor behind parametrizations.orthogonal. Results equal torch's to rounding (torch runs LAPACK or fused kernels).
"""
import math

import pyctorch as torch

__all__ = []


def norm_except_dim(v, pow=2, dim=0):
    """The p-norm of each slice of v along `dim`, shaped like v with size 1 elsewhere; dim=-1
    means the norm of the whole tensor (torch's convention, not the last dimension)."""
    if dim == -1:
        return v.norm(pow)
    moved = v.transpose(0, dim).reshape(v.shape[dim], -1)
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return moved.norm(pow, dim=1).view(shape)


def _weight_norm(v, g, dim=0):
    """w = g * v / ||v|| with the norm of norm_except_dim."""
    return v * (g / norm_except_dim(v, 2, dim))


def _taylor_terms(dtype):
    """Taylor terms that reach the dtype's precision for a matrix of 1-norm <= 1/2 (after scaling)."""
    return 10 if dtype == torch.float32 else 18


def matrix_exp(a):
    """exp of a square matrix (or a batch): scaling and squaring around a Horner-form Taylor
    polynomial. The scale is chosen from the 1-norm without gradient; the rest is differentiable."""
    n = a.shape[-1]
    with torch.no_grad():
        norm = a.abs().sum(-2).amax().item() if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0.5 else 0
    scaled = a / (2.0 ** squarings)
    eye = torch.eye(n, dtype=a.dtype).expand_as(a)
    result = eye
    for k in range(_taylor_terms(a.dtype), 0, -1):
        result = eye + scaled.matmul(result) / k
    for _ in range(squarings):
        result = result.matmul(result)
    return result


def householder_product(a, tau):
    """The first k columns of H_1 ... H_k with H_i = I - tau_i v_i v_i^T, v_i being column i of
    `a` below the diagonal with an implicit 1 on it (LAPACK's orgqr convention)."""
    n, k = a.shape[-2], a.shape[-1]
    vectors = a.tril(-1) + torch.eye(n, k, dtype=a.dtype)
    q = torch.eye(n, k, dtype=a.dtype).expand(*a.shape[:-2], n, k)
    for i in range(tau.shape[-1] - 1, -1, -1):  # apply H_k first: Q = H_1 (H_2 (... (H_k I)))
        v = vectors[..., :, i:i + 1]
        q = q - (tau[..., i, None, None] * v).matmul(v.mT.matmul(q))
    return q


def _geqrf_matrix(a):
    """geqrf of one m x n matrix, in float64, without gradient: Householder reflections chosen as
    LAPACK's dlarfg chooses them (beta = -sign(alpha) * ||x||, tau = (beta - alpha) / beta, the
    vector scaled to a unit first entry), so the compact result matches LAPACK's to rounding."""
    r = a.double().clone()
    m, n = r.shape
    taus = torch.zeros(min(m, n), dtype=torch.float64)
    for j in range(min(m, n)):
        alpha = r[j, j].item()
        tail_norm = r[j + 1:, j].norm().item() if j + 1 < m else 0.0
        if tail_norm == 0.0:
            continue  # H = I: tau stays 0
        beta = -math.copysign(math.hypot(alpha, tail_norm), alpha)
        tau = (beta - alpha) / beta
        v = torch.cat([torch.ones(1, dtype=torch.float64), r[j + 1:, j] / (alpha - beta)])
        trailing = r[j:, j + 1:]
        trailing -= tau * torch.outer(v, v.matmul(trailing))
        r[j, j] = beta
        r[j + 1:, j] = v[1:]
        taus[j] = tau
    return r.to(a.dtype), taus.to(a.dtype)


def geqrf(a):
    """(a_compact, tau) of torch.geqrf for a matrix or a batch: R on and above the diagonal, the
    Householder vectors below it. Not differentiable (used by right_inverse under no_grad)."""
    if a.dim() == 2:
        return _geqrf_matrix(a)
    flat = [_geqrf_matrix(m) for m in a.reshape(-1, *a.shape[-2:])]
    return (torch.stack([c for c, _ in flat]).reshape(a.shape),
            torch.stack([t for _, t in flat]).reshape(*a.shape[:-2], -1))


def make_orthogonal(a):
    """The Q of a = QR with R's diagonal positive, for a matrix or a batch (n >= k), without gradient.

    Note [orthogonal_ without linalg.qr]: pyctorch has no torch.linalg.qr yet. torch takes LAPACK's
    Householder QR and multiplies Q's columns by the signs of R's diagonal, which makes the result
    the unique Q whose R has a positive diagonal (for a full-rank a; a Gaussian matrix is one). This
    runs the same Householder QR (geqrf, then householder_product) in float64, so it agrees with
    torch's float32 result to float32 rounding, not bit for bit.
    """
    with torch.no_grad():
        compact, tau = geqrf(a.double())
        q = householder_product(compact, tau)
        q = q * compact.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)
    return q.to(a.dtype)
