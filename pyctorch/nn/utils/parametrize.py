"""torch.nn.utils.parametrize: express a module's parameter or buffer as a function of other
tensors.

register_parametrization(module, "weight", P) moves module.weight to
module.parametrizations.weight.original (or original0, original1, ... when P.right_inverse returns
several tensors) and turns `weight` into a property of a per-module subclass
(Parametrized<Class>) that evaluates P(original) on every read and P.right_inverse(value) on every
write. The state_dict keys therefore match torch's (`parametrizations.weight.original`, buffers of
P under `parametrizations.weight.0.`).
"""
import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

import pyctorch as torch
from pyctorch.__future__ import get_swap_module_params_on_conversion  # noqa: F401 (torch's module namespace)
from pyctorch._library.opaque_object import is_opaque_reference_type  # noqa: F401
from pyctorch._opaque_base import OpaqueBase  # noqa: F401
from pyctorch.nn.modules.container import Module, ModuleDict, ModuleList  # noqa: F401
from pyctorch.nn.parameter import Parameter
from pyctorch.utils._python_dispatch import is_traceable_wrapper_subclass  # noqa: F401

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations", "transfer_parametrizations_and_params"]

# Note [Parametrization cache]: inside `with cached():` each parametrized tensor is computed once
# per (module, name) and reused; the cache is dropped when the outermost block exits.
_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Compute each parametrized tensor at most once inside the block (Note [Parametrization cache])."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, tensor):
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_in_place(dest, src):
    """Point `dest` at `src`'s data, keeping dest's identity (optimizers and hooks hold it). torch swaps the two
    tensors instead under the swap switch of torch.__future__ or for traceable wrapper subclasses; pyctorch has no
    swap_tensors, and set_ gives dest the same observable contents."""
    dest.set_(src)


def _check_same(what, got, expected, unsafe_hint):
    if got != expected:
        raise ValueError(f"{unsafe_hint}\n{what[0]}: {expected}\n{what[1]}: {got}")


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding the unparametrized tensor(s) as
    `original` (or `original0`, `original1`, ...); calling it evaluates the chain."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with torch.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # no right inverse: the original is stored as it is
        if not isinstance(new, torch.Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, torch.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with torch.no_grad():
                _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, original_i in enumerate(new):
                if not isinstance(original_i, torch.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(original_i).__name__}.")
                if isinstance(original, Parameter):
                    original_i = Parameter(original_i, original.requires_grad)
                original_i.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", original_i)
        if not self.unsafe:
            value = self()
            if not isinstance(value, torch.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            hint = "Registering a parametrization may not change the {} of the tensor, unless `unsafe` flag is enabled."
            _check_same(("unparametrized dtype", "parametrized dtype"), value.dtype, original_dtype,
                        hint.format("dtype"))
            _check_same(("unparametrized shape", "parametrized shape"), value.shape, original_shape,
                        hint.format("shape"))

    def right_inverse(self, value):
        """Store `value` as the parametrized tensor: run the chain's right inverses backwards and set
        the originals in place."""
        with torch.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, torch.Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, torch.Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or reference-type opaques. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                     f"`original{i}` has dtype {original_i.dtype}")
                _set_in_place(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _deepcopy_through_dict(self, memo):
    """deepcopy for parametrized modules, whose __getstate__ refuses pickling: copy the __dict__."""
    existing = memo.get(id(self))
    if existing is not None:
        return existing
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module):
    """Give `module` a class of its own (a subclass of its class), so properties added for its
    parametrized tensors leave every other instance alone."""
    cls = module.__class__
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_through_dict
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_appended(module, tensor_name, parametrization):
    """The checks made when a further parametrization is stacked on a parametrized tensor (skipped
    with unsafe=True): it must keep the tensor's dtype and shape, and so must its right_inverse."""
    current = getattr(module, tensor_name)
    new = parametrization(current)
    if not isinstance(new, torch.Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(new).__name__}.")
    hint = ("Registering a parametrization may not change the {0} of the tensor, unless the `unsafe` flag is "
            "enabled.\nmodule.{1}.{0}: {2}\nparametrization(module.{1}).{0}: {3}")
    if new.dtype != current.dtype:
        raise ValueError(hint.format("dtype", tensor_name, current.dtype, new.dtype))
    if new.shape != current.shape:
        raise ValueError(hint.format("shape", tensor_name, current.shape, new.shape))
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        back = parametrization.right_inverse(new)
    except NotImplementedError:
        return
    if not isinstance(back, torch.Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(back).__name__}")
    hint = ("The tensor returned by parametrization.right_inverse must have the same {0} as module.{1}, unless "
            "the `unsafe` flag is enabled.\nmodule.{1}.{0}: {2}\nreturned {0}: {3}")
    if back.dtype != current.dtype:
        raise ValueError(hint.format("dtype", tensor_name, current.dtype, back.dtype))
    if back.shape != current.shape:
        raise ValueError(hint.format("shape", tensor_name, current.shape, back.shape))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make module.<tensor_name> the output of `parametrization` applied to the stored original
    (a second registration on the same name chains after the first). Returns the module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                         f"with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether `module` has any parametrization (or one on `tensor_name`)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of `tensor_name`: it becomes a plain parameter (or buffer) again,
    holding the current parametrized value (leave_parametrized=True) or the stored original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with torch.no_grad():
                _set_in_place(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                         "in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register on `to_module` the parametrizations of `from_module` (all, or those of one tensor)
    and share their original tensors. Returns to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in from_module.parametrizations[name]:
            register_parametrization(to_module, name, parametrization)
        source, target = from_module.parametrizations[name], to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
