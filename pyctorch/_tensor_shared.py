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


_TYPESTRS = {"float16": "<f2", "float32": "<f4", "float64": "<f8", "uint8": "|u1", "int8": "|i1", "int16": "<i2",
             "int32": "<i4", "int64": "<i8", "bool": "|b1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8"}


def _cuda_array_interface(self):
    """Numba's and CuPy's CUDA Array Interface (version 2) of a CUDA tensor: its device pointer, shape and byte strides
    (None when contiguous), shared, not copied."""
    if not self.is_cuda:
        raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} If CUDA data "
                             "is required use tensor.cuda() to copy tensor to device memory.")
    if self.requires_grad:
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients aren't "
                           "required, use var.detach() to get Variable that doesn't require grad.")
    name = str(self.dtype)[len("torch."):]
    if name not in _TYPESTRS:
        raise TypeError(f"dtype {self.dtype} is not supported by __cuda_array_interface__")
    item = self.element_size()
    strides = None if self.is_contiguous() else tuple(s * item for s in self.stride())
    return {"typestr": _TYPESTRS[name], "shape": tuple(self.shape), "strides": strides,
            "data": (self.data_ptr() if self.numel() > 0 else 0, False), "version": 2}


TENSOR_METHODS = {
    "record_stream": record_stream,
    "__cuda_array_interface__": property(_cuda_array_interface),
    "share_memory_": share_memory_,
    "is_shared": is_shared,
    "pin_memory": pin_memory,
    "is_pinned": is_pinned,
}
