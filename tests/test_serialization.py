"""pyctorch.save / pyctorch.load: torch's zip checkpoint format, checked by hand, against real torch in both
directions, and for safety (weights_only refusals, atomic saves, malformed files)."""
import collections
import io
import os
import pickle
import struct
import warnings
import zipfile

import numpy as np
import pytest

from conftest import DTYPE_NAMES, HAVE_TORCH, requires_torch

import pyctorch
import pyctorch.nn as pnn
import pyctorch.optim

if HAVE_TORCH:
    import torch


def P(name):
    return getattr(pyctorch, name)


def random_tensor(dtype_name, shape, seed=0):
    """A pyctorch tensor with random bits (every float bit pattern incl. NaN payloads; 0/1 for bool)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    item = pyctorch.empty(0, dtype=P(dtype_name)).element_size()
    raw = rng.integers(0, 2 if dtype_name == "bool" else 256, size=n * item, dtype=np.uint8).tobytes()
    if n == 0:
        return pyctorch.empty(shape, dtype=P(dtype_name))
    return pyctorch.frombuffer(bytearray(raw), dtype=P(dtype_name)).reshape(shape)


def raw(t):
    """The bytes of a pyctorch tensor's elements, in C order."""
    c = t.detach().contiguous()
    start = c.storage_offset() * c.element_size()
    return bytes(memoryview(c.untyped_storage()))[start:start + c.numel() * c.element_size()]


def traw(t):
    """The bytes of a torch tensor's elements, in C order."""
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    pyctorch.save(obj, buf)
    buf.seek(0)
    return pyctorch.load(buf, **kw)


def storage_key(t):
    return t.untyped_storage()._cdata


def to_torch_file(obj):
    buf = io.BytesIO()
    pyctorch.save(obj, buf)
    return io.BytesIO(buf.getvalue())


# ---- round trips in pyctorch ----

@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_roundtrip_every_dtype_byte_exact(dtype):
    t = random_tensor(dtype, (3, 5), seed=DTYPE_NAMES.index(dtype))
    r = roundtrip(t)
    assert type(r) is pyctorch.Tensor and r.dtype == t.dtype and r.shape == t.shape
    assert raw(r) == raw(t)
    assert not r.requires_grad


def test_zero_dim_and_empty():
    for t in [pyctorch.tensor(3.5), pyctorch.tensor(7), pyctorch.empty(0, 3), pyctorch.zeros(2, 0, 4, dtype=pyctorch.int16),
              pyctorch.tensor(True)]:
        r = roundtrip(t)
        assert r.shape == t.shape and r.dtype == t.dtype and raw(r) == raw(t)


def test_non_contiguous_views_keep_strides_and_offsets():
    base = pyctorch.arange(60, dtype=pyctorch.float64).reshape(3, 4, 5)
    views = {"t": base.transpose(0, 2), "step": base[:, ::2, 1:], "expand": pyctorch.arange(3.).reshape(3, 1).expand(3, 4),
             "diag": base[0].diagonal()}
    got = roundtrip(views)
    for k, v in views.items():
        g = got[k]
        assert g.shape == v.shape and g.stride() == v.stride() and g.storage_offset() == v.storage_offset(), k
        assert g.tolist() == v.tolist(), k
        assert g.untyped_storage().nbytes() == v.untyped_storage().nbytes(), k


def test_shared_storage_is_written_once_and_shared_after_load():
    a = pyctorch.arange(12.)
    b = a[2:8].view(2, 3)
    c = a[1::3]
    buf = io.BytesIO()
    pyctorch.save({"a": a, "b": b, "c": c, "again": a}, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]
    got = pyctorch.load(io.BytesIO(buf.getvalue()))
    assert storage_key(got["a"]) == storage_key(got["b"]) == storage_key(got["c"])
    assert got["again"] is got["a"]  # the same object saved twice is one object after load
    assert (got["b"].storage_offset(), got["b"].stride()) == (2, (3, 1))
    assert (got["c"].storage_offset(), got["c"].stride()) == (1, (3,))
    got["a"][2] = 100.0
    assert got["b"][0, 0].item() == 100.0


