"""pyctorch.save / pyctorch.load in torch's checkpoint format, readable by real torch and back.

The file is a zip archive (entries stored, not compressed; each entry's data starts on a
64-byte boundary) holding:

    <archive>/data.pkl             the object, pickled with protocol 2; every tensor is
                                   torch._utils._rebuild_tensor_v2(storage, offset, size,
                                   stride, requires_grad, OrderedDict()) whose storage is the
                                   persistent id ('storage', torch.FloatStorage, key, 'cpu', numel)
    <archive>/.format_version      "1"
    <archive>/.storage_alignment   "64"
    <archive>/byteorder            "little"
    <archive>/data/<key>           the raw bytes of each storage, written once however many
                                   tensors view it
    <archive>/version              "3\\n"
    <archive>/.data/serialization_id

<archive> is the file's base name without its extension ("archive" for file objects).
Loading also reads deflate-compressed records, and torch's legacy stream format
(_use_new_zipfile_serialization=False, which save can write too: Note [Legacy format]). How a
save to a path is made atomic, and when it is written in place instead: Note [Saving to a path].

Note [Torch's names in our pickles]
The pickle names torch's globals (torch._utils._rebuild_tensor_v2, torch.FloatStorage,
torch.nn.parameter.Parameter, torch.float16...) so real torch loads our files, and loading
maps those names back to pyctorch's objects. Writing a name of a module that need not be
importable is beyond the C pickler (it imports every global it writes to check it), so
saving uses the pure-Python pickler with save_global overridden; only the small data.pkl
goes through it, storages are written straight from memory. Loading with
weights_only=False uses the C unpickler; weights_only=True uses a restricted pure-Python
unpickler (Note [weights_only]).

Note [weights_only]
Loading with weights_only=True (the default, as in torch) resolves only the globals torch's
weights_only unpickler allows (rebuild functions, storage types, dtypes, Size, device,
Parameter, OrderedDict, set, bytes...), plus those added with add_safe_globals; calls
(REDUCE, NEWOBJ), BUILD and container mutations are only performed on those. Anything else
raises pickle.UnpicklingError whose message mentions weights_only, as torch's does. Every
size, stride and offset of a rebuilt tensor is checked against its storage in C (set_). Only
the opcodes torch's restricted unpickler knows are run, and no length read from the file is
allocated beyond the bytes the file still holds (Note [weights_only opcodes] in
_weights_only_unpickler.py).
"""
import collections
import contextlib
import io
import os
import pickle
import secrets
import stat
import struct
import sys
import warnings
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from . import _C
from ._sparse_coo import SparseCooTensor as _SparseCooTensor
from ._layouts import layout as _layout_type, memory_format as _memory_format_type
from ._weights_only_unpickler import (Unpickler as _WeightsUnpickler, add_safe_globals, clear_safe_globals,  # noqa: F401
                                      get_safe_globals, safe_globals, weights_only_message as _weights_only_message)
from ._zip_container import ALIGNMENT, ZipReader, ZipWriter

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "TypedStorage", "default_restore_location"]

DEFAULT_PROTOCOL = 2
_VERSION = b"3\n"


# ---- dtypes and their legacy storage names ----

_STORAGE_NAMES = {
    _C.float32: "FloatStorage", _C.float64: "DoubleStorage", _C.float16: "HalfStorage",
    _C.bfloat16: "BFloat16Storage", _C.int64: "LongStorage", _C.int32: "IntStorage",
    _C.int16: "ShortStorage", _C.int8: "CharStorage", _C.uint8: "ByteStorage", _C.bool: "BoolStorage",
    _C.complex64: "ComplexFloatStorage", _C.complex128: "ComplexDoubleStorage"}
# dtypes without a legacy storage class: torch saves them on an UntypedStorage through _rebuild_tensor_v3
_V3_DTYPES = (_C.uint16, _C.uint32, _C.uint64, _C.complex32, _C.float8_e5m2, _C.float8_e4m3fn, _C.float8_e5m2fnuz,
              _C.float8_e4m3fnuz, _C.float8_e8m0fnu)
_DTYPE_NAMES = {d: str(d)[len("torch."):] for d in (*_STORAGE_NAMES, *_V3_DTYPES)}
_ITEMSIZE = {d: d.itemsize for d in _DTYPE_NAMES}


class _TorchName:
    """A global of real torch, written into pickles by name (Note [Torch's names in our pickles])."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # the pickler requires reduce callables to be callable
        raise RuntimeError(f"{self.module}.{self.name} is a placeholder for pickling")

    def __repr__(self):
        return f"{self.module}.{self.name}"


_REBUILD_TENSOR_V2 = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _TorchName("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _TorchName("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE_V2 = _TorchName("torch._tensor", "_rebuild_from_type_v2")
_GET_LAYOUT = _TorchName("torch.serialization", "_get_layout")
_REBUILD_SPARSE_TENSOR = _TorchName("torch._utils", "_rebuild_sparse_tensor")
_UNTYPED_STORAGE_NAME = _TorchName("torch.storage", "UntypedStorage")
_STORAGE_TYPE_NAMES = {d: _TorchName("torch", n) for d, n in _STORAGE_NAMES.items()}


class _StorageType:
    """What torch.FloatStorage & co. unpickle to: the dtype a saved storage holds."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


