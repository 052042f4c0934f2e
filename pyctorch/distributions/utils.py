"""Helpers shared by the distribution families: broadcasting of parameters, conversions
between probabilities and logits, lazily computed attributes, packing of triangular matrices."""
from functools import update_wrapper
from numbers import Number

import pyctorch as torch

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values):
    """Broadcast tensors and Python numbers together. Numbers become tensors with the dtype and
    device of the first tensor argument (the default dtype when every argument is a number)."""
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        options = dict(dtype=torch.get_default_dtype())
        for v in values:
            if isinstance(v, torch.Tensor):
                options = dict(dtype=v.dtype, device=v.device)
                break
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    # torch fills an empty tensor with normal_(): the same generator calls, so the same numbers.
    return torch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum the `dim` rightmost dimensions of `value` away."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Log-odds (binary) or unnormalised log-probabilities (last dim) to probabilities."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Keep probabilities inside [eps, 1 - eps] for their dtype's machine epsilon."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to log-odds (binary) or to log-probabilities (categorical)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


class lazy_property:
    """A descriptor computing an attribute on first access and then storing it on the instance,
    so later reads are plain attribute reads. Validation skips parameters still unset."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():  # a lazily derived parameter keeps its graph to the given one
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class attribute reads as: both a lazy_property (for validation) and a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal `diag`) of square matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows = torch.arange(n, device=mat.device)
    mask = rows < rows.reshape(-1, 1) + (diag + 1)
    return mat[..., mask]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of tril_matrix_to_vec: a vector of length n(n+1)/2 (shifted by diag) to a matrix."""
    # the side n is the positive root of n^2 + (1 + 2 diag) n - (2 length + |diag| (diag + 1)) = 0
    b = 1 + 2 * diag
    n_real = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n_real) - n_real > torch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n_real)
    rows = torch.arange(n, device=vec.device)
    mask = rows < rows.reshape(-1, 1) + (diag + 1)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., mask] = vec
    return mat


def _copy_expanded(src, new, names, batch_shape):
    """Set each parameter in `names` that `src` holds (as an instance attribute: a lazy one not yet
    computed stays lazy) onto `new`, expanded to `batch_shape` plus its own event dims."""
    for name, event_shape in names.items():
        if name in src.__dict__:
            setattr(new, name, src.__dict__[name].expand(torch.Size(batch_shape) + event_shape))


def _finish_expand(cls, src, new, batch_shape, event_shape=None):
    """The tail of every expand(): the base init with validation off, then the source's flag."""
    if event_shape is None:
        event_shape = src._event_shape
    super(cls, new).__init__(torch.Size(batch_shape), event_shape, validate_args=False)
    new._validate_args = src._validate_args
    return new
