"""torch.UntypedStorage's Python-level API (indexing, slices sharing bytes, from_file, from_buffer, clone/copy_/fill_,
pickling, resize_), torch.asarray, and torch.PyTorchFileReader / PyTorchFileWriter; against torch where it has the
same behaviour, else against the bytes themselves."""
import array
import copy
import os
import pickle

import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch


def frameworks():
    return [pyctorch] + ([torch] if torch is not None else [])


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # compared by type and message
        return ("raised", type(e).__name__, str(e).split("\n")[0])
    if isinstance(r, (pyctorch.Tensor,) + ((torch.Tensor,) if torch is not None else ())):
        return ("tensor", r.tolist(), str(r.dtype).split(".")[-1])
    if hasattr(r, "tolist"):
        return ("storage", r.tolist())
    return ("value", r)


STORAGE_CASES = {
    "getitem": lambda s: s[1],
    "negative": lambda s: s[-1],
    "out of range": lambda s: s[10],
    "step": lambda s: s[1:4:2],
    "empty slice": lambda s: s[3:1],
    "slice": lambda s: s[1:3],
    "str index": lambda s: s["a"],
    "iter": lambda s: list(s),
    "len": lambda s: len(s),
    "tolist": lambda s: s.tolist(),
    "clone": lambda s: s.clone(),
    "fill": lambda s: s.fill_(300),
    "copy size": lambda s: s.copy_(type(s)(3)),
    "float": lambda s: s.float().tolist(),
    "type": lambda s: s.type(),
    "untyped": lambda s: s.untyped() is s,
    "byteswap odd": lambda s: s.byteswap(pyctorch.int16 if type(s).__module__.startswith("pyctorch") else torch.int16),
    "deepcopy": lambda s: copy.deepcopy(s),
    "new": lambda s: s.new().nbytes(),
    "sparse": lambda s: s.is_sparse,
}


@requires_torch
@pytest.mark.parametrize("case", sorted(STORAGE_CASES))
def test_storage_methods_match_torch(case):
    found = {}
    for m in frameworks():
        s = m.tensor([1, 2, 3, 4, 5], dtype=m.uint8).untyped_storage()
        found[m.__name__] = outcome(lambda: STORAGE_CASES[case](s))
    assert found["pyctorch"] == found["torch"]


def test_storage_class_and_writes():
    s = pyctorch.tensor([1, 2, 3, 4, 5], dtype=pyctorch.uint8).untyped_storage()
    assert type(s) is pyctorch.UntypedStorage and isinstance(s, pyctorch._C.StorageBase)
    assert type(pyctorch.UntypedStorage(4)) is pyctorch.UntypedStorage
    part = s[1:3]
    part[0] = 50  # a slice shares the bytes
    assert s.tolist() == [1, 50, 3, 4, 5] and part.data_ptr() - s.data_ptr() == 1
    s[0] = 300  # stored modulo 256, as torch
    s[2:4] = 7
    assert s.tolist() == [44, 50, 7, 7, 5]
    with pytest.raises(RuntimeError, match="out of bounds"):
        s[9] = 1
    assert pickle.loads(pickle.dumps(s)).tolist() == s.tolist()  # (torch 2.13's own pickling raises here)
    c = copy.copy(s)
    assert c.tolist() == s.tolist() and c.data_ptr() != s.data_ptr()
    even = pyctorch.tensor([1, 2, 3, 4], dtype=pyctorch.uint8).untyped_storage()
    even.byteswap(pyctorch.int16)
    assert even.tolist() == [2, 1, 4, 3]
    grown = pyctorch.tensor([1, 2], dtype=pyctorch.uint8).untyped_storage()
    assert grown.resize_(4) is grown and grown.nbytes() == 4 and grown.tolist()[:2] == [1, 2]
    assert grown.resize_(1).tolist() == [1]
    assert pyctorch.UntypedStorage.from_buffer(b"abcd", dtype=pyctorch.uint8).tolist() == [97, 98, 99, 100]
    assert pyctorch.UntypedStorage.from_buffer(b"abcdef", count=2, offset=1, dtype=pyctorch.int16).tolist() == \
        [98, 99, 100, 101]


@requires_torch
def test_from_file_matches_torch(tmp_path):
    found = {}
    for m in frameworks():
        path = tmp_path / f"{m.__name__}.bin"
        path.write_bytes(bytes(range(16)))
        private = m.UntypedStorage.from_file(str(path), False, 16)
        private[0] = 99  # copy on write: the file keeps its byte
        shared = m.UntypedStorage.from_file(str(path), True, 16)
        shared[1] = 77  # written to the file
        del shared
        grown = m.UntypedStorage.from_file(str(path), True, 32)
        view = m.empty(0, dtype=m.int32).set_(grown, 0, (8,))
        found[m.__name__] = [private.tolist(), path.read_bytes()[:2], os.path.getsize(path), view[:2].tolist(),
                             outcome(lambda: m.UntypedStorage.from_file(str(path), False, 64))[:2],
                             outcome(lambda: m.UntypedStorage.from_file(str(tmp_path / "missing"), False, 8)),
                             m.UntypedStorage.from_file(str(path), nbytes=4).nbytes()]
        del grown, view
    theirs = found["torch"]
    theirs[5] = (theirs[5][0], theirs[5][1], theirs[5][2].replace("torch", "pyctorch"))
    assert found["pyctorch"][:5] == theirs[:5] and found["pyctorch"][6] == theirs[6]
    assert found["pyctorch"][5][:2] == theirs[5][:2] and "No such file" in found["pyctorch"][5][2]


