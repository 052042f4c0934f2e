"""Samplers for the families whose torch op pyctorch lacks (`_standard_gamma`, `_sample_dirichlet`,
`poisson`, `binomial`), built from pyctorch's seeded rand/randn.

Note [Own samplers]: these draw from the right distribution and repeat for a seed, but they are not
torch's algorithms, so their numbers differ from torch's; the tests check them by moments.
The gamma sample is reparameterised as torch's is: its gradient with respect to the concentration
is the implicit one, dx/dalpha = -(dF/dalpha)(x) / f(x), F and f the gamma CDF and density.
"""
import math

import pyctorch as torch
from pyctorch.autograd import Function


def _marsaglia_tsang(alpha):
    """Standard gamma draws for concentration alpha >= 1 (any shape), by Marsaglia and Tsang's
    squeeze-and-reject method, redrawing the rejected entries until none is left."""
    d = alpha - 1.0 / 3.0
    c = 1.0 / (9.0 * d).sqrt()
    out = torch.zeros_like(alpha)
    pending = torch.ones_like(alpha, dtype=torch.bool)
    while bool(pending.any()):
        z = torch.randn(alpha.shape, dtype=alpha.dtype)
        u = torch.rand(alpha.shape, dtype=alpha.dtype)
        v = (1 + c * z) ** 3
        log_v = torch.log(v.clamp(min=torch.finfo(alpha.dtype).tiny))
        accept = (v > 0) & (torch.log(u) < 0.5 * z * z + d - d * v + d * log_v)
        take = pending & accept
        out = torch.where(take, d * v, out)
        pending = pending & ~accept
    return out


def standard_gamma_sample(alpha):
    """Gamma(alpha, 1) draws, no gradient. Below 1 the boost Gamma(a) = Gamma(a + 1) U^(1/a)."""
    alpha = alpha.detach()
    compute = alpha.to(torch.float64)
    small = compute < 1
    boosted = torch.where(small, compute + 1, compute)
    x = _marsaglia_tsang(boosted)
    u = torch.rand(alpha.shape, dtype=torch.float64)
    x = torch.where(small, x * u ** (1.0 / compute), x)
    return x.to(alpha.dtype)


def standard_gamma_grad(x, alpha):
    """d sample / d alpha of a standard gamma sample x, holding its CDF level fixed.

    F(x; a) = sum_n x^(a+n) e^-x / Gamma(a+n+1) (the series of the regularised incomplete gamma);
    differentiating each term gives dF/da = sum_n term_n (log x - digamma(a+n+1)). Computed in
    float64 with enough terms to pass the series' peak near n = x - a.
    """
    xd = x.detach().to(torch.float64).clamp(min=1e-300)
    ad = alpha.detach().to(torch.float64)
    xd, ad = torch.broadcast_tensors(xd, ad)
    if xd.numel() == 0:
        return torch.zeros_like(x)
    x_max = float(xd.max())
    terms = int(x_max + 12 * math.sqrt(x_max) + 40)
    log_x = xd.log()
    total = torch.zeros_like(xd)
    for n in range(terms):
        a_n = ad + (n + 1)
        log_term = (a_n - 1) * log_x - xd - torch.lgamma(a_n)
        total = total + log_term.exp() * (log_x - torch.digamma(a_n))
    log_pdf = (ad - 1) * log_x - xd - torch.lgamma(ad)
    return (-total / log_pdf.exp()).to(x.dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = standard_gamma_sample(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        return grad * standard_gamma_grad(x, alpha)


def standard_gamma(alpha):
    """Reparameterised Gamma(alpha, 1) sample (the role of torch._standard_gamma)."""
    if alpha.requires_grad:
        return _StandardGamma.apply(alpha)
    return standard_gamma_sample(alpha)


def sample_dirichlet(concentration):
    """Dirichlet draws along the last dim as normalised gammas; gradients flow through the gammas
    (a valid reparameterisation, though per sample it is not torch's _dirichlet_grad)."""
    gammas = standard_gamma(concentration)
    gammas = gammas.clamp(min=torch.finfo(gammas.dtype).tiny)
    return gammas / gammas.sum(-1, keepdim=True)


def _poisson_small(rate):
    """Poisson counts for small rates: Exp(1) waiting times are added until they pass the rate
    (a Poisson process); the number of loop rounds grows with the largest rate."""
    count = torch.zeros_like(rate)
    elapsed = torch.zeros_like(rate)
    running = rate > 0
    while bool(running.any()):
        elapsed = elapsed + torch.empty(rate.shape, dtype=rate.dtype).exponential_()
        running = running & (elapsed <= rate)
        count = count + running.to(rate.dtype)
    return count


def _poisson_large(rate):
    """Poisson counts for rates >= 10 by Hoermann's transformed rejection with squeeze (PTRS,
    1993): a proposal k from a transformed uniform, accepted by two cheap tests or the exact
    density ratio; about 1.1 rounds per draw whatever the rate."""
    safe = rate.clamp(min=10.0)
    sqrt_rate, log_rate = safe.sqrt(), safe.log()
    b = 0.931 + 2.53 * sqrt_rate
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    out = torch.zeros_like(rate)
    pending = torch.ones_like(rate, dtype=torch.bool)
    while bool(pending.any()):
        u = torch.rand(rate.shape, dtype=rate.dtype) - 0.5
        v = torch.rand(rate.shape, dtype=rate.dtype)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a / us + b) * u + safe + 0.43)
        quick = (us >= 0.07) & (v <= v_r)
        rejected = (k < 0) | ((us < 0.013) & (v > us))
        log_ratio = torch.log(v * inv_alpha / (a / (us * us) + b))
        exact = log_ratio <= -safe + k * log_rate - torch.lgamma(k + 1)
        accept = pending & (quick | (~rejected & exact))
        out = torch.where(accept, k, out)
        pending = pending & ~accept
    return out


