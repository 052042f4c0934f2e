"""Element-by-element replicas of torch's CPU samplers for the gamma, Dirichlet, Poisson and
binomial draws (torch's `_standard_gamma`, `_sample_dirichlet`, `poisson`, `binomial`, which
pyctorch's op table does not have).

Note [Sampling like torch]: torch draws these in C++, one element after another in the output's
memory order, from the generator's 53-bit double uniforms and its double Box-Muller normals (with
the cached second value). pyctorch's rand(1) and randn(1) in float64 make exactly those generator
calls, so running the same algorithms with the same floating-point operations gives torch's numbers
bit for bit and leaves the generator where torch leaves it:
  gamma     Marsaglia and Tsang's squeeze/rejection method, with the U^(1/alpha) boost below 1
            (torch does the alpha arithmetic in the tensor's dtype, so float32 is emulated);
  Poisson   products of uniforms below rate 10, Hoermann's PTRS transformed rejection above;
  binomial  counting geometric waiting times when n min(p, 1-p) < 10, Hoermann's BTRS otherwise.
The price is a Python loop, a few microseconds per element.
"""
import math

import numpy as np

import pyctorch as torch

_ONE_THIRD_F32 = float(np.float32(1.0) / np.float32(3.0))  # torch writes 1.0f / 3.0f
_SQUEEZE_F32 = float(np.float32(0.0331))  # likewise the 0.0331f of the squeeze test
_DBL_MIN = float(np.finfo(np.float64).tiny)


def _uniform():
    return torch.rand(1, dtype=torch.float64).item()


def _normal():
    return torch.randn(1, dtype=torch.float64).item()


def _gamma_constants(alpha, single):
    """(exponent of the boost or None, d, c) for one concentration. `single` does the alpha-side
    arithmetic in float32 as torch does for float tensors (the rest is double either way)."""
    exponent = None
    if alpha < 1.0:
        exponent = float(np.float32(1.0) / np.float32(alpha)) if single else 1.0 / alpha
        alpha = float(np.float32(alpha) + np.float32(1.0)) if single else alpha + 1.0
    d = float(np.float32(alpha) - np.float32(_ONE_THIRD_F32)) if single else alpha - _ONE_THIRD_F32
    return exponent, d, 1.0 / math.sqrt(9.0 * d)


def _gamma_one(alpha, constants):
    """One Gamma(alpha, 1) draw, given _gamma_constants(alpha)."""
    if alpha == 0.0:
        return 0.0
    exponent, d, c = constants
    scale = 1.0
    if exponent is not None:
        scale *= (1 - _uniform()) ** exponent
    while True:
        x = _normal()
        y = 1.0 + c * x
        while y <= 0:
            x = _normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1 - _uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_F32 * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_draws(alphas, single):
    """Draws for a list of concentrations, the per-value constants computed once (parameters are
    usually expanded, so few values repeat many times)."""
    constants = {}
    out = []
    for a in alphas:
        k = constants.get(a)
        if k is None:
            k = constants[a] = _gamma_constants(a, single) if a != 0.0 else None
        out.append(_gamma_one(a, k))
    return out


def _values(t):
    """The entries of t in memory order of a contiguous copy (torch's serial kernel order)."""
    return t.detach().contiguous().reshape(-1).tolist()


def standard_gamma(alpha):
    """torch._standard_gamma: a tensor like alpha of Gamma(alpha, 1) draws, no gradient."""
    draws = _gamma_draws(_values(alpha), single=alpha.dtype != torch.float64)
    out = torch.tensor(draws, dtype=torch.float64).reshape(alpha.shape).to(alpha.dtype)
    return out.clamp(min=torch.finfo(alpha.dtype).tiny)  # torch returns at least the smallest normal


def dirichlet(concentration):
    """torch._sample_dirichlet: gammas drawn in double, normalised along the last dim, then kept
    inside [tiny, 1) of the dtype. Returns (draws, the double gammas) for the gradient."""
    gammas = [max(_DBL_MIN, g) for g in _gamma_draws(_values(concentration.to(torch.float64)), single=False)]
    gammas = torch.tensor(gammas, dtype=torch.float64).reshape(concentration.shape)
    ratio = (gammas / gammas.sum(-1, keepdim=True)).to(concentration.dtype)
    finfo = torch.finfo(concentration.dtype)
    below_one = 1.0 - finfo.eps / 2  # the largest value below 1 (nextafter(1, 0))
    return ratio.clamp(min=finfo.tiny, max=below_one), gammas


def _poisson_one(lam):
    if lam >= 10:
        # PTRS: a uniform mapped through a hat function close to the Poisson pmf, squeezed
        sqrt_lam, log_lam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * sqrt_lam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        v_r = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform() - 0.5
            v = _uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= v_r:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
                    <= -lam + k * log_lam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    # count uniforms whose running product stays above e^-lambda
    threshold, count, product = math.exp(-lam), 0, 1.0
    while True:
        product *= _uniform()
        if product <= threshold:
            return count
        count += 1


def poisson(rate):
    """torch.poisson: Poisson(rate) counts in rate's dtype."""
    draws = [_poisson_one(r) for r in _values(rate.to(torch.float64))]
    return torch.tensor(draws, dtype=torch.float64).reshape(rate.shape).to(rate.dtype)


# log k! minus its Stirling approximation, for k = 0..9 (beyond, the series is used)
_STIRLING_TAIL = (0.08106146679532726, 0.04134069595540929, 0.02767792568499834, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(n, p, s):
    """Successes before the waiting times (geometric, of success probability p) pass n trials."""
    log_q = math.log1p(-float(p))
    total, successes = 0.0, s(0)
    while True:
        total += math.ceil(math.log(_uniform()) / log_q)
        if total > n:
            return successes
        successes = s(successes + 1)


def _binomial_btrs(n, p, s):
    """Hoermann's BTRS; `s` rounds to the tensor's dtype where torch computes in it."""
    spq = float(s(math.sqrt(s(s(n * p) * s(1 - p))))) if s is not float else math.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * float(p)
    c = float(s(n * p)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(s(p / s(1 - p)))
    alpha = (2.83 + 5.1 / b) * spq
    m = math.floor(float(s((n + 1) * p)))
    while True:
        u = _uniform() - 0.5
        v = _uniform()
        us = 0.5 - abs(u)
        k = float(s(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + float(s(n + 1)) * math.log((n - m + 1) / float(s(s(n - k) + 1)))
                 + (k + 0.5) * math.log(r * float(s(s(n - k) + 1)) / float(s(k + 1)))
                 + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(k) - _stirling_tail(float(s(n - k))))
        if v <= bound:
            return k


def _binomial_one(n, p, s):
    n, p = s(n), s(p)
    if n <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(n)
    if p <= 0.5:
        draw = _binomial_btrs if s(n * p) >= 10.0 else _binomial_inversion
        return float(draw(n, p, s))
    q = s(1.0 - p)
    draw = _binomial_btrs if s(n * q) >= 10.0 else _binomial_inversion
    return float(s(n - s(draw(n, q, s))))


def binomial(count, prob):
    """torch.binomial: Binomial(count, prob) draws in prob's dtype (count and prob broadcast)."""
    count, prob = torch.broadcast_tensors(count.to(prob.dtype), prob)
    s = float if prob.dtype == torch.float64 else np.float32
    draws = [_binomial_one(n, p, s) for n, p in zip(_values(count), _values(prob))]
    return torch.tensor(draws, dtype=torch.float64).reshape(prob.shape).to(prob.dtype)