ASARRAY_CASES = {
    "same": lambda m, t, a: m.asarray(t) is t,
    "alias": lambda m, t, a: m.asarray(t).data_ptr() == t.data_ptr(),
    "copy": lambda m, t, a: m.asarray(t, copy=True).data_ptr() == t.data_ptr(),
    "dtype": lambda m, t, a: m.asarray(t, dtype=m.int64),
    "dtype no copy": lambda m, t, a: m.asarray(t, dtype=m.int64, copy=False),
    "device no copy": lambda m, t, a: m.asarray(t, device="meta", copy=False),
    "numpy alias": lambda m, t, a: m.asarray(a).data_ptr() == a.ctypes.data,
    "numpy strided alias": lambda m, t, a: m.asarray(a[::2]).data_ptr() == a.ctypes.data,
    "numpy dtype": lambda m, t, a: m.asarray(a, dtype=m.float32),
    "numpy no copy": lambda m, t, a: m.asarray(a, dtype=m.float32, copy=False),
    "numpy scalar": lambda m, t, a: m.asarray(np.float64(1.5)),
    "list": lambda m, t, a: m.asarray([1, 2.5]),
    "ints": lambda m, t, a: m.asarray([1, 2]),
    "scalar": lambda m, t, a: m.asarray(3),
    "nested": lambda m, t, a: m.asarray([[1, 2], [3, 4]], dtype=m.float64),
    "tensors": lambda m, t, a: m.asarray([m.tensor(1.0), m.tensor(2.0)]),
    "bytes": lambda m, t, a: m.asarray(bytearray(b"ab")),
    "array.array": lambda m, t, a: m.asarray(array.array("f", [1, 2])),
    "requires_grad": lambda m, t, a: m.asarray([1.0, 2.0], requires_grad=True).requires_grad,
    "requires_grad int": lambda m, t, a: m.asarray([1, 2], requires_grad=True),
    "sequence no copy": lambda m, t, a: m.asarray([1, 2], copy=False),
    "bool": lambda m, t, a: m.asarray(True),
    "complex": lambda m, t, a: m.asarray([1j]),
    "numpy bool": lambda m, t, a: m.asarray(np.array([True, False])),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(ASARRAY_CASES))
def test_asarray_matches_torch(case):
    found = {}
    for m in frameworks():
        t, a = m.arange(3.0), np.arange(6.0)
        found[m.__name__] = outcome(lambda: ASARRAY_CASES[case](m, t, a))
    assert found["pyctorch"] == found["torch"]


def test_asarray_requires_grad_leaves_the_input_alone():
    t = pyctorch.arange(3.0)
    r = pyctorch.asarray(t, requires_grad=True)
    assert r.requires_grad and not t.requires_grad and r.data_ptr() == t.data_ptr()


@requires_torch
def test_file_reader_and_writer_interoperate_with_torch(tmp_path):
    ours, theirs = str(tmp_path / "ours.pt"), str(tmp_path / "theirs.pt")
    pyctorch.save({"a": pyctorch.arange(4.0)}, ours)
    torch.save({"a": torch.arange(4.0)}, theirs)
    for path in (ours, theirs):
        for m in frameworks():
            reader = m.PyTorchFileReader(path)
            records = reader.get_all_records()
            assert "data.pkl" in records and "data/0" in records and reader.has_record("byteorder")
            t = reader.get_storage_from_record("data/0", 4, m.float32)
            with pytest.raises(RuntimeError, match=r"record size \(16 bytes\) does not match expected size"):
                reader.get_storage_from_record("data/0", 16, m.float32)
            assert tuple(t.shape) == (0,) and t.untyped_storage().nbytes() == 16
            assert m.empty(0).set_(t.untyped_storage(), 0, (4,)).tolist() == [0.0, 1.0, 2.0, 3.0]
            assert reader.get_record_size("data/0") == 16
            with pytest.raises(RuntimeError, match="failed locating file nope"):
                reader.get_record("nope")
    written = str(tmp_path / "written.pt")
    writer = pyctorch._C.PyTorchFileWriter(written)
    writer.write_record("data.pkl", b"abc", 3)
    assert writer.archive_name() == "written" and writer.get_all_written_records() == {"data.pkl"}
    writer.write_end_of_file()
    got = torch.PyTorchFileReader(written)  # real torch reads what pyctorch wrote
    assert got.get_record("data.pkl") == b"abc"
    assert sorted(got.get_all_records()) == sorted(torch.PyTorchFileReader(_torch_written(tmp_path))
                                                   .get_all_records())


def _torch_written(tmp_path):
    path = str(tmp_path / "by_torch.pt")
    w = torch.PyTorchFileWriter(path)
    w.write_record("data.pkl", b"abc", 3)
    w.write_end_of_file()
    return path
