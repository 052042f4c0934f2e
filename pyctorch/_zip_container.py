"""The zip container of torch checkpoints (the role of torch's inline_container): entries stored
uncompressed, each entry's data starting on a 64-byte boundary (a padding extra field "FB" as torch
writes it), zip64 records when sizes or offsets need them. Reading also accepts deflate-compressed
records (what zip tools write when a checkpoint is repacked; torch reads them too). Used by
pyctorch.serialization."""
import io
import struct
import zipfile
import zlib

ALIGNMENT = 64

_LOCAL = struct.Struct("<IHHHHHIIIHH")
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_DATE = (1 << 5) | 1  # 1980-01-01, fixed so that saving the same object gives the same bytes
_MAX32 = 0xFFFFFFFF


class ZipWriter:
    """Writes stored (uncompressed) entries, data aligned to 64 bytes, with zip64 records when needed."""

    def __init__(self, f, archive):
        self.f = f
        self.pos = 0
        self.prefix = archive + "/"
        self.entries = []

    def _write(self, b):
        size = memoryview(b).nbytes
        n = self.f.write(b)
        if n is not None and n != size:
            raise OSError(f"short write: {n} of {size} bytes")
        self.pos += size

    def write_record(self, name, data, crc=None):
        mv = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
        size = len(mv)
        if crc is None:
            crc = zlib.crc32(mv)
        fname = (self.prefix + name).encode("utf-8")
        offset = self.pos
        big = size >= _MAX32
        extra = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
        # torch's padding field: id "FB", then filler so the data starts on the alignment
        head = _LOCAL.size + len(fname) + len(extra) + 4
        pad = (-(offset + head)) % ALIGNMENT
        extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        shown = _MAX32 if big else size
        self._write(_LOCAL.pack(0x04034B50, 45 if big else 20, 0x0800, 0, 0, _DATE, crc, shown, shown, len(fname),
                                len(extra)) + fname + extra)
        self._write(mv)
        self.entries.append((fname, crc, size, offset))

    def finish(self):
        cd_start = self.pos
        parts = []
        for fname, crc, size, offset in self.entries:
            z = []
            if size >= _MAX32:
                z += [size, size]
            if offset >= _MAX32:
                z.append(offset)
            extra = struct.pack("<HH", 1, 8 * len(z)) + struct.pack(f"<{len(z)}Q", *z) if z else b""
            shown = _MAX32 if size >= _MAX32 else size
            parts.append(_CENTRAL.pack(0x02014B50, 45, 45 if z else 20, 0x0800, 0, 0, _DATE, crc, shown, shown,
                                       len(fname), len(extra), 0, 0, 0, 0, min(offset, _MAX32)) + fname + extra)
        self._write(b"".join(parts))
        cd_size = self.pos - cd_start
        n = len(self.entries)
        tail = b""
        if n >= 0xFFFF or cd_start >= _MAX32 or cd_size >= _MAX32:
            eocd64 = self.pos
            tail += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd_start)
            tail += struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1)
        tail += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF), min(cd_size, _MAX32),
                            min(cd_start, _MAX32), 0)
        self._write(tail)


_MAX_DEFLATE_RATIO = 1032  # deflate cannot expand one input byte to more than ~1032 output bytes


_MIN_VERSION, _MAX_VERSION = 1, 10  # the file format versions torch 2.13 reads