def test_bare_storages_and_other_pickle_protocols():
    u = pyctorch.arange(5, dtype=pyctorch.uint8)
    got = roundtrip({"s": u.untyped_storage(), "t": u})
    # as in torch, a bare storage comes back as a TypedStorage (uint8 for an untyped one)
    assert type(got["s"]) is pyctorch.serialization.TypedStorage and got["s"].dtype is pyctorch.uint8
    assert got["s"].tolist() == [0, 1, 2, 3, 4] and got["s"].untyped()._cdata == storage_key(got["t"])
    with pytest.raises(RuntimeError, match="view the same data as different types"):  # as torch
        pyctorch.save([u.untyped_storage(), u.view(pyctorch.int8)], io.BytesIO())
    t = pyctorch.arange(5, dtype=pyctorch.int16)
    for protocol in (1, 3, 4, 5):  # (protocol 0 writes persistent ids as text: unloadable, in torch too)
        buf = io.BytesIO()
        pyctorch.save({"t": t, "v": t[1:], "d": pyctorch.float16, "n": [1, "x"]}, buf, pickle_protocol=protocol)
        # weights_only knows only the protocol-2 opcodes torch.save writes (as torch's; see
        # test_serialization_hardening.py), so other protocols load with weights_only=False
        got = pyctorch.load(io.BytesIO(buf.getvalue()), weights_only=False)
        assert got["t"].tolist() == t.tolist() and got["v"].storage_offset() == 1
        assert got["d"] is pyctorch.float16 and got["n"] == [1, "x"]


def test_views_of_different_dtypes_of_one_storage_are_refused():
    a = pyctorch.arange(4, dtype=pyctorch.int32)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        pyctorch.save([a, a.view(pyctorch.float32)], io.BytesIO())


def test_parameters_and_requires_grad():
    w = pnn.Parameter(pyctorch.randn(3, 2))
    frozen = pnn.Parameter(pyctorch.randn(2), requires_grad=False)
    leaf = pyctorch.ones(2, requires_grad=True)
    nonleaf = leaf * 2
    got = roundtrip({"w": w, "frozen": frozen, "leaf": leaf, "nonleaf": nonleaf, "plain": pyctorch.ones(1)})
    assert type(got["w"]) is pnn.Parameter and got["w"].requires_grad
    assert type(got["frozen"]) is pnn.Parameter and not got["frozen"].requires_grad
    assert got["leaf"].requires_grad and got["leaf"].is_leaf
    assert got["nonleaf"].requires_grad and got["nonleaf"].is_leaf and got["nonleaf"].tolist() == [2.0, 2.0]
    assert not got["plain"].requires_grad
    assert raw(got["w"]) == raw(w)


def test_tensor_attributes_and_subclasses():
    t = pyctorch.arange(3.)
    t.note = "hello"
    got = roundtrip(t, weights_only=False)
    assert got.note == "hello" and got.tolist() == [0.0, 1.0, 2.0]
    p = pnn.Parameter(pyctorch.ones(2))
    p.tag = 5
    got = roundtrip(p)
    assert type(got) is pnn.Parameter and got.tag == 5


def test_nested_containers_and_scalars():
    t = pyctorch.arange(4.)
    obj = collections.OrderedDict(
        nums=[1, 2.5, -3, 2 ** 70, None, True, "s", b"bytes", bytearray(b"ba"), complex(1, 2)],
        nested={"tup": (t, (t[1:], {"deep": [t]})), "set": {1, 2}},
        meta=(pyctorch.Size([2, 3]), pyctorch.float16, pyctorch.bfloat16, pyctorch.device("cpu"), pyctorch.strided),
        counter=collections.Counter("aab"))
    got = roundtrip(obj)
    assert type(got) is collections.OrderedDict and list(got) == list(obj)
    assert got["nums"] == obj["nums"]
    assert got["nested"]["set"] == {1, 2}
    inner = got["nested"]["tup"]
    assert inner[0].tolist() == t.tolist() and inner[1][0].tolist() == [1.0, 2.0, 3.0]
    assert storage_key(inner[1][1]["deep"][0]) == storage_key(inner[0])
    size, f16, bf16, dev, lay = got["meta"]
    assert type(size) is pyctorch.Size and size == (2, 3)
    assert f16 is pyctorch.float16 and bf16 is pyctorch.bfloat16 and dev == pyctorch.device("cpu")
    assert lay is pyctorch.strided
    assert got["counter"] == collections.Counter("aab")


def _mlp(lib, seed):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def test_module_state_dict_roundtrip():
    m = _mlp(pyctorch, 0)
    m.register_buffer("running", pyctorch.arange(3.))
    sd = m.state_dict()
    got = roundtrip(sd)
    assert list(got) == list(sd)
    fresh = _mlp(pyctorch, 1)
    fresh.register_buffer("running", pyctorch.zeros(3))
    fresh.load_state_dict(got)
    x = pyctorch.randn(5, 4)
    assert fresh(x).tolist() == m(x).tolist()
    assert fresh.running.tolist() == [0.0, 1.0, 2.0]


