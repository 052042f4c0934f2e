"""Special functions some families need that pyctorch.special lacks: the regularised incomplete
gamma P(a, x), the exponentially scaled Bessel functions i0e/i1e and the multivariate log-gamma.
Where pyctorch.special gains one, it is used instead."""
import math

import pyctorch as torch


def mvlgamma(x, p):
    """log of the multivariate gamma function of dimension p."""
    native = getattr(torch, "mvlgamma", None)
    if native is not None:
        return native(x, p)
    result = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        result = result + torch.lgamma(x - j / 2)
    return result


def i0e(x):
    """exp(-|x|) I0(x). Computed from pyctorch's i0, so it overflows to nan past |x| ~ 700."""
    native = getattr(torch.special, "i0e", None)
    if native is not None:
        return native(x)
    return torch.special.i0(x) * torch.exp(-x.abs())


def i1e(x):
    """exp(-|x|) I1(x), from pyctorch's i1 (the same range limit as i0e)."""
    native = getattr(torch.special, "i1e", None)
    if native is not None:
        return native(x)
    return torch.special.i1(x) * torch.exp(-x.abs())


def _gammainc_values(a, x, iterations=400):
    """P(a, x) in float64 without a graph: the power series where x < a + 1 (it converges fast
    there), otherwise 1 - Q(a, x) with Q from Lentz's continued fraction."""
    a = a.detach().to(torch.float64)
    x = x.detach().to(torch.float64).clamp(min=0)
    a, x = torch.broadcast_tensors(a, x)
    safe_x = x.clamp(min=1e-300)
    log_prefactor = a * safe_x.log() - x - torch.lgamma(a)
    # series: P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n))
    term = torch.ones_like(a) / a
    total = term.clone()
    for n in range(1, iterations):
        term = term * x / (a + n)
        total = total + term
    series = (log_prefactor.exp() * total)
    # continued fraction for Q (modified Lentz)
    tiny = 1e-300
    b = x + 1 - a
    c = torch.full_like(a, 1 / tiny)
    d = 1 / torch.where(b.abs() < tiny, torch.full_like(b, tiny), b)
    h = d.clone()
    for i in range(1, iterations):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = torch.where(d.abs() < tiny, torch.full_like(d, tiny), d)
        c = b + an / c
        c = torch.where(c.abs() < tiny, torch.full_like(c, tiny), c)
        d = 1 / d
        h = h * d * c
    upper = log_prefactor.exp() * h
    result = torch.where(x < a + 1, series, 1 - upper)
    return torch.where(x == 0, torch.zeros_like(result), result)


def gammainc(a, x):
    """Regularised lower incomplete gamma P(a, x), differentiable in x (torch's is not in a)."""
    native = getattr(torch.special, "gammainc", None)
    if native is not None:
        return native(a, x)
    dtype = torch.promote_types(a.dtype, x.dtype) if isinstance(x, torch.Tensor) else a.dtype
    value = _gammainc_values(a, x).to(dtype)
    if isinstance(x, torch.Tensor) and x.requires_grad:
        # dP/dx is the Gamma(a, 1) density at x: attach it as a first-order gradient
        density = torch.exp(torch.xlogy(a.detach() - 1, x.detach()) - x.detach() - torch.lgamma(a.detach()))
        value = value + (x - x.detach()) * density
    return value
