"""pyctorch.utils.safetensors: round trips, the file format parsed by hand, the package's validation rules, and
(when the `safetensors` package is importable) byte-for-byte agreement with it."""
import json
import os
import struct

import numpy as np
import pytest

from conftest import CUDA_USABLE, DTYPE_NAMES, cuda_refusal

import pyctorch
from pyctorch.utils import safetensors as st

try:
    import safetensors.torch as _sft
    import torch
    HAVE_SAFETENSORS = True
except ImportError:
    HAVE_SAFETENSORS = False

requires_safetensors = pytest.mark.skipif(not HAVE_SAFETENSORS, reason="the safetensors package is not installed")

CODES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64", "int32": "I32",
         "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}


def random_tensor(dtype_name, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    item = pyctorch.empty(0, dtype=getattr(pyctorch, dtype_name)).element_size()
    if n == 0:
        return pyctorch.empty(shape, dtype=getattr(pyctorch, dtype_name))
    raw = rng.integers(0, 2 if dtype_name == "bool" else 256, size=n * item, dtype=np.uint8).tobytes()
    return pyctorch.frombuffer(bytearray(raw), dtype=getattr(pyctorch, dtype_name)).reshape(shape)


def raw(t):
    c = t.contiguous()
    start = c.storage_offset() * c.element_size()
    return bytes(memoryview(c.untyped_storage()))[start:start + c.numel() * c.element_size()]


def parse(data):
    """(header dict, data bytes) of a safetensors blob, read by hand."""
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n].decode("utf-8")), data[8 + n:], n


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_roundtrip_every_dtype_byte_exact(dtype, tmp_path):
    tensors = {"m": random_tensor(dtype, (3, 4), 1), "s": random_tensor(dtype, (), 2), "e": random_tensor(dtype, (0, 5))}
    for got in (st.load(st.save(tensors)), _via_file(tensors, tmp_path)):
        assert set(got) == set(tensors)
        for k, t in tensors.items():
            assert got[k].dtype == t.dtype and got[k].shape == t.shape and raw(got[k]) == raw(t), k
            assert got[k].is_contiguous()


def _via_file(tensors, tmp_path, **kw):
    path = tmp_path / "t.safetensors"
    st.save_file(tensors, path, **kw)
    return st.load_file(path)


def test_loaded_tensors_own_their_memory():
    a = pyctorch.arange(4.)
    got = st.load(st.save({"a": a, "b": pyctorch.ones(2)}))
    assert got["a"].untyped_storage()._cdata != got["b"].untyped_storage()._cdata
    got["a"][0] = 7.0
    assert a[0].item() == 0.0
    assert st.load(st.save(got))["a"][0].item() == 7.0  # loaded tensors can be saved again (nothing shared)


def test_header_format_by_hand():
    tensors = {"b_i64": pyctorch.arange(3), "a_f32": pyctorch.ones(2, 2), "c_bool": pyctorch.tensor([True]),
               "z_bf16": pyctorch.zeros(5, dtype=pyctorch.bfloat16), "y_f16": pyctorch.ones(1, dtype=pyctorch.float16),
               "x_u8": pyctorch.tensor([1, 2], dtype=pyctorch.uint8), "w_f64": pyctorch.tensor(2.5, dtype=pyctorch.float64),
               "a_i8": pyctorch.tensor([-1], dtype=pyctorch.int8), "b_i16": pyctorch.tensor([3], dtype=pyctorch.int16),
               "c_i32": pyctorch.tensor([4], dtype=pyctorch.int32)}
    data = st.save(tensors, metadata={"format": "pt", "note": "é"})
    header, body, n = parse(data)
    text = data[8:8 + n]
    assert n % 8 == 0 and text.rstrip(b" ").endswith(b"}") and len(text) - len(text.rstrip(b" ")) < 8
    assert data[8:9] == b"{" and b'"note":"\xc3\xa9"' in data[8:8 + n]  # compact JSON, UTF-8 not escaped
    keys = list(header)
    assert keys[0] == "__metadata__" and header["__metadata__"] == {"format": "pt", "note": "é"}
    # widest alignment first (safetensors' dtype order, descending), then by name
    assert keys[1:] == ["b_i64", "w_f64", "a_f32", "c_i32", "z_bf16", "y_f16", "b_i16", "a_i8", "x_u8", "c_bool"]
    offset = 0
    for k in keys[1:]:
        info, t = header[k], tensors[k]
        assert set(info) == {"dtype", "shape", "data_offsets"}
        assert info["dtype"] == CODES[str(t.dtype).split(".")[1]] and info["shape"] == list(t.shape)
        assert info["data_offsets"] == [offset, offset + t.numel() * t.element_size()]
        assert body[offset:info["data_offsets"][1]] == raw(t)
        offset = info["data_offsets"][1]
    assert offset == len(body)
    assert header["w_f64"]["shape"] == [] and struct.unpack("<d", body[8 * 3:8 * 4]) == (2.5,)


def test_exact_bytes_of_small_files():
    def expected(header_json, payload=b""):
        text = header_json.encode()
        text += b" " * (-len(text) % 8)
        return struct.pack("<Q", len(text)) + text + payload

    one = pyctorch.arange(6, dtype=pyctorch.float32).reshape(1, 2, 3)
    assert st.save({"attn.0": one}) == expected('{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}',
                                                 struct.pack("<6f", *range(6)))
    assert st.save({}) == expected("{}")
    assert st.save({}, metadata={"framework": "pt"}) == expected('{"__metadata__":{"framework":"pt"}}')


