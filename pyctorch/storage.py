"""torch.storage: TypedStorage (an UntypedStorage read as elements of one dtype, what the deprecated
Tensor.storage() returns) and the legacy per-dtype classes (torch.FloatStorage, ...).

A TypedStorage keeps the UntypedStorage it wraps (shared with every tensor on it) and reads and writes its elements
through a one-dimensional tensor over the whole storage, so indexing, fill_, copy_ and tolist are the tensor ops'.
"""
import warnings

from . import _C

__all__ = ["TypedStorage", "UntypedStorage"]


def _bytes_view(storage):
    """A 1-d uint8 tensor over all of a storage's bytes."""
    return _C.empty(0, dtype=_C.uint8, device=storage.device).set_(storage, 0, (storage.nbytes(),), (1,))


class _DtypeConversions:
    """storage.float(), .long(), ...: the elements (the bytes of an UntypedStorage) converted into a new
    TypedStorage of that dtype; the class gives _elements(), a 1-d tensor over them."""
    __slots__ = ()

    def _to_dtype(self, dtype):
        return TypedStorage(wrap_storage=self._elements().to(dtype).untyped_storage(), dtype=dtype, _internal=True)

    def double(self): return self._to_dtype(_C.float64)  # noqa: E704
    def float(self): return self._to_dtype(_C.float32)  # noqa: E704
    def half(self): return self._to_dtype(_C.float16)  # noqa: E704
    def bfloat16(self): return self._to_dtype(_C.bfloat16)  # noqa: E704
    def long(self): return self._to_dtype(_C.int64)  # noqa: E704
    def int(self): return self._to_dtype(_C.int32)  # noqa: E704
    def short(self): return self._to_dtype(_C.int16)  # noqa: E704
    def char(self): return self._to_dtype(_C.int8)  # noqa: E704
    def byte(self): return self._to_dtype(_C.uint8)  # noqa: E704
    def bool(self): return self._to_dtype(_C.bool)  # noqa: E704
    def complex_float(self): return self._to_dtype(_C.complex64)  # noqa: E704
    def complex_double(self): return self._to_dtype(_C.complex128)  # noqa: E704


