"""torch.autograd.graph: the node type, hooks on the tensors saved for backward (Note [Saved tensor hooks] in
csrc/autograd/saved_hooks.c): saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, and the SavedTensor
that grad_fn._raw_saved_<name> returns."""
import contextlib
import functools

from .. import _C

Node = _C._Node
__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "SavedTensor"]


class SavedTensor:
    """One tensor a node saved for its backward (grad_fn._raw_saved_<name>)."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node, slot):
        self._node, self._slot = node, slot

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor now with pack_hook; the backward will read unpack_hook(packed)."""
        self._node._slot_register_hooks(self._slot, pack_hook, unpack_hook)

    def unpack(self):
        return self._node._slot_value(self._slot)


class saved_tensors_hooks:
    """Within the context, every tensor saved for backward is stored as pack_hook(tensor) and read back as
    unpack_hook(packed); contexts nest, the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (optionally pinned) and moved back to their device when used."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            packed = _C.empty(tensor.size(), dtype=tensor.dtype, layout=tensor.layout,
                              pin_memory=(_C.cuda.is_available() and not tensor.is_sparse))
            packed.copy_(tensor)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within the context, registering saved tensor hooks, or saving a tensor while hooks are set, raises
    RuntimeError(error_message)."""
    previous = _C._saved_tensors_hooks_set_disabled(error_message)
    try:
        yield
    finally:
        _C._saved_tensors_hooks_set_disabled(previous)


def _pack_for_function(tensor):
    """autograd.Function.save_for_backward under hooks: (packed, unpack) or None (no hooks)."""
    return _C._saved_tensors_pack(tensor)


_unpack_for_function = _C._saved_tensors_unpack