_STORAGE_TYPES = {n: _StorageType(n, d) for d, n in _STORAGE_NAMES.items()}
_UNTYPED = _StorageType("UntypedStorage", None)


class TypedStorage:
    """A loaded storage of one dtype (torch.TypedStorage's role): `_untyped_storage` holds the bytes."""

    def __init__(self, wrap_storage, dtype):
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self):
        return self._untyped_storage

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def size(self):
        return self._untyped_storage.nbytes() // _ITEMSIZE[self.dtype]

    __len__ = size

    def element_size(self):
        return _ITEMSIZE[self.dtype]

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def tolist(self):
        return _C.empty(0, dtype=self.dtype, device=self._untyped_storage.device).set_(self._untyped_storage).tolist()

    def __repr__(self):
        return f"TypedStorage(dtype={self.dtype}, size={self.size()})"


# ---- rebuild functions: what torch's global names resolve to on load ----

def _untyped_of(storage):
    if type(storage) is TypedStorage:
        return storage._untyped_storage, storage.dtype
    if type(storage) is _C.UntypedStorage:
        return storage, _C.uint8
    raise TypeError(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")


def _rebuild_tensor(storage, storage_offset, size, stride):
    untyped, dtype = _untyped_of(storage)
    return _C.empty(0, dtype=dtype, device=untyped.device).set_(untyped, storage_offset, size, stride)


def _set_requires_grad(t, requires_grad):
    if requires_grad:
        t.requires_grad = True
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    return _set_requires_grad(_rebuild_tensor(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    untyped, _ = _untyped_of(storage)
    if type(dtype) is not _C.dtype:
        raise TypeError(f"expected a dtype, got {type(dtype).__name__}")
    t = _C.empty(0, dtype=dtype, device=untyped.device).set_(untyped, storage_offset, size, stride)
    return _set_requires_grad(t, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.parameter import Parameter
    if not isinstance(data, _C.Tensor):
        raise TypeError(f"expected a tensor to rebuild a Parameter from, got {type(data).__name__}")
    return Parameter(data, requires_grad)


def _set_obj_state(obj, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for mapping in (dict_state, slots_state):
        if mapping:
            for k, v in mapping.items():
                setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if type(ret) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, _C.Tensor) and isinstance(ret, _C.Tensor)):
            raise TypeError(f"cannot rebuild a {getattr(new_type, '__name__', new_type)} from {type(ret).__name__}")
        ret = _C.Tensor._make_subclass(new_type, ret, ret.requires_grad)
    return _set_obj_state(ret, state) if state else ret


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    return _set_requires_grad(data.to(dtype=dtype, device=device), requires_grad)


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    return _set_requires_grad(_C.from_numpy(data).to(dtype=dtype, device=device), requires_grad)


def _unsupported(kind):
    def rebuild(*args, **kwargs):
        raise RuntimeError(f"pyctorch.load: {kind} tensors are not supported by pyctorch")
    rebuild.__name__ = f"_rebuild_{kind.replace(' ', '_')}"
    return rebuild


def _rebuild_sparse_tensor(layout, data):
    from ._sparse_build import _rebuild_sparse_tensor as rebuild
    return rebuild(layout, data)


def _get_layout(name):
    if name == "torch.strided":
        from ._layouts import strided
        return strided
    if name == "torch.sparse_coo":
        from ._layouts import sparse_coo
        return sparse_coo
    raise RuntimeError(f"pyctorch.load: layout {name} is not supported (pyctorch has strided and sparse_coo)")


def _encode(obj, encoding="utf-8"):
    # protocol 2 pickles bytes as _codecs.encode(str, 'latin1'); only text codecs run here
    if encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii") or not isinstance(obj, str):
        raise pickle.UnpicklingError(f"_codecs.encode is only allowed for str with a text encoding, got {encoding!r}")
    return obj.encode(encoding)


def _torch_special_globals():
    """torch's names that do not map to the same name under pyctorch."""
    g = {
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": _rebuild_device_tensor_from_cpu_tensor,
        "torch._utils._rebuild_device_tensor_from_numpy": _rebuild_device_tensor_from_numpy,
        "torch._utils._rebuild_qtensor": _unsupported("quantized"),
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch._utils._rebuild_meta_tensor_no_storage": _unsupported("meta"),
        "torch._utils._rebuild_nested_tensor": _unsupported("nested"),
        "torch._utils._rebuild_wrapper_subclass": _unsupported("wrapper subclass"),
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.serialization._get_layout": _get_layout,
        "torch.storage.UntypedStorage": _UNTYPED,
        "torch.UntypedStorage": _UNTYPED,
    }
    for name, st in _STORAGE_TYPES.items():
        g[f"torch.{name}"] = st
    return g


_SPECIAL = _torch_special_globals()


def _resolve_torch_global(module, name):
    """The pyctorch object for torch's `module.name`, or None when `module` is not torch's."""
    full = f"{module}.{name}"
    obj = _SPECIAL.get(full)
    if obj is not None:
        return obj
    if module != "torch" and not module.startswith("torch."):
        return None
    import importlib
    try:
        obj = importlib.import_module("pyctorch" + module[len("torch"):])
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise pickle.UnpicklingError(f"pyctorch has no equivalent of {full} (needed to load this checkpoint)") from e
    return obj


# ---- weights_only allowlist (Note [weights_only]) ----

_allowed_cache = None


def _allowed_globals():
    global _allowed_cache
    if _allowed_cache is None:
        from .nn.parameter import Parameter
        g = {
            "collections.OrderedDict": OrderedDict,
            "collections.Counter": collections.Counter,
            "torch.nn.parameter.Parameter": Parameter,
            "torch.Size": _C.Size,
            "torch.Tensor": _C.Tensor,
            "torch.device": _C.device,
            "_codecs.encode": _encode,
            "builtins.bytearray": bytearray,
            "builtins.set": set,
            "builtins.complex": complex,
        }
        for d, n in _DTYPE_NAMES.items():
            g[f"torch.{n}"] = d
        g.update(_SPECIAL)
        _allowed_cache = g
    return _allowed_cache


# ---- where storages go on load ----

_CUDA_UNAVAILABLE = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
                     "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
                     "to map your storages to the CPU.")


def default_restore_location(storage, location):
    """Put a loaded (CPU) storage where `location` says: 'cpu' keeps it; CUDA needs a CUDA build."""
    if not isinstance(location, str):
        raise TypeError(f"storage location must be a string, got {type(location).__name__}")
    if location == "cpu":
        return storage
    if location == "cuda" or location.startswith("cuda:"):
        cuda = getattr(sys.modules.get("pyctorch"), "cuda", None)
        if cuda is None or not cuda.is_available():
            raise RuntimeError(_CUDA_UNAVAILABLE)
        return storage.cuda(_C.device(location))
    if location == "meta":
        raise RuntimeError("pyctorch.load: meta tensors are not supported by pyctorch")
    raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with {location})")


def _restore_location(map_location):
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        def restore(storage, location):
            where = map_location.get(location, location)
            return default_restore_location(storage, str(where) if isinstance(where, _C.device) else where)
        return restore
    if isinstance(map_location, (str, bytes)):
        where = map_location.decode("ascii") if isinstance(map_location, bytes) else map_location
        return lambda storage, location: default_restore_location(storage, where)
    if isinstance(map_location, _C.device):
        where = str(map_location)
        return lambda storage, location: default_restore_location(storage, where)
    if callable(map_location):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                result = default_restore_location(storage, location)
            return result
        return restore
    raise TypeError(f"map_location must be None, a string, a torch.device, a dict or a callable, not "
                    f"{type(map_location).__name__}")


# ---- save ----

class _StorageRef:
    """Stands for a storage in the pickle: persistent_id turns it into torch's storage id."""
    __slots__ = ("pid",)

    def __init__(self, pid):
        self.pid = pid


class _StorageTable:
    """Storages met while pickling, each written once (keyed by the storage's address)."""

    def __init__(self):
        self.by_cdata = {}
        self.records = []  # (key, UntypedStorage)
        self.locations = {}
        self.dtypes = {}  # key -> the dtype the storage is saved as
        self.legacy = False  # Note [Legacy format]: ids carry a sixth field (view metadata, None)

    def pid(self, storage, dtype):
        """torch's persistent id for `storage` seen as `dtype` (None: untyped)."""
        entry = self.by_cdata.get(storage._cdata)
        as_dtype = _C.uint8 if dtype is None else dtype
        if entry is None:
            key = str(len(self.records))
            self.records.append((key, storage))  # also keeps the storage (and its address) alive
            entry = self.by_cdata[storage._cdata] = (key, as_dtype)
            self.dtypes[key] = as_dtype
        elif entry[1] != as_dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        key = entry[0]
        location = self.locations.get(storage.device)
        if location is None:  # one string object per device, so the pickle memoizes it as torch's does
            location = self.locations[storage.device] = str(storage.device)
        if dtype is None:
            pid = ("storage", _UNTYPED_STORAGE_NAME, key, location, storage.nbytes())
        else:
            pid = ("storage", _STORAGE_TYPE_NAMES[dtype], key, location, storage.nbytes() // _ITEMSIZE[dtype])
        return pid + (None,) if self.legacy else pid


def _torch_global(obj, name):
    """(module, qualname) naming `obj` in torch's namespace, or None for non-pyctorch objects."""
    if type(obj) is _TorchName:
        return obj.module, obj.name
    if type(obj) is _C.dtype:
        return "torch", _DTYPE_NAMES.get(obj) or str(obj)[len("torch."):]
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and (module == "pyctorch" or module.startswith("pyctorch.")):
        qual = name or getattr(obj, "__qualname__", None) or obj.__name__
        return "torch" + module[len("pyctorch"):], qual
    return None


def _make_pickler_class(pickle_module):
    base = getattr(pickle_module, "Pickler", None)
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        base = pickle._Pickler  # Note [Torch's names in our pickles]: the pure-Python pickler

    class TorchPickler(base):
        def __init__(self, file, protocol, storages):
            super().__init__(file, protocol)
            self._storages = storages

        def persistent_id(self, obj):
            t = type(obj)
            if t is _StorageRef:
                return obj.pid
            if t is _C.UntypedStorage:
                return self._storages.pid(obj, None)
            if t is TypedStorage:
                return self._storages.pid(obj._untyped_storage, obj.dtype)
            return None

        def reducer_override(self, obj):
            t = type(obj)
            if t is _TorchName:
                return obj.name  # a string: pickled by save_global below
            if isinstance(obj, _SparseCooTensor):  # written as torch writes a sparse COO tensor
                return (_REBUILD_SPARSE_TENSOR, (obj.layout, (obj._indices(), obj._values().detach(),
                                                              tuple(obj.shape), obj.is_coalesced())))
            if isinstance(obj, _C.Tensor):
                return self._reduce_tensor(obj)
            if t is _C.dtype:
                return _DTYPE_NAMES.get(obj) or str(obj)[len("torch."):]
            if t is _C.device:
                return (_C.device, (obj.type,) if obj.index is None else (obj.type, obj.index))
            if t is _C.Size:
                return (_C.Size, (tuple(obj),))
            if t is _layout_type:
                return (_GET_LAYOUT, (repr(obj),))
            if t is _memory_format_type:
                return (_TorchName("torch", obj._name), ())
            return NotImplemented

        def _reduce_tensor(self, t):
            from .nn.parameter import Parameter, Buffer
            kind = type(t)
            if kind is Parameter:
                data = t.detach()
                if type(data) is not _C.Tensor:
                    data = _C.Tensor._make_subclass(_C.Tensor, data, False)
                state = getattr(t, "__dict__", None)
                if state:
                    return (_REBUILD_PARAMETER_WITH_STATE, (data, t.requires_grad, OrderedDict(), dict(state)))
                return (_REBUILD_PARAMETER, (data, t.requires_grad, OrderedDict()))
            if t.device.type not in ("cpu", "cuda"):  # a CUDA storage keeps its location; its bytes are copied
                t = t.cpu()
            v3 = t.dtype in _V3_DTYPES
            ref = _StorageRef(self._storages.pid(t.untyped_storage(), None if v3 else t.dtype))
            args = (ref, t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.requires_grad, OrderedDict())
            rebuild = _REBUILD_TENSOR_V2
            if v3:
                args, rebuild = args + (t.dtype,), _REBUILD_TENSOR_V3
            state = None if kind is Buffer else getattr(t, "__dict__", None)
            if kind is _C.Tensor or kind is Buffer:
                if not state:
                    return (rebuild, args)
                kind = _C.Tensor
            return (_REBUILD_FROM_TYPE_V2, (rebuild, kind, args, dict(state) if state else {}))

        def save_global(self, obj, name=None):
            target = _torch_global(obj, name)
            if target is None:
                return super().save_global(obj, name)
            module, qualname = target
            if self.proto >= 4:
                self.save(module)
                self.save(qualname)
                self.write(pickle.STACK_GLOBAL)
            else:
                self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + qualname.encode("utf-8") + b"\n")
            self.memoize(obj)

    return TorchPickler


_PICKLERS = {}


def _archive_name(path):
    base = os.path.basename(os.fspath(path))
    if isinstance(base, bytes):
        base = os.fsdecode(base)
    dot = base.rfind(".")
    name = base[:dot] if dot >= 0 else base
    if not name:
        raise RuntimeError(f"[enforce fail at inline_container.cc] . invalid file name: {base}")
    return name


# Note [Overlapped saving]
# In a large save a helper thread computes the CRC-32s of the storages ahead of the writes (the
# local headers need them first); zlib and write() both release the GIL, so checksumming and
# writing proceed together. It only pays with a core to spare: below _PIPELINE_BYTES, or with
# fewer than 3 usable cores (the writer's copy into the page cache and the kernel's writeback
# need them; measured on 2 busy cores, the helper made saves ~20% slower), CRCs are computed
# inline. (Flushing to disk in the background while writing, to shorten the final fsync, was
# measured too and made saves 2-3x slower: pages under writeback stall the writes that follow.)
_PIPELINE_BYTES = 16 << 20


def _usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _write_archive(fh, archive, data_pkl, storages, byteorder_record=True):
    # the bytes of device storages come to the host first (their records keep the device's location tag)
    records = [(key, s if s.device.type == "cpu" else s.cpu()) for key, s in storages.records]
    big = sum(s.nbytes() for _, s in records) >= _PIPELINE_BYTES and _usable_cores() >= 3
    z = ZipWriter(fh, archive)
    crc_pool = ThreadPoolExecutor(1) if big else None  # Note [Overlapped saving]
    try:
        crcs = [crc_pool.submit(zlib.crc32, memoryview(s)) if big else None for _, s in records]
        z.write_record("data.pkl", data_pkl)
        z.write_record(".format_version", b"1")
        z.write_record(".storage_alignment", str(ALIGNMENT).encode())
        if byteorder_record:
            z.write_record("byteorder", sys.byteorder.encode())
        for (key, storage), crc in zip(records, crcs):
            z.write_record(f"data/{key}", storage, crc.result() if crc is not None else None)
        z.write_record("version", _VERSION)
        z.write_record(".data/serialization_id", f"{secrets.randbelow(10 ** 40):040d}".encode())
        z.finish()
    finally:
        if crc_pool is not None:
            crc_pool.shutdown(cancel_futures=True)


# Note [Saving to a path]
# A save to a missing file or to a regular file with a single link writes a temporary file beside the
# target, fsyncs it and renames it over the target: an interrupted save leaves the previous file
# untouched and never a partial checkpoint. Anything else is written in place, as torch writes every
# save: a rename would turn /dev/null into a regular file, replace a FIFO its reader waits on, split a
# hard link from its other names, and cannot work for /dev/stdout (nor would it write to the file a
# shell redirected stdout to: links under /dev/ and paths under /proc/ are written in place). A symlink is
# followed first, so the link stays a link and its target gets the new checkpoint.
# Temporaries are named ".<target name>.pyctorch-save.<pid>.<random>.<host>.tmp". A save killed before
# its rename (SIGKILL, OOM killer, power loss) leaves its temporary behind; the next save to the same
# path on the same host removes those whose process is gone (a live pid's temporary may be a
# concurrent save and is left alone). Errors name the target, never the temporary.

_TEMP_MARK = ".pyctorch-save."


def _temp_stem(base):
    """The target's name as it appears in its temporaries (hashed when too long for a file name)."""
    if len(base.encode("utf-8", "surrogateescape")) <= 120:
        return base
    import hashlib
    return base[:40] + "~" + hashlib.sha1(base.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _host_tag():
    import re
    import socket
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:64] or "host"


def _pid_alive(pid):
    if pid <= 0 or os.name == "nt":  # (on Windows os.kill(pid, 0) would terminate the process)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, owned by someone else
        return True
    return True


def _remove_stale_temps(directory, stem):
    """Remove temporaries of earlier saves to this target whose process no longer runs (Note [Saving to a path])."""
    import re
    pattern = re.compile(r"\.%s%s(\d+)\.[0-9a-f]{12}\.([A-Za-z0-9_-]+)\.tmp\Z"
                         % (re.escape(stem), re.escape(_TEMP_MARK)))
    host = _host_tag()
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        m = pattern.match(name)
        if m is None or m.group(2) != host or _pid_alive(int(m.group(1))):
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)