def poisson(rate):
    """Poisson(rate) counts, as floats of the rate's dtype."""
    rate = rate.detach()
    r = rate.to(torch.float64)
    large = r >= 10
    counts = torch.zeros_like(r)
    if bool((~large).any()):
        counts = torch.where(large, counts, _poisson_small(torch.where(large, torch.zeros_like(r), r)))
    if bool(large.any()):
        counts = torch.where(large, _poisson_large(r), counts)
    return counts.to(rate.dtype)


def _binomial_inversion(n, q):
    """Counts for n q < 10 (q <= 1/2) by inverting the CDF, with the pmf recurrence
    pmf(k+1) = pmf(k) (n-k)/(k+1) q/(1-q); pmf(0) = (1-q)^n is then at least about e^-20."""
    u = torch.rand(n.shape, dtype=torch.float64)
    k = torch.zeros_like(n)
    pmf = (1 - q) ** n
    cdf = pmf.clone()
    ratio = q / (1 - q)
    running = (u > cdf) & (k < n)
    while bool(running.any()):
        pmf = pmf * (n - k) / (k + 1) * ratio
        k = k + running.to(k.dtype)
        cdf = cdf + pmf
        running = running & (u > cdf) & (k < n)
    return k


def _binomial_btrs(n, q):
    """Counts for n q >= 10 (q <= 1/2) by Hoermann's transformed rejection with squeeze (BTRS,
    1993), the binomial sibling of PTRS: a few rounds whatever n is."""
    safe_n = torch.where(n * q >= 10, n, torch.full_like(n, 40.0))  # keep unused entries finite
    safe_q = torch.where(n * q >= 10, q, torch.full_like(q, 0.5))
    spq = (safe_n * safe_q * (1 - safe_q)).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * safe_q
    c = safe_n * safe_q + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    log_odds = (safe_q / (1 - safe_q)).log()
    m = torch.floor((safe_n + 1) * safe_q)
    h = torch.lgamma(m + 1) + torch.lgamma(safe_n - m + 1)
    out = torch.zeros_like(n)
    pending = torch.ones_like(n, dtype=torch.bool)
    while bool(pending.any()):
        u = torch.rand(n.shape, dtype=torch.float64) - 0.5
        v = torch.rand(n.shape, dtype=torch.float64)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a / us + b) * u + c)
        in_range = (k >= 0) & (k <= safe_n)
        quick = (us >= 0.07) & (v <= v_r)
        k_safe = k.clamp(min=0).minimum(safe_n)
        log_v = torch.log(v * alpha / (a / (us * us) + b))
        exact = log_v <= h - torch.lgamma(k_safe + 1) - torch.lgamma(safe_n - k_safe + 1) + (k_safe - m) * log_odds
        accept = pending & in_range & (quick | exact)
        out = torch.where(accept, k, out)
        pending = pending & ~accept
    return out


def binomial(total_count, probs):
    """Binomial(total_count, probs) counts as floats. Computed on the side q = min(p, 1-p) and
    mirrored: inversion where n q < 10, BTRS rejection elsewhere."""
    n, p = torch.broadcast_tensors(total_count.detach().to(torch.float64), probs.detach().to(torch.float64))
    flip = p > 0.5
    q = torch.where(flip, 1 - p, p)
    large = n * q >= 10
    k = torch.zeros_like(n)
    if bool((~large).any()):
        k = torch.where(large, k, _binomial_inversion(torch.where(large, torch.zeros_like(n), n), q))
    if bool(large.any()):
        k = torch.where(large, _binomial_btrs(n, q), k)
    k = torch.where(flip, n - k, k)
    return k.to(probs.dtype)