def _check_version(data):
    """Parse the version record as torch's reader does (std::stoull: leading blanks, a sign, the digits that
    follow) and check its range."""
    text = data.decode("latin-1")
    body = text.lstrip(" \t\n\r\f\v")
    sign = -1 if body[:1] == "-" else 1
    body = body[1:] if body[:1] in "+-" else body
    digits = len(body) - len(body.lstrip("0123456789"))
    if digits == 0:
        raise RuntimeError(f"[enforce fail at inline_container.cc:215] . Couldn't parse the version {text} as Long "
                           "Long.")
    version = sign * int(body[:digits])
    if version >= 1 << 64:
        raise RuntimeError(f"PytorchStreamReader: the version {text.strip()} is out of range")
    if version < _MIN_VERSION:
        raise RuntimeError(f"[enforce fail at inline_container.cc:219] . Attempted to read a PyTorch file with version "
                           f"{version}, but the minimum supported version for reading is {_MIN_VERSION}. Your PyTorch "
                           "script module file is too old. Please regenerate it with latest version of PyTorch to "
                           "mitigate this issue.")
    if version > _MAX_VERSION:
        raise RuntimeError(f"[enforce fail at inline_container.cc:230] . Attempted to read a PyTorch file with version "
                           f"{version}, but the maximum supported version for reading is {_MAX_VERSION}. The version "
                           "of your PyTorch installation may be too old, please upgrade PyTorch to latest version to "
                           "mitigate this issue.")


def _corrupt(message):
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {message}")


