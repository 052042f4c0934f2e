"""ExponentialFamily: families with density h(x) exp(<theta, t(x)> - A(theta)). Knowing the
natural parameters theta and the log normaliser A gives the entropy (and the KL divergence within
the family, see kl.py) from autograd's gradient of A, which is the mean of t(x)."""
import pyctorch as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of exponential families; subclasses give `_natural_params`, `_log_normalizer` and
    `_mean_carrier_measure` (E[log h(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = A(theta) - <theta, grad A(theta)> - E[log h(x)]
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = torch.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