class UntypedStorage(_C.StorageBase, _DtypeConversions):
    """torch.UntypedStorage: a block of bytes that tensors view (the C type holds the block; the methods torch
    writes in Python are here). Every storage pyctorch makes is of this class (_C._set_storage_class).

    Indexing reads and writes bytes (a value is stored modulo 256, as torch); a slice with step 1 is a storage
    sharing the bytes (CPU storages; a device storage's slice is refused). `from_file` maps a file: shared=True
    writes go to the file (grown to nbytes when shorter), shared=False gives a private copy-on-write mapping."""
    __slots__ = ()
    is_sparse = False
    is_sparse_csr = False

    # ---- bytes ----
    def _index(self, idx):
        n = self.nbytes()
        if not isinstance(idx, int) or isinstance(idx, bool):
            if hasattr(idx, "__index__"):
                idx = idx.__index__()
            else:
                raise TypeError(f"can't index a torch.UntypedStorage with {type(idx).__name__}")
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n if n else idx

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            stop = max(stop, start)
            if self.device.type != "cpu":
                raise NotImplementedError("pyctorch slices CPU storages only (the slice shares the bytes through "
                                          "the buffer protocol)")
            if stop == start:
                return UntypedStorage(0)
            return _C.frombuffer(memoryview(self)[start:stop], dtype=_C.uint8).untyped_storage()
        return int(_bytes_view(self)[self._index(idx)].item())

    def __setitem__(self, idx, value):
        view = _bytes_view(self)
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            view[start:max(stop, start)] = int(value) % 256
            return
        if not -self.nbytes() <= (idx if isinstance(idx, int) else 0) < self.nbytes():
            raise RuntimeError("out of bounds")
        view[self._index(idx)] = int(value) % 256

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return _bytes_view(self).tolist()

    def fill_(self, value):
        _bytes_view(self).fill_(int(value) % 256)
        return self

    def copy_(self, source, non_blocking=None):
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was {source.nbytes()} "
                               "bytes")
        _bytes_view(self).copy_(_bytes_view(source))
        return self

    def clone(self):
        return _bytes_view(self).clone().untyped_storage()

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        key = id(self)
        if key not in memo:
            memo[key] = self.clone()
        return memo[key]

    def __reduce__(self):
        return _rebuild_untyped_storage, (bytes(memoryview(self.cpu())), str(self.device))

    def new(self):
        return UntypedStorage(0, device=self.device)

    def untyped(self):
        return self

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        raise NotImplementedError("UntypedStorage.type(dtype): use TypedStorage(wrap_storage=..., dtype=...)")

    def get_device(self):
        return self.device.index if self.device.type != "cpu" else -1

    def is_pinned(self, device="cuda"):
        return False

    def pin_memory(self, device="cuda"):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def to(self, *, device=None, non_blocking=False):
        if device is None or _C.device(device).type == "cpu":
            return self.cpu()
        return self.cuda(_C.device(device).index, non_blocking=non_blocking)

    def byteswap(self, dtype):
        size = _C.empty(0, dtype=dtype).element_size()
        if self.nbytes() % size:
            raise RuntimeError(f"the length of data is not a multiple of {size}")
        if size > 1:
            rows = _bytes_view(self).view(-1, size)
            rows.copy_(rows.flip(1))
        return None

    def _elements(self):
        return _bytes_view(self)

    # ---- made from other things ----
    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        """A copy of a buffer's bytes (from offset; count elements of dtype, all when -1)."""
        item = _C.empty(0, dtype=dtype).element_size() if dtype is not None else 1
        data = memoryview(buffer).cast("B")[offset:]
        if count >= 0:
            data = data[:count * item]
        return _C.frombuffer(bytearray(data), dtype=_C.uint8).clone().untyped_storage() if len(data) else cls(0)

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """nbytes of a file, memory-mapped (see the class docstring)."""
        import mmap
        import os
        name = os.fsdecode(filename)
        nbytes = int(nbytes)
        try:
            fd = os.open(name, (os.O_RDWR | os.O_CREAT) if shared else os.O_RDONLY, 0o600)
        except OSError as e:
            mode = "read-write" if shared else "read-only"
            raise RuntimeError(f"unable to open file <{name}> in {mode} mode: {e.strerror} ({e.errno})") from None
        try:
            size = os.fstat(fd).st_size
            if size < nbytes:
                if not shared:
                    raise RuntimeError(f"file <{name}> size <{size}> is smaller than the required mapping size "
                                       f"<{nbytes}>")
                os.ftruncate(fd, nbytes)
            if nbytes == 0:
                return cls(0)
            mapped = mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE if shared else mmap.ACCESS_COPY)
        finally:
            os.close(fd)
        return _C.frombuffer(mapped, dtype=_C.uint8, count=nbytes).untyped_storage()

    def __repr__(self):
        values = "\n".join(f" {v}" for v in self.tolist()) if self.device.type != "meta" else " ..."
        head = values + "\n" if self.nbytes() else ""
        return f"{head}[torch.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]"


def _rebuild_untyped_storage(data, device):
    storage = _C.frombuffer(bytearray(data), dtype=_C.uint8).clone().untyped_storage() if data \
        else UntypedStorage(0)
    return storage if device == "cpu" else storage.to(device=device)


_C._set_storage_class(UntypedStorage)
_C.UntypedStorage = UntypedStorage  # storages made from Python (_C.UntypedStorage(n)) are this class too


def _warn_typed_storage_removal(stacklevel=3):
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                  UserWarning, stacklevel=stacklevel)


