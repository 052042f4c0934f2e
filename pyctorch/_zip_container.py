"""The zip container of torch checkpoints (the role of torch's inline_container): entries stored
uncompressed, each entry's data starting on a 64-byte boundary (a padding extra field "FB" as torch
writes it), zip64 records when sizes or offsets need them. Used by pyctorch.serialization."""
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


class ZipReader:
    """Reads records of a stored zip archive: small ones as bytes, storages straight into their memory."""

    def __init__(self, f):
        self.f = f
        try:
            self.zf = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, ValueError, struct.error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
        infos = self.zf.infolist()
        if not infos:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive is empty")
        first = infos[0].filename
        self.prefix = first[:first.index("/") + 1] if "/" in first else ""
        self.infos = {i.filename: i for i in infos}
        f.seek(0, io.SEEK_END)
        self.size = f.tell()

    def has(self, name):
        return self.prefix + name in self.infos

    def record_info(self, name):
        """(offset of the data in the file, size) of a record, validated against the file."""
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if info.compress_type != zipfile.ZIP_STORED:
            raise RuntimeError(f"PytorchStreamReader: record {name} is compressed; torch checkpoints store records "
                               "uncompressed")
        self.f.seek(info.header_offset)
        head = self.f.read(_LOCAL.size)
        if len(head) != _LOCAL.size or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid local header")
        fname_len, extra_len = struct.unpack("<HH", head[26:30])
        start = info.header_offset + _LOCAL.size + fname_len + extra_len
        if start + info.file_size > self.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record runs past the end of the "
                               "file (truncated checkpoint?)")
        return start, info.file_size

    def read(self, name):
        start, size = self.record_info(name)
        self.f.seek(start)
        data = self.f.read(size)
        if len(data) != size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unexpected end of file")
        return data

    def read_into(self, start, storage, nbytes, name):
        """Fill the first nbytes of `storage` from the file at `start` (straight into its memory)."""
        if nbytes == 0:
            return
        with memoryview(storage) as mv:
            self.f.seek(start)
            got = 0
            while got < nbytes:
                n = self.f.readinto(mv[got:nbytes])
                if not n:
                    raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unexpected end of file")
                got += n
