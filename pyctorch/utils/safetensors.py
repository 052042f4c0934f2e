"""safetensors files for pyctorch tensors: the API of the `safetensors` package's torch module
(save_file, load_file, save, load, safe_open) and its file format, byte for byte.

Format: 8 bytes N (little-endian u64), N bytes of UTF-8 JSON padded with spaces to a multiple
of 8, then the tensors' bytes back to back, C-contiguous and little-endian. The JSON maps each
name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets relative to
the end of the header); the optional "__metadata__" entry maps strings to strings and comes
first. Like the package, saving orders tensors by dtype (widest alignment first) then name,
refuses non-contiguous tensors and tensors that overlap in memory, and loading checks that the
offsets tile the data exactly (errors raise SafetensorError, never read out of bounds).

(The package lives at safetensors.torch; pyctorch keeps it under pyctorch.utils because torch
itself has no safetensors module.)
"""
import json
import os
import struct

from .. import _C
from ..serialization import _atomic_write, _normalize_bools

__all__ = ["save_file", "load_file", "save", "load", "safe_open", "SafetensorError"]

MAX_HEADER_SIZE = 100_000_000


class SafetensorError(Exception):
    """Raised for malformed safetensors data (the package's safetensors_rust.SafetensorError)."""


_DTYPES = {
    "F64": _C.float64, "F32": _C.float32, "F16": _C.float16, "BF16": _C.bfloat16, "I64": _C.int64,
    "I32": _C.int32, "I16": _C.int16, "I8": _C.int8, "U8": _C.uint8, "BOOL": _C.bool,
    "U16": _C.uint16, "U32": _C.uint32, "U64": _C.uint64,
}
_CODES = {d: c for c, d in _DTYPES.items()}
# safetensors' Dtype enum is ordered by increasing alignment; saving sorts by it, descending
_ORDER = {c: i for i, c in enumerate(["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64",
                                       "U64"])}
