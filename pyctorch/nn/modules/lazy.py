"""LazyModuleMixin (torch.nn.modules.lazy): modules whose parameter shapes come from their first
input.

A lazy module starts with UninitializedParameter / UninitializedBuffer placeholders
(Note [Uninitialized tensors]). A forward pre-hook calls initialize_parameters(*args, **kwargs)
on the first call, which materializes the placeholders and runs reset_parameters() (drawing the
same numbers as the eager module built with those shapes would); the hook then removes itself and
the module becomes its cls_to_become (LazyLinear -> Linear). Loading a state_dict before the first
forward materializes the placeholders with the saved shapes instead.
"""
import itertools

import pyctorch as torch
from ...utils.hooks import RemovableHandle
from ..parameter import _MaterializedBuffer, is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin placed before the eager module class: `class LazyLinear(LazyModuleMixin, Linear)`."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def __getstate__(self):
        # the hook's handle holds weak references, which do not pickle: it is rebuilt on loading
        state = super().__getstate__()
        state.pop("_initialize_hook", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        for hook_id, hook in self._forward_pre_hooks.items():
            if getattr(hook, "__func__", None) is LazyModuleMixin._infer_parameters:
                handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
                handle.id = hook_id
                self._initialize_hook = handle

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # placeholders go into the state_dict as themselves (detaching would lose what they are)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # torch does this in a load_state_dict pre-hook: give placeholders the saved shapes first
        for name, tensor in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and tensor is not None and is_lazy(tensor) and not is_lazy(state_dict[key]):
                with torch.no_grad():
                    tensor.materialize(state_dict[key].shape)
        self._unwrap_materialized_buffers()
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the placeholders from the first forward's arguments (each lazy class defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _unwrap_materialized_buffers(self):
        """Materialized buffers become plain tensors sharing their storage (Note [Uninitialized tensors])."""
        for name, buf in self._buffers.items():
            if isinstance(buf, _MaterializedBuffer):
                self._buffers[name] = buf.detach().requires_grad_(buf.requires_grad)

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize from the first call's arguments, then become cls_to_become."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._unwrap_materialized_buffers()
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