def _open_failed(target, err):
    return RuntimeError(f"[enforce fail at inline_container.cc:747] . open file failed with strerror: "
                        f"{err.strerror or err}: {target}")


def _write_in_place(target, write):
    try:
        fh = open(target, "wb")
    except OSError as e:
        raise _open_failed(target, e) from None
    with fh:
        write(fh)
        fh.flush()
        with contextlib.suppress(OSError):  # a regular file (a hard link): make it durable; a device or FIFO: no-op
            if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                os.fsync(fh.fileno())


def _atomic_write(path, write):
    """Save through `write(fileobj)` to the path `path` (Note [Saving to a path])."""
    target = os.fspath(path)
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    try:
        st = os.stat(target)  # what the path leads to, through symlinks
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _open_failed(target, IsADirectoryError(21, os.strerror(21)))
    where = os.path.abspath(target)
    # /dev/stdout, /dev/fd/N, /proc/self/fd/N: links to a descriptor (a file a shell redirected to), written in place
    special = where.startswith("/proc/") or (where.startswith("/dev/") and os.path.islink(target))
    if st is not None and (special or not (stat.S_ISREG(st.st_mode) and st.st_nlink == 1)):
        return _write_in_place(target, write)  # opened by its own name: /dev/stdout's link leads to a pipe
    if os.path.islink(target):
        target = os.path.realpath(target)  # replace the link's target, not the link
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(target) or directory} does not exist.")
    stem = _temp_stem(os.path.basename(target))
    _remove_stale_temps(directory, stem)
    prefix = os.path.join(directory, f".{stem}{_TEMP_MARK}{os.getpid()}.")
    suffix = f".{_host_tag()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = None
    for _ in range(100):
        tmp = f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for a plain open()
            break
        except FileExistsError:
            continue
        except OSError:  # e.g. a read-only directory holding a writable file: write in place, as torch
            return _write_in_place(target, write)
    if fd is None:
        return _write_in_place(target, write)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, stat.S_IMODE(st.st_mode))  # keep the permissions of the file we replace
        try:
            os.replace(tmp, target)
        except OSError as e:
            raise _open_failed(target, e) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    # make the rename itself durable (best effort: not every platform can fsync a directory)
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` to `f` (a path or a writable binary file object) in torch's zip checkpoint format
    (_use_new_zipfile_serialization=False: torch's legacy stream format, Note [Legacy format]).

    Saving over a regular file (or to a new one) is atomic: the checkpoint is written to a temporary file
    in the same directory, flushed and fsync'ed, then renamed over `f`; devices, FIFOs and hard-linked
    files are written in place (Note [Saving to a path])."""
    is_path = isinstance(f, (str, bytes, os.PathLike))
    if not is_path and not hasattr(f, "write"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    archive = _archive_name(f) if is_path and _use_new_zipfile_serialization else "archive"
    # Pickle first: a failure here (an unpicklable object) happens before any byte is written.
    cls = _PICKLERS.get(pickle_module)
    if cls is None:
        cls = _PICKLERS[pickle_module] = _make_pickler_class(pickle_module)
    storages = _StorageTable()
    storages.legacy = not _use_new_zipfile_serialization
    buf = io.BytesIO()
    cls(buf, pickle_protocol, storages).dump(obj)
    data_pkl = buf.getbuffer()

    def write(fh):
        if storages.legacy:
            _write_legacy(fh, data_pkl, storages, pickle_module, pickle_protocol)
        else:
            _write_archive(fh, archive, data_pkl, storages, not _disable_byteorder_record)

    if is_path:
        _atomic_write(f, write)
    else:
        write(f)
        if hasattr(f, "flush"):
            f.flush()


# ---- load ----

def _decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _byteswap(storage, itemsize):
    with memoryview(storage) as mv:
        src = bytes(mv)
        for i in range(itemsize):
            mv[i::itemsize] = src[itemsize - 1 - i::itemsize]


_BOOL_BYTES = bytes([0] + [1] * 255)


def _normalize_bools(storage):
    """A bool byte other than 0 or 1 (a damaged or crafted file) is undefined behaviour for C code
    that reads it as _Bool: store such bytes as 1, the value C gives any nonzero byte."""
    with memoryview(storage) as mv:
        data = mv.tobytes()
        if data.translate(None, b"\x00\x01"):
            mv[:] = data.translate(_BOOL_BYTES)


def _load(reader, map_location, pickle_module, weights_only, mm, pickle_load_args):
    restore = _restore_location(map_location)
    if reader.has(".format_version"):  # read as torch reads it (a damaged record raises here too)
        reader.read(".format_version")
    byteorder = reader.read("byteorder") if reader.has("byteorder") else sys.byteorder.encode()
    if byteorder not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + byteorder.decode())
    byteorder = byteorder.decode()
    if reader.has(".storage_alignment"):
        int(reader.read(".storage_alignment"))  # as torch: a damaged record is a ValueError
    loaded = {}

    def load_storage(key, nbytes):
        name = f"data/{key}"
        start, size = reader.record_info(name)  # checked before allocating what the pickle claims
        if size < nbytes:
            raise RuntimeError(f"PytorchStreamReader: record {name} holds {size} bytes but the checkpoint describes "
                               f"a storage of {nbytes} bytes")
        if mm is not None and nbytes > 0 and start % ALIGNMENT == 0 and not reader.is_compressed(name):
            return _C.frombuffer(mm, dtype=_C.uint8, count=nbytes, offset=start).untyped_storage()
        storage = _C.UntypedStorage(nbytes)
        reader.read_into(start, storage, nbytes, name)
        return storage

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple) or len(saved_id) != 5 or _decode_ascii(saved_id[0]) != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {saved_id!r:.100}")
        _, storage_type, key, location, numel = saved_id
        key, location = _decode_ascii(key), _decode_ascii(location)
        if type(storage_type) is not _StorageType:
            raise pickle.UnpicklingError(f"unknown storage type {storage_type!r:.100} in a persistent id")
        if not isinstance(key, str) or not isinstance(location, str) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"malformed storage persistent id {saved_id!r:.200}")
        dtype = storage_type.dtype
        untyped = loaded.get(key)
        if untyped is None:
            itemsize = 1 if dtype is None else _ITEMSIZE[dtype]
            untyped = load_storage(key, numel * itemsize)
            if byteorder != sys.byteorder and itemsize > 1:
                _byteswap(untyped, itemsize)
            if dtype is _C.bool:
                _normalize_bools(untyped)
            untyped = restore(untyped, location)
            if type(untyped) is TypedStorage:
                untyped = untyped._untyped_storage
            if type(untyped) is not _C.UntypedStorage:
                raise TypeError(f"map_location must return a storage, got {type(untyped).__name__}")
            loaded[key] = untyped
        return TypedStorage(untyped, _C.uint8 if dtype is None else dtype)  # as torch, untyped reads as uint8

    data = io.BytesIO(reader.read("data.pkl"))
    if weights_only:
        result = _WeightsUnpickler(data, persistent_load, _allowed_globals(), **pickle_load_args).load()
    else:
        result = _torch_unpickler(pickle_module, data, persistent_load, pickle_load_args).load()
    reader.serialization_id.decode("utf-8")  # torch decodes it after loading (a damaged id: UnicodeDecodeError)
    return result


def _torch_unpickler(pickle_module, file, persistent_load, pickle_load_args, dry=False):
    """pickle_module's unpickler (weights_only=False) mapping torch's globals to pyctorch's (dry: the
    rebuild functions build nothing, see _raise_truncated_legacy)."""
    class TorchUnpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            obj = _resolve_torch_global(module, name)
            if dry and f"{module}.{name}" in _REBUILD_NAMES:
                return _build_nothing
            return obj if obj is not None else super().find_class(module, name)

    u = TorchUnpickler(file, **pickle_load_args)
    if persistent_load is not None:
        u.persistent_load = persistent_load
    return u


_REBUILD_NAMES = frozenset(k for k in _SPECIAL if "._rebuild_" in k)


def _build_nothing(*args, **kwargs):
    return None


# ---- torch's legacy format (Note [Legacy format]) ----

# Note [Legacy format]
# torch.save(..., _use_new_zipfile_serialization=False) writes, one after the other in one stream:
# pickles of the magic number, the protocol version 1001 and a dict of system information; the
# object's pickle, whose storages are the persistent ids ('storage', storage type, key, location,
# numel, None); a pickled list of the storage keys; then for each key in that order an int64
# (little-endian) element count followed by the storage's raw bytes. Loading reads the object
# first, on empty storages of the sizes its ids declare (checked against the bytes the file still
# holds before anything is allocated), then fills them. weights_only applies the same restricted
# unpickler to every pickle of the stream, as torch's does. The older tar variant (torch < 0.4)
# is not read.
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL_VERSION = 1001


def _write_legacy(fh, data_pkl, storages, pickle_module, protocol):
    def dump(obj):
        pickle_module.dump(obj, fh, protocol=protocol)

    dump(_LEGACY_MAGIC)
    dump(_LEGACY_PROTOCOL_VERSION)
    dump({"protocol_version": _LEGACY_PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
          "type_sizes": {"short": 2, "int": 4, "long": 4}})
    fh.write(data_pkl)
    by_key = dict(storages.records)
    keys = sorted(by_key)
    dump(keys)
    for key in keys:
        storage = by_key[key]
        itemsize = _ITEMSIZE[storages.dtypes[key]]
        fh.write(struct.pack("<q", storage.nbytes() // itemsize))
        with memoryview(storage) as mv:
            fh.write(mv)


class _LegacyTruncated(Exception):
    """The storages a legacy pickle declares do not fit in what is left of the file."""


def _raise_truncated_legacy(fh, pickle_start, load_one, load_dry):
    """Raise for a legacy file too short for the storages its pickle declares, without allocating them,
    the error torch's loader reaches on that file (after allocating them): the object's pickle is read
    again with rebuild functions that build nothing, then the list of storage keys; where both are
    complete, the storage data is what is missing."""
    fh.seek(pickle_start)
    load_dry()
    load_one()
    raise RuntimeError("unexpected EOF: the storages of this legacy checkpoint run past the end of the file. The file "
                       "might be corrupted.")


def _legacy_load(fh, map_location, pickle_module, weights_only, pickle_load_args):
    restore = _restore_location(map_location)

    def left():
        pos = fh.tell()
        end = fh.seek(0, io.SEEK_END)
        fh.seek(pos)
        return end - pos

    def load_one(persistent_load=None):
        if weights_only:
            return _WeightsUnpickler(fh, persistent_load, _allowed_globals(), **pickle_load_args).load()
        return _torch_unpickler(pickle_module, fh, persistent_load, pickle_load_args).load()

    def load_dry():
        if weights_only:
            allowed = {k: (_build_nothing if k in _REBUILD_NAMES else v) for k, v in _allowed_globals().items()}
            return _WeightsUnpickler(fh, _build_nothing, allowed, **pickle_load_args).load()
        return _torch_unpickler(pickle_module, fh, _build_nothing, pickle_load_args, dry=True).load()

    if load_one() != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = load_one()
    if version != _LEGACY_PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    load_one()  # system information: unused, as in torch
    storages = {}  # key -> (UntypedStorage, dtype)
    declared = [0]

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _decode_ascii(saved_id[0])
        if typename == "module":  # a whole module saved by class (weights_only=False only)
            return saved_id[1]
        if typename != "storage":
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        storage_type, key, location, numel, view_metadata = saved_id[1:]
        if type(storage_type) is not _StorageType:
            raise pickle.UnpicklingError(f"unknown storage type {storage_type!r:.100} in a persistent id")
        if type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"malformed storage persistent id {saved_id!r:.200}")
        dtype = _C.uint8 if storage_type.dtype is None else storage_type.dtype
        entry = storages.get(key)
        if entry is None:
            nbytes = numel * _ITEMSIZE[dtype]
            declared[0] += nbytes
            if declared[0] > left():  # checked before allocating what the pickle claims
                raise _LegacyTruncated
            untyped = restore(_C.UntypedStorage(nbytes), _decode_ascii(location))
            if type(untyped) is TypedStorage:
                untyped = untyped._untyped_storage
            if type(untyped) is not _C.UntypedStorage:
                raise TypeError(f"map_location must return a storage, got {type(untyped).__name__}")
            entry = storages[key] = (untyped, dtype)
        if view_metadata is not None:
            raise RuntimeError("pyctorch.load: storage views of legacy (torch < 1.0) checkpoints are not supported")
        return TypedStorage(entry[0], entry[1])

    pickle_start = fh.tell()
    try:
        result = load_one(persistent_load)
    except _LegacyTruncated:
        _raise_truncated_legacy(fh, pickle_start, load_one, load_dry)
    keys = load_one()
    for key in keys:
        if key not in storages:
            raise AssertionError(f"storage key {key!r} not found in deserialized_objects")
        untyped, dtype = storages[key]
        head = fh.read(8)
        if len(head) != 8:
            raise RuntimeError("PytorchStreamReader failed reading legacy storage data: unexpected end of file")
        numel = struct.unpack("<q", head)[0]
        nbytes = untyped.nbytes()
        if numel * _ITEMSIZE[dtype] != nbytes:
            raise RuntimeError(f"storage has wrong byte size: expected {nbytes} got {numel * _ITEMSIZE[dtype]}")
        if nbytes:
            with memoryview(untyped) as mv:
                got = 0
                while got < nbytes:
                    n = fh.readinto(mv[got:])
                    if not n:
                        raise RuntimeError(f"unexpected EOF, expected {nbytes - got} more bytes. The file might be "
                                           "corrupted.")
                    got += n
        if dtype is _C.bool:
            _normalize_bools(untyped)
    return result


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved with torch.save or pyctorch.save (torch's zip checkpoint format).

    weights_only (default True, as in torch) restricts unpickling to tensors, storages, primitive containers,
    dtypes, Size, device, Parameter and OrderedDict (Note [weights_only]); map_location is None, a device or
    string, a dict {saved location: location} or a callable(storage, location); mmap=True maps the file instead
    of reading it (copy-on-write, so the file is never modified)."""
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    truthy = ("1", "y", "yes", "true")
    force_on = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_off = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force_on and force_off:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force_on:
        weights_only = True
    elif force_off and weights_only_not_set:
        weights_only = False
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
        pickle_load_args = {k: v for k, v in pickle_load_args.items() if k == "encoding"}
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")

    with contextlib.ExitStack() as stack:
        if _is_path(f):
            fh = stack.enter_context(open(f, "rb"))
        else:
            fh = f
            if not hasattr(fh, "read"):
                raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'read' attribute")
            if not (hasattr(fh, "seekable") and fh.seekable()):
                fh = io.BytesIO(fh.read())
        start = fh.tell()
        magic = fh.read(4)
        fh.seek(start)
        if magic != b"PK\x03\x04":
            if mmap:
                name = f"{f}, " if isinstance(f, str) else ""
                raise RuntimeError(f"mmap can only be used with files saved with `torch.save({name}_use_new_zipfile_"
                                   "serialization=True), please torch.save your checkpoint with this option in order "
                                   "to use mmap.")
            try:
                return _legacy_load(fh, map_location, pickle_module, weights_only, dict(pickle_load_args))
            except pickle.UnpicklingError as e:
                if weights_only:
                    raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
                raise
        reader = ZipReader(fh)
        if reader.has("constants.pkl"):
            raise RuntimeError("pyctorch.load: TorchScript archives (torch.jit.save) are not supported")
        if not reader.has("data.pkl"):
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        mm = None
        if mmap:
            import mmap as _mmap
            mm = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
        try:
            return _load(reader, map_location, pickle_module, weights_only, mm, dict(pickle_load_args))
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
            raise
        finally:
            if mm is not None:
                with contextlib.suppress(BufferError):  # storages still view it; it closes with them
                    mm.close()
