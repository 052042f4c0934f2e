"""torch.distributed.fsdp.wrap: which submodules become FSDP units of their own.

A policy is called as policy(module=, recurse=, nonwrapped_numel=): with recurse=True it says
whether to look inside the module's children, with recurse=False whether to wrap the module
itself, given the parameters not already taken by wrapped children. ModuleWrapPolicy is a
callable object with the same signature, so both kinds go through _recursive_wrap.
"""
from pyctorch import nn

__all__ = ["always_wrap_policy", "lambda_auto_wrap_policy", "transformer_auto_wrap_policy",
           "size_based_auto_wrap_policy", "ModuleWrapPolicy", "wrap", "enable_wrap"]


def always_wrap_policy(module, recurse, nonwrapped_numel=0, **kwargs):
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wraps every instance of the given layer classes (and the root)."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wraps a module once the parameters its wrapped children left behind reach min_num_params;
    never looks inside force_leaf_modules, never wraps exclude_wrap_modules (containers)."""
    leaves = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
    excluded = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES if exclude_wrap_modules is None
                else exclude_wrap_modules)
    if recurse:
        return not isinstance(module, tuple(leaves))
    return nonwrapped_numel >= min_num_params and not isinstance(module, tuple(excluded))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


class ModuleWrapPolicy:
    """Wraps every instance of the given module classes."""

    def __init__(self, module_classes):
        self._module_classes = frozenset(module_classes)

    def __call__(self, module, recurse, nonwrapped_numel=0, **kwargs):
        return transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, self._module_classes)

    def __repr__(self):
        return f"{type(self).__name__}({set(self._module_classes)})"


def _managed_numel(module, ignored_ids):
    return sum(p.numel() for p in module.parameters() if id(p) not in ignored_ids)


def _recursive_wrap(module, policy, wrap_fn, is_wrapped, ignored_modules, ignored_ids, only_wrap_children):
    """(module or its wrapper, numel it accounts for): children first, so an outer unit holds only
    what its wrapped children left; the root (only_wrap_children) is wrapped by its caller."""
    if is_wrapped(module):
        return module, 0
    numel = _managed_numel(module, ignored_ids)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    taken = 0
    for name, child in list(module.named_children()):
        if child in ignored_modules:
            continue
        new_child, n = _recursive_wrap(child, policy, wrap_fn, is_wrapped, ignored_modules, ignored_ids, False)
        if new_child is not child:
            setattr(module, name, new_child)
        taken += n
    if not only_wrap_children and policy(module=module, recurse=False, nonwrapped_numel=numel - taken):
        return wrap_fn(module), numel
    return module, taken


# -- the manual-wrapping API: wrap() inside enable_wrap(wrapper_cls=FSDP, **kwargs) ----------------
_wrap_context = []


class enable_wrap:
    def __init__(self, *, wrapper_cls, **wrapper_kwargs):
        self.entry = (wrapper_cls, wrapper_kwargs)

    def __enter__(self):
        _wrap_context.append(self.entry)

    def __exit__(self, *exc):
        _wrap_context.pop()


def wrap(module, **wrap_overrides):
    if not _wrap_context:
        return module
    cls, kwargs = _wrap_context[-1]
    return cls(module, **{**kwargs, **wrap_overrides})

