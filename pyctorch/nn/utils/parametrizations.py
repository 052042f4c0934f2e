"""torch.nn.utils.parametrizations: orthogonal, spectral_norm and weight_norm written as
parametrizations (nn.utils.parametrize), with torch's state_dict keys:
parametrizations.<name>.original (orthogonal, spectral_norm; plus the spectral norm's `0._u` and
`0._v` buffers) and parametrizations.<name>.original0 / original1 (weight_norm's g and v)."""
from enum import Enum, auto

import pyctorch as torch
import pyctorch.nn.functional as F
from pyctorch.nn.modules import Module

from . import parametrize
from .spectral_norm import _default_dim
from ._composites import _weight_norm, geqrf, householder_product, make_orthogonal, matrix_exp, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q):
    k = q.shape[-1]
    eps = 10.0 * q.shape[-2] * torch.finfo(q.dtype).eps
    return torch.allclose(q.mH @ q, torch.eye(k, dtype=q.dtype), atol=eps)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps an unconstrained matrix to an orthogonal one (semi-orthogonal when not square; batches
    too). With use_trivialization the result is `base @ map(X)`, base being the last orthogonal
    matrix assigned, so assigning a value stores it in `base` and resets X to the map's preimage
    of the identity."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == _OrthMaps.householder:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # the diagonal's integer part (+-1 after right_inverse) picks each column's sign
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:
                X = torch.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric: its exponential (or Cayley transform) is orthogonal
            if self.orthogonal_map == _OrthMaps.cayley:
                raise NotImplementedError("pyctorch does not implement torch.linalg.solve yet, which the 'cayley' "
                                          "orthogonal map needs; use 'matrix_exp' or 'householder'")
            Q = matrix_exp(A)
            if n != k:
                Q = Q[..., :k]
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with torch.no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transposed = n < k
            if transposed:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # the Householder vectors of Q's QR; the diagonal keeps only the sign that
                # forward's integer part multiplies each column by
                A, tau = geqrf(Q)
                diagonal = A.diagonal(dim1=-2, dim2=-1)
                diagonal.copy_(torch.where(tau == 0.0, -diagonal.sign(), diagonal.sign()))
                return A.mT if transposed else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else make_orthogonal(Q)
            else:
                # complete the columns to a square matrix with Gaussian ones (torch's draw), then orthogonalise
                N = torch.randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype)
                Q = make_orthogonal(torch.cat([Q, N], dim=-1))
            self.base = Q
            neg_id = torch.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain module.<name> to be an orthogonal (or semi-orthogonal) matrix. orthogonal_map:
    "matrix_exp" (default for square), "householder" (default otherwise); "cayley" needs
    linalg.solve, which pyctorch lacks, and raises NotImplementedError when evaluated."""
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """weight = g * v / ||v||, the norm taken over every dimension but `dim` (all of them for None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def _add_load_state_dict_pre_hook(module, hook):
    """Run hook(state_dict, prefix) before `module` loads its state. pyctorch's Module has no
    load_state_dict pre-hooks yet, so the hook goes into the module's own Parametrized class."""
    cls = module.__class__
    previous = cls._load_from_state_dict

    def _load_from_state_dict(self, state_dict, prefix, *args):
        hook(state_dict, prefix)
        previous(self, state_dict, prefix, *args)

    cls._load_from_state_dict = _load_from_state_dict


def weight_norm(module, name="weight", dim=0):
    """Reparametrize module.<name> as g * v / ||v|| (state keys parametrizations.<name>.original0
    for g, original1 for v). A state_dict saved with the old nn.utils.weight_norm (<name>_g,
    <name>_v) loads too: its keys are renamed in the dict given to load_state_dict."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def rename_old_keys(state_dict, prefix):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    _add_load_state_dict_pre_hook(module, rename_old_keys)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma estimated by power iteration on the weight reshaped to a matrix (dim
    first); u and v persist as buffers `_u`, `_v` and advance in training mode only. 1-D weights are
    simply normalised."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a good estimate

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with torch.no_grad():
            for _ in range(n_power_iterations):
                # in place, as torch's out=: the buffers keep their identity
                self._u.copy_(F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(torch.mv(weight_mat.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones: the graph must not see later in-place updates of the buffers
        u = self._u.clone(memory_format=torch.contiguous_format)
        v = self._v.clone(memory_format=torch.contiguous_format)
        sigma = torch.vdot(u, torch.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide module.<name> by its spectral norm (power iteration). dim defaults to 1 for
    transposed convolutions (their output channels), 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
