"""torch.special: the special functions under torch's names.

Most are the operators of the op table under a second name (expit is sigmoid, gammaln is lgamma, ...); the few
that torch computes as compositions of those (ndtr, entr, xlog1py, multigammaln) are compositions here too, in
torch's formulas, so they differentiate through autograd. The rest (the Bessel and Airy functions, i0e, i1e, erfcx,
log_ndtr, ndtri, zeta, the orthogonal polynomials) are the special_<name> ops of csrc/aten/ops_special.def, which
torch keeps as torch._C._special.special_<name>; gammainc/gammaincc and polygamma are torch.igamma/igammac and
torch.polygamma.
"""
import math

import pyctorch as _C  # imported lazily (torch.special), after pyctorch itself

# the special_<name> ops of ops_special.def, under their torch.special names
_SPECIAL_OPS = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "i0e", "i1e", "erfcx", "log_ndtr", "ndtri", "zeta",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p"]
__all__ = ["digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expm1", "expit", "gammaln", "i0", "i1", "log1p",
           "logit", "logsumexp", "round", "sinc", "xlogy", "xlog1py", "ndtr", "entr", "multigammaln", "softmax",
           "log_softmax", "gammainc", "gammaincc", "polygamma"] + _SPECIAL_OPS

globals().update({_name: getattr(_C._C, "special_" + _name) for _name in _SPECIAL_OPS})
gammainc, gammaincc = _C.igamma, _C.igammac
polygamma = _C.polygamma
digamma = psi = _C.digamma
erf, erfc, erfinv = _C.erf, _C.erfc, _C.erfinv
exp2, expm1, log1p = _C.exp2, _C.expm1, _C.log1p
expit = _C.sigmoid
gammaln = _C.lgamma
i0 = _C.i0
i1 = _C._C._i1
logit = _C.logit
logsumexp = _C.logsumexp
sinc = _C.sinc
xlogy = _C.xlogy


def _out(result, out):
    if out is None:
        return result
    return out.copy_(result) if out.shape == result.shape else out.resize_(result.shape).copy_(result)


def _floating(x):
    return x if x.is_floating_point() else x.to(_C.get_default_dtype())


def xlog1py(input, other, *, out=None):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    if not isinstance(input, _C.Tensor):
        input = _C.tensor(input, dtype=_C.result_type(input, other) if isinstance(other, _C.Tensor) else None)
    if not isinstance(other, _C.Tensor):
        other = _C.tensor(other, dtype=_C.result_type(input, other))
    dtype = _C.promote_types(input.dtype, other.dtype)
    if not dtype.is_floating_point:
        dtype = _C.get_default_dtype()
    x, y = input.to(dtype), other.to(dtype)
    result = _C.where((x == 0) & ~y.isnan(), _C.zeros((), dtype=dtype), x * _C.log1p(y))
    return _out(result, out)


def ndtr(input, *, out=None):
    """The standard normal CDF: (1 + erf(x / sqrt(2))) / 2."""
    x = _floating(input)
    return _out((1 + _C.erf(x * (1 / math.sqrt(2)))) * 0.5, out)


def entr(input, *, out=None):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0, NaN at NaN."""
    x = _floating(input)
    zero = _C.zeros((), dtype=x.dtype)
    result = _C.where(x > 0, -x * _C.log(x), _C.where(x == 0, zero, _C.where(x < 0, zero - math.inf, x)))
    return _out(result, out)


def multigammaln(input, p, *, out=None):
    """log of the multivariate gamma function of dimension p (torch.mvlgamma)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    input = _floating(input)  # no domain check, as torch: lgamma's poles give inf
    shifts = _C.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=input.dtype, device=input.device)
    result = _C.lgamma(input.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return _out(result, out)


def round(input, *, decimals=0, out=None):
    """torch.special.round passes decimals explicitly, which torch has no integer kernel for."""
    return _C.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    return _C.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _C.log_softmax(input, dim, dtype=dtype)


# Note [Python-level tensor arguments]: torch's TypeError for a non-tensor argument
from ._arg_check import guard as _guard  # noqa: E402
_guard(globals(), {
    "entr": ("special_entr", ("input",)), "multigammaln": ("special_multigammaln", ("input",)),
    "ndtr": ("special_ndtr", ("input",)),
})