class ZipReader:
    """Reads records of a zip checkpoint: small ones as bytes, storages straight into their memory.
    Records are stored (what torch writes) or deflate-compressed (what zip tools write; torch reads
    both). Any damage to the archive raises RuntimeError, as torch's reader does."""

    def __init__(self, f):
        self.f = f
        try:
            self.zf = zipfile.ZipFile(f)
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error, EOFError, OverflowError,
                UnicodeDecodeError, OSError, NotImplementedError) as e:
            raise _corrupt(str(e) or type(e).__name__) from None
        if not infos:
            raise _corrupt("the archive is empty")
        f.seek(0, io.SEEK_END)
        self.size = f.tell()
        self._check_central_directory(infos)
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"[enforce fail at inline_container.cc:340] . file in archive is not in a "
                               f"subdirectory: {first}")
        self.prefix = first[:first.index("/") + 1]
        for info in infos:  # every record lives in the archive's folder, as torch's reader requires
            if not info.filename.startswith(self.prefix):
                raise RuntimeError(f"[enforce fail at inline_container.cc:340] . file in archive is not in a "
                                   f"subdirectory {self.prefix}: {info.filename}")
        self.infos = {i.filename: i for i in infos}
        if not (self.has("version") or self.has(".data/version")):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could this error message '
                               'be improved?  If so, please report an enhancement request to PyTorch.)')
        # as torch's reader does on opening: the version must parse and be one torch reads, and the
        # serialization id is read (its header checked; it is decoded after loading, see serialization.py)
        _check_version(self.read(".data/version" if self.has(".data/version") else "version"))
        self.serialization_id = self.read(".data/serialization_id") if self.has(".data/serialization_id") else b""

    def _check_central_directory(self, infos):
        """The end record's entry count and directory size must describe exactly the entries read (Python's
        zipfile tolerates a damaged directory that torch's reader refuses)."""
        try:
            end = zipfile._EndRecData(self.f)
        except (OSError, ValueError, struct.error):
            end = None
        if not end:
            raise _corrupt("failed finding central directory")
        if end[zipfile._ECD_DISK_NUMBER] or end[zipfile._ECD_DISK_START] or \
                end[zipfile._ECD_ENTRIES_THIS_DISK] != end[zipfile._ECD_ENTRIES_TOTAL]:
            raise _corrupt("unsupported multidisk archive")
        size_cd, offset_cd = end[zipfile._ECD_SIZE], end[zipfile._ECD_OFFSET]
        start = end[zipfile._ECD_LOCATION] - size_cd
        if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
            start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
        ok = end[zipfile._ECD_ENTRIES_TOTAL] == len(infos) and 0 <= start and offset_cd <= start
        if ok:  # walk the directory by its own lengths: it must hold len(infos) entries and end where it says
            self.f.seek(start)
            cd = self.f.read(size_cd)
            pos = 0
            for _ in infos:
                if cd[pos:pos + 4] != b"PK\x01\x02" or pos + 46 > len(cd):
                    ok = False
                    break
                flags, method = struct.unpack("<HH", cd[pos + 8:pos + 12])
                csize, usize, n, m, k, disk = struct.unpack("<IIHHHH", cd[pos + 20:pos + 36])
                local = struct.unpack("<I", cd[pos + 42:pos + 46])[0]
                if flags & 0x2041:  # encrypted (traditional, strong, masked local headers): miniz refuses them
                    raise _corrupt("unsupported encryption")
                if disk not in (0, 0xFFFF):
                    raise _corrupt("unsupported multidisk archive")
                if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise _corrupt(f"unsupported method {method}")
                if method == zipfile.ZIP_STORED and csize != usize:
                    ok = False
                    break
                if local != 0xFFFFFFFF and local + 30 > start:  # a local header must come before the directory
                    ok = False
                    break
                pos += 46 + n + m + k
            ok = ok and pos == size_cd == len(cd)
        if not ok:
            raise _corrupt("invalid header or archive is corrupted")

    def has(self, name):
        return self.prefix + name in self.infos

    def _info(self, name):
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return info

    def is_compressed(self, name):
        return self._info(name).compress_type != zipfile.ZIP_STORED

    def _data_start(self, name, info):
        """Where a record's (possibly compressed) bytes start, checked against the file."""
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unsupported compression method "
                               f"{info.compress_type}")
        if not 0 <= info.header_offset <= self.size - _LOCAL.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid header or archive is "
                               "corrupted")
        self.f.seek(info.header_offset)
        head = self.f.read(_LOCAL.size)
        if len(head) != _LOCAL.size or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid local header")
        fname_len, extra_len = struct.unpack("<HH", head[26:30])
        start = info.header_offset + _LOCAL.size + fname_len + extra_len
        stored = info.compress_size if info.compress_type == zipfile.ZIP_DEFLATED else info.file_size
        if start + stored > self.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record runs past the end of the "
                               "file (truncated checkpoint?)")
        if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > info.compress_size * _MAX_DEFLATE_RATIO + 64:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record claims {info.file_size} "
                               f"bytes, more than {info.compress_size} compressed bytes can hold")
        return start

    def record_info(self, name):
        """(offset of the data in the file, uncompressed size) of a record, validated against the file."""
        info = self._info(name)
        return self._data_start(name, info), info.file_size

    def read(self, name):
        info = self._info(name)
        start = self._data_start(name, info)
        out = bytearray(info.file_size)
        self._fill(name, info, start, memoryview(out), info.file_size)
        return bytes(out)

    def read_into(self, start, storage, nbytes, name):
        """Fill the first nbytes of `storage` from the record `name` (straight into its memory)."""
        if nbytes == 0:
            return
        info = self._info(name)
        with memoryview(storage) as mv:
            self._fill(name, info, start, mv, nbytes)

    def _fill(self, name, info, start, mv, nbytes):
        self.f.seek(start)
        if info.compress_type == zipfile.ZIP_STORED:
            got = 0
            while got < nbytes:
                n = self.f.readinto(mv[got:nbytes])
                if not n:
                    raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unexpected end of file")
                got += n
            return
        inflater = zlib.decompressobj(-15)
        left_in = info.compress_size
        got = 0
        pending = b""
        try:
            while got < nbytes:
                if not pending:
                    if inflater.eof or left_in == 0:
                        break
                    chunk = self.f.read(min(left_in, 1 << 20))
                    if not chunk:
                        break
                    left_in -= len(chunk)
                    pending = chunk
                piece = inflater.decompress(pending, min(nbytes - got, 1 << 24))
                pending = inflater.unconsumed_tail
                mv[got:got + len(piece)] = piece
                got += len(piece)
        except zlib.error as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}") from None
        if got < nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the compressed record ends after "
                               f"{got} of {nbytes} bytes")


# ---------------------------------------------------------------------------------------------------------------
# torch.PyTorchFileReader / torch.PyTorchFileWriter: the container as torch's C++ classes expose it to Python
# (Lightning's lazy checkpoint loader and checkpoint tools read records through them).

def _open(file, mode):
    """(file object, whether this object opened it): a path is opened, a file-like object used as given."""
    if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
        return open(file, mode), True
    return file, False


