"""Note [Saved parameter views]: how FULL_SHARD frees gathered parameters between forward and
backward.

torch frees a gathered flat parameter by shrinking its storage to zero bytes and regrows it
(and all-gathers into it) before backward, so the tensors autograd saved still point at valid
memory. pyctorch storages cannot shrink, so instead, while an FSDP root runs its forward, a
saved-tensor pack hook recognises every saved tensor that lives in a gathered flat parameter
(by its storage's address) and keeps only (handle, offset, sizes, strides). Autograd then holds
no reference to the gathered memory, and dropping the handle's own reference frees it. The
unpack hook asks the handle for its gathered tensor, all-gathering it again if it was freed --
this is the re-gather before a unit's backward -- and rebuilds the same view over it. Tensors
that are not parameter views pass through unchanged.
"""
from pyctorch.autograd.graph import saved_tensors_hooks

# storage address of a gathered flat parameter -> its handle, while it is gathered
_gathered = {}


class _ParamView:
    __slots__ = ("handle", "offset", "size", "stride")

    def __init__(self, handle, offset, size, stride):
        self.handle, self.offset, self.size, self.stride = handle, offset, size, stride


def register(tensor, handle):
    _gathered[tensor.untyped_storage().data_ptr()] = handle


def unregister(tensor):
    _gathered.pop(tensor.untyped_storage().data_ptr(), None)


def _pack(t):
    if not _gathered:
        return t
    handle = _gathered.get(t.untyped_storage().data_ptr())
    if handle is None:
        return t
    return _ParamView(handle, t.storage_offset(), tuple(t.shape), t.stride())


def _unpack(packed):
    if type(packed) is not _ParamView:
        return packed
    full = packed.handle.gathered_for_backward()
    return full.as_strided(packed.size, packed.stride, packed.offset)


def saving_param_views():
    """The context the root FSDP forward runs in."""
    return saved_tensors_hooks(_pack, _unpack)