def test_safe_open_api(tmp_path):
    path = tmp_path / "m.safetensors"
    st.save_file({"b": pyctorch.ones(2), "a": pyctorch.arange(3)}, path, metadata={"k": "v"})
    with st.safe_open(path, framework="pt") as f:
        assert f.keys() == ["a", "b"] and f.offset_keys() == ["a", "b"] and f.metadata() == {"k": "v"}
        assert f.get_tensor("a").tolist() == [0, 1, 2]
        with pytest.raises(st.SafetensorError, match="does not contain tensor c"):
            f.get_tensor("c")
    with pytest.raises(st.SafetensorError, match="File is closed"):
        f.get_tensor("a")
    with st.safe_open(path, framework="pt") as f:
        assert f.metadata() == {"k": "v"}
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors"]  # the atomic save left no temporary file


def test_save_refuses_what_the_package_refuses():
    x = pyctorch.arange(10.)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save({"a": x, "b": x[:5]})
    with pytest.raises(RuntimeError, match="share memory"):
        st.save({"a": x, "b": x})
    assert len(st.load(st.save({"lo": x[:5], "hi": x[5:]}))) == 2  # disjoint slices of one storage are fine
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": x.reshape(2, 5).t()})
    with pytest.raises(ValueError, match="Key `a` is invalid, expected torch.Tensor"):
        st.save({"a": [1, 2]})
    with pytest.raises(ValueError, match="Expected a dict"):
        st.save([x])
    with pytest.raises(TypeError, match="metadata"):
        st.save({"a": x}, metadata={"k": 1})


def _blob(header, body=b"", pad=True):
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + body


def test_malformed_data_raises_and_never_reads_out_of_bounds(tmp_path):
    ok = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    cases = {
        "HeaderTooSmall": b"\x01\x02",
        "HeaderTooLarge": struct.pack("<Q", 200_000_000) + b"{}",
        "InvalidHeaderLength": struct.pack("<Q", 64) + b"{}",
        "InvalidHeader": _blob(b'{"\xff\xfe":1}'),
        "InvalidHeaderDeserialization": _blob(b"{not json"),
        "MetadataIncompleteBuffer": _blob(ok, b"\x00" * 4),  # data shorter than the offsets say
        "InvalidOffset": _blob({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\x00" * 12),
        "TensorInvalidInfo": _blob({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\x00" * 8),
        "ValidationOverflow": _blob({"a": {"dtype": "F64", "shape": [2 ** 62, 2 ** 62], "data_offsets": [0, 8]}},
                                    b"\x00" * 8),
    }
    cases["MetadataIncompleteBuffer+"] = _blob(ok, b"\x00" * 16)  # trailing bytes past the last tensor
    cases["InvalidHeaderDeserialization+"] = _blob({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}},
                                                   b"\x00" * 8)
    cases["InvalidHeaderDeserialization++"] = _blob({"a": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 8]}},
                                                    b"\x00" * 8)
    cases["InvalidHeaderDeserialization+++"] = _blob({"__metadata__": {"k": 3}})
    for kind, data in cases.items():
        with pytest.raises(st.SafetensorError, match=f"Error while deserializing: {kind.rstrip('+')}"):
            st.load(data)
        path = tmp_path / "bad.safetensors"
        path.write_bytes(data)
        with pytest.raises(st.SafetensorError, match=f"Error while deserializing header: {kind.rstrip('+')}"):
            st.load_file(path)
    assert st.load(_blob(ok, struct.pack("<2f", 1, 2)))["a"].tolist() == [1.0, 2.0]
    flags = st.load(_blob({"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}}, b"\x05\x00\x01"))["m"]
    assert flags.tolist() == [True, False, True] and raw(flags) == b"\x01\x00\x01"  # other bytes read as True
    with pytest.raises(st.SafetensorError, match="no dtype for safetensors dtype C64"):
        st.load(_blob({"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\x00" * 8))
    assert st.load(_blob({"a": {"dtype": "U16", "shape": [1], "data_offsets": [0, 2]}}, b"\xff\xff"))["a"].tolist() == [65535]
    # a file truncated after its header was written
    good = st.save({"a": pyctorch.randn(100)})
    for cut in range(0, len(good), 37):
        with pytest.raises(st.SafetensorError):
            st.load(good[:cut])
    with pytest.raises(FileNotFoundError, match="No such file"):
        st.load_file(tmp_path / "missing.safetensors")
    if not CUDA_USABLE:
        refusal, message = cuda_refusal()
        with pytest.raises(refusal, match=message):
            st.load_file(path, device="cuda")


@requires_safetensors
def test_same_bytes_as_the_safetensors_package(tmp_path):
    tensors = {name: random_tensor(name, (2, 3), i) for i, name in enumerate(DTYPE_NAMES)}
    tt = {k: torch.frombuffer(bytearray(raw(v)), dtype=getattr(torch, k)).reshape(2, 3) if v.numel() else
          torch.empty(2, 3, dtype=getattr(torch, k)) for k, v in tensors.items()}
    ours = st.save(tensors, metadata={"a": "b"})
    theirs = _sft.save(tt, metadata={"a": "b"})
    assert ours == theirs
    got = _sft.load(ours)
    for k, v in tensors.items():
        assert got[k].contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() == raw(v)
    path = tmp_path / "p.safetensors"
    _sft.save_file(tt, str(path))
    mine = st.load_file(path)
    for k, v in tensors.items():
        assert raw(mine[k]) == raw(v)