class PyTorchFileReader:
    """Reads the records of a torch zip checkpoint (a path or a binary file object), names relative to the
    archive's folder: get_record, has_record, get_all_records, get_storage_from_record, the offsets and sizes."""

    def __init__(self, file):
        self._fh, self._owned = _open(file, "rb")
        self._reader = ZipReader(self._fh)

    def __del__(self):
        if getattr(self, "_owned", False):
            self._fh.close()

    def get_record(self, name):
        return self._reader.read(name)

    def has_record(self, name):
        return self._reader.has(name)

    def get_all_records(self):
        prefix = self._reader.prefix
        return [n[len(prefix):] for n in self._reader.infos]

    def get_record_offset(self, name):
        return self._reader.record_info(name)[0]

    get_record_offset_no_read = get_record_offset

    def get_record_header_offset(self, name):
        return self._reader._info(name).header_offset

    def get_record_size(self, name):
        return self._reader.record_info(name)[1]

    def get_storage_from_record(self, name, numel, dtype):
        """A tensor of `dtype` and size 0 whose storage holds the record's numel elements (what torch's reader
        returns); dtype may be a storage class, as Lightning passes (bytes then)."""
        import pyctorch
        from ._composites import _cpp
        if not isinstance(dtype, pyctorch.dtype):
            dtype = getattr(dtype, "dtype", None) if isinstance(getattr(dtype, "dtype", None), pyctorch.dtype) \
                else pyctorch.uint8
        item = pyctorch.empty(0, dtype=dtype).element_size()
        nbytes = numel * item
        start, size = self._reader.record_info(name)
        if size != nbytes:
            raise RuntimeError(f"record size ({size} bytes) does not match expected size ({nbytes} bytes = {numel} "
                               f"elements * {item} bytes/element) for dtype {_cpp(dtype)}")
        storage = pyctorch.UntypedStorage(nbytes)
        self._reader.read_into(start, storage, nbytes, name)
        return pyctorch.empty(0, dtype=dtype).set_(storage, 0, (0,))

    def serialization_id(self):
        return self._reader.serialization_id.decode("utf-8")


class PyTorchFileWriter:
    """Writes a torch zip checkpoint record by record (a path or a binary file object); write_end_of_file adds
    the version, byteorder and serialization id records torch's writer adds, and the zip directory."""

    def __init__(self, file, compute_crc32=True, storage_alignment=ALIGNMENT):
        if storage_alignment != ALIGNMENT:
            raise ValueError(f"pyctorch writes records aligned to {ALIGNMENT} bytes, not {storage_alignment}")
        self._fh, self._owned = _open(file, "wb")
        path = file if self._owned else None
        if path is not None:
            import os
            base = os.path.basename(os.fsdecode(path))
            self._archive = base.rsplit(".", 1)[0] if "." in base else base
        else:
            self._archive = "archive"
        self._writer = ZipWriter(self._fh, self._archive)
        self._written = set()
        self._min_version = 1
        self._finished = False
        import secrets
        self._id = f"{secrets.randbelow(10 ** 40):040d}"

    def archive_name(self):
        return self._archive

    def serialization_id(self):
        return self._id

    def set_min_version(self, version):
        self._min_version = max(self._min_version, int(version))

    def get_all_written_records(self):
        return set(self._written)

    def write_record(self, name, data, size):
        if self._finished:
            raise RuntimeError("PytorchStreamWriter: write_record after write_end_of_file")
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        view = memoryview(data).cast("B")
        if size > len(view):
            raise RuntimeError(f"write_record: {name} was given {len(view)} bytes, fewer than its size {size}")
        self._writer.write_record(name, view[:size])
        self._written.add(name)

    def write_end_of_file(self):
        if self._finished:
            return
        if "version" not in self._written and ".data/version" not in self._written:
            version = f"{max(self._min_version, 3)}\n".encode()
            self.write_record("version", version, len(version))
        if "byteorder" not in self._written:
            import sys
            order = sys.byteorder.encode()
            self.write_record("byteorder", order, len(order))
        if ".data/serialization_id" not in self._written:
            self.write_record(".data/serialization_id", self._id.encode(), len(self._id))
        self._writer.finish()
        self._finished = True
        if self._owned:
            self._fh.close()
