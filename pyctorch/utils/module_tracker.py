"""torch.utils.module_tracker.ModuleTracker: which modules are running (forward or backward) right now.

`parents` holds "Global" and the fully qualified names of the modules whose forward is running (the root module
by its class name, children as "Root.child"). For the backward, a module is entered when the gradient of one of
its outputs arrives and left when the gradient of one of its inputs is computed, through tensor hooks (torch
uses multi-gradient hooks for the same), and everything but "Global" is left when the backward ends (an engine
callback). A module whose inputs need no gradient (the first layer of a model) so stays entered until the end of
that backward, as with torch.
"""
import weakref

from .. import Tensor
from ..autograd import Variable
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

__all__ = ["ModuleTracker"]


def _grad_tensors(value):
    if isinstance(value, Tensor):
        if value.requires_grad:
            yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _grad_tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _grad_tensors(v)


class ModuleTracker:
    """Context manager: `parents` (the running modules' names) and `is_bw` while it is active."""

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._in_backward = False
        self._hooks = []

    @property
    def is_bw(self):
        """True while a backward pass runs (after a module's backward was entered)."""
        return self._in_backward

    def _maybe_set_engine_callback(self):
        if self._has_callback:
            return

        def callback():
            self.parents = {"Global"}
            self._has_callback = False
            self._in_backward = False
        Variable._execution_engine.queue_callback(callback)
        self._has_callback = True

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _once_per_backward(self, tensors, fn):
        """fn() when the first of tensors gets its gradient (once per backward pass)."""
        state = {"done": False}

        def hook(grad):
            if not state["done"]:
                state["done"] = True
                self._in_backward = True
                self._maybe_set_engine_callback()
                fn()
            return None
        for t in tensors:
            self._hooks.append(t.register_hook(hook))

    def _fw_pre_hook(self, mod, args):
        name = self._get_mod_name(mod)
        self._in_backward = False
        self.parents.add(name)
        inputs = list(_grad_tensors(args))
        if inputs:
            self._once_per_backward(inputs, lambda: self.parents.discard(name))

    def _fw_post_hook(self, mod, args, output):
        name = self._get_mod_name(mod)
        self.parents.discard(name)
        outputs = list(_grad_tensors(output))
        if outputs:
            self._once_per_backward(outputs, lambda: self.parents.add(name))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