def test_optimizer_state_dict_roundtrip_continues_identically():
    def run(model, opt, steps, seed):
        pyctorch.manual_seed(seed)
        for _ in range(steps):
            opt.zero_grad()
            model(pyctorch.randn(6, 4)).pow(2).sum().backward()
            opt.step()

    m = _mlp(pyctorch, 0)
    opt = pyctorch.optim.Adam(m.parameters(), lr=1e-2)
    run(m, opt, 3, 10)
    ckpt = roundtrip({"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 3})
    m2 = _mlp(pyctorch, 5)
    m2.load_state_dict(ckpt["model"])
    opt2 = pyctorch.optim.Adam(m2.parameters(), lr=1e-2)
    opt2.load_state_dict(ckpt["optim"])
    run(m, opt, 2, 20)
    run(m2, opt2, 2, 20)
    for p, q in zip(m.parameters(), m2.parameters()):
        assert p.tolist() == q.tolist()
    assert ckpt["epoch"] == 3


def test_large_save_through_the_overlapped_path(tmp_path, monkeypatch):
    import pyctorch.serialization as ser
    monkeypatch.setattr(ser, "_PIPELINE_BYTES", 1 << 20)
    monkeypatch.setattr(ser, "_usable_cores", lambda: 8)
    tensors = [pyctorch.randn(1 << 21), pyctorch.arange(1 << 20, dtype=pyctorch.int64), pyctorch.ones(3)]
    pyctorch.save(tensors, tmp_path / "big.pt")
    z = zipfile.ZipFile(tmp_path / "big.pt")
    assert z.testzip() is None  # every CRC-32 is right
    got = pyctorch.load(tmp_path / "big.pt")
    assert all(raw(a) == raw(b) for a, b in zip(got, tensors))


def test_file_format_by_hand(tmp_path):
    path = tmp_path / "my.model.pt"
    a = pyctorch.arange(6, dtype=pyctorch.float32)
    pyctorch.save({"a": a, "b": pyctorch.ones(2, dtype=pyctorch.int64)}, path)
    data = path.read_bytes()
    z = zipfile.ZipFile(path)
    names = z.namelist()
    assert names == ["my.model/data.pkl", "my.model/.format_version", "my.model/.storage_alignment",
                     "my.model/byteorder", "my.model/data/0", "my.model/data/1", "my.model/version",
                     "my.model/.data/serialization_id"]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    assert z.testzip() is None  # CRC-32s
    assert z.read("my.model/byteorder") == b"little" and z.read("my.model/version") == b"3\n"
    assert z.read("my.model/.storage_alignment") == b"64" and z.read("my.model/.format_version") == b"1"
    sid = z.read("my.model/.data/serialization_id")
    assert len(sid) == 40 and sid.isdigit()
    assert z.read("my.model/data/0") == struct.pack("<6f", *range(6))
    assert z.read("my.model/data/1") == struct.pack("<2q", 1, 1)
    for info in z.infolist():  # every record's data starts on a 64-byte boundary
        fname_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + fname_len + extra_len) % 64 == 0, info.filename
    pkl = z.read("my.model/data.pkl")
    assert pkl[:2] == b"\x80\x02"  # protocol 2
    for name in [b"torch._utils\n_rebuild_tensor_v2", b"torch\nFloatStorage", b"torch\nLongStorage",
                 b"collections\nOrderedDict"]:
        assert name in pkl
    assert b"pyctorch" not in pkl
    buf = io.BytesIO()
    pyctorch.save(a, buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"
    with pytest.raises(RuntimeError, match="invalid file name"):
        pyctorch.save(a, tmp_path / ".pt")


def test_bytesio_and_file_objects(tmp_path):
    t = pyctorch.randn(4, 3)
    buf = io.BytesIO(b"prefix")
    buf.seek(0, io.SEEK_END)
    pyctorch.save(t, buf)  # written after existing bytes
    buf.seek(6)
    assert pyctorch.load(buf).tolist() == t.tolist()
    with open(tmp_path / "f.pt", "wb") as f:
        pyctorch.save(t, f)
    with open(tmp_path / "f.pt", "rb") as f:
        assert pyctorch.load(f).tolist() == t.tolist()

    class ReadOnly:  # not seekable: read into memory first
        def __init__(self, data):
            self.b = io.BytesIO(data)

        def read(self, n=-1):
            return self.b.read(n)

    assert pyctorch.load(ReadOnly((tmp_path / "f.pt").read_bytes())).tolist() == t.tolist()
    with pytest.raises(AttributeError, match="write"):
        pyctorch.save(t, 42)


def test_mmap_load(tmp_path):
    path = tmp_path / "m.pt"
    a = pyctorch.arange(1000, dtype=pyctorch.float64)
    pyctorch.save({"a": a, "v": a[10:20], "b": pyctorch.ones(3, dtype=pyctorch.bfloat16), "e": pyctorch.empty(0)}, path)
    before = path.read_bytes()
    got = pyctorch.load(path, mmap=True)
    assert got["a"].tolist() == a.tolist() and got["v"].tolist() == a[10:20].tolist()
    assert storage_key(got["a"]) == storage_key(got["v"]) and got["e"].numel() == 0
    got["a"][0] = -1.0  # copy-on-write: the tensor is writable, the file does not change
    assert got["v"][0].item() == 10.0 and path.read_bytes() == before
    del got
    with pytest.raises(ValueError, match="file path"):
        pyctorch.load(io.BytesIO(before), mmap=True)


# ---- atomic save ----

class Unpicklable:
    def __reduce__(self):
        raise TypeError("cannot pickle Unpicklable")


def test_atomic_save_keeps_previous_file_when_pickling_fails(tmp_path):
    path = tmp_path / "ckpt.pt"
    first = pyctorch.arange(10.)
    pyctorch.save(first, path)
    before = path.read_bytes()
    big = pyctorch.randn(1 << 18)
    with pytest.raises(TypeError, match="cannot pickle"):
        pyctorch.save([big, Unpicklable()], path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
    assert pyctorch.load(path).tolist() == first.tolist()


def test_atomic_save_keeps_previous_file_when_writing_fails(tmp_path, monkeypatch):
    import pyctorch.serialization as ser
    path = tmp_path / "ckpt.pt"
    pyctorch.save(pyctorch.ones(3), path)
    before = path.read_bytes()
    os.chmod(path, 0o640)
    real = ser.ZipWriter.write_record
    count = [0]

    def failing(self, name, data, crc=None):
        count[0] += 1
        real(self, name, data, crc)
        if name == "data/1":  # part of the archive is on disk, then the disk "fills up"
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(ser.ZipWriter, "write_record", failing)
    monkeypatch.setattr(ser, "_PIPELINE_BYTES", 1 << 20)  # the overlapped path: CRCs on a helper thread
    monkeypatch.setattr(ser, "_usable_cores", lambda: 8)
    with pytest.raises(OSError, match="No space"):
        pyctorch.save([pyctorch.randn(1 << 22), pyctorch.randn(1 << 20), pyctorch.ones(1)], path)
    monkeypatch.undo()
    assert count[0] > 1
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
    pyctorch.save(pyctorch.zeros(2), path)  # a successful save keeps the file's permissions
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert pyctorch.load(path).tolist() == [0.0, 0.0]


def test_save_through_symlink_and_missing_directory(tmp_path):
    real = tmp_path / "real.pt"
    link = tmp_path / "link.pt"
    pyctorch.save(pyctorch.ones(1), real)
    os.symlink(real, link)
    pyctorch.save(pyctorch.zeros(2), link)
    assert os.path.islink(link) and pyctorch.load(real).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="Parent directory"):
        pyctorch.save(pyctorch.ones(1), tmp_path / "missing" / "x.pt")


# ---- weights_only ----

def _archive(pkl_bytes, records=()):
    """A checkpoint zip with a hand-made data.pkl (written by zipfile: no alignment padding)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl_bytes)
        z.writestr("archive/byteorder", "little")
        for name, data in records:
            z.writestr(f"archive/data/{name}", data)
        z.writestr("archive/version", "3\n")
    buf.seek(0)
    return buf


def _global(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def test_malicious_pickles_are_refused(tmp_path):
    marker = tmp_path / "pwned"
    payloads = {
        "os.system": b"\x80\x02" + _global("os", "system") + b"X" + struct.pack("<I", 13 + len(str(marker)))
        + f"touch {marker} ; ".encode() + b"\x85R.",
        "eval": b"\x80\x02" + _global("builtins", "eval") + b"X\x0a\x00\x00\x00__import__\x85R.",
        "posix": b"\x80\x02" + _global("posix", "system") + b"X\x04\x00\x00\x00true\x85R.",
        "getattr": b"\x80\x02" + _global("builtins", "getattr") + b")R.",
        "ext": b"\x80\x02\x82\x01.",  # EXT1 through copyreg's registry
        "inst": b"(ios\nsystem\nX\x04\x00\x00\x00true.",
        "pyctorch-internal": b"\x80\x02" + _global("pyctorch.serialization", "_atomic_write") + b".",
    }
    for what, pkl in payloads.items():
        with pytest.raises(pickle.UnpicklingError, match="[Ww]eights only load failed") as ei:
            pyctorch.load(_archive(pkl))
        assert "weights_only" in str(ei.value), what
        assert not marker.exists(), what
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL os.system whose module os is blocked"):  # as torch
        pyctorch.load(_archive(payloads["os.system"]))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL eval was not an allowed global"):
        pyctorch.load(_archive(payloads["eval"]))


def test_weights_only_refuses_calls_and_mutations_of_unallowed_objects():
    # BUILD on a list, APPEND to a dict, SETITEM on a list, ADDITEMS to a list, NEWOBJ of a function
    bad = [b"\x80\x02]}b.", b"\x80\x02}K\x01a.", b"\x80\x02]K\x00K\x01s.", b"\x80\x04](K\x01\x90.",
           b"\x80\x02" + _global("torch._utils", "_rebuild_parameter") + b")\x81."]
    for pkl in bad:
        with pytest.raises(pickle.UnpicklingError, match="weights_only"):
            pyctorch.load(_archive(pkl))
    with pytest.raises(TypeError):  # calling an allowed non-callable fails as in torch
        pyctorch.load(_archive(b"\x80\x02" + _global("torch", "float32") + b")R."))


def test_weights_only_checks_rebuilt_tensor_bounds():
    # a tensor claiming 1000 floats over a 4-float storage; and sizes whose byte count overflows
    def pkl(size, stride, offset=0):
        return (b"\x80\x02" + _global("torch._utils", "_rebuild_tensor_v2") + b"((X\x07\x00\x00\x00storage"
                + _global("torch", "FloatStorage") + b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQ"
                + pickle.dumps(offset, 2)[2:-1] + pickle.dumps(size, 2)[2:-1] + pickle.dumps(stride, 2)[2:-1]
                + b"\x89" + _global("collections", "OrderedDict") + b")RtR.")
    good = pyctorch.load(_archive(pkl((4,), (1,)), [("0", struct.pack("<4f", 1, 2, 3, 4))]))
    assert good.tolist() == [1.0, 2.0, 3.0, 4.0]
    for args in [((1000,), (1,)), ((2,), (1,), 3), ((2 ** 62, 4), (2 ** 62, 1)), ((2,), (-1,))]:
        with pytest.raises(RuntimeError):
            pyctorch.load(_archive(pkl(*args), [("0", struct.pack("<4f", 1, 2, 3, 4))]))
    with pytest.raises(RuntimeError, match="holds 8 bytes"):  # record shorter than the storage it claims
        pyctorch.load(_archive(pkl((4,), (1,)), [("0", struct.pack("<2f", 1, 2))]))


class Point:
    def __init__(self, x):
        self.x = x


def test_bool_bytes_other_than_0_and_1_are_normalized():
    buf = io.BytesIO()
    pyctorch.save(pyctorch.tensor([True, False, True]), buf)
    data = buf.getvalue()
    start = data.index(b"\x01\x00\x01", data.index(b"archive/data/0"))  # the record, after its local header
    crafted = data[:start] + b"\x07\x00\xff" + data[start + 3:]
    got = pyctorch.load(io.BytesIO(crafted))
    assert got.tolist() == [True, False, True] and raw(got) == b"\x01\x00\x01"


def test_weights_only_user_classes_need_allowlisting():
    buf = io.BytesIO()
    pyctorch.save({"p": Point(3), "t": pyctorch.ones(1)}, buf)
    with pytest.raises(pickle.UnpicklingError, match="test_serialization.Point"):
        pyctorch.load(io.BytesIO(buf.getvalue()))
    assert pyctorch.load(io.BytesIO(buf.getvalue()), weights_only=False)["p"].x == 3
    with pyctorch.serialization.safe_globals([Point]):
        assert pyctorch.load(io.BytesIO(buf.getvalue()))["p"].x == 3
    assert Point not in pyctorch.serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        pyctorch.load(io.BytesIO(buf.getvalue()))
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        pyctorch.load(io.BytesIO(buf.getvalue()), pickle_module=pickle, weights_only=True)
    assert pyctorch.load(io.BytesIO(buf.getvalue()), pickle_module=pickle)["p"].x == 3  # implies weights_only=False


def test_whole_module_with_weights_only_false():
    m = _mlp(pyctorch, 0)
    got = roundtrip(m, weights_only=False)
    x = pyctorch.randn(2, 4)
    assert type(got) is type(m) and got(x).tolist() == m(x).tolist()


# ---- map_location ----

def _cuda_checkpoint():
    """A checkpoint whose storage was saved on 'cuda:0' (pickle edited by hand)."""
    buf = io.BytesIO()
    pyctorch.save(pyctorch.arange(3.), buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    pkl = z.read("archive/data.pkl").replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    assert b"cuda:0" in pkl
    return _archive(pkl, [("0", z.read("archive/data/0"))])


def test_map_location_variants():
    t = pyctorch.arange(3.)
    for ml in [None, "cpu", pyctorch.device("cpu"), {"cpu": "cpu"}, {"cuda:1": "cpu"}, lambda s, loc: s,
               lambda s, loc: None, lambda s, loc: s.cpu()]:
        assert roundtrip(t, map_location=ml).tolist() == [0.0, 1.0, 2.0]
    seen = []
    roundtrip(t, map_location=lambda s, loc: seen.append((type(s), loc)))
    assert seen == [(pyctorch.UntypedStorage, "cpu")]
    for ml in ["cuda", "cuda:0", pyctorch.device("cuda"), {"cpu": "cuda:0"}]:
        with pytest.raises(RuntimeError, match="CUDA device but torch.cuda.is_available"):
            roundtrip(t, map_location=ml)
    with pytest.raises(RuntimeError, match="don't know how to restore"):
        roundtrip(t, map_location="xla:0")


def test_map_location_for_cuda_checkpoints():
    with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
        pyctorch.load(_cuda_checkpoint())
    for ml in ["cpu", {"cuda:0": "cpu"}, pyctorch.device("cpu"), lambda s, loc: s]:
        assert pyctorch.load(_cuda_checkpoint(), map_location=ml).tolist() == [0.0, 1.0, 2.0]
    seen = []
    pyctorch.load(_cuda_checkpoint(), map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cuda:0"]


# ---- malformed files ----

def test_malformed_files_raise(tmp_path):
    good = to_torch_file({"a": pyctorch.randn(100)}).getvalue()
    with pytest.raises(EOFError):
        pyctorch.load(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand 149"):  # read as legacy, as torch
        pyctorch.load(io.BytesIO(pickle.dumps({"a": 1})))
    for cut in [10, 200, len(good) // 2, len(good) - 30]:
        with pytest.raises((RuntimeError, EOFError)):
            pyctorch.load(io.BytesIO(good[:cut]))
    # the central directory points a record's local header past the end of the file
    damaged = bytearray(good)
    pos = good.find(b"archive/data/0", good.find(b"PK\x01\x02")) - 46
    assert damaged[pos:pos + 4] == b"PK\x01\x02"
    damaged[pos + 42:pos + 46] = struct.pack("<I", len(good) - 20)
    with pytest.raises(RuntimeError):
        pyctorch.load(io.BytesIO(bytes(damaged)))
    # a stored record declared larger than what follows it
    damaged = bytearray(good)
    damaged[pos + 20:pos + 28] = struct.pack("<II", 10 ** 6, 10 ** 6)
    with pytest.raises(RuntimeError):
        pyctorch.load(io.BytesIO(bytes(damaged)))


# ---- C support: UntypedStorage, set_, frombuffer ----

def test_untyped_storage_buffer_and_identity():
    s = pyctorch.UntypedStorage(16)
    assert len(s) == 16 and s.nbytes() == 16 and s.device == pyctorch.device("cpu")
    memoryview(s)[:] = bytes(range(16))
    t = pyctorch.empty(0, dtype=pyctorch.int32).set_(s, 1, (3,))
    assert t.tolist() == [int.from_bytes(bytes(range(4 * i, 4 * i + 4)), "little") for i in (1, 2, 3)]
    assert t.untyped_storage() == s and t.untyped_storage()._cdata == s._cdata
    assert t[1:].untyped_storage()._cdata == s._cdata != pyctorch.UntypedStorage(16)._cdata
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        pyctorch.empty(0).set_(s, 1, (4,))
    with pytest.raises(RuntimeError, match="overflow"):
        pyctorch.empty(0).set_(s, 0, (2 ** 62, 4), (2 ** 62, 1))
    with pytest.raises(RuntimeError, match="negative"):
        pyctorch.empty(0).set_(s, 0, (-1,))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        pyctorch.ones(2, requires_grad=True).set_(s)
    with pytest.raises(TypeError):
        pyctorch.empty(0).set_([1, 2])
    with pytest.raises(RuntimeError, match="negative size"):
        pyctorch.UntypedStorage(-1)
    # a live memoryview pins the memory: growing the storage through an out= tensor is refused
    r = pyctorch.arange(4.)
    mv = memoryview(r.untyped_storage())
    with pytest.raises(BufferError):
        pyctorch.add(pyctorch.ones(100), 1, out=r)
    mv.release()
    pyctorch.add(pyctorch.ones(100), 1, out=r)
    assert r.shape == (100,)


def test_set_rebinds_and_keeps_old_exports_valid():
    a = pyctorch.arange(6.)
    mv = memoryview(a)
    a.set_(pyctorch.UntypedStorage(8))
    del a
    assert mv.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # the export held the old storage
    b = pyctorch.empty(0)
    b.set_(pyctorch.arange(10.)[3:].view(-1))
    assert b.storage_offset() == 3 and b.shape == (7,)
    assert pyctorch.ones(3).set_().shape == (0,)


@requires_torch
def test_frombuffer_matches_torch():
    cases = [dict(buffer=bytearray(b""), dtype="float32"), dict(buffer=bytearray(b"abc"), dtype="float32"),
             dict(buffer=bytearray(b"abcd"), dtype="float32", offset=4), dict(buffer=bytearray(8), dtype="float32", count=3),
             dict(buffer=bytearray(8), dtype="float32", offset=-1), dict(buffer=bytearray(8), dtype="float32", count=0),
             dict(buffer=[1, 2], dtype="float32"), dict(buffer=memoryview(bytearray(8))[::2], dtype="uint8")]
    for case in cases:
        errs = []
        for lib in (pyctorch, torch):
            kw = dict(case, dtype=getattr(lib, case["dtype"]))
            try:
                lib.frombuffer(**kw)
                errs.append(None)
            except Exception as e:
                errs.append((type(e), str(e)))
        assert errs[0] == errs[1], case
    data = bytearray(struct.pack("<4f", 1, 2, 3, 4))
    p = pyctorch.frombuffer(data, dtype=pyctorch.float32, count=2, offset=4)
    t = torch.frombuffer(bytearray(data), dtype=torch.float32, count=2, offset=4)
    assert p.tolist() == t.tolist() == [2.0, 3.0]
    p[0] = 9.0  # shares the buffer's memory
    assert struct.unpack("<4f", data)[1] == 9.0


# ---- cross-compatibility with real torch ----

@requires_torch
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_pyctorch_file_loads_in_torch_every_dtype(dtype):
    t = random_tensor(dtype, (4, 3), seed=7 + DTYPE_NAMES.index(dtype))
    got = torch.load(to_torch_file({"t": t, "v": t[1:, ::2], "z": t[0, 0]}), weights_only=True)
    assert got["t"].dtype == getattr(torch, dtype) and tuple(got["t"].shape) == (4, 3)
    assert traw(got["t"]) == raw(t) and traw(got["v"]) == raw(t[1:, ::2]) and traw(got["z"]) == raw(t[0, 0])
    assert got["v"].stride() == (3, 2) and got["v"].storage_offset() == 3
    assert got["t"].untyped_storage().data_ptr() == got["v"].untyped_storage().data_ptr()


@requires_torch
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_torch_file_loads_in_pyctorch_every_dtype(dtype):
    rng = np.random.default_rng(DTYPE_NAMES.index(dtype))
    n = 12 * torch.empty(0, dtype=getattr(torch, dtype)).element_size()
    bits = rng.integers(0, 2 if dtype == "bool" else 256, size=n, dtype=np.uint8).tobytes()
    t = torch.frombuffer(bytearray(bits), dtype=getattr(torch, dtype)).reshape(4, 3)
    buf = io.BytesIO()
    torch.save({"t": t, "v": t.t(), "z": t[2, 1]}, buf)
    got = pyctorch.load(io.BytesIO(buf.getvalue()))
    assert got["t"].dtype == P(dtype) and raw(got["t"]) == traw(t)
    assert raw(got["v"]) == traw(t.t()) and got["v"].stride() == (1, 3)
    assert raw(got["z"]) == traw(t[2, 1]) and got["z"].storage_offset() == 7
    assert storage_key(got["t"]) == storage_key(got["v"]) == storage_key(got["z"])


@requires_torch
def test_torch_reads_pyctorch_structures_and_parameters():
    w = pnn.Parameter(pyctorch.randn(2, 3))
    obj = collections.OrderedDict(w=w, frozen=pnn.Parameter(pyctorch.ones(2), requires_grad=False),
                                  grad=pyctorch.ones(2, requires_grad=True), size=pyctorch.Size([1, 2]),
                                  dtype=pyctorch.bfloat16, dev=pyctorch.device("cpu"), lay=pyctorch.strided,
                                  nested={"l": [1, (2, b"x")], "s": {3}}, empty=pyctorch.empty(0, 4))
    got = torch.load(to_torch_file(obj), weights_only=True)
    assert type(got) is collections.OrderedDict and list(got) == list(obj)
    assert type(got["w"]) is torch.nn.Parameter and got["w"].requires_grad and traw(got["w"]) == raw(w)
    assert type(got["frozen"]) is torch.nn.Parameter and not got["frozen"].requires_grad
    assert got["grad"].requires_grad and type(got["grad"]) is torch.Tensor
    assert got["size"] == torch.Size([1, 2]) and type(got["size"]) is torch.Size
    assert got["dtype"] is torch.bfloat16 and got["dev"] == torch.device("cpu") and got["lay"] is torch.strided
    assert got["nested"] == {"l": [1, (2, b"x")], "s": {3}} and tuple(got["empty"].shape) == (0, 4)
    t = pyctorch.arange(3.)
    t.note = "x"
    assert torch.load(to_torch_file(t), weights_only=False).note == "x"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: "TypedStorage is deprecated"
        values = list(torch.load(to_torch_file(pyctorch.arange(4, dtype=pyctorch.uint8).untyped_storage())))
    assert values == [0, 1, 2, 3]
    for protocol in (3, 4):
        buf = io.BytesIO()
        pyctorch.save({"t": pyctorch.arange(3.), "d": pyctorch.int8}, buf, pickle_protocol=protocol)
        got = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
        assert got["t"].tolist() == [0.0, 1.0, 2.0] and got["d"] is torch.int8


@requires_torch
def test_state_dicts_cross_both_ways():
    pm = _mlp(pyctorch, 3)
    tm = _mlp(torch, 4)
    tm.load_state_dict(torch.load(to_torch_file(pm.state_dict())))
    for (k, p), (k2, t) in zip(pm.state_dict().items(), tm.state_dict().items()):
        assert k == k2 and raw(p) == traw(t)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(tm(torch.from_numpy(x)).detach().numpy(), pm(pyctorch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    tm2 = _mlp(torch, 9)
    topt = torch.optim.Adam(tm2.parameters(), lr=1e-2)
    tm2(torch.from_numpy(x)).sum().backward()
    topt.step()
    buf = io.BytesIO()
    torch.save({"model": tm2.state_dict(), "optim": topt.state_dict()}, buf)
    ckpt = pyctorch.load(io.BytesIO(buf.getvalue()))
    pm2 = _mlp(pyctorch, 1)
    pm2.load_state_dict(ckpt["model"])
    for (k, p), (k2, t) in zip(pm2.state_dict().items(), tm2.state_dict().items()):
        assert k == k2 and raw(p) == traw(t)
    popt = pyctorch.optim.Adam(pm2.parameters(), lr=1e-2)
    popt.load_state_dict(ckpt["optim"])
    state = ckpt["optim"]["state"][0]
    assert state["exp_avg"].tolist() == topt.state_dict()["state"][0]["exp_avg"].tolist()


@requires_torch
def test_torch_refuses_what_pyctorch_refuses_and_accepts_the_rest():
    buf = io.BytesIO()
    pyctorch.save({"p": Point(1)}, buf)
    for lib in (torch, pyctorch):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            lib.load(io.BytesIO(buf.getvalue()), weights_only=True)
    m = torch.nn.Linear(2, 2)
    buf = io.BytesIO()
    torch.save(m, buf)  # a whole torch module: only weights_only=False, through pyctorch's classes
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        pyctorch.load(io.BytesIO(buf.getvalue()))
    got = pyctorch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(got) is pnn.Linear
    assert got.weight.tolist() == m.weight.tolist()
