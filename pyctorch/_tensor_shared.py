"""Tensor methods about where a CPU tensor's memory lives: shared memory (share_memory_,
is_shared; Note [Shared storages] in csrc/aten/storage_shared.c) and pinned memory
(pin_memory, is_pinned: only with an accelerator, as in torch). pyctorch/_tensor.py attaches them."""


def share_memory_(self):
    """Moves the storage to shared memory (a no-op if it is already there); returns self."""
    self.untyped_storage().share_memory_()
    return self


def is_shared(self):
    """True when the storage is in shared memory."""
    return self.untyped_storage().is_shared()


def _accelerator():
    """pyctorch.cuda when it exists and has a device, else None."""
    import importlib
    try:
        cuda = importlib.import_module("pyctorch.cuda")
    except ImportError:
        return None
    try:
        return cuda if cuda.is_available() else None
    except Exception:
        return None


def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked memory (needs an accelerator, as in torch)."""
    cuda = _accelerator()
    if cuda is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    pin = getattr(cuda, "_pin_memory", None)
    if pin is None:
        raise RuntimeError("pin_memory: this build's accelerator backend has no pinned-memory allocator")
    return pin(self)


def is_pinned(self, device=None):
    """True when the memory is page-locked; always False without an accelerator."""
    cuda = _accelerator()
    fn = getattr(cuda, "_is_pinned", None) if cuda is not None else None
    return bool(fn(self)) if fn is not None else False


def record_stream(self, stream):
    """Marks this CUDA tensor's memory as used by `stream` (torch's recordStream): the caching allocator does not
    reuse it before the work queued there until now has completed."""
    from . import _C
    _C._cuda_record_stream(self, stream.stream_id)


TENSOR_METHODS = {
    "record_stream": record_stream,
    "share_memory_": share_memory_,
    "is_shared": is_shared,
    "pin_memory": pin_memory,
    "is_pinned": is_pinned,
}