# dtypes of the format that pyctorch has no tensor type for (recognised only to name them in errors)
_FOREIGN = {"F4", "F6_E2M3", "F6_E3M2", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64"}
_ITEMSIZE = {c: _C.empty(0, dtype=d).element_size() for c, d in _DTYPES.items()}


# ---- saving ----

def _span(t):
    """(first byte address, one past the last byte address) of the memory a tensor views."""
    start = t.data_ptr()
    if t.numel() == 0:
        return start, start
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return start, start + (last + 1) * t.element_size()


def _shared_groups(tensors):
    """Names of tensors whose memory overlaps, grouped as the package's _find_shared_tensors does."""
    by_storage = {}
    for name, t in tensors.items():
        storage = t.untyped_storage()
        if storage.nbytes() != 0 and storage.data_ptr() != 0:
            by_storage.setdefault((str(t.device), storage._cdata), []).append(name)
    groups = []
    for names in by_storage.values():
        if len(names) < 2:
            continue
        areas = sorted((*_span(tensors[n]), n) for n in names)
        group, stop = {areas[0][2]}, areas[0][1]
        for start, end, name in areas[1:]:
            if start >= stop:
                if len(group) > 1:
                    groups.append(group)
                group = {name}
            else:
                group.add(name)
            stop = end
        if len(group) > 1:
            groups.append(group)
    return groups


def _check_metadata(metadata):
    if metadata is None:
        return
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise TypeError("argument 'metadata': expected Dict[str, str] or None")


def _prepare(tensors, metadata):
    """(header bytes with its 8-byte length prefix, [(tensor, nbytes)] in file order)."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    _check_metadata(metadata)
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise TypeError(f"tensor names must be str, got {type(k).__name__}")
        if not isinstance(v, _C.Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
        if k == "__metadata__":
            raise SafetensorError("Error while serializing: `__metadata__` is reserved and cannot name a tensor")
    failing = [g for g in _shared_groups(tensors)]
    if failing:
        raise RuntimeError(
            f"""
            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: {failing}.
            A potential way to correctly save your model is to use `save_model`.
            More information at https://huggingface.co/docs/safetensors/torch_shared_tensors
            """)
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you"
                " are trying to save tensors which are reference of each other in which case it's recommended to save"
                " only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to"
                " pack it before saving.")
        if v.dtype not in _CODES:
            raise ValueError(f"safetensors cannot store dtype {v.dtype} (tensor `{k}`)")
    order = sorted(tensors, key=lambda k: (-_ORDER[_CODES[tensors[k].dtype]], k))
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    entries, offset = [], 0
    for k in order:
        t = tensors[k]
        if t.device.type != "cpu":
            t = t.cpu()
        nbytes = t.numel() * t.element_size()
        header[k] = {"dtype": _CODES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + nbytes]}
        entries.append((t, nbytes))
        offset += nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, entries


def _tensor_bytes(t, nbytes):
    """The bytes of a contiguous tensor, as a view of its storage (no copy)."""
    start = t.storage_offset() * t.element_size()
    return memoryview(t.untyped_storage())[start:start + nbytes]


def save(tensors, metadata=None):
    """The safetensors serialization of a dict of tensors, as bytes."""
    head, entries = _prepare(tensors, metadata)
    out = bytearray(head)
    for t, nbytes in entries:
        with _tensor_bytes(t, nbytes) as mv:
            out += mv
    return bytes(out)


def save_file(tensors, filename, metadata=None):
    """Write a dict of tensors to `filename` in safetensors format (atomically: a temporary file
    beside it is fsync'ed and renamed over it)."""
    head, entries = _prepare(tensors, metadata)

    def write(fh):
        fh.write(head)
        for t, nbytes in entries:
            with _tensor_bytes(t, nbytes) as mv:
                fh.write(mv)

    _atomic_write(filename, write)


# ---- loading ----

def _parse_header(raw_n, read_header, total, where):
    """Validate the header as the package does; returns (header length, metadata, [(name, info)] by offset)."""
    def fail(kind):
        raise SafetensorError(f"Error while deserializing{where}: {kind}")

    if len(raw_n) < 8:
        fail("HeaderTooSmall")
    n = struct.unpack("<Q", raw_n[:8])[0]
    if n > MAX_HEADER_SIZE:
        fail("HeaderTooLarge")
    if 8 + n > total:
        fail("InvalidHeaderLength")
    raw = read_header(n)
    if len(raw) != n:
        fail("InvalidHeaderLength")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        fail("InvalidHeader")
    try:
        header = json.loads(text)
    except (ValueError, RecursionError) as e:
        fail(f"InvalidHeaderDeserialization({e})")
    if not isinstance(header, dict):
        fail("InvalidHeaderDeserialization(expected a JSON object)")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (not isinstance(metadata, dict)
                                 or not all(isinstance(v, str) for v in metadata.values())):
        fail("InvalidHeaderDeserialization(__metadata__ must map strings to strings)")

    def is_uint(x):
        return type(x) is int and x >= 0

    infos = []
    for name, info in header.items():
        if (not isinstance(info, dict) or not isinstance(info.get("dtype"), str) or not isinstance(info.get("shape"), list)
                or not all(is_uint(d) for d in info["shape"]) or not isinstance(info.get("data_offsets"), list)
                or len(info["data_offsets"]) != 2 or not all(is_uint(o) for o in info["data_offsets"])):
            fail(f"InvalidHeaderDeserialization(invalid tensor info for {name!r})")
        code = info["dtype"]
        if code not in _DTYPES:
            if code in _FOREIGN:
                raise SafetensorError(f"pyctorch has no dtype for safetensors dtype {code} (tensor {name!r})")
            fail(f"InvalidHeaderDeserialization(unknown dtype {code!r})")
        infos.append((name, info))
    infos.sort(key=lambda e: tuple(e[1]["data_offsets"]))
    start = 0
    for name, info in infos:
        s, e = info["data_offsets"]
        if s != start or e < s:
            fail(f'InvalidOffset("{name}")')
        start = e
        nbytes = _ITEMSIZE[info["dtype"]]
        for d in info["shape"]:
            nbytes *= d
        if nbytes >= 1 << 64:
            fail("ValidationOverflow")
        if e - s != nbytes:
            fail("TensorInvalidInfo")
    if start + 8 + n != total:
        fail("MetadataIncompleteBuffer")
    return n, metadata, infos


def _check_device(device):
    dev = _C.device("cuda", device) if isinstance(device, int) else _C.device(device)
    if dev.type != "cpu":
        _C.empty(0).to(dev)  # raises pyctorch's CUDA-unavailable error
    return dev


def _new_tensor(info, fill):
    """A fresh tensor for one header entry; fill(memoryview) writes its bytes."""
    dtype = _DTYPES[info["dtype"]]
    s, e = info["data_offsets"]
    storage = _C.UntypedStorage(e - s)
    if e > s:
        with memoryview(storage) as mv:
            fill(mv, s, e)
        if dtype is _C.bool:
            _normalize_bools(storage)
    return _C.empty(0, dtype=dtype).set_(storage, 0, info["shape"])


def load(data):
    """Tensors (on the CPU) from bytes in safetensors format, in file order."""
    view = memoryview(data).cast("B")
    n, _, infos = _parse_header(bytes(view[:8]), lambda n: bytes(view[8:8 + n]), len(view), "")
    base = 8 + n

    def fill(mv, s, e):
        mv[:] = view[base + s:base + e]

    return {name: _new_tensor(info, fill) for name, info in infos}


class safe_open:
    """with safe_open(filename, framework="pt", device="cpu") as f: f.keys(), f.get_tensor(name), f.metadata()"""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "pytorch"):
            raise SafetensorError(f"framework {framework!r} is not supported by pyctorch (use 'pt')")
        self._device = _check_device(device)
        try:
            self._f = open(filename, "rb")
        except FileNotFoundError:
            raise FileNotFoundError(f"No such file or directory: {os.fspath(filename)}") from None
        try:
            total = os.fstat(self._f.fileno()).st_size
            n, self._metadata, infos = _parse_header(self._f.read(8), self._f.read, total, " header")
        except BaseException:
            self._f.close()
            raise
        self._base = 8 + n
        self._infos = dict(infos)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._f.close()

    def keys(self):
        return sorted(self._infos)

    def offset_keys(self):
        return list(self._infos)

    def metadata(self):
        return self._metadata

    def get_tensor(self, name):
        info = self._infos.get(name)
        if info is None:
            raise SafetensorError(f"File does not contain tensor {name}")
        if self._f.closed:
            raise SafetensorError("File is closed")

        def fill(mv, s, e):
            self._f.seek(self._base + s)
            got = 0
            while got < e - s:
                k = self._f.readinto(mv[got:])
                if not k:
                    raise SafetensorError("Error while reading: unexpected end of file")
                got += k

        return _new_tensor(info, fill)

    def get_tensors(self):
        return {name: self.get_tensor(name) for name in self._infos}


def load_file(filename, device="cpu"):
    """Tensors from a safetensors file, in file order."""
    with safe_open(filename, framework="pt", device=device) as f:
        return f.get_tensors()
