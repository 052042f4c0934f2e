"""Reparameterised gamma and Dirichlet draws, and the Poisson and binomial samplers, for the
families whose torch ops (`_standard_gamma`, `_sample_dirichlet`, `poisson`, `binomial`) are not in
pyctorch's op table. The draws replicate torch's CPU samplers (Note [Sampling like torch] in
_torch_samplers.py), so a seed gives torch's numbers.

Note [Gamma gradients]: a gamma draw is reparameterised through its CDF level: holding
u = F(x; alpha) fixed, dx/dalpha = -(dF/dalpha)(x) / f(x), F and f the gamma CDF and density.
torch evaluates that derivative with approximations (a series, a saddle-point expansion and a fitted
rational function, accurate to about 1e-3); here it is summed exactly from the incomplete-gamma
series, so rsample gradients agree with torch's to that approximation's accuracy, not bit for bit.
A Dirichlet draw x = g / sum(g) of gammas g takes its gradient through the same gamma derivative
(torch differentiates the Beta marginals instead; both are unbiased reparameterisations).
"""
import math

import pyctorch as torch
from pyctorch.autograd import Function

from . import _torch_samplers
from ._torch_samplers import binomial, poisson  # noqa: F401  (re-exported for the families)


def standard_gamma_grad(x, alpha):
    """d sample / d alpha of a standard gamma sample x, holding its CDF level fixed.

    F(x; a) = sum_n x^(a+n) e^-x / Gamma(a+n+1) (the series of the regularised incomplete gamma);
    differentiating each term gives dF/da = sum_n term_n (log x - digamma(a+n+1)). Computed in
    float64 with enough terms to pass the series' peak near n = x - a, a block of terms at a time
    along a new last dim. Where the density underflows (far tails) the gradient is taken as 0,
    as torch does for its nan results.
    """
    xd = x.detach().to(torch.float64).clamp(min=1e-300)
    ad = alpha.detach().to(torch.float64)
    xd, ad = torch.broadcast_tensors(xd, ad)
    if xd.numel() == 0:
        return torch.zeros_like(x)
    x_max = float(xd.max())
    terms = int(x_max + 12 * math.sqrt(x_max) + 40)
    log_x, x_col, a_col = xd.log().unsqueeze(-1), xd.unsqueeze(-1), ad.unsqueeze(-1)
    total = torch.zeros_like(xd)
    block = 32
    for start in range(0, terms, block):
        a_n = a_col + torch.arange(start + 1, start + block + 1, dtype=torch.float64)
        log_term = (a_n - 1) * log_x - x_col - torch.lgamma(a_n)
        total = total + (log_term.exp() * (log_x - torch.digamma(a_n))).sum(-1)
    log_pdf = (ad - 1) * xd.log() - xd - torch.lgamma(ad)
    grad = -total / log_pdf.exp()
    return torch.where(torch.isfinite(grad), grad, torch.zeros_like(grad)).to(x.dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = _torch_samplers.standard_gamma(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        return grad * standard_gamma_grad(x, alpha)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws as torch._standard_gamma, differentiable in alpha."""
    if alpha.requires_grad:
        return _StandardGamma.apply(alpha)
    return _torch_samplers.standard_gamma(alpha)


class _Dirichlet(Function):
    @staticmethod
    def forward(ctx, concentration):
        x, gammas = _torch_samplers.dirichlet(concentration)
        ctx.save_for_backward(x, gammas, concentration)
        return x

    @staticmethod
    def backward(ctx, grad):
        # x_i = g_i / S with S = sum_j g_j: dx_i/da_j = g'_j / S (delta_ij - x_i), g'_j = dg_j/da_j
        x, gammas, concentration = ctx.saved_tensors
        dgamma = standard_gamma_grad(gammas, concentration.to(torch.float64))
        total = gammas.sum(-1, keepdim=True)
        xd, gd = x.to(torch.float64), grad.to(torch.float64)
        result = dgamma / total * (gd - (xd * gd).sum(-1, keepdim=True))
        return result.to(concentration.dtype)


def sample_dirichlet(concentration):
    """Dirichlet draws along the last dim as torch._sample_dirichlet, differentiable."""
    if concentration.requires_grad:
        return _Dirichlet.apply(concentration)
    return _torch_samplers.dirichlet(concentration)[0]