class TypedStorage(_DtypeConversions):
    """A storage of `size()` elements of `dtype` on `device`. TypedStorage(size | sequence, dtype=, device=) makes
    one; TypedStorage(wrap_storage=untyped, dtype=) reads an existing UntypedStorage."""
    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        self.dtype = dtype if dtype is not None else _C.get_default_dtype()
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage.__init__ received an invalid combination of arguments: "
                                   "wrap_storage takes no positional arguments and no device")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a UntypedStorage for wrap_storage, but got {type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            return
        if len(args) > 1:
            raise RuntimeError("TypedStorage.__init__ received an invalid combination of arguments: expected no "
                               "arguments, (int size) or (Sequence data)")
        data = args[0] if args else 0
        if isinstance(data, int):
            made = _C.empty(data, dtype=self.dtype, device=device)
        else:
            made = _C.tensor(list(data), dtype=self.dtype, device=device)
        self._untyped_storage = made.untyped_storage()

    # ---- the elements, through a 1-d tensor over the whole storage ----
    def _elements(self):
        n = self._untyped_storage.nbytes() // self.element_size()
        view = _C.empty(0, dtype=self.dtype, device=self._untyped_storage.device)
        return view.set_(self._untyped_storage, 0, (n,), (1,))

    def size(self):
        return self._untyped_storage.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def element_size(self):
        return _C.empty(0, dtype=self.dtype).element_size()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        return self._untyped_storage

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._elements()[idx].item()

    def __setitem__(self, idx, value):
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        self._elements()[idx] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._elements().tolist()

    def fill_(self, value):
        self._elements().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        source = source._elements() if isinstance(source, TypedStorage) else source
        self._elements().copy_(source)
        return self

    def _new(self, untyped):
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype, _internal=True)

    def clone(self):
        return self._new(self._elements().clone().untyped_storage())

    def cpu(self):
        return self if self.device.type == "cpu" else self._new(self._elements().cpu().untyped_storage())

    def to(self, *, device=None, non_blocking=False):
        return self._new(self._elements().to(device).untyped_storage())


    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"torch.{_LEGACY_NAMES[self.dtype]}" if self.dtype in _LEGACY_NAMES else f"torch.{self.dtype}"
        target = dtype.dtype if isinstance(dtype, type) and hasattr(dtype, "dtype") else dtype
        return self._to_dtype(target)

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def is_pinned(self, device="cuda"):
        return False

    def pickle_storage_type(self):
        return _LEGACY_NAMES.get(self.dtype, str(self.dtype))

    def __reduce__(self):
        return _rebuild_typed_storage, (self.tolist(), self.dtype, str(self.device))

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"[{type(self).__module__.replace('pyctorch', 'torch')}.TypedStorage(dtype={self.dtype}, " \
               f"device={self.device}) of size {self.size()}]"
        return body + "\n" + head if body else head

    __str__ = __repr__

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())


def _rebuild_typed_storage(values, dtype, device):
    return TypedStorage(values, dtype=dtype, device=device, _internal=True)


class _LegacyStorageMeta(type):
    """isinstance(s, FloatStorage) is True for a CPU TypedStorage of float32, as in torch."""

    def __instancecheck__(cls, instance):
        if type(instance) is cls:
            return True
        return isinstance(instance, TypedStorage) and instance.dtype == cls.dtype and instance.device.type == "cpu"


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """torch.<Type>Storage(size | sequence | wrap_storage=): a TypedStorage of the class's dtype."""
    dtype = None

    def __new__(cls, *args, wrap_storage=None, **kwargs):
        if kwargs:
            raise RuntimeError(f"{cls}.__new__ received an invalid combination of arguments. Expected one of:\n * no "
                               "arguments\n * (int size)\n * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n"
                               f"Keyword argument '{next(iter(kwargs))}' cannot be specified")
        _warn_typed_storage_removal()
        if wrap_storage is not None:
            return TypedStorage(wrap_storage=wrap_storage, dtype=cls.dtype, _internal=True)
        return TypedStorage(*args, dtype=cls.dtype, _internal=True)


_LEGACY_NAMES = {_C.float64: "DoubleStorage", _C.float32: "FloatStorage", _C.float16: "HalfStorage",
                 _C.bfloat16: "BFloat16Storage", _C.int64: "LongStorage", _C.int32: "IntStorage",
                 _C.int16: "ShortStorage", _C.int8: "CharStorage", _C.uint8: "ByteStorage", _C.bool: "BoolStorage",
                 _C.complex128: "ComplexDoubleStorage", _C.complex64: "ComplexFloatStorage"}
LEGACY_CLASSES = {name: _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "torch"})
                  for dtype, name in _LEGACY_NAMES.items()}


def storage_of(tensor):
    """Tensor.storage(): the tensor's storage as a TypedStorage of its dtype (deprecated in torch, with its
    warning)."""
    _warn_typed_storage_removal()
    return TypedStorage(wrap_storage=tensor.untyped_storage(), dtype=tensor.dtype, _internal=True)


def storage_type_of(tensor):
    """Tensor.storage_type(): the legacy storage class of the tensor's dtype."""
    return LEGACY_CLASSES[_LEGACY_NAMES[tensor.dtype]]


def is_storage(obj):
    """Whether obj is a storage (typed or untyped)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))
