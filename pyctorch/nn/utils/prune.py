"""Pruning of module parameters (torch.nn.utils.prune).

Pruning `name` of a module moves the parameter to `name + "_orig"`, stores a 0/1 buffer `name + "_mask"`, and
sets the plain attribute `name` to `mask * orig`, recomputed before every forward by the pruning method, which is
registered as the module's forward pre hook. Pruning the same parameter again combines the methods in a
PruningContainer whose new mask only prunes what the previous masks kept. `remove` makes the pruning permanent.
The random methods draw from the global generator as torch's do (torch.rand_like / torch.rand), so a seed gives
torch's masks.
"""
from abc import ABC, abstractmethod
from collections.abc import Iterable
import numbers

import pyctorch as torch

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


def _pruning_hooks(module):
    """(hook id, method) for the pruning methods among the module's forward pre hooks."""
    return [(k, h) for k, h in module._forward_pre_hooks.items() if isinstance(h, BasePruningMethod)]


class BasePruningMethod(ABC):
    """A way of computing a mask; subclasses define compute_mask and PRUNING_TYPE ('unstructured', 'structured'
    (with a `dim`) or 'global'). `_tensor_name` is set when the method is applied to a parameter."""

    def __call__(self, module, inputs):
        """The forward pre hook: refresh the pruned attribute from the original parameter and the mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for tensor t, starting from default_mask (what earlier pruning kept)."""

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `name` of `module` with cls(*args, **kwargs), combining with an earlier pruning of it."""
        existing = _pruning_hooks(module)
        previous = [(k, h) for k, h in existing if h._tensor_name == name]
        if len(previous) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 "Use a PruningContainer.")
        for k, _ in previous:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if previous:
            old = previous[0][1]
            if isinstance(old, PruningContainer):
                old.add_pruning_method(method)
                method = old
            else:
                container = PruningContainer(old)
                container.add_pruning_method(method)
                method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = torch.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=torch.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # put the parameter back as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with this method's mask applied (nothing is registered)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else torch.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: `name` becomes a parameter again holding the pruned values."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one parameter; its mask is the last method's applied to what the
    earlier masks kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if not isinstance(args, Iterable):
            self._tensor_name = args._tensor_name
            self.add_pruning_method(args)
        elif len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":  # prune among the entries still kept
            where = default_mask == 1
        elif kind == "structured":  # prune among the channels not already entirely zero
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            kept = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            where = tuple(kept if d == dim else slice(None) for d in range(n_dims))
        elif kind == "global":
            where = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _UnstructuredByScore(BasePruningMethod):
    """Prunes `amount` (a fraction or a count) of the entries, those the score ranks first."""

    PRUNING_TYPE = "unstructured"
    _prune_largest = True  # prune the entries with the largest scores (else the smallest)

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def _scores(self, t):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        size = t.nelement()
        k = _count(self.amount, size)
        _check_amount_fits(k, size)
        mask = default_mask.clone(memory_format=torch.contiguous_format)
        if k != 0:  # (no scores drawn for nothing to prune: the random stream stays torch's)
            order = torch.topk(self._scores(t).view(-1), k=k, largest=self._prune_largest)
            mask.view(-1)[order.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class RandomUnstructured(_UnstructuredByScore):
    """Prunes `amount` (a fraction or a count) of the entries, chosen at random."""

    def _scores(self, t):
        return torch.rand_like(t)


class L1Unstructured(_UnstructuredByScore):
    """Prunes `amount` of the entries with the smallest absolute values."""

    _prune_largest = False

    def _scores(self, t):
        return torch.abs(t)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super(_UnstructuredByScore, cls).apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, keep):
    """Ones on the channels `keep` (a bool mask or indices) of dimension dim, zeros elsewhere."""
    mask = torch.zeros_like(t)
    mask[tuple(keep if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes `amount` of the channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _count(self.amount, size)
        _check_amount_fits(k, size)
        if k == 0:
            return default_mask
        drawn = torch.rand(size)
        threshold = torch.kthvalue(drawn, k=k).values
        mask = _channel_mask(t, self.dim, drawn > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes `amount` of the channels along `dim` with the smallest L`n` norms."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _count(self.amount, size)
        _check_amount_fits(k, size)
        dims = list(range(t.dim()))
        del dims[self.dim]
        norm = torch.norm(t, p=self.n, dim=dims)
        kept = torch.topk(norm, k=size - k, largest=True)
        if k == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError()
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Prune nothing of `name` (the reparametrization without a pruning); returns the module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs together: the unstructured method sees all of them as one vector."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    from .convert_parameters import parameters_to_vector
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", torch.ones_like(getattr(m, n)))
                                         for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[start:start + p.numel()].view_as(p))
        start += p.numel()


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of `name` permanent and drop its hook, mask and `_orig` parameter; returns the module."""
    for k, hook in _pruning_hooks(module):
        if hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether the module or one of its submodules has a pruning hook."""
    return any(_pruning_hooks(m) for _, m in module.named_modules())


# ---- argument checks (torch's messages) ----
def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _check_amount_fits(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")


def _check_structured(t):
    if len(t.shape) <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {len(t.shape)} dims")


def _count(amount, size):
    """The number of units to prune: an int amount is a count, a float a fraction (rounded as Python rounds)."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
