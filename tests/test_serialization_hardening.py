"""Hardening of pyctorch.save / pyctorch.load (issue 15): the weights_only unpickler's opcodes and bounded
allocations, saving to special files, stale temporaries of killed saves, torch's legacy format and deflated
zip records, and the exceptions damaged files raise (compared with torch's on the same bytes)."""
import io
import os
import pickle
import random
import signal
import stat
import struct
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest

from conftest import HAVE_TORCH, requires_torch

import pyctorch
import pyctorch.serialization as ser

if HAVE_TORCH:
    import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _archive(pkl_bytes, records=()):
    """A checkpoint zip with a hand-made data.pkl."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl_bytes)
        z.writestr("archive/byteorder", "little")
        for name, data in records:
            z.writestr(f"archive/data/{name}", data)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def _outcome(lib, data, **kw):
    """The exception type name lib.load raises on `data` (or "ok"), warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            lib.load(io.BytesIO(data), **kw)
        except Exception as e:  # noqa: BLE001 - the type is the result
            return type(e).__name__, str(e)
    return "ok", ""


# ---- 1. the weights_only unpickler: torch's opcodes only, no allocation beyond the file ----

_BIG = 1 << 28  # a length the pre-fix unpickler allocated before reading (256 MiB)

# opcodes that carry a length, each claiming far more data than follows
_LENGTH_BOMBS = {
    "BYTEARRAY8": b"\x96" + struct.pack("<Q", _BIG),
    "BINBYTES8": b"\x8e" + struct.pack("<Q", _BIG),
    "BINUNICODE8": b"\x8d" + struct.pack("<Q", _BIG),
    "BINBYTES": b"B" + struct.pack("<I", _BIG),
    "SHORT_BINBYTES": b"C\xff",
    "LONG4": b"\x8b" + struct.pack("<i", _BIG),
    "BINSTRING": b"T" + struct.pack("<i", _BIG),
    "FRAME": b"\x95" + struct.pack("<Q", _BIG),
    "BINUNICODE": b"X" + struct.pack("<I", _BIG),  # a supported opcode: its length is clamped
    "LONG1": b"\x8a\xff",
}


def test_crafted_length_opcodes_raise_quickly_with_bounded_memory():
    for name, body in _LENGTH_BOMBS.items():
        data = _archive(b"\x80\x02" + body + b"abc.")
        assert len(data) < 400, name  # a tiny file
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            kind, msg = _outcome(pyctorch, data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert time.perf_counter() - t0 < 5, name
        assert peak < 4 << 20, f"{name}: peak {peak} bytes traced while loading a {len(data)}-byte file"
        assert kind in ("UnpicklingError", "EOFError", "UnicodeDecodeError"), (name, kind, msg)
        if name not in ("BINUNICODE", "LONG1"):
            assert kind == "UnpicklingError" and "Unsupported operand" in msg, (name, msg)
            assert "Weights only load failed" in msg


def test_the_bombs_fail_the_same_way_in_torch():
    if not HAVE_TORCH:
        pytest.skip("torch is not installed (oracle comparison)")
    for name, body in _LENGTH_BOMBS.items():
        data = _archive(b"\x80\x02" + body + b"abc.")
        assert _outcome(pyctorch, data)[0] == _outcome(torch, data)[0], name


def test_the_length_of_a_legacy_stream_read_from_disk_is_clamped(tmp_path):
    # the legacy path reads the file itself (not a copy in memory): a BINUNICODE claiming 4 GiB in a
    # 20-byte file must read what is there, not ask the file object for 4 GiB
    path = tmp_path / "bomb.pt"
    path.write_bytes(b"\x80\x02X\xff\xff\xff\xff" + b"a" * 12)
    tracemalloc.start()
    try:
        with pytest.raises(EOFError):
            pyctorch.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    if HAVE_TORCH:
        with pytest.raises(EOFError):
            torch.load(path)


def _all_opcodes_torch_supports():
    # what torch's restricted unpickler implements (torch/_weights_only_unpickler.py, Unpickler.load)
    names = ["GLOBAL", "NEWOBJ", "REDUCE", "BUILD", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "MARK", "TUPLE",
             "TUPLE1", "TUPLE2", "TUPLE3", "NONE", "NEWFALSE", "NEWTRUE", "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT",
             "EMPTY_SET", "BININT", "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING", "BINPERSID",
             "BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "LONG1", "PROTO", "STOP"]
    return {getattr(pickle, n)[0] for n in names}


def test_every_other_opcode_is_refused_like_torch():
    supported = _all_opcodes_torch_supports()
    refused = [op for op in range(256) if op not in supported]
    assert {0x96, 0x97, 0x98} <= set(refused)  # BYTEARRAY8, NEXT_BUFFER, READONLY_BUFFER
    for op in refused:
        data = _archive(b"\x80\x02" + bytes([op]) + b"\x00" * 16 + b".")
        kind, msg = _outcome(pyctorch, data)
        assert kind == "UnpicklingError" and f"Unsupported operand {op}\n" in msg, (op, kind, msg)
        if HAVE_TORCH:
            tkind, tmsg = _outcome(torch, data)
            assert tkind == kind and f"Unsupported operand {op}\n" in tmsg, op


def test_supported_opcodes_still_load_every_structure():
    # a checkpoint written by protocol 2 uses only torch's opcodes, whatever it holds
    obj = {"t": pyctorch.arange(6.).reshape(2, 3), "big": 2 ** 70, "neg": -(2 ** 40), "i": 70000, "f": 1.5,
           "s": {1, 2}, "b": b"xy", "tup": (1, (2, 3), [4]), "none": None, "flags": [True, False], "u": "é" * 300}
    buf = io.BytesIO()
    pyctorch.save(obj, buf)
    got = pyctorch.load(io.BytesIO(buf.getvalue()))
    assert got["t"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert {k: v for k, v in got.items() if k != "t"} == {k: v for k, v in obj.items() if k != "t"}


@requires_torch
def test_other_protocols_under_weights_only_as_torch():
    t = pyctorch.arange(5, dtype=pyctorch.int16)
    tt = torch.arange(5, dtype=torch.int16)
    for protocol in (1, 2, 3, 4, 5):
        pb, tb = io.BytesIO(), io.BytesIO()
        pyctorch.save({"t": t, "b": b"ab", "n": [1, "x"]}, pb, pickle_protocol=protocol)
        torch.save({"t": tt, "b": b"ab", "n": [1, "x"]}, tb, pickle_protocol=protocol)
        for data in (pb.getvalue(), tb.getvalue()):
            assert _outcome(pyctorch, data)[0] == _outcome(torch, data)[0], protocol


# ---- 2. saving to special files ----

def _load_bytes(data):
    return pyctorch.load(io.BytesIO(data))


def test_save_to_a_fifo_writes_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # the reader end, opened first without blocking; the small checkpoint fits in the pipe's buffer,
    # so the save completes before anything is read (and nothing can hang when a save replaces the FIFO)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    got = []

    def drain():
        while True:
            try:
                chunk = os.read(rfd, 1 << 16)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            if not chunk:
                return
            got.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    try:
        pyctorch.save({"x": pyctorch.arange(5.)}, fifo)
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        reader.start()
        reader.join(10)
        assert not reader.is_alive()
    finally:
        if not reader.is_alive():
            os.close(rfd)
    assert _load_bytes(b"".join(got))["x"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert sorted(os.listdir(tmp_path)) == ["pipe"]


def test_save_to_a_hard_link_updates_every_name(tmp_path):
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    pyctorch.save(pyctorch.ones(2), a)
    os.link(a, b)
    pyctorch.save(pyctorch.arange(3.), a)
    assert os.stat(a).st_ino == os.stat(b).st_ino and os.stat(a).st_nlink == 2
    assert pyctorch.load(b).tolist() == [0.0, 1.0, 2.0]
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt"]


def test_save_through_a_symlink_keeps_the_link(tmp_path):
    real, link = tmp_path / "real.pt", tmp_path / "link.pt"
    pyctorch.save(pyctorch.ones(1), real)
    os.symlink(real, link)
    ino = os.stat(real).st_ino
    pyctorch.save(pyctorch.zeros(4), link)
    assert os.path.islink(link) and os.readlink(link) == str(real)
    assert pyctorch.load(real).tolist() == [0.0] * 4
    assert os.stat(real).st_ino != ino  # the target was replaced atomically (a regular file, one link)
    assert sorted(os.listdir(tmp_path)) == ["link.pt", "real.pt"]


def test_save_to_a_character_device_keeps_it_a_device(tmp_path):
    if os.geteuid() == 0:
        # first on a null device of our own: were it replaced, the real /dev/null is never touched
        node = tmp_path / "null"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        pyctorch.save(pyctorch.ones(3), node)
        assert stat.S_ISCHR(os.stat(node).st_mode)
        assert sorted(os.listdir(tmp_path)) == ["null"]
    pyctorch.save(pyctorch.ones(3), "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [n for n in os.listdir("/dev") if n.startswith(".null.")]


def test_save_to_dev_stdout():
    code = "import pyctorch; pyctorch.save({'x': pyctorch.arange(3.)}, '/dev/stdout')"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    assert _load_bytes(out.stdout)["x"].tolist() == [0.0, 1.0, 2.0]


def test_save_errors_name_the_target(tmp_path):
    missing = tmp_path / "missing" / "x.pt"
    with pytest.raises(RuntimeError, match=f"Parent directory {tmp_path / 'missing'} does not exist"):
        pyctorch.save(1, missing)
    with pytest.raises(RuntimeError, match="open file failed with strerror: Is a directory") as ei:
        pyctorch.save(1, tmp_path)
    assert str(tmp_path) in str(ei.value) and ".tmp" not in str(ei.value)
    if HAVE_TORCH:
        for target in (missing, tmp_path):
            with pytest.raises(RuntimeError):
                torch.save(1, target)
    assert os.listdir(tmp_path) == []


# ---- 3. temporaries of killed saves ----

def _temps(directory):
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))


def _temp_name(target, pid):
    return f".{os.path.basename(target)}{ser._TEMP_MARK}{pid}.0123456789ab.{ser._host_tag()}.tmp"


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_save_killed_mid_write_leaves_a_temporary_the_next_save_removes(tmp_path):
    target = tmp_path / "ckpt.pt"
    pyctorch.save(pyctorch.ones(2), target)
    child = textwrap.dedent(f"""
        import sys, time
        import pyctorch, pyctorch.serialization as ser
        real = ser.ZipWriter.write_record
        def slow(self, name, data, crc=None):
            real(self, name, data, crc)
            if name.startswith("data/"):
                self.f.flush()
                print("writing", flush=True)
                time.sleep(120)
        ser.ZipWriter.write_record = slow
        pyctorch.save([pyctorch.randn(1 << 16), pyctorch.randn(8)], {str(target)!r})
    """)
    p = subprocess.Popen([sys.executable, "-c", child], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                         stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline().strip() == b"writing"
        left = _temps(tmp_path)
        assert len(left) == 1 and f".{p.pid}." in left[0] and left[0].startswith(".ckpt.pt.")
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    assert _temps(tmp_path) == left and os.path.getsize(tmp_path / left[0]) > 1 << 18  # the killed save's leftover
    assert pyctorch.load(target).tolist() == [1.0, 1.0]  # the previous checkpoint is intact
    pyctorch.save(pyctorch.zeros(3), target)
    assert _temps(tmp_path) == [] and sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
    assert pyctorch.load(target).tolist() == [0.0, 0.0, 0.0]


def test_only_stale_temporaries_of_the_same_target_are_removed(tmp_path):
    target = tmp_path / "m.pt"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = _temp_name(target, _dead_pid())
        live_other = _temp_name(target, sleeper.pid)  # a concurrent save in another live process
        live_self = _temp_name(target, os.getpid())  # a concurrent save in another thread of ours
        other_target = _temp_name(tmp_path / "m.pt.bak", _dead_pid())  # another checkpoint's business
        other_host = f".m.pt{ser._TEMP_MARK}{_dead_pid()}.0123456789ab.{ser._host_tag()}x.tmp"
        unrelated = ".m.pt.notes.tmp"
        for name in (stale, live_other, live_self, other_target, other_host, unrelated):
            (tmp_path / name).write_bytes(b"partial")
        pyctorch.save(pyctorch.ones(1), target)
        assert _temps(tmp_path) == sorted([live_other, live_self, other_target, other_host, unrelated])
        assert pyctorch.load(target).tolist() == [1.0]
    finally:
        sleeper.kill()
        sleeper.wait()


# ---- 4. torch's legacy format and deflated zip records ----

def test_pyctorch_legacy_save_layout_and_roundtrip(tmp_path):
    t = pyctorch.arange(6, dtype=pyctorch.int16)
    obj = {"t": t, "v": t[2:5], "f": pyctorch.ones(3), "p": pyctorch.nn.Parameter(pyctorch.zeros(2))}
    path = tmp_path / "legacy.pt"
    pyctorch.save(obj, path, _use_new_zipfile_serialization=False)
    data = path.read_bytes()
    assert data[:2] == b"\x80\x02" and not data.startswith(b"PK")
    magic, version, info, pids, keys, sizes = _legacy_by_hand(data)
    assert magic == 0x1950A86A20F9469CFC6C and version == 1001 and info["little_endian"] is (sys.byteorder == "little")
    assert all(len(p) == 6 and p[0] == "storage" and p[5] is None for p in pids)
    assert keys == sorted(keys) and sorted(sizes.values()) == [2, 3, 6]
    for weights_only in (True, False):
        got = pyctorch.load(path, weights_only=weights_only)
        assert got["t"].tolist() == list(range(6)) and got["t"].dtype is pyctorch.int16
        assert got["v"].tolist() == [2, 3, 4] and got["v"].storage_offset() == 2
        assert got["v"].untyped_storage()._cdata == got["t"].untyped_storage()._cdata
        assert got["f"].tolist() == [1.0] * 3 and type(got["p"]) is pyctorch.nn.Parameter
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        pyctorch.load(path, mmap=True)


def _legacy_by_hand(data):
    """The parts of a legacy stream, parsed with plain pickle (Note [Legacy format])."""
    f = io.BytesIO(data)
    magic, version, info = pickle.load(f), pickle.load(f), pickle.load(f)
    pids = []

    class U(pickle.Unpickler):
        def persistent_load(self, pid):
            pids.append(pid)
            return None

        def find_class(self, module, name):
            if name.endswith("Storage"):
                return name
            return lambda *a, **k: None

    U(f).load()
    keys = pickle.load(f)
    itemsize = {"FloatStorage": 4, "ShortStorage": 2, "LongStorage": 8}
    sizes = {}
    for key in keys:
        n = struct.unpack("<q", f.read(8))[0]
        sizes[key] = n
        f.read(n * itemsize[next(p[1] for p in pids if p[2] == key)])
    assert f.read() == b""
    return magic, version, info, pids, keys, sizes


@requires_torch
def test_torch_legacy_files_load_in_pyctorch_and_back():
    rng = np.random.default_rng(0)
    tobj = {name: torch.from_numpy(rng.standard_normal(5)).to(getattr(torch, name))
            for name in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8")}
    tobj["bool"] = torch.tensor([True, False, True])
    tobj["view"] = tobj["float32"][1:4]
    tobj["param"] = torch.nn.Parameter(torch.arange(3.))
    tobj["sd"] = torch.nn.Linear(2, 3).state_dict()
    buf = io.BytesIO()
    torch.save(tobj, buf, _use_new_zipfile_serialization=False)
    for weights_only in (True, False):
        got = pyctorch.load(io.BytesIO(buf.getvalue()), weights_only=weights_only)
        for k in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
                  "view", "param"):
            exp = tobj[k].detach()
            assert str(got[k].dtype) == str(exp.dtype) and tuple(got[k].shape) == tuple(exp.shape), k
            assert got[k].detach().float().tolist() == exp.float().tolist(), k
        assert type(got["param"]) is pyctorch.nn.Parameter and got["view"].storage_offset() == 1
        assert got["sd"]["weight"].tolist() == tobj["sd"]["weight"].tolist()
    # pyctorch's legacy files load in torch, with and without weights_only
    pbuf = io.BytesIO()
    pobj = {"a": pyctorch.arange(4.), "p": pyctorch.nn.Parameter(pyctorch.ones(2)), "i": pyctorch.arange(3)}
    pobj["v"] = pobj["a"][2:]
    pyctorch.save(pobj, pbuf, _use_new_zipfile_serialization=False)
    for weights_only in (True, False):
        back = torch.load(io.BytesIO(pbuf.getvalue()), weights_only=weights_only)
        assert back["a"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["v"].storage_offset() == 2
        assert type(back["p"]) is torch.nn.Parameter and back["i"].dtype is torch.int64
    # same layout as torch's own legacy file of the same object
    tbuf = io.BytesIO()
    tb = {"a": torch.arange(4.), "p": torch.nn.Parameter(torch.ones(2)), "i": torch.arange(3)}
    tb["v"] = tb["a"][2:]
    torch.save(tb, tbuf, _use_new_zipfile_serialization=False)
    mine, theirs = _legacy_by_hand(pbuf.getvalue()), _legacy_by_hand(tbuf.getvalue())
    assert mine[:3] == theirs[:3]  # magic number, protocol version, system information
    assert [p[:2] + p[3:] for p in mine[3]] == [p[:2] + p[3:] for p in theirs[3]]  # ids but for the keys
    assert sorted(mine[5].values()) == sorted(theirs[5].values())
    # a whole torch module in a legacy file: weights_only=False only, as torch
    mbuf = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2), mbuf, _use_new_zipfile_serialization=False)
    for lib in (torch, pyctorch):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            lib.load(io.BytesIO(mbuf.getvalue()), weights_only=True)
    assert type(pyctorch.load(io.BytesIO(mbuf.getvalue()), weights_only=False)) is pyctorch.nn.Linear


def test_legacy_weights_only_refuses_globals(tmp_path):
    marker = tmp_path / "pwned"
    head = b"".join(pickle.dumps(x, protocol=2) for x in (ser._LEGACY_MAGIC, 1001, {}))
    evil = (b"\x80\x02cos\nsystem\nX" + struct.pack("<I", 6 + len(str(marker))) + f"touch {marker}".encode()
            + b"\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked"):
        pyctorch.load(io.BytesIO(head + evil))
    assert not marker.exists()
    if HAVE_TORCH:
        with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked"):
            torch.load(io.BytesIO(head + evil))


def test_legacy_storage_sizes_are_checked_before_allocating():
    # a legacy pickle declaring a 2**40-element storage in a few hundred bytes
    buf = io.BytesIO()
    pyctorch.save(pyctorch.ones(4), buf, _use_new_zipfile_serialization=False)
    data = buf.getvalue()
    i = data.index(b"K\x04", data.index(b"cpu"))  # numel (BININT1 4) in the persistent id
    forged = data[:i] + b"\x8a\x06" + (1 << 40).to_bytes(6, "little") + data[i + 2:]
    tracemalloc.start()
    try:
        kind, _ = _outcome(pyctorch, forged)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kind in ("RuntimeError", "EOFError", "UnpicklingError") and peak < 4 << 20


def _deflated(data):
    """The same checkpoint repacked by zipfile with every record deflate-compressed."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, src.read(info.filename))
    return out.getvalue()


def test_deflated_records_load(tmp_path):
    rng = np.random.default_rng(1)
    obj = {"w": pyctorch.from_numpy(rng.standard_normal((64, 33)).astype(np.float32)),
           "z": pyctorch.zeros(10000), "b": pyctorch.tensor([True, False]), "n": [1, "x"]}
    obj["v"] = obj["w"][3:7]
    buf = io.BytesIO()
    pyctorch.save(obj, buf)
    packed = _deflated(buf.getvalue())
    infos = zipfile.ZipFile(io.BytesIO(packed)).infolist()
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
    assert len(packed) < len(buf.getvalue()) // 2  # 10000 zeros compress
    path = tmp_path / "deflated.pt"
    path.write_bytes(packed)
    for kw in ({}, {"weights_only": False}, {"mmap": True}):
        got = pyctorch.load(path, **kw)
        np.testing.assert_array_equal(got["w"].numpy(), obj["w"].numpy())
        assert got["z"].tolist() == [0.0] * 10000 and got["b"].tolist() == [True, False] and got["n"] == [1, "x"]
        assert got["v"].storage_offset() == 3 * 33
    if HAVE_TORCH:
        tgot = torch.load(path)
        np.testing.assert_array_equal(tgot["w"].numpy(), obj["w"].numpy())


def test_deflated_records_that_lie_about_their_size_raise():
    buf = io.BytesIO()
    pyctorch.save(pyctorch.zeros(1000), buf)
    packed = bytearray(_deflated(buf.getvalue()))
    # the storage's record claims 2**31 uncompressed bytes in its central directory entry
    pos = packed.index(b"archive/data/0", packed.index(b"PK\x01\x02")) - 46
    assert packed[pos:pos + 4] == b"PK\x01\x02"
    packed[pos + 24:pos + 28] = struct.pack("<I", 1 << 31)
    with pytest.raises(RuntimeError):
        pyctorch.load(io.BytesIO(bytes(packed)))
    # a deflate stream cut short: the record inflates to fewer bytes than the storage needs
    packed = bytearray(_deflated(buf.getvalue()))
    pos = packed.index(b"archive/data/0", packed.index(b"PK\x01\x02")) - 46
    csize = struct.unpack("<I", packed[pos + 20:pos + 24])[0]
    local = struct.unpack("<I", packed[pos + 42:pos + 46])[0]
    start = local + 30 + len(b"archive/data/0")
    packed[start + csize // 2:start + csize] = b"\x00" * (csize - csize // 2)
    kind, _ = _outcome(pyctorch, bytes(packed))
    assert kind == "RuntimeError"


# ---- 5. damaged files raise what torch raises ----

def _good_zip():
    buf = io.BytesIO()
    pyctorch.save({"a": pyctorch.arange(10.), "b": [1, "x"]}, buf)
    return buf.getvalue()


def _good_legacy():
    buf = io.BytesIO()
    pyctorch.save({"a": pyctorch.arange(10.), "b": [1, "x"]}, buf, _use_new_zipfile_serialization=False)
    return buf.getvalue()


def _damaged():
    """(name, bytes, the exception types torch's loader raises on such damage)."""
    good, leg = _good_zip(), _good_legacy()
    cases = [("empty", b"", (EOFError,)),
             ("random", bytes(random.Random(0).randrange(256) for _ in range(300)), (pickle.UnpicklingError,))]
    for cut in (4, 30, 64, 200, len(good) // 2, len(good) - 100, len(good) - 22, len(good) - 1):
        cases.append((f"zip cut at {cut}", good[:cut], (RuntimeError,)))
    # cuts in the first pickles, in the object's pickle after its storage id (the storage no longer fits:
    # nothing is allocated), in the list of storage keys, and in the storage data (8-byte count + 40 bytes)
    after_id = leg.index(b"cpu") + 8
    for cut in (2, 4, 64, after_id, len(leg) - 48 - 1, len(leg) - 30, len(leg) - 1):
        cases.append((f"legacy cut at {cut}", leg[:cut], (EOFError, RuntimeError, pickle.UnpicklingError)))
    pkl = good.index(b"\x80\x02")
    d = bytearray(good)
    d[pkl] = 0x7F  # the PROTO opcode replaced by an unknown one
    cases.append(("unknown first opcode", bytes(d), (pickle.UnpicklingError,)))
    d = bytearray(good)
    d[pkl + 2] = 0x96  # the first opcode after PROTO replaced by BYTEARRAY8
    cases.append(("BYTEARRAY8 in the pickle", bytes(d), (pickle.UnpicklingError, EOFError)))
    d = bytearray(good)
    i = good.index(b"archive/data/0", good.index(b"PK\x01\x02"))
    d[i:i + 14] = b"archive/data/9"
    cases.append(("missing data record", bytes(d), (RuntimeError,)))
    d = bytearray(good)
    i = good.index(b"PK\x01\x02")
    d[i:i + 4] = b"XXXX"
    cases.append(("bad central directory signature", bytes(d), (RuntimeError,)))
    eocd = good.index(b"PK\x05\x06")
    for name, at, value in (("directory offset", 16, b"\xff\xff\xff\x00"), ("directory size", 12, b"\xff\xff\x00\x00"),
                            ("entry count", 8, b"\x30\x00\x30\x00")):
        d = bytearray(good)
        d[eocd + at:eocd + at + len(value)] = value
        cases.append((f"bad end record {name}", bytes(d), (RuntimeError,)))
    last = good.rindex(b"archive/.data/serialization_id")
    d = bytearray(good)
    d[last + 2] ^= 1  # a record outside the archive folder
    cases.append(("record outside the folder", bytes(d), (RuntimeError,)))
    d = bytearray(good)
    d[last - 46 + 28] += 1  # a file name length that runs into the end record
    cases.append(("bad name length", bytes(d), (RuntimeError,)))
    v = good.rindex(b"archive/version")
    d = bytearray(good)
    d[v + 8:v + 15] = b"vorsion"
    cases.append(("no version record", bytes(d), (RuntimeError,)))
    first = good.index(b"PK\x01\x02")
    d = bytearray(good)
    d[first + 8] |= 1  # the first entry flagged as encrypted
    cases.append(("encrypted entry", bytes(d), (RuntimeError,)))
    d = bytearray(good)
    d[eocd + 4] = 1  # the end record on disk 1
    cases.append(("multidisk", bytes(d), (RuntimeError,)))
    for record, data, kinds in (("version", b"x\n", (RuntimeError,)), ("version", b"0\n", (RuntimeError,)),
                                ("version", b"99\n", (RuntimeError,)), (".storage_alignment", b"6x", (ValueError,)),
                                ("byteorder", b"middle", (ValueError,))):
        cases.append((f"{record} = {data!r}", _replaced(good, record, data), kinds))
    return cases


def _replaced(good, record, data):
    """The checkpoint rewritten by zipfile with one record's contents replaced."""
    src = zipfile.ZipFile(io.BytesIO(good))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            z.writestr(info.filename, data if info.filename == f"archive/{record}" else src.read(info.filename))
    return out.getvalue()


@pytest.mark.parametrize("weights_only", [True, False])
def test_damaged_files_raise_torchs_kind_of_error(weights_only):
    for name, data, kinds in _damaged():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                pyctorch.load(io.BytesIO(data), weights_only=weights_only)
            except kinds:
                pass
            except Exception as e:  # noqa: BLE001
                pytest.fail(f"{name}: {type(e).__name__}: {e}")
            else:
                pytest.fail(f"{name}: loaded")
        if HAVE_TORCH:
            assert _outcome(pyctorch, data, weights_only=weights_only)[0] == \
                _outcome(torch, data, weights_only=weights_only)[0], name


@pytest.mark.parametrize("weights_only", [True, False])
def test_sweep_of_flips_and_cuts_matches_torch(weights_only):
    """Every 3rd byte of the pickle flipped and every 23rd prefix of both formats: never a crash, and the
    same outcome (exception type, or a successful load) as torch's loader."""
    good, leg = _good_zip(), _good_legacy()
    pkl = good.index(b"\x80\x02")
    end = good.index(b".", good.index(b"archive/.format_version") - 40)  # about the end of data.pkl
    variants = []
    for off in range(pkl, end, 3):
        d = bytearray(good)
        d[off] ^= 0xFF
        variants.append(bytes(d))
    for src in (good, leg):
        variants += [src[:cut] for cut in range(0, len(src), 23)]
    for i, data in enumerate(variants):
        mine = _outcome(pyctorch, data, weights_only=weights_only)[0]
        assert mine != "KeyError" or not weights_only or HAVE_TORCH, i  # memo misses only where torch has them
        if HAVE_TORCH:
            assert mine == _outcome(torch, data, weights_only=weights_only)[0], (i, mine)
